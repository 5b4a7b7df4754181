/* proc_bounds.c - procedures that no symbol names, for the procedures
 * stage (procs.c): the paper's procedure-bound inference for stripped
 * code (Tallent et al., PLDI 2009, section 2.1), from what a stripped
 * binary keeps:
 *
 *   - the .eh_frame FDEs: one per function the compiler emitted (and one
 *     per .cold part), with its exact range - the exception unwinder needs
 *     them, so `strip` leaves them;
 *   - the targets of direct calls, and of jumps that leave the procedure
 *     they are in (tail calls), decoded from the code already known to be
 *     code: hand-written functions without CFI that something calls
 *     (glibc's __longjmp).
 *
 * The ranges returned start where no existing procedure does; procs.c
 * names them sub_ADDR (as GDB and objdump name code without a symbol) and
 * clamps each at the next procedure.
 */
#include "cfg/decode.h"
#include "dwarf/procs.h"
#include "elf/module.h"
#include "support/sort.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_SCAN 1
#endif

/* ---- .eh_frame ---------------------------------------------------------- */

struct rd {
	const uint8_t *p, *end;
	uint64_t addr; /* of *p */
	bool ok;
};

/* The little-endian value of N <= 8 bytes.  Inline, with N a constant in
 * every caller: a fixed-size load, where a loop over the bytes was a third
 * of the walk over libLLVM's 250,000 FDEs. */
static inline uint64_t rd_n(struct rd *r, size_t n)
{
	if (!r->ok || (size_t)(r->end - r->p) < n) {
		r->ok = false;
		return 0;
	}
	uint64_t v = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(&v, r->p, n);
#else
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
#endif
	r->p += n;
	r->addr += n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	for (unsigned shift = 0; r->ok; shift += 7) {
		uint8_t b = (uint8_t)rd_n(r, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	return v;
}

/* A DW_EH_PE_* value: absptr or pcrel, of 2, 4 or 8 bytes, signed or not. */
static inline uint64_t rd_encoded(struct rd *r, uint8_t enc)
{
	uint64_t at = r->addr, v;
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: v = rd_n(r, 8); break;
	case 0x02: v = rd_n(r, 2); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_n(r, 2); break;
	case 0x03: v = rd_n(r, 4); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_n(r, 4); break;
	default: r->ok = false; return 0;
	}
	if ((enc & 0x70) == 0x10)
		v += at;
	else if ((enc & 0x70) != 0)
		r->ok = false;
	return v;
}

/* The FDE pointer encoding of the CIE at [P, END): its 'R' augmentation,
 * else absptr; -1 if the CIE cannot be read. */
static int cie_encoding(const uint8_t *p, const uint8_t *end, uint64_t addr)
{
	struct rd r = { p, end, addr, true };
	uint8_t version = (uint8_t)rd_n(&r, 1);
	char aug[16];
	size_t na = 0;
	for (uint8_t ch; r.ok && (ch = (uint8_t)rd_n(&r, 1));)
		if (na < sizeof aug - 1)
			aug[na++] = (char)ch;
	aug[na] = 0;
	rd_uleb(&r);                           /* code alignment */
	rd_uleb(&r);                           /* data alignment (sleb: skipped alike) */
	if (version == 1)
		rd_n(&r, 1);
	else
		rd_uleb(&r);
	if (aug[0] != 'z')
		return r.ok ? 0 : -1;
	rd_uleb(&r);
	for (size_t i = 1; i < na && r.ok; i++) {
		if (aug[i] == 'R')
			return (int)rd_n(&r, 1);
		if (aug[i] == 'L')
			rd_n(&r, 1);
		else if (aug[i] == 'P')
			rd_encoded(&r, (uint8_t)rd_n(&r, 1) & 0x7f);
		else if (aug[i] != 'S' && aug[i] != 'B')
			return -1;
	}
	return r.ok ? 0 : -1;
}

static void add(ls_range **v, size_t *n, size_t *cap, uint64_t lo, uint64_t hi)
{
	if (*n == *cap) /* the call only when full: one add an FDE */
		*v = ls_grow(*v, cap, *n + 1, sizeof **v);
	(*v)[(*n)++] = (ls_range){ lo, hi };
}

/* Every FDE of the section SCN (at ADDR) whose range lies in code. */
static void fdes_of(const ls_module *m, const uint8_t *data, uint64_t size, uint64_t addr, ls_range **v, size_t *n,
                    size_t *cap)
{
	struct rd r = { data, data + size, addr, true };
	const uint8_t *last_cie = NULL; /* FDEs share a few CIEs: the last one's encoding */
	int last_enc = -1;
	while (r.ok && r.p < r.end) {
		uint64_t length = rd_n(&r, 4);
		if (length == 0 || length == 0xffffffff || length > (uint64_t)(r.end - r.p))
			break; /* the terminator, or 64-bit DWARF (not in .eh_frame) */
		struct rd e = { r.p, r.p + length, r.addr, true };
		r.p += length;
		r.addr += length;
		uint64_t id_addr = e.addr;
		uint32_t id = (uint32_t)rd_n(&e, 4);
		if (id == 0 || id > id_addr - addr)
			continue; /* a CIE, or a pointer out of the section */
		const uint8_t *cie = data + (id_addr - id - addr);
		uint32_t cie_len;
		memcpy(&cie_len, cie, 4);
		if (cie_len < 4 || cie_len > (uint64_t)(data + size - cie - 4))
			continue;
		int enc = cie == last_cie ? last_enc : cie_encoding(cie + 8, cie + 4 + cie_len, id_addr - id + 8);
		last_cie = cie;
		last_enc = enc;
		if (enc < 0)
			continue;
		uint64_t lo = rd_encoded(&e, (uint8_t)enc);
		uint64_t len = rd_encoded(&e, (uint8_t)(enc & 0x0f));
		if (!e.ok || !len || lo + len <= lo)
			continue;
		/* both ends in code: most often in one section, one lookup */
		const struct ls_text *t = ls_text_find(m, lo);
		if (t && (lo + len - 1 - t->addr < t->size || ls_text_find(m, lo + len - 1)))
			add(v, n, cap, lo, lo + len);
	}
}

static int cmp_range(const void *a, const void *b)
{
	const ls_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

enum { FDE_PILES = 8 };

/* Sorts the N ranges at V by start as a stable sort would, when they are
 * FDE_PILES interleaved ascending sequences or fewer: false (V unchanged)
 * when they are not.  .eh_frame lists each object's functions and their
 * .cold parts in turn, 3 or 4 ascending sequences in libLLVM and cc1plus,
 * whose 600 and 8,000 runs the merge of runs (ls_sort_runs) took 70M
 * instructions to sort in the first report of a system-wide recording.
 * Each range goes to the pile whose last start is the greatest at or
 * below its own; the piles are merged by start, then input order. */
static bool sort_fde_piles(ls_range *v, size_t n)
{
	uint8_t *pile = ls_xmalloc(n + 1);
	uint64_t last[FDE_PILES] = { 0 }; /* only the first np are read */
	size_t np = 0, start[FDE_PILES + 1] = { 0 };
	for (size_t i = 0; i < n; i++) {
		size_t best = np;
		for (size_t k = 0; k < np; k++)
			if (last[k] <= v[i].lo && (best == np || last[k] > last[best]))
				best = k;
		if (best == np) {
			if (np == FDE_PILES) {
				free(pile);
				return false;
			}
			np++;
		}
		last[best] = v[i].lo;
		pile[i] = (uint8_t)best;
		start[best + 1]++;
	}
	for (size_t k = 0; k < np; k++)
		start[k + 1] += start[k];
	ls_range *tmp = ls_xmalloc((n + 1) * sizeof *tmp);
	size_t *from = ls_xmalloc((n + 1) * sizeof *from); /* input order, for ties */
	size_t head[FDE_PILES];
	memcpy(head, start, sizeof head);
	for (size_t i = 0; i < n; i++) {
		from[head[pile[i]]] = i;
		tmp[head[pile[i]]++] = v[i];
	}
	memcpy(head, start, sizeof head);
	for (size_t o = 0; o < n; o++) {
		size_t k = np;
		for (size_t q = 0; q < np; q++) {
			if (head[q] == start[q + 1])
				continue;
			if (k == np || tmp[head[q]].lo < tmp[head[k]].lo ||
			    (tmp[head[q]].lo == tmp[head[k]].lo && from[head[q]] < from[head[k]]))
				k = q;
		}
		v[o] = tmp[head[k]++];
	}
	free(from);
	free(tmp);
	free(pile);
	return true;
}

size_t ls_fde_ranges(const ls_module *m, ls_range **out)
{
	size_t n = 0, cap = 0, shstrndx;
	*out = NULL;
	if (!m->elf || m->relocatable || elf_getshdrstrndx(m->elf, &shstrndx) < 0)
		return 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		/* SHT_X86_64_UNWIND as clang's objects have it, when the
		 * linker keeps that (gold: Debian's libLLVM, libclang-cpp),
		 * else SHT_PROGBITS: the name says what it is */
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_X86_64_UNWIND) ||
		    !(name = elf_strptr(m->elf, shstrndx, sh.sh_name)) || strcmp(name, ".eh_frame") != 0)
			continue;
		Elf_Data *d = elf_rawdata(scn, NULL);
		if (d && d->d_buf && d->d_size >= sh.sh_size)
			fdes_of(m, d->d_buf, sh.sh_size, sh.sh_addr, out, &n, &cap);
	}
	if (n && !sort_fde_piles(*out, n))
		ls_sort_runs(*out, n, sizeof **out, cmp_range);
	return n;
}

/* ---- the targets of direct calls and tail calls ---------------------------- */

/* A legacy or REX prefix byte: what may stand between an instruction's
 * start and its opcode.  A table: reaching_start asks before nearly every
 * e8, e9 and eb byte of a binary without .symtab. */
static const bool prefix_bytes[256] = {
	[0x26] = true, [0x2e] = true, [0x36] = true, [0x3e] = true, [0x64] = true, [0x65] = true,
	[0x66] = true, [0x67] = true, [0xf0] = true, [0xf2] = true, [0xf3] = true,
	[0x40 ... 0x4f] = true,
};

static inline bool prefix_byte(uint8_t b)
{
	return prefix_bytes[b];
}

/* What reach_end needs: the section it scans, the decoder, and
 * which targets matter. */
struct reach {
	const ls_module *m;
	struct ls_decoder *dec;
	const struct ls_text *t;
	ls_target_filter wanted;
	const void *ctx;
	const struct ls_target_bits *bits;
};

/* WANTED's answer for TARGET, most often from the bits alone. */
static inline bool maybe_wanted(const struct reach *r, uint64_t target)
{
	const struct ls_target_bits *g = r->bits;
	if (g) {
		uint64_t b = (target - g->base) >> g->shift;
		if (target < g->base || b >= g->nblocks || !(g->bits[b >> 6] >> (b & 63) & 1))
			return false;
	}
	return r->wanted(r->ctx, target);
}

/* The last start, at FIRST or after, of an instruction that may be a
 * direct call or jmp with a target that matters, given that the byte at
 * offset OP of the section is e8, e9 or eb (in 64-bit code the only
 * opcodes the decoder gives a CALL or JUMP with a target): the opcode
 * itself, or a prefix before it (legacy or REX).  Without a data16 or
 * addr32 prefix, the target is by definition the end of the instruction
 * plus its displacement (rel32, or rel8 for eb), whatever the prefixes;
 * with one (data16 makes it rel16, masked) the decoder says.  Returns the
 * start's offset + 1, or 0 for none. */
static size_t prefixed_start(const struct reach *r, size_t first, size_t op);

static inline size_t reaching_start(const struct reach *r, size_t first, size_t op)
{
	const struct ls_text *t = r->t;
	const uint8_t *d = t->data;
	uint64_t at = t->addr + op;
	size_t rel = d[op] == 0xeb ? 1 : 4;
	if (t->size - op > rel &&
	    maybe_wanted(r, at + 1 + rel + (uint64_t)(rel == 1 ? (int64_t)(int8_t)d[op + 1] : (int64_t)ls_s32le(d + op + 1))))
		return op + 1;
	/* (inline up to here: the scan asks millions of times, and the
	 * answer is most often no, with no prefix before the opcode) */
	return op > first && prefix_byte(d[op - 1]) ? prefixed_start(r, first, op) : 0;
}

/* reaching_start's search behind the prefixes before the opcode at OP:
 * the starts at or before a data16 or addr32 prefix. */
static size_t prefixed_start(const struct reach *r, size_t first, size_t op)
{
	const struct ls_text *t = r->t;
	const uint8_t *d = t->data;
	size_t i = op;
	while (i > first && prefix_byte(d[i - 1]) && d[i - 1] != 0x66 && d[i - 1] != 0x67)
		i--;
	for (; i > first && prefix_byte(d[i - 1]); i--) {
		struct ls_insn in;
		if (ls_decode_flow(r->dec, d + i - 1, t->size - (i - 1), t->addr + i - 1, &in) &&
		    (in.kind == LS_INSN_CALL || in.kind == LS_INSN_JUMP) && in.target && maybe_wanted(r, in.target))
			return i;
	}
	return 0;
}

/* The bytes e8, e9 and eb among the eight at D (in 64-bit code the only
 * opcodes the decoder gives a CALL or JUMP with a target): a mask with
 * bit 7 of each such byte set, byte i of D at bits 8i..8i+7.  A word at a
 * time, and exact, so that the scan of reach_end looks only at those bytes
 * (byte by byte it was 5% of a cold report of a system-wide recording; the
 * word test before this one only said whether a word may hold one, and
 * left such words to a byte loop).  The usual
 * zero-byte test, in its exact form (no carry from one byte to the next):
 * the byte is one of e8..eb when its top six bits are 111010, and not ea. */
static uint64_t branch_opcode_bytes(const uint8_t *d)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full, highs = 0x8080808080808080ull;
	uint64_t w;
	memcpy(&w, d, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	uint64_t z = (w & 0xfcfcfcfcfcfcfcfcull) ^ 0xe8e8e8e8e8e8e8e8ull; /* zero: e8..eb */
	uint64_t y = w ^ 0xeaeaeaeaeaeaeaeaull;                           /* zero: ea */
	uint64_t z_nonzero = ((z & low7) + low7) | z, y_nonzero = ((y & low7) + low7) | y;
	return ~z_nonzero & y_nonzero & highs;
}

#ifdef __SSE2__
/* The same of the sixteen bytes at D, by SSE2 (in every x86-64 CPU): bit i
 * of the result for byte i, half the steps of branch_opcode_bytes. */
static inline unsigned branch_opcodes16(const uint8_t *d)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)d);
	__m128i e8_e9 = _mm_cmpeq_epi8(_mm_and_si128(v, _mm_set1_epi8((char)0xfe)), _mm_set1_epi8((char)0xe8));
	__m128i eb = _mm_cmpeq_epi8(v, _mm_set1_epi8((char)0xeb));
	return (unsigned)_mm_movemask_epi8(_mm_or_si128(e8_e9, eb));
}
#endif

/* One e8, e9 or eb byte at OP of the scan of reach_end: the instruction
 * start it may belong to, if that is later than *LAST. */
static inline void reach_hit(const struct reach *r, size_t first, size_t op, size_t stop, uint64_t *last)
{
	size_t start = reaching_start(r, first, op);
	if (start && start - 1 < stop && r->t->addr + start > *last)
		*last = r->t->addr + start;
}

#ifdef HAVE_AVX2_SCAN
/* reach_end's scan of [OP, STOP) of the section, 32 bytes a step, on a CPU
 * with AVX2 (x86-64 ones since 2013): the scan goes over all the code of a
 * binary without .symtab (110 MB in a system-wide recording's), and its
 * steps, more than the bytes it finds, were most of its cost.  Returns
 * where it stopped (fewer than 32 bytes before STOP). */
__attribute__((target("avx2"))) static size_t scan_avx2(const struct reach *r, size_t first, size_t op, size_t stop,
                                                         uint64_t *last)
{
	const uint8_t *d = r->t->data;
	const __m256i fe = _mm256_set1_epi8((char)0xfe), e8 = _mm256_set1_epi8((char)0xe8);
	const __m256i eb = _mm256_set1_epi8((char)0xeb);
	for (; op + 32 <= stop; op += 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(d + op));
		__m256i hit = _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_and_si256(v, fe), e8), _mm256_cmpeq_epi8(v, eb));
		for (unsigned bytes = (unsigned)_mm256_movemask_epi8(hit); bytes; bytes &= bytes - 1)
			reach_hit(r, first, op + (size_t)__builtin_ctz(bytes), stop, last);
	}
	return op;
}
#endif

/* Where decoding [LO, HI) may stop and still give every call or tail-call
 * target that matters: after the last instruction start that may be a
 * direct call or jmp to one (its opcode in the range, or just after it
 * behind prefixes).  LO when there is none. */
static uint64_t reach_end(struct reach *r, uint64_t lo, uint64_t hi)
{
	uint64_t last = lo;
	for (uint64_t a = lo; a < hi;) {
		const struct ls_text *t = ls_text_from(r->m, a);
		if (!t || t->addr >= hi)
			break;
		if (a < t->addr)
			a = t->addr;
		r->t = t;
		const uint8_t *d = t->data;
		size_t first = a - t->addr, stop = hi - t->addr < t->size ? hi - t->addr : t->size, op = first;
#ifdef HAVE_AVX2_SCAN
		if (__builtin_cpu_supports("avx2"))
			op = scan_avx2(r, first, op, stop, &last);
#endif
#ifdef __SSE2__
		for (; op + 16 <= stop; op += 16)
			for (unsigned bytes = branch_opcodes16(d + op); bytes; bytes &= bytes - 1)
				reach_hit(r, first, op + (size_t)__builtin_ctz(bytes), stop, &last);
#endif
		for (; op + 8 <= stop; op += 8)
			for (uint64_t bytes = branch_opcode_bytes(d + op); bytes; bytes &= bytes - 1)
				reach_hit(r, first, op + ((size_t)__builtin_ctzll(bytes) >> 3), stop, &last);
		/* the last bytes, and an opcode just after STOP behind prefixes */
		for (; op < t->size && (op < stop || prefix_byte(d[op - 1])); op++)
			if (d[op] == 0xe8 || d[op] == 0xe9 || d[op] == 0xeb)
				reach_hit(r, first, op, stop, &last);
		a = t->addr + t->size;
	}
	return last;
}

/* The linear sweep of [CODE.lo, END) of one range: every call target and
 * tail-call target (out of CODE). */
static void sweep_range(const ls_module *m, struct ls_decoder *dec, ls_range code, uint64_t end, uint64_t **out,
                        size_t *n, size_t *cap)
{
	const struct ls_text *t = NULL;
	for (uint64_t a = code.lo; a < end;) {
		if (!t || a - t->addr >= t->size) {
			t = ls_text_from(m, a);
			if (!t || t->addr >= end)
				break;
			if (a < t->addr)
				a = t->addr;
		}
		struct ls_insn in;
		/* only the length, kind and target: what ls_decode_flow gives
		 * as ls_decode does, without building the operands (the full
		 * decode was a quarter of this stage in libLLVM) */
		size_t len = ls_decode_flow(dec, t->data + (a - t->addr), t->addr + t->size - a, a, &in);
		if (!len) {
			a++;
			continue;
		}
		a += len;
		bool call = in.kind == LS_INSN_CALL;
		bool tail = in.kind == LS_INSN_JUMP && (in.target < code.lo || in.target >= code.hi);
		if ((call || tail) && in.target && ls_text_find(m, in.target)) {
			*out = ls_grow(*out, cap, *n + 1, sizeof **out);
			(*out)[(*n)++] = in.target;
		}
	}
}

size_t ls_call_targets(const ls_module *m, const ls_range *code, size_t ncode, ls_target_filter wanted,
                       const void *ctx, const struct ls_target_bits *bits, uint64_t **out)
{
	size_t n = 0, cap = 0;
	*out = NULL;
	struct ls_decoder *dec = ls_decoder_new(m->ehdr.e_machine);
	if (!dec)
		return 0;
	struct reach r = { m, dec, NULL, wanted, ctx, bits };
	for (size_t i = 0; i < ncode; i++) {
		uint64_t end = wanted ? reach_end(&r, code[i].lo, code[i].hi) : code[i].hi;
		if (end > code[i].lo)
			sweep_range(m, dec, code[i], end, out, &n, &cap);
	}
	ls_decoder_free(dec);
	return ls_sort_unique_u64(*out, n);
}
