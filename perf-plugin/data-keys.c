/* data-keys.c - perf report's data-type keys for `-s`: type (the type of
 * the object the sampled instruction's memory operand reaches) and typeoff
 * (that type, the offset and the field, as perf prints "struct grid +24
 * (cells[].q)"), from the core's accesses (ls_accesses_of, design.md's
 * "Accesses").
 *
 * A timer sample's IP (cpu-clock here: no PMU, no precise memory events)
 * points past the instruction that took the time: when the sampled
 * instruction has no memory operand, the last access before it in its
 * basic block is taken (ls_accesses_before), and the view says how many
 * samples that was.  The accesses are computed once per procedure and
 * kept until the view ends (pl_data_keys_end). */
#include "attribute.h"
#include "report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cached {
	const ls_module *mod;
	uint64_t proc;
	ls_accesses *acc;
};

static struct cached *cache;
static size_t ncache, cache_cap;
static uint64_t skid_samples, own_samples, none_samples;

static const ls_accesses *accesses_at(const ls_module *mod, uint64_t link)
{
	const ls_scope *proc = ls_lookup_proc(mod, link);
	if (!proc)
		return NULL;
	uint64_t entry = ls_scope_low(proc);
	for (size_t i = 0; i < ncache; i++)
		if (cache[i].mod == mod && cache[i].proc == entry)
			return cache[i].acc;
	ls_error err;
	ls_accesses *acc = ls_accesses_of(mod, link, &err); /* NULL (no DWARF) is kept too: asked once */
	if (ncache == cache_cap) {
		cache_cap = cache_cap ? 2 * cache_cap : 64;
		cache = pl_xrealloc(cache, cache_cap * sizeof *cache);
	}
	cache[ncache++] = (struct cached){ mod, entry, acc };
	return acc;
}

/* The access sample place PL took the time at, or NULL; *SKID when it is
 * the one before the sampled instruction. */
static const ls_access *sampled_access(pl_report *rep, const pl_place *pl, int *skid)
{
	*skid = 0;
	uint64_t link;
	if (!pl->map || pl_attrib_link_addr(rep->attrib, pl->map, pl->addr, &link))
		return NULL;
	struct dso_attr *d = pl_dso_attr(rep->attrib, pl->map->dso);
	const ls_accesses *acc = d && d->mod ? accesses_at(d->mod, link) : NULL;
	size_t first;
	if (!acc)
		return NULL;
	if (ls_accesses_at(acc, link, &first))
		return ls_accesses_get(acc, first);
	*skid = 1;
	return ls_accesses_before(acc, link);
}

void pl_data_key(pl_report *rep, const pl_place *pl, int key, int count, char *part, size_t len)
{
	int skid;
	const ls_access *a = sampled_access(rep, pl, &skid);
	if (count) { /* once per place, for the note */
		if (!a || !a->variable)
			none_samples += pl->samples;
		else if (skid)
			skid_samples += pl->samples;
		else
			own_samples += pl->samples;
	}
	if (!a || !a->variable) {
		snprintf(part, len, "(unknown)");
		return;
	}
	if (key == PL_KEY_TYPE)
		snprintf(part, len, "%s", a->type);
	else if (a->field[0])
		snprintf(part, len, "%s +%" PRId64 " (%s)", a->type, a->offset, a->field);
	else
		snprintf(part, len, "%s +%" PRId64, a->type, a->offset);
}

void pl_data_keys_end(pl_report *rep, int used)
{
	if (used && own_samples + skid_samples + none_samples)
		fprintf(rep->out,
			"# data types: %" PRIu64 " samples at a memory access, %" PRIu64 " at an instruction without one "
			"(the IP skids past the one that took the time: the last access before it in its block taken), "
			"%" PRIu64 " with no variable found\n",
			own_samples, skid_samples, none_samples);
	for (size_t i = 0; i < ncache; i++)
		ls_accesses_free(cache[i].acc);
	free(cache);
	cache = NULL;
	ncache = cache_cap = 0;
	skid_samples = own_samples = none_samples = 0;
}
