/* on-demand.c - analysis on demand (ls_options.on_demand) against the
 * whole analysis, through the public API only (tests/lib-on-demand.sh
 * drives it; scripts/check-sanitizers runs it under TSan).
 *
 *   on-demand BINARY CACHE_DIR THREADS < ADDRS
 *
 * ADDRS: one hexadecimal address a line.  Prints TAP lines (no plan: the
 * script counts).  What it checks:
 *   1. every address's chain (ls_chain_json) opened on demand, looked up
 *      by THREADS threads at once, each in its own order, is the whole
 *      analysis' chain, byte for byte; and fewer procedures than all were
 *      analyzed for it;
 *   2. ls_module_root on demand: the whole tree, written as the whole
 *      analysis writes it;
 *   3. the cache grows: a first run on demand stores what it analyzed; a
 *      second run reads those procedures back (ls_module_procedures) and
 *      answers the same; the whole analysis from that grown entry writes
 *      the same tree as without a cache. */
#include "loopscope.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void ok(int cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s - ", cond ? "ok" : "not ok");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures += !cond;
}

static ls_module *open_module(const char *bin, const char *cache_dir, int on_demand, int jobs)
{
	ls_options opt;
	ls_options_init(&opt);
	opt.on_demand = on_demand;
	opt.jobs = jobs;
	opt.use_cache = cache_dir != NULL;
	opt.cache_dir = cache_dir;
	opt.progress = 0;
	ls_error err;
	ls_module *m = ls_module_open(bin, &opt, &err);
	if (!m)
		printf("# %s: %s\n", bin, err.message);
	return m;
}

static char *chain_of(const ls_module *m, uint64_t addr)
{
	size_t need = ls_chain_json(m, addr, NULL, 0);
	char *buf = malloc(need + 1);
	ls_chain_json(m, addr, buf, need + 1);
	return buf;
}

static char *structure_of(const ls_module *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ls_error err;
	if (ls_write_structure(m, LS_FORMAT_JSON, f, &err) < 0)
		fprintf(f, "error: %s", err.message);
	fclose(f);
	return buf;
}

struct job {
	const ls_module *m;
	const uint64_t *addrs;
	char **want;
	size_t n, start, stride;
	size_t wrong;
};

/* Looks up every address, from START on, STRIDE apart (mod N): each
 * thread in its own order, so that they ask for procedures at once. */
static void *lookup_all(void *arg)
{
	struct job *j = arg;
	for (size_t k = 0; k < j->n; k++) {
		size_t i = (j->start + k * j->stride) % j->n;
		char *got = chain_of(j->m, j->addrs[i]);
		if (strcmp(got, j->want[i]) != 0) {
			if (j->wrong++ == 0)
				printf("# %#" PRIx64 ": on demand %s\n#   whole %s\n", j->addrs[i], got, j->want[i]);
		}
		free(got);
	}
	return NULL;
}

/* THREADS threads look up every address of M at once: how many answers
 * differ from WANT. */
static size_t concurrent_lookups(const ls_module *m, const uint64_t *addrs, char **want, size_t n, int threads)
{
	pthread_t *t = calloc(threads, sizeof *t);
	struct job *jobs = calloc(threads, sizeof *jobs);
	static const size_t strides[] = { 1, 7, 13, 31, 61, 127, 251, 509 };
	for (int i = 0; i < threads; i++) {
		size_t stride = strides[i % 8];
		while (n > 1 && stride > 1 && n % stride == 0)
			stride += 2;
		jobs[i] = (struct job){ m, addrs, want, n, (size_t)i * n / threads, stride, 0 };
		pthread_create(&t[i], NULL, lookup_all, &jobs[i]);
	}
	size_t wrong = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		wrong += jobs[i].wrong;
	}
	free(t);
	free(jobs);
	return wrong;
}

static uint64_t *read_addrs(size_t *n)
{
	size_t cap = 1024;
	uint64_t *v = malloc(cap * sizeof *v);
	*n = 0;
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		if (*n == cap)
			v = realloc(v, (cap *= 2) * sizeof *v);
		v[(*n)++] = strtoull(line, NULL, 16);
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: on-demand BINARY CACHE_DIR THREADS < ADDRS\n");
		return 2;
	}
	const char *bin = argv[1], *dir = argv[2], *name = strrchr(bin, '/') ? strrchr(bin, '/') + 1 : bin;
	int threads = atoi(argv[3]);
	size_t n;
	uint64_t *addrs = read_addrs(&n);

	/* the reference: the whole analysis, no cache */
	ls_module *whole = open_module(bin, NULL, 0, 2);
	if (!whole)
		return 1;
	char **want = calloc(n + 1, sizeof *want);
	for (size_t i = 0; i < n; i++)
		want[i] = chain_of(whole, addrs[i]);
	char *tree = structure_of(whole);
	size_t nprocs = ls_module_procedures(whole, NULL, NULL);
	ls_module_close(whole);

	/* 1: on demand, no cache, THREADS at once */
	ls_module *m = open_module(bin, NULL, 1, 2);
	size_t analyzed = 0;
	size_t at_open = m ? (ls_module_procedures(m, &analyzed, NULL), analyzed) : 1;
	size_t wrong = m ? concurrent_lookups(m, addrs, want, n, threads) : n;
	ok(m && wrong == 0, "%s: on demand, %zu addresses looked up on %zu threads at once: every chain the whole analysis'",
	   name, n, (size_t)threads);
	if (wrong)
		printf("# %zu answers differ\n", wrong);
	size_t total = m ? ls_module_procedures(m, &analyzed, NULL) : 0;
	ok(m && at_open == 0 && analyzed > 0 && analyzed < total && total == nprocs,
	   "%s: opening analyzed none; the lookups %zu of %zu procedures", name, analyzed, total);
	ls_error err;
	ok(m && ls_module_error(m, &err) == 0, "%s: no analysis on demand failed", name);

	/* 2: the whole tree from a module opened on demand */
	char *t2 = m && ls_module_root(m) ? structure_of(m) : NULL;
	ok(t2 && strcmp(t2, tree) == 0, "%s: ls_module_root on demand, then the structure: the whole analysis' (%zu bytes)",
	   name, strlen(tree));
	free(t2);
	ls_module_close(m);

	/* 3: the entry grows.  First run: half the addresses. */
	m = open_module(bin, dir, 1, 2);
	size_t half = n / 2, first = 0;
	wrong = m ? concurrent_lookups(m, addrs, want, half, threads) : n;
	if (m)
		ls_module_procedures(m, &first, NULL);
	ls_module_close(m); /* stores what it analyzed */
	m = open_module(bin, dir, 1, 2);
	size_t again = 0, cached = 0;
	wrong += m ? concurrent_lookups(m, addrs, want, n, threads) : n;
	if (m)
		ls_module_procedures(m, &again, &cached);
	ok(m && wrong == 0 && first > 0 && cached >= first && cached < again,
	   "%s: a second run on demand reads back the %zu procedures the first stored, analyzes %zu more, same chains",
	   name, cached, again - cached);
	ls_module_close(m); /* the entry grows */
	m = open_module(bin, dir, 0, 2);
	t2 = m ? structure_of(m) : NULL;
	ok(t2 && strcmp(t2, tree) == 0, "%s: the whole analysis from the grown entry: the same structure", name);
	free(t2);
	ls_module_close(m);
	m = open_module(bin, dir, 0, 2);
	ok(m && ls_module_from_cache(m), "%s: then a whole hit", name);
	ls_module_close(m);

	for (size_t i = 0; i < n; i++)
		free(want[i]);
	free(want);
	free(tree);
	free(addrs);
	return failures ? 1 : 0;
}
