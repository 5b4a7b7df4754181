/* cmd-annotate.c - `perf loops annotate [SYMBOL]`: read the perf.data file
 * as perf loops report does (the same tree), then show one procedure's
 * source with its costs and loops (annotate.c): in the browser on a
 * terminal, else as text (--stdio). */
#include "report.h"

#include <stdlib.h>
#include <unistd.h>

static int annotate(pl_report *rep)
{
	const pl_report_options *o = rep->opt;
	if (!rep->nshown) {
		if (!o->quiet)
			fprintf(stderr, "perf-loops: %s: no samples%s\n", pd_name(rep->r),
				rep->nsamples_all ? " left after the filters" : "");
		return 0;
	}
	if (o->data_type)
		return pl_annotate_data_types(rep);
	char err[1024];
	uint32_t proc = pl_annotate_find(rep, o->annotate_symbol, err, sizeof err);
	if (!proc) {
		fprintf(stderr, "perf-loops: %s\n", err);
		return 1;
	}
	int tui = o->ui == PL_UI_TUI ||
		  (o->ui == PL_UI_AUTO && !o->output && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO));
	if (tui) {
		int rc = pl_browser_annotate(rep, proc);
		if (rc >= 0)
			return rc;
	}
	pl_ann ann;
	if (pl_annotate_build(rep, proc, o->asm_view, &ann, err, sizeof err)) {
		fprintf(stderr, "perf-loops: %s\n", err);
		return 1;
	}
	if (rep->out == stdout)
		pl_pager_start(o);
	pl_print_annotation(rep, &ann);
	pl_ann_free(&ann);
	return 0;
}

int cmd_annotate(int argc, char **argv)
{
	pl_report_options o;
	int rc = pl_annotate_options_parse(argc, argv, &o);
	if (rc < 0) {
		pl_report rep;
		rc = pl_report_open(&o, &rep);
		if (!rc) {
			rc = annotate(&rep);
			pl_report_close(&rep);
		}
	}
	pl_report_options_free(&o);
	return rc;
}
