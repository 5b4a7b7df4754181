/* perf_data.c - the perf.data reader (see perf_data.h).
 *
 * Layout (tools/perf/Documentation/perf.data-file-format.txt):
 *   file mode: perf_file_header (104 bytes: magic, size, attr_size, attrs,
 *              data and event_types sections, 256 feature bits), the attrs
 *              (perf_event_attr + ids section each), the data section (the
 *              records), then one perf_file_section per feature bit set.
 *   pipe mode: a 16-byte header (magic, size=16), then records only: the
 *              attrs come as HEADER_ATTR records, features as HEADER_FEATURE.
 * Every read goes through a bounds check: input is untrusted (the fuzz
 * target feeds it garbage), and a short or corrupt file must give what is
 * readable plus a count of what was lost.
 */
#include "perf_data.h"
#include "loopscope.h" /* ls_open_regular */

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define PERF_MAGIC2 0x32454c4946524550ULL    /* "PERFILE2" little-endian */
#define PERF_MAGIC2_SW 0x50455246494c4532ULL /* the same, written big-endian */
#define FILE_HEADER_SIZE 104
#define PIPE_HEADER_SIZE 16

enum {
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
	FEAT_SAMPLE_TIME = 21, /* the first and last sample times (perf record) */
	FEAT_BITS = 256,
};

#define MISC_BUILD_ID_SIZE (1u << 15)

/* Bounds that keep memory and time proportional to the input; each one hit
 * is a warning naming it, and the report goes on with what is within.
 *   - ids per event: perf writes one per CPU or thread of each event;
 *   - ids in all: each id has 8 bytes of the file to itself, so a file of
 *     N bytes has at most N/8 (id sections that overlap claim more);
 *   - inflated bytes per COMPRESSED record: perf compresses one ring
 *     buffer's worth (its mmap size, 512 KiB by default) at a time;
 *   - inflated bytes in all: at most PD_MAX_INFLATE_RATIO times the
 *     compressed bytes (real profiles compress 5 to 50 times). */
#define PD_MAX_IDS_PER_ATTR (1u << 20)
#define PD_MAX_INFLATED_RECORD ((size_t)64 << 20)
#define PD_MAX_INFLATE_RATIO 1000

struct chunk { /* a decompressed buffer: freed when the next one is made */
	struct chunk *next;
	size_t size;
	uint8_t data[];
};

struct kept { /* copies of inflated records the caller keeps (pd_keep) */
	struct kept *next;
	size_t used, cap;
	uint8_t data[];
};

struct id_slot {
	uint64_t id;
	int attr; /* index + 1; 0: empty */
};

struct pd_reader {
	char *name;
	const uint8_t *base; /* the whole input */
	size_t size;
	int mapped;          /* base is our mmap */
	int owned;           /* base is our malloc */
	int pipe;
	/* where records are read from */
	size_t pos, end;
	/* the decompressed records being walked, if any */
	struct chunk *chunks;
	const uint8_t *dpos, *dend;
	ZSTD_DStream *zstd;
	int zstd_broken;
	pd_attr *attrs;
	size_t nattrs, cap_attrs;
	struct id_slot *ids;
	size_t ids_cap, ids_count;
	uint64_t ids_total;      /* ids added, all events: bounded by the file's size / 8 */
	int ids_warned;
	uint64_t inflated, compressed; /* bytes of COMPRESSED records, before and after */
	struct kept *kept;
	pd_build_id *build_ids;
	size_t nbuild_ids, cap_build_ids;
	char *cmdline, *osrelease, *hostname;
	uint64_t first_sample_time, last_sample_time; /* FEAT_SAMPLE_TIME, else 0 */
	char **desc_names; /* EVENT_DESC names, by attr index */
	size_t ndesc_names;
	uint64_t lost;
	char *warnings;
	size_t warnings_len;
	int stopped;
	int lazy;
	int frozen;          /* pd_freeze: the tables others read no longer change */
	int frozen_skipped;  /* records not absorbed because of it */
	/* perf record --threads: the data.N files of the directory, read
	 * after the data section of its "data" file (the session sorts) */
	size_t *part_off, *part_end;
	size_t nparts, next_part;
	uint64_t scratch_cc[512]; /* callchains that are not 8-aligned are copied here */
	/* records handed out or inflated, by type, as perf report --stats
	 * counts them (a COMPRESSED record and each record in it) */
	uint64_t nrecords[PD_NRECORD_TYPES];
	/* the feature sections as found (file) or copied (pipe), for --header */
	struct { const uint8_t *p; size_t size; uint8_t *copy; } feat[FEAT_BITS];
	uint64_t data_off, data_size, feat_off; /* file mode */
};

/* ---- small helpers ------------------------------------------------------- */

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fprintf(stderr, "perf-loops: out of memory\n");
		abort();
	}
	return q;
}

static char *xstrndup(const char *s, size_t n)
{
	char *d = xrealloc(NULL, n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

static void warnf(pd_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(pd_reader *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof buf)
		n = sizeof buf - 1;
	/* a corrupt file could warn without end: keep the first few */
	if (r->warnings_len > 8192)
		return;
	size_t nl = strlen(r->name);
	r->warnings = xrealloc(r->warnings, r->warnings_len + nl + n + 4);
	memcpy(r->warnings + r->warnings_len, r->name, nl);
	r->warnings_len += nl;
	memcpy(r->warnings + r->warnings_len, ": ", 2);
	r->warnings_len += 2;
	memcpy(r->warnings + r->warnings_len, buf, n);
	r->warnings_len += n;
	r->warnings[r->warnings_len++] = '\n';
	r->warnings[r->warnings_len] = 0;
}

static inline uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static inline uint16_t rd16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

/* A cursor over [p, end): every take checks the room first. */
struct cur {
	const uint8_t *p, *end;
	int bad;
};

static inline uint64_t take64(struct cur *c)
{
	if (c->end - c->p < 8) {
		c->bad = 1;
		c->p = c->end;
		return 0;
	}
	uint64_t v = rd64(c->p);
	c->p += 8;
	return v;
}

static inline uint32_t take32(struct cur *c)
{
	if (c->end - c->p < 4) {
		c->bad = 1;
		c->p = c->end;
		return 0;
	}
	uint32_t v = rd32(c->p);
	c->p += 4;
	return v;
}

static inline const uint8_t *take(struct cur *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n) {
		c->bad = 1;
		c->p = c->end;
		return NULL;
	}
	const uint8_t *q = c->p;
	c->p += n;
	return q;
}

static int popcount64(uint64_t v)
{
	return __builtin_popcountll(v);
}

/* ---- event names ------------------------------------------------------- */

const char *pd_event_name(uint32_t type, uint64_t config)
{
	static const char *const hw[] = {
		"cycles", "instructions", "cache-references", "cache-misses",
		"branch-instructions", "branch-misses", "bus-cycles",
		"stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles",
	};
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
		"emulation-faults", "dummy", "bpf-output", "cgroup-switches",
	};
	if (type == 0 && config < sizeof hw / sizeof hw[0])
		return hw[config];
	if (type == 1 && config < sizeof sw / sizeof sw[0])
		return sw[config];
	switch (type) {
	case 2: return "tracepoint";
	case 3: return "hw-cache";
	case 4: return "raw";
	case 5: return "breakpoint";
	}
	return "unknown";
}

/* ---- attrs and ids ------------------------------------------------------- */

/* The slot of ID in a table of CAP (a power of two) slots.  The product's
 * high bits are folded down: ids differing only in their high bits (a
 * crafted id section) must not all land in one chain. */
static inline size_t id_hash(uint64_t id, size_t cap)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ULL;
	return (size_t)(h ^ (h >> 29) ^ (h >> 47)) & (cap - 1);
}

static void id_insert(pd_reader *r, uint64_t id, int attr)
{
	if ((r->ids_count + 1) * 2 > r->ids_cap) {
		size_t ncap = r->ids_cap ? r->ids_cap * 2 : 64;
		struct id_slot *n = calloc(ncap, sizeof *n);
		if (!n)
			abort();
		for (size_t i = 0; i < r->ids_cap; i++) {
			if (!r->ids[i].attr)
				continue;
			size_t h = id_hash(r->ids[i].id, ncap);
			while (n[h].attr)
				h = (h + 1) & (ncap - 1);
			n[h] = r->ids[i];
		}
		free(r->ids);
		r->ids = n;
		r->ids_cap = ncap;
	}
	size_t h = id_hash(id, r->ids_cap);
	while (r->ids[h].attr) {
		if (r->ids[h].id == id) {
			r->ids[h].attr = attr + 1;
			return;
		}
		h = (h + 1) & (r->ids_cap - 1);
	}
	r->ids[h].id = id;
	r->ids[h].attr = attr + 1;
	r->ids_count++;
}

static int id_find(const pd_reader *r, uint64_t id)
{
	if (!r->ids_cap)
		return -1;
	size_t h = id_hash(id, r->ids_cap);
	while (r->ids[h].attr) {
		if (r->ids[h].id == id)
			return r->ids[h].attr - 1;
		h = (h + 1) & (r->ids_cap - 1);
	}
	return -1;
}

/* Parse a perf_event_attr of SIZE bytes (older perf wrote shorter ones). */
static int add_attr(pd_reader *r, const uint8_t *p, size_t size)
{
	if (r->nattrs >= 4096) {
		warnf(r, "too many events; the rest are ignored");
		return -1;
	}
	if (r->nattrs == r->cap_attrs) {
		r->cap_attrs = r->cap_attrs ? r->cap_attrs * 2 : 4;
		r->attrs = xrealloc(r->attrs, r->cap_attrs * sizeof *r->attrs);
	}
	pd_attr *a = &r->attrs[r->nattrs];
	memset(a, 0, sizeof *a);
	uint8_t buf[sizeof a->raw] = { 0 };
	memcpy(buf, p, size < sizeof buf ? size : sizeof buf);
	a->type = rd32(buf + 0);
	a->config = rd64(buf + 8);
	a->sample_period = rd64(buf + 16);
	a->sample_type = rd64(buf + 24);
	a->read_format = rd64(buf + 32);
	a->flags = rd64(buf + 40);
	a->freq = (a->flags >> 10) & 1;
	a->sample_id_all = (a->flags >> 18) & 1;
	a->branch_sample_type = rd64(buf + 72);
	a->sample_regs_user = rd64(buf + 80);
	a->sample_stack_user = rd32(buf + 88);
	a->name = strdup(pd_event_name(a->type, a->config));
	memcpy(a->raw, buf, sizeof a->raw < sizeof buf ? sizeof a->raw : sizeof buf);
	a->raw_size = (uint32_t)(size < sizeof a->raw ? size : sizeof a->raw);
	return (int)r->nattrs++;
}

/* Adds ID to event ATTR; 0, or -1 when a bound says no more. */
static int attr_add_id(pd_reader *r, int attr, uint64_t id)
{
	pd_attr *a = &r->attrs[attr];
	if (a->nids >= PD_MAX_IDS_PER_ATTR) {
		if (!(r->ids_warned & 1))
			warnf(r, "event %d has more than %u sample ids (the bound per event); the rest are ignored",
			      attr, PD_MAX_IDS_PER_ATTR);
		r->ids_warned |= 1;
		return -1;
	}
	if (r->ids_total >= r->size / 8 + 64) {
		if (!(r->ids_warned & 2))
			warnf(r, "the events claim more sample ids than the file's %zu bytes hold (overlapping id "
			      "sections); the rest are ignored", r->size);
		r->ids_warned |= 2;
		return -1;
	}
	if (a->nids == a->cap_ids) {
		a->cap_ids = a->cap_ids ? a->cap_ids * 2 : 8;
		a->ids = xrealloc(a->ids, a->cap_ids * sizeof *a->ids);
	}
	a->ids[a->nids++] = id;
	r->ids_total++;
	id_insert(r, id, attr);
	return 0;
}

static void set_attr_name(pd_reader *r, int attr, const char *name)
{
	free(r->attrs[attr].name);
	r->attrs[attr].name = strdup(name);
}

/* ---- feature sections ------------------------------------------------------ */

/* A perf_header_string: u32 len, then len bytes (NUL-padded). */
static char *take_string(struct cur *c)
{
	uint32_t len = take32(c);
	const uint8_t *s = take(c, len);
	if (!s)
		return NULL;
	return xstrndup((const char *)s, strnlen((const char *)s, len));
}

static void add_build_id_record(pd_reader *r, const uint8_t *p, size_t size)
{
	/* struct perf_record_header_build_id: header, pid, build_id[24], filename */
	if (size < 8 + 4 + 24)
		return;
	if (r->nbuild_ids >= 1u << 20)
		return;
	uint16_t misc = rd16(p + 4);
	if (r->nbuild_ids == r->cap_build_ids) {
		r->cap_build_ids = r->cap_build_ids ? r->cap_build_ids * 2 : 16;
		r->build_ids = xrealloc(r->build_ids, r->cap_build_ids * sizeof *r->build_ids);
	}
	pd_build_id *b = &r->build_ids[r->nbuild_ids++];
	b->pid = (int32_t)rd32(p + 8);
	b->cpumode = misc & PD_MISC_CPUMODE_MASK;
	memcpy(b->id, p + 12, 20);
	b->size = (misc & MISC_BUILD_ID_SIZE) ? p[32] : 20;
	if (b->size > 20)
		b->size = 20;
	const char *fn = (const char *)p + 36;
	b->filename = xstrndup(fn, strnlen(fn, size - 36));
}

static void keep_feature(pd_reader *r, int feat, const uint8_t *p, size_t size)
{
	if (feat < 0 || feat >= FEAT_BITS)
		return;
	free(r->feat[feat].copy);
	r->feat[feat].copy = xrealloc(NULL, size ? size : 1);
	memcpy(r->feat[feat].copy, p, size);
	r->feat[feat].p = r->feat[feat].copy;
	r->feat[feat].size = size;
}

static void parse_feature(pd_reader *r, int feat, const uint8_t *p, size_t size)
{
	struct cur c = { p, p + size, 0 };
	if (feat >= 0 && feat < FEAT_BITS && !r->pipe) {
		r->feat[feat].p = p; /* the mapped file lasts */
		r->feat[feat].size = size;
	}
	switch (feat) {
	case FEAT_BUILD_ID:
		while (c.end - c.p >= 8) {
			uint16_t rs = rd16(c.p + 6);
			if (rs < 8 || rs > c.end - c.p) {
				warnf(r, "corrupt build-id section");
				break;
			}
			add_build_id_record(r, c.p, rs);
			c.p += rs;
		}
		break;
	case FEAT_OSRELEASE:
		free(r->osrelease);
		r->osrelease = take_string(&c);
		break;
	case FEAT_HOSTNAME:
		free(r->hostname);
		r->hostname = take_string(&c);
		break;
	case FEAT_SAMPLE_TIME: {
		uint64_t first = take64(&c), last = take64(&c);
		if (!c.bad && first <= last) {
			r->first_sample_time = first;
			r->last_sample_time = last;
		}
		break;
	}
	case FEAT_CMDLINE: {
		uint32_t nr = take32(&c);
		size_t len = 0;
		char *line = NULL;
		for (uint32_t i = 0; i < nr && !c.bad; i++) {
			char *s = take_string(&c);
			if (!s)
				break;
			size_t sl = strlen(s);
			line = xrealloc(line, len + sl + 2);
			if (len)
				line[len++] = ' ';
			memcpy(line + len, s, sl + 1);
			len += sl;
			free(s);
		}
		free(r->cmdline);
		r->cmdline = line;
		break;
	}
	case FEAT_EVENT_DESC: {
		uint32_t nre = take32(&c);
		uint32_t sz = take32(&c);
		for (uint32_t i = 0; i < nre && !c.bad; i++) {
			if (!take(&c, sz))
				break;
			uint32_t nr_ids = take32(&c);
			char *name = take_string(&c);
			if (!name)
				break;
			if (!take(&c, (uint64_t)nr_ids * 8)) {
				free(name);
				break;
			}
			if (i < r->nattrs)
				set_attr_name(r, (int)i, name);
			free(name);
		}
		if (c.bad)
			warnf(r, "corrupt event description section");
		break;
	}
	}
}

/* ---- opening --------------------------------------------------------------- */

static int parse_file_header(pd_reader *r, char *err, size_t errlen)
{
	const uint8_t *h = r->base;
	if (r->size < FILE_HEADER_SIZE) {
		snprintf(err, errlen, "%s: truncated perf.data header (%zu bytes)", r->name, r->size);
		return -1;
	}
	uint64_t attr_size = rd64(h + 16);
	uint64_t attrs_off = rd64(h + 24), attrs_size = rd64(h + 32);
	uint64_t data_off = rd64(h + 40), data_size = rd64(h + 48);
	if (attr_size < 16 + 64 || attr_size > 4096) {
		snprintf(err, errlen, "%s: corrupt perf.data header (attr size %llu)", r->name,
			 (unsigned long long)attr_size);
		return -1;
	}
	if (attrs_off > r->size || attrs_size > r->size - attrs_off) {
		snprintf(err, errlen, "%s: truncated: the event attributes are beyond the end of the file", r->name);
		return -1;
	}
	size_t nattrs = attrs_size / attr_size;
	for (size_t i = 0; i < nattrs; i++) {
		const uint8_t *a = r->base + attrs_off + i * attr_size;
		int idx = add_attr(r, a, attr_size - 16);
		if (idx < 0)
			break;
		uint64_t ids_off = rd64(a + attr_size - 16), ids_size = rd64(a + attr_size - 8);
		if (ids_off > r->size || ids_size > r->size - ids_off) {
			warnf(r, "event %zu: ids beyond the end of the file", i);
			continue;
		}
		for (uint64_t k = 0; k + 8 <= ids_size; k += 8)
			if (attr_add_id(r, idx, rd64(r->base + ids_off + k)) < 0)
				break;
	}
	if (r->nattrs == 0) {
		snprintf(err, errlen, "%s: no events in perf.data header", r->name);
		return -1;
	}
	if (data_off > r->size) {
		snprintf(err, errlen, "%s: truncated: the data section starts at byte %llu, the file has %zu",
			 r->name, (unsigned long long)data_off, r->size);
		return -1;
	}
	r->pos = data_off;
	int have_features = 1;
	if (data_size == 0 && r->size > data_off) {
		/* perf record was killed before it could write the header back */
		warnf(r, "the header says the data section is empty; reading the %zu bytes after it",
		      r->size - (size_t)data_off);
		data_size = r->size - data_off;
		have_features = 0;
	}
	if (data_size > r->size - data_off) {
		uint64_t missing = data_size - (r->size - data_off);
		warnf(r, "truncated: data section is %llu bytes, only %llu present (%llu bytes lost)",
		      (unsigned long long)data_size, (unsigned long long)(r->size - data_off),
		      (unsigned long long)missing);
		r->lost += missing;
		data_size = r->size - data_off;
		have_features = 0;
	}
	r->end = data_off + data_size;
	r->data_off = data_off;
	r->data_size = data_size;
	r->feat_off = data_off + data_size;
	if (!have_features)
		return 0;
	/* features: one section descriptor per bit set, after the data */
	uint64_t fpos = data_off + data_size;
	for (int feat = 0; feat < FEAT_BITS; feat++) {
		if (!(h[72 + feat / 8] & (1u << (feat % 8))))
			continue;
		if (fpos + 16 > r->size) {
			warnf(r, "truncated: feature sections missing");
			break;
		}
		uint64_t off = rd64(r->base + fpos), sz = rd64(r->base + fpos + 8);
		fpos += 16;
		if (off > r->size || sz > r->size - off) {
			warnf(r, "feature %d: section beyond the end of the file", feat);
			continue;
		}
		parse_feature(r, feat, r->base + off, sz);
	}
	return 0;
}

static pd_reader *finish_open(pd_reader *r, char *err, size_t errlen)
{
	if (r->size < 8) {
		snprintf(err, errlen, "%s: not a perf.data file (%s)", r->name,
			 r->size ? "too short" : "empty");
		pd_close(r);
		return NULL;
	}
	uint64_t magic = rd64(r->base);
	if (magic == PERF_MAGIC2_SW) {
		snprintf(err, errlen, "%s: a big-endian perf.data file: not supported (run perf report on the recording machine)", r->name);
		pd_close(r);
		return NULL;
	}
	if (magic != PERF_MAGIC2) {
		if (!memcmp(r->base, "PERFFILE", 8))
			snprintf(err, errlen, "%s: a perf.data file of the old format (PERFFILE): not supported", r->name);
		else
			snprintf(err, errlen, "%s: not a perf.data file (bad magic)", r->name);
		pd_close(r);
		return NULL;
	}
	if (r->size < 16) {
		snprintf(err, errlen, "%s: truncated perf.data header", r->name);
		pd_close(r);
		return NULL;
	}
	uint64_t hsize = rd64(r->base + 8);
	if (hsize == PIPE_HEADER_SIZE) {
		r->pipe = 1;
		r->pos = PIPE_HEADER_SIZE;
		r->end = r->size;
	} else if (hsize == FILE_HEADER_SIZE) {
		if (parse_file_header(r, err, errlen) < 0) {
			pd_close(r);
			return NULL;
		}
	} else {
		snprintf(err, errlen, "%s: unsupported perf.data header size %llu", r->name,
			 (unsigned long long)hsize);
		pd_close(r);
		return NULL;
	}
	return r;
}

pd_reader *pd_open_mem(const char *name, const uint8_t *data, size_t size, char *err, size_t errlen)
{
	pd_reader *r = calloc(1, sizeof *r);
	if (!r)
		abort();
	r->name = strdup(name);
	r->base = data;
	r->size = size;
	return finish_open(r, err, errlen);
}

/* Append file PATH to the owned buffer of R; -1 (ERR set) if unreadable. */
static int append_file(pd_reader *r, const char *path, size_t *cap, char *err, size_t errlen)
{
	ls_error le;
	int fd = ls_open_regular(path, 0, &le);
	if (fd < 0) {
		snprintf(err, errlen, "%s", le.message);
		errno = le.code == LS_ERR_NOT_FOUND ? ENOENT : EIO;
		return -1;
	}
	uint8_t *buf = (uint8_t *)r->base;
	for (;;) {
		if (r->size == *cap) {
			*cap = *cap ? *cap * 2 : 1 << 20;
			buf = xrealloc(buf, *cap);
			r->base = buf;
		}
		ssize_t n = read(fd, buf + r->size, *cap - r->size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		r->size += (size_t)n;
	}
	close(fd);
	return 0;
}

/* perf record --threads writes a directory: "data" (the header, the
 * events, the side-band records) and data.0, data.1, ... (the records
 * of each reading thread, without a header). */
static pd_reader *open_dir(const char *path, char *err, size_t errlen)
{
	pd_reader *r = calloc(1, sizeof *r);
	if (!r)
		abort();
	r->name = strdup(path);
	r->owned = 1;
	size_t cap = 0;
	char file[PATH_MAX];
	snprintf(file, sizeof file, "%s/data", path);
	if (append_file(r, file, &cap, err, errlen) < 0) {
		if (errno == ENOENT)
			snprintf(err, errlen, "%s: a directory without a 'data' file (not perf record --threads output)", path);
		pd_close(r);
		return NULL;
	}
	for (size_t i = 0;; i++) {
		snprintf(file, sizeof file, "%s/data.%zu", path, i);
		if (access(file, F_OK) != 0)
			break;
		size_t start = r->size;
		if (append_file(r, file, &cap, err, errlen) < 0) {
			pd_close(r);
			return NULL;
		}
		r->part_off = xrealloc(r->part_off, (r->nparts + 1) * sizeof *r->part_off);
		r->part_end = xrealloc(r->part_end, (r->nparts + 1) * sizeof *r->part_end);
		r->part_off[r->nparts] = start;
		r->part_end[r->nparts++] = r->size;
	}
	return finish_open(r, err, errlen);
}

/* ---- a mapped file truncated while it is read ----------------------------
 *
 * pd_open maps the file, and every record handed out points into that
 * mapping: a perf.data cut meanwhile (perf record writing it again, a
 * `cp` over it) makes the next read past its new end raise SIGBUS, on the
 * reader thread or on the one replaying.  Nothing can go on without the
 * rest of the file, so the handler says which file shrank, as the core
 * says of binaries (libloopscope/support/sigbus.c), and ends the process
 * with exit 1.  Only faults inside a mapping of ours are; any other SIGBUS
 * goes to the handler installed before ours (libloopscope's guard, which
 * installs its own later and passes on faults outside its guards), or to
 * the default action.  The handler reads the table of mappings without a
 * lock: a slot's fields are set before it is published (atomic path). */
enum { MAPPED_SLOTS = 16 };
static struct mapped_slot {
	const uint8_t *base;
	size_t size;
	_Atomic(const char *) path; /* NULL: free */
} mapped_slots[MAPPED_SLOTS];
static struct sigaction sigbus_previous;
static pthread_once_t sigbus_once = PTHREAD_ONCE_INIT;

static void write_str(const char *s)
{
	ssize_t rc = write(2, s, strlen(s));
	(void)rc;
}

static void write_u64(uint64_t v)
{
	char buf[24], *p = buf + sizeof buf;
	*--p = 0;
	do
		*--p = '0' + v % 10;
	while (v /= 10);
	write_str(p);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	for (int i = 0; si && si->si_code > 0 && i < MAPPED_SLOTS; i++) {
		const char *path = atomic_load(&mapped_slots[i].path);
		const uint8_t *a = si->si_addr, *b = mapped_slots[i].base;
		if (!path || a < b || a >= b + mapped_slots[i].size)
			continue;
		struct stat st; /* stat and write are async-signal-safe */
		write_str("perf-loops: ");
		write_str(path);
		write_str(": truncated while being read");
		if (stat(path, &st) == 0) {
			write_str(" (now ");
			write_u64((uint64_t)st.st_size);
			write_str(" bytes)");
		}
		write_str(": no report\n");
		_exit(1);
	}
	if (sigbus_previous.sa_flags & SA_SIGINFO) {
		if (sigbus_previous.sa_sigaction) {
			sigbus_previous.sa_sigaction(sig, si, uc);
			return;
		}
	} else if (sigbus_previous.sa_handler != SIG_DFL && sigbus_previous.sa_handler != SIG_IGN) {
		sigbus_previous.sa_handler(sig);
		return;
	}
	signal(SIGBUS, SIG_DFL); /* the read again, now fatal as without us */
}

static void sigbus_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &sigbus_previous) < 0)
		memset(&sigbus_previous, 0, sizeof sigbus_previous);
}

/* R's mapping, in the handler's table (not if it is full: then a
 * truncation is the plain SIGBUS it was).  The lock orders the writers;
 * the handler only reads, a slot's path last. */
static pthread_mutex_t mapped_lock = PTHREAD_MUTEX_INITIALIZER;

static void mapped_register(pd_reader *r)
{
	pthread_once(&sigbus_once, sigbus_install);
	pthread_mutex_lock(&mapped_lock);
	for (int i = 0; i < MAPPED_SLOTS; i++) {
		if (atomic_load(&mapped_slots[i].path))
			continue;
		mapped_slots[i].base = r->base;
		mapped_slots[i].size = r->size;
		atomic_store(&mapped_slots[i].path, r->name);
		break;
	}
	pthread_mutex_unlock(&mapped_lock);
}

static void mapped_unregister(pd_reader *r)
{
	pthread_mutex_lock(&mapped_lock);
	for (int i = 0; i < MAPPED_SLOTS; i++)
		if (atomic_load(&mapped_slots[i].path) == r->name)
			atomic_store(&mapped_slots[i].path, NULL);
	pthread_mutex_unlock(&mapped_lock);
}

pd_reader *pd_open(const char *path, char *err, size_t errlen)
{
	int is_stdin = !strcmp(path, "-");
	struct stat dst;
	if (!is_stdin && stat(path, &dst) == 0 && S_ISDIR(dst.st_mode))
		return open_dir(path, err, errlen);
	ls_error le;
	int fd = is_stdin ? 0 : ls_open_regular(path, 0, &le);
	if (fd < 0) {
		snprintf(err, errlen, "%s%s", le.message,
			 strstr(le.message, ": not a regular file (") ? " (to read a pipe, use -i -)" : "");
		return NULL;
	}
	pd_reader *r = calloc(1, sizeof *r);
	if (!r)
		abort();
	r->name = strdup(is_stdin ? "<stdin>" : path);
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		/* Every page is read, once: mapping them all in one call costs less
		 * than a fault per 64 KiB (a tenth of a 5M-sample report).  Not
		 * for a huge file, which would be read whole before anything. */
		int populate = st.st_size <= ((off_t)1 << 30) ? MAP_POPULATE : 0;
		void *m = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE | populate, fd, 0);
		if (m != MAP_FAILED) {
			madvise(m, st.st_size, MADV_SEQUENTIAL);
			r->base = m;
			r->size = st.st_size;
			r->mapped = 1;
			mapped_register(r);
		}
	}
	if (!r->mapped) {
		/* a pipe (perf record -o - | perf loops report -i -): read it all */
		size_t cap = 1 << 20, len = 0;
		uint8_t *buf = xrealloc(NULL, cap);
		for (;;) {
			if (len == cap) {
				cap *= 2;
				buf = xrealloc(buf, cap);
			}
			ssize_t n = read(fd, buf + len, cap - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				snprintf(err, errlen, "%s: %s", r->name, strerror(errno));
				free(buf);
				if (!is_stdin)
					close(fd);
				pd_close(r);
				return NULL;
			}
			if (n == 0)
				break;
			len += n;
		}
		r->base = buf;
		r->size = len;
		r->owned = 1;
	}
	if (!is_stdin)
		close(fd);
	return finish_open(r, err, errlen);
}

void pd_close(pd_reader *r)
{
	if (!r)
		return;
	if (r->mapped) {
		mapped_unregister(r);
		munmap((void *)r->base, r->size);
	}
	if (r->owned)
		free((void *)r->base);
	for (struct chunk *c = r->chunks, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	for (struct kept *k = r->kept, *n; k; k = n) {
		n = k->next;
		free(k);
	}
	if (r->zstd)
		ZSTD_freeDStream(r->zstd);
	for (size_t i = 0; i < r->nattrs; i++) {
		free(r->attrs[i].name);
		free(r->attrs[i].ids);
	}
	free(r->attrs);
	free(r->ids);
	free(r->part_off);
	free(r->part_end);
	for (size_t i = 0; i < r->nbuild_ids; i++)
		free(r->build_ids[i].filename);
	free(r->build_ids);
	free(r->cmdline);
	free(r->osrelease);
	free(r->hostname);
	free(r->warnings);
	for (int f = 0; f < FEAT_BITS; f++)
		free(r->feat[f].copy);
	free(r->name);
	free(r);
}

/* ---- samples --------------------------------------------------------------- */

/* Which attr a record belongs to.  With one event, that one; else by the
 * sample id, at the position every event of the file agrees on (perf
 * requires that: evlist__id_pos). */
static int attr_of(const pd_reader *r, uint32_t type, const uint8_t *body, const uint8_t *end)
{
	if (r->nattrs <= 1)
		return r->nattrs ? 0 : -1;
	uint64_t st = r->attrs[0].sample_type;
	uint64_t id;
	if (type == PD_RECORD_SAMPLE) {
		int pos;
		if (st & PD_SAMPLE_IDENTIFIER)
			pos = 0;
		else if (st & PD_SAMPLE_ID)
			pos = !!(st & PD_SAMPLE_IP) + !!(st & PD_SAMPLE_TID) + !!(st & PD_SAMPLE_TIME) +
			      !!(st & PD_SAMPLE_ADDR);
		else
			return 0;
		if (end - body < (pos + 1) * 8)
			return -1;
		id = rd64(body + pos * 8);
	} else {
		if (!r->attrs[0].sample_id_all)
			return 0;
		int pos;
		if (st & PD_SAMPLE_IDENTIFIER)
			pos = 1;
		else if (st & PD_SAMPLE_ID)
			pos = 1 + !!(st & PD_SAMPLE_CPU) + !!(st & PD_SAMPLE_STREAM_ID);
		else
			return 0;
		if (end - body < pos * 8)
			return -1;
		id = rd64(end - pos * 8);
	}
	int a = id_find(r, id);
	return a;
}

/* The sample_id_all trailer of a non-sample record. */
static void parse_sample_id(const pd_attr *a, const uint8_t *body, const uint8_t *end, pd_event *ev)
{
	uint64_t st = a->sample_type;
	int n = !!(st & PD_SAMPLE_TID) + !!(st & PD_SAMPLE_TIME) + !!(st & PD_SAMPLE_ID) +
		!!(st & PD_SAMPLE_STREAM_ID) + !!(st & PD_SAMPLE_CPU) + !!(st & PD_SAMPLE_IDENTIFIER);
	if (end - body < n * 8)
		return;
	struct cur c = { end - n * 8, end, 0 };
	if (st & PD_SAMPLE_TID) {
		ev->sample.pid = take32(&c);
		ev->sample.tid = take32(&c);
	}
	if (st & PD_SAMPLE_TIME) {
		ev->sample.time = take64(&c);
		ev->has_time = 1;
	}
	if (st & PD_SAMPLE_ID)
		ev->sample.id = take64(&c);
	if (st & PD_SAMPLE_STREAM_ID)
		ev->sample.stream_id = take64(&c);
	if (st & PD_SAMPLE_CPU) {
		ev->sample.cpu = take32(&c);
		take32(&c);
	}
	if (st & PD_SAMPLE_IDENTIFIER)
		ev->sample.id = take64(&c);
}

static int parse_sample(pd_reader *r, const pd_attr *a, struct cur *c, pd_sample *s)
{
	uint64_t st = a->sample_type;
	if (st & PD_SAMPLE_IDENTIFIER)
		s->id = take64(c);
	if (st & PD_SAMPLE_IP)
		s->ip = take64(c);
	if (st & PD_SAMPLE_TID) {
		s->pid = take32(c);
		s->tid = take32(c);
	}
	if (st & PD_SAMPLE_TIME)
		s->time = take64(c);
	if (st & PD_SAMPLE_ADDR)
		s->addr = take64(c);
	if (st & PD_SAMPLE_ID)
		s->id = take64(c);
	if (st & PD_SAMPLE_STREAM_ID)
		s->stream_id = take64(c);
	if (st & PD_SAMPLE_CPU) {
		s->cpu = take32(c);
		take32(c);
	}
	s->period = 1;
	if (st & PD_SAMPLE_PERIOD)
		s->period = take64(c);
	if (st & PD_SAMPLE_READ) {
		uint64_t rf = a->read_format;
		int per_value = 1 + !!(rf & 4) + !!(rf & 16);
		if (rf & 8) { /* PERF_FORMAT_GROUP */
			uint64_t nr = take64(c);
			if (rf & 1)
				take64(c);
			if (rf & 2)
				take64(c);
			if (nr > 1u << 16)
				return -1;
			take(c, nr * per_value * 8);
		} else {
			take64(c);
			if (rf & 1)
				take64(c);
			if (rf & 2)
				take64(c);
			if (rf & 4)
				take64(c);
			if (rf & 16)
				take64(c);
		}
	}
	if (st & PD_SAMPLE_CALLCHAIN) {
		uint64_t nr = take64(c);
		if (nr > (uint64_t)(c->end - c->p) / 8)
			return -1;
		const uint8_t *ips = take(c, nr * 8);
		s->nr_callchain = nr;
		if (((uintptr_t)ips & 7) == 0) {
			s->callchain = (const uint64_t *)ips;
		} else {
			if (nr > sizeof r->scratch_cc / 8)
				nr = s->nr_callchain = sizeof r->scratch_cc / 8;
			memcpy(r->scratch_cc, ips, nr * 8);
			s->callchain = r->scratch_cc;
		}
	}
	if (st & PD_SAMPLE_RAW) {
		uint32_t sz = take32(c);
		s->raw = take(c, sz);
		s->raw_size = s->raw ? sz : 0;
		/* the u32 size and the data together are padded to 8 bytes */
		size_t used = (4 + (size_t)sz) & 7;
		if (used)
			take(c, 8 - used);
	}
	if (st & PD_SAMPLE_BRANCH_STACK) {
		uint64_t nr = take64(c);
		if (a->branch_sample_type & (1u << 17)) /* PERF_SAMPLE_BRANCH_HW_INDEX */
			take64(c);
		if (nr > (uint64_t)(c->end - c->p) / 24)
			return -1;
		const uint8_t *b = take(c, nr * 24);
		s->nr_branches = nr;
		s->branches = ((uintptr_t)b & 7) ? NULL : (const pd_branch *)b;
		if (!s->branches)
			s->nr_branches = 0;
	}
	if (st & PD_SAMPLE_REGS_USER) {
		s->regs_abi = take64(c);
		if (s->regs_abi) {
			s->regs_mask = a->sample_regs_user;
			const uint8_t *regs = take(c, (uint64_t)popcount64(s->regs_mask) * 8);
			s->regs_user = ((uintptr_t)regs & 7) ? NULL : (const uint64_t *)regs;
			if (!s->regs_user)
				s->regs_abi = 0;
		}
	}
	if (st & PD_SAMPLE_STACK_USER) {
		uint64_t sz = take64(c);
		if (sz) {
			s->stack_user = take(c, sz);
			s->stack_size = s->stack_user ? sz : 0;
			s->stack_dyn_size = take64(c);
			if (s->stack_dyn_size > s->stack_size)
				s->stack_dyn_size = s->stack_size;
		}
	}
	/* WEIGHT and later fields are not used by perf loops */
	return c->bad ? -1 : 0;
}

int pd_parse(pd_reader *r, const uint8_t *raw, pd_event *ev)
{
	memset(ev, 0, offsetof(pd_event, sample));
	memset(&ev->sample, 0, sizeof ev->sample);
	ev->has_time = 0;
	ev->raw = raw;
	ev->type = rd32(raw);
	ev->misc = rd16(raw + 4);
	ev->size = rd16(raw + 6);
	const uint8_t *body = raw + 8, *end = raw + ev->size;
	if (ev->size < 8)
		return -1;
	ev->sample.cpumode = ev->misc & PD_MISC_CPUMODE_MASK;
	if (ev->type >= PD_RECORD_HEADER_ATTR)
		return 0; /* perf's own records: no sample id */
	int ai = attr_of(r, ev->type, body, end);
	if (ai < 0)
		ai = 0; /* an unknown id: perf falls back to the first event too */
	if ((size_t)ai >= r->nattrs)
		return -1;
	const pd_attr *a = &r->attrs[ai];
	ev->sample.attr = a;
	ev->sample.attr_index = ai;
	struct cur c = { body, end, 0 };
	switch (ev->type) {
	case PD_RECORD_SAMPLE:
		if (parse_sample(r, a, &c, &ev->sample) < 0)
			return -1;
		ev->has_time = !!(a->sample_type & PD_SAMPLE_TIME);
		return 0;
	case PD_RECORD_MMAP:
	case PD_RECORD_MMAP2: {
		ev->pid = take32(&c);
		ev->tid = take32(&c);
		ev->start = take64(&c);
		ev->len = take64(&c);
		ev->pgoff = take64(&c);
		if (ev->type == PD_RECORD_MMAP2) {
			const uint8_t *u = take(&c, 24);
			if (u && (ev->misc & PD_MISC_MMAP_BUILD_ID)) {
				ev->build_id_size = u[0] > 20 ? 20 : u[0];
				memcpy(ev->build_id, u + 4, 20);
			}
			ev->prot = take32(&c);
			ev->flags = take32(&c);
		}
		if (c.bad)
			return -1;
		/* the name is NUL-terminated inside the record; make sure of it */
		size_t room = end - c.p;
		size_t n = strnlen((const char *)c.p, room);
		if (n == room)
			return -1;
		ev->filename = (const char *)c.p;
		break;
	}
	case PD_RECORD_COMM: {
		ev->pid = take32(&c);
		ev->tid = take32(&c);
		if (c.bad)
			return -1;
		size_t room = end - c.p;
		if (strnlen((const char *)c.p, room) == room)
			return -1;
		ev->filename = (const char *)c.p;
		break;
	}
	case PD_RECORD_FORK:
	case PD_RECORD_EXIT:
		ev->pid = take32(&c);
		ev->ppid = take32(&c);
		ev->tid = take32(&c);
		ev->ptid = take32(&c);
		if (c.bad)
			return -1;
		break;
	case PD_RECORD_LOST:
		take64(&c);
		ev->lost = take64(&c);
		break;
	case PD_RECORD_LOST_SAMPLES:
		ev->lost = take64(&c);
		break;
	}
	if (a->sample_id_all)
		parse_sample_id(a, body, end, ev);
	return 0;
}

/* ---- records ------------------------------------------------------------------ */

/* perf's own records that describe the recording: absorbed here. */
static void absorb(pd_reader *r, const uint8_t *p, uint32_t type, uint16_t size)
{
	const uint8_t *body = p + 8, *end = p + size;
	/* perf 6.1 writes EVENT_UPDATE records (an event's cpus, unit, scale)
	 * into every file, whose names are in the header (EVENT_DESC) already:
	 * while frozen they are left alone, without a word.  ID_INDEX (every
	 * file too) maps sample ids to mmap buffers and CPUs, which nothing
	 * here needs: it is never read. */
	if (r->frozen && type == PD_RECORD_EVENT_UPDATE)
		return;
	int changes_tables = type == PD_RECORD_HEADER_ATTR || type == PD_RECORD_HEADER_BUILD_ID ||
			     type == PD_RECORD_HEADER_FEATURE;
	if (r->frozen && changes_tables) {
		/* perf writes these in pipe mode only; in a file's data they would
		 * change the events and build-ids that another thread is reading */
		if (!r->frozen_skipped++)
			warnf(r, "header records (%s) in the data of a file, where perf keeps them in the file's "
			      "header: ignored", pd_record_name(type));
		return;
	}
	switch (type) {
	case PD_RECORD_HEADER_ATTR: {
		if (end - body < 64)
			return;
		uint32_t asz = rd32(body + 4);
		if (asz == 0)
			asz = 64;
		if (asz > (size_t)(end - body))
			return;
		int idx = add_attr(r, body, asz);
		if (idx < 0)
			return;
		for (const uint8_t *q = body + asz; q + 8 <= end; q += 8)
			if (attr_add_id(r, idx, rd64(q)) < 0)
				break;
		break;
	}
	case PD_RECORD_HEADER_BUILD_ID:
		add_build_id_record(r, p, size);
		break;
	case PD_RECORD_HEADER_FEATURE:
		if (end - body >= 8 && rd64(body) < FEAT_BITS) {
			keep_feature(r, (int)rd64(body), body + 8, end - body - 8);
			parse_feature(r, (int)rd64(body), body + 8, end - body - 8);
		}
		break;
	case PD_RECORD_EVENT_UPDATE:
		/* {u64 type; u64 id; data}: type 2 is the event's name */
		if (end - body >= 17 && rd64(body) == 2) {
			int a = id_find(r, rd64(body + 8));
			if (a >= 0) {
				const char *nm = (const char *)body + 16;
				char *s = xstrndup(nm, strnlen(nm, end - body - 16));
				set_attr_name(r, a, s);
				free(s);
			}
		}
		break;
	}
}

/* Inflate one COMPRESSED record.  perf compresses one zstd stream across
 * records, and a record may be split between two compressed records: the
 * tail of the previous buffer is carried into the next one.  The previous
 * buffer is then freed: its records were all handed out, and those the
 * caller keeps were copied (pd_keep), so memory holds one chunk at a time. */
static int inflate(pd_reader *r, const uint8_t *src, size_t len)
{
	if (r->zstd_broken)
		return -1;
	if (!r->zstd) {
		r->zstd = ZSTD_createDStream();
		if (!r->zstd || ZSTD_isError(ZSTD_initDStream(r->zstd))) {
			r->zstd_broken = 1;
			return -1;
		}
	}
	r->compressed += len;
	/* Both NULL (nothing inflated yet), or the unread inflated bytes. */
	assert((r->dpos == NULL) == (r->dend == NULL));
	size_t carry = r->dend - r->dpos;
	size_t cap = carry + (len < 4096 ? 65536 : len * 8);
	if (cap > carry + PD_MAX_INFLATED_RECORD)
		cap = carry + PD_MAX_INFLATED_RECORD;
	struct chunk *ch = xrealloc(NULL, sizeof *ch + cap);
	if (carry)
		memcpy(ch->data, r->dpos, carry);
	for (struct chunk *c = r->chunks, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	r->chunks = NULL;
	r->dpos = r->dend = NULL;
	ZSTD_inBuffer in = { src, len, 0 };
	ZSTD_outBuffer out = { ch->data, cap, carry };
	for (;;) {
		if (out.pos == out.size) {
			if (out.pos - carry >= PD_MAX_INFLATED_RECORD) {
				warnf(r, "a compressed record inflates beyond %zu MiB (the bound per record): "
				      "the rest of the compressed data is skipped", PD_MAX_INFLATED_RECORD >> 20);
				free(ch);
				r->zstd_broken = 1;
				return -1;
			}
			cap = cap * 2 < carry + PD_MAX_INFLATED_RECORD ? cap * 2 : carry + PD_MAX_INFLATED_RECORD;
			ch = xrealloc(ch, sizeof *ch + cap);
			out.dst = ch->data;
			out.size = cap;
		}
		size_t ret = ZSTD_decompressStream(r->zstd, &out, &in);
		if (ZSTD_isError(ret)) {
			warnf(r, "corrupt compressed data: %s", ZSTD_getErrorName(ret));
			free(ch);
			r->zstd_broken = 1;
			return -1;
		}
		/* all input taken and room left over: the decoder has flushed */
		if (in.pos == in.size && out.pos < out.size)
			break;
	}
	r->inflated += out.pos - carry;
	if (r->inflated > ((uint64_t)256 << 20) + (uint64_t)PD_MAX_INFLATE_RATIO * r->compressed) {
		warnf(r, "compressed data inflates more than %d times its size (the bound): the rest of it is skipped",
		      PD_MAX_INFLATE_RATIO);
		free(ch);
		r->zstd_broken = 1;
		return -1;
	}
	ch->size = out.pos;
	ch->next = NULL;
	r->chunks = ch;
	r->dpos = ch->data;
	r->dend = ch->data + ch->size;
	return 0;
}

const uint8_t *pd_keep(pd_reader *r, const uint8_t *raw)
{
	if (raw >= r->base && raw < r->base + r->size)
		return raw; /* in the file (mapped or read): lasts until pd_close */
	size_t size = rd16(raw + 6), room = (size + 7) & ~(size_t)7;
	struct kept *k = r->kept;
	if (!k || k->cap - k->used < room) {
		size_t cap = room > (1u << 20) ? room : (1u << 20);
		k = xrealloc(NULL, sizeof *k + cap);
		k->used = 0;
		k->cap = cap;
		k->next = r->kept;
		r->kept = k;
	}
	uint8_t *copy = k->data + k->used;
	memcpy(copy, raw, size);
	k->used += room;
	return copy;
}

#define PD_PREFETCH_AHEAD 8192

/* Two records are followed by a payload their size does not count:
 * HEADER_TRACING_DATA (pipe mode: the tracepoints' formats, u32 size at
 * +8) and AUXTRACE (Intel PT, ARM SPE, CoreSight trace, u64 size at +8).
 * Read as records, the payload was "truncated ... bytes lost" (a pipe
 * recording of sched:sched_switch lost every sample) or, forged, samples
 * hidden in trace data were counted.  Skipped by its size, as perf does. */
static void skip_payload(pd_reader *r, const uint8_t *p, uint32_t type, uint16_t size)
{
	uint64_t payload;
	if (type == PD_RECORD_HEADER_TRACING_DATA && size >= 12)
		payload = rd32(p + 8);
	else if (type == PD_RECORD_AUXTRACE && size >= 16)
		payload = rd64(p + 8);
	else
		return;
	size_t left = r->end - r->pos;
	if (payload > left) {
		warnf(r, "truncated: the payload of a %s record (%llu bytes) is cut short; %zu bytes lost",
		      type == PD_RECORD_AUXTRACE ? "AUXTRACE" : "TRACING_DATA", (unsigned long long)payload, left);
		r->lost += left;
		r->pos = r->end;
		return;
	}
	r->pos += (size_t)payload;
}

int pd_next(pd_reader *r, pd_event *ev)
{
	for (;;) {
		if (r->stopped)
			return 0;
		const uint8_t *p;
		uint32_t type;
		uint16_t size;
		if (r->dpos && r->dend - r->dpos >= 8 && rd16(r->dpos + 6) <= r->dend - r->dpos) {
			/* records inflated from a COMPRESSED record */
			p = r->dpos;
			size = rd16(p + 6);
			if (size < 8) {
				warnf(r, "corrupt record in compressed data; %zu bytes not read",
				      (size_t)(r->dend - r->dpos));
				r->lost += r->dend - r->dpos;
				r->dpos = r->dend;
				continue;
			}
			r->dpos += size;
			type = rd32(p);
			r->nrecords[type < PD_NRECORD_TYPES ? type : 0]++;
		} else {
			if (r->pos >= r->end && r->next_part < r->nparts) {
				r->pos = r->part_off[r->next_part];
				r->end = r->part_end[r->next_part++];
				continue;
			}
			if (r->pos >= r->end) {
				if (r->dpos && r->dend > r->dpos) {
					warnf(r, "truncated compressed data: %zu bytes lost",
					      (size_t)(r->dend - r->dpos));
					r->lost += r->dend - r->dpos;
					r->dpos = r->dend;
				}
				return 0;
			}
			size_t left = r->end - r->pos;
			p = r->base + r->pos;
			/* the file is read once, front to back: ask for the lines a
			 * few pages ahead, which the hardware prefetcher (stopping at
			 * page boundaries) does not fetch by itself */
			if (left > PD_PREFETCH_AHEAD)
				__builtin_prefetch(p + PD_PREFETCH_AHEAD);
			if (left < 8 || rd16(p + 6) > left || rd16(p + 6) < 8) {
				if (left < 8 || rd16(p + 6) > left)
					warnf(r, "truncated: the last record is cut short; %zu bytes lost", left);
				else
					warnf(r, "corrupt record at offset %zu; %zu bytes not read", r->pos, left);
				r->lost += left;
				r->stopped = 1;
				return 0;
			}
			size = rd16(p + 6);
			type = rd32(p);
			r->pos += size;
			r->nrecords[type < PD_NRECORD_TYPES ? type : 0]++;
			skip_payload(r, p, type, size);
			if (type == PD_RECORD_COMPRESSED || type == PD_RECORD_COMPRESSED2) {
				const uint8_t *src = p + 8;
				size_t len = size - 8;
				if (type == PD_RECORD_COMPRESSED2) {
					if (len < 8)
						continue;
					uint64_t dsz = rd64(src);
					src += 8;
					len = dsz < len - 8 ? dsz : len - 8;
				}
				if (inflate(r, src, len) < 0) {
					r->lost += size;
				}
				continue;
			}
		}
		if (type >= PD_RECORD_HEADER_ATTR && type != PD_RECORD_FINISHED_ROUND &&
		    type != PD_RECORD_FINISHED_INIT)
			absorb(r, p, type, size);
		if (type == PD_RECORD_SAMPLE && r->lazy) {
			/* the first pass of a session needs only the time */
			ev->type = type;
			ev->misc = rd16(p + 4);
			ev->size = size;
			ev->raw = p;
			ev->has_time = 0;
			int ai = attr_of(r, type, p + 8, p + size);
			if (ai < 0)
				ai = 0;
			if ((size_t)ai < r->nattrs) {
				uint64_t st = r->attrs[ai].sample_type;
				if (st & PD_SAMPLE_TIME) {
					size_t off = 8 + 8 * (!!(st & PD_SAMPLE_IDENTIFIER) + !!(st & PD_SAMPLE_IP) +
							      !!(st & PD_SAMPLE_TID));
					if (off + 8 <= size) {
						ev->sample.time = rd64(p + off);
						ev->has_time = 1;
					}
				}
			}
			return 1;
		}
		if (pd_parse(r, p, ev) < 0) {
			/* a record that does not parse is skipped, not fatal */
			memset(ev, 0, sizeof *ev);
			ev->type = (uint32_t)-1;
			ev->raw = p;
			ev->size = size;
		}
		return 1;
	}
}

void pd_set_lazy(pd_reader *r, int lazy) { r->lazy = lazy; }
void pd_freeze(pd_reader *r, int frozen) { r->frozen = frozen; }
int pd_is_multipart(const pd_reader *r) { return r->nparts > 0; }
size_t pd_nattrs(const pd_reader *r) { return r->nattrs; }
const pd_attr *pd_attr_at(const pd_reader *r, size_t i) { return i < r->nattrs ? &r->attrs[i] : NULL; }
size_t pd_nbuild_ids(const pd_reader *r) { return r->nbuild_ids; }
const pd_build_id *pd_build_id_at(const pd_reader *r, size_t i) { return i < r->nbuild_ids ? &r->build_ids[i] : NULL; }
const char *pd_cmdline(const pd_reader *r) { return r->cmdline; }
const char *pd_osrelease(const pd_reader *r) { return r->osrelease; }
int pd_sample_time_range(const pd_reader *r, uint64_t *first, uint64_t *last)
{
	*first = r->first_sample_time;
	*last = r->last_sample_time;
	return r->last_sample_time ? 0 : -1;
}
int pd_is_pipe(const pd_reader *r) { return r->pipe; }
const char *pd_name(const pd_reader *r) { return r->name; }
uint64_t pd_bytes_lost(const pd_reader *r) { return r->lost; }
const char *pd_warnings(const pd_reader *r) { return r->warnings; }
int pd_feature(const pd_reader *r, int feat, const uint8_t **p, size_t *size)
{
	if (feat < 0 || feat >= FEAT_BITS || !r->feat[feat].p)
		return -1;
	*p = r->feat[feat].p;
	*size = r->feat[feat].size;
	return 0;
}

int pd_file_layout(const pd_reader *r, uint64_t *data_off, uint64_t *data_size, uint64_t *feat_off)
{
	if (r->pipe)
		return -1;
	*data_off = r->data_off;
	*data_size = r->data_size;
	*feat_off = r->feat_off;
	return 0;
}

uint64_t pd_record_count(const pd_reader *r, uint32_t type) { return type < PD_NRECORD_TYPES ? r->nrecords[type] : 0; }

/* perf's names of the record types (tools/perf/util/event.c), which
 * perf report --stats prints; NULL for a type perf has no name for. */
const char *pd_record_name(uint32_t type)
{
	static const char *const names[PD_NRECORD_TYPES] = {
		[1] = "MMAP", [2] = "LOST", [3] = "COMM", [4] = "EXIT", [5] = "THROTTLE", [6] = "UNTHROTTLE",
		[7] = "FORK", [8] = "READ", [9] = "SAMPLE", [10] = "MMAP2", [11] = "AUX", [12] = "ITRACE_START",
		[13] = "LOST_SAMPLES", [14] = "SWITCH", [15] = "SWITCH_CPU_WIDE", [16] = "NAMESPACES",
		[17] = "KSYMBOL", [18] = "BPF_EVENT", [19] = "CGROUP", [20] = "TEXT_POKE", [21] = "AUX_OUTPUT_HW_ID",
		[64] = "ATTR", [65] = "EVENT_TYPE", [66] = "TRACING_DATA", [67] = "BUILD_ID", [68] = "FINISHED_ROUND",
		[69] = "ID_INDEX", [70] = "AUXTRACE_INFO", [71] = "AUXTRACE", [72] = "AUXTRACE_ERROR",
		[73] = "THREAD_MAP", [74] = "CPU_MAP", [75] = "STAT_CONFIG", [76] = "STAT", [77] = "STAT_ROUND",
		[78] = "EVENT_UPDATE", [79] = "TIME_CONV", [80] = "FEATURE", [81] = "COMPRESSED",
		[82] = "FINISHED_INIT", [83] = "COMPRESSED2",
	};
	return type < PD_NRECORD_TYPES ? names[type] : NULL;
}
