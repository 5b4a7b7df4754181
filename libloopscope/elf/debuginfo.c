/* debuginfo.c - where a binary's debug information is.
 *
 * Two searches, one place:
 *
 *   - a module being opened (ls_debuginfo_find, for ls_elf_open): its own
 *     .debug_info, else a separate debug file as libdwfl finds it (by
 *     build-id under each directory of the debug path, by .gnu_debuglink
 *     beside the file, in its .debug/ and under the debug path, then from
 *     debuginfod), with every candidate libdwfl may open checked first;
 *
 *   - a front end's question (ls_find_debug_file, loopscope.h): the debug
 *     file of a build-id, of a kernel release's vmlinux, or of a kernel
 *     module's .ko, for `loopscope decode` and `perf loops report`, which
 *     each had a list of their own: the union of both lists, checked
 *     against the build-id when one is known, then debuginfod.
 *
 * debuginfod (libdebuginfod, and through it libcurl and a TLS stack: 60-70
 * ms to load) is asked only when $DEBUGINFOD_URLS names a server, and only
 * then loaded: libdwfl loads it itself for a module; for the front ends'
 * search it is opened with dlopen here.
 */
#include "elf/debuginfo.h"
#include "elf/module.h"
#include "support/base.h"

#include <elfutils/libdwelf.h>

#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* ---- debuginfod ------------------------------------------------------------- */

bool ls_debuginfod_configured(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	return urls && *urls;
}

/* libdebuginfod's client calls, loaded once on first use (the progress
 * and user-data calls are optional: older clients lack them). */
typedef int (*progress_cb)(void *client, long done, long total);
static struct {
	void *(*begin)(void);
	int (*find_debuginfo)(void *client, const unsigned char *id, int len, char **path);
	void (*end)(void *client);
	void (*set_progressfn)(void *client, progress_cb fn);
	void (*set_user_data)(void *client, void *data);
	void *(*get_user_data)(void *client);
} client_lib;
static pthread_once_t client_lib_once = PTHREAD_ONCE_INIT;

static void client_lib_load(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	*(void **)&client_lib.begin = dlsym(h, "debuginfod_begin");
	*(void **)&client_lib.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&client_lib.end = dlsym(h, "debuginfod_end");
	*(void **)&client_lib.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&client_lib.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&client_lib.get_user_data = dlsym(h, "debuginfod_get_user_data");
	if (!client_lib.set_user_data || !client_lib.get_user_data)
		client_lib.set_progressfn = NULL;
	if (!client_lib.begin || !client_lib.find_debuginfo || !client_lib.end)
		client_lib.begin = NULL; /* kept loaded: libcurl may not take an unload */
}

/* A download's meter on stderr (a terminal's): "loopscope: debuginfod:
 * BUILDID: 12 of 604 MiB". */
struct download {
	const char *id;
	bool shown;
	time_t last;
};

static int download_progress(void *client, long done, long total)
{
	struct download *dl = client_lib.get_user_data(client);
	time_t now = time(NULL);
	if (!dl || (dl->shown && now == dl->last))
		return 0;
	dl->shown = true;
	dl->last = now;
	if (total > 0)
		fprintf(stderr, "\rloopscope: debuginfod: downloading %.16s...: %ld of %ld MiB\033[K", dl->id,
			done >> 20, total >> 20);
	else
		fprintf(stderr, "\rloopscope: debuginfod: downloading %.16s...: %ld MiB\033[K", dl->id, done >> 20);
	return 0;
}

/* Why debuginfod did not give ID: RC is the client's -errno. */
static void debuginfod_failure(int rc, const char *id, char *why, size_t wsize)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (rc == -ENOENT)
		snprintf(why, wsize, "debuginfod: no server has build-id %s (%s)", id, urls);
	else if (rc == -ECONNREFUSED || rc == -EHOSTUNREACH || rc == -ENETUNREACH || rc == -ETIME ||
		 rc == -ETIMEDOUT || rc == -ECONNRESET || rc == -ECONNABORTED)
		snprintf(why, wsize, "debuginfod: server unreachable (%s: %s)", urls, strerror(-rc));
	else
		snprintf(why, wsize, "debuginfod: build-id %s not fetched (%s: %s)", id, urls,
			 rc < 0 ? strerror(-rc) : "no file");
}

int ls_debuginfod_find(const char *id, char *path, size_t size, bool progress, char *why, size_t wsize)
{
	if (!id || !*id || !ls_debuginfod_configured()) {
		snprintf(why, wsize, "DEBUGINFOD_URLS is not set");
		return LS_DEBUGINFOD_OFF;
	}
	pthread_once(&client_lib_once, client_lib_load);
	void *client = client_lib.begin ? client_lib.begin() : NULL;
	if (!client) {
		snprintf(why, wsize, "debuginfod: %s", client_lib.begin ? "cannot start its client"
			 : "libdebuginfod.so.1 is not installed");
		return LS_DEBUGINFOD_OFF;
	}
	struct download dl = { id, false, 0 };
	if (progress && client_lib.set_progressfn && isatty(STDERR_FILENO)) {
		client_lib.set_user_data(client, &dl);
		client_lib.set_progressfn(client, download_progress);
	}
	char *found = NULL;
	int fd = client_lib.find_debuginfo(client, (const unsigned char *)id, 0, &found);
	client_lib.end(client);
	if (dl.shown)
		fputs("\r\033[K", stderr);
	int rc = LS_DEBUGINFOD_MISSING;
	if (fd >= 0) {
		close(fd);
		if (found && strlen(found) < size) {
			memcpy(path, found, strlen(found) + 1);
			rc = 0;
		} else {
			snprintf(why, wsize, "debuginfod: the path of build-id %s is too long", id);
		}
	} else {
		debuginfod_failure(fd, id, why, wsize);
		rc = fd == -ENOENT ? LS_DEBUGINFOD_MISSING : LS_DEBUGINFOD_FAILED;
	}
	free(found);
	return rc;
}

/* The name of the file open as FD (libdwfl does not say where debuginfod
 * put what it fetched): NAME when given, else /proc's link. */
static char *path_of(int fd, const char *name)
{
	char *real = name ? realpath(name, NULL) : NULL;
	if (real)
		return real;
	char link[64], buf[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, sizeof buf - 1);
	if (n > 0) {
		buf[n] = 0;
		return ls_xstrdup(buf);
	}
	return ls_xstrdup(name ? name : "");
}

/* ---- separate debug files ---------------------------------------------------
 *
 * libdwfl opens the candidates for a separate debug file (by build-id under
 * every directory of the search path, by .gnu_debuglink next to the file,
 * in its .debug/ and under the global directories) with a plain open(): a
 * FIFO planted at one of those names would block the run for ever.  Every
 * candidate it may try is looked at first; if one of them is a FIFO, device
 * or socket, the search is not made and a warning says why.
 *
 * When no candidate exists at all and no debuginfod server is configured,
 * the search is not made either: libdwfl would find nothing, then load
 * libdebuginfod (with libcurl and its TLS stack: 60-70 ms) only to learn
 * that there is no server to ask. */

struct candidates {
	const ls_module *m;
	char special[PATH_MAX];      /* the first special file found, or "" */
	const char *what;
	bool any_file;               /* some candidate is a regular file */
	char by_build_id[PATH_MAX];  /* the first DIR/.build-id/xx/yyyy.debug that is one, or "" */
};

static void check_candidate(struct candidates *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void check_candidate(struct candidates *c, const char *fmt, ...)
{
	if (c->special[0])
		return;
	char p[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(p, sizeof p, fmt, ap);
	va_end(ap);
	struct stat st;
	if (n <= 0 || (size_t)n >= sizeof p || stat(p, &st) < 0 || S_ISDIR(st.st_mode))
		return;
	if (S_ISREG(st.st_mode)) {
		c->any_file = true;
		if (!c->by_build_id[0] && strstr(p, "/.build-id/"))
			memcpy(c->by_build_id, p, (size_t)n + 1);
		return;
	}
	memcpy(c->special, p, (size_t)n + 1);
	c->what = ls_file_type_name(st.st_mode);
}

/* Every name libdwfl's standard search may open for MOD (a superset). */
static void check_candidates(struct candidates *c, Dwfl_Module *mod, const char *file_name,
			     const char *debuglink_file)
{
	const ls_module *m = c->m;
	const char *path = m && m->debuginfo_path ? m->debuginfo_path : ":.debug:/usr/lib/debug";
	const unsigned char *bits;
	GElf_Addr vaddr;
	int idlen = dwfl_module_build_id(mod, &bits, &vaddr);
	char *id = idlen > 1 ? ls_hex_string(bits, idlen) : NULL;
	char dir[PATH_MAX] = ".";
	const char *base = file_name ? file_name : "";
	const char *slash = strrchr(base, '/');
	if (slash) {
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - base), base);
		base = slash + 1;
	}
	char link[NAME_MAX + 16];
	if (debuglink_file)
		snprintf(link, sizeof link, "%s", debuglink_file);
	else
		snprintf(link, sizeof link, "%s.debug", base);
	for (const char *p = path;;) {
		size_t len = strcspn(p, ":");
		const char *e = p;
		while (len && (*e == '+' || *e == '-'))
			e++, len--;
		if (len && e[0] == '/') {
			if (id)
				check_candidate(c, "%.*s/.build-id/%.2s/%s.debug", (int)len, e, id, id + 2);
			check_candidate(c, "%.*s/%s/%s", (int)len, e, dir, link);
			check_candidate(c, "%.*s/%s", (int)len, e, link);
		} else if (len) {
			check_candidate(c, "%s/%.*s/%s", dir, (int)len, e, link);
		} else {
			check_candidate(c, "%s/%s", dir, link);
		}
		if (e[len] != ':')
			break;
		p = e + len + 1;
	}
	free(id);
}

int ls_dwfl_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			   const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			   char **debuginfo_file_name)
{
	const ls_module *m = *userdata; /* set by ls_elf_open; NULL for other users */
	if (m && m->debuginfod_tried) {
		/* fetched already (fetch_from_debuginfod), or not to be had */
		int fd = m->debug_path ? ls_open_regular(m->debug_path, 0, NULL) : -1;
		if (fd >= 0)
			*debuginfo_file_name = ls_xstrdup(m->debug_path);
		return fd;
	}
	struct candidates *c = ls_xcalloc(1, sizeof *c);
	c->m = m;
	check_candidates(c, mod, file_name, debuglink_file);
	if (c->special[0]) {
		ls_warn(m ? &m->opt : NULL, "%s: %s is %s, not a debug file: separate debug information not searched",
			file_name ? file_name : modname, c->special, c->what);
		free(c);
		return -1;
	}
	const char *servers = getenv("DEBUGINFOD_URLS");
	bool searchable = c->any_file || (servers && *servers);
	free(c);
	if (!searchable)
		return -1;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					    debuglink_crc, debuginfo_file_name);
}

/* The debug file of M's build-id from debuginfod, with progress on a
 * terminal: m->debug_path, or the reason in m->debuginfod_why.  The real
 * load opens that file (ls_dwfl_find_debuginfo), not libdwfl's own
 * client, which would ask the servers again and say nothing of why. */
static void fetch_from_debuginfod(ls_module *m)
{
	char path[PATH_MAX], why[1024];
	m->debuginfod_tried = true;
	if (ls_debuginfod_find(m->build_id, path, sizeof path, m->opt.progress, why, sizeof why) < 0) {
		m->debuginfod_why = ls_xstrdup(why);
		return;
	}
	m->dwarf_found = true;
	char *real = realpath(path, NULL);
	m->debug_path = real ? real : ls_xstrdup(path);
}

/* Whether there is DWARF to read, without reading it (finding the file is
 * cheap, the inflating of its sections in dwfl_module_getdwarf is not):
 * the file's own .debug_info; else a debug file named by build-id, as
 * libdwfl looks for first; else, when some other candidate exists, the
 * rest of libdwfl's own search (debuglink, CRC checked), made on a second,
 * throwaway Dwfl, which ends with debuginfod when a server is configured.
 * Never libdwfl's search on the module itself, nor its
 * build-id step on any module: both leave a debug ELF in the module without
 * the state getdwarf sets with it (the bias came out wrong, and freeing the
 * module closed descriptor 0).  Sets m->dwarf_found and m->debug_path. */
static void find_dwarf(ls_module *m)
{
	if (ls_elf_has_section(m->elf, ".debug_info") || ls_elf_has_section(m->elf, ".zdebug_info")) {
		m->dwarf_found = true;
		m->debug_path = ls_xstrdup(m->path);
		return;
	}
	GElf_Word crc = 0;
	const char *link = dwelf_elf_gnu_debuglink(m->elf, &crc);
	struct candidates *c = ls_xcalloc(1, sizeof *c);
	c->m = m;
	check_candidates(c, m->dwmod, m->path, link);
	bool special = c->special[0], any = c->any_file;
	if (c->by_build_id[0]) {
		m->dwarf_found = true;
		char *d = realpath(c->by_build_id, NULL);
		m->debug_path = d ? d : ls_xstrdup(c->by_build_id);
	}
	free(c);
	if (m->dwarf_found || special) {
		/* a special file among the candidates: the real load says so */
		m->dwarf_found |= special;
		return;
	}
	/* nothing here, but a debuginfod server may have it (by build-id) */
	if (!any) {
		if (m->build_id && ls_debuginfod_configured())
			fetch_from_debuginfod(m);
		return;
	}
	struct stat st;
	const char *why;
	int fd = ls_open_input(m->path, &st, &why);
	if (fd < 0)
		return;
	if (st.st_ino != m->file_stat.st_ino || st.st_dev != m->file_stat.st_dev) {
		close(fd); /* replaced since: leave the search to the real load */
		m->dwarf_found = true;
		return;
	}
	Dwfl *probe = dwfl_begin(&m->dwfl_callbacks);
	Dwfl_Module *pm = probe ? dwfl_report_offline(probe, m->path, m->path, fd) : NULL;
	if (!pm) {
		if (!probe)
			close(fd);
		dwfl_end(probe);
		m->dwarf_found = true; /* the real load will say what is wrong */
		return;
	}
	dwfl_report_end(probe, NULL, NULL);
	Dwarf_Addr base = 0;
	const char *modname = dwfl_module_info(pm, NULL, &base, NULL, NULL, NULL, NULL, NULL);
	/* no build-id file exists (checked above), so the build-id step of
	 * the standard search finds nothing and leaves the module as it was */
	char *found = NULL;
	void *no_userdata = NULL;
	int dfd = dwfl_standard_find_debuginfo(pm, &no_userdata, modname, base, m->path, link, crc, &found);
	if (dfd >= 0) {
		m->dwarf_found = true;
		m->debug_path = path_of(dfd, found);
		close(dfd);
	}
	free(found);
	dwfl_end(probe);
}


void ls_debuginfo_find(ls_module *m)
{
	find_dwarf(m);
	if (m->debug_path && stat(m->debug_path, &m->debug_stat) < 0)
		memset(&m->debug_stat, 0, sizeof m->debug_stat);
}

/* ---- the front ends' search ------------------------------------------------------
 *
 * Candidates, in order (D: each absolute directory of the debug path,
 * /usr/lib/debug by default; R: the release; N: the module's name, '-' and
 * '_' alike):
 *
 *   build-id     D/.build-id/xx/yyyy.debug
 *   vmlinux      D/.build-id/xx/yyyy.debug (with a build-id), D/boot/vmlinux-R,
 *                D/boot/vmlinux-R.debug, D/lib/modules/R/vmlinux,
 *                /boot/vmlinux-R, /lib/modules/R/build/vmlinux, /lib/modules/R/vmlinux
 *   module       N.ko anywhere under the query's directories, D/.build-id/xx/yyyy.debug
 *                (with a build-id), N.ko anywhere under D/lib/modules/R
 *
 * then debuginfod, by build-id.  With a build-id, a file found by name must
 * carry it: one that does not is passed over for a later candidate, and
 * returned (flagged) only when none matches. */

struct search {
	const ls_debug_query *q;
	uint8_t id[64];
	size_t idlen;
	char *path;
	size_t size;
	bool found;
	char mismatch[PATH_MAX]; /* the first file by name whose build-id differs */
};

/* 1 if PATH carries the query's build-id (or none is asked), 0 if not, -1
 * if it is no ELF file. */
static int build_id_matches(const struct search *s, const char *path)
{
	if (!s->idlen)
		return 1;
	ls_file *f = ls_file_open(path, NULL);
	if (!f)
		return -1;
	const uint8_t *bits;
	size_t n = ls_file_build_id(f, &bits);
	int r = n == s->idlen && memcmp(bits, s->id, n) == 0;
	ls_file_close(f);
	return r;
}

/* Candidate PATH: taken if it is a regular file with the build-id. */
static bool try_file(struct search *s, const char *path)
{
	struct stat st;
	if (s->found || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return s->found;
	int r = build_id_matches(s, path);
	if (r == 1 && strlen(path) < s->size) {
		memcpy(s->path, path, strlen(path) + 1);
		s->found = true;
	} else if (r == 0 && !s->mismatch[0]) {
		snprintf(s->mismatch, sizeof s->mismatch, "%s", path);
	}
	return s->found;
}

static bool try_format(struct search *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool try_format(struct search *s, const char *fmt, ...)
{
	char p[PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(p, sizeof p, fmt, ap);
	va_end(ap);
	return n > 0 && (size_t)n < sizeof p && try_file(s, p);
}

/* "ext4", "nf-conntrack.ko": the names kernel modules go by, '-' and '_'
 * alike, without ".ko". */
static bool same_module(const char *file, size_t len, const char *want)
{
	size_t i = 0;
	for (; i < len && want[i]; i++) {
		char a = file[i] == '-' ? '_' : file[i], b = want[i] == '-' ? '_' : want[i];
		if (a != b)
			return false;
	}
	return i == len && !want[i];
}

/* N.ko anywhere under DIR (symbolic links followed, 8 levels at most). */
static bool try_tree(struct search *s, const char *dir, int depth)
{
	DIR *dp = depth < 8 ? opendir(dir) : NULL;
	if (!dp)
		return false;
	struct dirent *e;
	while (!s->found && (e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		char p[PATH_MAX];
		int n = snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (n <= 0 || (size_t)n >= sizeof p)
			continue;
		size_t len = strlen(e->d_name);
		if (len > 3 && !strcmp(e->d_name + len - 3, ".ko")) {
			if (same_module(e->d_name, len - 3, s->q->module))
				try_file(s, p);
			continue;
		}
		struct stat st;
		if (e->d_type == DT_DIR || ((e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) && stat(p, &st) == 0 &&
		                            S_ISDIR(st.st_mode)))
			try_tree(s, p, depth + 1);
	}
	closedir(dp);
	return s->found;
}

/* FN on each absolute directory of the debug path (libdwfl's form:
 * colon-separated, '+' and '-' prefixes), until it finds. */
static bool each_debug_root(struct search *s, bool (*fn)(struct search *, const char *root))
{
	const char *path = s->q->debug_file_path ? s->q->debug_file_path : "/usr/lib/debug";
	for (const char *p = path; *p && !s->found;) {
		size_t len = strcspn(p, ":");
		const char *e = p;
		while (len && (*e == '+' || *e == '-'))
			e++, len--;
		if (len && *e == '/' && len < PATH_MAX) {
			char root[PATH_MAX];
			memcpy(root, e, len);
			root[len] = 0;
			fn(s, root);
		}
		p = e + len + (e[len] == ':');
	}
	return s->found;
}

static bool by_build_id(struct search *s, const char *root)
{
	const char *id = s->q->build_id;
	return s->idlen && try_format(s, "%s/.build-id/%.2s/%s.debug", root, id, id + 2);
}

static const char *release_of(const ls_debug_query *q, char *buf, size_t size)
{
	struct utsname u;
	if (q->release && *q->release)
		return q->release;
	if (uname(&u) == 0)
		snprintf(buf, size, "%s", u.release);
	else
		buf[0] = 0;
	return buf;
}

static bool vmlinux_under(struct search *s, const char *root)
{
	char rb[256];
	const char *r = release_of(s->q, rb, sizeof rb);
	return try_format(s, "%s/boot/vmlinux-%s", root, r) || try_format(s, "%s/boot/vmlinux-%s.debug", root, r) ||
	       try_format(s, "%s/lib/modules/%s/vmlinux", root, r);
}

static bool find_vmlinux(struct search *s)
{
	char rb[256];
	const char *r = release_of(s->q, rb, sizeof rb);
	return each_debug_root(s, by_build_id) || each_debug_root(s, vmlinux_under) ||
	       try_format(s, "/boot/vmlinux-%s", r) || try_format(s, "/lib/modules/%s/build/vmlinux", r) ||
	       try_format(s, "/lib/modules/%s/vmlinux", r);
}

static bool module_under(struct search *s, const char *root)
{
	char rb[256], dir[PATH_MAX];
	int n = snprintf(dir, sizeof dir, "%s/lib/modules/%s", root, release_of(s->q, rb, sizeof rb));
	return n > 0 && (size_t)n < sizeof dir && try_tree(s, dir, 0);
}

static bool find_module(struct search *s)
{
	for (const char *p = s->q->dirs; p && *p && !s->found;) {
		size_t len = strcspn(p, ":");
		char dir[PATH_MAX];
		if (len && len < sizeof dir) {
			memcpy(dir, p, len);
			dir[len] = 0;
			try_tree(s, dir, 0);
		}
		p += len + (p[len] == ':');
	}
	return s->found || each_debug_root(s, by_build_id) || each_debug_root(s, module_under);
}

static const char *target_name(const ls_debug_query *q, char *buf, size_t size)
{
	char rb[256];
	switch (q->target) {
	case LS_DEBUG_VMLINUX:
		snprintf(buf, size, "vmlinux %s", release_of(q, rb, sizeof rb));
		break;
	case LS_DEBUG_KMODULE:
		snprintf(buf, size, "module %s (%s)", q->module, release_of(q, rb, sizeof rb));
		break;
	default:
		snprintf(buf, size, "build-id %s", q->build_id);
		break;
	}
	return buf;
}

/* The query's build-id as bytes: false if it is not hex. */
static bool parse_build_id(struct search *s)
{
	const char *id = s->q->build_id;
	size_t n = id ? strlen(id) : 0;
	if (n % 2 || n / 2 > sizeof s->id)
		return false;
	for (size_t i = 0; i < n; i += 2) {
		if (!isxdigit((unsigned char)id[i]) || !isxdigit((unsigned char)id[i + 1]))
			return false;
		char byte[3] = { id[i], id[i + 1], 0 };
		s->id[i / 2] = (uint8_t)strtoul(byte, NULL, 16);
	}
	s->idlen = n / 2;
	return true;
}

void ls_debug_query_init_sized(ls_debug_query *q, size_t size)
{
	if (!q || size < sizeof q->size)
		return;
	ls_debug_query full = { .size = size, .target = LS_DEBUG_BY_BUILD_ID, .debuginfod = 1 };
	memcpy(q, &full, size < sizeof full ? size : sizeof full);
	if (size > sizeof full)
		memset((char *)q + sizeof full, 0, size - sizeof full);
}

/* The smallest query a caller may pass: LOOPSCOPE_0.2's (loopscope.h, "ABI
 * rules"). */
#define QUERY_MIN_SIZE (offsetof(ls_debug_query, debuginfod) + sizeof(int))

/* What is wrong with Q, or NULL. */
static const char *query_problem(const ls_debug_query *q, struct search *s)
{
	if (!parse_build_id(s))
		return "a build-id is an even number of hex digits";
	if (q->target == LS_DEBUG_KMODULE && (!q->module || !*q->module))
		return "no module name";
	if (q->target > LS_DEBUG_KMODULE || (q->target == LS_DEBUG_BY_BUILD_ID && !s->idlen))
		return "nothing to look for";
	return NULL;
}

int ls_find_debug_file(const ls_debug_query *query, char *path, size_t size, unsigned *found, ls_error *err)
{
	if (found)
		*found = 0;
	if (!query || query->size < QUERY_MIN_SIZE || !path || !size) {
		ls_set_error(err, LS_ERR_USAGE, "ls_find_debug_file: %s", path && size ?
			     "query not set by ls_debug_query_init" : "no room for the path");
		return -1;
	}
	ls_debug_query q;
	ls_debug_query_init(&q);
	memcpy(&q, query, query->size < sizeof q ? query->size : sizeof q);
	q.size = sizeof q;
	struct search s = { .q = &q, .path = path, .size = size };
	const char *problem = query_problem(&q, &s);
	if (problem) {
		ls_set_error(err, LS_ERR_USAGE, "ls_find_debug_file: %s", problem);
		return -1;
	}
	if (q.target == LS_DEBUG_VMLINUX)
		find_vmlinux(&s);
	else if (q.target == LS_DEBUG_KMODULE)
		find_module(&s);
	else
		each_debug_root(&s, by_build_id);
	char why[1024] = "";
	int fetched = LS_DEBUGINFOD_OFF;
	if (!s.found && q.debuginfod && s.idlen &&
	    (fetched = ls_debuginfod_find(q.build_id, path, size, q.progress, why, sizeof why)) == 0) {
		s.found = true;
		if (found)
			*found |= LS_FOUND_DEBUGINFOD;
	}
	if (!s.found && s.mismatch[0] && strlen(s.mismatch) < size) {
		memcpy(path, s.mismatch, strlen(s.mismatch) + 1);
		s.found = true;
		if (found)
			*found |= LS_FOUND_BUILD_ID_DIFFERS;
	}
	if (!s.found) {
		char what[512];
		if (!why[0] && q.debuginfod && !s.idlen)
			snprintf(why, sizeof why, "no build-id to ask debuginfod for");
		ls_set_error(err, fetched == LS_DEBUGINFOD_FAILED ? LS_ERR_IO : LS_ERR_NOT_FOUND,
			     "%s: no debug file found%s%s%s", target_name(&q, what, sizeof what), why[0] ? " (" : "",
			     why, why[0] ? ")" : "");
		return -1;
	}
	return 0;
}
