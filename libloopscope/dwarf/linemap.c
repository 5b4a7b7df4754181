/* linemap.c - the sanitized line table of the whole module.
 *
 * Owns m->lines: one array of rows sorted by address, built from the line
 * program of every compilation unit (DWARF 2-5, via dwarf_getsrclines).
 *
 * Sanitizing (thesis section 4.3, "Lying Liars"): rows whose address is in
 * no executable section are dropped (discarded COMDAT and --gc-sections code
 * keeps rows at address 0; some compilers emit data addresses); a sequence's
 * end is kept as a gap row (file == NULL); where several rows share an
 * address the last one wins, as addr2line and llvm-symbolizer report it
 * (the statement rows it hides are kept aside, in lm->hidden: gcc marks a
 * loop's `for (;;)` or `do` line that way); a row never extends past the
 * end of its section.  File names are made
 * absolute and normalized once per CU file-table entry, and interned.
 *
 * On demand (ls_linemap_open, ls_linemap_want): only the units that hold
 * the code being analyzed are read, the map growing as more are asked
 * for; at the addresses asked for it is the whole map's (tests/unit-dwarf
 * checks it on libc, and that with every unit read it is the whole map).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "dwarf/linemap.h"
#include "elf/module.h"
#include "support/base.h"
#include "support/sort.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

const char *ls_source_path(struct ls_strtab *t, const char *dir, const char *name)
{
	if (!name)
		return NULL;
	size_t nd = (name[0] != '/' && dir && *dir) ? strlen(dir) : 0;
	size_t nn = strlen(name);
	char stackbuf[1024];
	char *buf = nd + nn + 2 <= sizeof stackbuf ? stackbuf : ls_xmalloc(nd + nn + 2);
	char *p = buf;
	if (nd) {
		memcpy(p, dir, nd);
		p += nd;
		*p++ = '/';
	}
	memcpy(p, name, nn + 1);

	/* Lexical normalization: "//" and "/./" collapse, "x/.." cancels
	 * (without looking at the file system: the build tree may be gone,
	 * and addr2line does the same).  Written to NORM; the input is BUF. */
	size_t total = (size_t)(p - buf) + nn + 2;
	char stacknorm[1024];
	char *norm = total <= sizeof stacknorm ? stacknorm : ls_xmalloc(total);
	bool absolute = buf[0] == '/';
	char *out = norm;
	if (absolute)
		*out++ = '/';
	const char *in = buf + absolute;
	char *floor = out;              /* ".." cannot climb above this */
	while (*in) {
		const char *seg = in;
		while (*in && *in != '/')
			in++;
		size_t len = (size_t)(in - seg);
		if (*in == '/')
			in++;
		if (len == 0 || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			if (out > floor) {
				/* drop the last component written ("name/") */
				char *q = out - 1;
				while (q > floor && q[-1] != '/')
					q--;
				out = q;
				continue;
			}
			if (!absolute) {
				/* a relative path's leading ".." stays */
				memcpy(out, "../", 3);
				out += 3;
				floor = out;
			}
			continue; /* "/.." is "/" */
		}
		memcpy(out, seg, len);
		out += len;
		*out++ = '/';
	}
	if (out > norm + absolute && out[-1] == '/')
		out--;
	if (out == norm) /* "" */
		*out++ = '.';
	*out = 0;
	const char *r = ls_intern(t, norm);
	if (norm != stacknorm)
		free(norm);
	if (buf != stackbuf)
		free(buf);
	return r;
}

/* Whether NAME, a relative name dwarf_filesrc made of a file's directory
 * entry and its name, is that of a file in directory entry 0.  libdw keeps
 * no directory index, so it is read back from the name: it begins with
 * entry 0 and a slash, and with no longer entry (a subdirectory of it,
 * written out) that would claim it. */
static bool in_dir0(Dwarf_Files *files, const char *name)
{
	const char *const *dirs;
	size_t ndirs;
	if (dwarf_getsrcdirs(files, &dirs, &ndirs) != 0 || ndirs == 0 || !dirs[0] || !dirs[0][0])
		return false;
	size_t n0 = strlen(dirs[0]);
	if (strncmp(name, dirs[0], n0) != 0 || name[n0] != '/')
		return false;
	for (size_t k = 1; k < ndirs; k++) {
		size_t nk = dirs[k] ? strlen(dirs[k]) : 0;
		if (nk > n0 && strncmp(name, dirs[k], nk) == 0 && name[nk] == '/')
			return false;
	}
	return true;
}

const char *ls_cu_file_path(struct ls_strtab *t, Dwarf_Files *files, size_t idx, const char *comp_dir)
{
	const char *name = dwarf_filesrc(files, idx, NULL, NULL);
	if (!name)
		return NULL;
	/* Directory entry 0 is the compilation directory itself (DWARF 5
	 * section 6.2.4; in DWARF 2-4 libdw puts DW_AT_comp_dir there), so a
	 * file of entry 0 is already named from it.  Joined with a relative
	 * DW_AT_comp_dir once more, as glibc's "./nptl", it would be doubled:
	 * nptl/nptl/lowlevellock.c for nptl/lowlevellock.c.  (llvm-symbolizer,
	 * eu-addr2line, addr2line and GDB 13 all double it.)  Entries 1 and
	 * up are relative to the compilation directory and are joined. */
	if (name[0] != '/' && in_dir0(files, name))
		comp_dir = NULL;
	return ls_source_path(t, comp_dir, name);
}

/* A row while the table is built: SEQ orders rows of one address. */
struct raw_row {
	uint64_t addr;
	const char *file;    /* NULL: end of sequence */
	uint32_t line;
	uint16_t column;
	uint16_t flags;
	uint64_t order;      /* position in the CU's table, across CUs */
};
/* In raw_row.flags: a row at the very address where its CU's previous
 * sequence ended.  libdw sorts an end_sequence before a row at the same
 * address, so a zero-length row just before its own end of sequence looks
 * like the start of another sequence (glibc's cold parts have them); a
 * real row from another CU at that address must win over it. */
#define RAW_AFTER_END 0x8000

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_row *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* At one address an end of sequence comes first, so that the row
	 * starting the next sequence there wins. */
	if ((x->file == NULL) != (y->file == NULL))
		return x->file == NULL ? -1 : 1;
	if ((x->flags & RAW_AFTER_END) != (y->flags & RAW_AFTER_END))
		return x->flags & RAW_AFTER_END ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

struct run {
	size_t start, len;
};

static int cmp_run(const void *a, const void *b, void *ctx)
{
	const struct raw_row *raw = ctx;
	const struct run *x = a, *y = b;
	return cmp_raw(&raw[x->start], &raw[y->start]);
}

/* Sorts the rows by cmp_raw.  libdw hands each CU's rows sorted, and a
 * sequence is contiguous code, so: sort each run (sequence) if needed,
 * order the runs by their first row and append them; a run that starts
 * before the end of what is already out (an overlapping or stray sequence:
 * glibc has a few) is merged into the tail.  For libc this turns a
 * 200k-row merge sort into a copy and a dozen small merges; a pathological
 * table falls back to a full sort. */
static struct raw_row *sort_rows(struct raw_row *raw, size_t nraw, struct run *runs, size_t nruns)
{
	if (nraw < 2)
		return raw;
	for (size_t i = 0; i < nruns; i++) {
		struct raw_row *r = raw + runs[i].start;
		for (size_t k = 1; k < runs[i].len; k++)
			if (cmp_raw(&r[k - 1], &r[k]) > 0) {
				ls_sort_runs(r, runs[i].len, sizeof *r, cmp_raw);
				break;
			}
	}
	if (nruns > 1)
		qsort_r(runs, nruns, sizeof *runs, cmp_run, raw);
	struct raw_row *out = ls_xmalloc(nraw * sizeof *out);
	struct raw_row *tmp = NULL;
	size_t n = 0, cap_tmp = 0, merged = 0;
	for (size_t i = 0; i < nruns; i++) {
		const struct raw_row *r = raw + runs[i].start;
		size_t len = runs[i].len;
		if (n == 0 || cmp_raw(&out[n - 1], &r[0]) <= 0) {
			memcpy(out + n, r, len * sizeof *out);
			n += len;
			continue;
		}
		/* The first row of OUT after r[0]; merge OUT[p..n) with R. */
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (cmp_raw(&out[mid], &r[0]) <= 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		size_t p = lo, tail = n - p;
		merged += tail + len;
		if (merged > 4 * nraw + 1024) {
			/* quadratic territory: sort everything at once */
			for (size_t j = i; j < nruns; j++) {
				memcpy(out + n, raw + runs[j].start, runs[j].len * sizeof *out);
				n += runs[j].len;
			}
			ls_sort_runs(out, n, sizeof *out, cmp_raw);
			break;
		}
		tmp = ls_grow(tmp, &cap_tmp, tail, sizeof *tmp);
		memcpy(tmp, out + p, tail * sizeof *tmp);
		size_t a = 0, b = 0, w = p;
		while (a < tail && b < len)
			out[w++] = cmp_raw(&tmp[a], &r[b]) <= 0 ? tmp[a++] : r[b++];
		while (a < tail)
			out[w++] = tmp[a++];
		while (b < len)
			out[w++] = r[b++];
		n = w;
	}
	free(tmp);
	free(raw);
	return out;
}

/* The rows of every CU as read, before sorting. */
struct raw_rows {
	struct raw_row *v;
	size_t n, cap;
	struct run *runs;               /* each CU's rows */
	size_t nruns, cap_runs;
	const char **names;             /* per file index of the current CU */
	size_t cap_names;
	uint64_t order;
};

/* Row L's file, made absolute against COMP_DIR, from the per-CU cache. */
static const char *row_file(ls_module *m, struct raw_rows *rr, Dwarf_Line *l, const char *comp_dir)
{
	Dwarf_Files *files;
	size_t idx;
	const char *file = NULL;
	if (dwarf_line_file(l, &files, &idx) == 0) {
		if (idx >= rr->cap_names) {
			size_t old = rr->cap_names;
			rr->names = ls_grow(rr->names, &rr->cap_names, idx + 1, sizeof *rr->names);
			memset(rr->names + old, 0, (rr->cap_names - old) * sizeof *rr->names);
		}
		if (!rr->names[idx])
			rr->names[idx] = ls_cu_file_path(&m->strings, files, idx, comp_dir);
		file = rr->names[idx];
	}
	return file ? file : ls_intern(&m->strings, "??");
}

/* Appends the rows of one CU's line table (NLINES LINES) to RR, one run
 * per sequence. */
static void read_cu_rows(ls_module *m, struct raw_rows *rr, Dwarf_Lines *lines, size_t nlines,
                         const char *comp_dir, uint64_t shift)
{
	if (rr->cap_names)
		memset(rr->names, 0, rr->cap_names * sizeof *rr->names);
	const struct ls_text *text = NULL;
	size_t run_start = rr->n;
	for (size_t i = 0; i < nlines; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr da;
		if (!l || dwarf_lineaddr(l, &da) != 0)
			continue;
		uint64_t addr = da - shift;
		bool end = false;
		dwarf_lineendsequence(l, &end);
		/* The section of this row: an end of sequence may sit
		 * just past the end of its section. */
		if (!text || addr < text->addr || addr - text->addr > text->size ||
		    (!end && addr - text->addr == text->size))
			text = ls_text_find(m, end && addr ? addr - 1 : addr);
		if (!text)
			continue;
		rr->v = ls_grow(rr->v, &rr->cap, rr->n + 1, sizeof *rr->v);
		struct raw_row *r = &rr->v[rr->n++];
		*r = (struct raw_row){ .addr = addr, .order = rr->order++ };
		if (end)
			continue;
		int line = 0, col = 0;
		bool stmt = false;
		dwarf_lineno(l, &line);
		dwarf_linecol(l, &col);
		dwarf_linebeginstatement(l, &stmt);
		r->file = row_file(m, rr, l, comp_dir);
		r->line = line > 0 ? (uint32_t)line : 0;
		r->column = col > 0 && col <= 0xffff ? (uint16_t)col : 0;
		r->flags = stmt ? LS_LINE_IS_STMT : 0;
		if (rr->n - 1 > run_start && !r[-1].file && r[-1].addr == addr)
			r->flags |= RAW_AFTER_END;
	}
	/* One run per sequence: a sequence is contiguous code, while
	 * a CU's rows span its hot and cold sections, which other
	 * CUs' rows interleave. */
	for (size_t k = run_start; k < rr->n; k++) {
		if (k + 1 < rr->n && rr->v[k].file)
			continue;
		rr->runs = ls_grow(rr->runs, &rr->cap_runs, rr->nruns + 1, sizeof *rr->runs);
		rr->runs[rr->nruns++] = (struct run){ run_start, k + 1 - run_start };
		run_start = k + 1;
	}
}

/* 1. The rows of every CU's line table, in table order. */
static void read_rows(ls_module *m, struct raw_rows *rr, ls_error *err)
{
	Dwarf_Addr dbias = 0;
	dwfl_module_getdwarf(m->dwmod, &dbias);
	uint64_t shift = m->bias - dbias;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	uint8_t unit_type;
	Dwarf_Half version;
	int rc;
	while ((rc = dwarf_get_units(m->dwarf, cu, &cu, &version, &unit_type, &cudie, &subdie)) == 0) {
		/* A skeleton's line table is its own, whether or not its .dwo
		 * was found. */
		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton)
			continue;
		int tag = dwarf_tag(&cudie);
		if (tag != DW_TAG_compile_unit && tag != DW_TAG_skeleton_unit)
			continue;
		Dwarf_Lines *lines;
		size_t nlines;
		if (dwarf_getsrclines(&cudie, &lines, &nlines) != 0) {
			/* A CU without a line program is normal (no code); one
			 * whose program cannot be read is worth a warning. */
			if (dwarf_hasattr(&cudie, DW_AT_stmt_list)) {
				const char *cuname = dwarf_diename(&cudie);
				ls_warn_dwarf(&m->opt, err, "%s: unreadable line table of %s (%s); its lines are unknown",
					m->debug_path ? m->debug_path : m->path, cuname ? cuname : "?",
					dwarf_errmsg(-1));
			}
			continue;
		}
		Dwarf_Attribute a;
		read_cu_rows(m, rr, lines, nlines, dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &a)), shift);
	}
	if (rc < 0)
		ls_warn_dwarf(&m->opt, err, "%s: corrupt .debug_info (%s); line tables after it are skipped",
			m->debug_path ? m->debug_path : m->path, dwarf_errmsg(-1));
}

/* 3. Keep the last row of each address; end rows only where no row
 * starts; no two gaps in a row; a gap at the end of every section a
 * row would otherwise run past.  The statements a row at their address
 * hides go to LM->hidden. */
static void keep_rows(const ls_module *m, struct ls_linemap *lm, const struct raw_row *raw, size_t nraw)
{
	size_t cap_rows = 0, cap_hidden = 0;
	const struct ls_text *text = NULL;
	/* LM is empty (ls_linemap_build cleared it): CAP_ROWS 0 is its capacity */
	assert(lm->nrows == 0 && lm->rows == NULL && lm->nhidden == 0 && lm->hidden == NULL);
	for (size_t i = 0; i < nraw; i++) {
		size_t j = i;
		while (j + 1 < nraw && raw[j + 1].addr == raw[i].addr)
			j++;
		const struct raw_row *r = &raw[j]; /* the last one, a real row if any */
		for (size_t k = i; k < j; k++) {
			const struct raw_row *h = &raw[k];
			/* Only a statement above the code at this address can
			 * be a loop's statement (its body follows it). */
			if (!h->file || !h->line || !(h->flags & LS_LINE_IS_STMT) || !r->file ||
			    h->file != r->file || h->line >= r->line)
				continue;
			lm->hidden = ls_grow(lm->hidden, &cap_hidden, lm->nhidden + 1, sizeof *lm->hidden);
			lm->hidden[lm->nhidden++] = (struct ls_line_row){
				.addr = h->addr, .file = h->file, .line = h->line,
				.column = h->column, .flags = LS_LINE_IS_STMT,
			};
		}
		i = j;
		struct ls_line_row *prev = lm->nrows ? &lm->rows[lm->nrows - 1] : NULL;
		/* Close the previous row at its section's end if it runs on. */
		if (prev && prev->file && text && r->addr > text->addr + text->size) {
			lm->rows = ls_grow(lm->rows, &cap_rows, lm->nrows + 1, sizeof *lm->rows);
			lm->rows[lm->nrows++] = (struct ls_line_row){ .addr = text->addr + text->size };
			prev = &lm->rows[lm->nrows - 1];
		}
		if (!r->file && (!prev || !prev->file))
			continue;
		if (r->file)
			text = ls_text_find(m, r->addr);
		lm->rows = ls_grow(lm->rows, &cap_rows, lm->nrows + 1, sizeof *lm->rows);
		lm->rows[lm->nrows++] = (struct ls_line_row){
			.addr = r->addr, .file = r->file, .line = r->line,
			.column = r->column, .flags = r->flags & LS_LINE_IS_STMT,
		};
	}
	if (lm->nrows && lm->rows[lm->nrows - 1].file && text) {
		lm->rows = ls_grow(lm->rows, &cap_rows, lm->nrows + 1, sizeof *lm->rows);
		lm->rows[lm->nrows++] = (struct ls_line_row){ .addr = text->addr + text->size };
	}
}

int ls_linemap_build(ls_module *m, ls_error *err)
{
	struct ls_linemap *lm = &m->lines;
	memset(lm, 0, sizeof *lm);
	if (!m->dwarf)
		return 0;
	struct raw_rows rr = { 0 };
	read_rows(m, &rr, err);
	free(rr.names);
	/* 2. Sorted by address, the sequences kept whole. */
	struct raw_row *raw = sort_rows(rr.v, rr.n, rr.runs, rr.nruns);
	free(rr.runs);
	keep_rows(m, lm, raw, rr.n);
	free(raw);
	if (lm->nhidden) { /* the kernel has half a million: no slack */
		struct ls_line_row *h = realloc(lm->hidden, lm->nhidden * sizeof *h);
		if (h)
			lm->hidden = h;
	}
	return 0;
}

const struct ls_line_row *ls_linemap_find(const struct ls_linemap *lm, uint64_t addr)
{
	/* The last row at or below ADDR. */
	size_t lo = LS_FIRST_ABOVE(lm->rows, lm->nrows, addr, addr);
	if (lo == 0)
		return NULL;
	const struct ls_line_row *r = &lm->rows[lo - 1];
	return r->file ? r : NULL;
}

size_t ls_linemap_hidden_at(const struct ls_linemap *lm, uint64_t addr, const struct ls_line_row **first)
{
	size_t lo = LS_FIRST_AT_LEAST(lm->hidden, lm->nhidden, addr, addr);
	size_t n = 0;
	while (lo + n < lm->nhidden && lm->hidden[lo + n].addr == addr)
		n++;
	*first = n ? &lm->hidden[lo] : NULL;
	return n;
}

size_t ls_linemap_hidden_in(const struct ls_linemap *lm, uint64_t lo, uint64_t hi, const struct ls_line_row **first)
{
	size_t i = LS_FIRST_AT_LEAST(lm->hidden, lm->nhidden, addr, lo);
	size_t n = 0;
	while (i + n < lm->nhidden && lm->hidden[i + n].addr < hi)
		n++;
	*first = n ? &lm->hidden[i] : NULL;
	return n;
}

static void free_units(struct ls_line_units *u);

void ls_linemap_free(struct ls_linemap *lm)
{
	free(lm->rows);
	free(lm->hidden);
	lm->rows = NULL;
	lm->hidden = NULL;
	lm->nrows = lm->nhidden = 0;
	free_units(lm->lazy);
	lm->lazy = NULL;
}

/* ---- on demand: the line tables of the units the analysis needs ---------- */

/* A unit's line table is read when code it covers is analyzed.  Which
 * code a unit covers, its DIE says (DW_AT_ranges or DW_AT_low_pc and
 * high_pc: what compilers write for every unit with code), so the rows
 * at an address come from the same units, in the same order (their
 * place in .debug_info), as in the whole map.  A unit whose DIE gives
 * no range is read with the first want. */
struct line_unit {
	Dwarf_Die cudie;
	ls_range *ranges;               /* link-time addresses */
	size_t nranges;
	bool read;
};

/* The rows read so far, in islands: pieces of the map that keep_rows
 * makes alone, laid end to end (lay_out) as keep_rows makes them among
 * all the others.  keep_rows is one pass that carries only the row it
 * made last; at the start of an island lay_out does what keep_rows
 * would do there with that row (an island alone ends with a gap at its
 * section's end when its last row is no end of sequence, and skips an
 * end of sequence at its start).  So two islands may not share rows of
 * one address but where the first one has only ends of sequences there.
 * A unit's rows are cut into islands at the ends of sequences and where
 * they jump, so that a unit read later remakes only the few islands its
 * rows fall among, and m->lines is a copy, not a keep_rows of every row
 * read, each time. */
/* What lay_out goes on from after an island: the map's counts, and its
 * last two rows then (the next island's may change them). */
struct laid {
	size_t nrows, nhidden;
	struct ls_line_row tail[2];
};

struct island {
	uint64_t lo, hi;                /* the first and last rows' addresses */
	bool first_end, last_end;       /* only ends of sequences at LO / at HI */
	struct raw_row *raw;            /* sorted */
	size_t nraw;
	struct ls_linemap map;          /* keep_rows of RAW */
	struct laid after;              /* m->lines as lay_out left it after this island */
	size_t low_rows;                /* the fewest rows it left after this or a later one */
};

struct ls_line_units {
	struct line_unit *v;
	size_t n, nread;
	uint64_t shift;
	struct island *isl;             /* by address, disjoint */
	size_t nisl, cap_isl;
	size_t changed;                 /* the first island added or merged since lay_out */
	size_t cap_rows, cap_hidden;    /* of m->lines' arrays, which lay_out grows */
};

static void free_units(struct ls_line_units *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n; i++)
		free(u->v[i].ranges);
	free(u->v);
	for (size_t i = 0; i < u->nisl; i++) {
		free(u->isl[i].raw);
		ls_linemap_free(&u->isl[i].map);
	}
	free(u->isl);
	free(u);
}

static void list_unit(struct ls_line_units *u, size_t *cap, Dwarf_Die *cudie)
{
	u->v = ls_grow(u->v, cap, u->n + 1, sizeof *u->v);
	struct line_unit *lu = &u->v[u->n++];
	*lu = (struct line_unit){ .cudie = *cudie };
	size_t cap_r = 0;
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(cudie, off, &base, &start, &end)) > 0) {
		if (end <= start)
			continue;
		lu->ranges = ls_grow(lu->ranges, &cap_r, lu->nranges + 1, sizeof *lu->ranges);
		lu->ranges[lu->nranges++] = (ls_range){ start - u->shift, end - u->shift };
		if (lu->nranges > 100000) /* a corrupt range list */
			break;
	}
	if (off < 0) { /* unreadable: read it with the first want */
		free(lu->ranges);
		lu->ranges = NULL;
		lu->nranges = 0;
	}
}

int ls_linemap_open(ls_module *m, ls_error *err)
{
	struct ls_linemap *lm = &m->lines;
	memset(lm, 0, sizeof *lm);
	if (!m->dwarf)
		return 0;
	struct ls_line_units *u = ls_xcalloc(1, sizeof *u);
	Dwarf_Addr dbias = 0;
	dwfl_module_getdwarf(m->dwmod, &dbias);
	u->shift = m->bias - dbias;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	uint8_t unit_type;
	Dwarf_Half version;
	size_t cap = 0;
	int rc;
	/* the units read_rows reads, in its order */
	while ((rc = dwarf_get_units(m->dwarf, cu, &cu, &version, &unit_type, &cudie, &subdie)) == 0) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton)
			continue;
		int tag = dwarf_tag(&cudie);
		if (tag == DW_TAG_compile_unit || tag == DW_TAG_skeleton_unit)
			list_unit(u, &cap, &cudie);
	}
	if (rc < 0)
		ls_warn_dwarf(&m->opt, err, "%s: corrupt .debug_info (%s); line tables after it are skipped",
			m->debug_path ? m->debug_path : m->path, dwarf_errmsg(-1));
	lm->lazy = u;
	return 0;
}

static bool unit_wanted(const struct line_unit *lu, const ls_range *r, size_t n)
{
	if (lu->nranges == 0)
		return true;
	for (size_t k = 0; k < lu->nranges; k++)
		for (size_t i = 0; i < n; i++) {
			uint64_t lo = r[i].lo > LS_LINE_PAD ? r[i].lo - LS_LINE_PAD : 0;
			uint64_t hi = r[i].hi < UINT64_MAX - LS_LINE_PAD ? r[i].hi + LS_LINE_PAD : UINT64_MAX;
			if (lu->ranges[k].lo < hi && lo < lu->ranges[k].hi)
				return true;
		}
	return false;
}

/* Unit I's rows appended to RR, ordered as read_rows orders them: after
 * every row of the units before it in .debug_info. */
static void read_unit(ls_module *m, struct ls_line_units *u, size_t i, struct raw_rows *rr)
{
	Dwarf_Die *cudie = &u->v[i].cudie;
	Dwarf_Lines *lines;
	size_t nlines;
	rr->order = (uint64_t)i << 32;
	if (dwarf_getsrclines(cudie, &lines, &nlines) != 0) {
		if (dwarf_hasattr(cudie, DW_AT_stmt_list)) {
			const char *cuname = dwarf_diename(cudie);
			ls_warn(&m->opt, "%s: unreadable line table of %s (%s); its lines are unknown",
				m->debug_path ? m->debug_path : m->path, cuname ? cuname : "?", dwarf_errmsg(-1));
		}
		return;
	}
	Dwarf_Attribute a;
	read_cu_rows(m, rr, lines, nlines, dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a)), u->shift);
}

/* The sorted rows A and B, merged (both freed). */
static struct raw_row *merge_rows(struct raw_row *a, size_t na, struct raw_row *b, size_t nb)
{
	struct raw_row *out = ls_xmalloc((na + nb + 1) * sizeof *out);
	size_t i = 0, j = 0, k = 0;
	while (i < na && j < nb)
		out[k++] = cmp_raw(&a[i], &b[j]) <= 0 ? a[i++] : b[j++];
	memcpy(out + k, a + i, (na - i) * sizeof *out);
	k += na - i;
	memcpy(out + k, b + j, (nb - j) * sizeof *out);
	free(a);
	free(b);
	return out;
}

/* Whether island A lies wholly below B (see struct island). */
static bool island_below(const struct island *a, const struct island *b)
{
	return a->hi < b->lo || (a->hi == b->lo && a->last_end);
}

static void island_bounds(struct island *x)
{
	x->lo = x->raw[0].addr;
	x->hi = x->raw[x->nraw - 1].addr;
	x->last_end = !x->raw[x->nraw - 1].file; /* ends sort first at an address */
	size_t k = 0;
	while (k + 1 < x->nraw && x->raw[k + 1].addr == x->lo)
		k++;
	x->first_end = !x->raw[k].file;
}

/* Adds the sorted rows RAW (N, owned) to the islands: merged with those
 * it is not wholly above or below, the result made by keep_rows. */
static void add_island(const ls_module *m, struct ls_line_units *u, struct raw_row *raw, size_t n)
{
	struct island x = { .raw = raw, .nraw = n };
	island_bounds(&x);
	/* the islands [i, j) that X does not lie wholly above or below */
	size_t i = 0;
	while (i < u->nisl && island_below(&u->isl[i], &x))
		i++;
	size_t j = i;
	while (j < u->nisl && !island_below(&x, &u->isl[j]))
		j++;
	for (size_t k = i; k < j; k++) {
		x.raw = merge_rows(u->isl[k].raw, u->isl[k].nraw, x.raw, x.nraw);
		x.nraw += u->isl[k].nraw;
		ls_linemap_free(&u->isl[k].map);
	}
	if (i < u->changed)
		u->changed = i;
	if (j > i) { /* (none yet: no array to move in) */
		memmove(u->isl + i, u->isl + j, (u->nisl - j) * sizeof *u->isl);
		u->nisl -= j - i;
	}
	island_bounds(&x);
	keep_rows(m, &x.map, x.raw, x.nraw);
	u->isl = ls_grow(u->isl, &u->cap_isl, u->nisl + 1, sizeof *u->isl);
	memmove(u->isl + i + 1, u->isl + i, (u->nisl - i) * sizeof *u->isl);
	u->isl[i] = x;
	u->nisl++;
}

/* The sorted rows RAW (N, owned) cut into islands: before a row that is
 * no end of sequence (the last at its address), where the rows before
 * ended a sequence or leave a hole (a function's cold part far away). */
static void add_rows(const ls_module *m, struct ls_line_units *u, struct raw_row *raw, size_t n)
{
	size_t start = 0;
	for (size_t k = 0; k < n;) {
		size_t g = k; /* the group of rows at raw[k].addr: [k, e) */
		size_t e = k + 1;
		while (e < n && raw[e].addr == raw[k].addr)
			e++;
		if (g > start && raw[e - 1].file && (!raw[g - 1].file || raw[g].addr - raw[g - 1].addr > 256)) {
			struct raw_row *part = ls_xmalloc((g - start) * sizeof *part);
			memcpy(part, raw + start, (g - start) * sizeof *part);
			add_island(m, u, part, g - start);
			start = g;
		}
		k = e;
	}
	if (start < n) {
		struct raw_row *part = ls_xmalloc((n - start) * sizeof *part);
		memcpy(part, raw + start, (n - start) * sizeof *part);
		add_island(m, u, part, n - start);
	}
	free(raw);
}

static void push_gap(struct ls_linemap *lm, uint64_t addr)
{
	lm->rows[lm->nrows++] = (struct ls_line_row){ .addr = addr };
}

/* Island I of LM, begun as keep_rows goes on from the row before it. */
static void lay_island(ls_module *m, struct ls_line_units *u, size_t i)
{
	struct ls_linemap *lm = &m->lines;
	const struct island *x = &u->isl[i];
	assert(lm->rows && lm->hidden); /* lay_out grew both for every island */
	struct ls_line_row *last = lm->nrows ? &lm->rows[lm->nrows - 1] : NULL;
	if (last && !u->isl[i - 1].last_end) {
		/* not the end of the map: its gap at the section's end
		 * is keep_rows' to make, or not, at X's first row */
		lm->nrows--;
		last = &lm->rows[lm->nrows - 1];
		const struct ls_text *t = ls_text_find(m, last->addr);
		if (t && x->lo > t->addr + t->size)
			push_gap(lm, t->addr + t->size);
		last = &lm->rows[lm->nrows - 1];
	}
	if (last && x->first_end && last->file)
		push_gap(lm, x->lo); /* the end of sequence X alone skipped */
	else if (last && !x->first_end && !last->file && last->addr == x->lo)
		lm->nrows--; /* X's row at that address wins over the gap */
	if (x->map.nrows) /* (an island of ends of sequences alone has none) */
		memcpy(lm->rows + lm->nrows, x->map.rows, x->map.nrows * sizeof *lm->rows);
	lm->nrows += x->map.nrows;
	if (x->map.nhidden)
		memcpy(lm->hidden + lm->nhidden, x->map.hidden, x->map.nhidden * sizeof *lm->hidden);
	lm->nhidden += x->map.nhidden;
}

/* The island after which lay_out may go on, as it left the map then (the
 * islands before U->changed are as they were), or -1 to start over.  An
 * island changes at most the two rows before it: the rows below those
 * after island P are as P left them if no later island left fewer. */
static ptrdiff_t resume_after(ls_module *m, struct ls_line_units *u)
{
	struct ls_linemap *lm = &m->lines;
	ptrdiff_t p = (ptrdiff_t)u->changed - 1;
	while (p >= 0 && u->isl[p].low_rows < u->isl[p].after.nrows)
		p--;
	if (p < 0 || !lm->rows)
		return -1;
	const struct laid *a = &u->isl[p].after;
	lm->nrows = a->nrows;
	lm->nhidden = a->nhidden;
	for (size_t k = 0; k < 2 && k < a->nrows; k++)
		lm->rows[a->nrows - 1 - k] = a->tail[k];
	return p;
}

/* m->lines: the islands end to end, each begun as keep_rows goes on
 * from the row before it.  Laid out again from the first island that
 * changed, not from the first: the map is laid out once per batch of
 * units read, and a large library's rows were copied whole each time
 * (2% of the first report of a system-wide recording). */
static void lay_out(ls_module *m, struct ls_line_units *u)
{
	struct ls_linemap *lm = &m->lines;
	size_t nrows = 0, nhidden = 0;
	for (size_t i = 0; i < u->nisl; i++) {
		nrows += u->isl[i].map.nrows + 1;
		nhidden += u->isl[i].map.nhidden;
	}
	ptrdiff_t p = resume_after(m, u);
	if (p < 0) {
		free(lm->rows);
		free(lm->hidden);
		lm->rows = lm->hidden = NULL;
		u->cap_rows = u->cap_hidden = 0;
		lm->nrows = lm->nhidden = 0;
	}
	lm->rows = ls_grow(lm->rows, &u->cap_rows, nrows + 1, sizeof *lm->rows);
	lm->hidden = ls_grow(lm->hidden, &u->cap_hidden, nhidden + 1, sizeof *lm->hidden);
	for (size_t i = (size_t)(p + 1); i < u->nisl; i++) {
		lay_island(m, u, i);
		struct laid *a = &u->isl[i].after;
		*a = (struct laid){ lm->nrows, lm->nhidden, { { 0 } } };
		for (size_t k = 0; k < 2 && k < lm->nrows; k++)
			a->tail[k] = lm->rows[lm->nrows - 1 - k];
	}
	size_t low = SIZE_MAX;
	for (size_t i = u->nisl; i-- > 0;) {
		low = u->isl[i].after.nrows < low ? u->isl[i].after.nrows : low;
		u->isl[i].low_rows = low;
	}
	u->changed = u->nisl;
	if (!lm->nrows) {
		free(lm->rows);
		lm->rows = NULL;
		u->cap_rows = 0;
	}
	if (!lm->nhidden) {
		free(lm->hidden);
		lm->hidden = NULL;
		u->cap_hidden = 0;
	}
}

size_t ls_linemap_want(ls_module *m, const ls_range *r, size_t n)
{
	struct ls_linemap *lm = &m->lines;
	struct ls_line_units *u = lm->lazy;
	if (!u || u->nread == u->n)
		return 0;
	struct raw_rows rr = { 0 };
	size_t nnew = 0;
	for (size_t i = 0; i < u->n; i++) {
		if (u->v[i].read || !unit_wanted(&u->v[i], r, n))
			continue;
		u->v[i].read = true;
		u->nread++;
		nnew++;
		read_unit(m, u, i, &rr);
	}
	free(rr.names);
	if (!nnew || !rr.n) {
		free(rr.v);
		free(rr.runs);
		return nnew;
	}
	struct raw_row *fresh = sort_rows(rr.v, rr.n, rr.runs, rr.nruns);
	free(rr.runs);
	add_rows(m, u, fresh, rr.n);
	lay_out(m, u);
	return nnew;
}

void ls_linemap_units(const struct ls_linemap *lm, size_t *nunits, size_t *nread)
{
	*nunits = lm->lazy ? lm->lazy->n : 0;
	*nread = lm->lazy ? lm->lazy->nread : 0;
}
