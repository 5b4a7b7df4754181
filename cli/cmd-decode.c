/* cmd-decode.c - `loopscope decode`: a kernel log filter, in the manner of
 * the kernel's scripts/decode_stacktrace.sh.
 *
 * Every input line is written back unchanged and in order.  A line that
 * names a frame (decode-log.c says which) is followed by annotation lines,
 * each `PREFIX    # ...` where PREFIX is the line's timestamp:
 *
 *     # INNERMOST at FILE:LINE               the innermost inlined call and its line,
 *     #  (inlined by) CALLER at FILE:LINE    each caller at its call site,
 *     # in loop at FILE:LINE, depth D        the innermost loop, if any
 *
 * of the call instruction for a return address (every frame of a stack
 * trace: the address - 1, as GDB and perf show a caller's frame), of the
 * address itself for the interrupted instruction (`RIP:`) and a WARN's
 * site; --faddr2line-lines shows every frame at the address printed, as
 * scripts/faddr2line does.  F+0xO/0xS resolves as faddr2line does (the
 * /0xS picks among static functions of one name); [mod] frames go to that
 * module's debug .ko: --modules, /usr/lib/debug/lib/modules/RELEASE, its
 * build-id, or debuginfod.
 *
 * The log is read report by report (decode-log.c says where one ends) and
 * each report is annotated once it is whole, because what it needs may
 * come after its first frame: the kernel release (a WARN's `CPU: ...
 * RELEASE #N` line follows its RIP; -r, else the report's, else the one an
 * earlier report named, else this machine's), the KASLR offset (`Kernel
 * Offset:` ends a panic; --kaslr-offset and --kallsyms first, then that
 * line, then the `[<ADDR>] F+OFF` pairs of the log), which the pairs are
 * also checked against.  A report still open after a second without input
 * (`dmesg -w | loopscope decode`) is annotated with what is known.
 *
 * File names are shown without the build directory (--strip-prefix; by
 * default the directory that init/main.c is in, as decode_stacktrace.sh
 * finds it, and for assembly files the absolute one entry_64.S is in).
 */
#include "decode.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Where the release and the KASLR offset came from, weakest first. */
enum { REL_NONE, REL_UNAME, REL_EARLIER, REL_LOG, REL_OPTION };
enum { KASLR_NONE, KASLR_PAIR, KASLR_LOG, KASLR_KALLSYMS, KASLR_OPTION };

/* One line of the report being read: its bytes, NUL-terminated. */
struct line {
	char *text;
	size_t len;
	bool cut;              /* a piece of a longer line: written back, never read */
};

struct decoder {
	struct cli_common common;
	const char *vmlinux_arg, *release_arg, *modules_dir, *kallsyms_file, *strip_arg, *build_id_arg;
	const char *proc_modules, *sys_module;
	bool decodecode, faddr2line_lines;
	int64_t kaslr;             /* runtime - link-time of vmlinux */
	int kaslr_src;
	char release[256];         /* the current report's, once known ("" until asked) */
	int release_src;
	char earlier[256];         /* the last release a report named */
	char objs_release[256];    /* the release the modules were looked for in */
	char *strip;               /* the build directory prefix, once known */
	char *strip_asm;           /* ... as the assembler wrote it (absolute), or NULL */
	bool strip_known;
	struct kobj *objs;
	size_t nobjs, cap_objs;
	ls_kmap *kmap;             /* the runtime maps of the options, or NULL */
	struct line *lines;        /* the report being read */
	size_t nlines, cap_lines, bytes;
	bool said_uname, said_pair, said_hint;
	const ls_module *rip_mod;  /* the report's last RIP, for --decodecode */
	uint64_t rip;
};

static void kallsyms_offset(struct decoder *d);

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d) {
		fputs("loopscope: out of memory\n", stderr);
		exit(EXIT_ANALYSIS);
	}
	return d;
}

static struct kobj *kobj_get(struct decoder *d, const char *name)
{
	char norm[256];
	snprintf(norm, sizeof norm, "%s", name);
	for (char *s = norm; *s; s++)
		if (*s == '-')
			*s = '_'; /* the kernel shows nf_conntrack; files may say nf-conntrack */
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

static void kobj_forget(struct kobj *o)
{
	ls_module_close(o->mod);
	free(o->path);
	o->mod = NULL;
	o->path = NULL;
	o->tried = false;
}

/* ---- the release, and finding the debug files ------------------------------ */

static const char *release_source(const struct decoder *d)
{
	switch (d->release_src) {
	case REL_OPTION: return "given by -r";
	case REL_LOG: return "named by the report";
	case REL_EARLIER: return "named by an earlier report";
	default: return "this machine's: the log names none";
	}
}

/* The current report's release: the last resort, uname, said once. */
static const char *release_of(struct decoder *d)
{
	if (!d->release[0]) {
		struct utsname u;
		if (uname(&u) == 0)
			snprintf(d->release, sizeof d->release, "%s", u.release);
		d->release_src = REL_UNAME;
		if (!d->said_uname)
			fprintf(stderr, "loopscope decode: the log names no kernel release (no `CPU: ... RELEASE #N`, "
			        "`Comm: ... RELEASE #N` or `Tainted ... RELEASE #N` line) and -r was not given: "
			        "trying this machine's, %s\n", d->release);
		d->said_uname = true;
	}
	return d->release;
}

/* The build-id of the running kernel, from /sys/kernel/notes (its .notes). */
static bool running_kernel_build_id(char *hex, size_t size)
{
	uint8_t buf[4096];
	int fd = ls_open_regular("/sys/kernel/notes", 0, NULL);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
	if (fd >= 0)
		close(fd);
	for (size_t at = 0; n > 0 && at + 12 <= (size_t)n;) {
		uint32_t nsz, dsz, type;
		memcpy(&nsz, buf + at, 4);
		memcpy(&dsz, buf + at + 4, 4);
		memcpy(&type, buf + at + 8, 4);
		size_t name = at + 12, desc = name + ((nsz + 3u) & ~3u);
		if (nsz > sizeof buf || dsz > sizeof buf || desc + dsz > (size_t)n)
			break;
		if (type == 3 && nsz == 4 && !memcmp(buf + name, "GNU", 4) && dsz && 2 * dsz < size) {
			for (uint32_t i = 0; i < dsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", buf[desc + i]);
			return true;
		}
		at = desc + ((dsz + 3u) & ~3u);
	}
	return false;
}

/* vmlinux's build-id when known: --build-id, else the running kernel's
 * when the release is this machine's. */
static const char *vmlinux_build_id(struct decoder *d, char *buf, size_t size)
{
	if (d->build_id_arg)
		return d->build_id_arg;
	struct utsname u;
	if (uname(&u) == 0 && !strcmp(u.release, release_of(d)) && running_kernel_build_id(buf, size))
		return buf;
	return NULL;
}

/* The debug file of vmlinux (NAME "") or module NAME: ls_find_debug_file's
 * search (--modules first, the debug directory, the build-id, debuginfod);
 * NULL if none, with the reason in WHY.  One found by name whose build-id
 * is not BUILD_ID is taken when nothing matches (open_kobj warns). */
static char *find_debug(struct decoder *d, const char *name, const char *build_id, char *why, size_t wsize)
{
	char own[128];
	ls_debug_query q;
	ls_debug_query_init(&q);
	q.target = name[0] ? LS_DEBUG_KMODULE : LS_DEBUG_VMLINUX;
	q.module = name;
	q.release = release_of(d);
	q.build_id = name[0] ? build_id : vmlinux_build_id(d, own, sizeof own);
	q.dirs = d->modules_dir;
	q.debug_file_path = d->common.debug_dir ? d->common.debug_dir : getenv("LOOPSCOPE_DEBUG_DIR");
	q.progress = 1;
	char path[4096];
	ls_error err;
	if (ls_find_debug_file(&q, path, sizeof path, NULL, &err) < 0) {
		snprintf(why, wsize, "%s", err.message);
		return NULL;
	}
	return xstrdup(path);
}

/* What comes before TAIL in the file of VM's procedure SYM (malloc'd), or
 * NULL if that file does not end so. */
static char *prefix_of(const ls_module *vm, const char *sym, const char *tail)
{
	uint64_t a, s;
	if (!vm || ls_module_symbol(vm, sym, &a, &s) < 0)
		return NULL;
	/* the statement's file: an assembly procedure has no DWARF
	 * subprogram to name one, only its lines */
	const ls_scope *chain[LS_MAX_CHAIN];
	size_t n = ls_lookup_chain(vm, a, chain, LS_MAX_CHAIN);
	const char *f = n ? ls_scope_file(chain[n - 1]) : NULL;
	const char *at = f ? strstr(f, tail) : NULL;
	return at ? strndup(f, (size_t)(at - f)) : NULL;
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
	/* gcc names a C file as the build passed it (Debian: relative, as
	 * "kernel/sched/core.c"), the assembler with the build directory
	 * ("/build/reproducible-path/linux-6.1.192/arch/x86/entry/entry_64.S"):
	 * each has its prefix, learned from a file of its own kind */
	d->strip = prefix_of(vm, "start_kernel", "init/main.c");
	if (!d->strip)
		d->strip = prefix_of(vm, "kernel_init", "init/main.c");
	if (!d->strip)
		d->strip = xstrdup("");
	d->strip_asm = prefix_of(vm, "entry_SYSCALL_64", "arch/x86/entry/entry_64.S");
	if (d->strip_asm && (!d->strip_asm[0] || !strcmp(d->strip_asm, d->strip))) {
		free(d->strip_asm);
		d->strip_asm = NULL;
	}
}

const char *decode_shown(const struct decoder *d, const char *file)
{
	if (!file)
		return "??";
	size_t n = d->strip ? strlen(d->strip) : 0;
	size_t na = d->strip_asm ? strlen(d->strip_asm) : 0;
	if (n && strncmp(file, d->strip, n) == 0)
		file += n;
	else if (na && strncmp(file, d->strip_asm, na) == 0)
		file += na;
	while (file[0] == '.' && file[1] == '/')
		file += 2;
	return file;
}

static void not_found(struct decoder *d, const struct kobj *o, const char *why)
{
	if (o->name[0])
		fprintf(stderr, "loopscope decode: [%s]: no debug .ko found (--modules, /usr/lib/debug/lib/modules/%s, "
		        "build-id, debuginfod: %s); its frames are not annotated\n", o->name, release_of(d), why);
	else
		/* debuginfod knows images by build-id only, and a log names
		 * none for vmlinux (6.1 prints build-ids for module frames
		 * alone): only the machine that wrote it can give it */
		fprintf(stderr, "loopscope decode: no vmlinux with debug info for %s (%s): %s; give --vmlinux FILE "
		        "or -r RELEASE%s; kernel frames are not annotated\n", release_of(d), release_source(d), why,
		        strstr(why, "no build-id to ask debuginfod for") ? ", or --build-id ID for debuginfod "
		        "(readelf -n /sys/kernel/notes on the machine that wrote the log)" : "");
}

static ls_module *open_kobj(struct decoder *d, struct kobj *o, const char *build_id)
{
	if (o->tried)
		return o->mod;
	o->tried = true;
	char why[1024] = "";
	if (!o->name[0] && d->vmlinux_arg)
		o->path = xstrdup(d->vmlinux_arg);
	else
		o->path = find_debug(d, o->name, build_id, why, sizeof why);
	if (!o->path) {
		not_found(d, o, why);
		return NULL;
	}
	/* A log names a few procedures of a binary of tens of thousands (vmlinux):
	 * each is analyzed when its first frame is looked up, and the cache
	 * entry keeps them for the next log. */
	struct cli_common common = d->common;
	common.on_demand = true;
	o->mod = cli_open(o->path, &common);
	if (o->mod && build_id && ls_module_build_id(o->mod) && strcmp(build_id, ls_module_build_id(o->mod)) != 0)
		fprintf(stderr, "loopscope decode: %s: build-id %s, but the log says %s: lines may be wrong\n",
		        o->path, ls_module_build_id(o->mod), build_id);
	if (o->mod && !o->name[0])
		learn_strip_prefix(d, o->mod);
	return o->mod;
}

static ls_module *vmlinux(struct decoder *d)
{
	return open_kobj(d, kobj_get(d, ""), NULL);
}

/* ---- the annotation of one frame ------------------------------------------- */

const ls_scope *decode_loop_of(const ls_module *m, uint64_t addr)
{
	const ls_scope *chain[LS_MAX_CHAIN], *loop = NULL;
	size_t n = m ? ls_lookup_chain(m, addr, chain, LS_MAX_CHAIN) : 0;
	for (size_t i = 0; i < n; i++)
		if (ls_scope_kind_of(chain[i]) == LS_SCOPE_LOOP)
			loop = chain[i];
	return loop;
}

static void print_chain(struct decoder *d, FILE *out, const char *pfx, const ls_module *m, uint64_t addr)
{
	if (!d->strip_known)
		learn_strip_prefix(d, vmlinux(d));
	const ls_scope *chain[LS_MAX_CHAIN];
	size_t n = ls_lookup_chain(m, addr, chain, LS_MAX_CHAIN);
	if (n == 0) {
		char e[PATH_MAX];
		fprintf(out, "%s# 0x%" PRIx64 " is in no procedure of %s\n", pfx, addr, ESC(e, ls_module_path(m)));
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
		char e1[1024], e2[PATH_MAX];
		fprintf(out, "%s# %s%s at %s:%u\n", pfx, k == nf - 1 ? "" : " (inlined by) ",
		        ESC(e1, ls_scope_name(frames[k]) ? ls_scope_name(frames[k]) : "??"), ESC(e2, decode_shown(d, file)),
		        line);
	}
	char e3[PATH_MAX];
	if (loop)
		fprintf(out, "%s# in loop at %s:%u, depth %u%s\n", pfx, ESC(e3, decode_shown(d, ls_scope_file(loop))),
		        ls_scope_line(loop), ls_loop_depth(loop), ls_loop_irreducible(loop) ? " (irreducible)" : "");
}

/* ---- runtime addresses ----------------------------------------------------- */

/* RAW (a runtime address) in a module the runtime maps (--proc-modules,
 * --sys-module, --kallsyms: d->kmap) place it in: the module, and the
 * link-time address in *LINK; NULL when no map places it. */
static struct kobj *map_module(struct decoder *d, uint64_t raw, uint64_t *link, bool *placed)
{
	const ls_kplace *p = d->kmap ? ls_kmap_place(d->kmap, raw) : NULL;
	*placed = p != NULL;
	if (!p)
		return NULL;
	struct kobj *o = kobj_get(d, p->module);
	ls_module *m = open_kobj(d, o, NULL);
	uint64_t base, size;
	if (!m)
		return NULL;
	/* /proc/modules gives the base (and a size): past .text, the
	 * loader's layout says which section */
	if (p->section && p->size && ls_module_kernel_addr(m, raw - p->start, link) == 0)
		return o;
	/* kallsyms: the module's symbol nearest below, when its name is one
	 * function's of the .ko (else the module's first) */
	const ls_ksym *k = p->symbol ? ls_kmap_symbol_at(d->kmap, raw) : NULL;
	ls_symbol fn;
	if (k && k->module && !strcmp(k->module, p->module) && ls_module_functions_named(m, k->name, &fn, 1) == 1) {
		*link = fn.addr + (raw - k->addr);
		return o;
	}
	if (p->symbol ? ls_module_symbol(m, p->symbol, &base, &size) < 0
	              : ls_module_section(m, p->section, &base, &size) < 0)
		return NULL;
	*link = base + (raw - p->start);
	return o;
}

/* RAW -> object and link-time address: a module's when the runtime maps
 * place it in one, else vmlinux's through the KASLR offset. */
static struct kobj *map_raw(struct decoder *d, uint64_t raw, uint64_t *link)
{
	bool placed;
	struct kobj *o = map_module(d, raw, link, &placed);
	if (placed || !vmlinux(d))
		return o;
	kallsyms_offset(d);
	*link = raw - (uint64_t)d->kaslr;
	return kobj_get(d, "");
}

/* Why LINK (mapped from RAW) is in no procedure of vmlinux, when it is
 * outside its code: where to get the offset or the module maps. */
static void outside_hint(struct decoder *d, FILE *out, const char *pfx, uint64_t raw, uint64_t link)
{
	uint64_t lo, hi, size;
	ls_module *vm = vmlinux(d);
	if (!vm || ls_module_symbol(vm, "_text", &lo, &size) < 0 || ls_module_symbol(vm, "_etext", &hi, &size) < 0 ||
	    (link >= lo && link < hi))
		return;
	/* x86-64: the image is relocated within 0xffffffff80000000-0xffffffffbfffffff,
	 * modules are loaded above it up to MODULES_END */
	bool module_area = raw >= 0xffffffffc0000000ull && raw < 0xffffffffff000000ull;
	fprintf(out, "%s# 0x%" PRIx64 " is outside vmlinux's code (0x%" PRIx64 "-0x%" PRIx64 " at link time%s): %s\n",
	        pfx, raw, lo, hi, d->kaslr ? ", KASLR offset applied" : "",
	        module_area ? "a module's? give --proc-modules, --sys-module or --kallsyms of that boot"
	        : d->kaslr_src == KASLR_NONE ? "a KASLR address? give --kaslr-offset (the `Kernel Offset:` line of a "
	                                       "panic) or --kallsyms of that boot"
	                                     : "check the KASLR offset");
	if (!d->said_hint)
		fprintf(stderr, "loopscope decode: 0x%" PRIx64 " is outside vmlinux's code: %s\n", raw,
		        d->kaslr_src == KASLR_NONE ? "give --kaslr-offset or --kallsyms (KASLR)" : "is the KASLR offset right?");
	d->said_hint = true;
}

/* ---- frames ------------------------------------------------------------------- */

/* The annotation prefix of LINE: its timestamp, spaces up to the frame. */
static void annotation_prefix(const char *line, const struct frame *f, char *pfx, size_t size)
{
	size_t sl = decode_stamp_len(line);
	size_t col = f->col < size - 8 ? f->col : size - 8;
	if (sl > col)
		sl = col;
	memcpy(pfx, line, sl);
	memset(pfx + sl, ' ', col - sl);
	memcpy(pfx + col, "  ", 3);
}

/* A raw address: the object, and the symbol as the kernel would print it
 * (%pB: of the call, for a return address).  The call's byte is what is
 * mapped: a return address just past the end of a section (after a
 * noreturn call) is in no section of its own. */
static struct kobj *annotate_raw(struct decoder *d, FILE *out, const char *pfx, const struct frame *f,
                                 bool ret, uint64_t *addr)
{
	struct kobj *o = map_raw(d, f->raw - ret, addr);
	if (!o || !o->mod)
		return NULL;
	ls_symbol sym;
	char e[1024];
	if (ls_module_symbolize(o->mod, *addr, &sym) == 0)
		fprintf(out, "%s# %s+0x%" PRIx64 "/0x%" PRIx64 "%s%s%s\n", pfx, ESC(e, sym.name), *addr + ret - sym.addr,
		        sym.size, o->name[0] ? " [" : "", o->name, o->name[0] ? "]" : "");
	else if (!o->name[0])
		outside_hint(d, out, pfx, f->raw, *addr + ret);
	return o;
}

/* A checked pair's verdict, or NULL. */
static const char *pair_problem(struct decoder *d, const struct frame *f, char *buf, size_t size);

static void annotate(struct decoder *d, FILE *out, const char *line, const struct frame *f)
{
	char pfx[512];
	annotation_prefix(line, f, pfx, sizeof pfx);
	/* a return address is shown at its call, one byte before */
	bool ret = !f->exact && !d->faddr2line_lines;
	struct kobj *o;
	uint64_t addrs[8];
	int n = 1;
	if (!f->name[0]) {
		if (!(o = annotate_raw(d, out, pfx, f, ret, &addrs[0])))
			return;
	} else {
		o = kobj_get(d, f->module);
		ls_module *m = open_kobj(d, o, f->build_id[0] ? f->build_id : NULL);
		if (!m)
			return;
		ls_error err;
		n = ls_module_resolve(m, f->name, f->off, f->has_size ? f->size : 0, addrs, 8, &err);
		if (n < 0) {
			const char *msg = strstr(err.message, ": ");
			char e[sizeof err.message];
			fprintf(out, "%s# %s\n", pfx, ESC(e, msg ? msg + 2 : err.message));
			return;
		}
		for (int i = 0; i < n; i++)
			addrs[i] -= ret;
		char why[256];
		const char *bad = pair_problem(d, f, why, sizeof why);
		if (bad)
			fprintf(out, "%s# %s\n", pfx, bad);
	}
	for (int i = 0; i < n; i++) {
		if (n > 1)
			fprintf(out, "%s# copy %d of %d at 0x%" PRIx64 ":\n", pfx, i + 1, n, addrs[i] + ret);
		print_chain(d, out, pfx, o->mod, addrs[i]);
	}
	if (f->exact) {
		d->rip_mod = o->mod;
		d->rip = addrs[0];
	}
}

/* ---- what a report says about the KASLR offset ------------------------------- */

/* The offset "[<RAW>] F+OFF/SIZE" (a vmlinux frame) says: runtime minus
 * link-time address. */
static bool pair_offset(struct decoder *d, const struct frame *f, int64_t *off)
{
	if (!f->has_raw || !f->name[0] || f->module[0] || !vmlinux(d))
		return false;
	uint64_t a[2];
	ls_error err;
	if (ls_module_resolve(vmlinux(d), f->name, f->off, f->has_size ? f->size : 0, a, 2, &err) != 1)
		return false;
	*off = (int64_t)(f->raw - a[0]);
	return true;
}

static const char *pair_problem(struct decoder *d, const struct frame *f, char *buf, size_t size)
{
	int64_t off;
	if (!pair_offset(d, f, &off))
		return NULL;
	kallsyms_offset(d);
	if (d->kaslr_src == KASLR_NONE || off == d->kaslr)
		return NULL;
	static const char *const from[] = { "", "the first [<ADDR>] F+OFF pair", "the `Kernel Offset:` line",
	                                    "--kallsyms", "--kaslr-offset" };
	snprintf(buf, size, "[<0x%" PRIx64 ">] says the KASLR offset is 0x%" PRIx64 ", not 0x%" PRIx64 " (%s)",
	         f->raw, (uint64_t)off, (uint64_t)d->kaslr, from[d->kaslr_src]);
	if (!d->said_pair)
		fprintf(stderr, "loopscope decode: the log's [<ADDR>] F+OFF pairs disagree with the KASLR offset of %s "
		        "(0x%" PRIx64 "): raw addresses may be wrong\n", from[d->kaslr_src], (uint64_t)d->kaslr);
	d->said_pair = true;
	return buf;
}

/* The report's release and KASLR offset, before any of it is annotated. */
static void learn_report(struct decoder *d)
{
	char rel[256] = "";
	int64_t off;
	bool have_off = false;
	for (size_t i = 0; i < d->nlines; i++) {
		if (d->lines[i].cut)
			continue;
		if (!rel[0])
			decode_release_in(d->lines[i].text, rel, sizeof rel);
		if (!have_off)
			have_off = decode_kernel_offset_in(d->lines[i].text, &off);
	}
	if (!d->release_arg) {
		if (rel[0])
			snprintf(d->earlier, sizeof d->earlier, "%s", rel);
		snprintf(d->release, sizeof d->release, "%s", d->earlier);
		d->release_src = rel[0] ? REL_LOG : d->earlier[0] ? REL_EARLIER : REL_NONE;
		if (d->objs_release[0] && strcmp(d->objs_release, d->release) && d->release[0])
			for (size_t i = 0; i < d->nobjs; i++)
				if (d->objs[i].name[0] || !d->vmlinux_arg)
					kobj_forget(&d->objs[i]); /* another kernel's */
		if (d->release[0])
			snprintf(d->objs_release, sizeof d->objs_release, "%s", d->release);
	}
	if (have_off && d->kaslr_src <= KASLR_LOG) {
		d->kaslr = off;
		d->kaslr_src = KASLR_LOG;
	}
	/* no offset yet: the first [<ADDR>] F+OFF pair of vmlinux gives it */
	for (size_t i = 0; i < d->nlines && d->kaslr_src == KASLR_NONE && !d->kallsyms_file; i++) {
		struct frame f;
		if (!d->lines[i].cut && decode_parse_frame(d->lines[i].text, &f) && pair_offset(d, &f, &off)) {
			d->kaslr = off;
			d->kaslr_src = KASLR_PAIR;
		}
	}
}

/* ---- reports ----------------------------------------------------------------- */

static void flush_report(struct decoder *d, FILE *out)
{
	if (!d->nlines)
		return;
	learn_report(d);
	d->rip_mod = NULL;
	for (size_t i = 0; i < d->nlines; i++) {
		struct line *l = &d->lines[i];
		/* the line itself, byte for byte (a last line without its newline stays so) */
		fwrite(l->text, 1, l->len, out);
		bool nl = l->len && l->text[l->len - 1] == '\n';
		struct frame f;
		if (!l->cut && decode_parse_frame(l->text, &f)) {
			if (!nl)
				fputc('\n', out);
			if (f.exact)
				d->rip_mod = NULL;
			annotate(d, out, l->text, &f);
		} else if (!l->cut && d->decodecode && strstr(l->text, "Code: ") && d->rip_mod) {
			if (!nl)
				fputc('\n', out);
			decode_code_line(d, out, l->text, d->rip_mod, d->rip);
		}
		free(l->text);
	}
	d->nlines = 0;
	d->bytes = 0;
	fflush(out);
}

/* ---- reading ------------------------------------------------------------------- */

/* A line longer than this is cut into pieces (written back, never read). */
#define MAX_LINE (64u << 10)
/* A report longer than this is annotated with what is known so far. */
#define MAX_REPORT_LINES 100000u
#define MAX_REPORT_BYTES (16u << 20)

struct reader {
	int fd;
	char buf[1 << 16];
	size_t pos, len;
	bool eof;
};

/* Reads more input, waiting at most WAIT_MS (-1: for ever): 1 read, 0 the
 * end, 2 nothing came, -1 an error. */
static int fill(struct reader *r, int wait_ms)
{
	if (r->eof)
		return 0;
	if (wait_ms >= 0) {
		struct pollfd p = { r->fd, POLLIN, 0 };
		int k = poll(&p, 1, wait_ms);
		if (k == 0)
			return 2;
	}
	if (r->pos) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
	}
	ssize_t k;
	do
		k = read(r->fd, r->buf + r->len, sizeof r->buf - r->len);
	while (k < 0 && errno == EINTR);
	if (k <= 0) {
		r->eof = true;
		return k < 0 ? -1 : 0;
	}
	r->len += (size_t)k;
	return 1;
}

static void add_line(struct decoder *d, struct line *l)
{
	if (d->nlines == d->cap_lines) {
		d->cap_lines = d->cap_lines ? 2 * d->cap_lines : 256;
		d->lines = realloc(d->lines, d->cap_lines * sizeof *d->lines);
		if (!d->lines)
			exit(EXIT_ANALYSIS);
	}
	d->lines[d->nlines++] = *l;
	d->bytes += l->len;
}

/* The next line (or piece of one) into L: 1, 0 at the end, 2 when none
 * came for a second while a report waits, -1 on a read error. */
static int next_line(struct decoder *d, struct reader *r, struct line *l)
{
	char *acc = NULL;
	size_t n = 0;
	for (;;) {
		char *nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
		size_t take = nl ? (size_t)(nl + 1 - (r->buf + r->pos)) : r->len - r->pos;
		if (take > MAX_LINE - n)
			take = MAX_LINE - n;
		if (take) {
			acc = realloc(acc, n + take + 1);
			if (!acc)
				exit(EXIT_ANALYSIS);
			memcpy(acc + n, r->buf + r->pos, take);
			n += take;
			r->pos += take;
		}
		if ((n && acc[n - 1] == '\n') || n >= MAX_LINE) {
			l->cut = acc[n - 1] != '\n';
			break;
		}
		int k = fill(r, d->nlines && !n ? 1000 : -1);
		if (k == 2 || k <= 0) {
			if (!n) {
				free(acc); /* NULL: nothing was taken (for scan-build) */
				return k;
			}
			l->cut = false; /* the last line, without its newline */
			break;
		}
	}
	acc[n] = 0;
	l->text = acc;
	l->len = n;
	return 1;
}

static int read_log(struct decoder *d, FILE *out)
{
	struct reader *r = calloc(1, sizeof *r);
	if (!r)
		return -1;
	struct line l;
	int k;
	bool piece = false; /* the next line continues a cut one */
	while ((k = next_line(d, r, &l)) != 0 && k != -1) {
		if (k == 2) {
			flush_report(d, out); /* a live log went quiet: annotate what came */
			continue;
		}
		bool cont = piece;
		piece = l.cut;
		l.cut |= cont;
		if (!l.cut && decode_boundary(l.text) == LINE_OPENS)
			flush_report(d, out);
		add_line(d, &l);
		if ((!l.cut && decode_boundary(l.text) == LINE_CLOSES) || d->nlines >= MAX_REPORT_LINES ||
		    d->bytes >= MAX_REPORT_BYTES)
			flush_report(d, out);
	}
	flush_report(d, out);
	free(r);
	return k;
}

/* ---- the command --------------------------------------------------------------- */

enum {
	OPT_DECODECODE = 0x200, OPT_MODULES, OPT_KASLR, OPT_KALLSYMS, OPT_PROC_MODULES, OPT_SYS_MODULE,
	OPT_STRIP_PREFIX, OPT_FADDR2LINE_LINES, OPT_BUILD_ID,
};

static const struct argp_option decode_options[] = {
	{ "release", 'r', "RELEASE", 0,
	  "the kernel release whose debug info to use (default: the report's, else an earlier report's, else the "
	  "running kernel's)", 0 },
	{ "vmlinux", 'k', "FILE", 0, "vmlinux with debug info (instead of -r)", 0 },
	{ "build-id", OPT_BUILD_ID, "ID", 0,
	  "the build-id of the kernel that wrote the log (its /sys/kernel/notes): picks its vmlinux, from debuginfod "
	  "too", 0 },
	{ "modules", OPT_MODULES, "DIR", 0, "where the modules' debug info is", 0 },
	{ "kaslr-offset", OPT_KASLR, "OFF", 0, "runtime minus link-time address of vmlinux (0x... for hex)", 0 },
	{ "kallsyms", OPT_KALLSYMS, "FILE", 0, "/proc/kallsyms of the machine, for the KASLR offset", 0 },
	{ "proc-modules", OPT_PROC_MODULES, "FILE", 0, "/proc/modules of the machine: the modules' load addresses", 0 },
	{ "sys-module", OPT_SYS_MODULE, "DIR", 0, "/sys/module of the machine: the modules' section addresses", 0 },
	{ "strip-prefix", OPT_STRIP_PREFIX, "P", 0, "drop P (the build directory) from file names", 0 },
	{ "decodecode", OPT_DECODECODE, NULL, 0, "also disassemble the Code: line, the faulting loop marked", 0 },
	{ "faddr2line-lines", OPT_FADDR2LINE_LINES, NULL, 0,
	  "show a return address's own line, as scripts/faddr2line does, not its call's", 0 },
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
	case OPT_FADDR2LINE_LINES: d->faddr2line_lines = true; return 0;
	case 'r': d->release_arg = arg; return 0;
	case 'k': d->vmlinux_arg = arg; return 0;
	case OPT_BUILD_ID: d->build_id_arg = arg; return 0;
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
	"each stack frame annotated with its inlined calls, loops and statement (a return address's: "
	"its call's).",
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
	if (d->build_id_arg && (strlen(d->build_id_arg) % 2 || strlen(d->build_id_arg) < 2 ||
	                        strspn(d->build_id_arg, "0123456789abcdefABCDEF") != strlen(d->build_id_arg))) {
		cli_usage_error("decode", "bad --build-id '%s' (hex digits, as readelf -n prints it)", d->build_id_arg);
		return -1;
	}
	if (d->release_arg) {
		snprintf(d->release, sizeof d->release, "%s", d->release_arg);
		snprintf(d->objs_release, sizeof d->objs_release, "%s", d->release_arg);
		d->release_src = REL_OPTION;
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
		d->kaslr_src = KASLR_OPTION;
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
	if (d->kallsyms_file && ls_kmap_text(d->kmap, &(uint64_t){ 0 }) < 0) {
		fprintf(stderr, "loopscope decode: %s: no _text symbol (kallsyms with addresses hidden?)\n",
		        d->kallsyms_file);
		return -1;
	}
	return 0;
}

/* --kallsyms' KASLR offset: its _text against vmlinux's (opened now: the
 * release is known once the first report is read). */
static void kallsyms_offset(struct decoder *d)
{
	uint64_t text_rt = 0, text, size;
	if (!d->kallsyms_file || d->kaslr_src == KASLR_KALLSYMS || ls_kmap_text(d->kmap, &text_rt) < 0)
		return;
	ls_module *m = vmlinux(d);
	if (m && ls_module_symbol(m, "_text", &text, &size) == 0) {
		d->kaslr = (int64_t)(text_rt - text);
		d->kaslr_src = KASLR_KALLSYMS;
	}
}

/* What the decoder holds: its modules, their names and paths, the prefix. */
static void decoder_free(struct decoder *d)
{
	for (size_t i = 0; i < d->nobjs; i++) {
		kobj_forget(&d->objs[i]);
		free(d->objs[i].name);
	}
	free(d->objs);
	free(d->strip);
	free(d->strip_asm);
	free(d->lines);
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
		decoder_free(&d);
		return EXIT_ANALYSIS;
	}
	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	int k = read_log(&d, stdout);
	int rc = k < 0 ? EXIT_ANALYSIS : EXIT_OK;
	if (k < 0)
		fprintf(stderr, "loopscope decode: reading the log: %s\n", strerror(errno));
	if (fflush(stdout) != 0)
		rc = EXIT_ANALYSIS;
	decoder_free(&d);
	return rc;
}
