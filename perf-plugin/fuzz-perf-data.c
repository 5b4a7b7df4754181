/* fuzz-perf-data.c - libFuzzer target for the perf.data reader, the
 * session replay (processes, threads, maps), and --header-only's and
 * --stats' readers of the feature sections (view-header.c).  Built with
 *   ./configure --enable-fuzz CC=clang && make fuzz-perf-data
 * and run as ./fuzz-perf-data CORPUS_DIR (seed it with perf.data files,
 * file and pipe mode, compressed or not). */
#include "perf_data.h"
#include "report.h"
#include "session.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct sink {
	uint64_t frames, mapped;
};

static void on_sample(void *ctx, pl_session *s, const pd_event *ev, pl_thread *t)
{
	struct sink *k = ctx;
	const pd_sample *smp = &ev->sample;
	for (uint64_t i = 0; i < smp->nr_callchain; i++) {
		uint64_t ip = smp->callchain[i];
		k->frames++;
		if (ip < PD_CONTEXT_MAX && pl_find_map(s, t, ip, ip >> 63))
			k->mapped++;
	}
	for (uint64_t i = 0; i < smp->nr_branches; i++)
		k->frames += smp->branches[i].from != smp->branches[i].to;
	if (smp->regs_abi && smp->regs_user)
		for (int i = 0; i < __builtin_popcountll(smp->regs_mask); i++)
			k->frames += smp->regs_user[i] == 0;
	if (smp->stack_size)
		k->frames += smp->stack_user[smp->stack_size - 1];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	/* a copy of exactly SIZE bytes, so ASan sees any read past the end */
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	pd_reader *r = pd_open_mem("fuzz", copy, size, err, sizeof err);
	if (r) {
		pl_session *s = pl_session_new(r);
		struct sink k = { 0, 0 };
		pl_session_run(s, on_sample, &k);
		for (size_t i = 0; i < pd_nattrs(r); i++)
			k.frames += strlen(pd_attr_at(r, i)->name);
		for (size_t i = 0; i < pd_nbuild_ids(r); i++)
			k.frames += strlen(pd_build_id_at(r, i)->filename);
		pl_session_free(s);
		FILE *null = fopen("/dev/null", "w");
		if (null) { /* every feature section perf prints, and the stats' second pass */
			pl_print_file_header(r, null);
			pl_print_stats(r, null);
			fclose(null);
		}
		pd_close(r);
	}
	free(copy);
	return 0;
}
