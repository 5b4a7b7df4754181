/* unit-output.c - the writers (JSON, text, XML) and the cache, on a scope
 * tree built by hand, so that their contracts are checked independently of
 * the analysis:
 *
 *   - the lookup object of design.md, field by field, and the tree JSON is
 *     valid JSON even with hostile strings (quotes, control bytes, bad UTF-8);
 *   - the text tree has the stable line shapes tests grep for;
 *   - the XML is well formed, its ids unique, statements of one line merged,
 *     foreign-file statements guarded (and valid against its DTD when
 *     xmllint is installed);
 *   - a stored tree loads back identical (all outputs byte for byte), keyed
 *     by build-id or by content hash, and loop-less caches are kept apart;
 *   - truncated, bit-flipped and forged (checksum fixed up) cache files are
 *     misses or load a tree the writers can walk: never a crash.
 *
 * Prints TAP.
 */
#include "analyze.h"
#include "cache/cache.h"
#include "elf/module.h"
#include "output/output.h"
#include "structure/check.h"
#include "structure/lookup.h"
#include "structure/scope.h"
#include "support/base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tap.h"



static void diag(const char *label, const char *text)
{
	printf("# %s:\n", label);
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);
		printf("#   %.*s\n", len, p);
		p = nl ? nl + 1 : p + len;
	}
}

/* ---- a minimal JSON syntax checker (RFC 8259 grammar, strict strings) ---- */

static const char *js_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *js_value(const char *p, int depth);

static const char *js_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (;;) {
		unsigned char c = *p++;
		if (c == '"')
			return p;
		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			c = *p++;
			if (c == 'u') {
				for (int i = 0; i < 4; i++, p++)
					if (!strchr("0123456789abcdefABCDEF", *p) || !*p)
						return NULL;
			} else if (!strchr("\"\\/bfnrt", c) || !c) {
				return NULL;
			}
		} else if (c >= 0x80) {
			/* Well-formed UTF-8 only. */
			int n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 ? 1 : -1;
			if (n < 0 || c > 0xf4)
				return NULL;
			for (int i = 0; i < n; i++)
				if (((unsigned char)*p++ & 0xc0) != 0x80)
					return NULL;
		}
	}
}

static const char *js_value(const char *p, int depth)
{
	if (depth > 1000)
		return NULL;
	p = js_ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		bool obj = *p == '{';
		p = js_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				p = js_string(js_ws(p));
				if (!p)
					return NULL;
				p = js_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = js_value(p, depth + 1);
			if (!p)
				return NULL;
			p = js_ws(p);
			if (*p == ',') {
				p++;
				continue;
			}
			return *p == close ? p + 1 : NULL;
		}
	}
	if (*p == '"')
		return js_string(p);
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (!strncmp(p, "null", 4))
		return p + 4;
	const char *start = p;
	if (*p == '-')
		p++;
	while (*p >= '0' && *p <= '9')
		p++;
	return p > start ? p : NULL;
}

static bool json_valid(const char *text)
{
	const char *end = js_value(text, 0);
	return end && *js_ws(end) == '\0';
}

/* ---- the hand-built module ------------------------------------------------- */

#define SRC "/abs/small.cpp"

static ls_module *new_module(const char *path, const char *build_id, const char *cache_dir)
{
	ls_module *m = ls_xcalloc(1, sizeof *m);
	ls_options_init(&m->opt);
	m->opt.cache_dir = cache_dir;
	m->fd = -1;
	m->path = ls_xstrdup(path);
	m->build_id = build_id ? ls_xstrdup(build_id) : NULL;
	if (stat(path, &m->file_stat) < 0)
		memset(&m->file_stat, 0, sizeof m->file_stat); /* a made-up path: identity all zero */
	return m;
}

static void free_module(ls_module *m)
{
	ls_analysis_free(m);
	ls_cache_close(m);
	ls_cache_accesses_free(m);
	ls_arena_free(&m->arena);
	free(m->path);
	free(m->build_id);
	free(m);
}

static struct ls_scope *node(ls_module *m, ls_scope_kind kind, struct ls_scope *parent,
			     const char *file, unsigned line)
{
	struct ls_scope *s = ls_scope_new(&m->arena, kind, parent);
	s->file = file;
	s->line = line;
	return s;
}

static struct ls_loop_info *loop_info(ls_module *m, uint64_t header, unsigned depth,
				      const uint64_t *entries, size_t nentries)
{
	struct ls_loop_info *l = ls_arena_alloc(&m->arena, sizeof *l);
	l->header = header;
	l->depth = depth;
	l->irreducible = nentries > 1;
	l->entries = ls_arena_alloc(&m->arena, nentries * sizeof *l->entries);
	memcpy(l->entries, entries, nentries * sizeof *entries);
	l->nentries = nentries;
	return l;
}

static void add_edge(ls_module *m, ls_edge **v, size_t *n, uint64_t from, uint64_t to)
{
	ls_edge *e = ls_arena_alloc(&m->arena, (*n + 1) * sizeof *e);
	if (*n)
		memcpy(e, *v, *n * sizeof *e);
	e[*n] = (ls_edge){ from, to };
	*v = e;
	(*n)++;
}

/* The slides' small.cpp, as the analysis would place it:
 *
 *   proc main (small.cpp:12)                        [0x401130-0x4011d2)
 *     stmt 13                                       [0x401130-0x401150)
 *     loop at 19, header 0x401150, depth 1          [0x401150-0x4011c8)
 *       stmt 19                                     [0x401150-0x401158)
 *       [I] do_work called at 20 (small.cpp:6)      [0x401158-0x4011c0)
 *         loop at 8, irreducible: 0x401170 0x401190 [0x401170-0x4011a0)
 *           stmt 9                                  [0x401170-0x401180)
 *           stmt other.h:33 (hostile name)          [0x401180-0x401190)
 *           stmt 9                                  [0x401190-0x4011a0)
 *         alien macro.h:4                           [0x4011a0-0x4011c0)
 *           stmt macro.h:4
 *       stmt 21                                     [0x4011c0-0x4011c8)
 *     stmt 25                                       [0x4011c8-0x4011d2)
 *   proc helper (no file, no line)                  [0x401200-0x401210)
 *     stmt [no line]
 */
static const char *const hostile = "/abs/we\"ird\\\x01\t<&>'\xff\xc3(.h";

static void build_small(ls_module *m)
{
	struct ls_scope *root = node(m, LS_SCOPE_MODULE, NULL, NULL, 0);
	root->name = m->path;
	m->root = root;

	struct ls_scope *main_ = node(m, LS_SCOPE_PROC, root, SRC, 12);
	main_->name = "main";
	ls_scope_add_range(&m->arena, main_, 0x401130, 0x4011d2);
	struct ls_scope *s = node(m, LS_SCOPE_STMT, main_, SRC, 13);
	ls_scope_add_range(&m->arena, s, 0x401130, 0x401150);

	struct ls_scope *outer = node(m, LS_SCOPE_LOOP, main_, SRC, 19);
	ls_scope_add_range(&m->arena, outer, 0x401150, 0x4011c8);
	outer->loop = loop_info(m, 0x401150, 1, (uint64_t[]){ 0x401150 }, 1);
	add_edge(m, &outer->loop->backedges, &outer->loop->nbackedges, 0x4011c0, 0x401150);
	add_edge(m, &outer->loop->exits, &outer->loop->nexits, 0x4011c4, 0x4011c8);
	s = node(m, LS_SCOPE_STMT, outer, SRC, 19);
	ls_scope_add_range(&m->arena, s, 0x401150, 0x401158);

	struct ls_scope *inl = node(m, LS_SCOPE_INLINE, outer, SRC, 6);
	inl->name = "do_work";
	inl->call_file = SRC;
	inl->call_line = 20;
	inl->call_column = 5;
	ls_scope_add_range(&m->arena, inl, 0x401158, 0x4011c0);

	struct ls_scope *inner = node(m, LS_SCOPE_LOOP, inl, SRC, 8);
	ls_scope_add_range(&m->arena, inner, 0x401170, 0x4011a0);
	inner->loop = loop_info(m, 0x401170, 2, (uint64_t[]){ 0x401170, 0x401190 }, 2);
	add_edge(m, &inner->loop->backedges, &inner->loop->nbackedges, 0x40119c, 0x401170);
	add_edge(m, &inner->loop->backedges, &inner->loop->nbackedges, 0x40118c, 0x401190);
	add_edge(m, &inner->loop->exits, &inner->loop->nexits, 0x40119e, 0x4011a0);
	s = node(m, LS_SCOPE_STMT, inner, SRC, 9);
	ls_scope_add_range(&m->arena, s, 0x401170, 0x401180);
	s = node(m, LS_SCOPE_STMT, inner, hostile, 33);
	ls_scope_add_range(&m->arena, s, 0x401180, 0x401190);
	s = node(m, LS_SCOPE_STMT, inner, SRC, 9);
	ls_scope_add_range(&m->arena, s, 0x401190, 0x4011a0);

	struct ls_scope *alien = node(m, LS_SCOPE_ALIEN, inl, "/abs/macro.h", 4);
	ls_scope_add_range(&m->arena, alien, 0x4011a0, 0x4011c0);
	s = node(m, LS_SCOPE_STMT, alien, "/abs/macro.h", 4);
	ls_scope_add_range(&m->arena, s, 0x4011a0, 0x4011c0);

	s = node(m, LS_SCOPE_STMT, outer, SRC, 21);
	ls_scope_add_range(&m->arena, s, 0x4011c0, 0x4011c8);
	s = node(m, LS_SCOPE_STMT, main_, SRC, 25);
	ls_scope_add_range(&m->arena, s, 0x4011c8, 0x4011d2);

	struct ls_scope *helper = node(m, LS_SCOPE_PROC, root, NULL, 0);
	helper->name = "helper";
	helper->linkage_name = "_Z6helperv";
	ls_scope_add_range(&m->arena, helper, 0x401200, 0x401210);
	s = node(m, LS_SCOPE_STMT, helper, NULL, 0);
	ls_scope_add_range(&m->arena, s, 0x401200, 0x401210);
}

/* ---- outputs as strings ------------------------------------------------------ */

enum { OUT_TEXT, OUT_JSON, OUT_XML, OUT_CHAINS };

static char *render(const ls_module *m, int what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ls_error err;
	switch (what) {
	case OUT_TEXT: ls_write_text(m, f, &err); break;
	case OUT_JSON: ls_write_json(m, f, &err); break;
	case OUT_XML: ls_write_xml(m, f, &err); break;
	case OUT_CHAINS:
		for (uint64_t a = 0x401120; a < 0x401220; a += 4) {
			ls_write_chain_json(m, a, f);
			fputc('\n', f);
		}
		break;
	}
	fclose(f);
	return buf;
}

static char *chain_of(const ls_module *m, uint64_t addr)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ls_write_chain_json(m, addr, f);
	fclose(f);
	return buf;
}

/* The tree made by hand taken as the module's whole analysis: the
 * directory of its procedures and each one's index of statements. */
static void index_tree(ls_module *m)
{
	ls_analysis_free(m);
	ls_analysis_adopt_tree(m);
}

/* The module's cache entry read whole, as ls_module_open reads it: 1 if
 * it holds every procedure (each record checks), else 0 (a miss: the test
 * has no binary to analyze what the entry lacks). */
static int cache_load(ls_module *m)
{
	ls_error err;
	ls_cache_open(m);
	if (!m->cache)
		return 0;
	if (ls_analysis_init(m, &err) < 0)
		return 0;
	struct ls_arena scratch = { 0 };
	int whole = 1;
	for (size_t i = 0; whole && i < m->an->dir.nprocs; i++) {
		struct ls_proc_done d;
		whole = ls_cache_load_proc(m, i, &scratch, &d) > 0;
	}
	ls_arena_free(&scratch);
	if (!whole || ls_analyze_all(m, &err) < 0)
		return 0;
	return m->root != NULL;
}

/* ---- tests --------------------------------------------------------------------- */

static void test_json(ls_module *m)
{
	char *c = chain_of(m, 0x401175);
	const char *want =
		"{\"addr\":\"0x401175\",\"module\":\"/abs/path/bin\",\"chain\":["
		"{\"kind\":\"proc\",\"name\":\"main\",\"file\":\"/abs/small.cpp\",\"line\":12},"
		"{\"kind\":\"loop\",\"file\":\"/abs/small.cpp\",\"line\":19,\"header\":\"0x401150\",\"depth\":1,\"irreducible\":false},"
		"{\"kind\":\"inline\",\"name\":\"do_work\",\"call_file\":\"/abs/small.cpp\",\"call_line\":20,\"file\":\"/abs/small.cpp\",\"line\":6},"
		"{\"kind\":\"loop\",\"file\":\"/abs/small.cpp\",\"line\":8,\"header\":\"0x401170\",\"depth\":2,\"irreducible\":true},"
		"{\"kind\":\"stmt\",\"file\":\"/abs/small.cpp\",\"line\":9}]}";
	ok(strcmp(c, want) == 0, "lookup JSON of 0x401175 has the design.md shape");
	if (strcmp(c, want))
		diag("got", c);
	free(c);

	c = chain_of(m, 0x401200);
	ok(strcmp(c, "{\"addr\":\"0x401200\",\"module\":\"/abs/path/bin\",\"chain\":["
		     "{\"kind\":\"proc\",\"name\":\"helper\",\"file\":null,\"line\":null},"
		     "{\"kind\":\"stmt\",\"file\":null,\"line\":null}]}") == 0,
	   "unknown file is null, unknown line null (line 0 is never shown as a line)");
	free(c);

	c = chain_of(m, 0x500000);
	ok(strcmp(c, "{\"addr\":\"0x500000\",\"module\":\"/abs/path/bin\",\"chain\":[],"
		     "\"error\":\"no procedure contains 0x500000\"}") == 0,
	   "an address outside every procedure gives an empty chain and an error");
	free(c);

	c = chain_of(m, 0x401185);
	ok(json_valid(c) && strstr(c, "\"file\":\"/abs/we\\\"ird\\\\\\u0001\\t<&>'\\ufffd\\ufffd(.h\""),
	   "hostile file names are escaped (quote, backslash, control, bad UTF-8)");
	if (!strstr(c, "\\ufffd"))
		diag("got", c);
	free(c);

	char *tree = render(m, OUT_JSON);
	ok(json_valid(tree), "struct JSON is valid JSON");
	const char *root_start = "{\"kind\":\"module\",\"name\":\"/abs/path/bin\",\"build_id\":\"00ff\"";
	ok(strncmp(tree, root_start, strlen(root_start)) == 0,
	   "struct JSON root: kind module, name, build_id");
	ok(strstr(tree, "\"entries\":[\"0x401170\",\"0x401190\"],"
			"\"backedges\":[[\"0x40119c\",\"0x401170\"],[\"0x40118c\",\"0x401190\"]],"
			"\"exits\":[[\"0x40119e\",\"0x4011a0\"]]") != NULL,
	   "struct JSON loops carry entries, back edges and exits");
	ok(strstr(tree, "\"ranges\":[[\"0x401130\",\"0x4011d2\"]]") != NULL,
	   "struct JSON ranges are [lo,hi] hex pairs");
	ok(strstr(tree, "\"linkage_name\":\"_Z6helperv\"") != NULL, "struct JSON has linkage names");
	free(tree);

	char *chains = render(m, OUT_CHAINS);
	bool all = true;
	for (char *line = chains, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		*nl = '\0';
		all = all && json_valid(line);
	}
	ok(all, "every lookup line of 0x401120..0x401220 is valid JSON");
	free(chains);
}

/* ls_chain_json (the GDB module's): the same bytes as the stream writer,
 * snprintf's contract, and every field a chain can carry: a procedure's
 * unresolved jumps, and "cut" for a chain deeper than LS_MAX_CHAIN (a proc,
 * 300 nested loops and a statement: 302 scopes, 46 cut). */
static void test_chain_buffer(void)
{
	ls_module *m = new_module("/abs/deep", "00ee", "/nonexistent");
	struct ls_scope *root = node(m, LS_SCOPE_MODULE, NULL, NULL, 0);
	root->name = m->path;
	m->root = root;
	struct ls_scope *p = node(m, LS_SCOPE_PROC, root, SRC, 1);
	p->name = "deep";
	p->unresolved_jumps = 3;
	ls_scope_add_range(&m->arena, p, 0x1000, 0x1100);
	struct ls_scope *parent = p;
	for (unsigned d = 1; d <= 300; d++) {
		struct ls_scope *l = node(m, LS_SCOPE_LOOP, parent, SRC, d + 1);
		ls_scope_add_range(&m->arena, l, 0x1000, 0x1100);
		l->loop = loop_info(m, 0x1000, d, (uint64_t[]){ 0x1000 }, 1);
		parent = l;
	}
	struct ls_scope *s = node(m, LS_SCOPE_STMT, parent, SRC, 400);
	ls_scope_add_range(&m->arena, s, 0x1000, 0x1100);
	index_tree(m);

	char *want = chain_of(m, 0x1010);
	size_t need = ls_chain_json(m, 0x1010, NULL, 0);
	char *buf = malloc(need + 1);
	size_t got = ls_chain_json(m, 0x1010, buf, need + 1);
	ok(need == strlen(want) && got == need && strcmp(buf, want) == 0,
	   "ls_chain_json: the bytes of ls_write_chain_json, its length returned (%zu)", need);
	char small[16];
	got = ls_chain_json(m, 0x1010, small, sizeof small);
	ok(got == need && strlen(small) == sizeof small - 1 && strncmp(small, want, sizeof small - 1) == 0,
	   "ls_chain_json into a short buffer: cut and terminated, the whole length returned");
	ok(strstr(buf, "{\"kind\":\"proc\",\"name\":\"deep\",\"unresolved_jumps\":3,") != NULL,
	   "a procedure's unresolved jumps are in its chain");
	ok(strstr(buf, "],\"cut\":46}") != NULL && json_valid(buf),
	   "a chain 302 deep: 256 scopes and \"cut\":46");
	free(buf);
	free(want);
	free_module(m);
}

static void test_text(ls_module *m)
{
	char *t = render(m, OUT_TEXT);
	ok(strstr(t, "module /abs/path/bin [build-id 00ff]\n") == t, "text starts with the module");
	ok(strstr(t, "\nproc main (/abs/small.cpp:12) [0x401130-0x4011d2)\n") != NULL,
	   "text: proc line with full path and ranges");
	ok(strstr(t, "\n  loop at small.cpp:19 [header 0x401150, depth 1]\n") != NULL,
	   "text: loop line");
	ok(strstr(t, "\n    [I] do_work called at small.cpp:20 (small.cpp:6)\n") != NULL,
	   "text: inline line");
	ok(strstr(t, "\n      loop at small.cpp:8 [header 0x401170, depth 2, irreducible: entries 0x401170, 0x401190]\n") != NULL,
	   "text: irreducible loop lists its entries");
	ok(strstr(t, "\n        stmt small.cpp:9 [0x401170-0x401180)\n") != NULL, "text: stmt line");
	ok(strstr(t, "\n      alien macro.h:4\n") != NULL, "text: alien line");
	free(t);
}

static void test_xml(ls_module *m, const char *tmpdir)
{
	char *x = render(m, OUT_XML);
	ok(strstr(x, "<HPCToolkitStructure i=\"0\" version=\"4.9\" n=\"\">") != NULL,
	   "XML: HPCToolkitStructure version 4.9");
	ok(strstr(x, "<LM i=\"2\" n=\"/abs/path/bin\" has-calls=\"0\" v=\"{}\">") != NULL, "XML: LM");
	ok(strstr(x, " n=\"main\" ln=\"main\" l=\"12\" v=\"{[0x401130-0x401131)}\">") != NULL,
	   "XML: P with name, link name, line and entry");
	ok(strstr(x, " l=\"9\" v=\"{[0x401170-0x401180) [0x401190-0x4011a0)}\"/>") != NULL,
	   "XML: statements of one line merged into one S");
	ok(strstr(x, " l=\"20\" f=\"/abs/small.cpp\" n=\"\" v=\"{}\">") != NULL &&
	   strstr(x, " l=\"6\" f=\"/abs/small.cpp\" n=\"do_work\" v=\"{}\">") != NULL,
	   "XML: an inlined call is a call-site alien around a callee alien");
	ok(strstr(x, "<L i=\"") && strstr(x, " l=\"8\" f=\"/abs/small.cpp\" v=\"{[0x401170-0x401171)}\">"),
	   "XML: loop with line, file and header");
	ok(strstr(x, " f=\"/abs/we&quot;ird\\?&#9;&lt;&amp;&gt;&apos;?\?(.h\" n=\"&lt;inline&gt;\" v=\"{}\">") != NULL,
	   "XML: foreign-file statement guarded, its name escaped");
	ok(strstr(x, "<F i=\"3\" n=\"\">") != NULL && strstr(x, "n=\"helper\" ln=\"_Z6helperv\" l=\"0\""),
	   "XML: a procedure without a file goes under F n=\"\"");

	/* ids unique */
	bool unique = true;
	size_t nids = 0;
	unsigned long *ids = NULL;
	for (const char *p = x; (p = strstr(p, " i=\"")); p += 4) {
		ids = realloc(ids, (nids + 1) * sizeof *ids);
		ids[nids++] = strtoul(p + 4, NULL, 10);
	}
	for (size_t i = 0; i < nids; i++)
		for (size_t j = i + 1; j < nids; j++)
			unique = unique && ids[i] != ids[j];
	ok(unique && nids >= 15, "XML: %zu ids, all unique", nids);
	free(ids);

	char path[4200];
	snprintf(path, sizeof path, "%s/small.hpcstruct", tmpdir);
	FILE *f = fopen(path, "w");
	fputs(x, f);
	fclose(f);
	if (system("xmllint --version >/dev/null 2>&1") == 0) {
		char cmd[8600];
		snprintf(cmd, sizeof cmd, "xmllint --noout --valid '%s'", path);
		ok(system(cmd) == 0, "XML: xmllint --valid accepts it (well formed, valid against its DTD)");
	} else {
		printf("ok %d # SKIP xmllint not installed\n", ++test_no);
	}
	free(x);
}

static char *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	*size = 0;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc(n + 1);
	*size = fread(buf, 1, n, f);
	fclose(f);
	return buf;
}

static void write_file(const char *path, const char *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	fwrite(data, 1, size, f);
	fclose(f);
}

/* Load the cache for a fresh module keyed like M; returns whether it loaded
 * and, if it did, walks it with every writer (a corrupt tree would crash or
 * trip the sanitizers here). */
/* What the cache loader promises of any tree it accepts, forged or not
 * (cache.c checks every record for it): one module scope, the root; every
 * child's parent is the scope whose child list holds it; no deeper than the
 * loader's bound of 4096; a loop record only on a loop scope. */
static bool tree_keeps_promises(const ls_module *m)
{
	const struct ls_scope *root = m->root, *s = root;
	if (!root || root->kind != LS_SCOPE_MODULE || root->parent)
		return false;
	unsigned depth = 0;
	for (;;) {
		if ((s != root && s->kind == LS_SCOPE_MODULE) || (s->loop && s->kind != LS_SCOPE_LOOP) ||
		    depth > 4096)
			return false;
		if (s->first_child) {
			if (s->first_child->parent != s)
				return false;
			s = s->first_child;
			depth++;
			continue;
		}
		while (s != root && !s->next_sibling) {
			s = s->parent;
			depth--;
		}
		if (s == root)
			return true;
		if (s->next_sibling->parent != s->parent)
			return false;
		s = s->next_sibling;
	}
}

static int broken_promises; /* loaded trees that failed tree_keeps_promises */

static int try_load(const char *path, const char *build_id, const char *dir, int want_loops)
{
	ls_module *m = new_module(path, build_id, dir);
	m->opt.want_loops = want_loops;
	int loaded = cache_load(m);
	if (loaded && !tree_keeps_promises(m))
		broken_promises++;
	if (loaded) {
		for (int w = OUT_TEXT; w <= OUT_CHAINS; w++)
			free(render(m, w));
	}
	free_module(m);
	return loaded;
}

/* M's procedures (all under the root, in file order) grouped under one
 * file scope per source file, as the analysis assembles its tree: the
 * cache keeps procedures, and the tree above them is made again. */
static void group_by_file(ls_module *m)
{
	struct ls_scope *procs[16];
	size_t n = 0;
	for (struct ls_scope *p = m->root->first_child; p && n < 16; p = p->next_sibling)
		procs[n++] = p;
	m->root->first_child = m->root->last_child = NULL;
	struct ls_scope *file = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!file || (file->file != procs[i]->file &&
		              (!file->file || !procs[i]->file || strcmp(file->file, procs[i]->file)))) {
			file = node(m, LS_SCOPE_FILE, m->root, procs[i]->file, 0);
		}
		ls_scope_add_child(file, procs[i]);
		for (size_t r = 0; r < procs[i]->nranges; r++) {
			ls_scope_add_range(&m->arena, file, procs[i]->ranges[r].lo, procs[i]->ranges[r].hi);
			ls_scope_add_range(&m->arena, m->root, procs[i]->ranges[r].lo, procs[i]->ranges[r].hi);
		}
	}
	index_tree(m);
}

static void test_cache(ls_module *orig, const char *dir)
{
	group_by_file(orig);
	char *text = render(orig, OUT_TEXT), *json = render(orig, OUT_JSON);
	char *xml = render(orig, OUT_XML), *chains = render(orig, OUT_CHAINS);

	ok(!try_load(orig->path, orig->build_id, dir, 1), "cache: empty directory is a miss");
	ls_cache_store(orig);
	char file[4200];
	snprintf(file, sizeof file, "%s/00ff.lsc", dir);
	struct stat st;
	int stored = stat(file, &st) == 0 && st.st_size > 0;
	ok(stored, "cache: stored as DIR/<build-id>.lsc (%lld bytes)", stored ? (long long)st.st_size : 0LL);

	ls_module *m = new_module(orig->path, orig->build_id, dir);
	ok(cache_load(m) == 1 && ls_module_from_cache(m), "cache: loads back");
	/* each procedure's lookup index comes with its tree: the one the tree makes */
	const char *why = ls_check_module(m, LS_CHECK_LOOKUP, false);
	size_t nsegs = 0;
	for (size_t i = 0; i < m->an->dir.nprocs; i++)
		nsegs += m->an->done[i] ? m->an->done[i]->nsegs : 0;
	ok(nsegs > 0 && why == NULL, "cache: the stored lookup index is the tree's (%zu segments)%s%s",
	   nsegs, why ? ": " : "", why ? why : "");
	char *c2 = render(m, OUT_CHAINS); /* lookups through the loaded index */
	char *t2 = render(m, OUT_TEXT), *j2 = render(m, OUT_JSON);
	char *x2 = render(m, OUT_XML);
	if (strcmp(json, j2))
		diag("json before", json), diag("json after", j2);
	ok(strcmp(text, t2) == 0, "cache: text output identical after the round trip");
	ok(strcmp(json, j2) == 0, "cache: JSON output identical after the round trip");
	ok(strcmp(xml, x2) == 0, "cache: XML output identical after the round trip");
	ok(strcmp(chains, c2) == 0, "cache: lookup chains identical after the round trip");
	free(t2), free(j2), free(x2), free(c2);
	free_module(m);

	ok(!try_load(orig->path, orig->build_id, dir, 0), "cache: a tree with loops does not serve --no-loops");
	ok(!try_load(orig->path, "00fe", dir, 1), "cache: another build-id is a miss");

	/* The same file at another path (moved: same inode, size and mtime):
	 * the module name follows the path. */
	m = new_module("/elsewhere/bin", orig->build_id, dir);
	ok(cache_load(m) == 1 && strcmp(m->root->name, "/elsewhere/bin") == 0,
	   "cache: the same file at another path loads, named by its new path");
	free_module(m);
	/* Another file with the same build-id (rebuilt, copied, touched): a miss. */
	const char *what[] = { "size", "mtime", "inode" };
	for (int w = 0; w < 3; w++) {
		m = new_module(orig->path, orig->build_id, dir);
		if (w == 0)
			m->file_stat.st_size = 12345;
		else if (w == 1)
			m->file_stat.st_mtim.tv_nsec = 1;
		else
			m->file_stat.st_ino = 777;
		ok(cache_load(m) == 0, "cache: the binary's %s differs from the stored one: a miss", what[w]);
		free_module(m);
	}

	/* Corruption: every truncation, flips all over, forged records. */
	size_t size;
	char *good = read_file(file, &size);
	if (!good || size < 200) {
		ok(0, "cache: the stored file can be read back");
		free(good);
		free(text), free(json), free(xml), free(chains);
		return;
	}
	bool crashed_or_loaded = false;
	for (size_t len = 0; len < size; len += (len < 200 ? 1 : 37)) {
		write_file(file, good, len);
		if (try_load(orig->path, orig->build_id, dir, 1))
			crashed_or_loaded = true;
	}
	ok(!crashed_or_loaded, "cache: every truncated file is a miss");

	int flips_loaded = 0, nflips = 0;
	uint32_t header_size;
	memcpy(&header_size, good + 20, 4);
	for (size_t pos = 0; pos < size; pos += pos < header_size ? 1 : 3, nflips++) {
		char *bad = malloc(size);
		memcpy(bad, good, size);
		bad[pos] ^= 0x5a;
		write_file(file, bad, size);
		flips_loaded += try_load(orig->path, orig->build_id, dir, 1);
		free(bad);
	}
	ok(flips_loaded == 0, "cache: %d flipped bytes (header and body) caught (%d loaded)", nflips,
	   flips_loaded);

	/* Forged: random bytes with the checksum fixed up, so that only the
	 * record checks stand between the file and the tree. */
	unsigned seed = 12345;
	int forged_loaded = 0, nforged = 0;
	broken_promises = 0;
	for (int round = 0; round < 3000; round++, nforged++) {
		char *bad = malloc(size);
		memcpy(bad, good, size);
		int nbytes = 1 + round % 4;
		for (int i = 0; i < nbytes; i++) {
			seed = seed * 1103515245 + 12345;
			size_t pos = header_size + (seed >> 8) % (size - header_size);
			seed = seed * 1103515245 + 12345;
			bad[pos] = (round & 1) ? (char)(seed >> 16) : (char)0xff;
		}
		uint64_t sum = ls_cache_checksum(bad, size);
		memcpy(bad + 32, &sum, 8);
		write_file(file, bad, size);
		forged_loaded += try_load(orig->path, orig->build_id, dir, 1);
		free(bad);
	}
	ok(broken_promises == 0, "cache: %d forged files: each a miss, or a tree that keeps the loader's "
	   "promises and that all writers walk (%d loaded, %d broke them)", nforged, forged_loaded, broken_promises);

	/* Header fields forged: offsets and counts past the end.  The checksum
	 * field itself (bytes 32..39) forged and not fixed up: always a miss. */
	int hdr_loaded = 0, sum_loaded = 0, sum_forged = 0;
	broken_promises = 0;
	for (size_t pos = 8; pos < header_size; pos++) {
		for (int v = 0; v < 3; v++) {
			char *bad = malloc(size);
			memcpy(bad, good, size);
			bad[pos] = v == 0 ? (char)0xff : v == 1 ? (char)0x7f : (char)(bad[pos] + 8);
			if (pos < 32 || pos >= 40) { /* checksum fixed up: only the field checks stand */
				uint64_t sum = ls_cache_checksum(bad, size);
				memcpy(bad + 32, &sum, 8);
			}
			write_file(file, bad, size);
			int loaded = try_load(orig->path, orig->build_id, dir, 1);
			hdr_loaded += loaded;
			if (pos >= 32 && pos < 40 && bad[pos] != good[pos]) {
				sum_forged++;
				sum_loaded += loaded;
			}
			free(bad);
		}
	}
	ok(broken_promises == 0, "cache: forged header fields: each a miss, or a tree that keeps the loader's "
	   "promises (%d loaded, %d broke them)", hdr_loaded, broken_promises);
	ok(sum_forged > 0 && sum_loaded == 0, "cache: a forged checksum field is a miss (%d forgeries, %d loaded)",
	   sum_forged, sum_loaded);

	write_file(file, good, size);
	ok(try_load(orig->path, orig->build_id, dir, 1), "cache: the restored file loads again");
	free(good);
	free(text), free(json), free(xml), free(chains);
}

static void test_content_key(const char *dir)
{
	/* No build-id: keyed by the binary's content. */
	char bin[4200];
	snprintf(bin, sizeof bin, "%s/nobuildid.bin", dir);
	write_file(bin, "\x7f" "ELF pretend binary", 19);
	ls_module *m = new_module(bin, NULL, dir);
	build_small(m);
	index_tree(m);
	ls_cache_store(m);
	free_module(m);

	DIR *d = opendir(dir);
	int hfiles = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		hfiles += e->d_name[0] == 'h' && strstr(e->d_name, ".lsc") != NULL;
	if (d)
		closedir(d);
	ok(hfiles == 1, "cache: a binary without build-id is stored as h<content-hash>.lsc");
	ok(try_load(bin, NULL, dir, 1), "cache: and loads back by its content");
	write_file(bin, "\x7f" "ELF pretend binarY", 19);
	ok(!try_load(bin, NULL, dir, 1), "cache: a changed binary is a miss");
}

int main(void)
{
	char tmpl[] = "/tmp/ls-unit-output.XXXXXX";
	char *dir = mkdtemp(tmpl);
	if (!dir) {
		printf("1..0 # SKIP cannot make a temporary directory\n");
		return 0;
	}
	ls_module *m = new_module("/abs/path/bin", "00ff", dir);
	build_small(m);
	index_tree(m);

	test_json(m);
	test_chain_buffer();
	test_text(m);
	test_xml(m, dir);
	test_cache(m, dir);
	test_content_key(dir);
	free_module(m);

	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return done_testing();
}
