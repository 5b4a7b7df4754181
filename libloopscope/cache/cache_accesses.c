/* cache_accesses.c - the accesses of procedures (data/accesses.c) in the
 * module's cache entry: made into records when computed, kept until the
 * module stores its entry (cache_store.c writes them beside the
 * procedures' records), and read back, checked, into a set.
 *
 * Why: the accesses read the DWARF, and with analysis on demand a run that
 * asks for them builds the DWARF indexes first.  A `perf loops report -s
 * type` of a recording whose structure is cached read nothing else of the
 * DWARF: 0.3 s of fixed cost against a 0.01-0.04 s report (bench/README.md,
 * data-types.sh).  With the accesses in the entry it reads no DWARF.
 *
 * The accesses depend on the binary, its debug file and this build's
 * analysis alone (not on the options that make another entry): the
 * entry's key holds all three.  A record is checked as any other (the
 * file is untrusted): its checksum (in the head's directory), its size
 * against its counts, every string inside its table and terminated, each
 * access's kind and rule one this build names (the rule by
 * ls_access_rule_name, so that a rule added to the enum needs nothing
 * here), the blocks ascending.  One that does not check is computed again
 * (a -v note).
 */
#include "analyze.h"
#include "cache/cache_format.h"
#include "data/accesses.h"
#include "pipeline.h"
#include "support/base.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A procedure's accesses computed by this run, as its record. */
struct made {
	char *buf;
	uint32_t size;
	uint64_t checksum;
};

struct ls_cache_acc {
	pthread_mutex_t lock;      /* everything below */
	struct made *made;         /* per procedure of the directory; NULL until one is kept */
	size_t nmade;
	size_t ncomputed, nloaded; /* for LOOPSCOPE_TIMING */
	double seconds;
};

void ls_cache_accesses_init(ls_module *m)
{
	if (m->cache_acc)
		return;
	struct ls_cache_acc *c = ls_xcalloc(1, sizeof *c);
	pthread_mutex_init(&c->lock, NULL);
	m->cache_acc = c;
}

void ls_cache_accesses_free(ls_module *m)
{
	struct ls_cache_acc *c = m->cache_acc;
	if (!c)
		return;
	if (ls_timing() && (c->ncomputed || c->nloaded))
		fprintf(stderr, "loopscope: timing: %-12s %8.3f s  %s (%zu procedures: %zu computed, %zu from the cache)\n",
		        "accesses", c->seconds, m->path, c->ncomputed + c->nloaded, c->ncomputed, c->nloaded);
	for (size_t i = 0; i < c->nmade; i++)
		free(c->made[i].buf);
	free(c->made);
	pthread_mutex_destroy(&c->lock);
	free(c);
	m->cache_acc = NULL;
}

bool ls_cache_accesses_new(const ls_module *m)
{
	return m->cache_acc && m->cache_acc->ncomputed;
}

const void *ls_cache_accesses_made(const ls_module *m, size_t i, uint32_t *size, uint64_t *checksum)
{
	const struct ls_cache_acc *c = m->cache_acc;
	if (!c || i >= c->nmade || !c->made[i].buf)
		return NULL;
	*size = c->made[i].size;
	*checksum = c->made[i].checksum;
	return c->made[i].buf;
}

/* ---- a set as a record ------------------------------------------------------------------------- */

/* Access I of SET as stored, its strings added to STRS; false if a rule's
 * access lacks one of its strings (not stored then). */
static bool fill_access(struct cache_access *r, const ls_accesses *set, size_t i, struct cache_strtab *strs)
{
	const ls_access *a = ls_accesses_get(set, i);
	bool c_lang;
	memset(r, 0, sizeof *r);
	r->addr = a->addr;
	r->offset = a->offset;
	r->type_die = ls_accesses_type_die(set, i, &c_lang);
	r->len = a->len;
	r->operand_index = (uint32_t)a->operand_index;
	r->kind = a->kind;
	r->width = a->width;
	r->rule = a->rule;
	r->indexed = a->indexed != 0;
	r->bitfield = a->bitfield != 0;
	r->c_lang = c_lang;
	r->operand = ls_cache_strs_add(strs, a->operand ? a->operand : "");
	if (a->rule == LS_RULE_NONE)
		return (r->variable = r->type = r->field = r->field_type = r->expr = CACHE_NONE, true);
	if (!a->variable || !a->type || !a->field || !a->field_type || !a->expr)
		return false;
	r->variable = ls_cache_strs_add(strs, a->variable);
	r->type = ls_cache_strs_add(strs, a->type);
	r->field = ls_cache_strs_add(strs, a->field);
	r->field_type = ls_cache_strs_add(strs, a->field_type);
	r->expr = ls_cache_strs_add(strs, a->expr);
	return true;
}

/* SET (procedure ENTRY's) as a record (malloc'ed, *SIZE bytes), or NULL
 * if it cannot be stored. */
static char *make_acc_record(uint64_t entry, const ls_accesses *set, uint32_t *size)
{
	size_t n = ls_accesses_count(set);
	const uint64_t *blocks;
	size_t nblocks = ls_accesses_blocks(set, &blocks);
	if (n >= CACHE_NONE || nblocks >= CACHE_NONE)
		return NULL;
	struct cache_strtab strs = { 0 };
	struct cache_access *v = ls_xmalloc((n + 1) * sizeof *v);
	bool ok = true;
	for (size_t i = 0; ok && i < n; i++)
		ok = fill_access(&v[i], set, i, &strs);
	struct cache_acc_record r = { .entry = entry, .proc = ls_accesses_proc(set), .naccesses = (uint32_t)n,
	                              .nblocks = (uint32_t)nblocks, .strtab_size = (uint32_t)strs.len };
	struct acc_layout l = cache_acc_layout(&r);
	char *buf = NULL;
	if (ok && !strs.overflow && l.size <= UINT32_MAX) {
		buf = ls_xcalloc(1, l.size);
		memcpy(buf, &r, sizeof r);
		if (n)
			memcpy(buf + l.accesses, v, n * sizeof *v);
		if (nblocks)
			memcpy(buf + l.blocks, blocks, nblocks * sizeof *blocks);
		if (strs.len)
			memcpy(buf + l.strtab, strs.data, strs.len);
		*size = (uint32_t)l.size;
	}
	free(v);
	ls_cache_strs_free(&strs);
	return buf;
}

void ls_cache_keep_accesses(const ls_module *cm, size_t i, const ls_accesses *set, double seconds)
{
	ls_module *m = (ls_module *)cm; /* logically const: a memo */
	struct ls_cache_acc *c = m->cache_acc;
	if (!c || !m->an || i >= m->an->dir.nprocs)
		return;
	uint32_t size = 0;
	char *rec = make_acc_record(m->an->dir.entries[i], set, &size);
	pthread_mutex_lock(&c->lock); /* nothing below longjmps: plain calloc */
	c->ncomputed++;
	c->seconds += seconds;
	if (!c->made && (c->made = calloc(m->an->dir.nprocs + 1, sizeof *c->made)))
		c->nmade = m->an->dir.nprocs;
	if (rec && c->made && !c->made[i].buf) {
		c->made[i] = (struct made){ rec, size, ls_hash64(rec, size, 0) };
		rec = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	free(rec);
}

/* ---- a record as a set -------------------------------------------------------------------------- */

/* Whether stored access A is one this build could have written, its
 * strings inside a table of NS bytes. */
static bool access_ok(const struct cache_access *a, uint32_t ns)
{
	if (a->kind < LS_ACCESS_LOAD || a->kind > LS_ACCESS_BOTH || a->indexed > 1 || a->bitfield > 1 ||
	    a->c_lang > 1 || a->pad || a->operand_index > 16 || a->operand >= ns)
		return false;
	if (strcmp(ls_access_rule_name((ls_access_rule)a->rule), "?") == 0)
		return false;
	const uint32_t s[] = { a->variable, a->type, a->field, a->field_type, a->expr };
	for (size_t k = 0; k < sizeof s / sizeof *s; k++)
		if (a->rule == LS_RULE_NONE ? s[k] != CACHE_NONE : s[k] >= ns)
			return false;
	return true;
}

static const char *str_of(const char *strtab, uint32_t ref)
{
	return ref == CACHE_NONE ? NULL : strtab + ref;
}

/* The record in BUF (SIZE bytes) as a set of M, if it checks and is
 * procedure ENTRY's (and PROC's, when given). */
static ls_accesses *parse_acc_record(const ls_module *m, const char *buf, size_t size, uint64_t entry,
                                     const uint64_t *proc)
{
	struct cache_acc_record r;
	if (size < sizeof r)
		return NULL;
	memcpy(&r, buf, sizeof r);
	struct acc_layout l = cache_acc_layout(&r);
	if (l.size != size || r.entry != entry || (proc && r.proc != *proc) || r.pad)
		return NULL;
	const struct cache_access *v = (const struct cache_access *)(buf + l.accesses);
	const uint64_t *blocks = (const uint64_t *)(buf + l.blocks);
	const char *strtab = buf + l.strtab;
	if (r.strtab_size && strtab[r.strtab_size - 1] != '\0')
		return NULL;
	for (uint32_t i = 1; i < r.nblocks; i++)
		if (blocks[i] < blocks[i - 1])
			return NULL;
	for (uint32_t i = 0; i < r.naccesses; i++)
		if (!access_ok(&v[i], r.strtab_size))
			return NULL;
	char *strings = ls_xmalloc((size_t)r.strtab_size + 1);
	memcpy(strings, strtab, r.strtab_size);
	uint64_t *bl = ls_xmalloc(((size_t)r.nblocks + 1) * sizeof *bl);
	memcpy(bl, blocks, (size_t)r.nblocks * sizeof *bl);
	ls_accesses *set = ls_accesses_new(m, r.proc, strings, bl, r.nblocks);
	for (uint32_t i = 0; i < r.naccesses; i++) {
		const struct cache_access *a = &v[i];
		ls_access x = {
			.addr = a->addr, .len = a->len, .operand_index = (int)a->operand_index,
			.operand = str_of(strings, a->operand), .kind = (ls_access_kind)a->kind, .width = a->width,
			.indexed = a->indexed, .rule = (ls_access_rule)a->rule, .variable = str_of(strings, a->variable),
			.type = str_of(strings, a->type), .offset = a->offset, .field = str_of(strings, a->field),
			.field_type = str_of(strings, a->field_type), .bitfield = a->bitfield,
			.expr = str_of(strings, a->expr),
		};
		ls_accesses_add(set, &x, a->type_die, a->c_lang);
	}
	return set;
}

/* Procedure I's record from M's entry (malloc'ed, *SIZE bytes), or NULL;
 * *WHY when the entry has one that cannot be read. */
static char *entry_record(const ls_module *m, size_t i, size_t *size, const char **why)
{
	char *buf = NULL;
	/* under the analysis lock: an analysis on demand may close the entry
	 * (one whose directory does not match the binary) */
	pthread_mutex_lock(&m->an->lock);
	const struct ls_cache_entry *e = m->cache;
	if (e && i < e->h.nprocs && (e->procs[i].flags & CACHE_PROC_ACCESSES)) {
		*size = ls_cache_recs_of(e, i)->acc_size;
		buf = malloc(*size ? *size : 1);
		*why = "cannot be read, or its checksum does not match";
		if (buf && !ls_cache_acc_record_read(e, i, buf)) {
			free(buf);
			buf = NULL;
		}
	}
	pthread_mutex_unlock(&m->an->lock);
	return buf;
}

/* Whether the record in BUF is another procedure's than the one whose
 * lowest address is PROC, at the same directory entry (opened whole, the
 * lookups answer with one of the symbols that share code). */
static bool other_procs(const char *buf, size_t size, uint64_t proc)
{
	struct cache_acc_record r;
	if (size < sizeof r)
		return false;
	memcpy(&r, buf, sizeof r);
	return r.proc != proc;
}

ls_accesses *ls_cache_load_accesses(const ls_module *cm, size_t i, const uint64_t *proc)
{
	ls_module *m = (ls_module *)cm; /* logically const: counts */
	struct ls_cache_acc *c = m->cache_acc;
	if (!c || !m->an || i >= m->an->dir.nprocs)
		return NULL;
	double t0 = ls_stage_clock();
	char *buf = NULL;
	size_t size = 0;
	pthread_mutex_lock(&c->lock); /* this run's own first: a copy (plain malloc) */
	if (i < c->nmade && c->made[i].buf && (buf = malloc(c->made[i].size)))
		memcpy(buf, c->made[i].buf, size = c->made[i].size);
	pthread_mutex_unlock(&c->lock);
	const char *why = NULL;
	bool from_entry = !buf;
	if (!buf)
		buf = entry_record(m, i, &size, &why);
	ls_accesses *set = NULL;
	if (buf && proc && other_procs(buf, size, *proc)) {
		free(buf); /* not this one's, and no corruption */
		return NULL;
	}
	if (buf) {
		why = "does not check";
		/* on running out of memory the caller's guard longjmps: BUF lost */
		set = parse_acc_record(m, buf, size, m->an->dir.entries[i], proc);
		free(buf);
	}
	if (from_entry && !set && why)
		ls_note(&m->opt, "%s: cache miss: %s: the accesses of the procedure at 0x%llx %s; computing them",
		        m->path, m->cache ? m->cache->path : "", (unsigned long long)m->an->dir.entries[i], why);
	if (set && from_entry) {
		pthread_mutex_lock(&c->lock);
		c->nloaded++;
		c->seconds += ls_stage_clock() - t0;
		pthread_mutex_unlock(&c->lock);
	}
	return set;
}
