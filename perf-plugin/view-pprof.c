/* view-pprof.c - --format=pprof -o FILE: the calling-context tree as a
 * gzipped profile.proto (github.com/google/pprof/proto/profile.proto), the
 * format of go tool pprof, Pyroscope, Parca, Grafana and speedscope.
 *
 * Each frame of a chain (a procedure with the inlined calls, loops and
 * statement of the sampled or calling address) is one Location whose Line
 * entries are its scopes, innermost first: inlined calls are inline Lines
 * as compilers' own profiles have them, and loops become inline frames
 * named "loop at FILE:LINE", so that pprof -top, -list and -traces show
 * them.  Each entity's Line carries the line of what is just inside it:
 * the statement, a loop's header line, an inlined call's call site.
 * One Sample per node with samples of its own; two values per event:
 * its sample count and its period.  With -s type or typeoff, one per node
 * and data access instead, labelled "variable", "type" and "field" (the
 * access -s type takes, data-keys.c), so that pprof -tagfocus and
 * -tags filter and show them.  The encoder is ours: profile.proto
 * needs varints and length-delimited fields only. */
#include "report.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- protobuf wire format --------------------------------------------- */

typedef struct buf {
	uint8_t *p;
	size_t n, cap;
} buf;

static void put(buf *b, const void *src, size_t n)
{
	if (n == 0) /* an empty message: SRC may be NULL, which memcpy must not get */
		return;
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = pl_xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, src, n);
	b->n += n;
}

static void varint(buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;
	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	put(b, tmp, n);
}

/* field FIELD as a varint (wire type 0); zero values are left out */
static void field_int(buf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	varint(b, (uint64_t)field << 3);
	varint(b, v);
}

/* field FIELD as length-delimited bytes (wire type 2) */
static void field_bytes(buf *b, unsigned field, const void *p, size_t n)
{
	varint(b, (uint64_t)field << 3 | 2);
	varint(b, n);
	put(b, p, n);
}

static void field_msg(buf *b, unsigned field, buf *msg)
{
	field_bytes(b, field, msg->p, msg->n);
	msg->n = 0;
}

/* ---- the string table and functions ---------------------------------- */

struct strtab {
	char **v;
	size_t n, cap;
	uint32_t *slots; /* index + 1, open addressing */
	size_t nslots;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static int64_t str_index(struct strtab *t, const char *s)
{
	if (!s)
		s = "";
	if (t->n * 2 >= t->nslots) {
		size_t ns = t->nslots ? t->nslots * 2 : 1024;
		uint32_t *slots = pl_xcalloc(ns, sizeof *slots);
		for (size_t i = 0; i < t->n; i++) {
			size_t h = hash_str(t->v[i]) & (ns - 1);
			while (slots[h])
				h = (h + 1) & (ns - 1);
			slots[h] = (uint32_t)i + 1;
		}
		free(t->slots);
		t->slots = slots;
		t->nslots = ns;
	}
	size_t h = hash_str(s) & (t->nslots - 1);
	for (; t->slots[h]; h = (h + 1) & (t->nslots - 1)) {
		assert(t->slots[h] <= t->n); /* a used slot names one of the N strings */
		if (!strcmp(t->v[t->slots[h] - 1], s))
			return t->slots[h] - 1;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->v = pl_xrealloc(t->v, t->cap * sizeof *t->v);
	}
	t->v[t->n] = pl_xstrdup(s);
	t->slots[h] = (uint32_t)++t->n;
	return (int64_t)t->n - 1;
}

struct pprof {
	pl_report *rep;
	struct strtab strs;
	buf out, msg, sub;
	/* functions by (name, file) string indices: "name\x01file" interned */
	struct strtab fkeys;
	uint64_t nfunctions;
	uint32_t *loc_of; /* CCT node -> location id (0: not made yet) */
	uint64_t nlocations;
	uint8_t *mapped;  /* pl_dso.index -> its Mapping written */
	size_t nmapped;
	uint32_t *places; /* -s type: rep->places' indices by node */
	size_t nplaces;
};

/* The id of DSO's Mapping (its index + 1), written out when first seen: the
 * binary's path and build-id, so that viewers name the binary of a frame.
 * Locations carry no addresses (the tree holds scopes), so the mapping has
 * no address range; it says the functions, files, lines and inline frames
 * are all there, which keeps pprof from trying to symbolize it again. */
static uint64_t mapping_id(struct pprof *pp, const pl_dso *dso)
{
	if (!dso)
		return 0;
	if (dso->index >= pp->nmapped) {
		size_t n = (dso->index + 1) * 2;
		pp->mapped = pl_xrealloc(pp->mapped, n);
		memset(pp->mapped + pp->nmapped, 0, n - pp->nmapped);
		pp->nmapped = n;
	}
	uint64_t id = (uint64_t)dso->index + 1;
	if (pp->mapped[dso->index])
		return id;
	pp->mapped[dso->index] = 1;
	char hex[41];
	pl_dso_build_id_hex(dso, hex);
	buf *m = &pp->sub;
	m->n = 0;
	field_int(m, 1, id);
	field_int(m, 5, (uint64_t)str_index(&pp->strs, pl_dso_path(dso)));
	field_int(m, 6, (uint64_t)str_index(&pp->strs, hex));
	for (unsigned f = 7; f <= 10; f++) /* has_functions, filenames, line_numbers, inline_frames */
		field_int(m, f, 1);
	field_msg(&pp->out, 3, m);
	return id;
}

/* The id of the function (NAME, FILE), written out when first seen. */
static uint64_t function_id(struct pprof *pp, const char *name, const char *file, unsigned line)
{
	char key[2048];
	snprintf(key, sizeof key, "%s\x01%s", name ? name : "", file ? file : "");
	size_t before = pp->fkeys.n;
	uint64_t id = (uint64_t)str_index(&pp->fkeys, key) + 1;
	if (pp->fkeys.n != before) {
		buf *m = &pp->sub;
		m->n = 0;
		field_int(m, 1, id);
		field_int(m, 2, (uint64_t)str_index(&pp->strs, name));
		field_int(m, 3, (uint64_t)str_index(&pp->strs, name));
		field_int(m, 4, (uint64_t)str_index(&pp->strs, file));
		field_int(m, 5, line);
		field_msg(&pp->out, 5, m);
	}
	return id;
}

/* ---- locations: one per frame of the tree ----------------------------- */

/* One Line (function, line) into pp->msg as field 4 of a Location. */
static void add_line(struct pprof *pp, uint64_t fn, unsigned line)
{
	buf l = { 0 };
	field_int(&l, 1, fn);
	field_int(&l, 2, line);
	field_bytes(&pp->msg, 4, l.p, l.n);
	free(l.p);
}

/* The Location of the frame whose deepest scope is node D (a statement,
 * or the scope holding the samples), with its Lines innermost first. */
static uint64_t location_id(struct pprof *pp, uint32_t d)
{
	if (pp->loc_of[d])
		return pp->loc_of[d];
	const pl_report *rep = pp->rep;
	const pl_tree *t = &rep->tree;
	uint64_t id = ++pp->nlocations;
	pp->loc_of[d] = (uint32_t)id;
	/* the Mapping is written first: it goes to pp->out, the Location after */
	uint32_t proc = d;
	while (proc && t->nodes[proc].kind != PL_PROC)
		proc = t->nodes[proc].parent;
	uint64_t mapping = mapping_id(pp, proc ? t->nodes[proc].dso : NULL);
	pp->msg.n = 0;
	field_int(&pp->msg, 1, id);
	field_int(&pp->msg, 2, mapping);
	unsigned line = t->nodes[d].kind == PL_STMT ? pl_node_line(rep, d) : 0;
	for (uint32_t n = d; n; n = t->nodes[n].parent) {
		const pl_node *x = &t->nodes[n];
		char label[1024];
		switch (x->kind) {
		case PL_LOOP:
			pl_node_label(rep, n, label, sizeof label);
			add_line(pp, function_id(pp, label, pl_node_file(rep, n), pl_node_line(rep, n)), line);
			line = pl_node_line(rep, n);
			break;
		case PL_INLINE:
			add_line(pp, function_id(pp, pl_node_name(rep, n), pl_node_file(rep, n), pl_node_line(rep, n)), line);
			line = ls_scope_call_line(x->scope);
			break;
		case PL_PROC:
			/* the whole name: pprof shortens names itself */
			pl_node_label(rep, n, label, sizeof label);
			add_line(pp, function_id(pp, pl_node_name(rep, n) ? pl_node_name(rep, n) : label,
						 pl_node_file(rep, n), pl_node_line(rep, n)), line);
			break;
		default:
			break;
		}
		if (x->kind == PL_PROC)
			break;
	}
	field_msg(&pp->out, 4, &pp->msg);
	return id;
}

/* ---- -s type: a Sample per node and data access, with labels ---------- */

static const pl_place *sort_places_v;

static int cmp_place_node(const void *a, const void *b)
{
	const pl_place *x = &sort_places_v[*(const uint32_t *)a], *y = &sort_places_v[*(const uint32_t *)b];
	return x->node < y->node ? -1 : x->node > y->node;
}

static void index_places(struct pprof *pp)
{
	const pl_places *p = &pp->rep->places;
	pp->places = pl_xmalloc((p->n + 1) * sizeof *pp->places);
	for (size_t i = 0; i < p->n; i++)
		pp->places[i] = (uint32_t)i;
	sort_places_v = p->v;
	qsort(pp->places, p->n, sizeof *pp->places, cmp_place_node);
	pp->nplaces = p->n;
}

/* The labels of access A: "variable", "type", "field" (none without). */
static void label(struct pprof *pp, buf *m, const char *key, const char *str)
{
	buf l = { 0 };
	field_int(&l, 1, (uint64_t)str_index(&pp->strs, key));
	field_int(&l, 2, (uint64_t)str_index(&pp->strs, str));
	field_msg(m, 3, &l);
	free(l.p);
}

static const ls_access *place_access(struct pprof *pp, const pl_place *pl)
{
	const ls_accesses *set;
	int skid;
	const ls_access *a = pl_data_access(pp->rep, pl, &set, &skid);
	return a && a->variable ? a : NULL;
}

/* Node N's places grouped by their access (variable, type, offset and
 * field), one Sample each with LOCS. */
static void add_data_samples(struct pprof *pp, uint32_t n, const buf *locs)
{
	const pl_places *p = &pp->rep->places;
	size_t lo = 0, hi = pp->nplaces;
	while (lo < hi) { /* the first place of node N */
		size_t mid = lo + (hi - lo) / 2;
		if (p->v[pp->places[mid]].node < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < pp->nplaces && p->v[pp->places[end]].node == n)
		end++;
	size_t nev = pp->rep->tree.nev;
	uint64_t *vals = pl_xcalloc(2 * nev, sizeof *vals);
	for (size_t i = lo; i < end; i++) {
		const ls_access *a = place_access(pp, &p->v[pp->places[i]]);
		int first = 1; /* the first place of its access's group gathers the group */
		for (size_t j = lo; j < i && first; j++) {
			const ls_access *b = place_access(pp, &p->v[pp->places[j]]);
			first = !(a == b || (a && b && !strcmp(a->variable, b->variable) && !strcmp(a->type, b->type) &&
			                     a->offset == b->offset && !strcmp(a->field, b->field)));
		}
		if (!first)
			continue;
		memset(vals, 0, 2 * nev * sizeof *vals);
		for (size_t j = i; j < end; j++) {
			const pl_place *q = &p->v[pp->places[j]];
			const ls_access *b = place_access(pp, q);
			if (a == b || (a && b && !strcmp(a->variable, b->variable) && !strcmp(a->type, b->type) &&
			               a->offset == b->offset && !strcmp(a->field, b->field))) {
				vals[2 * q->ev] += q->samples;
				vals[2 * q->ev + 1] += q->period;
			}
		}
		buf v = { 0 }, *m = &pp->sub;
		for (size_t e = 0; e < 2 * nev; e++)
			varint(&v, vals[e]);
		m->n = 0;
		field_bytes(m, 1, locs->p, locs->n);
		field_bytes(m, 2, v.p, v.n);
		if (a) {
			char typeoff[1024];
			snprintf(typeoff, sizeof typeoff, "%s +%lld%s%s%s", a->type, (long long)a->offset,
			         a->field[0] ? " (" : "", a->field, a->field[0] ? ")" : "");
			label(pp, m, "variable", a->variable);
			label(pp, m, "type", a->type);
			label(pp, m, "typeoff", typeoff);
		}
		field_msg(&pp->out, 2, m);
		free(v.p);
	}
	free(vals);
}

/* The Sample of node N: its chain of locations, leaf first. */
static void add_sample(struct pprof *pp, uint32_t n)
{
	const pl_tree *t = &pp->rep->tree;
	buf locs = { 0 }, vals = { 0 };
	uint32_t d = n;
	while (d) {
		varint(&locs, location_id(pp, d));
		/* up to this frame's procedure, then to the scope that called it */
		while (d && t->nodes[d].kind != PL_PROC)
			d = t->nodes[d].parent;
		if (d)
			d = t->nodes[d].parent;
	}
	if (pp->places) {
		add_data_samples(pp, n, &locs);
		free(locs.p);
		return;
	}
	for (size_t e = 0; e < t->nev; e++) {
		varint(&vals, pl_node_own(t, n, e, PL_SELF));
		varint(&vals, pl_node_own(t, n, e, PL_SELF_PERIOD));
	}
	buf *m = &pp->sub;
	m->n = 0;
	field_bytes(m, 1, locs.p, locs.n); /* packed repeated uint64 */
	field_bytes(m, 2, vals.p, vals.n); /* packed repeated int64 */
	field_msg(&pp->out, 2, m);
	free(locs.p);
	free(vals.p);
}

static void sample_types(struct pprof *pp)
{
	const pl_report *rep = pp->rep;
	for (size_t e = 0; e < rep->tree.nev; e++) {
		const char *name = pd_attr_at(rep->r, e)->name;
		/* software clocks count nanoseconds; other events count events */
		const char *unit = strstr(name, "clock") ? "nanoseconds" : "count";
		char samples[300];
		snprintf(samples, sizeof samples, "%s_samples", name);
		for (int k = 0; k < 2; k++) {
			buf *m = &pp->sub;
			m->n = 0;
			field_int(m, 1, (uint64_t)str_index(&pp->strs, k ? name : samples));
			field_int(m, 2, (uint64_t)str_index(&pp->strs, k ? unit : "count"));
			field_msg(&pp->out, 1, m);
		}
	}
}

static int write_gzip(const char *path, const buf *b)
{
	gzFile f = gzopen(path, "wb9");
	if (!f) {
		fprintf(stderr, "perf-loops: %s: %s\n", path, strerror(errno ? errno : ENOMEM));
		return 1;
	}
	int ok = gzwrite(f, b->p, (unsigned)b->n) == (int)b->n || b->n == 0;
	if (gzclose(f) != Z_OK)
		ok = 0;
	if (!ok)
		fprintf(stderr, "perf-loops: %s: write error\n", path);
	return !ok;
}

int pl_view_pprof(pl_report *rep)
{
	const char *path = rep->opt->output;
	if (!path || !strcmp(path, "-")) {
		fprintf(stderr, "perf-loops: --format=pprof writes a file: give it with -o FILE\n");
		return 2;
	}
	struct pprof pp = { .rep = rep };
	const pl_tree *t = &rep->tree;
	if (rep->opt->sort_mask & PL_DATA_KEYS)
		index_places(&pp);
	str_index(&pp.strs, ""); /* string 0 is "" */
	pp.loc_of = pl_xcalloc(t->n ? t->n : 1, sizeof *pp.loc_of);
	sample_types(&pp);
	/* pprof takes the first Mapping for the main binary: the program's */
	pl_dso *main_dso = pl_main_dso(rep);
	if (main_dso)
		mapping_id(&pp, main_dso);
	for (uint32_t n = 1; n < t->n; n++) {
		int any = 0;
		for (size_t e = 0; e < t->nev && !any; e++)
			any = pl_node_own(t, n, e, PL_SELF) != 0;
		if (any)
			add_sample(&pp, n);
	}
	/* the period type and default sample type: the primary event */
	buf *m = &pp.sub;
	m->n = 0;
	const char *name = pd_attr_at(rep->r, rep->primary)->name;
	field_int(m, 1, (uint64_t)str_index(&pp.strs, name));
	field_int(m, 2, (uint64_t)str_index(&pp.strs, strstr(name, "clock") ? "nanoseconds" : "count"));
	field_msg(&pp.out, 11, m);
	field_int(&pp.out, 14, (uint64_t)str_index(&pp.strs, name));
	/* last, as every string is known by now */
	for (size_t i = 0; i < pp.strs.n; i++)
		field_bytes(&pp.out, 6, pp.strs.v[i], strlen(pp.strs.v[i]));
	int rc = write_gzip(path, &pp.out);
	for (size_t i = 0; i < pp.strs.n; i++)
		free(pp.strs.v[i]);
	for (size_t i = 0; i < pp.fkeys.n; i++)
		free(pp.fkeys.v[i]);
	free(pp.strs.v);
	free(pp.strs.slots);
	free(pp.fkeys.v);
	free(pp.fkeys.slots);
	free(pp.out.p);
	free(pp.msg.p);
	free(pp.sub.p);
	free(pp.loc_of);
	free(pp.mapped);
	if (pp.places) {
		free(pp.places);
		pl_data_keys_end(rep, 0);
	}
	return rc;
}
