/* options.c - the options of `perf loops report`, under perf report's names
 * and short forms, so that a perf user's muscle memory works.  One table
 * lists every option: those that mean something here, and perf report's
 * options that do not apply, which get a one-line message naming them
 * (never getopt's bare "unrecognized option").  The table also answers
 * --list-opts, which shell completion asks for. */
#include "report.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum {
	O_FORMAT = 256, O_PLIMIT, O_PID, O_TID, O_EVENT, O_CHILDREN, O_NOCHILDREN,
	O_STDIO, O_TUI, O_GTK, O_MODULES, O_SYMFILTER, O_MAXSTACK, O_NODEMANGLE, O_SYMFS,
	O_TIME, O_PERIOD, O_LISTOPTS, O_NOPAGER, O_COLOR, O_FULLNAMES, O_ASM, O_NA, O_DATATYPE,
	O_SYMBOL, O_STATS, O_HEADER, O_HEADER_ONLY, O_WALL,
};

struct optdef {
	const char *name;
	int has_arg;       /* 0, 1, or 2: optional (perf's -g: alone, or with its value) */
	int code;          /* a short option letter, or O_* */
	const char *why;   /* O_NA: why it does not apply here */
};

static const struct optdef optdefs[] = {
	{ "input", 1, 'i', NULL },
	{ "output", 1, 'o', NULL },
	{ "format", 1, O_FORMAT, NULL },
	{ "sort", 1, 's', NULL },
	{ "call-graph", 2, 'g', NULL },
	{ "inverted", 0, 'G', NULL },
	{ "children", 0, O_CHILDREN, NULL },
	{ "no-children", 0, O_NOCHILDREN, NULL },
	{ "symbols", 1, 'S', NULL },
	{ "symbol-filter", 1, O_SYMFILTER, NULL },
	{ "fields", 1, 'F', NULL },
	{ "show-nr-samples", 0, 'n', NULL },
	{ "show-total-period", 0, O_PERIOD, NULL },
	{ "percent-limit", 1, O_PLIMIT, NULL },
	{ "comm", 1, 'c', NULL },
	{ "comms", 1, 'c', NULL },
	{ "pid", 1, O_PID, NULL },
	{ "tid", 1, O_TID, NULL },
	{ "dso", 1, 'd', NULL },
	{ "dsos", 1, 'd', NULL },
	{ "event", 1, 'e', NULL },
	{ "time", 1, O_TIME, NULL },
	{ "max-stack", 1, O_MAXSTACK, NULL },
	{ "no-demangle", 0, O_NODEMANGLE, NULL },
	{ "symfs", 1, O_SYMFS, NULL },
	{ "vmlinux", 1, 'k', NULL },
	{ "modules", 1, O_MODULES, NULL },
	{ "stdio", 0, O_STDIO, NULL },
	{ "tui", 0, O_TUI, NULL },
	{ "gtk", 0, O_GTK, NULL },
	{ "no-pager", 0, O_NOPAGER, NULL },
	{ "stdio-color", 1, O_COLOR, NULL },
	{ "full-names", 0, O_FULLNAMES, NULL },
	{ "quiet", 0, 'q', NULL },
	{ "force", 0, 'f', NULL },
	{ "verbose", 0, 'v', NULL },
	{ "help", 0, 'h', NULL },
	{ "list-opts", 0, O_LISTOPTS, NULL },
	{ "asm", 0, O_ASM, NULL },        /* annotate: interleave the disassembly */
	{ "symbol", 1, O_SYMBOL, NULL },  /* annotate: perf annotate's -s/--symbol */
	{ "data-type", 2, O_DATATYPE, NULL }, /* annotate: the data types' layouts, as perf annotate's */
	{ "disassembler-style", 1, 'M', NULL },
	{ "field-separator", 1, 't', NULL },
	{ "stats", 0, O_STATS, NULL },
	{ "header", 0, O_HEADER, NULL },
	{ "header-only", 0, O_HEADER_ONLY, NULL },
	{ "wall", 0, O_WALL, NULL },
	/* perf report's options that have no meaning for loops and scopes */
	{ "branch-stack", 0, O_NA, "branch-stack histograms are perf report's (the loops come from the code itself)" },
	{ "branch-history", 0, O_NA, "branch-stack histograms are perf report's (the loops come from the code itself)" },
	{ "mem-mode", 0, O_NA, "memory-access histograms are perf report's / perf mem's" },
	{ "itrace", 1, O_NA, "instruction traces (intel_pt, cs_etm) are not read" },
	{ "dump-raw-trace", 0, O_NA, "use perf report -D or perf script for raw records" },
	{ "raw-trace", 0, O_NA, "use perf script for raw tracepoint fields" },
	{ "hierarchy", 0, O_NA, "the calling-context tree is the hierarchy here (--format=tree)" },
	{ "group", 0, O_NA, "event groups are not shown side by side; --event picks one" },
	{ "cpu", 1, O_NA, "samples are not filtered by CPU" },
	{ "socket-filter", 1, O_NA, "samples are not filtered by socket" },
	{ "threads", 0, O_NA, "per-thread histograms are not made; --tid and --comm filter" },
	{ "objdump", 1, O_NA, "perf loops annotate --asm disassembles with libopcodes, not objdump" },
	{ "exclude-other", 0, O_NA, "there is no parent filter (-p) in perf loops report" },
	{ "parent", 1, O_NA, "there is no parent filter in perf loops report" },
	{ "ignore-callees", 1, O_NA, "callees are never folded into their callers here" },
	{ "inline", 0, O_NA, "inlined calls are always shown ([I] frames)" },
	{ "no-inline", 0, O_NA, "inlined calls are always shown ([I] frames)" },
	{ NULL, 0, 0, NULL },
};

/* The short options of perf report that are not in the table by a letter. */
static const struct { char c; const char *why; } short_na[] = {
	{ 'b', "branch-stack histograms are perf report's (the loops come from the code itself)" },
	{ 'D', "use perf report -D or perf script for raw records" },
	{ 'T', "per-thread histograms are not made; --tid and --comm filter" },
	{ 'C', "samples are not filtered by CPU" },
	{ 'x', "there is no parent filter (-p) in perf loops report" },
	{ 'p', "there is no parent filter in perf loops report" },
	{ 0, NULL },
};

static const char report_usage[] =
	"usage: perf loops report [-i perf.data] [--stdio] [--format=tree|flat|loops|folded|json|pprof|data] [-o FILE]\n"
	"    -s, --sort KEYS         histogram of the sampled places by dso,sym,srcline,loop,comm,pid,\n"
	"                            cpu,srcfile,symoff,dso_size,type,typeoff;  --format=loops --sort=own:\n"
	"                            by Own;  --format=loops -s type (or --format=data): per procedure and\n"
	"                            loop, the samples by variable and by type and field; json: \"data\"\n"
	"    -g, --call-graph[=TYPE] graph|flat|fractal|folded|none[,THRESHOLD][,caller|callee];\n"
	"                            alone: graph,0.5,caller (perf's default)\n"
	"    -G, --inverted          caller-based call graph (the default)\n"
	"        --children, --no-children\n"
	"    -S, --symbols LIST      only these procedures;  --symbol-filter STR: names containing STR\n"
	"    -F, --fields LIST       overhead_children,overhead,sample,period (and --sort keys)\n"
	"    -n, --show-nr-samples   the Samples column;  --show-total-period: the Period column\n"
	"        --percent-limit P   --comm LIST  --pid LIST  --tid LIST  -d, --dso LIST  -e, --event LIST\n"
	"        --time START,STOP   --max-stack N  --no-demangle  --symfs DIR\n"
	"    -k, --vmlinux FILE      --modules DIR: the kernel's and its modules' debug files\n"
	"        --no-pager  --stdio-color=always|never|auto  --full-names\n"
	"    -t, --field-separator SEP  the columns separated by SEP, unpadded\n"
	"        --header, --header-only  the file's header (as perf report prints it), before or instead\n"
	"        --stats             the records of each type and the samples of each event\n"
	"        --wall              on-CPU, off-CPU (by reason) and wall time per calling context and loop\n"
	"                            (a recording of perf loops record --off-cpu)\n"
	"    -M, --disassembler-style att|intel   for annotate --asm (from the browser too)\n"
	"    -f, --force             use binaries whose build-id is not the recorded one\n"
	"    -q, --quiet             no warnings;  -v, --verbose: every analysis warning\n"
	"    -h, --help              this;  man perf-loops for more\n";

static const char annotate_usage[] =
	"usage: perf loops annotate [-i perf.data] [--stdio|--tui] [--asm] [-M intel] [[-s] SYMBOL]\n"
	"       perf loops annotate [-i perf.data] --data-type[=TYPE] [-n|--show-total-period]\n"
	"    -s, --symbol SYMBOL     the procedure: its name as perf report prints it (C++ without\n"
	"                            parameters), the full or short C++ name, or the linkage name;\n"
	"                            a function that is only inlined too; default: the procedure with\n"
	"                            the most samples of its own\n"
	"        --asm               the disassembly, with loop heads, back edges and exits marked and\n"
	"                            the samples of each instruction;  -M intel: Intel syntax\n"
	"        --data-type[=TYPE]  each data type's layout with its fields' costs, as perf annotate\n"
	"                            --data-type prints it: the samples' memory accesses (-s type);\n"
	"                            TYPE: that type only ('struct ' may be left out)\n"
	"    -f, --force, -k, -q, -v  as perf loops report\n"
	"    -e, --event LIST        --comm, --pid, --tid, -d, --time, --symfs...: as perf loops report\n"
	"    -h, --help              this;  man perf-loops for more\n";

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

static void free_list(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

void pl_report_options_free(pl_report_options *o)
{
	free_list(o->comms, o->ncomms);
	free_list(o->dsos, o->ndsos);
	free_list(o->events, o->nevents);
	free_list(o->symbols, o->nsymbols);
	free(o->pids);
	free(o->tids);
	free(o->time_ranges);
}

/* variadic with a format attribute: each caller's format is checked */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("perf-loops: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 2;
}

/* "1,2,3" -> numbers appended to *v */
static int parse_ids(const char *arg, const char *what, uint32_t **v, size_t *n)
{
	char **l = NULL;
	size_t k = 0;
	int rc = 0;
	split_list(arg, &l, &k);
	for (size_t i = 0; i < k && !rc; i++) {
		char *end;
		unsigned long x = strtoul(l[i], &end, 10);
		if (*end || end == l[i] || x > UINT32_MAX) {
			fprintf(stderr, "perf-loops: bad %s '%s' (a number)\n", what, l[i]);
			rc = 2;
			break;
		}
		*v = pl_xrealloc(*v, (*n + 1) * sizeof **v);
		(*v)[(*n)++] = (uint32_t)x;
	}
	free_list(l, k);
	return rc;
}

/* perf report's names of the keys (sym and symbol alike; perf's pid is a
 * thread, Pid:Command, and tid is taken for it) */
static const struct { const char *name; int key; } key_names[] = {
	{ "dso", PL_KEY_DSO }, { "sym", PL_KEY_SYM }, { "symbol", PL_KEY_SYM }, { "srcline", PL_KEY_SRCLINE },
	{ "loop", PL_KEY_LOOP }, { "comm", PL_KEY_COMM }, { "pid", PL_KEY_PID }, { "tid", PL_KEY_PID },
	{ "cpu", PL_KEY_CPU }, { "srcfile", PL_KEY_SRCFILE }, { "symoff", PL_KEY_SYMOFF },
	{ "dso_size", PL_KEY_DSO_SIZE }, { "type", PL_KEY_TYPE }, { "typeoff", PL_KEY_TYPEOFF },
	{ "var", PL_KEY_VAR }, { NULL, 0 },
};

/* perf report's keys that have no meaning here, and why */
static const struct { const char *name; const char *why; } key_na[] = {
	{ "parent", "there is no parent filter (-p) in perf loops report" },
	{ "socket", "samples are not grouped by socket" },
	{ "symbol_size", "a procedure here is a scope tree, not one symbol's size; use -s sym" },
	{ "time", "use --time to select a time range" },
	{ "trace", "tracepoint fields are perf script's" },
	{ "cgroup", "cgroups are not read" },
	{ "cgroup_id", "cgroups are not read" },
	{ NULL, NULL },
};

static int parse_key(const char *s)
{
	for (int k = 0; key_names[k].name; k++)
		if (!strcmp(s, key_names[k].name))
			return key_names[k].key;
	return -1;
}

static int add_key(pl_report_options *o, const char *s)
{
	int k = parse_key(s);
	for (int i = 0; k < 0 && key_na[i].name; i++)
		if (!strcmp(s, key_na[i].name)) {
			fprintf(stderr, "perf-loops: --sort key '%s' of perf report does not apply here: %s\n", s,
				key_na[i].why);
			return 2;
		}
	if (k < 0)
		return usage_error("--sort/--fields key '%s' is not known here (dso, sym, srcline, loop, comm, pid, "
				   "tid, cpu, srcfile, symoff, dso_size, type, typeoff, var; own for --format=loops)", s);
	if (o->sort_mask & (1u << k))
		return 0;
	if ((k == PL_KEY_VAR && o->nsort) || (o->sort_mask & (1u << PL_KEY_VAR)))
		return usage_error("--sort key 'var' goes alone: a sample may be blamed on several variables, "
				   "it is no key of one row (%s)", s);
	o->sort[o->nsort++] = k;
	o->sort_mask |= 1u << k;
	return 0;
}

static int parse_sort(pl_report_options *o, const char *arg)
{
	char **l = NULL;
	size_t n = 0;
	int rc = 0;
	split_list(arg, &l, &n);
	for (size_t i = 0; i < n && !rc; i++) {
		if (!strcmp(l[i], "own") || !strcmp(l[i], "total"))
			o->sort_own = !strcmp(l[i], "own"); /* the loops view's order */
		else if (strcmp(l[i], "overhead") && strcmp(l[i], "overhead_children"))
			rc = add_key(o, l[i]); /* perf's overhead columns: always there */
	}
	free_list(l, n);
	return rc;
}

/* -F: the columns, and sort keys among them */
static int parse_fields(pl_report_options *o, const char *arg)
{
	char **l = NULL;
	size_t n = 0;
	int rc = 0;
	split_list(arg, &l, &n);
	o->fields = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const char *f = l[i];
		if (!strcmp(f, "overhead_children"))
			o->fields |= PL_COL_CHILDREN;
		else if (!strcmp(f, "overhead"))
			o->fields |= PL_COL_SELF;
		else if (!strcmp(f, "sample"))
			o->fields |= PL_COL_SAMPLES;
		else if (!strcmp(f, "period"))
			o->fields |= PL_COL_PERIOD;
		else if (parse_key(f) >= 0)
			rc = add_key(o, f);
		else
			rc = usage_error("-F: field '%s' is not known here (overhead_children, overhead, sample, "
					 "period, dso, sym, srcline, loop)", f);
	}
	free_list(l, n);
	if (!rc && !o->fields && !o->nsort)
		rc = usage_error("-F: no field in '%s'", arg);
	return rc;
}

/* Is ARG all -g words (a value for a bare -g that came apart from it)? */
static int is_call_graph_value(const char *arg)
{
	static const char *const words[] = { "graph", "fractal", "folded", "none", "caller", "callee", "function",
					     "percent", "flat", "address", NULL };
	if (!arg || !*arg || *arg == '-')
		return 0;
	char *copy = pl_xstrdup(arg), *save = NULL;
	int ok = 1;
	for (char *tok = strtok_r(copy, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		(void)strtod(tok, &end);
		int known = end != tok && !*end;
		for (size_t i = 0; words[i] && !known; i++)
			known = !strcmp(tok, words[i]);
		ok = known;
	}
	free(copy);
	return ok;
}

/* -g TYPE[,THRESHOLD[,PRINT_LIMIT]][,ORDER][,function] as perf report takes
 * it; a bare -g is perf's default, graph,0.5,caller */
static int parse_call_graph(pl_report_options *o, const char *arg)
{
	if (!arg)
		arg = "graph,0.5,caller";
	char **l = NULL;
	size_t n = 0;
	int rc = 0, nnum = 0;
	split_list(arg, &l, &n);
	for (size_t i = 0; i < n && !rc; i++) {
		const char *t = l[i];
		char *end;
		double v = strtod(t, &end);
		if (end != t && !*end) {
			if (nnum++ == 0)
				o->cg_threshold = v; /* a second number is perf's print limit: not needed */
		} else if (!strcmp(t, "graph")) {
			o->fractal = 0;
			o->chains = 0;
		} else if (!strcmp(t, "fractal")) {
			o->fractal = 1;
			o->chains = 0;
		} else if (!strcmp(t, "folded")) {
			o->format = PL_FMT_FOLDED;
		} else if (!strcmp(t, "none")) {
			o->format = PL_FMT_FLAT;
		} else if (!strcmp(t, "caller")) {
			o->callee = 0;
		} else if (!strcmp(t, "callee")) {
			o->callee = 1;
		} else if (!strcmp(t, "function") || !strcmp(t, "percent")) {
			/* the tree is keyed by function (and scopes), in percentages */
		} else if (!strcmp(t, "flat")) {
			o->chains = 1;
			o->fractal = 0;
		} else if (!strcmp(t, "address")) {
			rc = usage_error("-g %s: the tree is keyed by scopes (procedures, loops, lines), not addresses", t);
		} else {
			rc = usage_error("-g: '%s' is not known (graph, flat, fractal, folded, none, a threshold, caller, callee)", t);
		}
	}
	free_list(l, n);
	return rc;
}

static const char *const format_names[] = { "tree", "flat", "loops", "folded", "json", "pprof", "data" };

static void add_time_range(pl_report_options *o, struct pl_time_range r)
{
	o->time_ranges = pl_xrealloc(o->time_ranges, (o->ntime_ranges + 1) * sizeof *o->time_ranges);
	o->time_ranges[o->ntime_ranges++] = r;
}

/* A time in seconds ("1234.567890"), or empty: DEFAULT. */
static int parse_seconds(const char *s, const char *end, uint64_t dflt, uint64_t *ns)
{
	if (s == end) {
		*ns = dflt;
		return 0;
	}
	char buf[64], *e;
	if ((size_t)(end - s) >= sizeof buf)
		return -1;
	memcpy(buf, s, end - s);
	buf[end - s] = 0;
	double v = strtod(buf, &e);
	if (e == buf || *e || v < 0 || v > 1.8e10)
		return -1;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

/* A percentage "P%" in [0, 100], as a fraction. */
static int parse_percent(const char *s, const char *end, double *frac)
{
	char buf[32], *e;
	if (end - s < 2 || end[-1] != '%' || (size_t)(end - s) >= sizeof buf)
		return -1;
	memcpy(buf, s, end - s - 1);
	buf[end - s - 1] = 0;
	double v = strtod(buf, &e);
	if (e == buf || *e || v < 0 || v > 100)
		return -1;
	*frac = v / 100.0;
	return 0;
}

/* perf's --time: "START,STOP" in seconds (either may be empty), several
 * separated by spaces; or percentages of the recording, comma-separated:
 * "10%/2" (the second 10% slice) or "0%-10%". */
static int parse_time(pl_report_options *o, const char *arg)
{
	free(o->time_ranges);
	o->time_ranges = NULL;
	o->ntime_ranges = 0;
	o->time_percent = strchr(arg, '%') != NULL;
	const char *p = arg;
	while (*p) {
		const char *sep = o->time_percent ? ",": " ";
		size_t len = strcspn(p, sep);
		const char *end = p + len;
		struct pl_time_range r = { 0, UINT64_MAX, 0, 1 };
		if (len == 0) {
			p++;
			continue;
		}
		if (o->time_percent) {
			const char *slash = memchr(p, '/', len), *dash = memchr(p, '-', len);
			double width;
			char *e;
			if (slash) {
				long k = strtol(slash + 1, &e, 10);
				if (parse_percent(p, slash, &width) || e != end || k < 1 || width <= 0 || width * k > 1.0 + 1e-9)
					return usage_error("--time '%s': a slice is P%%/N (the Nth P%% of the recording)", arg);
				r.pstart = width * (k - 1);
				r.pstop = width * k;
			} else if (dash) {
				if (parse_percent(p, dash, &r.pstart) || parse_percent(dash + 1, end, &r.pstop) ||
				    r.pstart > r.pstop)
					return usage_error("--time '%s': a range is A%%-B%% (A <= B)", arg);
			} else {
				return usage_error("--time '%s': percentages are P%%/N or A%%-B%%, comma-separated", arg);
			}
		} else {
			const char *comma = memchr(p, ',', len);
			if (!comma || memchr(comma + 1, ',', end - comma - 1) ||
			    parse_seconds(p, comma, 0, &r.start) || parse_seconds(comma + 1, end, UINT64_MAX, &r.stop) ||
			    r.start > r.stop)
				return usage_error("--time '%s': START,STOP in seconds (either may be empty), "
						   "several separated by spaces", arg);
		}
		add_time_range(o, r);
		p = *end ? end + 1 : end;
	}
	if (!o->ntime_ranges)
		return usage_error("--time '%s': no range", arg);
	return 0;
}

static int parse_format(pl_report_options *o, const char *arg)
{
	for (int i = 0; i < (int)(sizeof format_names / sizeof *format_names); i++)
		if (!strcmp(arg, format_names[i])) {
			o->format = (pl_format)i;
			return 0;
		}
	return usage_error("unknown format '%s' (tree, flat, loops, folded, json, pprof, data)", arg);
}

/* OPTION and HINT make the message: "bad OPTION 'ARG'HINT" */
static int parse_number(const char *arg, const char *option, const char *hint, double *out)
{
	char *end;
	*out = strtod(arg, &end);
	if (end == arg || (*end && strcmp(end, "%")) || *out < 0)
		return usage_error("bad %s '%s'%s", option, arg, hint);
	return 0;
}

/* One option: 0, or an exit status (2: usage error). */
static int apply_option(pl_report_options *o, int c, const char *arg)
{
	double v;
	switch (c) {
	case 'i': o->input = arg; return 0;
	case 'o': o->output = arg; return 0;
	case O_FORMAT: return parse_format(o, arg);
	case 's': return parse_sort(o, arg);
	case 'g': return parse_call_graph(o, arg);
	case 'G': o->callee = 0; return 0; /* perf's alias for -g caller */
	case O_CHILDREN: o->children = 1; return 0;
	case O_NOCHILDREN: o->children = 0; return 0;
	case 'S': split_list(arg, &o->symbols, &o->nsymbols); return 0;
	case O_SYMFILTER: o->symbol_filter = arg; return 0;
	case 'F': return parse_fields(o, arg);
	case 'n': o->show_samples = 1; return 0;
	case O_PERIOD: o->show_period = 1; return 0;
	case O_PLIMIT:
		if (parse_number(arg, "--percent-limit", "", &v))
			return 2;
		o->percent_limit = v;
		return 0;
	case 'c': split_list(arg, &o->comms, &o->ncomms); return 0;
	case O_PID: return parse_ids(arg, "--pid", &o->pids, &o->npids);
	case O_TID: return parse_ids(arg, "--tid", &o->tids, &o->ntids);
	case 'd': split_list(arg, &o->dsos, &o->ndsos); return 0;
	case 'e': split_list(arg, &o->events, &o->nevents); return 0;
	case O_TIME: return parse_time(o, arg);
	case O_MAXSTACK:
		if (parse_number(arg, "--max-stack", " (a number of frames, 1 or more)", &v))
			return 2;
		if (v < 1 || v > 1e6 || v != (int)v)
			return usage_error("bad --max-stack '%s' (a number of frames, 1 or more)", arg);
		o->max_stack = (int)v;
		return 0;
	case O_NODEMANGLE: o->no_demangle = 1; return 0;
	case O_SYMFS: o->symfs = arg; return 0;
	case 'k': o->vmlinux = arg; return 0;
	case O_MODULES: o->modules = arg; return 0;
	/* --stdio wins over --tui wherever they are, as in perf report */
	case O_STDIO: o->ui = PL_UI_STDIO; return 0;
	case O_TUI:
		if (o->ui != PL_UI_STDIO)
			o->ui = PL_UI_TUI;
		return 0;
	case O_GTK:
		if (!o->quiet)
			fprintf(stderr, "perf-loops: --gtk: there is no GTK browser; printing the --stdio report\n");
		o->ui = PL_UI_STDIO;
		return 0;
	case O_SYMBOL:
		if (!o->annotate)
			return usage_error("%s: perf loops annotate's option; perf loops report takes -S/--symbols", "--symbol");
		o->annotate_symbol = arg;
		return 0;
	case 'M':
		if (!strcmp(arg, "intel") || !strcmp(arg, "att")) {
			o->intel_syntax = !strcmp(arg, "intel");
			return 0;
		}
		return usage_error("-M/--disassembler-style '%s': intel or att (libopcodes' x86 syntaxes)", arg);
	case 't':
		if (!*arg || strchr(arg, '.'))
			return usage_error("-t/--field-separator '%s': a separator other than '.' (the decimal point)", arg);
		o->field_sep = arg;
		return 0;
	case O_STATS: o->stats = 1; return 0;
	case O_HEADER: o->header = o->header ? o->header : 1; return 0;
	case O_HEADER_ONLY: o->header = 2; return 0;
	case O_WALL: o->wall = 1; return 0;
	case O_ASM:
		if (!o->annotate)
			return usage_error("%s: only perf loops annotate takes it", "--asm");
		o->asm_view = 1;
		return 0;
	case O_DATATYPE:
		if (!o->annotate)
			return usage_error("%s: only perf loops annotate takes it (perf loops report -s type,typeoff)", "--data-type");
		o->data_type = 1;
		o->data_type_name = arg && *arg ? arg : NULL;
		return 0;
	case O_NOPAGER: o->no_pager = 1; return 0;
	case O_COLOR:
		if (!strcmp(arg, "always"))
			o->color = 1;
		else if (!strcmp(arg, "never"))
			o->color = 0;
		else if (!strcmp(arg, "auto"))
			o->color = -1;
		else
			return usage_error("--stdio-color '%s': always, never or auto", arg);
		return 0;
	case O_FULLNAMES: o->full_names = 1; return 0;
	case 'q': o->quiet = 1; return 0;
	case 'f': o->force = 1; return 0;
	case 'v': o->verbose = 1; return 0;
	}
	return 2;
}

static const char *short_why(int c)
{
	for (size_t i = 0; short_na[i].c; i++)
		if (short_na[i].c == c)
			return short_na[i].why;
	return NULL;
}

/* getopt's table and short-option string, made from optdefs */
static void make_getopt_tables(struct option *lo, char *shortopts)
{
	size_t k = 0, s = 0;
	for (const struct optdef *d = optdefs; d->name; d++, k++) {
		int has = d->has_arg == 2 ? optional_argument : d->has_arg ? required_argument : no_argument;
		lo[k] = (struct option){ d->name, has, NULL, d->code };
		if (d->code < 256 && !strchr(shortopts, d->code)) {
			shortopts[s++] = (char)d->code;
			for (int i = 0; i < d->has_arg; i++)
				shortopts[s++] = ':';
			shortopts[s] = 0;
		}
	}
	lo[k] = (struct option){ NULL, 0, NULL, 0 };
	for (size_t i = 0; short_na[i].c; i++) {
		shortopts[s++] = short_na[i].c;
		shortopts[s] = 0;
	}
}

/* ANNOTATE: `perf loops annotate`, which takes --asm and a SYMBOL argument. */
static int parse_options(int argc, char **argv, pl_report_options *o, int annotate)
{
	struct option lo[sizeof optdefs / sizeof *optdefs];
	char shortopts[128] = ":";
	make_getopt_tables(lo, shortopts);
	/* -g graph,0.5,caller: perf report's default, so that the tree hides
	 * the same sub-0.5% lines perf report's call graph hides */
	*o = (pl_report_options){ .format = PL_FMT_TREE, .children = 1, .color = -1, .annotate = annotate,
				  .cg_threshold = 0.5 };
	int c, idx, rc = 0;
	const char *cmd = annotate ? "perf loops annotate" : "perf loops report";
	optind = 1;
	opterr = 0;
	while (!rc && (c = getopt_long(argc, argv, shortopts, lo, &idx)) != -1) {
		const char *opt = argv[optind - 1];
		if (c == 'h') {
			fputs(annotate ? annotate_usage : report_usage, stdout);
			rc = -2;
		} else if (c == O_LISTOPTS) {
			for (const struct optdef *d = optdefs; d->name; d++)
				if (d->code != O_LISTOPTS && (annotate || (d->code != O_ASM && d->code != O_SYMBOL && d->code != O_DATATYPE)))
					printf("--%s ", d->name);
			putchar('\n');
			rc = -2;
		} else if (c == O_NA) {
			fprintf(stderr, "perf-loops: --%s of perf %s does not apply here: %s\n", lo[idx].name,
				annotate ? "annotate" : "report", optdefs[idx].why);
			rc = 2;
		} else if (c == '?' || c == ':') {
			const char *why = c == '?' ? short_why(optopt) : NULL;
			if (why)
				fprintf(stderr, "perf-loops: -%c of perf %s does not apply here: %s\n", optopt,
					annotate ? "annotate" : "report", why);
			else if (c == ':')
				fprintf(stderr, "perf-loops: option '%s' needs a value (%s -h)\n", opt, cmd);
			else
				fprintf(stderr, "perf-loops: unknown option '%s' (%s -h)\n", opt, cmd);
			rc = 2;
		} else if (short_why(c)) {
			fprintf(stderr, "perf-loops: -%c of perf %s does not apply here: %s\n", c,
				annotate ? "annotate" : "report", short_why(c));
			rc = 2;
		} else if (annotate && c == 's') {
			rc = apply_option(o, O_SYMBOL, optarg); /* perf annotate's -s is --symbol */
		} else if (c == 'g' && !optarg && optind < argc && is_call_graph_value(argv[optind])) {
			rc = apply_option(o, c, argv[optind++]); /* -g graph: the value came apart */
		} else {
			rc = apply_option(o, c, optarg);
		}
	}
	if (!rc && annotate && optind < argc && !o->annotate_symbol)
		o->annotate_symbol = argv[optind++];
	if (!rc && optind < argc)
		rc = usage_error(annotate ? "unexpected argument '%s' (perf loops annotate -h)"
					  : "unexpected argument '%s' (perf loops report -h)", argv[optind]);
	if (!rc && o->sort_own && o->format == PL_FMT_TREE)
		o->format = PL_FMT_LOOPS; /* --sort=own: the loops view's order */
	if (!rc && !o->fields)
		o->fields = (o->children ? PL_COL_CHILDREN : 0) | PL_COL_SELF | PL_COL_SAMPLES;
	if (!rc && o->show_samples)
		o->fields |= PL_COL_SAMPLES;
	if (!rc && o->show_period)
		o->fields |= PL_COL_PERIOD;
	if (!rc && !o->children)
		o->fields &= ~PL_COL_CHILDREN;
	/* the flat, loops, folded and pprof views fold or write the contexts
	 * top-down; the tree and its json are what -g callee turns over */
	if (!rc && o->callee && !annotate && !o->nsort && o->format != PL_FMT_TREE && o->format != PL_FMT_JSON)
		rc = usage_error("-g callee: the callee-ordered tree is shown by --format=tree and json, not by %s",
				 format_names[o->format]);
	return rc == -2 ? 0 : rc ? rc : -1;
}

int pl_report_options_parse(int argc, char **argv, pl_report_options *o)
{
	return parse_options(argc, argv, o, 0);
}

int pl_annotate_options_parse(int argc, char **argv, pl_report_options *o)
{
	return parse_options(argc, argv, o, 1);
}
