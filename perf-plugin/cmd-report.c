/* cmd-report.c - `perf loops report`: read a perf.data file, build the
 * calling-context tree with loops and inlined calls, print one view.
 * Options follow perf report's names. */
#include "report.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char report_usage[] =
	"usage: perf loops report [-i perf.data] [--stdio] [--format=tree|flat|loops|folded|json]\n"
	"                         [--percent-limit=P] [--comm=C] [--pid=P] [--dso=D] [--event=E]\n"
	"                         [--children|--no-children] [-k|--vmlinux FILE] [--modules DIR]\n";

/* "a,b,c" -> a list (perf's comma-separated filters) */
static void split_list(const char *arg, char ***list, size_t *n)
{
	char *copy = pl_xstrdup(arg), *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		*list = pl_xrealloc(*list, (*n + 1) * sizeof **list);
		(*list)[(*n)++] = pl_xstrdup(tok);
	}
	free(copy);
}

static void free_opts(pl_report_options *o)
{
	for (size_t i = 0; i < o->ncomms; i++)
		free(o->comms[i]);
	for (size_t i = 0; i < o->ndsos; i++)
		free(o->dsos[i]);
	for (size_t i = 0; i < o->nevents; i++)
		free(o->events[i]);
	free(o->comms);
	free(o->dsos);
	free(o->events);
	free(o->pids);
}

int cmd_report(int argc, char **argv)
{
	enum { O_FORMAT = 256, O_PLIMIT, O_COMM, O_PID, O_DSO, O_EVENT, O_CHILDREN, O_NOCHILDREN, O_STDIO, O_HELP, O_MODULES };
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "percent-limit", required_argument, NULL, O_PLIMIT },
		{ "comm", required_argument, NULL, O_COMM },
		{ "comms", required_argument, NULL, O_COMM },
		{ "pid", required_argument, NULL, O_PID },
		{ "dso", required_argument, NULL, O_DSO },
		{ "dsos", required_argument, NULL, O_DSO },
		{ "event", required_argument, NULL, O_EVENT },
		{ "children", no_argument, NULL, O_CHILDREN },
		{ "no-children", no_argument, NULL, O_NOCHILDREN },
		{ "stdio", no_argument, NULL, O_STDIO },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, O_HELP },
		{ "vmlinux", required_argument, NULL, 'k' },
		{ "modules", required_argument, NULL, O_MODULES },
		{ NULL, 0, NULL, 0 },
	};
	pl_report_options o = { .format = PL_FMT_TREE, .children = 1 };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:qve:k:", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o.input = optarg;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case O_FORMAT:
			if (!strcmp(optarg, "tree"))
				o.format = PL_FMT_TREE;
			else if (!strcmp(optarg, "flat"))
				o.format = PL_FMT_FLAT;
			else if (!strcmp(optarg, "loops"))
				o.format = PL_FMT_LOOPS;
			else if (!strcmp(optarg, "folded"))
				o.format = PL_FMT_FOLDED;
			else if (!strcmp(optarg, "json"))
				o.format = PL_FMT_JSON;
			else {
				fprintf(stderr, "perf-loops: unknown format '%s' (tree, flat, loops, folded, json)\n", optarg);
				free_opts(&o);
				return 2;
			}
			break;
		case O_PLIMIT: {
			char *end;
			o.percent_limit = strtod(optarg, &end);
			if (end == optarg || (*end && strcmp(end, "%")) || o.percent_limit < 0) {
				fprintf(stderr, "perf-loops: bad --percent-limit '%s'\n", optarg);
				free_opts(&o);
				return 2;
			}
			break;
		}
		case O_COMM:
			split_list(optarg, &o.comms, &o.ncomms);
			break;
		case O_PID: {
			char **l = NULL;
			size_t n = 0;
			split_list(optarg, &l, &n);
			for (size_t i = 0; i < n; i++) {
				char *end;
				unsigned long v = strtoul(l[i], &end, 10);
				if (*end || end == l[i]) {
					fprintf(stderr, "perf-loops: bad --pid '%s'\n", l[i]);
					for (size_t k = 0; k < n; k++)
						free(l[k]);
					free(l);
					free_opts(&o);
					return 2;
				}
				o.pids = pl_xrealloc(o.pids, (o.npids + 1) * sizeof *o.pids);
				o.pids[o.npids++] = (uint32_t)v;
			}
			for (size_t k = 0; k < n; k++)
				free(l[k]);
			free(l);
			break;
		}
		case O_DSO:
			split_list(optarg, &o.dsos, &o.ndsos);
			break;
		case 'e':
		case O_EVENT:
			split_list(optarg, &o.events, &o.nevents);
			break;
		case O_CHILDREN:
			o.children = 1;
			break;
		case O_NOCHILDREN:
			o.children = 0;
			break;
		case O_STDIO:
			break;
		case 'k':
			o.vmlinux = optarg;
			break;
		case O_MODULES:
			o.modules = optarg;
			break;
		case O_HELP:
			fputs(report_usage, stdout);
			free_opts(&o);
			return 0;
		default:
			fputs(report_usage, stderr);
			free_opts(&o);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "perf-loops: unexpected argument '%s'\n%s", argv[optind], report_usage);
		free_opts(&o);
		return 2;
	}
	if (!o.input) {
		/* as perf report: a pipe on stdin is the input */
		struct stat st;
		o.input = fstat(0, &st) == 0 && S_ISFIFO(st.st_mode) ? "-" : "perf.data";
	}
	char err[1024];
	pd_reader *r = pd_open(o.input, err, sizeof err);
	if (!r) {
		fprintf(stderr, "perf-loops: %s\n", err);
		free_opts(&o);
		return 1;
	}
	pl_report rep = { .opt = &o, .r = r, .out = stdout };
	rep.s = pl_session_new(r);
	/* the tree is made when the first sample is replayed: by then every
	 * event is known, also in pipe mode (pl_report_begin) */
	rep.attrib = pl_attrib_new(&rep);
	pl_session_run(rep.s, pl_attrib_sample, &rep);
	pl_report_begin(&rep);
	pl_tree_finish(&rep.tree);
	const char *w = pd_warnings(r);
	if (w) {
		for (const char *p = w; *p;) {
			const char *nl = strchr(p, '\n');
			size_t l = nl ? (size_t)(nl - p) : strlen(p);
			fprintf(stderr, "perf-loops: warning: %.*s\n", (int)l, p);
			p += l + (nl ? 1 : 0);
		}
	}
	pl_attrib_warn_bounds(rep.attrib);
	if (pd_bytes_lost(r))
		fprintf(stderr, "perf-loops: warning: %s: %llu bytes of data could not be read; the report covers the rest\n",
			pd_name(r), (unsigned long long)pd_bytes_lost(r));
	if (pl_session_bad_records(rep.s))
		fprintf(stderr, "perf-loops: warning: %s: %llu records could not be parsed\n", pd_name(r),
			(unsigned long long)pl_session_bad_records(rep.s));
	rep.shown = pl_xcalloc(rep.nev ? rep.nev : 1, sizeof *rep.shown);
	for (size_t e = 0; e < rep.nev; e++)
		if (rep.ev_samples[e])
			rep.shown[rep.nshown++] = e;
	int rc = 0;
	if (!rep.nshown) {
		if (o.format == PL_FMT_JSON) {
			rep.primary = 0;
			pl_view_json(&rep);
		} else {
			fprintf(stderr, "perf-loops: %s: no samples%s\n", pd_name(r),
				rep.nsamples_all ? " left after the filters" : "");
		}
	} else if (o.format == PL_FMT_JSON) {
		rep.primary = rep.shown[0];
		rc = pl_view_json(&rep);
	} else {
		for (size_t i = 0; i < rep.nshown && !rc; i++) {
			rep.primary = rep.shown[i];
			switch (o.format) {
			case PL_FMT_TREE: rc = pl_view_tree(&rep); break;
			case PL_FMT_FLAT: rc = pl_view_flat(&rep); break;
			case PL_FMT_LOOPS: rc = pl_view_loops(&rep); break;
			case PL_FMT_FOLDED: rc = pl_view_folded(&rep); break;
			default: break;
			}
		}
	}
	if (fflush(stdout) != 0 && errno != EPIPE) {
		fprintf(stderr, "perf-loops: write error: %s\n", strerror(errno));
		rc = 1;
	}
	pl_unwind_free_all(rep.s);
	pl_attrib_free(rep.attrib);
	pl_tree_free(&rep.tree);
	if (rep.have_flat)
		pl_tree_free(&rep.flat);
	pl_session_free(rep.s);
	free(rep.ev_samples);
	free(rep.ev_period);
	free(rep.shown);
	pd_close(r);
	free_opts(&o);
	return rc;
}
