/* view-header.c - --header, --header-only and --stats: what perf report
 * prints about the file itself, in perf report's words and layout (perf
 * 6.1's tools/perf/util/header.c and session.c), so that a perf user finds
 * the lines where they are used to them and scripts that read them work.
 *
 * --header-only: the header's fields and every feature section perf prints
 * without -I (the topologies and caches as "info available"); the event
 * lines print every nonzero field of perf_event_attr as perf does.
 * --stats: the records of each type and the samples of each event.
 * Nothing here needs the report's tree.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* perf's feature numbers (HEADER_*), and their names for "missing features" */
enum {
	F_HOSTNAME = 3, F_OSRELEASE, F_VERSION, F_ARCH, F_NRCPUS, F_CPUDESC, F_CPUID, F_TOTAL_MEM, F_CMDLINE,
	F_EVENT_DESC, F_CPU_TOPOLOGY, F_NUMA_TOPOLOGY, F_BRANCH_STACK, F_PMU_MAPPINGS, F_GROUP_DESC, F_AUXTRACE,
	F_STAT, F_CACHE, F_SAMPLE_TIME, F_MEM_TOPOLOGY, F_CLOCKID, F_DIR_FORMAT, F_BPF_PROG_INFO, F_BPF_BTF,
	F_COMPRESSED, F_CPU_PMU_CAPS, F_CLOCK_DATA, F_HYBRID_TOPOLOGY, F_PMU_CAPS, F_LAST
};
static const char *const feat_names[F_LAST] = {
	NULL, "TRACING_DATA", "BUILD_ID", "HOSTNAME", "OSRELEASE", "VERSION", "ARCH", "NRCPUS", "CPUDESC", "CPUID",
	"TOTAL_MEM", "CMDLINE", "EVENT_DESC", "CPU_TOPOLOGY", "NUMA_TOPOLOGY", "BRANCH_STACK", "PMU_MAPPINGS",
	"GROUP_DESC", "AUXTRACE", "STAT", "CACHE", "SAMPLE_TIME", "MEM_TOPOLOGY", "CLOCKID", "DIR_FORMAT",
	"BPF_PROG_INFO", "BPF_BTF", "COMPRESSED", "CPU_PMU_CAPS", "CLOCK_DATA", "HYBRID_TOPOLOGY", "PMU_CAPS",
};

/* A feature section read as perf writes it: u32 lengths, strings padded. */
struct cursor {
	const uint8_t *p, *end;
	int bad;
};

static uint32_t get32(struct cursor *c)
{
	uint32_t v = 0;
	if (c->end - c->p < 4) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, 4);
	c->p += 4;
	return v;
}

static uint64_t get64(struct cursor *c)
{
	uint64_t v = 0;
	if (c->end - c->p < 8) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

/* perf's do_read_string: u32 length (padded), then the bytes; "" if bad */
static const char *get_string(struct cursor *c, char *buf, size_t len)
{
	uint32_t n = get32(c);
	buf[0] = 0;
	if (c->bad || n > (size_t)(c->end - c->p)) {
		c->bad = 1;
		return buf;
	}
	size_t k = strnlen((const char *)c->p, n);
	snprintf(buf, len, "%.*s", (int)(k < len ? k : len - 1), (const char *)c->p);
	c->p += n;
	return buf;
}

static int section(const pd_reader *r, int feat, struct cursor *c)
{
	const uint8_t *p;
	size_t n;
	if (pd_feature(r, feat, &p, &n))
		return -1;
	*c = (struct cursor){ p, p + n, 0 };
	return 0;
}

/* One string feature: "# LABEL : VALUE". */
static void print_string(const pd_reader *r, int feat, const char *label, FILE *f)
{
	struct cursor c;
	char buf[4096];
	if (!section(r, feat, &c))
		fprintf(f, "# %s : %s\n", label, get_string(&c, buf, sizeof buf));
}

/* ---- the event lines: perf_event_attr__fprintf ---------------------------- */

/* perf_event_attr as the section holds it, zero past its size */
struct attr {
	uint8_t raw[136];
};

static uint64_t attr64(const struct attr *a, size_t off)
{
	uint64_t v = 0;
	memcpy(&v, a->raw + off, 8);
	return v;
}

static uint32_t attr32(const struct attr *a, size_t off)
{
	uint32_t v = 0;
	memcpy(&v, a->raw + off, 4);
	return v;
}

/* BITS as perf names them, '|'-separated (unknown bits as a number) */
static void bit_names(char *buf, size_t len, uint64_t bits, const char *const *names, size_t n)
{
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < 64 && bits; i++) {
		if (!(bits & (1ull << i)))
			continue;
		bits &= ~(1ull << i);
		if (i < n && names[i])
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? "|" : "", names[i]);
		else
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%#llx", used ? "|" : "",
						 1ull << i);
	}
}

static const char *const sample_bits[] = {
	"IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD", "STREAM_ID", "RAW",
	"BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT", "DATA_SRC", "IDENTIFIER", "TRANSACTION",
	"REGS_INTR", "PHYS_ADDR", "AUX", "CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT",
};
static const char *const read_bits[] = { "TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID", "GROUP", "LOST" };
static const char *const branch_bits[] = {
	"USER", "KERNEL", "HV", "ANY", "ANY_CALL", "ANY_RETURN", "IND_CALL", "ABORT_TX", "IN_TX", "NO_TX",
	"COND", "CALL_STACK", "IND_JUMP", "CALL", "NO_FLAGS", "NO_CYCLES", "TYPE_SAVE", "HW_INDEX", "PRIV_SAVE",
};
/* the bit-fields of the flags word, in perf's order (bit number, name);
 * precise_ip is two bits at 15 */
static const struct { int bit; const char *name; } flag_bits[] = {
	{ 0, "disabled" }, { 1, "inherit" }, { 2, "pinned" }, { 3, "exclusive" }, { 4, "exclude_user" },
	{ 5, "exclude_kernel" }, { 6, "exclude_hv" }, { 7, "exclude_idle" }, { 8, "mmap" }, { 9, "comm" },
	{ 10, "freq" }, { 11, "inherit_stat" }, { 12, "enable_on_exec" }, { 13, "task" }, { 14, "watermark" },
	{ 15, "precise_ip" }, { 17, "mmap_data" }, { 18, "sample_id_all" }, { 19, "exclude_host" },
	{ 20, "exclude_guest" }, { 21, "exclude_callchain_kernel" }, { 22, "exclude_callchain_user" },
	{ 23, "mmap2" }, { 24, "comm_exec" }, { 25, "use_clockid" }, { 26, "context_switch" },
	{ 27, "write_backward" }, { 28, "namespaces" }, { 29, "ksymbol" }, { 30, "bpf_event" },
	{ 31, "aux_output" }, { 32, "cgroup" }, { 33, "text_poke" }, { 34, "build_id" }, { 35, "inherit_thread" },
	{ 36, "remove_on_exec" }, { 37, "sigtrap" },
};

static void field(FILE *f, const char *name, const char *value)
{
	fprintf(f, ", %s = %s", name, value);
}

/* The fields after the flags word, as perf_event_attr__fprintf prints them. */
static void print_attr_tail(FILE *f, const struct attr *a)
{
	char v[1024];
	static const struct { const char *name; size_t off; int width; char fmt; } tail[] = {
		{ "{ wakeup_events, wakeup_watermark }", 48, 4, 'u' }, { "bp_type", 52, 4, 'u' },
		{ "{ bp_addr, config1 }", 56, 8, 'x' }, { "{ bp_len, config2 }", 64, 8, 'x' },
		{ "branch_sample_type", 72, 8, 'b' }, { "sample_regs_user", 80, 8, 'x' },
		{ "sample_stack_user", 88, 4, 'u' }, { "clockid", 92, 4, 'd' }, { "sample_regs_intr", 96, 8, 'x' },
		{ "aux_watermark", 104, 4, 'u' }, { "sample_max_stack", 108, 2, 'u' },
		{ "aux_sample_size", 112, 4, 'u' }, { "sig_data", 120, 8, 'u' },
	};
	for (size_t i = 0; i < sizeof tail / sizeof *tail; i++) {
		uint64_t x = tail[i].width == 8 ? attr64(a, tail[i].off) : attr32(a, tail[i].off);
		if (tail[i].width == 2)
			x &= 0xffff;
		if (!x)
			continue;
		if (tail[i].fmt == 'b')
			bit_names(v, sizeof v, x, branch_bits, sizeof branch_bits / sizeof *branch_bits);
		else
			snprintf(v, sizeof v, tail[i].fmt == 'x' ? "%#llx" : tail[i].fmt == 'd' ? "%lld" : "%llu",
				 tail[i].fmt == 'd' ? (unsigned long long)(long long)(int32_t)x : (unsigned long long)x);
		field(f, tail[i].name, v);
	}
}

static void print_attr(FILE *f, const struct attr *a)
{
	char v[1024];
	snprintf(v, sizeof v, "%u", attr32(a, 0));
	field(f, "type", v);
	struct { const char *name; size_t off; int hex; } nums[] = {
		{ "size", 4, 0 }, { "config", 8, 1 }, { "{ sample_period, sample_freq }", 16, 0 },
	};
	for (size_t i = 0; i < 3; i++) {
		uint64_t x = i == 0 ? attr32(a, 4) : attr64(a, nums[i].off);
		if (x) {
			snprintf(v, sizeof v, nums[i].hex ? "%#llx" : "%llu", (unsigned long long)x);
			field(f, nums[i].name, v);
		}
	}
	if (attr64(a, 24)) {
		bit_names(v, sizeof v, attr64(a, 24), sample_bits, sizeof sample_bits / sizeof *sample_bits);
		field(f, "sample_type", v);
	}
	if (attr64(a, 32)) {
		bit_names(v, sizeof v, attr64(a, 32), read_bits, sizeof read_bits / sizeof *read_bits);
		field(f, "read_format", v);
	}
	uint64_t flags = attr64(a, 40);
	for (size_t i = 0; i < sizeof flag_bits / sizeof *flag_bits; i++) {
		uint64_t x = (flags >> flag_bits[i].bit) & (flag_bits[i].bit == 15 ? 3 : 1);
		if (x) {
			snprintf(v, sizeof v, "%llu", (unsigned long long)x);
			field(f, flag_bits[i].name, v);
		}
	}
	print_attr_tail(f, a);
}

/* Pipe mode: the events as their ATTR records described them. */
static void print_events_of_stream(const pd_reader *r, FILE *f)
{
	for (size_t i = 0; i < pd_nattrs(r); i++) {
		const pd_attr *pa = pd_attr_at(r, i);
		struct attr a;
		memset(&a, 0, sizeof a);
		memcpy(a.raw, pa->raw, pa->raw_size < sizeof a.raw ? pa->raw_size : sizeof a.raw);
		fprintf(f, "# event : name = %s, ", pa->name);
		if (pa->nids) {
			fprintf(f, ", id = {");
			for (size_t k = 0; k < pa->nids; k++)
				fprintf(f, "%s %llu", k ? "," : "", (unsigned long long)pa->ids[k]);
			fprintf(f, " }");
		}
		print_attr(f, &a);
		fputc('\n', f);
	}
}

/* "# event : name = N, , id = { ... }, type = ..." per event of the
 * EVENT_DESC section (its own copy of each attr, as perf prints it). */
static void print_event_desc(const pd_reader *r, FILE *f)
{
	struct cursor c;
	if (section(r, F_EVENT_DESC, &c)) {
		print_events_of_stream(r, f);
		return;
	}
	uint32_t nre = get32(&c), sz = get32(&c);
	for (uint32_t i = 0; i < nre && !c.bad; i++) {
		struct attr a;
		memset(&a, 0, sizeof a);
		if (sz > (size_t)(c.end - c.p))
			break;
		memcpy(a.raw, c.p, sz < sizeof a.raw ? sz : sizeof a.raw);
		c.p += sz;
		uint32_t nids = get32(&c);
		char name[1024];
		get_string(&c, name, sizeof name);
		if (c.bad || (uint64_t)nids * 8 > (size_t)(c.end - c.p))
			break;
		fprintf(f, "# event : name = %s, ", name);
		if (nids) {
			fprintf(f, ", id = {");
			for (uint32_t k = 0; k < nids; k++)
				fprintf(f, "%s %llu", k ? "," : "", (unsigned long long)get64(&c));
			fprintf(f, " }");
		}
		print_attr(f, &a);
		fputc('\n', f);
	}
}

static void print_cmdline(const pd_reader *r, FILE *f)
{
	struct cursor c;
	if (section(r, F_CMDLINE, &c))
		return;
	char buf[4096];
	uint32_t n = get32(&c);
	fprintf(f, "# cmdline : ");
	for (uint32_t i = 0; i < n && !c.bad; i++)
		fprintf(f, "%s ", get_string(&c, buf, sizeof buf));
	fputc('\n', f);
}

static void print_pmu_mappings(const pd_reader *r, FILE *f)
{
	struct cursor c;
	if (section(r, F_PMU_MAPPINGS, &c))
		return;
	char buf[1024];
	uint32_t n = get32(&c);
	fprintf(f, "# pmu mappings: ");
	for (uint32_t i = 0; i < n && !c.bad; i++) {
		uint32_t type = get32(&c);
		fprintf(f, "%s%s = %u", i ? ", " : "", get_string(&c, buf, sizeof buf), type);
	}
	fputc('\n', f);
}

/* GROUP_DESC: "# group: NAME{leader,member,...}" for groups of several */
static void print_group_desc(const pd_reader *r, FILE *f)
{
	struct cursor c;
	if (section(r, F_GROUP_DESC, &c))
		return;
	char name[1024];
	uint32_t n = get32(&c);
	for (uint32_t i = 0; i < n && !c.bad; i++) {
		get_string(&c, name, sizeof name);
		uint32_t leader = get32(&c), members = get32(&c);
		/* the section's word against the file's events: a group of more
		 * events than there are is not printed a billion times */
		if (c.bad || members < 2 || leader >= pd_nattrs(r) || members > pd_nattrs(r) - leader)
			continue;
		fprintf(f, "# group: %s{", strcmp(name, "{anon_group}") ? name : "");
		for (uint32_t k = 0; k < members; k++) {
			const pd_attr *a = pd_attr_at(r, leader + k);
			fprintf(f, "%s%s", k ? "," : "", a ? a->name : "?");
		}
		fprintf(f, "}\n");
	}
}

static void print_sample_time(const pd_reader *r, FILE *f)
{
	struct cursor c;
	if (section(r, F_SAMPLE_TIME, &c))
		return;
	uint64_t first = get64(&c), last = get64(&c);
	if (c.bad)
		return;
	fprintf(f, "# time of first sample : %llu.%06llu\n", (unsigned long long)(first / 1000000000),
		(unsigned long long)(first % 1000000000 / 1000));
	fprintf(f, "# time of last sample : %llu.%06llu\n", (unsigned long long)(last / 1000000000),
		(unsigned long long)(last % 1000000000 / 1000));
	fprintf(f, "# sample duration : %10.3f ms\n", (double)(last - first) / 1e6);
}

/* CPU_PMU_CAPS, and 6.1's HYBRID_CPU_PMU_CAPS (nothing on a machine of one
 * kind of core) */
static void print_pmu_caps(const pd_reader *r, int feat, FILE *f)
{
	struct cursor c;
	if (section(r, feat, &c))
		return;
	char k[512], v[512];
	uint32_t npmu = feat == F_CPU_PMU_CAPS ? 1 : get32(&c);
	for (uint32_t p = 0; p < npmu && !c.bad; p++) {
		uint32_t n = get32(&c);
		char line[4096];
		size_t used = 0;
		for (uint32_t i = 0; i < n && !c.bad && used < sizeof line; i++) {
			get_string(&c, k, sizeof k);
			get_string(&c, v, sizeof v);
			used += (size_t)snprintf(line + used, sizeof line - used, "%s%s=%s", i ? ", " : "", k, v);
		}
		char pmu[256] = "cpu";
		if (feat != F_CPU_PMU_CAPS)
			get_string(&c, pmu, sizeof pmu);
		if (c.bad)
			break;
		if (n)
			fprintf(f, "# %s pmu capabilities: %s\n", pmu, line);
		else
			fprintf(f, "# %s pmu capabilities: not available\n", pmu);
	}
}

static void print_small_feature(const pd_reader *r, int feat, FILE *f)
{
	struct cursor c;
	if (section(r, feat, &c))
		return;
	switch (feat) {
	case F_NRCPUS: {
		uint32_t avail = get32(&c), online = get32(&c);
		fprintf(f, "# nrcpus online : %u\n# nrcpus avail : %u\n", online, avail);
		break;
	}
	case F_TOTAL_MEM:
		fprintf(f, "# total memory : %llu kB\n", (unsigned long long)get64(&c));
		break;
	case F_CLOCKID:
		fprintf(f, "# clockid frequency: %llu MHz\n", (unsigned long long)get64(&c) * 1000);
		break;
	case F_DIR_FORMAT:
		fprintf(f, "# directory data version : %llu\n", (unsigned long long)get64(&c));
		break;
	case F_COMPRESSED: {
		get32(&c);
		uint32_t type = get32(&c), level = get32(&c), ratio = get32(&c);
		fprintf(f, "# compressed : %s, level = %u, ratio = %u\n", type == 1 ? "Zstd" : "Unknown", level, ratio);
		break;
	}
	case F_BRANCH_STACK: fprintf(f, "# contains samples with branch stack\n"); break;
	case F_AUXTRACE: fprintf(f, "# contains AUX area data (e.g. instruction trace)\n"); break;
	case F_STAT: fprintf(f, "# contains stat data\n"); break;
	case F_CPU_TOPOLOGY: case F_NUMA_TOPOLOGY: case F_CACHE: case F_MEM_TOPOLOGY: case F_HYBRID_TOPOLOGY:
		fprintf(f, "# %s info available, use -I to display\n", feat_names[feat]);
		break;
	}
}

/* CLOCK_DATA (perf record -k): the reference time, local and raw */
static void print_clock_data(const pd_reader *r, FILE *f)
{
	struct cursor c;
	if (section(r, F_CLOCK_DATA, &c))
		return;
	get32(&c);
	uint32_t clockid = get32(&c);
	uint64_t tod = get64(&c), ref = get64(&c);
	if (c.bad)
		return;
	static const char *const names[] = { "realtime", "monotonic", NULL, NULL, "monotonic_raw", NULL, NULL,
					     "boottime", NULL, NULL, NULL, "tai" };
	const char *name = clockid < sizeof names / sizeof *names && names[clockid] ? names[clockid]
										: "user configured clock";
	time_t sec = (time_t)(tod / 1000000000);
	int usec = (int)(tod % 1000000000 / 1000);
	struct tm tm;
	char date[64] = "<error>";
	if (localtime_r(&sec, &tm))
		strftime(date, sizeof date, "%F %T", &tm);
	fprintf(f, "# clockid: %s (%u)\n", name, clockid);
	fprintf(f, "# reference time: %s.%06d = %ld.%06d (TOD) = %ld.%09ld (%s)\n", date, usec, (long)sec, usec,
		(long)(ref / 1000000000), (long)(ref % 1000000000), name);
}

/* One feature as perf prints it without -I (some print nothing). */
static void print_feature(const pd_reader *r, int feat, FILE *f)
{
	static const struct { int feat; const char *label; } strings[] = {
		{ F_HOSTNAME, "hostname" }, { F_OSRELEASE, "os release" }, { F_VERSION, "perf version" },
		{ F_ARCH, "arch" }, { F_CPUDESC, "cpudesc" }, { F_CPUID, "cpuid" },
	};
	for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
		if (strings[i].feat == feat) {
			print_string(r, feat, strings[i].label, f);
			return;
		}
	switch (feat) {
	case F_CMDLINE: print_cmdline(r, f); break;
	case F_EVENT_DESC: print_event_desc(r, f); break;
	case F_PMU_MAPPINGS: print_pmu_mappings(r, f); break;
	case F_GROUP_DESC: print_group_desc(r, f); break;
	case F_SAMPLE_TIME: print_sample_time(r, f); break;
	case F_CPU_PMU_CAPS: case F_PMU_CAPS: print_pmu_caps(r, feat, f); break;
	case F_CLOCK_DATA: print_clock_data(r, f); break;
	default: print_small_feature(r, feat, f); break;
	}
}

/* When the file was written, as perf says it (its data file's mtime). */
static void print_captured(const pd_reader *r, FILE *f)
{
	struct stat st;
	char path[4096];
	const char *name = pd_name(r);
	if (stat(name, &st) == 0 && S_ISDIR(st.st_mode)) { /* perf record --threads */
		snprintf(path, sizeof path, "%s/data", name);
		name = path;
	}
	if (pd_is_pipe(r) && !strcmp(name, "<stdin>") ? fstat(0, &st) != 0 : stat(name, &st) != 0)
		return;
	time_t t = st.st_mtime;
	char buf[64];
	fprintf(f, "# captured on    : %s", ctime_r(&t, buf) ? buf : "?\n");
}

void pl_print_file_header(pd_reader *r, FILE *f)
{
	uint64_t data_off, data_size, feat_off;
	fprintf(f, "# ========\n");
	print_captured(r, f);
	int file = pd_file_layout(r, &data_off, &data_size, &feat_off) == 0;
	if (!file) /* perf says so of a pipe */
		data_off = data_size = feat_off = 0;
	fprintf(f, "# header version : 1\n# data offset    : %llu\n# data size      : %llu\n"
			   "# feat offset    : %llu\n", (unsigned long long)data_off, (unsigned long long)data_size,
			(unsigned long long)feat_off);
	if (!file) { /* the features come as records in the stream: perf prints them as they come */
		fprintf(f, "# ========\n#\n");
		pd_event ev;
		while (pd_next(r, &ev))
			;
	}
	for (int feat = 1; feat < F_LAST; feat++)
		print_feature(r, feat, f);
	if (file) {
		const uint8_t *p;
		size_t n;
		fprintf(f, "# missing features: ");
		for (int feat = 1; feat < F_LAST; feat++)
			if (pd_feature(r, feat, &p, &n))
				fprintf(f, "%s ", feat_names[feat]);
		fputc('\n', f);
		fprintf(f, "# ========\n#\n");
	}
}

/* ---- --stats ------------------------------------------------------------------ */

static void count_sample(void *ctx, pl_session *s, const pd_event *ev, pl_thread *t)
{
	(void)s;
	(void)t;
	uint64_t *per_event = ctx;
	if ((size_t)ev->sample.attr_index < PL_STATS_MAX_EVENTS)
		per_event[ev->sample.attr_index]++;
}

int pl_print_stats(pd_reader *r, FILE *f)
{
	uint64_t *per_event = pl_xcalloc(PL_STATS_MAX_EVENTS, sizeof *per_event);
	pl_session *s = pl_session_new(r);
	pl_session_run(s, count_sample, per_event);
	uint64_t total = 0;
	for (uint32_t t = 0; t < PD_NRECORD_TYPES; t++)
		total += pd_record_count(r, t);
	fprintf(f, "\nAggregated stats:\n%16s events: %10llu\n", "TOTAL", (unsigned long long)total);
	for (uint32_t t = 1; t < PD_NRECORD_TYPES; t++) {
		uint64_t n = pd_record_count(r, t);
		if (n && pd_record_name(t))
			fprintf(f, "%16s events: %10llu  (%4.1f%%)\n", pd_record_name(t), (unsigned long long)n,
				100.0 * (double)n / (double)total);
	}
	for (size_t e = 0; e < pd_nattrs(r) && e < PL_STATS_MAX_EVENTS; e++)
		if (per_event[e])
			fprintf(f, "%s stats:\n%16s events: %10llu\n", pd_attr_at(r, e)->name, "SAMPLE",
				(unsigned long long)per_event[e]);
	pl_session_free(s);
	free(per_event);
	return 0;
}
