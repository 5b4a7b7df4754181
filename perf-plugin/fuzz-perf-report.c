/* fuzz-perf-report.c - libFuzzer target: `perf loops report` whole, on an
 * untrusted perf.data: the reader and the session, and then what
 * fuzz-perf-data does not reach - finding the binaries the file names
 * (build-id table, paths, perf's build-id cache, the prefetch thread),
 * their ELF loading and analysis, kallsyms, --call-graph dwarf unwinding
 * through libdwfl, the calling-context tree (turned over for -g callee on
 * odd-sized inputs) and every view.
 *
 * Seeds: recordings of the fixtures made by scripts/fuzz-ci (file and pipe
 * mode, compressed, fp/dwarf/lbr call graphs), whose binaries exist where
 * the recordings say; the tests/hostile-perf.py inputs.  The views write to
 * /dev/null; the analysis cache goes to a private directory. */
#include "report.h"
#include "offcpu.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int once;
	if (!once) {
		/* XDG_CACHE_HOME: the caller's (scripts/fuzz-ci warms it), else private */
		char dir[64];
		snprintf(dir, sizeof dir, "/tmp/ls-fuzz-report.%d", (int)getpid());
		setenv("XDG_CACHE_HOME", dir, 0);
		setenv("PERF_LOOPS_PREFETCH_TIMEOUT", "5", 1);
		once = 1;
	}
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	char err[512];
	pd_reader *r = pd_open_mem("fuzz", copy, size, err, sizeof err);
	if (!r) {
		free(copy);
		return 0;
	}
	FILE *devnull = fopen("/dev/null", "w");
	/* one input in two takes -g callee: the tree turned over */
	pl_report_options o = { .format = PL_FMT_TREE, .children = 1, .quiet = 1, .callee = (int)(size & 1) };
	pl_report rep = { .opt = &o, .r = r, .out = devnull ? devnull : stdout };
	/* off-CPU intervals (offcpu.c): their own pass, over a reader of their own */
	pd_reader *r2 = pd_open_mem("fuzz", copy, size, err, sizeof err);
	if (r2) {
		rep.offcpu = pd_is_pipe(r2) ? NULL : pl_offcpu_read(r2, &rep.off_ev);
		pd_close(r2);
	}
	rep.s = pl_session_new(r);
	rep.attrib = pl_attrib_new(&rep);
	pl_session_run(rep.s, pl_attrib_sample, &rep);
	pl_report_begin(&rep);
	rep.on_ev = rep.offcpu ? pl_offcpu_clock_event(&rep) : -1;
	if (o.callee)
		pl_tree_invert(&rep.tree);
	else
		pl_tree_finish(&rep.tree);
	rep.shown = pl_xcalloc(rep.nev ? rep.nev : 1, sizeof *rep.shown);
	for (size_t e = 0; e < rep.nev; e++)
		if (rep.ev_samples[e])
			rep.shown[rep.nshown++] = e;
	for (size_t i = 0; i < rep.nshown && i < 4; i++) {
		rep.primary = rep.shown[i];
		pl_view_tree(&rep);
		pl_view_chains(&rep);
		if (!o.callee) { /* they read the tree top-down (options.c) */
			pl_view_flat(&rep);
			pl_view_loops(&rep);
			pl_view_folded(&rep);
		}
		if (i == 0)
			pl_view_json(&rep);
		if (i == 0 && rep.offcpu && !o.callee)
			pl_view_wall(&rep);
	}
	pl_report_free(&rep);
	pd_close(r);
	free(copy);
	if (devnull)
		fclose(devnull);
	return 0;
}
