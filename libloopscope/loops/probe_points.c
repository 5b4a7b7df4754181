/* probe_points.c - a loop's instrumentation points (Paradyn's, seed 002):
 * the edges that enter it, its header (an iteration begins), its back
 * edges (an iteration ends), the edges that leave it, and the returns and
 * tail calls inside it that leave the procedure with it.
 *
 * Each point is given as what a counter of it needs: the instruction to
 * probe and, for an edge that leaves a conditional branch, the branch, its
 * condition code and which outcome the edge is, and whether the edge's
 * target is entered by that edge alone (then a probe on the target counts
 * it without reading the flags).
 *
 * It works on the stored loop (header, entry blocks, back edges, exits:
 * what the cache keeps) and a linear decode of the loop's procedure, from
 * which it finds the edges into the entry blocks and every block's
 * predecessors.  A linear decode is exact for the code compilers emit on
 * x86-64 (no data in .text); an indirect jump in the procedure (a jump
 * table) may enter any block, so then no target is claimed to have a
 * single predecessor. */
#include "cfg/cfg.h"
#include "cfg/decode.h"
#include "elf/module.h"
#include "structure/scope.h"
#include "support/base.h"

#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const cond_names[16] = {
	"o", "no", "b", "ae", "e", "ne", "be", "a", "s", "ns", "p", "np", "l", "ge", "le", "g",
};

struct proc_code {
	struct ls_insn *insns;  /* the procedure's instructions, by address */
	size_t n, cap;
	bool has_ijump;         /* an indirect jump: any block may have unseen predecessors */
	const ls_scope *proc, *loop;
};

static int push_insn(struct proc_code *pc, const struct ls_insn *in)
{
	if (pc->n == pc->cap) {
		size_t cap = pc->cap ? 2 * pc->cap : 256;
		struct ls_insn *p = realloc(pc->insns, cap * sizeof *p);
		if (!p)
			return -1;
		pc->insns = p;
		pc->cap = cap;
	}
	pc->insns[pc->n++] = *in;
	return 0;
}

/* Decodes every range of the procedure, in address order. */
static int decode_proc(const ls_module *m, struct proc_code *pc, ls_error *err)
{
	struct ls_decoder *dec = ls_decoder_new(m->ehdr.e_machine);
	if (!dec) {
		ls_set_error(err, LS_ERR_UNSUPPORTED, "%s: no decoder for machine %d", m->path, m->ehdr.e_machine);
		return -1;
	}
	int rc = 0;
	for (size_t r = 0; r < pc->proc->nranges && rc == 0; r++) {
		uint64_t a = pc->proc->ranges[r].lo, hi = pc->proc->ranges[r].hi;
		while (a < hi) {
			const struct ls_text *t = ls_text_find(m, a);
			if (!t)
				break;
			uint64_t end = hi < t->addr + t->size ? hi : t->addr + t->size;
			struct ls_insn in;
			size_t len = ls_decode(dec, t->data + (a - t->addr), end - a, a, &in);
			if (len == 0)
				len = 1; /* not an instruction: step over the byte as objdump does */
			else if (push_insn(pc, &in) < 0) {
				ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", m->path);
				rc = -1;
				break;
			}
			if (in.kind == LS_INSN_IJUMP)
				pc->has_ijump = true;
			a += len;
		}
	}
	ls_decoder_free(dec);
	return rc;
}

static bool in_scope(const ls_scope *s, uint64_t a)
{
	for (size_t i = 0; i < s->nranges; i++)
		if (a >= s->ranges[i].lo && a < s->ranges[i].hi)
			return true;
	return false;
}

static const struct ls_insn *insn_at(const struct proc_code *pc, uint64_t a)
{
	size_t lo = 0, hi = pc->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pc->insns[mid].addr < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pc->n && pc->insns[lo].addr == a ? &pc->insns[lo] : NULL;
}

/* Whether control goes on to the next instruction after IN. */
static bool falls_through(const ls_module *m, const struct ls_insn *in)
{
	switch (in->kind) {
	case LS_INSN_JUMP: case LS_INSN_IJUMP: case LS_INSN_RET: case LS_INSN_HALT: case LS_INSN_INVALID:
		return false;
	case LS_INSN_CALL:
		return !ls_cfg_call_noreturn(m, in->target);
	default:
		return true;
	}
}

/* The x86 condition code of the conditional jump at IN (0..15), or -1 for
 * one that tests a register rather than the flags (jrcxz, loop). */
static int cond_code(const ls_module *m, const struct ls_insn *in)
{
	const struct ls_text *t = ls_text_find(m, in->addr);
	if (!t)
		return -1;
	const uint8_t *p = t->data + (in->addr - t->addr), *end = p + in->len;
	while (p < end && (*p == 0x2e || *p == 0x3e || *p == 0xf2 || *p == 0x66 || *p == 0x67))
		p++; /* branch hints, bnd, operand/address size */
	if (p < end && *p >= 0x70 && *p <= 0x7f)
		return *p & 0xf;
	if (p + 1 < end && p[0] == 0x0f && p[1] >= 0x80 && p[1] <= 0x8f)
		return p[1] & 0xf;
	return -1;
}

/* The uprobe offset of ADDR: its offset in the file, through PT_LOAD. */
static uint64_t file_offset(const ls_module *m, uint64_t addr)
{
	size_t n;
	if (m->relocatable || elf_getphdrnum(m->elf, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(m->elf, (int)i, &ph) && ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
		    addr - ph.p_vaddr < ph.p_filesz)
			return ph.p_offset + (addr - ph.p_vaddr);
	}
	return 0;
}

/* Whether a uprobe can sit on the instruction at ADDR: x86 uprobes refuse
 * (silently, when the code is mapped: the probe then never fires) the
 * ES, CS, SS and DS segment prefixes and LOCK (arch/x86/kernel/uprobes.c,
 * is_prefix_bad), which compilers put on padding ("cs nopw"). */
static bool probe_safe(const ls_module *m, const struct proc_code *pc, uint64_t addr)
{
	const struct ls_insn *in = insn_at(pc, addr);
	const struct ls_text *t = ls_text_find(m, addr);
	if (!in || !t)
		return false;
	const uint8_t *b = t->data + (addr - t->addr);
	for (size_t i = 0; i < in->len; i++) {
		uint8_t c = b[i];
		if (c == 0x26 || c == 0x2e || c == 0x36 || c == 0x3e || c == 0xf0)
			return false;
		bool prefix = c == 0x64 || c == 0x65 || c == 0x66 || c == 0x67 || c == 0xf2 || c == 0xf3 ||
		              (c >= 0x40 && c <= 0x4f);
		if (!prefix)
			break;
	}
	return true;
}

/* Whether a branch of the procedure targets ADDR (a block starts there). */
static bool is_target(const struct proc_code *pc, uint64_t addr)
{
	for (size_t i = 0; i < pc->n; i++)
		if ((pc->insns[i].kind == LS_INSN_JUMP || pc->insns[i].kind == LS_INSN_CJUMP) && pc->insns[i].target == addr)
			return true;
	return false;
}

/* An instruction executed exactly as often as the one at ADDR, on which a
 * uprobe can sit: ADDR, or one before it in its block (BACK) or after it
 * (forward); 0 if none. */
static uint64_t probe_in_block(const ls_module *m, const struct proc_code *pc, uint64_t addr, bool back)
{
	for (int steps = 0; steps < 16; steps++) {
		if (probe_safe(m, pc, addr))
			return addr;
		const struct ls_insn *in = insn_at(pc, addr);
		if (!in)
			return 0;
		if (back) {
			if (in == pc->insns || is_target(pc, addr))
				return 0;
			const struct ls_insn *prev = in - 1;
			if (prev->addr + prev->len != addr || prev->kind != LS_INSN_OTHER)
				return 0;
			addr = prev->addr;
		} else {
			if (in->kind != LS_INSN_OTHER || is_target(pc, addr + in->len))
				return 0;
			addr += in->len;
		}
	}
	return 0;
}

/* How many edges of the procedure enter TO (2 means "more than one"). */
static int npreds(const ls_module *m, const struct proc_code *pc, uint64_t to)
{
	if (pc->has_ijump || to == ls_scope_low(pc->proc))
		return 2;
	int n = 0;
	for (size_t i = 0; i < pc->n && n < 2; i++) {
		const struct ls_insn *in = &pc->insns[i];
		if ((in->kind == LS_INSN_JUMP || in->kind == LS_INSN_CJUMP) && in->target == to)
			n++;
		if (in->addr + in->len == to && falls_through(m, in))
			n++;
	}
	return n;
}

struct point_list {
	ls_loop_point *out;
	size_t cap, n;
};

static void add_point(struct point_list *pl, const ls_loop_point *p)
{
	if (pl->n < pl->cap)
		pl->out[pl->n] = *p;
	pl->n++;
}

/* The point of edge FROM -> TO, FROM the address of the instruction that
 * ends the source block. */
static void edge_point(const ls_module *m, const struct proc_code *pc, ls_point_kind kind, uint64_t from,
                       uint64_t to, struct point_list *pl)
{
	ls_loop_point p = { .kind = kind, .from = from, .to = to, .probe = from, .cond = -1 };
	const struct ls_insn *in = insn_at(pc, from);
	if (!in || in->kind == LS_INSN_OTHER || in->kind == LS_INSN_CALL || in->kind == LS_INSN_ICALL)
		p.how = LS_HOW_FALLTHROUGH;
	else if (in->kind == LS_INSN_JUMP)
		p.how = LS_HOW_JUMP;
	else if (in->kind == LS_INSN_CJUMP) {
		p.how = LS_HOW_COND;
		p.cond = cond_code(m, in);
		p.cond_name = p.cond >= 0 ? cond_names[p.cond] : "rcx";
		/* both outcomes the same place: the branch's every execution */
		p.taken = in->target == to;
		if (in->target == to && in->addr + in->len == to)
			p.how = LS_HOW_JUMP;
	} else
		p.how = LS_HOW_INDIRECT;
	p.to_single_pred = npreds(m, pc, to) == 1;
	/* an edge out of a branch is counted on the branch; out of a plain
	 * instruction, on any of its block's before it */
	p.probe = probe_in_block(m, pc, from, p.how == LS_HOW_FALLTHROUGH);
	p.probe_offset = p.probe ? file_offset(m, p.probe) : 0;
	p.to_probe = p.to_single_pred ? probe_in_block(m, pc, to, false) : 0;
	p.to_probe_offset = p.to_probe ? file_offset(m, p.to_probe) : 0;
	add_point(pl, &p);
}

/* Whether instruction I is padding no path reaches: a run of NOPs after an
 * instruction that does not fall through, none of them a branch target.
 * Its "edge" into the next block is never taken, and needs no probe. */
static bool dead_padding(const ls_module *m, const struct proc_code *pc, size_t i)
{
	for (;;) {
		const struct ls_insn *in = &pc->insns[i];
		if (in->opcode != LS_MN_NOP || is_target(pc, in->addr))
			return false;
		if (i == 0)
			return true;
		const struct ls_insn *prev = &pc->insns[i - 1];
		if (prev->addr + prev->len != in->addr || !falls_through(m, prev))
			return true;
		i--;
	}
}

/* The edges from outside the loop into entry block E. */
static void entry_points(const ls_module *m, const struct proc_code *pc, uint64_t e, struct point_list *pl)
{
	for (size_t i = 0; i < pc->n; i++) {
		const struct ls_insn *in = &pc->insns[i];
		if (in_scope(pc->loop, in->addr))
			continue;
		bool jumps = (in->kind == LS_INSN_JUMP || in->kind == LS_INSN_CJUMP) && in->target == e;
		bool falls = in->addr + in->len == e && falls_through(m, in) && !dead_padding(m, pc, i);
		if (jumps || falls)
			edge_point(m, pc, LS_POINT_ENTRY, in->addr, e, pl);
	}
}

/* Returns and tail calls inside the loop: it is left with its procedure. */
static void leave_points(const ls_module *m, const struct proc_code *pc, struct point_list *pl)
{
	for (size_t i = 0; i < pc->n; i++) {
		const struct ls_insn *in = &pc->insns[i];
		if (!in_scope(pc->loop, in->addr))
			continue;
		bool tail = in->kind == LS_INSN_JUMP && !in_scope(pc->proc, in->target);
		if (in->kind != LS_INSN_RET && !tail)
			continue;
		ls_loop_point p = { .kind = LS_POINT_LEAVE, .how = LS_HOW_RETURN, .from = in->addr,
		                    .to = tail ? in->target : 0, .probe = in->addr, .cond = -1 };
		p.probe_offset = probe_safe(m, pc, p.probe) ? file_offset(m, p.probe) : 0;
		add_point(pl, &p);
	}
}

int ls_loop_points(const ls_module *m, const ls_scope *loop, ls_loop_point *out, size_t cap, ls_error *err)
{
	if (!m || !loop || loop->kind != LS_SCOPE_LOOP || !loop->loop) {
		ls_set_error(err, LS_ERR_USAGE, "%s: not a loop scope", m ? m->path : "(null)");
		return -1;
	}
	struct proc_code pc = { .loop = loop };
	for (pc.proc = loop; pc.proc && pc.proc->kind != LS_SCOPE_PROC; pc.proc = pc.proc->parent)
		;
	if (!pc.proc) {
		ls_set_error(err, LS_ERR_USAGE, "%s: loop at 0x%" PRIx64 " is in no procedure", m->path,
		             loop->loop->header);
		return -1;
	}
	if (decode_proc(m, &pc, err) < 0) {
		free(pc.insns);
		return -1;
	}
	const struct ls_loop_info *li = loop->loop;
	struct point_list pl = { .out = out, .cap = cap };
	for (size_t i = 0; i < li->nentries; i++)
		entry_points(m, &pc, li->entries[i], &pl);
	ls_loop_point h = { .kind = LS_POINT_HEADER, .how = LS_HOW_BLOCK, .from = li->header, .to = li->header,
	                    .probe = li->header, .cond = -1 };
	h.probe = probe_in_block(m, &pc, li->header, false);
	h.probe_offset = h.probe ? file_offset(m, h.probe) : 0;
	add_point(&pl, &h);
	for (size_t i = 0; i < li->nbackedges; i++)
		edge_point(m, &pc, LS_POINT_BACKEDGE, li->backedges[i].from, li->backedges[i].to, &pl);
	for (size_t i = 0; i < li->nexits; i++)
		edge_point(m, &pc, LS_POINT_EXIT, li->exits[i].from, li->exits[i].to, &pl);
	leave_points(m, &pc, &pl);
	free(pc.insns);
	if (pl.n > (size_t)INT32_MAX) {
		ls_set_error(err, LS_ERR_NOMEM, "%s: too many points", m->path);
		return -1;
	}
	return (int)pl.n;
}

const char *ls_point_kind_name(ls_point_kind k)
{
	static const char *const names[] = { "entry", "header", "backedge", "exit", "leave" };
	return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

const char *ls_point_how_name(ls_point_how h)
{
	static const char *const names[] = { "block", "fallthrough", "jump", "cond", "indirect", "return" };
	return (unsigned)h < sizeof names / sizeof *names ? names[h] : "?";
}
