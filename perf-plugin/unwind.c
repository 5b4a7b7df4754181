/* unwind.c - user call chains of `--call-graph dwarf` samples, unwound with
 * libdwfl over the registers and the stack copy perf saved with the sample.
 *
 * One Dwfl per process, holding the process's code maps as modules at their
 * load bias; it is rebuilt when the process's maps change.  The thread state
 * callbacks serve the sampled registers (perf's register order mapped to
 * DWARF's) and read memory from the stack copy; CFI comes from .eh_frame or
 * .debug_frame of the modules.  x86-64 only (perf's register layout).
 */
#include <elfutils/libdwfl.h> /* first: loopscope.h declares its libdwfl callback after it */
#include "report.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

/* perf's x86-64 register numbers (arch/x86/include/uapi/asm/perf_regs.h) */
enum { PR_AX, PR_BX, PR_CX, PR_DX, PR_SI, PR_DI, PR_BP, PR_SP, PR_IP, PR_FLAGS,
       PR_CS, PR_SS, PR_DS, PR_ES, PR_FS, PR_GS, PR_R8, PR_R9, PR_R10, PR_R11,
       PR_R12, PR_R13, PR_R14, PR_R15 };

/* DWARF register n (0..16) of x86-64 is perf register dwarf_to_perf[n]. */
static const int dwarf_to_perf[17] = {
	PR_AX, PR_DX, PR_CX, PR_BX, PR_SI, PR_DI, PR_BP, PR_SP,
	PR_R8, PR_R9, PR_R10, PR_R11, PR_R12, PR_R13, PR_R14, PR_R15, PR_IP,
};

struct unwind_ctx { /* the sample being unwound */
	const pd_sample *smp;
	uint32_t tid;
	uint64_t sp;
	uint64_t *pcs;
	size_t n, cap;
};

struct proc_unwind {
	Dwfl *dwfl;
	unsigned gen;
	int attached;
	struct unwind_ctx ctx;
};

static int reg_of(const pd_sample *s, int perf_reg, uint64_t *out)
{
	if (!s->regs_abi || !s->regs_user || !(s->regs_mask & (1ULL << perf_reg)))
		return -1;
	int idx = __builtin_popcountll(s->regs_mask & ((1ULL << perf_reg) - 1));
	*out = s->regs_user[idx];
	return 0;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwind_ctx *c = arg;
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return (pid_t)c->tid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwind_ctx *c = arg;
	const pd_sample *s = c->smp;
	uint64_t size = s->stack_dyn_size ? s->stack_dyn_size : s->stack_size;
	if (addr < c->sp || addr + 8 > c->sp + size || addr + 8 < addr)
		return false; /* outside the stack copy: text reads are not needed for CFI */
	memcpy(result, s->stack_user + (addr - c->sp), 8);
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwind_ctx *c = arg;
	Dwarf_Word regs[17];
	for (int i = 0; i < 17; i++) {
		uint64_t v = 0;
		reg_of(c->smp, dwarf_to_perf[i], &v);
		regs[i] = v;
	}
	return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = ls_dwfl_find_debuginfo, /* never blocks on a FIFO */
	.debuginfo_path = &debuginfo_path,
};

static void proc_unwind_free(struct proc_unwind *pu)
{
	if (!pu)
		return;
	if (pu->dwfl)
		dwfl_end(pu->dwfl);
	free(pu);
}

static void free_one(void *ctx, pl_proc *p)
{
	proc_unwind_free(p->unwind);
	p->unwind = NULL;
}

void pl_unwind_free_all(pl_session *s)
{
	pl_session_each_proc(s, free_one, NULL);
}

/* (Re)build the process's Dwfl from its current maps. */
static struct proc_unwind *proc_dwfl(struct pl_attrib *a, pl_proc *p)
{
	struct proc_unwind *pu = p->unwind;
	if (pu && pu->gen == p->gen)
		return pu->attached ? pu : NULL;
	if (pu && pu->dwfl)
		dwfl_end(pu->dwfl);
	if (!pu) {
		pu = pl_xcalloc(1, sizeof *pu);
		p->unwind = pu;
	}
	pu->dwfl = NULL;
	pu->attached = 0;
	pu->gen = p->gen;
	Dwfl *dwfl = dwfl_begin(&dwfl_callbacks);
	if (!dwfl)
		return NULL;
	dwfl_report_begin(dwfl);
	int reported = 0;
	size_t nmaps;
	pl_map **maps = pl_maps_list(&p->maps, &nmaps);
	uint8_t *seen = pl_xcalloc(pl_session_ndsos(pl_attrib_session(a)) + 1, 1);
	for (size_t i = 0; i < nmaps; i++) {
		const pl_map *m = maps[i];
		/* one module per file, at the bias of its first code map */
		if (m->dso->index >= pl_session_ndsos(pl_attrib_session(a)) || seen[m->dso->index])
			continue;
		seen[m->dso->index] = 1;
		const char *path = pl_attrib_file(a, m->dso);
		if (!path)
			continue;
		uint64_t link;
		if (pl_attrib_link_addr(a, m, m->start, &link) < 0)
			continue;
		if (dwfl_report_elf(dwfl, m->dso->short_name, path, -1, m->start - link, false))
			reported++;
	}
	free(maps);
	free(seen);
	dwfl_report_end(dwfl, NULL, NULL);
	pu->dwfl = dwfl;
	if (!reported || !dwfl_attach_state(dwfl, NULL, (pid_t)p->pid, &thread_callbacks, &pu->ctx))
		return NULL;
	pu->attached = 1;
	return pu;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwind_ctx *c = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	if (c->n == c->cap)
		return DWARF_CB_ABORT;
	c->pcs[c->n++] = pc;
	return DWARF_CB_OK;
}

size_t pl_unwind_user(struct pl_attrib *a, pl_thread *t, const pd_sample *smp, uint64_t *pcs, size_t cap)
{
	if (!smp->regs_abi || !smp->regs_user || !smp->stack_size || !cap)
		return 0;
	struct proc_unwind *pu = proc_dwfl(a, t->proc);
	uint64_t ip, sp;
	if (reg_of(smp, PR_IP, &ip) < 0 || reg_of(smp, PR_SP, &sp) < 0)
		return 0;
	if (!pu) {
		pcs[0] = ip;
		return 1;
	}
	pu->ctx.smp = smp;
	pu->ctx.tid = t->tid;
	pu->ctx.sp = sp;
	pu->ctx.pcs = pcs;
	pu->ctx.n = 0;
	pu->ctx.cap = cap;
	/* the callbacks' argument is our ctx: the Dwfl keeps the thread only
	 * for the length of this call */
	dwfl_getthread_frames(pu->dwfl, (pid_t)t->tid, frame_cb, &pu->ctx);
	if (!pu->ctx.n) {
		pcs[0] = ip;
		return 1;
	}
	return pu->ctx.n;
}
