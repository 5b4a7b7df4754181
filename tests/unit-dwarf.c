/* unit-dwarf.c - the ELF/DWARF stages (module.c, inline_tree.c, procs.c,
 * linemap.c, demangle.c) on fixtures compiled now with gcc and clang:
 * five-deep inline chains with their call lines, two call sites of one
 * inlined function, a gcc .cold split, PLT names and noreturn, DWARF 4 and 5,
 * compressed debug sections, split debug info (debuglink and build-id),
 * a shared library, a relocatable object, the index invariants, and bad
 * input (empty, not ELF, truncated, foreign machine, random corruption);
 * where a DIE's subtree ends (die_order.c) against libdw's siblings; the
 * line map on demand against the whole one.  Prints TAP. */
#include "dwarf/die_order.h"
#include "dwarf/inline_tree.h"
#include "dwarf/linemap.h"
#include "dwarf/procs.h"
#include "elf/module.h"
#include "pipeline.h"
#include "structure/check.h"
#include "support/base.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tap.h"
#include "unit-module.h"

static char tmpdir[256];
static const char *srcdir;


static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int rc = system(cmd);
	if (rc != 0)
		diag("command failed (%d): %s", rc, cmd);
	return rc;
}

static bool have(const char *tool)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

static char *tmp(const char *name)
{
	static char bufs[8][512];
	static int i;
	char *b = bufs[i++ % 8];
	snprintf(b, sizeof bufs[0], "%s/%s", tmpdir, name);
	return b;
}

/* The line of SRC holding MARKER ("INNER", "CALL:level3"). */
static unsigned marker_line(const char *src, const char *marker)
{
	char path[512], line[1024], want[128];
	snprintf(path, sizeof path, "%s/tests/fixtures/%s", srcdir, src);
	snprintf(want, sizeof want, "/* %s", marker);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	unsigned n = 0, found = 0;
	while (fgets(line, sizeof line, f)) {
		n++;
		char *p = strstr(line, want);
		if (p && (p[strlen(want)] == ' ' || p[strlen(want)] == '*')) {
			found = n;
			break;
		}
	}
	fclose(f);
	return found;
}

static void quiet_warn(void *ctx, const char *msg)
{
	int *count = ctx;
	(*count)++;
	(void)msg;
}

struct loaded {
	ls_module *m;
	int warnings;
};

/* Runs the stages the analysis reads, in the pipeline's order. */
static ls_module *load(const char *path, const char *debug_dir, ls_error *err, int *warnings)
{
	return unit_load(path, debug_dir, quiet_warn, warnings, err);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The index invariants every module must satisfy (libloopscope/structure/check.c). */
static void check_invariants_abs(const ls_module *m, const char *what, bool absolute)
{
	const char *why = ls_check_module(m, LS_CHECK_INLINE_SEGMENTS, absolute);
	ok(!why, "%s: inline segments sorted, non-overlapping, none lexical (%zu)%s%s", what, m->inl.nsegs,
	   why ? ": " : "", why ? why : "");
	why = ls_check_module(m, LS_CHECK_INLINE_NODES, absolute);
	ok(!why, "%s: inline nodes: subprograms are roots, inlined depth = parent + 1%s%s", what,
	   why ? ": " : "", why ? why : "");
	why = ls_check_module(m, LS_CHECK_PROCS, absolute);
	ok(!why, "%s: procedure index sorted and non-overlapping, entries unique (%zu procs)%s%s", what,
	   m->procs.nprocs, why ? ": " : "", why ? why : "");
	why = ls_check_module(m, LS_CHECK_LINES, absolute);
	ok(!why, "%s: line rows sorted, in text,%s gaps single, table closed (%zu rows)%s%s", what,
	   absolute ? " absolute files," : "", m->lines.nrows, why ? ": " : "", why ? why : "");
}

static void check_invariants(const ls_module *m, const char *what)
{
	check_invariants_abs(m, what, true);
}

/* "level5<level4<...<deep_entry" for ADDR, with call lines. */
static void chain_string(const ls_module *m, uint64_t addr, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = 0;
	for (const struct ls_inl_node *x = ls_inline_find(&m->inl, addr); x && n < size; x = x->parent)
		n += snprintf(buf + n, size - n, "%s@%u<", x->name, x->call_line);
}

/* Addresses of line rows for LINE of a file ending in FILE. */
static size_t rows_at_line(const ls_module *m, const char *file, unsigned line, uint64_t *out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < m->lines.nrows && n < cap; i++)
		if (m->lines.rows[i].file && m->lines.rows[i].line == line && ends_with(m->lines.rows[i].file, file))
			out[n++] = m->lines.rows[i].addr;
	return n;
}

static void check_inline_deep(const char *bin, const char *what, bool relocatable)
{
	ls_error err;
	int warnings = 0;
	ls_module *m = load(bin, NULL, &err, &warnings);
	ok(m != NULL, "%s: loads", what);
	if (!m) {
		diag("%s", err.message);
		return;
	}
	ok(m->dwarf && m->relocatable == relocatable && warnings == 0, "%s: DWARF found, relocatable=%d, no warnings",
	   what, relocatable);
	check_invariants(m, what);

	unsigned inner = marker_line("inline_deep.c", "INNER");
	unsigned call[6];
	char name[32];
	for (int k = 1; k <= 5; k++) {
		snprintf(name, sizeof name, "CALL:level%d", k);
		call[k] = marker_line("inline_deep.c", name);
	}
	uint64_t addrs[64];
	size_t na = rows_at_line(m, "/inline_deep.c", inner, addrs, 64);
	bool found = false;
	char chain[2048], want[512];
	snprintf(want, sizeof want, "level5@%u<level4@%u<level3@%u<level2@%u<level1@%u<deep_entry@0<",
		 call[5], call[4], call[3], call[2], call[1]);
	for (size_t i = 0; i < na; i++) {
		chain_string(m, addrs[i], chain, sizeof chain);
		if (strcmp(chain, want) == 0) {
			found = true;
			const struct ls_proc *p = ls_procs_find(&m->procs, addrs[i]);
			const struct ls_inl_node *n = ls_inline_find(&m->inl, addrs[i]);
			ok(p && strcmp(p->name, "deep_entry") == 0 && p->from_dwarf && n && n->depth == 5 &&
			   p->die_node == n->parent->parent->parent->parent->parent,
			   "%s: the INNER line's procedure is deep_entry, its DWARF node the chain's root", what);
			ok(n && n->call_file && ends_with(n->call_file, "/inline_deep.c") && n->call_file[0] == '/' &&
			   n->decl_file && ends_with(n->decl_file, "/inline_deep.c") &&
			   n->decl_line == inner - 2,
			   "%s: call and declaration files absolute, level5 declared at line %u", what, inner - 2);
			break;
		}
	}
	ok(found, "%s: INNER (line %u, %zu rows) inlined 5 deep: %s", what, inner, na, want);
	if (!found && na) {
		chain_string(m, addrs[0], chain, sizeof chain);
		diag("got %s", chain);
	}

	/* clamp_add inlined twice into two_sites, at the two SITE lines. */
	unsigned site1 = marker_line("inline_deep.c", "SITE:first");
	unsigned site2 = marker_line("inline_deep.c", "SITE:second");
	bool seen1 = false, seen2 = false;
	for (size_t i = 0; i < m->inl.nnodes; i++) {
		const struct ls_inl_node *n = m->inl.nodes[i];
		if (n->kind == LS_INL_INLINED && strcmp(n->name, "clamp_add") == 0 && n->parent &&
		    strcmp(n->parent->name, "two_sites") == 0) {
			seen1 |= n->call_line == site1;
			seen2 |= n->call_line == site2;
		}
	}
	ok(seen1 && seen2, "%s: clamp_add inlined at both call sites (lines %u and %u)", what, site1, site2);

	uint64_t a, s;
	ok(ls_module_symbol(m, "deep_entry", &a, &s) == 0 && ls_procs_at_entry(&m->procs, a) &&
	   strcmp(ls_procs_at_entry(&m->procs, a)->name, "deep_entry") == 0 && s > 0,
	   "%s: ls_module_symbol finds deep_entry at its procedure's entry", what);
	ok(ls_module_symbol(m, "no_such_function", &a, &s) < 0, "%s: unknown symbols are not found", what);
	unit_unload(m);
}

/* Every line-row address gets the same chain and line in A and B. */
static void check_same_answers(const char *a, const char *b, const char *debug_dir, const char *what)
{
	ls_error err;
	int wa = 0, wb = 0;
	ls_module *ma = load(a, NULL, &err, &wa), *mb = load(b, debug_dir, &err, &wb);
	if (!ma || !mb) {
		ok(0, "%s: both load", what);
		unit_unload(ma);
		unit_unload(mb);
		return;
	}
	size_t same = 0, n = 0;
	char ca[2048], cb[2048];
	for (size_t i = 0; i < ma->lines.nrows; i++) {
		uint64_t addr = ma->lines.rows[i].addr;
		const struct ls_line_row *ra = ls_linemap_find(&ma->lines, addr), *rb = ls_linemap_find(&mb->lines, addr);
		if (!ra)
			continue;
		n++;
		chain_string(ma, addr, ca, sizeof ca);
		chain_string(mb, addr, cb, sizeof cb);
		if (rb && rb->file && strcmp(ra->file, rb->file) == 0 && ra->line == rb->line &&
		    ra->column == rb->column && strcmp(ca, cb) == 0)
			same++;
	}
	ok(n > 0 && same == n && ma->procs.nprocs == mb->procs.nprocs,
	   "%s: %zu/%zu line addresses give the same line and inline chain", what, same, n);
	unit_unload(ma);
	unit_unload(mb);
}

static void check_cold(const char *bin)
{
	ls_error err;
	int warnings = 0;
	ls_module *m = load(bin, NULL, &err, &warnings);
	if (!m) {
		ok(0, "gcc -O2 cold.c: loads (%s)", err.message);
		return;
	}
	check_invariants(m, "gcc -O2 cold.c");
	uint64_t cold, hot, size;
	if (ls_module_symbol(m, "hot_path.cold", &cold, &size) != 0) {
		skip("gcc did not split hot_path (no hot_path.cold symbol)");
	} else {
		ok(ls_module_symbol(m, "hot_path", &hot, &size) == 0, "cold.c: hot_path found");
		const struct ls_proc *p = ls_procs_find(&m->procs, cold);
		ok(p && strcmp(p->name, "hot_path") == 0 && p->nranges >= 2 && p->entry == hot &&
		   p->ranges[0].lo <= hot && hot < p->ranges[0].hi,
		   "cold.c: hot_path.cold belongs to hot_path (a second range; range 0 holds the entry)");
		ok(!ls_procs_at_entry(&m->procs, cold), "cold.c: hot_path.cold is not a procedure of its own");
	}
	const struct ls_proc *ex = NULL;
	for (size_t i = 0; i < m->procs.nprocs; i++)
		if (strcmp(m->procs.procs[i].name, "exit@plt") == 0)
			ex = &m->procs.procs[i];
	ok(ex && ex->is_plt && ex->noreturn && ex->ranges[0].hi - ex->ranges[0].lo >= 8,
	   "cold.c: exit@plt is a PLT procedure that does not return");
	uint64_t a;
	ok(ex && ls_module_symbol(m, "exit@plt", &a, NULL) == 0 && a == ex->entry,
	   "cold.c: ls_module_symbol finds exit@plt");
	const struct ls_proc *rf = NULL;
	if (ls_module_symbol(m, "report_failure", &a, NULL) == 0)
		rf = ls_procs_at_entry(&m->procs, a);
	ok(rf && !rf->noreturn && rf->from_dwarf && rf->file && ends_with(rf->file, "/cold.c"),
	   "cold.c: report_failure returns, comes from DWARF with its file");
	unit_unload(m);
}

static void check_shlib(const char *lib)
{
	ls_error err;
	int warnings = 0;
	ls_module *m = load(lib, NULL, &err, &warnings);
	if (!m) {
		ok(0, "shlib.so: loads (%s)", err.message);
		return;
	}
	check_invariants(m, "gcc -O2 shlib.so");
	uint64_t a, s;
	bool found = ls_module_symbol(m, "shlib_sum", &a, &s) == 0;
	bool scale_inside = false;
	for (uint64_t x = a; found && x < a + s; x++) {
		const struct ls_inl_node *n = ls_inline_find(&m->inl, x);
		if (n && strcmp(n->name, "scale") == 0 && n->parent && strcmp(n->parent->name, "shlib_sum") == 0)
			scale_inside = true;
	}
	ok(found && ls_text_find(m, a) && scale_inside,
	   "shlib.so: shlib_sum at a link-time address in .text, with scale inlined");
	unit_unload(m);
}

static void check_demangle(void)
{
	struct { const char *in, *out; } cases[] = {
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)" },
		{ "_Z3fooi.constprop.0.isra.0", "foo(int) (.constprop.0.isra.0)" },
		{ "_Z3fooi.cold", "foo(int) (.cold)" },
		{ "_ZZ4mainENKUlvE_clEv", "main::'lambda'()::operator()() const" },
		{ "_ZZ4mainENKUliE0_clEi", "main::'lambda0'(int)::operator()(int) const" },
		{ "_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc",
		  "std::basic_ostream<char, std::char_traits<char> >& std::operator<<<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)" },
		/* legacy Rust: an Itanium-looking name the Rust demangler reads (C++ alone would keep ::h<hash>) */
		{ "_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *d = ls_demangle(cases[i].in);
		ok(d && strcmp(d, cases[i].out) == 0, "demangle %s -> %s", cases[i].in, cases[i].out);
		if (d && strcmp(d, cases[i].out) != 0)
			diag("got %s", d);
		free(d);
	}
	ok(!ls_demangle("main") && !ls_demangle("_start") && !ls_demangle("_Zgarbage") && !ls_demangle(""),
	   "demangle: plain and invalid names are not mangled");
}

static void check_paths(void)
{
	struct { const char *dir, *name, *out; } cases[] = {
		{ "/tmp/b", "x.c", "/tmp/b/x.c" },
		{ "/tmp/b", "/usr/include/stdio.h", "/usr/include/stdio.h" },
		{ "/usr/lib/gcc/x86_64-linux-gnu/12", "../../../../include/c++/12/bits/stl_vector.h",
		  "/usr/include/c++/12/bits/stl_vector.h" },
		{ "/a/./b//c", "./d/../e.c", "/a/b/c/e.c" },
		{ "/a", "../../../x.c", "/x.c" },
		{ NULL, "rel/./x.c", "rel/x.c" },
		{ "build", "../../x.c", "../x.c" },
	};
	struct ls_strtab t = {0};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *r = ls_source_path(&t, cases[i].dir, cases[i].name);
		ok(r && strcmp(r, cases[i].out) == 0, "source path %s + %s -> %s", cases[i].dir ? cases[i].dir : "(none)",
		   cases[i].name, cases[i].out);
		if (r && strcmp(r, cases[i].out) != 0)
			diag("got %s", r);
	}
	ok(ls_source_path(&t, "/a", "b.c") == ls_source_path(&t, "/a/", "./b.c"), "source paths are interned");
	ls_strtab_free(&t);
}

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(data, 1, n, f);
		fclose(f);
	}
}

static void *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	void *d = ls_xmalloc(len > 0 ? (size_t)len : 1);
	*n = fread(d, 1, (size_t)len, f);
	fclose(f);
	return d;
}

static void expect_error(const char *path, ls_status code, const char *needle, const char *what)
{
	ls_error err = {0};
	int warnings = 0;
	ls_module *m = load(path, NULL, &err, &warnings);
	bool good = !m && err.code == code && strstr(err.message, path) == err.message &&
		    strstr(err.message, needle);
	ok(good, "%s: error %d \"%s\"", what, err.code, err.message);
	unit_unload(m);
}

static void check_bad_input(const char *good_bin)
{
	write_file(tmp("empty"), "", 0);
	expect_error(tmp("empty"), LS_ERR_NOT_ELF, ": empty file", "empty file");
	write_file(tmp("text"), "hello, world\n", 13);
	expect_error(tmp("text"), LS_ERR_NOT_ELF, ": not an ELF file", "a text file");
	expect_error(tmp("no-such-file"), LS_ERR_NOT_FOUND, "No such file", "a missing file");
	expect_error(tmpdir, LS_ERR_IO, "directory", "a directory");

	size_t n;
	unsigned char *d = read_file(good_bin, &n);
	if (!d || n < 4096) {
		ok(0, "read %s", good_bin);
		free(d);
		return;
	}
	write_file(tmp("trunc"), d, 2000);
	expect_error(tmp("trunc"), LS_ERR_NOT_ELF, "truncated", "a truncated ELF file");
	write_file(tmp("trunc-hdr"), d, 40);
	expect_error(tmp("trunc-hdr"), LS_ERR_NOT_ELF, "truncated", "an ELF file cut inside its header");
	unsigned char *arm = ls_xmalloc(n);
	memcpy(arm, d, n);
	arm[18] = 183; /* e_machine = EM_AARCH64 */
	arm[19] = 0;
	write_file(tmp("aarch64"), arm, n);
	expect_error(tmp("aarch64"), LS_ERR_UNSUPPORTED, "unsupported machine AArch64", "a foreign machine");
	free(arm);

	/* Random corruption anywhere, and cuts anywhere: an error or a
	 * module, never a crash (a crash fails the whole test). */
	unsigned seed = 12345;
	int opened = 0, refused = 0;
	unsigned char *buf = ls_xmalloc(n);
	for (int round = 0; round < 150; round++) {
		memcpy(buf, d, n);
		size_t len = n;
		int flips = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 40;
		for (int k = 0; k < flips; k++) {
			seed = seed * 1103515245 + 12345;
			size_t at = (seed >> 8) % n;
			seed = seed * 1103515245 + 12345;
			buf[at] = (unsigned char)(seed >> 16);
		}
		seed = seed * 1103515245 + 12345;
		if ((seed >> 16) % 5 == 0)
			len = (seed >> 4) % n;
		write_file(tmp("fuzz"), buf, len);
		ls_error err;
		int warnings = 0;
		ls_module *m = load(tmp("fuzz"), NULL, &err, &warnings);
		if (m) {
			opened++;
			for (uint64_t a = 0; a < 0x3000; a += 7) {
				ls_inline_find(&m->inl, a);
				ls_linemap_find(&m->lines, a);
				ls_procs_find(&m->procs, a);
			}
		} else {
			refused++;
		}
		unit_unload(m);
	}
	free(buf);
	free(d);
	ok(opened + refused == 150, "150 corrupted copies: %d opened, %d refused with a message, no crash", opened,
	   refused);
}

/* A DWARF procedure whose high_pc overruns the next function (an assembly
 * one, without DWARF) is clamped at that function's symbol (thesis 4.3),
 * and the inline index is cut to match. */
static void check_overrun(void)
{
	const char *src =
		"int first(int x) { return x * 3 + 1; }\n"
		"__asm__(\".text\\n.globl asm_second\\n.type asm_second,@function\\nasm_second:\\n"
		"\\tlea 1(%rdi),%eax\\n\\tret\\n.size asm_second,.-asm_second\\n\");\n"
		"int main(void) { return first(2); }\n";
	write_file(tmp("overrun.c"), src, strlen(src));
	if (run("gcc -O1 -g -gdwarf-5 -fno-toplevel-reorder -S -o %s %s", tmp("overrun.s"), tmp("overrun.c")) != 0 ||
	    run("sed -i 's/^\\t\\.quad\\t\\.LFE0-\\.LFB0$/\\t.quad\\t.LFE0-.LFB0+0x10/' %s", tmp("overrun.s")) != 0 ||
	    run("grep -q 'LFE0-.LFB0+0x10' %s", tmp("overrun.s")) != 0 ||
	    run("gcc -o %s %s", tmp("overrun"), tmp("overrun.s")) != 0) {
		skip("cannot build the overrunning-DWARF fixture");
		return;
	}
	ls_error err;
	int w = 0;
	ls_module *m = load(tmp("overrun"), NULL, &err, &w);
	uint64_t first, second;
	if (!m || ls_module_symbol(m, "first", &first, NULL) != 0 || ls_module_symbol(m, "asm_second", &second, NULL) != 0) {
		ok(0, "overrun: loads, first and asm_second found");
		unit_unload(m);
		return;
	}
	const struct ls_proc *p = ls_procs_at_entry(&m->procs, first), *q = ls_procs_find(&m->procs, second);
	ok(p && p->from_dwarf && p->ranges[0].hi == second,
	   "overrun: first's DWARF range is clamped at asm_second (0x%llx)", (unsigned long long)second);
	ok(q && strcmp(q->name, "asm_second") == 0 && !q->from_dwarf && q->entry == second,
	   "overrun: asm_second is a procedure of its own, from its symbol");
	ok(!ls_inline_find(&m->inl, second) && ls_inline_find(&m->inl, first),
	   "overrun: no inline chain of first inside asm_second");
	unit_unload(m);
}

/* PLT layouts: IBT's .plt.sec, and a static binary's IRELATIVE slots. */
static void check_plt_layouts(const char *fx)
{
	ls_error err;
	int w = 0;
	if (run("gcc -O2 -g -fcf-protection=full -Wl,-z,ibtplt -o %s %s/cold.c", tmp("cold-ibt"), fx) == 0) {
		ls_module *m = load(tmp("cold-ibt"), NULL, &err, &w);
		uint64_t a;
		const struct ls_text *t = NULL;
		const struct ls_proc *p = NULL;
		if (m && ls_module_symbol(m, "exit@plt", &a, NULL) == 0) {
			t = ls_text_find(m, a);
			p = ls_procs_at_entry(&m->procs, a);
		}
		ok(t && strcmp(t->name, ".plt.sec") == 0 && p && p->is_plt && p->noreturn,
		   "IBT: exit@plt is a .plt.sec slot, noreturn (%s)", t ? t->name : "not found");
		unit_unload(m);
	} else {
		skip("no IBT PLT");
	}
	if (run("gcc -O2 -g -static -o %s %s/inline_deep.c 2>/dev/null", tmp("deep-static"), fx) == 0) {
		ls_module *m = load(tmp("deep-static"), NULL, &err, &w);
		size_t nplt = 0, named = 0;
		for (size_t i = 0; m && i < m->procs.nprocs; i++)
			if (m->procs.procs[i].is_plt) {
				nplt++;
				named += strncmp(m->procs.procs[i].name, "*ABS*", 5) != 0;
			}
		ok(m && nplt > 0 && named == nplt, "static: %zu IRELATIVE PLT slots, all named after their IFUNC", nplt);
		if (m)
			check_invariants(m, "gcc -O2 -static inline_deep.c");
		unit_unload(m);
	} else {
		skip("no static libc");
	}
}

/* glibc with libc6-dbg: debug info by build-id, DWARF noreturn, aliases. */
static void check_libc(void)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	if (access(libc, R_OK) != 0) {
		skip("no libc.so.6");
		return;
	}
	ls_error err;
	int w = 0;
	ls_module *m = load(libc, NULL, &err, &w);
	if (!m || !m->dwarf) {
		skip("libc6-dbg not installed");
		unit_unload(m);
		return;
	}
	ok(m->debug_path && strstr(m->debug_path, "/.build-id/") && m->build_id &&
	   strstr(m->debug_path, m->build_id + 2), "libc: debug info by build-id: %s", m->debug_path);
	/* Debian builds glibc with a relative DW_AT_comp_dir: its file
	 * names cannot be absolute. */
	check_invariants_abs(m, "libc.so.6", false);
	uint64_t a, s;
	const struct ls_proc *abort_p = ls_module_symbol(m, "abort", &a, &s) == 0 ? ls_procs_at_entry(&m->procs, a) : NULL;
	ok(abort_p && abort_p->from_dwarf && abort_p->noreturn, "libc: abort comes from DWARF and does not return");
	const struct ls_proc *mp = ls_module_symbol(m, "malloc", &a, &s) == 0 ? ls_procs_find(&m->procs, a) : NULL;
	uint64_t a2;
	ok(mp && mp->entry == a && s > 0 && ls_module_symbol(m, "__libc_malloc", &a2, NULL) == 0 && a2 == a,
	   "libc: malloc and its alias __libc_malloc are one procedure (%s)", mp ? mp->name : "-");
	size_t lines = 0;
	for (size_t i = 0; i < m->lines.nrows; i++)
		lines += m->lines.rows[i].file != NULL;
	ok(m->procs.nprocs > 2000 && m->inl.nnodes > 5000 && lines > 100000,
	   "libc: %zu procedures, %zu inline-tree nodes, %zu line rows", m->procs.nprocs, m->inl.nnodes, lines);
	unit_unload(m);
}

/* Split DWARF (gcc -gsplit-dwarf): the .dwo found next to the object, and
 * when it is gone, lines from the skeleton with one warning. */
static void check_split_dwarf(const char *fx)
{
	if (run("cd %s && gcc -O2 -g -gsplit-dwarf -c -o split.o %s/inline_deep.c && gcc -o split split.o",
		tmpdir, fx) != 0 || access(tmp("split.dwo"), R_OK) != 0 ||
	    run("gcc -O2 -g -o %s %s/inline_deep.c", tmp("nosplit"), fx) != 0) {
		skip("gcc -gsplit-dwarf");
		return;
	}
	check_same_answers(tmp("nosplit"), tmp("split"), NULL, "gcc -gsplit-dwarf (.dwo found)");
	rename(tmp("split.dwo"), tmp("split.dwo.away"));
	ls_error err;
	int w = 0;
	ls_module *m = load(tmp("split"), NULL, &err, &w);
	ok(m && m->inl.nnodes == 0 && m->lines.nrows > 10 && w == 1,
	   "gcc -gsplit-dwarf without its .dwo: lines from the skeleton, no inline tree, one warning (%d)", w);
	unit_unload(m);
}

/* ---- where a subtree ends (die_order.c) against libdw ------------------- */

/* Every DIE of BIN with a next sibling: ls_die_subtree_end must land on
 * the sibling libdw finds (dwarf_siblingof, the slow way). */
static void check_die_order(const char *bin, const char *what)
{
	ls_error err;
	int w = 0;
	ls_module *m = load(bin, NULL, &err, &w);
	if (!m || !m->dwarf) {
		ok(0, "%s: loads with DWARF", what);
		unit_unload(m);
		return;
	}
	size_t ndies = 0, bad = 0;
	struct ls_die_memo *memo = ls_die_memo_new();
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(m->dwarf, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cudie, stack[512];
		struct ls_die_unit u;
		if (!dwarf_offdie(m->dwarf, off + hsize, &cudie) || !ls_die_unit_init(&u, &cudie, memo)) {
			off = next;
			continue;
		}
		size_t n = 0;
		if (dwarf_child(&cudie, &stack[0]) == 0)
			n = 1;
		while (n) {
			Dwarf_Die d = stack[n - 1], sib;
			ndies++;
			int rc = dwarf_siblingof(&d, &sib);
			if (rc == 0) {
				const unsigned char *end = ls_die_subtree_end(&u, &d);
				if (end != sib.addr && bad++ < 3)
					diag("%s: DIE %#llx: its subtree ends at %+ld, its sibling is at %+ld", what,
					     (unsigned long long)dwarf_dieoffset(&d), end ? (long)(end - (const unsigned char *)d.addr) : 0L,
					     (long)((const unsigned char *)sib.addr - (const unsigned char *)d.addr));
				stack[n - 1] = sib;
			} else {
				n--;
			}
			Dwarf_Die kid;
			if (n < 511 && dwarf_child(&d, &kid) == 0)
				stack[n++] = kid;
		}
		off = next;
	}
	ls_die_memo_free(memo);
	ok(ndies > 1000 && bad == 0, "%s: every DIE's subtree ends at its sibling, as libdw finds it (%zu DIEs)", what, ndies);
	unit_unload(m);
}

/* ---- the line map on demand (linemap.c's islands) ------------------------- */

static bool same_row(const struct ls_line_row *a, const struct ls_line_row *b)
{
	if (!a || !b)
		return a == b;
	return a->addr == b->addr && a->file == b->file && a->line == b->line && a->column == b->column &&
	       a->flags == b->flags;
}

/* Whether LAZY answers as WHOLE over [LO, HI), as a procedure's
 * analysis reads it: the row covering LO, every row (gaps too) that
 * starts in [LO, HI), and the hidden statements there. */
static bool same_lines_in(const struct ls_linemap *whole, const struct ls_linemap *lazy, uint64_t lo, uint64_t hi)
{
	if (!same_row(ls_linemap_find(whole, lo), ls_linemap_find(lazy, lo)))
		return false;
	size_t i = LS_FIRST_AT_LEAST(whole->rows, whole->nrows, addr, lo);
	size_t j = LS_FIRST_AT_LEAST(lazy->rows, lazy->nrows, addr, lo);
	for (; i < whole->nrows && whole->rows[i].addr < hi; i++, j++)
		if (j >= lazy->nrows || !same_row(&whole->rows[i], &lazy->rows[j]))
			return false;
	if (j < lazy->nrows && lazy->rows[j].addr < hi)
		return false;
	const struct ls_line_row *ha, *hb;
	size_t na = ls_linemap_hidden_in(whole, lo, hi, &ha), nb = ls_linemap_hidden_in(lazy, lo, hi, &hb);
	if (na != nb)
		return false;
	for (size_t k = 0; k < na; k++)
		if (!same_row(&ha[k], &hb[k]))
			return false;
	return true;
}

/* The line map read unit by unit, as the analysis on demand reads it
 * (the procedures in a scrambled order, one at a time then in batches),
 * against the whole map: the same rows wherever a procedure was asked
 * for, no unit read that no procedure asked for needs (the first
 * procedure reads a few of them), and once every unit is read, the very
 * same map. */
static void check_lines_on_demand(const char *bin, const char *what)
{
	ls_error err;
	int w = 0;
	ls_module *m = load(bin, NULL, &err, &w);
	if (!m || !m->dwarf || !m->procs.nprocs) {
		skip(what);
		unit_unload(m);
		return;
	}
	struct ls_linemap whole = m->lines;
	memset(&m->lines, 0, sizeof m->lines);
	ls_linemap_open(m, &err);
	size_t n = m->procs.nprocs, nunits, nread, first_read = 0, bad = 0, asked = 0;
	ls_linemap_units(&m->lines, &nunits, &nread);
	bool none_read = nread == 0 && m->lines.nrows == 0;
	/* a stride prime to N: every procedure once, far apart */
	size_t stride = 7919 % n ? 7919 : 1;
	while (n > 1 && stride % n == 0)
		stride++;
	for (size_t k = 0, at = 0; k < n && asked < 600; k += 1 + k / 50) {
		/* batches of one, then growing */
		size_t batch = 1 + k / 50;
		uint32_t *procs = ls_xmalloc(batch * sizeof *procs);
		size_t nb = 0;
		for (; nb < batch && k + nb < n; nb++, at = (at + stride) % n)
			procs[nb] = (uint32_t)at;
		size_t total = 0;
		for (size_t i = 0; i < nb; i++)
			total += m->procs.procs[procs[i]].nranges;
		ls_range *r = ls_xmalloc((total + 1) * sizeof *r);
		total = 0;
		for (size_t i = 0; i < nb; i++)
			for (size_t q = 0; q < m->procs.procs[procs[i]].nranges; q++)
				r[total++] = m->procs.procs[procs[i]].ranges[q];
		ls_linemap_want(m, r, total);
		if (asked == 0)
			ls_linemap_units(&m->lines, &nunits, &first_read);
		for (size_t i = 0; i < total; i++)
			if (!same_lines_in(&whole, &m->lines, r[i].lo, r[i].hi) && bad++ < 3)
				diag("%s: rows differ in [%#" PRIx64 ", %#" PRIx64 ")", what, r[i].lo, r[i].hi);
		asked += nb;
		free(r);
		free(procs);
	}
	ls_linemap_units(&m->lines, &nunits, &nread);
	ok(none_read && nunits > 0 && (nunits < 8 || first_read * 4 < nunits),
	   "%s: the line map on demand reads no unit at first, %zu of %zu for the first procedure", what, first_read,
	   nunits);
	ok(bad == 0, "%s: on demand, the rows of %zu procedures are the whole map's (%zu units read)", what, asked,
	   nread);
	ls_linemap_want(m, &(ls_range){ 0, UINT64_MAX }, 1);
	ls_linemap_units(&m->lines, &nunits, &nread);
	bool same = m->lines.nrows == whole.nrows && m->lines.nhidden == whole.nhidden;
	for (size_t i = 0; same && i < whole.nrows; i++)
		same = same_row(&whole.rows[i], &m->lines.rows[i]);
	for (size_t i = 0; same && i < whole.nhidden; i++)
		same = same_row(&whole.hidden[i], &m->lines.hidden[i]);
	ok(same && nread == nunits, "%s: every unit read on demand, the map is the whole one (%zu rows, %zu of %zu units)",
	   what, m->lines.nrows, nread, nunits);
	ls_linemap_free(&m->lines);
	m->lines = whole;
	unit_unload(m);
}

int main(void)
{
	srcdir = getenv("top_srcdir");
	if (!srcdir)
		srcdir = "..";
	snprintf(tmpdir, sizeof tmpdir, "%s/ls-unit-dwarf.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		printf("1..0 # SKIP cannot make a temporary directory: %s\n", strerror(errno));
		return 0;
	}
	char fx[512];
	snprintf(fx, sizeof fx, "%s/tests/fixtures", srcdir);

	check_demangle();
	check_paths();

	if (!have("gcc")) {
		printf("1..%d # no gcc: fixtures skipped\n", test_no);
		return failed != 0;
	}
	/* Five-deep inlining, every compiler and DWARF version. */
	const char *ccs[] = { "gcc", "clang" };
	for (int c = 0; c < 2; c++) {
		if (!have(ccs[c])) {
			skip(ccs[c]);
			continue;
		}
		for (int v = 4; v <= 5; v++) {
			for (int o = 0; o < 2; o++) {
				const char *opt = o ? "-O2" : "-O0";
				char out[64], what[128];
				snprintf(out, sizeof out, "deep-%s%s-%d", ccs[c], opt, v);
				snprintf(what, sizeof what, "%s %s -gdwarf-%d inline_deep.c", ccs[c], opt, v);
				if (run("%s %s -gdwarf-%d -o %s %s/inline_deep.c", ccs[c], opt, v, tmp(out), fx) == 0)
					check_inline_deep(tmp(out), what, false);
				else
					ok(0, "%s: compiles", what);
			}
		}
	}
	/* The same code with DWARF 4 and 5, compressed, and split off. */
	if (run("gcc -O2 -g -o %s %s/inline_deep.c", tmp("d"), fx) == 0) {
		if (run("gcc -O2 -g -gz -o %s %s/inline_deep.c", tmp("d-gz"), fx) == 0)
			check_same_answers(tmp("d"), tmp("d-gz"), NULL, "gcc -O2 -g vs -gz (compressed debug sections)");
		if (run("gcc -O2 -gdwarf-4 -o %s %s/inline_deep.c", tmp("d4"), fx) == 0)
			check_same_answers(tmp("d"), tmp("d4"), NULL, "gcc -O2 -gdwarf-5 vs -gdwarf-4");
		if (run("objcopy --only-keep-debug %s %s && objcopy --strip-debug --add-gnu-debuglink=%s %s %s",
			tmp("d"), tmp("d.debug"), tmp("d.debug"), tmp("d"), tmp("d-stripped")) == 0) {
			check_same_answers(tmp("d"), tmp("d-stripped"), NULL, "stripped + .gnu_debuglink");
			ls_error err;
			int w = 0;
			ls_module *m = load(tmp("d-stripped"), NULL, &err, &w);
			ok(m && m->debug_path && ends_with(m->debug_path, "/d.debug") && m->build_id &&
			   strlen(m->build_id) == 40,
			   "stripped: debug info from %s, build-id %s", m && m->debug_path ? m->debug_path : "-",
			   m && m->build_id ? m->build_id : "-");
			/* By build-id alone, under a debug directory of our own. */
			if (m && m->build_id) {
				char dir[600];
				snprintf(dir, sizeof dir, "%s/.build-id/%.2s", tmp("dbg"), m->build_id);
				if (run("mkdir -p %s && cp %s %s/%s.debug && objcopy --remove-section=.gnu_debuglink %s %s",
					dir, tmp("d.debug"), dir, m->build_id + 2, tmp("d-stripped"), tmp("d-bid")) == 0)
					check_same_answers(tmp("d"), tmp("d-bid"), tmp("dbg"), "stripped, debug info found by build-id");
			}
			unit_unload(m);
		}
		check_bad_input(tmp("d"));
	}
	/* A relocatable object: libdwfl's layout, the first section at 0. */
	if (run("gcc -O2 -g -c -o %s %s/inline_deep.c", tmp("deep.o"), fx) == 0) {
		check_inline_deep(tmp("deep.o"), "gcc -O2 inline_deep.o (ET_REL)", true);
		ls_error err;
		int w = 0;
		ls_module *m = load(tmp("deep.o"), NULL, &err, &w);
		ok(m && m->ntext && m->text[0].addr == 0, "inline_deep.o: the first text section is at 0");
		unit_unload(m);
	}
	if (run("gcc -O2 -g -o %s %s/cold.c", tmp("cold"), fx) == 0)
		check_cold(tmp("cold"));
	if (run("gcc -O2 -g -fPIC -shared -o %s %s/shlib.c", tmp("shlib.so"), fx) == 0)
		check_shlib(tmp("shlib.so"));
	check_overrun();
	check_plt_layouts(fx);
	check_split_dwarf(fx);
	check_libc();
	/* the line map on demand: real libraries of thousands of units, and
	 * a fixture with a .cold split */
	char lib[600];
	snprintf(lib, sizeof lib, "%s/.libs/libloopscope.so", getenv("top_builddir") ? getenv("top_builddir") : "..");
	check_lines_on_demand(lib, "libloopscope.so");
	check_die_order(lib, "libloopscope.so");
	/* gcc's DWARF 5 for C++: abbreviations with DW_FORM_implicit_const */
	static const char cxx[] = "#include <map>\n#include <sstream>\n#include <string>\n#include <vector>\n"
		"int main(int argc, char **argv) { std::map<std::string, std::vector<int>> m; std::ostringstream o;\n"
		"for (int i = 0; i < argc; i++) m[argv[i]].push_back(i);\n"
		"for (auto &kv : m) o << kv.first << kv.second.size();\n return (int)o.str().size(); }\n";
	write_file(tmp("cxx.cc"), cxx, sizeof cxx - 1);
	if (have("g++") && run("g++ -O2 -g -o %s %s", tmp("cxx"), tmp("cxx.cc")) == 0)
		check_die_order(tmp("cxx"), "g++ -O2 -g, std::map, std::string, std::ostringstream");
	check_lines_on_demand("/usr/lib/x86_64-linux-gnu/libc.so.6", "libc.so.6");
	if (access(tmp("cold"), R_OK) == 0)
		check_lines_on_demand(tmp("cold"), "gcc -O2 cold.c");
	if (access(tmp("deep-clang-O2-5"), R_OK) == 0)
		check_lines_on_demand(tmp("deep-clang-O2-5"), "clang -O2 -gdwarf-5 inline_deep.c");

	run("rm -rf %s", tmpdir);
	return done_testing();
}
