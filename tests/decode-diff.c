/* decode-diff.c - the fast x86-64 decoder (libloopscope/cfg/decode_x86_fast.c)
 * against libopcodes, its oracle, on the code of real binaries.
 *
 *   decode-diff [-b BYTES] [-t TOP] [-z] FILE...
 *
 * For each ELF file, every executable PROGBITS section is decoded twice:
 * a linear sweep (stepping by libopcodes' length), and every byte offset of
 * the first BYTES bytes of each section (default 65536: the fast decoder
 * must also agree on the misaligned bytes a jump-table or gap walk may feed
 * it).  Wherever the fast decoder claims an instruction, struct ls_insn
 * (every field) and the mnemonic must equal libopcodes' through the same
 * classification; and ls_decode_flow (decode_x86_flow.c) must give
 * ls_decode's length, kind, opcode and target everywhere.  Prints TAP: one line per file, the first mismatches
 * field by field, the share of instructions the fast decoder handled
 * (coverage), and with -t the TOP mnemonics it left to libopcodes.  A file
 * without code fails, unless -z (object files of tables only).
 */
#include "decode-compare.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <unistd.h>
#include "tap.h"

struct tally {
	char mn[LS_X86_MNEMONIC_MAX];
	size_t n;
};

struct stats {
	size_t insns, fast, offsets, offsets_fast, mismatches, flow;
	struct ls_decoder *full, *flowdec; /* ls_decode_flow against ls_decode */
	struct tally left[512];
	size_t nleft;
};

static void count_left(struct stats *s, const char *mn)
{
	for (size_t i = 0; i < s->nleft; i++)
		if (strcmp(s->left[i].mn, mn) == 0) {
			s->left[i].n++;
			return;
		}
	if (s->nleft < sizeof s->left / sizeof s->left[0]) {
		snprintf(s->left[s->nleft].mn, sizeof s->left[0].mn, "%s", mn);
		s->left[s->nleft++].n = 1;
	}
}

static void one(struct ls_decoder *ref, struct ls_decoder *fast, const uint8_t *b, size_t len, uint64_t addr,
                struct stats *s, struct decode_pair *p, bool linear)
{
	int r = decode_both(ref, fast, b, len, addr, p);
	int fr = decode_flow_check(s->full, s->flowdec, b, len, addr, s->mismatches < 10 ? stdout : NULL);
	if (fr < 0)
		s->mismatches++;
	if (linear)
		s->flow += fr > 0;
	if (linear) {
		s->insns++;
		s->fast += r != 0;
		if (r == 0)
			count_left(s, p->ref_len ? p->ref_mn : "(invalid)");
	} else {
		s->offsets++;
		s->offsets_fast += r != 0;
	}
	if (r < 0 && s->mismatches++ < 10)
		print_mismatch(stdout, b, len, addr, p);
}

static void sweep(struct ls_decoder *ref, struct ls_decoder *fast, const uint8_t *code, size_t size,
                  uint64_t addr, size_t every_bytes, struct stats *s)
{
	struct decode_pair p;
	for (size_t off = 0; off < size;) {
		one(ref, fast, code + off, size - off, addr + off, s, &p, true);
		off += p.ref_len ? p.ref_len : 1;
	}
	for (size_t off = 0; off < size && off < every_bytes; off++)
		one(ref, fast, code + off, size - off, addr + off, s, &p, false);
}

static int by_count(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;
	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

static int check_file(const char *path, size_t every_bytes, int top, bool empty_ok)
{
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	GElf_Ehdr eh;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64) {
		printf("# %s: not an x86-64 ELF file\n", path);
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	struct ls_decoder *ref = ls_decoder_new(EM_X86_64), *fast = ls_decoder_new(EM_X86_64);
	struct stats *s = calloc(1, sizeof *s);
	s->full = ls_decoder_new(EM_X86_64);
	s->flowdec = ls_decoder_new(EM_X86_64);
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (data && data->d_buf)
			sweep(ref, fast, data->d_buf, data->d_size, sh.sh_addr, every_bytes, s);
	}
	ok((s->insns > 0 || empty_ok) && s->mismatches == 0,
	   "%s: %zu instructions, %.1f%% by the fast decoder; %zu byte offsets, %.1f%%; %zu mismatches; "
	   "%.1f%% by the flow decoder", path, s->insns, s->insns ? 100.0 * s->fast / s->insns : 0, s->offsets,
	   s->offsets ? 100.0 * s->offsets_fast / s->offsets : 0, s->mismatches,
	   s->insns ? 100.0 * s->flow / s->insns : 0);
	qsort(s->left, s->nleft, sizeof s->left[0], by_count);
	for (int i = 0; i < top && (size_t)i < s->nleft; i++)
		printf("#   left to libopcodes: %-12s %zu (%.2f%%)\n", s->left[i].mn, s->left[i].n,
		       100.0 * s->left[i].n / s->insns);
	ls_decoder_free(s->full);
	ls_decoder_free(s->flowdec);
	free(s);
	ls_decoder_free(ref);
	ls_decoder_free(fast);
	elf_end(elf);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	size_t every_bytes = 65536;
	int top = 0, c;
	bool empty_ok = false;
	while ((c = getopt(argc, argv, "b:t:z")) != -1) {
		if (c == 'z')
			empty_ok = true;
		else if (c == 'b')
			every_bytes = strtoull(optarg, NULL, 0);
		else if (c == 't')
			top = atoi(optarg);
		else
			return 2;
	}
	elf_version(EV_CURRENT);
	for (int i = optind; i < argc; i++)
		if (check_file(argv[i], every_bytes, top, empty_ok) < 0)
			ok(0, "%s: readable", argv[i]);
	return done_testing();
}
