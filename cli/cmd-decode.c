/* cmd-decode.c - `loopscope decode`: a kernel log filter, in the manner of
 * the kernel's scripts/decode_stacktrace.sh.
 *
 * Every input line is written back unchanged and in order.  A line that
 * names a frame (`RIP: 0010:F+0xO/0xS`, ` F+0xO/0xS [mod]`, ` ? F+...`,
 * `[<ADDR>]` or a bare runtime address with --kaslr-offset/--kallsyms) is
 * followed by annotation lines, each `PREFIX    # ...` where PREFIX is the
 * line's timestamp:
 *
 *     # INNERMOST at FILE:LINE               as scripts/faddr2line prints it,
 *     #  (inlined by) CALLER at FILE:LINE    with the call sites
 *     # in loop at FILE:LINE, depth D        the innermost loop, if any
 *
 * F+0xO/0xS resolves as faddr2line does (the /0xS picks among static
 * functions of one name); [mod] frames go to that module's debug .ko: from
 * --modules, /usr/lib/debug/lib/modules/RELEASE, its build-id, or
 * debuginfod.  The release comes from -r, else from the log's "CPU: ...
 * RELEASE #N" line, else uname.  With --decodecode the bytes of a `Code:`
 * line are disassembled (libloopscope's libopcodes, in objdump's layout, as
 * scripts/decodecode shows them) with the faulting instruction and the
 * instructions of its innermost loop marked.
 *
 * File names are shown without the build directory (--strip-prefix; by
 * default the directory that init/main.c is in, as decode_stacktrace.sh
 * finds it).
 */
#include "decode.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* One kernel object: vmlinux (name "") or a module. */
struct kobj {
	char *name;                /* module name with '-' as '_', "" for vmlinux */
	char *path;                /* where its debug info is, once found */
	ls_module *mod;
	bool tried;
	uint64_t runtime_base;     /* module: runtime address of .text (0: unknown) */
	bool have_base;
};

struct decoder {
	struct cli_common common;
	const char *vmlinux_arg, *release_arg, *modules_dir, *kallsyms_file, *strip_arg;
	const char *proc_modules, *sys_module;
	bool decodecode;
	int64_t kaslr;             /* runtime - link-time of vmlinux */
	bool have_kaslr;
	char release[256];
	char *strip;               /* the build directory prefix, once known */
	bool strip_known;
	struct kobj *objs;
	size_t nobjs, cap_objs;
	ls_kmap *kmap;             /* the runtime maps of the options, or NULL */
	/* the last RIP frame, for --decodecode */
	struct kobj *rip_obj;
	uint64_t rip_addr;
	bool have_rip;
};

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d) {
		fputs("loopscope: out of memory\n", stderr);
		exit(EXIT_ANALYSIS);
	}
	return d;
}

/* Module names: the kernel shows ext4, nf_conntrack; files may say nf-conntrack. */
static void normalize_modname(char *s)
{
	for (; *s; s++)
		if (*s == '-')
			*s = '_';
}

static struct kobj *kobj_get(struct decoder *d, const char *name)
{
	char norm[256];
	snprintf(norm, sizeof norm, "%s", name);
	normalize_modname(norm);
	for (size_t i = 0; i < d->nobjs; i++)
		if (strcmp(d->objs[i].name, norm) == 0)
			return &d->objs[i];
	if (d->nobjs == d->cap_objs) {
		d->cap_objs = d->cap_objs ? 2 * d->cap_objs : 16;
		d->objs = realloc(d->objs, d->cap_objs * sizeof *d->objs);
		if (!d->objs)
			exit(EXIT_ANALYSIS);
	}
	struct kobj *o = &d->objs[d->nobjs++];
	memset(o, 0, sizeof *o);
	o->name = xstrdup(norm);
	return o;
}

/* ---- finding the debug files ------------------------------------------------ */

static const char *release_of(struct decoder *d)
{
	if (!d->release[0]) {
		struct utsname u;
		if (uname(&u) == 0)
			snprintf(d->release, sizeof d->release, "%s", u.release);
	}
	return d->release;
}

/* The debug file of vmlinux (NAME "") or module NAME: ls_find_debug_file's
 * search (--modules first, the debug directory, the build-id, debuginfod);
 * NULL if none.  One found by name whose build-id is not BUILD_ID is taken
 * when nothing matches (open_kobj warns). */
static char *find_debug(struct decoder *d, const char *name, const char *build_id)
{
	ls_debug_query q;
	ls_debug_query_init(&q);
	q.target = name[0] ? LS_DEBUG_KMODULE : LS_DEBUG_VMLINUX;
	q.module = name;
	q.release = release_of(d);
	q.build_id = build_id;
	q.dirs = d->modules_dir;
	q.debug_file_path = d->common.debug_dir ? d->common.debug_dir : getenv("LOOPSCOPE_DEBUG_DIR");
	char path[4096];
	if (ls_find_debug_file(&q, path, sizeof path, NULL, NULL) < 0)
		return NULL;
	return xstrdup(path);
}

/* The directory the build ran in, as the path of init/main.c shows it
 * (decode_stacktrace.sh's "auto" base path); "" if unknown. */
static void learn_strip_prefix(struct decoder *d, const ls_module *vm)
{
	if (d->strip_known)
		return;
	d->strip_known = true;
	if (d->strip_arg) {
		d->strip = xstrdup(d->strip_arg);
		return;
	}
	const char *probes[] = { "start_kernel", "kernel_init" };
	for (size_t i = 0; i < 2 && vm; i++) {
		uint64_t a, s;
		if (ls_module_symbol(vm, probes[i], &a, &s) < 0)
			continue;
		const ls_scope *p = ls_lookup_proc(vm, a);
		const char *f = p ? ls_scope_file(p) : NULL;
		const char *at = f ? strstr(f, "init/main.c") : NULL;
		if (at) {
			d->strip = strndup(f, (size_t)(at - f));
			return;
		}
	}
	d->strip = xstrdup("");
}

const char *decode_shown(const struct decoder *d, const char *file)
{
	if (!file)
		return "??";
	size_t n = d->strip ? strlen(d->strip) : 0;
	if (n && strncmp(file, d->strip, n) == 0)
		file += n;
	while (file[0] == '.' && file[1] == '/')
		file += 2;
	return file;
}

static ls_module *open_kobj(struct decoder *d, struct kobj *o, const char *build_id)
{
	if (o->tried)
		return o->mod;
	o->tried = true;
	if (!o->name[0] && d->vmlinux_arg)
		o->path = xstrdup(d->vmlinux_arg);
	else
		o->path = find_debug(d, o->name, build_id);
	if (!o->path) {
		if (o->name[0])
			fprintf(stderr, "loopscope decode: [%s]: no debug .ko found (--modules, "
			        "/usr/lib/debug/lib/modules/%s, build-id, debuginfod); its frames are not annotated\n",
			        o->name, release_of(d));
		else
			fprintf(stderr, "loopscope decode: no vmlinux with debug info for %s (-r or --vmlinux); "
			        "kernel frames are not annotated\n", release_of(d));
		return NULL;
	}
	o->mod = cli_open(o->path, &d->common);
	if (o->mod && build_id && ls_module_build_id(o->mod) && strcmp(build_id, ls_module_build_id(o->mod)) != 0)
		fprintf(stderr, "loopscope decode: %s: build-id %s, but the log says %s: lines may be wrong\n",
		        o->path, ls_module_build_id(o->mod), build_id);
	if (o->mod && !o->name[0])
		learn_strip_prefix(d, o->mod);
	return o->mod;
}

/* ---- the annotation of one frame ------------------------------------------- */

/* The innermost loop of ADDR in M, or NULL. */
const ls_scope *decode_loop_of(const ls_module *m, uint64_t addr)
{
	const ls_scope *chain[LS_MAX_CHAIN], *loop = NULL;
	size_t n = ls_lookup_chain(m, addr, chain, LS_MAX_CHAIN);
	for (size_t i = 0; i < n; i++)
		if (ls_scope_kind_of(chain[i]) == LS_SCOPE_LOOP)
			loop = chain[i];
	return loop;
}

static void print_chain(struct decoder *d, FILE *out, const char *pfx, const ls_module *m, uint64_t addr)
{
	if (!d->strip_known) {
		struct kobj *vm = kobj_get(d, "");
		learn_strip_prefix(d, open_kobj(d, vm, NULL));
	}
	const ls_scope *chain[LS_MAX_CHAIN];
	size_t n = ls_lookup_chain(m, addr, chain, LS_MAX_CHAIN);
	if (n == 0) {
		fprintf(out, "%s# 0x%" PRIx64 " is in no procedure of %s\n", pfx, addr, ls_module_path(m));
		return;
	}
	/* The frames: the procedure and the inlined calls, outermost first;
	 * the innermost one's line is the statement's, each other one's the
	 * call site of the frame inside it. */
	const ls_scope *frames[LS_MAX_CHAIN], *loop = NULL;
	size_t nf = 0;
	for (size_t i = 0; i < n; i++) {
		ls_scope_kind k = ls_scope_kind_of(chain[i]);
		if (k == LS_SCOPE_PROC || k == LS_SCOPE_INLINE)
			frames[nf++] = chain[i];
		else if (k == LS_SCOPE_LOOP)
			loop = chain[i];
	}
	const ls_scope *stmt = chain[n - 1];
	for (size_t k = nf; k-- > 0;) {
		const char *file;
		unsigned line;
		if (k == nf - 1) {
			file = ls_scope_file(stmt);
			line = ls_scope_line(stmt);
		} else {
			file = ls_scope_call_file(frames[k + 1]);
			line = ls_scope_call_line(frames[k + 1]);
		}
		fprintf(out, "%s# %s%s at %s:%u\n", pfx, k == nf - 1 ? "" : " (inlined by) ",
		        ls_scope_name(frames[k]) ? ls_scope_name(frames[k]) : "??", decode_shown(d, file), line);
	}
	if (loop)
		fprintf(out, "%s# in loop at %s:%u, depth %u%s\n", pfx, decode_shown(d, ls_scope_file(loop)),
		        ls_scope_line(loop), ls_loop_depth(loop), ls_loop_irreducible(loop) ? " (irreducible)" : "");
}

static void learn_release(struct decoder *d, const char *line)
{
	if (d->release[0] || d->release_arg || !strstr(line, "CPU:"))
		return;
	const char *t = strstr(line, "ainted");
	const char *hash = t ? strstr(t, " #") : NULL;
	if (!hash)
		return;
	const char *e = hash;
	const char *b = e;
	while (b > t && b[-1] != ' ')
		b--;
	if (e > b && (size_t)(e - b) < sizeof d->release)
		snprintf(d->release, sizeof d->release, "%.*s", (int)(e - b), b);
}

/* ---- runtime addresses ----------------------------------------------------- */

/* RAW (a runtime address) -> object and link-time address: a module's
 * when the runtime maps (--proc-modules, --sys-module, --kallsyms: d->kmap)
 * place it in one, else vmlinux's through the KASLR offset. */
static struct kobj *map_raw(struct decoder *d, uint64_t raw, uint64_t *link)
{
	const ls_kplace *p = d->kmap ? ls_kmap_place(d->kmap, raw) : NULL;
	if (p) {
		struct kobj *o = kobj_get(d, p->module);
		ls_module *m = open_kobj(d, o, NULL);
		uint64_t base, size;
		if (!m)
			return NULL;
		/* /proc/modules gives the base (and a size): past .text, the
		 * loader's layout says which section */
		if (p->section && p->size && ls_module_kernel_addr(m, raw - p->start, link) == 0)
			return o;
		/* kallsyms: the module's symbol nearest below, when its name
		 * is one function's of the .ko (else the module's first) */
		const ls_ksym *k = p->symbol ? ls_kmap_symbol_at(d->kmap, raw) : NULL;
		ls_symbol fn;
		if (k && k->module && !strcmp(k->module, p->module) &&
		    ls_module_functions_named(m, k->name, &fn, 1) == 1) {
			*link = fn.addr + (raw - k->addr);
			return o;
		}
		if (p->symbol ? ls_module_symbol(m, p->symbol, &base, &size) < 0
		              : ls_module_section(m, p->section, &base, &size) < 0)
			return NULL;
		*link = base + (raw - p->start);
		return o;
	}
	struct kobj *vm = kobj_get(d, "");
	if (!open_kobj(d, vm, NULL))
		return NULL;
	*link = raw - (uint64_t)d->kaslr;
	return vm;
}

/* ---- frames ------------------------------------------------------------------- */

static void annotate(struct decoder *d, FILE *out, const char *line, const struct frame *f)
{
	char pfx[512];
	size_t sl = decode_stamp_len(line);
	size_t col = f->col < sizeof pfx - 8 ? f->col : sizeof pfx - 8;
	if (sl > col)
		sl = col;
	memcpy(pfx, line, sl);
	memset(pfx + sl, ' ', col - sl);
	memcpy(pfx + col, "  ", 3);

	struct kobj *o;
	uint64_t addrs[8];
	int n = 1;
	if (!f->name[0]) {
		if (!(o = map_raw(d, f->raw, &addrs[0])))
			return;
		ls_symbol sym;
		if (ls_module_symbolize(o->mod, addrs[0], &sym) == 0)
			fprintf(out, "%s# %s+0x%" PRIx64 "/0x%" PRIx64 "%s%s%s\n", pfx, sym.name, addrs[0] - sym.addr,
			        sym.size, o->name[0] ? " [" : "", o->name, o->name[0] ? "]" : "");
	} else {
		o = kobj_get(d, f->module);
		ls_module *m = open_kobj(d, o, f->build_id[0] ? f->build_id : NULL);
		if (!m)
			return;
		ls_error err;
		n = ls_module_resolve(m, f->name, f->off, f->has_size ? f->size : 0, addrs, 8, &err);
		if (n < 0) {
			const char *msg = strstr(err.message, ": ");
			fprintf(out, "%s# %s\n", pfx, msg ? msg + 2 : err.message);
			return;
		}
	}
	for (int i = 0; i < n; i++) {
		if (n > 1)
			fprintf(out, "%s# copy %d of %d at 0x%" PRIx64 ":\n", pfx, i + 1, n, addrs[i]);
		print_chain(d, out, pfx, o->mod, addrs[i]);
	}
	if (f->rip) {
		d->rip_obj = o;
		d->rip_addr = addrs[0];
		d->have_rip = true;
	}
}

/* ---- the command --------------------------------------------------------------- */

enum {
	OPT_DECODECODE = 0x200, OPT_MODULES, OPT_KASLR, OPT_KALLSYMS, OPT_PROC_MODULES, OPT_SYS_MODULE,
	OPT_STRIP_PREFIX,
};

static const struct argp_option decode_options[] = {
	{ "release", 'r', "RELEASE", 0,
	  "the kernel release whose debug info to use (default: the log's, else the running kernel's)", 0 },
	{ "vmlinux", 'k', "FILE", 0, "vmlinux with debug info (instead of -r)", 0 },
	{ "modules", OPT_MODULES, "DIR", 0, "where the modules' debug info is", 0 },
	{ "kaslr-offset", OPT_KASLR, "OFF", 0, "runtime minus link-time address of vmlinux (0x... for hex)", 0 },
	{ "kallsyms", OPT_KALLSYMS, "FILE", 0, "/proc/kallsyms of the machine, for the KASLR offset", 0 },
	{ "proc-modules", OPT_PROC_MODULES, "FILE", 0, "/proc/modules of the machine: the modules' load addresses", 0 },
	{ "sys-module", OPT_SYS_MODULE, "DIR", 0, "/sys/module of the machine: the modules' section addresses", 0 },
	{ "strip-prefix", OPT_STRIP_PREFIX, "P", 0, "drop P (the build directory) from file names", 0 },
	{ "decodecode", OPT_DECODECODE, NULL, 0, "also disassemble the Code: line, the faulting loop marked", 0 },
	{ 0 }
};

struct decode_args {
	struct decoder *d;
	const char *kaslr;
};

static error_t parse_decode(int key, char *arg, struct argp_state *state)
{
	struct decode_args *a = state->input;
	struct decoder *d = a->d;
	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &d->common;
		return 0;
	case OPT_DECODECODE: d->decodecode = true; return 0;
	case 'r':
		d->release_arg = arg;
		snprintf(d->release, sizeof d->release, "%s", arg);
		return 0;
	case 'k': d->vmlinux_arg = arg; return 0;
	case OPT_MODULES: d->modules_dir = arg; return 0;
	case OPT_KASLR: a->kaslr = arg; return 0;
	case OPT_KALLSYMS: d->kallsyms_file = arg; return 0;
	case OPT_PROC_MODULES: d->proc_modules = arg; return 0;
	case OPT_SYS_MODULE: d->sys_module = arg; return 0;
	case OPT_STRIP_PREFIX: d->strip_arg = arg; return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unknown argument '%s' (the log comes on stdin)", arg);
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

static const struct argp decode_argp = {
	decode_options, parse_decode, "< LOG",
	"A kernel log on stdin (an oops, a warning, a hung task), written back byte for byte with "
	"each stack frame annotated with its inlined calls, loops and statement.",
	cli_binary_children, NULL, NULL
};

static int parse_options(struct decoder *d, int argc, char **argv)
{
	struct decode_args a = { d, NULL };
	cli_parse(&decode_argp, "decode", argc, argv, 0, &a);
	const char *kaslr = a.kaslr;
	if (d->release_arg && d->vmlinux_arg) {
		cli_usage_error("decode", "-r and --vmlinux are alternatives");
		return -1;
	}
	if (kaslr && d->kallsyms_file) {
		cli_usage_error("decode", "--kaslr-offset and --kallsyms are alternatives");
		return -1;
	}
	if (kaslr) {
		char *end;
		errno = 0;
		bool neg = kaslr[0] == '-';
		uint64_t v2 = strtoull(kaslr + neg, &end, 0);
		if (errno || *end || end == kaslr + neg) {
			cli_usage_error("decode", "bad --kaslr-offset '%s' (a number, 0x... for hex)", kaslr);
			return -1;
		}
		d->kaslr = neg ? -(int64_t)v2 : (int64_t)v2;
		d->have_kaslr = true;
	}
	return 0;
}

/* The runtime maps the options name; the KASLR offset of --kallsyms needs vmlinux. */
static int load_runtime_maps(struct decoder *d)
{
	if (!d->proc_modules && !d->sys_module && !d->kallsyms_file)
		return 0;
	ls_error err;
	if (!(d->kmap = ls_kmap_new()) ||
	    (d->proc_modules && ls_kmap_read_proc_modules(d->kmap, d->proc_modules, &err) < 0) ||
	    (d->sys_module && ls_kmap_read_sys_module(d->kmap, d->sys_module, &err) < 0) ||
	    (d->kallsyms_file && ls_kmap_read_kallsyms(d->kmap, d->kallsyms_file, &err) < 0)) {
		fprintf(stderr, "loopscope decode: %s\n", d->kmap ? err.message : "out of memory");
		return -1;
	}
	if (d->kallsyms_file) {
		uint64_t text_rt = 0, text, size;
		struct kobj *vm = kobj_get(d, "");
		ls_module *m = open_kobj(d, vm, NULL);
		if (ls_kmap_text(d->kmap, &text_rt) < 0) {
			fprintf(stderr, "loopscope decode: %s: no _text symbol (kallsyms with addresses hidden?)\n",
			        d->kallsyms_file);
			return -1;
		}
		if (m && ls_module_symbol(m, "_text", &text, &size) == 0) {
			d->kaslr = (int64_t)(text_rt - text);
			d->have_kaslr = true;
		}
	}
	return 0;
}

/* What the decoder holds: its modules, their names and paths, the prefix. */
static void decoder_free(struct decoder *d)
{
	for (size_t i = 0; i < d->nobjs; i++) {
		ls_module_close(d->objs[i].mod);
		free(d->objs[i].name);
		free(d->objs[i].path);
	}
	free(d->objs);
	free(d->strip);
	ls_kmap_free(d->kmap);
	d->kmap = NULL;
}

int cmd_decode(int argc, char **argv)
{
	struct decoder d;
	memset(&d, 0, sizeof d);
	if (parse_options(&d, argc, argv) < 0)
		return EXIT_USAGE;
	if (load_runtime_maps(&d) < 0) {
		decoder_free(&d); /* vmlinux may be open already (--kallsyms) */
		return EXIT_ANALYSIS;
	}
	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, stdin)) > 0) {
		/* the line itself, byte for byte (a last line without its newline stays so) */
		fwrite(line, 1, (size_t)len, stdout);
		bool nl = line[len - 1] == '\n';
		learn_release(&d, line);
		struct frame f;
		if (decode_parse_frame(line, &f)) {
			if (!nl)
				putchar('\n');
			annotate(&d, stdout, line, &f);
		} else if (d.decodecode && strstr(line, "Code: ")) {
			if (!nl)
				putchar('\n');
			decode_code_line(&d, stdout, line, d.have_rip && d.rip_obj ? d.rip_obj->mod : NULL, d.rip_addr);
		}
	}
	free(line);
	int rc = ferror(stdin) ? EXIT_ANALYSIS : EXIT_OK;
	if (fflush(stdout) != 0)
		rc = EXIT_ANALYSIS;
	decoder_free(&d);
	return rc;
}
