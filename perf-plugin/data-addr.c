/* data-addr.c - where a sample's data address (PERF_SAMPLE_ADDR: perf
 * record -d, page faults here, memory events where a PMU has them) is:
 * a static variable of a binary the process maps (its name, type, offset
 * and field: ls_data_static_at, through the load bias of the binary's code
 * map), the stack ([stack]), the heap ([heap]), anonymous memory (malloc's
 * large blocks, threads' stacks: not told apart), or a file's mapping.
 *
 * Classified when the sample is attributed (the process's maps are those
 * of that moment), only when a view asks (--format=data, -s type or
 * typeoff with json): kept per tree node and event, and the data view
 * (view-data.c) adds an "address" row per kind and variable. */
#include "attribute.h"
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static struct pl_daddr *entries;
static size_t nentries, cap_entries;

/* A static variable of a binary mapped (code) in T's process holding ADDR. */
static int global_at(pl_report *rep, pl_thread *t, uint64_t addr, char *buf, size_t len)
{
	size_t n;
	pl_map **maps = pl_maps_list(&t->proc->maps, &n);
	int found = 0;
	for (size_t i = 0; i < n && !found; i++) {
		const pl_map *m = maps[i];
		if (m->dso->kind != PL_DSO_USER || (i && maps[i - 1]->dso == m->dso))
			continue; /* a binary once, by its first code map */
		struct dso_attr *d = pl_dso_attr(rep->attrib, m->dso);
		uint64_t l0;
		if (!d || !d->mod || !d->file || pl_to_link(d, m, m->start, &l0))
			continue;
		ls_error err;
		ls_accesses *v = ls_data_static_at(d->mod, addr - (m->start - l0), &err);
		const ls_access *a = ls_accesses_get(v, 0);
		if (a) {
			/* not the offset: an array's elements would each be a row */
			snprintf(buf, len, "global %s: %s%s%s%s", a->variable, a->type, a->field[0] ? " (" : "", a->field,
				 a->field[0] ? ")" : "");
			found = 1;
		}
		ls_accesses_free(v);
	}
	free(maps);
	return found;
}

/* Below the [stack] map, within RLIMIT_STACK's default (8 MiB): the stack
 * grown since it was recorded (growth makes no mmap record). */
static int below_stack(pl_report *rep, pl_thread *t, uint64_t addr)
{
	const pl_map *m = NULL;
	for (uint64_t probe = addr; !m && probe - addr <= (8u << 20); probe += 4096)
		m = pl_find_data_map(rep->s, t, probe);
	return m && !strcmp(m->dso->name, "[stack]");
}

static void classify(pl_report *rep, pl_thread *t, uint64_t addr, char *buf, size_t len)
{
	if (global_at(rep, t, addr, buf, len))
		return;
	const pl_map *m = pl_find_data_map(rep->s, t, addr);
	const char *name = m ? m->dso->name : NULL;
	if (!m)
		snprintf(buf, len, below_stack(rep, t, addr) ? "stack" : "(not in any map)");
	else if (!strcmp(name, "[stack]"))
		snprintf(buf, len, "stack");
	else if (!strcmp(name, "[heap]"))
		snprintf(buf, len, "heap");
	else if (!strcmp(name, "//anon") || !strncmp(name, "[anon", 5) || !*name)
		snprintf(buf, len, "anonymous memory (heap or a thread's stack)");
	else
		snprintf(buf, len, "file %s", m->dso->short_name);
}

void pl_daddr_add(pl_report *rep, pl_thread *t, const pd_sample *smp, size_t ev, uint32_t node)
{
	const pl_report_options *o = rep->opt;
	/* 0: no data address (a timer sample; --call-graph dwarf asks for
	 * PERF_SAMPLE_ADDR on every event) */
	if (!(smp->attr->sample_type & PD_SAMPLE_ADDR) || !smp->addr || !t ||
	    !(o->format == PL_FMT_DATA || (o->sort_mask & PL_DATA_KEYS)))
		return;
	char what[1024];
	classify(rep, t, smp->addr, what, sizeof what);
	const char *key = pl_intern(rep->s, what);
	for (size_t i = nentries; i-- > 0;)
		if (entries[i].node == node && entries[i].ev == ev && entries[i].what == key) {
			entries[i].samples++;
			entries[i].period += smp->period;
			return;
		}
	if (nentries == cap_entries) {
		cap_entries = cap_entries ? 2 * cap_entries : 256;
		entries = pl_xrealloc(entries, cap_entries * sizeof *entries);
	}
	entries[nentries++] = (struct pl_daddr){ node, ev, key, 1, smp->period };
}

size_t pl_daddr_entries(const struct pl_daddr **v)
{
	*v = entries;
	return nentries;
}

void pl_daddr_free(void)
{
	free(entries);
	entries = NULL;
	nentries = cap_entries = 0;
}
