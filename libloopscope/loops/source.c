/* source.c - the source files, read as C/C++ tokens, for the loop-line
 * rules (loop_line.c).
 *
 * DWARF does not always say where a loop's statement is: clang gives a
 * `for (;;)`, a `while (1)` or a loop made with goto no line-table row at
 * all, since they have no code of their own.  When the source file is
 * readable at the path DWARF names, it answers: which lines begin a loop
 * statement (for, while, do, or a label that a goto jumps to), and which
 * lines their bodies span.  Nothing else depends on it: without the file,
 * the rules use DWARF alone.
 *
 * The reader is a tokenizer, not a parser: comments, string and character
 * literals (raw strings too) and preprocessor lines are skipped, and a
 * statement's extent is found by matching parentheses and braces.  That is
 * enough for the question asked (does this line start a loop, and does its
 * body reach that line), and it never fails: a file it cannot make sense of
 * only gives fewer or wider statements.  Files are read once per module,
 * on first use, under a lock (the analysis runs on several threads), and
 * only if they are regular files.  Every file looked at, found or not, is
 * recorded: the cache keys the tree by them (cache.c). */
#include "loops/source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Statement nesting deeper than this is cut (a hostile or generated file
 * must not exhaust the stack). */
#define MAX_NESTING 256

enum tok_kind { T_IDENT, T_PUNCT };
enum { KW_NONE, KW_FOR, KW_WHILE, KW_DO, KW_IF, KW_ELSE, KW_SWITCH, KW_GOTO, KW_CASE, KW_DEFAULT, KW_ACCESS };

struct token {
	uint32_t line;
	uint32_t off;      /* into the file's text */
	uint16_t len;
	uint8_t kind;      /* enum tok_kind */
	uint8_t kw;        /* KW_* for identifiers */
};

struct ls_source {
	char *text;
	struct token *toks;
	size_t ntoks;
	uint32_t nlines;
	uint32_t *line_tok;            /* first token index of each line (1-based; [nlines + 1] = ntoks) */
	struct ls_src_stmt *stmts;     /* sorted by line, then by end */
	size_t nstmts;
};

/* ---- tokens ------------------------------------------------------------- */

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (unsigned char)c >= 0x80;
}

static bool is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static uint8_t keyword(const char *s, size_t n)
{
	static const struct { const char *w; uint8_t kw; } words[] = {
		{ "for", KW_FOR }, { "while", KW_WHILE }, { "do", KW_DO }, { "if", KW_IF },
		{ "else", KW_ELSE }, { "switch", KW_SWITCH }, { "goto", KW_GOTO }, { "case", KW_CASE },
		{ "default", KW_DEFAULT }, { "public", KW_ACCESS }, { "private", KW_ACCESS },
		{ "protected", KW_ACCESS },
	};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strlen(words[i].w) == n && memcmp(words[i].w, s, n) == 0)
			return words[i].kw;
	return KW_NONE;
}

struct lexer {
	const char *s;
	size_t n, i;
	uint32_t line;
	struct token *toks;
	size_t ntoks, cap;
};

static void push(struct lexer *lx, size_t start, size_t len, uint8_t kind)
{
	lx->toks = ls_grow(lx->toks, &lx->cap, lx->ntoks + 1, sizeof *lx->toks);
	struct token *t = &lx->toks[lx->ntoks++];
	t->line = lx->line;
	t->off = (uint32_t)start;
	t->len = len > 0xffff ? 0xffff : (uint16_t)len;
	t->kind = kind;
	t->kw = kind == T_IDENT ? keyword(lx->s + start, len) : KW_NONE;
}

/* Advances over S[I] (one byte), counting lines. */
static void step(struct lexer *lx)
{
	if (lx->s[lx->i] == '\n')
		lx->line++;
	lx->i++;
}

/* A string or character literal starting at the quote at I. */
static void skip_literal(struct lexer *lx)
{
	char q = lx->s[lx->i];
	step(lx);
	while (lx->i < lx->n && lx->s[lx->i] != q && lx->s[lx->i] != '\n') {
		if (lx->s[lx->i] == '\\' && lx->i + 1 < lx->n)
			step(lx);
		step(lx);
	}
	if (lx->i < lx->n && lx->s[lx->i] == q)
		step(lx);
}

/* A C++ raw string R"delim( ... )delim" whose quote is at I. */
static void skip_raw_string(struct lexer *lx)
{
	size_t d0 = lx->i + 1, d1 = d0;
	while (d1 < lx->n && d1 - d0 < 16 && lx->s[d1] != '(' && lx->s[d1] != '\n')
		d1++;
	if (d1 >= lx->n || lx->s[d1] != '(') {
		skip_literal(lx);
		return;
	}
	size_t dlen = d1 - d0;
	while (lx->i < lx->n) {
		if (lx->s[lx->i] == ')' && lx->i + dlen + 1 < lx->n &&
		    memcmp(lx->s + lx->i + 1, lx->s + d0, dlen) == 0 && lx->s[lx->i + 1 + dlen] == '"' &&
		    lx->i > d1) {
			for (size_t k = 0; k < dlen + 2; k++)
				step(lx);
			return;
		}
		step(lx);
	}
}

/* A comment or a preprocessor line (with its continuations) at I, if any. */
static bool skip_comment_or_directive(struct lexer *lx, bool line_start)
{
	const char *s = lx->s;
	if (s[lx->i] == '/' && lx->i + 1 < lx->n && s[lx->i + 1] == '/') {
		while (lx->i < lx->n && s[lx->i] != '\n') {
			if (s[lx->i] == '\\' && lx->i + 1 < lx->n && s[lx->i + 1] == '\n')
				step(lx);
			step(lx);
		}
		return true;
	}
	if (s[lx->i] == '/' && lx->i + 1 < lx->n && s[lx->i + 1] == '*') {
		step(lx);
		step(lx);
		while (lx->i < lx->n && !(s[lx->i] == '*' && lx->i + 1 < lx->n && s[lx->i + 1] == '/'))
			step(lx);
		if (lx->i < lx->n) {
			step(lx);
			step(lx);
		}
		return true;
	}
	if (s[lx->i] == '#' && line_start) {
		/* A directive: its keywords are no statements (a macro's
		 * `for` is reported where the macro is used). */
		while (lx->i < lx->n && s[lx->i] != '\n') {
			if (s[lx->i] == '/' && lx->i + 1 < lx->n && s[lx->i + 1] == '*') {
				skip_comment_or_directive(lx, false);
				continue;
			}
			if (s[lx->i] == '\\' && lx->i + 1 < lx->n && s[lx->i + 1] == '\n')
				step(lx);
			else if (s[lx->i] == '\\' && lx->i + 2 < lx->n && s[lx->i + 1] == '\r' && s[lx->i + 2] == '\n')
				step(lx);
			step(lx);
		}
		return true;
	}
	return false;
}

static void tokenize(struct lexer *lx)
{
	const char *s = lx->s;
	bool line_start = true;
	while (lx->i < lx->n) {
		char c = s[lx->i];
		if (c == '\n') {
			line_start = true;
			step(lx);
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			step(lx);
			continue;
		}
		if (c == '\\' && lx->i + 1 < lx->n && s[lx->i + 1] == '\n') {
			step(lx);
			step(lx);
			continue;
		}
		if (skip_comment_or_directive(lx, line_start))
			continue;
		line_start = false;
		if (c == '"' || c == '\'') {
			skip_literal(lx);
			continue;
		}
		if (is_ident_start(c)) {
			size_t start = lx->i;
			while (lx->i < lx->n && is_ident_char(s[lx->i]))
				lx->i++;
			size_t len = lx->i - start;
			/* Literal prefixes: u8"", L'x', R"(...)". */
			if (lx->i < lx->n && (s[lx->i] == '"' || s[lx->i] == '\'') && len <= 3) {
				char p[4] = { 0 };
				memcpy(p, s + start, len);
				bool raw = p[len - 1] == 'R';
				if (raw)
					p[len - 1] = 0;
				if (!p[0] || !strcmp(p, "u8") || !strcmp(p, "u") || !strcmp(p, "U") || !strcmp(p, "L")) {
					if (raw && s[lx->i] == '"')
						skip_raw_string(lx);
					else
						skip_literal(lx);
					continue;
				}
			}
			push(lx, start, len, T_IDENT);
			continue;
		}
		if (c >= '0' && c <= '9') {
			/* A number, with C++14 digit separators and exponents. */
			while (lx->i < lx->n && (is_ident_char(s[lx->i]) || s[lx->i] == '.' ||
			       (s[lx->i] == '\'' && lx->i + 1 < lx->n && is_ident_char(s[lx->i + 1])) ||
			       ((s[lx->i] == '+' || s[lx->i] == '-') && strchr("eEpP", s[lx->i - 1]))))
				lx->i++;
			continue;
		}
		/* "::" is one token (so that `a::b` is no label); the rest one
		 * byte each. */
		size_t len = c == ':' && lx->i + 1 < lx->n && s[lx->i + 1] == ':' ? 2 : 1;
		push(lx, lx->i, len, T_PUNCT);
		lx->i += len;
	}
}

/* ---- statements ----------------------------------------------------------- */

struct parser {
	const struct ls_source *src;
	const char *text;
	const struct token *t;
	size_t n;
};

static bool is_punct(const struct parser *p, size_t i, char c)
{
	return i < p->n && p->t[i].kind == T_PUNCT && p->t[i].len == 1 && p->text[p->t[i].off] == c;
}

/* The index of the bracket closing the one at I, or the last token. */
static size_t match(const struct parser *p, size_t i)
{
	char open = p->text[p->t[i].off];
	char close = open == '(' ? ')' : open == '[' ? ']' : '}';
	size_t depth = 0;
	for (size_t k = i; k < p->n; k++) {
		if (p->t[k].kind != T_PUNCT || p->t[k].len != 1)
			continue;
		char c = p->text[p->t[k].off];
		if (c == open)
			depth++;
		else if (c == close && --depth == 0)
			return k;
	}
	return p->n - 1;
}

/* Whether identifier I begins a label: NAME ':' at a statement's start. */
static bool is_label_at(const struct parser *p, size_t i)
{
	if (i + 1 >= p->n || p->t[i].kind != T_IDENT || p->t[i].kw != KW_NONE || !is_punct(p, i + 1, ':'))
		return false;
	if (i == 0)
		return true;
	const struct token *prev = &p->t[i - 1];
	if (prev->kind != T_PUNCT || prev->len != 1)
		return false;
	char c = p->text[prev->off];
	return c == ';' || c == '{' || c == '}' || c == ')' || c == ':';
}

/* The last token of the statement starting at I. */
static size_t stmt_end(const struct parser *p, size_t i, unsigned nesting)
{
	if (i >= p->n)
		return p->n ? p->n - 1 : 0;
	if (nesting > MAX_NESTING)
		return p->n - 1;
	const struct token *t = &p->t[i];
	if (is_punct(p, i, '{'))
		return match(p, i);
	if (is_label_at(p, i))
		return stmt_end(p, i + 2, nesting + 1);
	switch (t->kw) {
	case KW_FOR:
	case KW_WHILE:
	case KW_SWITCH:
		if (is_punct(p, i + 1, '('))
			return stmt_end(p, match(p, i + 1) + 1, nesting + 1);
		break;
	case KW_IF: {
		size_t k = i + 1;
		if (k < p->n && p->t[k].kind == T_IDENT) /* if constexpr */
			k++;
		if (!is_punct(p, k, '('))
			break;
		size_t e = stmt_end(p, match(p, k) + 1, nesting + 1);
		if (e + 1 < p->n && p->t[e + 1].kw == KW_ELSE)
			e = stmt_end(p, e + 2, nesting + 1);
		return e;
	}
	case KW_DO: {
		size_t e = stmt_end(p, i + 1, nesting + 1);
		if (e + 1 < p->n && p->t[e + 1].kw == KW_WHILE && is_punct(p, e + 2, '(')) {
			e = match(p, e + 2);
			if (is_punct(p, e + 1, ';'))
				e++;
		}
		return e;
	}
	case KW_CASE:
	case KW_DEFAULT:
		break;
	default:
		break;
	}
	/* An expression statement or declaration: to the ';' outside any
	 * bracket (lambdas and initializers hold braces). */
	for (size_t k = i; k < p->n; k++) {
		if (p->t[k].kind != T_PUNCT || p->t[k].len != 1)
			continue;
		char c = p->text[p->t[k].off];
		if (c == '(' || c == '[' || c == '{')
			k = match(p, k);
		else if (c == ';' || c == '}')
			return c == '}' && k > i ? k - 1 : k;
	}
	return p->n - 1;
}

static int cmp_stmt(const void *a, const void *b)
{
	const struct ls_src_stmt *x = a, *y = b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* A goto's target: the label's name and the goto's line. */
struct goto_target {
	const char *name;
	uint16_t len;
	uint32_t line;
};

/* Goto targets by name (the line is not part of the order). */
static int cmp_target(const void *a, const void *b)
{
	const struct goto_target *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);
	return c ? c : (int)x->len - (int)y->len;
}

/* Every loop statement of the file: for, while (not a do's closing one),
 * do, and labels that a goto (or a computed goto's &&label) names, whose
 * extent runs to the last such goto. */
static void find_statements(struct ls_source *src)
{
	struct parser p = { src, src->text, src->toks, src->ntoks };
	size_t cap = 0;
	/* The do's closing whiles, so that they are not taken for loops. */
	bool *closing = ls_xcalloc(p.n + 1, 1);
	for (size_t i = 0; i < p.n; i++) {
		const struct token *t = &p.t[i];
		uint8_t kind = 0;
		if (t->kw == KW_FOR)
			kind = LS_SRC_FOR;
		else if (t->kw == KW_WHILE && !closing[i])
			kind = LS_SRC_WHILE;
		else if (t->kw == KW_DO)
			kind = LS_SRC_DO;
		if (!kind)
			continue;
		/* `for`/`while` must be followed by '('; anything else is a
		 * member or macro named so. */
		if (kind != LS_SRC_DO && !is_punct(&p, i + 1, '('))
			continue;
		size_t e = stmt_end(&p, i, 0);
		if (kind == LS_SRC_DO) {
			for (size_t k = e; k > i; k--)
				if (p.t[k].kw == KW_WHILE) {
					closing[k] = true;
					break;
				}
		}
		src->stmts = ls_grow(src->stmts, &cap, src->nstmts + 1, sizeof *src->stmts);
		src->stmts[src->nstmts++] = (struct ls_src_stmt){ t->line, p.t[e].line, kind };
	}
	free(closing);
	/* Labels that are goto targets: the extent reaches the last goto.
	 * The targets (`goto NAME`, and a computed goto's `&&NAME`) sorted by
	 * name, then each label looked up. */
	struct goto_target *targets = NULL;
	size_t ntargets = 0, cap_targets = 0;
	for (size_t k = 0; k + 1 < p.n; k++) {
		size_t name = 0;
		bool computed = false;
		if (p.t[k].kw == KW_GOTO && p.t[k + 1].kind == T_IDENT)
			name = k + 1;
		else if (is_punct(&p, k, '&') && is_punct(&p, k + 1, '&') && k + 2 < p.n &&
		         p.t[k + 2].kind == T_IDENT && p.t[k + 1].off == p.t[k].off + 1)
			name = k + 2, computed = true;
		if (!name)
			continue;
		targets = ls_grow(targets, &cap_targets, ntargets + 1, sizeof *targets);
		/* A computed goto's table says nothing of where the jump is:
		 * line 0, the label's own line is its extent. */
		targets[ntargets++] = (struct goto_target){ p.text + p.t[name].off, p.t[name].len,
		                                       computed ? 0 : p.t[name].line };
	}
	if (ntargets)
		qsort(targets, ntargets, sizeof *targets, cmp_target);
	for (size_t i = 0; i < p.n && ntargets; i++) {
		if (!is_label_at(&p, i))
			continue;
		struct goto_target key = { p.text + p.t[i].off, p.t[i].len, 0 };
		size_t lo = 0, hi = ntargets;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (cmp_target(&targets[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		bool found = false;
		uint32_t last = p.t[i].line;
		for (; lo < ntargets && cmp_target(&targets[lo], &key) == 0; lo++) {
			found = true;
			if (targets[lo].line > last)
				last = targets[lo].line;
		}
		if (!found)
			continue;
		src->stmts = ls_grow(src->stmts, &cap, src->nstmts + 1, sizeof *src->stmts);
		src->stmts[src->nstmts++] = (struct ls_src_stmt){ p.t[i].line, last, LS_SRC_LABEL };
	}
	free(targets);
	if (src->nstmts)
		qsort(src->stmts, src->nstmts, sizeof *src->stmts, cmp_stmt);
}

/* What a file was when it was looked at: absent, or its type, size, mtime
 * and inode (the cache compares them later: cache.c). */
static void probe_of(struct ls_source_probe *p, const struct stat *st)
{
	p->exists = st != NULL;
	if (st) {
		p->mode = (uint32_t)st->st_mode;
		p->size = (uint64_t)st->st_size;
		p->ino = (uint64_t)st->st_ino;
		p->mtime_sec = (int64_t)st->st_mtim.tv_sec;
		p->mtime_nsec = (int64_t)st->st_mtim.tv_nsec;
	}
}

/* The file at PATH as tokens, or NULL (missing, not a regular file -- a
 * FIFO is never waited on --, empty, too big, or not text).  *PROBE says
 * what was there. */
static struct ls_source *source_read(const ls_options *opt, const char *path, struct ls_source_probe *probe)
{
	struct stat st;
	const char *why;
	/* Regular files of at most LS_MAX_SOURCE_SIZE, not in /proc or /sys
	 * (file.c): a FIFO planted where DWARF points never blocks us. */
	int fd = ls_open_input_flags(path, LS_OPEN_SOURCE, &st, &why);
	if (fd < 0) {
		int e = errno;
		bool there = e != ENOENT && e != ENOTDIR && stat(path, &st) == 0;
		probe_of(probe, there ? &st : NULL);
		if (there && (e == EFBIG || e == EOPNOTSUPP || (e == EINVAL && !S_ISDIR(st.st_mode))))
			ls_warn(opt, "%s: source file not read: %s%s; its loop lines from DWARF alone", path,
			        e == EINVAL ? "not a regular file, " : "", why);
		return NULL;
	}
	probe_of(probe, &st);
	if (st.st_size <= 0) {
		close(fd);
		return NULL;
	}
	size_t size = (size_t)st.st_size, got = 0;
	char *text = ls_xmalloc(size + 1);
	while (got < size) {
		ssize_t n = read(fd, text + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	text[got] = 0;
	/* A NUL inside: not a source file. */
	if (got == 0 || memchr(text, 0, got)) {
		free(text);
		return NULL;
	}
	struct ls_source *src = ls_xcalloc(1, sizeof *src);
	src->text = text;
	struct lexer lx = { .s = text, .n = got, .line = 1 };
	tokenize(&lx);
	src->toks = lx.toks;
	src->ntoks = lx.ntoks;
	src->nlines = lx.line;
	src->line_tok = ls_xmalloc((src->nlines + 2) * sizeof *src->line_tok);
	size_t k = 0;
	for (uint32_t l = 0; l <= src->nlines + 1; l++) {
		while (k < src->ntoks && src->toks[k].line < l)
			k++;
		src->line_tok[l] = (uint32_t)k;
	}
	find_statements(src);
	return src;
}

static void source_free(struct ls_source *src)
{
	if (!src)
		return;
	free(src->text);
	free(src->toks);
	free(src->line_tok);
	free(src->stmts);
	free(src);
}

/* ---- the per-module cache --------------------------------------------------- */

struct ls_source_cache {
	pthread_mutex_t lock;
	const ls_options *opt;         /* where warnings go */
	char **dirs;                   /* where to look for sources DWARF names elsewhere */
	size_t ndirs;
	struct source_slot {
		const char *path;          /* interned: compared by pointer */
		struct ls_source *src;     /* NULL: not readable */
	} *slots;
	size_t nslots, count;
	/* every file looked at, found or not, in order (the cache's key:
	 * a source that appears or changes later must be a miss) */
	struct ls_source_probe *probes;
	size_t nprobes, cap_probes;
};

struct ls_source_cache *ls_source_cache_new(const ls_options *opt, const char *search_path)
{
	struct ls_source_cache *c = ls_xcalloc(1, sizeof *c);
	c->opt = opt;
	pthread_mutex_init(&c->lock, NULL);
	size_t cap = 0;
	for (const char *p = search_path; p && *p;) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		if (n) {
			c->dirs = ls_grow(c->dirs, &cap, c->ndirs + 1, sizeof *c->dirs);
			c->dirs[c->ndirs] = ls_xmalloc(n + 1);
			memcpy(c->dirs[c->ndirs], p, n);
			c->dirs[c->ndirs++][n] = 0;
		}
		p += n + (colon != NULL);
	}
	return c;
}

/* PATH as DWARF names it, or, where it cannot be read there, found under
 * one of the search directories: DIR/PATH, then DIR/ with PATH's leading
 * components dropped one by one ("build/posix/regcomp.c" of a
 * prefix-mapped build is DIR/posix/regcomp.c), as GDB's `directory` finds
 * sources. */
/* PATH read (recorded as a probe, PATH then owned by the cache). */
static struct ls_source *source_try(struct ls_source_cache *c, char *path)
{
	c->probes = ls_grow(c->probes, &c->cap_probes, c->nprobes + 1, sizeof *c->probes);
	struct ls_source_probe *p = &c->probes[c->nprobes++];
	memset(p, 0, sizeof *p);
	p->path = path;
	return source_read(c->opt, path, p);
}

static struct ls_source *source_find(struct ls_source_cache *c, const char *path)
{
	/* A relative path (a build with -ffile-prefix-map, as Debian's) is
	 * found under the search path only, and is counted as missing
	 * otherwise (ls_source_missing). */
	struct ls_source *src = path[0] == '/' ? source_try(c, ls_xstrdup(path)) : NULL;
	for (size_t d = 0; d < c->ndirs && !src; d++) {
		for (const char *tail = path; tail && *tail && !src;) {
			while (*tail == '/')
				tail++;
			size_t n = strlen(c->dirs[d]) + strlen(tail) + 2;
			char *full = ls_xmalloc(n);
			snprintf(full, n, "%s/%s", c->dirs[d], tail);
			src = source_try(c, full);
			tail = strchr(tail, '/');
		}
	}
	return src;
}

struct ls_source_probe *ls_source_cache_take_probes(struct ls_source_cache *c, size_t *n)
{
	*n = c ? c->nprobes : 0;
	if (!c)
		return NULL;
	struct ls_source_probe *p = c->probes;
	c->probes = NULL;
	c->nprobes = c->cap_probes = 0;
	return p;
}

void ls_source_probes_free(struct ls_source_probe *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i].path);
	free(p);
}

void ls_source_cache_free(struct ls_source_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nslots; i++)
		source_free(c->slots[i].src);
	free(c->slots);
	for (size_t i = 0; i < c->ndirs; i++)
		free(c->dirs[i]);
	free(c->dirs);
	ls_source_probes_free(c->probes, c->nprobes);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static size_t path_slot(const struct ls_source_cache *c, const char *path)
{
	size_t j = ((uintptr_t)path * 0x9E3779B97F4A7C15ull >> 17) & (c->nslots - 1);
	while (c->slots[j].path && c->slots[j].path != path)
		j = (j + 1) & (c->nslots - 1);
	return j;
}

const struct ls_source *ls_source_get(struct ls_source_cache *c, const char *path)
{
	if (!c || !path)
		return NULL;
	pthread_mutex_lock(&c->lock);
	struct ls_oom_guard g; /* out of memory under the lock: unlock first */
	ls_oom_push(&g);
	if (setjmp(g.env)) {
		pthread_mutex_unlock(&c->lock);
		ls_guard_rethrow();
	}
	if ((c->count + 1) * 2 > c->nslots) {
		struct source_slot *old = c->slots;
		size_t nold = c->nslots;
		struct source_slot *fresh = ls_xcalloc(nold ? nold * 2 : 64, sizeof *c->slots);
		c->nslots = nold ? nold * 2 : 64;
		c->slots = fresh;
		for (size_t i = 0; i < nold; i++)
			if (old[i].path)
				c->slots[path_slot(c, old[i].path)] = old[i];
		free(old);
	}
	size_t j = path_slot(c, path);
	if (!c->slots[j].path) {
		c->slots[j].path = path;
		c->slots[j].src = source_find(c, path);
		c->count++;
	}
	const struct ls_source *src = c->slots[j].src;
	ls_oom_pop(&g);
	pthread_mutex_unlock(&c->lock);
	return src;
}

/* ---- queries ------------------------------------------------------------------- */

const struct ls_src_stmt *ls_source_stmts(const struct ls_source *src, size_t *n)
{
	*n = src->nstmts;
	return src->stmts;
}

const struct ls_src_stmt *ls_source_stmt_at(const struct ls_source *src, unsigned line)
{
	size_t lo = 0, hi = src->nstmts;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (src->stmts[mid].line < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < src->nstmts && src->stmts[lo].line == line ? &src->stmts[lo] : NULL;
}

unsigned ls_source_do_of_while(const struct ls_source *src, unsigned line)
{
	/* The do whose extent ends on LINE (its closing while). */
	const struct ls_src_stmt *best = NULL;
	for (size_t i = 0; i < src->nstmts && src->stmts[i].line <= line; i++)
		if (src->stmts[i].kind == LS_SRC_DO && src->stmts[i].end == line &&
		    (!best || src->stmts[i].line > best->line))
			best = &src->stmts[i];
	return best ? best->line : 0;
}

bool ls_source_has_code(const struct ls_source *src, unsigned line)
{
	return line >= 1 && line <= src->nlines && src->line_tok[line] < src->line_tok[line + 1];
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t ls_source_missing(struct ls_source_cache *c, const char **names, size_t max)
{
	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	size_t n = 0;
	const char **all = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < c->nslots; i++)
		if (c->slots[i].path && !c->slots[i].src) {
			all = ls_grow(all, &cap, n + 1, sizeof *all);
			all[n++] = c->slots[i].path;
		}
	pthread_mutex_unlock(&c->lock);
	if (n > 1)
		qsort(all, n, sizeof *all, cmp_str);
	for (size_t i = 0; i < n && i < max; i++)
		names[i] = all[i];
	free(all);
	return n;
}

bool ls_source_begins_control(const struct ls_source *src, unsigned line)
{
	if (line < 1 || line > src->nlines || src->line_tok[line] == src->line_tok[line + 1])
		return false;
	const struct token *t = &src->toks[src->line_tok[line]];
	if (t->kind == T_PUNCT && src->text[t->off] == '}' && src->line_tok[line] + 1 < src->line_tok[line + 1])
		t++; /* "} else {" */
	return t->kind == T_IDENT && (t->kw == KW_IF || t->kw == KW_ELSE || t->kw == KW_SWITCH ||
	                              t->kw == KW_CASE || t->kw == KW_DEFAULT);
}

bool ls_source_calls(const struct ls_source *src, unsigned line, const char *name, size_t len)
{
	if (line < 1 || line > src->nlines || !len)
		return false;
	for (uint32_t k = src->line_tok[line]; k + 1 < src->line_tok[line + 1]; k++) {
		const struct token *t = &src->toks[k];
		if (t->kind != T_IDENT || t->len != len || memcmp(src->text + t->off, name, len) != 0 ||
		    src->toks[k + 1].kind != T_PUNCT || src->text[src->toks[k + 1].off] != '(')
			continue;
		/* obj.f(), p->f() and Other::f() call another function of
		 * that name, not this one. */
		const struct token *prev = k ? &src->toks[k - 1] : NULL;
		if (prev && prev->kind == T_PUNCT &&
		    (src->text[prev->off] == '.' || src->text[prev->off] == ':' ||
		     (src->text[prev->off] == '>' && prev->off && src->text[prev->off - 1] == '-')))
			continue;
		return true;
	}
	return false;
}
