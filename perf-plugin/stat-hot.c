/* stat-hot.c - `perf loops stat --hot N [-i perf.data]`: Paradyn's
 * refinement, sampling first and instrumentation second.  The recording is
 * read by perf loops report's own code (pl_report_open: the session, the
 * attribution of each sample to its calling context, inline frames and
 * loops, the per-procedure folding the loops view ranks), and the N loops
 * of the counted binary with the largest Own cost (the samples whose
 * innermost loop they are: `perf loops report --format=loops --sort=own`'s
 * order) become --loop 0xHEADER arguments.
 *
 * Own rather than Total: Total ranks a program's outermost loops first
 * (main's loop holds everything), and those are the cold ones to count;
 * the loop where the samples land is the one whose trip counts matter. */
#include "report.h"
#include "stat.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hot_loop {
	uint32_t node;
	uint64_t own;
	uint64_t header; /* the loop's header address: what --loop takes */
};

static int by_own(const void *a, const void *b)
{
	const struct hot_loop *x = a, *y = b;
	if (x->own != y->own)
		return x->own > y->own ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* The binary to count, as the recording's loops are matched to it: its
 * build-id (a copy of the recorded binary at another path, or the
 * recorded path now holding another build, is told by it), and its real
 * path for a recording without build-ids. */
struct target {
	const char *real;
	uint8_t id[20];
	size_t idlen;
};

/* The procedure node around loop node N, and whether its binary is the
 * target: the same build-id when both have one, else the same file. */
static int in_binary(pl_report *rep, const pl_tree *t, uint32_t n, const struct target *tg)
{
	while (n && t->nodes[n].kind != PL_PROC)
		n = t->nodes[n].parent;
	if (!n || !t->nodes[n].dso)
		return 0;
	const pl_dso *d = t->nodes[n].dso;
	if (tg->idlen && d->build_id_size)
		return d->build_id_size == tg->idlen && !memcmp(d->build_id, tg->id, tg->idlen);
	const char *f = pl_attrib_file(rep->attrib, t->nodes[n].dso);
	char *real = f ? realpath(f, NULL) : NULL;
	int same = real && !strcmp(real, tg->real);
	free(real);
	return same;
}

/* The loops of FILE in the folded tree T with samples of event EV, each
 * with its Own cost (its Self less the Self of the loops right in it). */
static size_t loops_by_own(pl_report *rep, const pl_tree *t, size_t ev, const struct target *file,
                           struct hot_loop **out)
{
	uint64_t *own = pl_xcalloc(t->n ? t->n : 1, sizeof *own);
	for (uint32_t n = 1; n < t->n; n++) {
		if (t->nodes[n].kind != PL_LOOP)
			continue;
		own[n] += pl_cost(t, n, ev)[PL_SELF_PERIOD];
		for (uint32_t p = t->nodes[n].parent; p && t->nodes[p].kind != PL_PROC; p = t->nodes[p].parent)
			if (t->nodes[p].kind == PL_LOOP) {
				own[p] -= pl_cost(t, n, ev)[PL_SELF_PERIOD];
				break;
			}
	}
	struct hot_loop *v = pl_xcalloc(t->n ? t->n : 1, sizeof *v);
	size_t k = 0;
	for (uint32_t n = 1; n < t->n; n++)
		if (t->nodes[n].kind == PL_LOOP && t->nodes[n].scope && own[n] && in_binary(rep, t, n, file))
			v[k++] = (struct hot_loop){ n, own[n], ls_loop_header(t->nodes[n].scope) };
	free(own);
	qsort(v, k, sizeof *v, by_own);
	*out = v;
	return k;
}

/* Appends the N hottest loops' headers to O's --loop list; 0, or -1 said. */
int stat_hot_loops(struct stat_opts *o, const char *binary)
{
	char *argv[] = { "report", "-q", "--stdio", "-i", (char *)(o->input ? o->input : "perf.data"), NULL };
	pl_report_options ro;
	int rc = pl_report_options_parse(5, argv, &ro);
	if (rc >= 0) {
		pl_report_options_free(&ro);
		return -1;
	}
	pl_report rep;
	if (pl_report_open(&ro, &rep) != 0) {
		pl_report_options_free(&ro);
		return -1;
	}
	const pl_tree *flat = pl_flat_tree(&rep);
	struct target tg = { .real = binary };
	ls_error err;
	ls_file *lf = ls_file_open(binary, &err);
	if (lf) {
		const uint8_t *bits;
		size_t len = ls_file_build_id(lf, &bits);
		tg.idlen = len <= sizeof tg.id ? len : 0;
		memcpy(tg.id, bits, tg.idlen);
		ls_file_close(lf);
	}
	struct hot_loop *v = NULL;
	size_t n = 0;
	uint64_t all = 0;
	if (rep.nshown) {
		all = rep.ev_period[rep.primary];
		n = loops_by_own(&rep, flat, rep.primary, &tg, &v);
	}
	rc = 0;
	if (n == 0) {
		fprintf(stderr, "perf loops stat: %s: no samples in the loops of %s\n", ro.input, binary);
		rc = -1;
	}
	if (n > 0 && n < (size_t)o->hot)
		fprintf(stderr, "perf loops stat: --hot %d: %zu loop%s of %s ha%s samples of %s own in %s\n", o->hot, n,
		        n == 1 ? "" : "s", binary, n == 1 ? "s" : "ve", n == 1 ? "its" : "their", ro.input);
	for (size_t i = 0; i < n && (int)i < o->hot && o->nloops < STAT_MAX_SPECS; i++) {
		char spec[32];
		snprintf(spec, sizeof spec, "%#" PRIx64, v[i].header);
		o->loops[o->nloops] = o->owned[o->nloops] = pl_xstrdup(spec);
		o->hot_share[o->nloops++] = all ? 100.0 * v[i].own / all : 0;
	}
	free(v);
	pl_report_close(&rep);
	pl_report_options_free(&ro);
	return rc;
}
