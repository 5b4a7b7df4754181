/* inline_tree.c - the tree of subprograms, inlined calls and lexical blocks
 * of every compilation unit, and an address index over it.
 *
 * Owns m->inl.  One walk over .debug_info builds:
 *
 *   - a node per DW_TAG_subprogram with code (depth 0), per
 *     DW_TAG_inlined_subroutine (depth = 1 + its caller's), and per lexical
 *     block with code (kept for later stages; they are not in the index and
 *     are skipped by the parent links of subprogram/inlined nodes, so that
 *     walking ->parent from any indexed node gives exactly the inline chain);
 *   - the list of subprograms with their address ranges (m->inl.subs), from
 *     which procs.c builds the procedures without walking the DWARF again;
 *   - the index: sorted, non-overlapping segments, each naming the deepest
 *     subprogram/inlined node covering it, so a lookup is one binary search;
 *   - the lines of local variables' and labels' declarations (ix->vars,
 *     ix->labels), for naming a loop from DWARF alone (loop_line.c).
 *
 * Names follow llvm-symbolizer: the demangled linkage name (found through
 * DW_AT_abstract_origin and DW_AT_specification) when there is one, else
 * DW_AT_name.  Corrupt DWARF in one CU is warned about and that CU skipped.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "dwarf/die_order.h"
#include "dwarf/inline_tree.h"
#include "dwarf/line_files.h"
#include "dwarf/linemap.h"
#include "elf/module.h"
#include "support/base.h"
#include "support/sort.h"

#include <dwarf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Warn about this many corrupt CUs one by one, then only count them. */
#define MAX_CU_WARNINGS 3

/* An address interval of a subprogram or inlined node, for the index. */
struct ival {
	uint64_t lo, hi;
	uint32_t node;   /* index into ix->nodes */
	uint32_t depth;
};

/* The names of a subprogram as its abstract origin / specification says. */
struct origin_names {
	Dwarf_Off key;
	const char *name, *linkage_name, *decl_file;
	unsigned decl_line;
	bool noreturn;
};

struct walker {
	ls_module *m;
	struct ls_inline_index *ix;
	uint64_t shift;               /* link-time address = DWARF address - shift */
	size_t cap_nodes, cap_subs;
	struct ival *ivals;
	size_t nivals, cap_ivals;

	/* The CU being walked. */
	Dwarf_Die cudie;
	const char *comp_dir;
	Dwarf_Files *files;           /* NULL until read (FILES_READ) or if unreadable */
	size_t nfiles;
	bool files_read;
	struct ls_line_files header_files; /* the same table, from the header alone */
	bool header_files_read, header_files_ok;
	const char **file_names;      /* resolved lazily, per file index */
	size_t cap_file_names;
	bool bad;                     /* the CU turned out corrupt */
	const char *why;              /* why, when libdw did not say (NULL: dwarf_errmsg) */
	bool plain_c;                 /* C: no functions inside types */

	/* Cache of origin names: inlined copies of one function share them. */
	struct origin_names *cache;
	size_t ncache_slots, ncache;

	ls_range *ranges;             /* scratch */
	size_t cap_ranges;

	/* Per subprogram in ix->subs: the nodes of its subtree, [first,
	 * end) of ix->nodes, for dropping a duplicate (see drop_duplicates). */
	struct sub_nodes { uint32_t first, end; } *sub_nodes;
	size_t cap_sub_nodes;
	size_t cap_vars, cap_labels;
	struct ls_die_memo *die_memo; /* die_order.c's, for every unit */
	struct ls_die_unit unit;      /* the unit being walked, for die_order.c */
	bool unit_fast;               /* UNIT is known: die_order.c reads its DIEs */
};

/* The attributes the walk reads, all read in one pass over a DIE
 * (ls_die_attrs): one dwarf_attr each walked the DIE's abbreviation and
 * attributes again, several times per DIE (dwarf_ranges alone asks for
 * high_pc, low_pc, then low_pc again). */
enum die_attr {
	A_LOW_PC, A_HIGH_PC, A_RANGES, A_ENTRY_PC, A_ORIGIN, A_SPECIFICATION, A_NAME, A_LINKAGE_NAME,
	A_MIPS_LINKAGE_NAME, A_DECL_FILE, A_DECL_LINE, A_NORETURN, A_CALL_FILE, A_CALL_LINE, A_CALL_COLUMN,
	A_COUNT
};
static const unsigned die_attr_names[A_COUNT] = {
	[A_LOW_PC] = DW_AT_low_pc, [A_HIGH_PC] = DW_AT_high_pc, [A_RANGES] = DW_AT_ranges,
	[A_ENTRY_PC] = DW_AT_entry_pc, [A_ORIGIN] = DW_AT_abstract_origin,
	[A_SPECIFICATION] = DW_AT_specification, [A_NAME] = DW_AT_name,
	[A_LINKAGE_NAME] = DW_AT_linkage_name, [A_MIPS_LINKAGE_NAME] = DW_AT_MIPS_linkage_name,
	[A_DECL_FILE] = DW_AT_decl_file, [A_DECL_LINE] = DW_AT_decl_line, [A_NORETURN] = DW_AT_noreturn,
	[A_CALL_FILE] = DW_AT_call_file, [A_CALL_LINE] = DW_AT_call_line, [A_CALL_COLUMN] = DW_AT_call_column,
};
/* What dwarf_attr would give for each, .valp NULL for none. */
struct die_attrs {
	Dwarf_Attribute a[A_COUNT];
	bool by_libdw;                /* read by dwarf_attr: die_order.c could not */
};

/* The unit's file table the way libdw 0.188 gives it, when LF cannot:
 * a malformed header, or a file a DW_LNE_define_file made. */
static bool read_libdw_files(struct walker *w)
{
	if (!w->files_read) {
		w->files_read = true;
		if (dwarf_getsrcfiles(&w->cudie, &w->files, &w->nfiles) != 0) {
			w->files = NULL;
			w->nfiles = 0;
		}
	}
	return w->files != NULL;
}

static const char *cu_file(struct walker *w, Dwarf_Word idx)
{
	/* Read when first needed, and from the line program header alone
	 * (line_files.c): libdw 0.188 decodes the unit's whole line program
	 * for its file table, which a unit without functions (an assembler
	 * source) never needs here -- nor, on demand, the line map unless its
	 * code is analyzed. */
	if (!w->header_files_read) {
		w->header_files_read = true;
		w->header_files_ok = ls_line_files_read(&w->cudie, &w->header_files);
	}
	bool from_header = w->header_files_ok && idx < w->header_files.nfiles;
	if (!from_header && (!read_libdw_files(w) || idx >= w->nfiles))
		return NULL;
	if (idx >= w->cap_file_names) {
		size_t old = w->cap_file_names;
		w->file_names = ls_grow(w->file_names, &w->cap_file_names, idx + 1, sizeof *w->file_names);
		memset(w->file_names + old, 0, (w->cap_file_names - old) * sizeof *w->file_names);
	}
	if (!w->file_names[idx]) {
		const char *f = from_header
			? ls_line_file_path(&w->m->strings, &w->header_files, idx, w->comp_dir)
			: ls_cu_file_path(&w->m->strings, w->files, idx, w->comp_dir);
		if (!f)
			return NULL;
		w->file_names[idx] = f;
	}
	return w->file_names[idx];
}

static int die_attr_slot(unsigned name)
{
	switch (name) {
	case DW_AT_low_pc: return A_LOW_PC;
	case DW_AT_high_pc: return A_HIGH_PC;
	case DW_AT_ranges: return A_RANGES;
	case DW_AT_entry_pc: return A_ENTRY_PC;
	case DW_AT_abstract_origin: return A_ORIGIN;
	case DW_AT_specification: return A_SPECIFICATION;
	case DW_AT_name: return A_NAME;
	case DW_AT_linkage_name: return A_LINKAGE_NAME;
	case DW_AT_MIPS_linkage_name: return A_MIPS_LINKAGE_NAME;
	case DW_AT_decl_file: return A_DECL_FILE;
	case DW_AT_decl_line: return A_DECL_LINE;
	case DW_AT_noreturn: return A_NORETURN;
	case DW_AT_call_file: return A_CALL_FILE;
	case DW_AT_call_line: return A_CALL_LINE;
	case DW_AT_call_column: return A_CALL_COLUMN;
	default: return -1;
	}
}

/* DIE's attributes of interest into DA: the first of each name, as
 * dwarf_attr finds it. */
static void read_attrs(struct walker *w, Dwarf_Die *die, struct die_attrs *da)
{
	Dwarf_Attribute all[LS_DIE_MAX_ATTRS];
	int n = w->unit_fast ? ls_die_attrs(&w->unit, die, all) : -1;
	for (int k = 0; k < A_COUNT; k++)
		da->a[k].valp = NULL; /* none (the rest is only read when there is one) */
	da->by_libdw = false;
	if (n < 0) { /* another unit, or data die_order.c does not know: libdw's way */
		for (int k = 0; k < A_COUNT; k++)
			if (!dwarf_attr(die, die_attr_names[k], &da->a[k]))
				da->a[k].valp = NULL;
		da->by_libdw = true;
		return;
	}
	for (int i = 0; i < n; i++) {
		int k = die_attr_slot(all[i].code);
		if (k >= 0 && !da->a[k].valp)
			da->a[k] = all[i];
	}
}

static Dwarf_Attribute *has_attr(struct die_attrs *da, enum die_attr k)
{
	return da->a[k].valp ? &da->a[k] : NULL;
}

/* dwarf_attr_integrate for the attributes WANT of DIE (whose own are DA)
 * at once: OUT gets each from the first DIE that has it in the chain DIE
 * -> DW_AT_abstract_origin (else DW_AT_specification) -> ..., at most 16
 * links, as libdw 0.188 follows it; each DIE of the chain read once. */
static void integrate_attrs(struct walker *w, Dwarf_Die *die, const struct die_attrs *da,
                            const enum die_attr *want, size_t nwant, struct die_attrs *out)
{
	struct die_attrs linked_attrs;
	const struct die_attrs *cur = da;
	Dwarf_Die link = { 0 };
	bool linked = false;
	for (size_t i = 0; i < nwant; i++)
		out->a[want[i]].valp = NULL;
	for (int chain = 16;;) {
		bool missing = false;
		for (size_t i = 0; i < nwant; i++) {
			if (!out->a[want[i]].valp)
				out->a[want[i]] = cur->a[want[i]];
			missing |= !out->a[want[i]].valp;
		}
		if (!missing)
			return;
		const Dwarf_Attribute *ref = cur->a[A_ORIGIN].valp ? &cur->a[A_ORIGIN] : NULL;
		if (!ref && cur->a[A_SPECIFICATION].valp)
			ref = &cur->a[A_SPECIFICATION];
		if (!ref)
			break;
		Dwarf_Attribute r = *ref;
		if (!dwarf_formref_die(&r, &link))
			return;
		linked = true;
		if (chain-- == 0)
			break;
		read_attrs(w, &link, &linked_attrs);
		cur = &linked_attrs;
	}
	/* The chain ended on a unit's DIE: libdw then asks a split unit's
	 * skeleton.  Never seen in practice; libdw's own way, to be exact. */
	Dwarf_Die cu_die;
	if (linked && dwarf_cu_die(link.cu, &cu_die, NULL, NULL, NULL, NULL, NULL, NULL) && cu_die.addr == link.addr)
		for (size_t i = 0; i < nwant; i++)
			if (!out->a[want[i]].valp && !dwarf_attr_integrate(die, die_attr_names[want[i]], &out->a[want[i]]))
				out->a[want[i]].valp = NULL;
}

static struct origin_names *cache_slot(struct walker *w, Dwarf_Off key)
{
	if ((w->ncache + 1) * 2 > w->ncache_slots) {
		size_t n = w->ncache_slots ? w->ncache_slots * 2 : 1024;
		struct origin_names *slots = ls_xcalloc(n, sizeof *slots);
		for (size_t i = 0; i < w->ncache_slots; i++) {
			if (!w->cache[i].name)
				continue;
			size_t j = (w->cache[i].key * 0x9E3779B97F4A7C15ull >> 20) & (n - 1);
			while (slots[j].name)
				j = (j + 1) & (n - 1);
			slots[j] = w->cache[i];
		}
		free(w->cache);
		w->cache = slots;
		w->ncache_slots = n;
	}
	size_t j = (key * 0x9E3779B97F4A7C15ull >> 20) & (w->ncache_slots - 1);
	while (w->cache[j].name && w->cache[j].key != key)
		j = (j + 1) & (w->ncache_slots - 1);
	return &w->cache[j];
}

/* DW_AT_decl_file A (found through origins), resolved in the file table of the CU
 * that holds the attribute.  Not dwarf_decl_file: libdw 0.188 takes file
 * index 0 for "none", but in DWARF 5 it is the primary source file, and
 * clang uses it. */
static const char *decl_file(struct walker *w, Dwarf_Attribute *a)
{
	Dwarf_Word idx;
	if (!a->valp || dwarf_formudata(a, &idx) != 0)
		return NULL;
	if (a->cu == w->cudie.cu)
		return cu_file(w, idx);
	/* An origin in another unit (dwz partial units, LTO). */
	Dwarf_Die cudie;
	Dwarf_Files *files;
	size_t nfiles;
	if (!dwarf_cu_die(a->cu, &cudie, NULL, NULL, NULL, NULL, NULL, NULL) ||
	    dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	Dwarf_Attribute ca;
	const char *dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &ca));
	return ls_cu_file_path(&w->m->strings, files, idx, dir ? dir : w->comp_dir);
}

/* The declaration line of integrated attributes IA, 0 if none (as
 * dwarf_decl_line answers). */
static unsigned decl_line(struct die_attrs *ia)
{
	Dwarf_Word line;
	if (!has_attr(ia, A_DECL_LINE) || dwarf_formudata(&ia->a[A_DECL_LINE], &line) != 0 || line > INT_MAX)
		return 0;
	return (unsigned)line;
}

/* Name, linkage name, declaration and noreturn of DIE (its attributes
 * DA), through its abstract origin and specification chains. */
static struct origin_names resolve_names(struct walker *w, Dwarf_Die *die, struct die_attrs *da)
{
	Dwarf_Die origin;
	Dwarf_Off key = 0;
	struct origin_names *slot = NULL;
	/* Cache only by abstract origin: that is what inlined copies share,
	 * and the answer does not depend on the referring DIE. */
	if (has_attr(da, A_ORIGIN) && dwarf_formref_die(&da->a[A_ORIGIN], &origin)) {
		key = dwarf_dieoffset(&origin) + 1;
		slot = cache_slot(w, key);
		if (slot->name)
			return *slot;
	}
	static const enum die_attr want[] = {
		A_LINKAGE_NAME, A_MIPS_LINKAGE_NAME, A_NAME, A_DECL_FILE, A_DECL_LINE, A_NORETURN,
	};
	struct die_attrs ia;
	integrate_attrs(w, die, da, want, sizeof want / sizeof *want, &ia);
	struct origin_names r = { .key = key };
	const char *linkage = has_attr(&ia, A_LINKAGE_NAME) ? dwarf_formstring(&ia.a[A_LINKAGE_NAME]) : NULL;
	if (!linkage && has_attr(&ia, A_MIPS_LINKAGE_NAME))
		linkage = dwarf_formstring(&ia.a[A_MIPS_LINKAGE_NAME]);
	const char *name = has_attr(&ia, A_NAME) ? dwarf_formstring(&ia.a[A_NAME]) : NULL;
	struct ls_strtab *t = &w->m->strings;
	if (linkage) {
		char *d = ls_demangle(linkage);
		r.name = ls_intern(t, d ? d : linkage);
		free(d);
		r.linkage_name = ls_intern(t, linkage);
	} else {
		r.name = ls_intern(t, name ? name : "??");
	}
	r.decl_file = decl_file(w, &ia.a[A_DECL_FILE]);
	r.decl_line = decl_line(&ia);
	bool flag = false;
	if (has_attr(&ia, A_NORETURN) && dwarf_formflag(&ia.a[A_NORETURN], &flag) == 0)
		r.noreturn = flag;
	if (slot)
		*slot = r;
	if (slot)
		w->ncache++;
	return r;
}

/* dwarf_ranges(DIE, OFF, ...), the usual single range (low_pc/high_pc)
 * from DIE's attributes DA as libdw 0.188 reads it, without reading them
 * again; a DIE that has none has no ranges either (DIE is never a unit's,
 * whose ranges may come from its skeleton). */
static ptrdiff_t next_range(Dwarf_Die *die, struct die_attrs *da, ptrdiff_t off, Dwarf_Addr *base,
                            Dwarf_Addr *start, Dwarf_Addr *end)
{
	if (off == 1)
		return 0; /* the single range was given */
	if (off == 0) {
		Dwarf_Attribute *lo = has_attr(da, A_LOW_PC), *hi = has_attr(da, A_HIGH_PC);
		Dwarf_Word len;
		if (lo && hi && dwarf_formaddr(lo, start) == 0) {
			if (dwarf_formaddr(hi, end) == 0)
				return 1;
			if (dwarf_formudata(hi, &len) == 0) {
				*end = *start + len; /* DWARF 4: high_pc as the length */
				return 1;
			}
		}
		if (!has_attr(da, A_RANGES))
			return 0;
	}
	return dwarf_ranges(die, off, base, start, end);
}

/* The code ranges of DIE, as link-time addresses, sorted; ranges outside
 * every text section are dropped (discarded COMDAT or --gc-sections code
 * keeps its DWARF at address 0) and ranges are clamped to their section.
 * *ENTRY gets the entry: DW_AT_entry_pc/low_pc, else the first range in
 * DWARF order (gcc lists the hot part of a split function first). */
static size_t die_ranges(struct walker *w, Dwarf_Die *die, struct die_attrs *da, uint64_t *entry)
{
	size_t n = 0;
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	bool first = true;
	uint64_t first_lo = 0;
	while ((off = next_range(die, da, off, &base, &start, &end)) > 0) {
		if (end <= start)
			continue;
		uint64_t lo = start - w->shift, hi = end - w->shift;
		const struct ls_text *t = ls_text_find(w->m, lo);
		if (!t)
			continue;
		if (hi > t->addr + t->size || hi < lo)
			hi = t->addr + t->size;
		if (first) {
			first_lo = lo;
			first = false;
		}
		w->ranges = ls_grow(w->ranges, &w->cap_ranges, n + 1, sizeof *w->ranges);
		w->ranges[n++] = (ls_range){ lo, hi };
		if (n > 100000) /* a corrupt range list */
			break;
	}
	if (off < 0 && n == 0)
		return 0;
	/* Insertion sort: there are nearly always one or two ranges. */
	for (size_t i = 1; i < n; i++) {
		ls_range r = w->ranges[i];
		size_t j = i;
		while (j > 0 && w->ranges[j - 1].lo > r.lo) {
			w->ranges[j] = w->ranges[j - 1];
			j--;
		}
		w->ranges[j] = r;
	}
	if (entry && n) {
		Dwarf_Addr e;
		*entry = first_lo;
		/* dwarf_entrypc */
		Dwarf_Attribute *a = has_attr(da, A_ENTRY_PC);
		if (!a)
			a = has_attr(da, A_LOW_PC);
		if (a && dwarf_formaddr(a, &e) == 0) {
			uint64_t el = e - w->shift;
			for (size_t i = 0; i < n; i++)
				if (el >= w->ranges[i].lo && el < w->ranges[i].hi)
					*entry = el;
		}
	}
	return n;
}

static struct ls_inl_node *new_node(struct walker *w, enum ls_inl_kind kind, Dwarf_Die *die)
{
	struct ls_inline_index *ix = w->ix;
	struct ls_inl_node *n = ls_arena_alloc(&ix->arena, sizeof *n);
	n->kind = kind;
	n->die = dwarf_dieoffset(die);
	ix->nodes = ls_grow(ix->nodes, &w->cap_nodes, ix->nnodes + 1, sizeof *ix->nodes);
	ix->nodes[ix->nnodes++] = n;
	return n;
}

static void add_ivals(struct walker *w, size_t nr, uint32_t depth)
{
	for (size_t i = 0; i < nr; i++) {
		w->ivals = ls_grow(w->ivals, &w->cap_ivals, w->nivals + 1, sizeof *w->ivals);
		w->ivals[w->nivals++] = (struct ival){
			.lo = w->ranges[i].lo, .hi = w->ranges[i].hi,
			.node = (uint32_t)(w->ix->nnodes - 1), .depth = depth,
		};
	}
}

/* A local variable's or a label's declaration line, kept in ix->vars or
 * ix->labels; a label needs an address in a text section. */
static void add_decl(struct walker *w, Dwarf_Die *die, const struct ls_inl_node *scope, bool label)
{
	struct ls_inline_index *ix = w->ix;
	Dwarf_Addr pc = 0;
	uint64_t addr = 0;
	struct die_attrs da, ia;
	read_attrs(w, die, &da);
	if (label) {
		if (!has_attr(&da, A_LOW_PC) || dwarf_formaddr(&da.a[A_LOW_PC], &pc) != 0) /* dwarf_lowpc */
			return;
		addr = pc - w->shift;
		if (!ls_text_find(w->m, addr))
			return;
	}
	static const enum die_attr want[] = { A_DECL_LINE, A_DECL_FILE };
	integrate_attrs(w, die, &da, want, 2, &ia);
	unsigned line = decl_line(&ia);
	if (!line)
		return;
	const char *file = decl_file(w, &ia.a[A_DECL_FILE]);
	if (!file)
		return;
	struct ls_decl_line d = { file, line, addr, scope && scope->kind == LS_INL_LEXICAL ? scope->lo : 0 };
	if (label) {
		ix->labels = ls_grow(ix->labels, &w->cap_labels, ix->nlabels + 1, sizeof *ix->labels);
		ix->labels[ix->nlabels++] = d;
	} else {
		ix->vars = ls_grow(ix->vars, &w->cap_vars, ix->nvars + 1, sizeof *ix->vars);
		ix->vars[ix->nvars++] = d;
	}
}

/* Makes the node(s) of one DIE, CHILD.  FUNC is the innermost
 * subprogram/inlined node around it (NULL outside functions), SCOPE the
 * innermost node of any kind.  Returns whether its children are to be
 * walked, with *DFUNC and *DSCOPE for them. */
static bool visit_die(struct walker *w, Dwarf_Die *die, struct ls_inl_node *func, struct ls_inl_node *scope,
		      struct ls_inl_node **dfunc, struct ls_inl_node **dscope)
{
	Dwarf_Die *child = die; /* not a copy: libdw fills in its abbreviation for the walk */
	bool descend = false;
	struct die_attrs da;
	{
		int tag = dwarf_tag(child);
		switch (tag) {
		case DW_TAG_subprogram: {
			uint64_t entry = 0;
			read_attrs(w, child, &da);
			size_t nr = die_ranges(w, child, &da, &entry);
			if (nr == 0) {
				/* A declaration or abstract instance: no code, but in
				 * C++ a local class's methods may be defined inside. */
				if (!w->plain_c)
					*dfunc = NULL, *dscope = NULL, descend = true;
				break;
			}
			struct origin_names on = resolve_names(w, child, &da);
			struct ls_inl_node *n = new_node(w, LS_INL_SUBPROGRAM, child);
			n->name = on.name;
			n->linkage_name = on.linkage_name;
			n->decl_file = on.decl_file;
			n->decl_line = on.decl_line;
			add_ivals(w, nr, 0);
			struct ls_inline_index *ix = w->ix;
			ix->subs = ls_grow(ix->subs, &w->cap_subs, ix->nsubs + 1, sizeof *ix->subs);
			ls_range *rs = ls_arena_alloc(&ix->arena, nr * sizeof *rs);
			memcpy(rs, w->ranges, nr * sizeof *rs);
			ix->subs[ix->nsubs++] = (struct ls_inl_sub){
				.node = n, .ranges = rs, .nranges = nr, .entry = entry, .noreturn = on.noreturn,
			};
			*dfunc = n, *dscope = n, descend = true;
			/* Its nodes run from N to wherever the walk leaves its
			 * subtree: walk_children closes the range. */
			w->sub_nodes = ls_grow(w->sub_nodes, &w->cap_sub_nodes, ix->nsubs, sizeof *w->sub_nodes);
			w->sub_nodes[ix->nsubs - 1] = (struct sub_nodes){ (uint32_t)(ix->nnodes - 1), UINT32_MAX };
			break;
		}
		case DW_TAG_inlined_subroutine: {
			if (!func)
				break;
			read_attrs(w, child, &da);
			size_t nr = die_ranges(w, child, &da, NULL);
			if (nr == 0)
				break; /* no code of its own left: its children have none either */
			struct origin_names on = resolve_names(w, child, &da);
			struct ls_inl_node *n = new_node(w, LS_INL_INLINED, child);
			n->parent = func;
			n->block = scope && scope->kind == LS_INL_LEXICAL ? scope : NULL;
			n->depth = func->depth + 1;
			n->name = on.name;
			n->linkage_name = on.linkage_name;
			n->decl_file = on.decl_file;
			n->decl_line = on.decl_line;
			Dwarf_Word v;
			if (has_attr(&da, A_CALL_FILE) && dwarf_formudata(&da.a[A_CALL_FILE], &v) == 0)
				n->call_file = cu_file(w, v);
			if (has_attr(&da, A_CALL_LINE) && dwarf_formudata(&da.a[A_CALL_LINE], &v) == 0)
				n->call_line = (unsigned)v;
			if (has_attr(&da, A_CALL_COLUMN) && dwarf_formudata(&da.a[A_CALL_COLUMN], &v) == 0)
				n->call_column = (unsigned)v;
			add_ivals(w, nr, n->depth);
			*dfunc = n, *dscope = n, descend = true;
			break;
		}
		case DW_TAG_lexical_block: {
			struct ls_inl_node *inner = scope;
			if (func)
				read_attrs(w, child, &da);
			/* as dwarf_hasattr answers: from the abbreviation, even
			 * when the DIE's values cannot be read */
			if (func && (da.by_libdw ? dwarf_hasattr(child, DW_AT_low_pc) + dwarf_hasattr(child, DW_AT_ranges)
			                         : has_attr(&da, A_LOW_PC) || has_attr(&da, A_RANGES))) {
				struct ls_inl_node *n = new_node(w, LS_INL_LEXICAL, child);
				if (die_ranges(w, child, &da, NULL))
					n->lo = w->ranges[0].lo;
				n->parent = scope;
				n->depth = func->depth;
				n->name = func->name;
				inner = n;
			}
			*dfunc = func, *dscope = inner, descend = true;
			break;
		}
		case DW_TAG_variable:
		case DW_TAG_label:
			if (func)
				add_decl(w, child, scope, tag == DW_TAG_label);
			break;
		/* Containers that may hold function definitions (not in C). */
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_interface_type:
			if (!w->plain_c)
				*dfunc = NULL, *dscope = NULL, descend = true;
			break;
		default:
			break;
		}
	}
	return descend;
}

/* Walks the DIEs below DIE in DIE order, depth first.  The nesting is
 * followed on an explicit stack, not by recursion: valid DWARF may nest
 * thousands of DIEs deep (generated code, deep lexical blocks), and only
 * memory bounds how deep.  A DIE's sibling is found once its subtree is
 * walked, one byte past the terminator of its children (die_order.c), not
 * by dwarf_siblingof before: without DW_AT_sibling (clang) libdw scans the
 * subtree to find it, and N nested DIEs cost N^2. */
static void walk_children(struct walker *w, Dwarf_Die *die)
{
	struct frame {
		Dwarf_Die die;               /* the DIE being walked at this level */
		struct ls_inl_node *func, *scope;
		size_t depth;                /* of the DIEs at this level */
		bool walked;                 /* DIE visited; its children (if any) done */
		const unsigned char *kids_end; /* its children's terminator; NULL: not known */
	} *stack = NULL;
	size_t n = 0, cap = 0;
	Dwarf_Die child;
	int rc = dwarf_child(die, &child);
	if (rc < 0)
		w->bad = true;
	if (rc != 0)
		return;
	struct ls_die_unit *unit = &w->unit;
	bool fast = w->unit_fast = ls_die_unit_init(unit, die, w->die_memo);
	/* Subprograms whose subtree the walk is in, with the depth of their
	 * DIE: nodes are made in DIE order, so a subprogram's nodes end where
	 * the walk next visits a DIE at its depth or above. */
	struct open_sub { size_t sub, depth; } *open = NULL;
	size_t nopen = 0, cap_open = 0;
	struct ls_inline_index *ix = w->ix;
	stack = ls_grow(stack, &cap, 1, sizeof *stack);
	stack[n++] = (struct frame){ .die = child, .depth = 1 };
	while (n && !w->bad) {
		struct frame *f = &stack[n - 1];
		const unsigned char *end = NULL; /* just past f->die's subtree */
		if (f->walked) {
			end = f->kids_end ? f->kids_end + 1 : NULL;
		} else {
			struct ls_inl_node *dfunc = NULL, *dscope = NULL;
			size_t depth = f->depth;
			for (; nopen && open[nopen - 1].depth >= depth; nopen--)
				w->sub_nodes[open[nopen - 1].sub].end = (uint32_t)ix->nnodes;
			size_t nsubs = ix->nsubs;
			bool descend = visit_die(w, &f->die, f->func, f->scope, &dfunc, &dscope);
			if (w->bad)
				break;
			if (ix->nsubs > nsubs) {
				open = ls_grow(open, &cap_open, nopen + 1, sizeof *open);
				open[nopen++] = (struct open_sub){ ix->nsubs - 1, depth };
			}
			f->walked = true;
			rc = !descend ? 1 : fast ? ls_die_child(unit, &f->die, &child) : dwarf_child(&f->die, &child);
			if (rc < 0) {
				w->bad = true;
				break;
			}
			if (rc == 0) {
				stack = ls_grow(stack, &cap, n + 1, sizeof *stack);
				stack[n++] = (struct frame){ .die = child, .func = dfunc, .scope = dscope,
				                             .depth = depth + 1 };
				continue;
			}
			/* No children, or not walked: scanned once, here. */
			end = fast ? ls_die_subtree_end(unit, &f->die) : NULL;
		}
		/* This level goes on with the sibling. */
		rc = end ? ls_die_at(unit, end, &f->die) : dwarf_siblingof(&f->die, &f->die);
		if (rc < 0) {
			w->bad = true;
			if (end) /* libdw was not asked: its last error is another DIE's */
				w->why = "a list of DIEs without its terminator";
			break;
		}
		if (rc == 0) {
			f->walked = false;
			f->kids_end = NULL;
			continue;
		}
		/* The level is done: its terminator (when known) tells where its
		 * parent's subtree ends. */
		if (--n)
			stack[n - 1].kids_end = end;
		else if (end && !ls_die_unit_rest_is_padding(unit, end + 1))
			w->bad = true, w->why = "DIEs past the end of its tree"; /* zeros cut it short */
	}
	for (; nopen; nopen--)
		w->sub_nodes[open[nopen - 1].sub].end = (uint32_t)ix->nnodes;
	free(open);
	free(stack);
}

/* The intervals by address, then node, through sort keys: made in DIE
 * order, they come in many short runs (a call's ranges nest in its
 * caller's), which ls_sort_runs merged through a comparison function.
 * Their nodes never decrease in that order, so by address, then place,
 * is by address, then node, stable. */
static void sort_ivals(struct walker *w)
{
	size_t n = w->nivals;
	if (n < 2)
		return;
	struct ls_sort_key *keys = ls_xmalloc(n * sizeof *keys);
	for (size_t i = 0; i < n; i++)
		keys[i] = (struct ls_sort_key){ .addr = w->ivals[i].lo, .pos = (uint32_t)i };
	ls_sort_keys(keys, n, false, NULL, NULL);
	struct ival *sorted = ls_xmalloc(n * sizeof *sorted);
	for (size_t i = 0; i < n; i++)
		sorted[i] = w->ivals[keys[i].pos];
	free(keys);
	free(w->ivals);
	w->ivals = sorted;
	w->cap_ivals = n;
}

/* Heap order: the deepest interval wins; among equally deep ones (bad or
 * overlapping DWARF), the one that starts later, as in the procedure index,
 * then the later DIE. */
static bool ival_above(const struct ival *a, const struct ival *b)
{
	if (a->depth != b->depth)
		return a->depth > b->depth;
	if (a->lo != b->lo)
		return a->lo > b->lo;
	return a->node > b->node;
}

static void heap_push(const struct ival **h, size_t *n, const struct ival *v)
{
	size_t i = (*n)++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!ival_above(v, h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = v;
}

static void heap_pop(const struct ival **h, size_t *n)
{
	const struct ival *v = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && ival_above(h[c + 1], h[c]))
			c++;
		if (!ival_above(h[c], v))
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/* Paints the intervals: every address gets the deepest node covering it. */
static void build_segments(struct walker *w)
{
	struct ls_inline_index *ix = w->ix;
	size_t n = w->nivals;
	sort_ivals(w);
	const struct ival **heap = ls_xmalloc((n + 1) * sizeof *heap);
	size_t nheap = 0, cap = 0, i = 0;
	uint64_t cur = 0;
	while (i < n || nheap) {
		if (nheap == 0)
			cur = w->ivals[i].lo;
		while (i < n && w->ivals[i].lo <= cur)
			heap_push(heap, &nheap, &w->ivals[i++]);
		while (nheap && heap[0]->hi <= cur)
			heap_pop(heap, &nheap);
		if (nheap == 0)
			continue;
		const struct ival *top = heap[0];
		uint64_t next = top->hi;
		if (i < n && w->ivals[i].lo < next)
			next = w->ivals[i].lo;
		const struct ls_inl_node *node = ix->nodes[top->node];
		struct ls_inl_seg *last = ix->nsegs ? &ix->segs[ix->nsegs - 1] : NULL;
		if (last && last->node == node && last->hi == cur) {
			last->hi = next;
		} else {
			ix->segs = ls_grow(ix->segs, &cap, ix->nsegs + 1, sizeof *ix->segs);
			ix->segs[ix->nsegs++] = (struct ls_inl_seg){ cur, next, node };
		}
		cur = next;
	}
	free(heap);
}

/* Subprograms by entry, then ranges: duplicates next to each other. */
static int cmp_sub(const void *a, const void *b, void *ctx)
{
	const struct ls_inl_sub *subs = ctx;
	const struct ls_inl_sub *x = &subs[*(const uint32_t *)a], *y = &subs[*(const uint32_t *)b];
	if (x->entry != y->entry)
		return x->entry < y->entry ? -1 : 1;
	if (x->nranges != y->nranges)
		return x->nranges < y->nranges ? -1 : 1;
	int c = memcmp(x->ranges, y->ranges, x->nranges * sizeof *x->ranges);
	if (c)
		return c;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1; /* DIE order */
}

static bool same_code(const struct ls_inl_sub *x, const struct ls_inl_sub *y)
{
	return x->entry == y->entry && x->nranges == y->nranges &&
	       memcmp(x->ranges, y->ranges, x->nranges * sizeof *x->ranges) == 0;
}

/* Two subprograms describing the very same code: a function instantiated
 * in several units (a template, an inline member function, gcc's C1/C2
 * constructors and D0/D1/D2 destructors), whose DWARF in every unit
 * names the one copy the linker kept.  Mixing their inline trees in the
 * index would give each address a node of either tree, and the procedure
 * (built from one of them) would disown the other's: inlined calls came
 * out as one [alien] frame.  Keep the first in DIE order, drop the others
 * with their subtrees. */
static void drop_duplicates(struct walker *w)
{
	struct ls_inline_index *ix = w->ix;
	size_t n = ix->nsubs;
	if (n < 2)
		return;
	uint32_t *order = ls_xmalloc(n * sizeof *order);
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof *order, cmp_sub, ix->subs);
	bool *drop_sub = ls_xcalloc(n, sizeof *drop_sub);
	size_t ndrop = 0;
	for (size_t i = 1; i < n; i++) {
		size_t j = i;
		while (j > 0 && drop_sub[order[j - 1]])
			j--; /* compare with the kept one of the run */
		if (j > 0 && same_code(&ix->subs[order[j - 1]], &ix->subs[order[i]])) {
			drop_sub[order[i]] = true;
			ndrop++;
		}
	}
	if (ndrop) {
		bool *drop_node = ls_xcalloc(ix->nnodes + 1, sizeof *drop_node);
		for (size_t i = 0; i < n; i++)
			if (drop_sub[i])
				for (uint32_t k = w->sub_nodes[i].first; k < w->sub_nodes[i].end && k < ix->nnodes; k++)
					drop_node[k] = true;
		size_t kept = 0;
		for (size_t i = 0; i < w->nivals; i++)
			if (!drop_node[w->ivals[i].node])
				w->ivals[kept++] = w->ivals[i];
		w->nivals = kept;
		kept = 0;
		for (size_t i = 0; i < n; i++)
			if (!drop_sub[i])
				ix->subs[kept++] = ix->subs[i];
		ix->nsubs = kept;
		free(drop_node);
	}
	free(drop_sub);
	free(order);
}

/* Variables by file (interned: by pointer), then line. */
static int cmp_decl_line(const void *a, const void *b)
{
	const struct ls_decl_line *x = a, *y = b;
	if (x->file != y->file)
		return (uintptr_t)x->file < (uintptr_t)y->file ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* V by cmp_decl_line's order (file, then line), or BY_ADDR by address,
 * then line; stable.  Through sort keys, as the intervals: ls_sort_runs
 * merged their many short runs through a comparison function. */
static void sort_decls(struct ls_decl_line *v, size_t n, bool by_addr)
{
	if (n < 2)
		return;
	struct ls_sort_key *keys = ls_xmalloc(n * sizeof *keys);
	for (size_t i = 0; i < n; i++)
		keys[i] = (struct ls_sort_key){ .addr = by_addr ? v[i].addr : (uintptr_t)v[i].file,
		                                .mid = v[i].line, .pos = (uint32_t)i };
	ls_sort_keys(keys, n, false, NULL, NULL);
	struct ls_decl_line *sorted = ls_xmalloc(n * sizeof *sorted);
	for (size_t i = 0; i < n; i++)
		sorted[i] = v[keys[i].pos];
	memcpy(v, sorted, n * sizeof *v);
	free(sorted);
	free(keys);
}

int ls_inline_build(ls_module *m, ls_error *err)
{
	struct ls_inline_index *ix = &m->inl;
	memset(ix, 0, sizeof *ix);
	if (!m->dwarf)
		return 0;
	Dwarf_Addr dbias = 0;
	dwfl_module_getdwarf(m->dwmod, &dbias);
	struct walker w = { .m = m, .ix = ix, .shift = m->bias - dbias, .die_memo = ls_die_memo_new() };

	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	uint8_t unit_type;
	Dwarf_Half version;
	size_t ncus = 0, nbad = 0, nmissing_dwo = 0;
	int rc;
	while ((rc = dwarf_get_units(m->dwarf, cu, &cu, &version, &unit_type, &cudie, &subdie)) == 0) {
		if (unit_type == DW_UT_skeleton) {
			if (dwarf_tag(&subdie) != DW_TAG_compile_unit) {
				/* Split DWARF whose .dwo is not there: the
				 * skeleton has the lines but no functions. */
				if (nmissing_dwo++ == 0) {
					Dwarf_Attribute a;
					const char *dwo = dwarf_formstring(dwarf_attr(&cudie, DW_AT_dwo_name, &a));
					if (!dwo)
						dwo = dwarf_formstring(dwarf_attr(&cudie, DW_AT_GNU_dwo_name, &a));
					ls_warn(&m->opt, "%s: split DWARF file %s not found: no inline frames for its code",
						m->path, dwo ? dwo : "?");
				}
				continue;
			}
			cudie = subdie;
		} else if (unit_type != DW_UT_compile) {
			continue; /* type and partial units hold no code */
		}
		ncus++;
		if (dwarf_tag(&cudie) != DW_TAG_compile_unit) {
			/* A compile unit header whose DIE cannot be read: its
			 * abbreviations are corrupt. */
			if (nbad++ < MAX_CU_WARNINGS)
				ls_warn_dwarf(&m->opt, err, "%s: corrupt DWARF: unreadable compilation unit at offset 0x%llx (%s); skipped",
					m->debug_path ? m->debug_path : m->path,
					(unsigned long long)dwarf_dieoffset(&cudie), dwarf_errmsg(-1));
			continue;
		}
		size_t mark_nodes = ix->nnodes, mark_subs = ix->nsubs, mark_ivals = w.nivals;
		size_t mark_vars = ix->nvars, mark_labels = ix->nlabels;
		w.cudie = cudie;
		w.bad = false;
		w.why = NULL;
		int lang = dwarf_srclang(&cudie);
		w.plain_c = lang == DW_LANG_C89 || lang == DW_LANG_C || lang == DW_LANG_C99 || lang == DW_LANG_C11;
		Dwarf_Attribute a;
		w.comp_dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &a));
		w.files = NULL;
		w.nfiles = 0;
		w.files_read = false; /* cu_file reads them when a name needs them */
		w.header_files_read = false;
		if (w.file_names)
			memset(w.file_names, 0, w.cap_file_names * sizeof *w.file_names);
		walk_children(&w, &cudie);
		if (w.bad) {
			/* Drop what this CU added: its nodes stay in the arena
			 * (freed with the module) but nothing points to them. */
			const char *cuname = dwarf_diename(&cudie);
			if (nbad++ < MAX_CU_WARNINGS)
				ls_warn_dwarf(&m->opt, err, "%s: corrupt DWARF in compilation unit %s at offset 0x%llx (%s); skipped",
					m->debug_path ? m->debug_path : m->path, cuname ? cuname : "?",
					(unsigned long long)dwarf_dieoffset(&cudie), w.why ? w.why : dwarf_errmsg(-1));
			ix->nnodes = mark_nodes;
			ix->nsubs = mark_subs;
			w.nivals = mark_ivals;
			ix->nvars = mark_vars;
			ix->nlabels = mark_labels;
		}
	}
	if (rc < 0) {
		ls_warn_dwarf(&m->opt, err, "%s: corrupt .debug_info after %zu compilation units (%s); %s",
			m->debug_path ? m->debug_path : m->path, ncus, dwarf_errmsg(-1),
			ncus ? "the rest is skipped" : "continuing without DWARF");
	}
	if (nbad > MAX_CU_WARNINGS)
		ls_warn(&m->opt, "%s: %zu more corrupt compilation units skipped",
			m->debug_path ? m->debug_path : m->path, nbad - MAX_CU_WARNINGS);
	if (ncus && nbad == ncus && ix->nnodes == 0) {
		/* Nothing readable at all: behave as without DWARF, so that the
		 * line map is not attempted on the same broken data. */
		ls_warn_dwarf(&m->opt, err, "%s: no readable DWARF; continuing without it",
			m->debug_path ? m->debug_path : m->path);
		m->dwarf = NULL;
	} else if (rc < 0 && ncus == 0) {
		m->dwarf = NULL;
	}
	drop_duplicates(&w);
	build_segments(&w);
	if (ix->nvars)
		sort_decls(ix->vars, ix->nvars, false);
	if (ix->nlabels)
		sort_decls(ix->labels, ix->nlabels, true);
	ls_die_memo_free(w.die_memo);
	free(w.sub_nodes);
	free(w.ivals);
	free(w.file_names);
	ls_line_files_free(&w.header_files);
	free(w.cache);
	free(w.ranges);
	return 0;
}

const struct ls_inl_node *ls_inline_find(const struct ls_inline_index *ix, uint64_t addr)
{
	size_t i = LS_FIRST_ABOVE(ix->segs, ix->nsegs, hi, addr);
	return i < ix->nsegs && ix->segs[i].lo <= addr ? ix->segs[i].node : NULL;
}

size_t ls_inline_vars_at(const struct ls_inline_index *ix, const char *file, unsigned line,
                         const struct ls_decl_line **vars)
{
	size_t lo = 0, hi = ix->nvars;
	const struct ls_decl_line key = { file, line, 0, 0 };
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_decl_line(&ix->vars[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < ix->nvars && cmp_decl_line(&ix->vars[end], &key) == 0)
		end++;
	*vars = ix->vars ? ix->vars + lo : NULL; /* none: NULL + 0 is undefined */
	return end - lo;
}

size_t ls_inline_labels_in(const struct ls_inline_index *ix, uint64_t lo, uint64_t hi,
                           const struct ls_decl_line **labels)
{
	size_t i = LS_FIRST_AT_LEAST(ix->labels, ix->nlabels, addr, lo);
	size_t j = i;
	while (j < ix->nlabels && ix->labels[j].addr < hi)
		j++;
	*labels = ix->labels ? ix->labels + i : NULL;
	return j - i;
}

void ls_inline_free(struct ls_inline_index *ix)
{
	free(ix->segs);
	free(ix->vars);
	free(ix->labels);
	free(ix->nodes);
	free(ix->subs);
	ls_arena_free(&ix->arena);
	memset(ix, 0, sizeof *ix);
}
