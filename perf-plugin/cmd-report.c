/* cmd-report.c - `perf loops report`: read a perf.data file, build the
 * calling-context tree with loops and inlined calls, print one view.
 * Options follow perf report's names. */
#include "report.h"
#include "offcpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where a sample's numbers go, and which; the tree is filled as records
 * are replayed, then its totals are summed (pl_tree_finish). */
static void read_samples(pl_report *rep)
{
	rep->s = pl_session_new(rep->r);
	rep->offcpu = pl_offcpu_scan(rep->opt->input, &rep->off_ev);
	/* the tree is made when the first sample is replayed: by then every
	 * event is known, also in pipe mode (pl_report_begin) */
	rep->attrib = pl_attrib_new(rep);
	pl_session_run(rep->s, pl_attrib_sample, rep);
	pl_report_begin(rep);
	rep->on_ev = rep->offcpu ? pl_offcpu_clock_event(rep) : -1;
	const pl_report_options *o = rep->opt;
	if (o->callee && !o->chains && !o->nsort && !o->annotate && !o->wall) {
		pl_tree_invert(&rep->tree);
		pl_places_free(&rep->places); /* their nodes are the tree's before */
	} else
		pl_tree_finish(&rep->tree);
}

/* What the reader could not read, once per file, unless -q. */
static void print_reader_warnings(const pl_report *rep)
{
	pd_reader *r = rep->r;
	if (rep->opt->quiet)
		return;
	const char *w = pd_warnings(r);
	for (const char *p = w ? w : ""; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		fprintf(stderr, "perf-loops: warning: %.*s\n", (int)l, p);
		p += l + (nl ? 1 : 0);
	}
	pl_attrib_warn_bounds(rep->attrib);
	if (pl_offcpu_unmatched(rep->offcpu))
		fprintf(stderr, "perf-loops: %s: %llu switches off the CPU have no return in the recording (it ended "
			"first, or records were lost): not counted\n", pd_name(r),
			(unsigned long long)pl_offcpu_unmatched(rep->offcpu));
	if (pd_bytes_lost(r))
		fprintf(stderr, "perf-loops: warning: %s: %llu bytes of data could not be read; the report covers the rest\n",
			pd_name(r), (unsigned long long)pd_bytes_lost(r));
	if (pl_session_lost_chunks(rep->s))
		fprintf(stderr, "perf-loops: warning: %s: %llu chunks of events were lost while recording (PERF_RECORD_LOST: "
			"the ring buffer was full; perf record -m or a lower -F helps)\n", pd_name(r),
			(unsigned long long)pl_session_lost_chunks(rep->s));
	if (pl_session_bad_records(rep->s))
		fprintf(stderr, "perf-loops: warning: %s: %llu records could not be parsed\n", pd_name(r),
			(unsigned long long)pl_session_bad_records(rep->s));
}

/* One view per event with samples (json: all events in one document). */
static int print_views(pl_report *rep)
{
	const pl_report_options *o = rep->opt;
	if (o->wall && o->format == PL_FMT_JSON) /* the per-loop summary of on- and off-CPU time */
		return pl_view_wall(rep);
	if (o->format == PL_FMT_JSON && (o->sort_mask & (1u << PL_KEY_VAR)) && rep->nshown) {
		rep->primary = rep->shown[0]; /* -s var --format=json: the blame rows (data-keys.c) */
		return pl_view_var(rep);
	}
	if (o->format == PL_FMT_JSON || o->format == PL_FMT_PPROF) {
		return o->format == PL_FMT_JSON ? pl_view_json(rep) : pl_view_pprof(rep);
	}
	if (!rep->nshown) {
		if (!o->quiet)
			fprintf(stderr, "perf-loops: %s: no samples%s\n", pd_name(rep->r),
				rep->nsamples_all ? " left after the filters" : "");
		return 0;
	}
	if (o->wall)
		return pl_view_wall(rep);
	int rc = 0;
	/* the loops view with the data keys: the data view (per loop) */
	int data = o->format == PL_FMT_DATA || (o->format == PL_FMT_LOOPS && !o->sort_own && o->nsort &&
	                                        !(o->sort_mask & ~PL_DATA_KEYS));
	for (size_t i = 0; i < rep->nshown && !rc; i++) {
		rep->primary = rep->shown[i];
		if (data) {
			rc = pl_view_data(rep);
			continue;
		}
		if (o->nsort) {
			rc = pl_view_sort(rep);
			continue;
		}
		switch (o->format) {
		case PL_FMT_TREE: rc = o->chains ? pl_view_chains(rep) : pl_view_tree(rep); break;
		case PL_FMT_FLAT: rc = pl_view_flat(rep); break;
		case PL_FMT_LOOPS: rc = pl_view_loops(rep); break;
		case PL_FMT_FOLDED: rc = pl_view_folded(rep); break;
		default: break;
		}
	}
	return rc;
}

static FILE *open_output(const pl_report_options *o)
{
	if (!o->output || !strcmp(o->output, "-") || o->format == PL_FMT_PPROF)
		return stdout; /* pprof writes its file itself (gzip) */
	FILE *f = fopen(o->output, "w");
	if (!f)
		fprintf(stderr, "perf-loops: %s: %s\n", o->output, strerror(errno));
	return f;
}

/* The events with samples, in file order: what the views show. */
static void find_shown_events(pl_report *rep)
{
	rep->shown = pl_xcalloc(rep->nev ? rep->nev : 1, sizeof *rep->shown);
	for (size_t e = 0; e < rep->nev; e++)
		if (rep->ev_samples[e])
			rep->shown[rep->nshown++] = e;
	rep->primary = rep->nshown ? rep->shown[0] : 0;
}

/* --time in percentages: ranges of the recording's span, from the first
 * and last sample times perf record writes in the header (as perf does). */
static int resolve_time_percent(pl_report_options *o, const pd_reader *r)
{
	uint64_t first, last;
	if (pd_sample_time_range(r, &first, &last)) {
		fprintf(stderr, "perf-loops: %s: --time in percentages needs the recording's first and last sample "
			"times, which this file does not have (give START,STOP in seconds)\n", pd_name(r));
		return 1;
	}
	double span = (double)(last - first);
	for (size_t i = 0; i < o->ntime_ranges; i++) {
		struct pl_time_range *t = &o->time_ranges[i];
		t->start = first + (uint64_t)(span * t->pstart);
		t->stop = t->pstop >= 1.0 ? last : first + (uint64_t)(span * t->pstop);
	}
	return 0;
}

/* The recording -i names, else as perf report: a pipe on stdin, else
 * perf.data; NULL when it cannot be read (said on stderr). */
static pd_reader *open_input(pl_report_options *o)
{
	if (!o->input) {
		struct stat st;
		o->input = fstat(0, &st) == 0 && S_ISFIFO(st.st_mode) ? "-" : "perf.data";
	}
	char err[1024];
	pd_reader *r = pd_open(o->input, err, sizeof err);
	if (!r)
		fprintf(stderr, "perf-loops: %s\n", err);
	return r;
}

int pl_report_open(pl_report_options *o, pl_report *rep)
{
	pd_reader *r = open_input(o);
	if (!r)
		return 1;
	if (o->time_percent && resolve_time_percent(o, r)) {
		pd_close(r);
		return 1;
	}
	FILE *out = open_output(o);
	if (!out) {
		pd_close(r);
		return 1;
	}
	*rep = (pl_report){ .opt = o, .r = r, .out = out };
	pl_progress_begin(o);
	read_samples(rep);
	pl_progress_end();
	print_reader_warnings(rep);
	find_shown_events(rep);
	rep->color = pl_color_wanted(o, out);
	rep->width = pl_terminal_width(out);
	return 0;
}

/* Flush or close the output, free the report: 0, or 1 on a write error. */
static int close_report(pl_report *rep)
{
	int rc = 0;
	FILE *out = rep->out;
	if ((out == stdout ? fflush(out) : fclose(out)) != 0 && errno != EPIPE) {
		fprintf(stderr, "perf-loops: write error: %s\n", strerror(errno));
		rc = 1;
	}
	pd_reader *r = rep->r;
	pl_report_free(rep);
	pd_close(r);
	return rc;
}

void pl_report_close(pl_report *rep)
{
	close_report(rep);
}

/* The browser: with --tui, or by default when stdout is a terminal and a
 * plain tree report is asked for (as perf report opens its TUI).  Its views
 * are top-down trees: -g callee and -g flat are printed (and paged). */
static int wants_browser(const pl_report_options *o)
{
	if (o->callee || o->chains)
		return 0;
	if (o->ui == PL_UI_TUI)
		return 1;
	return o->ui == PL_UI_AUTO && o->format == PL_FMT_TREE && !o->nsort && !o->output &&
	       isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
}

/* --stats and --header-only: the file alone, no tree. */
static int run_file_info(pl_report_options *o)
{
	pd_reader *r = open_input(o);
	if (!r)
		return 1;
	FILE *out = open_output(o);
	if (!out) {
		pd_close(r);
		return 1;
	}
	if (o->header)
		pl_print_file_header(r, out);
	if (o->stats)
		pl_print_stats(r, out);
	int rc = 0;
	if ((out == stdout ? fflush(out) : fclose(out)) != 0) {
		fprintf(stderr, "perf-loops: write error: %s\n", strerror(errno));
		rc = 1;
	}
	pd_close(r);
	return rc;
}

static int run_report(pl_report_options *o)
{
	if (o->stats || o->header == 2)
		return run_file_info(o);
	if (o->format == PL_FMT_PPROF && (!o->output || !strcmp(o->output, "-"))) {
		fprintf(stderr, "perf-loops: --format=pprof writes a gzipped file: give it with -o FILE\n");
		return 2;
	}
	pl_report rep;
	int rc = pl_report_open(o, &rep);
	if (rc)
		return rc;
	rc = -1;
	if (wants_browser(o) && !o->header)
		rc = pl_browser(&rep); /* -1: no browser here, print */
	if (rc < 0) {
		if (rep.out == stdout && o->format != PL_FMT_PPROF)
			pl_pager_start(o);
		if (o->header) /* --header: the file's header, then the report */
			pl_print_file_header(rep.r, rep.out);
		rc = print_views(&rep);
	}
	int wrc = close_report(&rep);
	return rc ? rc : wrc;
}

int cmd_report(int argc, char **argv)
{
	pl_report_options o;
	int rc = pl_report_options_parse(argc, argv, &o);
	if (rc < 0)
		rc = run_report(&o);
	pl_report_options_free(&o);
	return rc;
}
