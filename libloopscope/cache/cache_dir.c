/* cache_dir.c - the cache directory: where it is, who may read it, the
 * temporaries that killed stores leave behind, and its size bound.
 *
 * The directory is made 0700 (and its files are 0600, see cache.c): the
 * trees name every procedure and file of the binaries analyzed.  A store
 * first removes temporaries whose writer is gone (its pid, in the name, no
 * longer runs, or the file is an hour old), and after its rename evicts
 * the least recently used entries (cache.c refreshes an entry's mtime on
 * every hit) until the directory holds at most the bound: 1 GiB, or
 * $LOOPSCOPE_CACHE_SIZE, or opt->cache_max_bytes.
 *
 * The directory is trusted only if it is this user's own, not writable by
 * others, not a symbolic link, and in a parent no other user controls
 * (ls_cache_dir_distrust): an entry's checksum has no secret, so whoever
 * can write the directory can forge answers, and root run with a user's
 * HOME (sudo -E) would otherwise follow a link to /etc, chmod it, write
 * and evict there.  Otherwise the cache is off for the run, said once.
 * The checks are made on the descriptors that are then used
 * (ls_cache_dir_open): the parent opened and checked, the directory opened
 * from it without following a link and checked, and every entry read,
 * written, renamed or evicted relative to that descriptor, so that a
 * directory swapped for a link after the check is not followed.
 *
 * Also the public side: `loopscope cache --list/--prune/--clear` through
 * ls_cache_list(), ls_cache_prune() and ls_cache_clear().
 */
#include "cache/cache.h"
#include "support/base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_BOUND ((uint64_t)1 << 30)
#define STALE_SECONDS 3600

bool ls_cache_dir_of(const ls_options *opt, char *buf, size_t size)
{
	int n;
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (opt && opt->cache_dir && *opt->cache_dir)
		n = snprintf(buf, size, "%s", opt->cache_dir);
	else if (xdg && *xdg == '/')
		n = snprintf(buf, size, "%s/loopscope", xdg);
	else if (home && *home)
		n = snprintf(buf, size, "%s/.cache/loopscope", home);
	else
		return false;
	return n > 0 && (size_t)n < size;
}

int ls_cache_dir_make(const char *dir)
{
	char buf[PATH_MAX];
	size_t len = strlen(dir);
	if (len == 0 || len >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, dir, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return -1;
	/* A directory made by an older loopscope (0755), or by hand: ours
	 * is private.  One that is not ours is left as it is, and a link is
	 * not followed (lstat: its target may be anyone's). */
	struct stat st;
	if (lstat(buf, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
		return -1;
	}
	if (st.st_uid == geteuid() && (st.st_mode & 077))
		(void)chmod(buf, 0700);
	return 0;
}

/* Why PARENT (its fstat ST), the directory holding the cache directory,
 * lets another user replace it: NULL if it does not. */
static const char *parent_distrust(const char *parent, const struct stat *st, char *why, size_t size)
{
	if (st->st_uid != geteuid() && st->st_uid != 0) {
		snprintf(why, size, "in %s, a directory of uid %u", parent, (unsigned)st->st_uid);
		return why;
	}
	if ((st->st_mode & 022) && !(st->st_mode & S_ISVTX)) {
		snprintf(why, size, "in %s, which other users may write", parent);
		return why;
	}
	return NULL;
}

/* Why the cache directory (its fstat ST) must not be used: NULL if it may. */
static const char *dir_distrust(const struct stat *st, char *why, size_t size)
{
	if (!S_ISDIR(st->st_mode))
		return "not a directory";
	if (st->st_uid != geteuid()) {
		snprintf(why, size, "owned by uid %u, not by this user (uid %u)", (unsigned)st->st_uid,
		         (unsigned)geteuid());
		return why;
	}
	if (st->st_mode & 022)
		return "writable by other users";
	return NULL;
}

int ls_cache_dir_open(const char *dir, const char **why)
{
	static _Thread_local char said[PATH_MAX + 64];
	char parent[PATH_MAX];
	const char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : dir;
	if (!slash)
		snprintf(parent, sizeof parent, ".");
	else
		snprintf(parent, sizeof parent, "%.*s", (int)(slash == dir ? 1 : slash - dir), dir);
	if (!*base)
		base = ".";
	*why = NULL;
	/* a link to the parent is followed: ~/.cache often is one */
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat pst, st;
	if (pfd < 0)
		return -1; /* not there: ls_cache_dir_make makes it ours */
	if (fstat(pfd, &pst) < 0) {
		*why = strerror(errno);
		close(pfd);
		return -1;
	}
	/* The directory's own faults first, then its parent's (also when the
	 * directory is not there yet: ls_cache_dir_make would make it there). */
	int fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int e = errno;
	if (fd < 0 && (e == ELOOP || e == ENOTDIR)) /* which of the two, for the message */
		*why = fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)
		               ? "a symbolic link (not followed)" : "not a directory";
	else if (fd < 0 && e != ENOENT)
		*why = strerror(e);
	else if (fd >= 0 && fstat(fd, &st) < 0)
		*why = strerror(e = errno);
	else if (fd >= 0)
		*why = dir_distrust(&st, said, sizeof said);
	if (!*why && (fd >= 0 || e == ENOENT))
		*why = parent_distrust(parent, &pst, said, sizeof said);
	close(pfd);
	if (*why && fd >= 0) {
		close(fd);
		fd = -1;
		e = EPERM;
	}
	errno = e;
	return fd;
}

const char *ls_cache_dir_distrust(const char *dir)
{
	const char *why;
	int fd = ls_cache_dir_open(dir, &why);
	if (fd >= 0)
		close(fd);
	return why;
}

uint64_t ls_cache_bound_of(const ls_options *opt)
{
	if (opt && opt->cache_max_bytes)
		return opt->cache_max_bytes;
	const char *env = getenv("LOOPSCOPE_CACHE_SIZE");
	if (env && *env) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(env, &end, 10);
		int shift = 0;
		switch (*end) {
		case 'k': case 'K': shift = 10; end++; break;
		case 'm': case 'M': shift = 20; end++; break;
		case 'g': case 'G': shift = 30; end++; break;
		}
		if (end != env && !errno && (*end == 0 || !strcmp(end, "iB") || !strcmp(end, "B")) &&
		    v < (1ull << (63 - shift)))
			return (uint64_t)v << shift;
		/* A typo must not silently mean the default: said once a run. */
		static atomic_bool said;
		if (!atomic_exchange(&said, true))
			ls_warn(opt, "LOOPSCOPE_CACHE_SIZE=%s is not a size (such as 512M or 2G): the cache bound is 1 GiB",
			        env);
	}
	return DEFAULT_BOUND;
}

/* ---- walking the directory ---------------------------------------------------- */

enum entry_kind { ENTRY_OTHER, ENTRY_CACHE, ENTRY_TEMP };

/* "X.lsc" is an entry; "X.lsc.tmp-PID-XXXXXX" a store in progress (or a
 * dead one).  Anything else is not ours and is never touched. */
static enum entry_kind kind_of(const char *name, long *pid)
{
	size_t n = strlen(name);
	if (n > 4 && !strcmp(name + n - 4, ".lsc"))
		return ENTRY_CACHE;
	const char *t = strstr(name, ".lsc.tmp-");
	if (t && t != name) {
		char *end;
		*pid = strtol(t + 9, &end, 10);
		if (*end == '-')
			return ENTRY_TEMP;
	}
	return ENTRY_OTHER;
}

struct entry {
	char *path;
	uint64_t size;
	struct timespec used;
};

struct listing {
	struct entry *v;
	size_t n, cap;
	uint64_t total;
};

static void listing_free(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* Calls VISIT on every regular file of DIR (open as DIRFD) that is an
 * entry or a temporary (kind_of), with its path, stat and kind; a nonzero
 * return stops the walk.  -1 if DIR cannot be read. */
static int walk_dir(int dirfd, const char *dir,
                    int (*visit)(void *ctx, const char *path, const char *name, long pid, enum entry_kind k,
                                 const struct stat *st),
                    void *ctx)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (struct dirent *e; (e = readdir(d));) {
		long pid = 0;
		enum entry_kind k = kind_of(e->d_name, &pid);
		char path[PATH_MAX];
		struct stat st;
		if (k == ENTRY_OTHER || snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
		    fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (visit(ctx, path, e->d_name, pid, k, &st))
			break;
	}
	closedir(d);
	return 0;
}

struct list_walk {
	struct listing *l;
	bool temps;
};

static int add_entry(void *ctx, const char *path, const char *name, long pid, enum entry_kind k,
                     const struct stat *st)
{
	(void)name, (void)pid;
	struct list_walk *w = ctx;
	struct listing *l = w->l;
	if (k == ENTRY_TEMP && !w->temps)
		return 0;
	l->v = ls_grow(l->v, &l->cap, l->n + 1, sizeof *l->v);
	char *copy = ls_xstrdup(path); /* before n grows: out of memory leaves L whole */
	l->v[l->n++] = (struct entry){ copy, (uint64_t)st->st_size, st->st_mtim };
	l->total += (uint64_t)st->st_size;
	return 0;
}

/* The entries of DIR (regular files only); temporaries too if TEMPS. */
static int list_dir(int dirfd, const char *dir, bool temps, struct listing *l)
{
	memset(l, 0, sizeof *l);
	return walk_dir(dirfd, dir, add_entry, &(struct list_walk){ l, temps });
}

/* Removes the entry at PATH (DIR/NAME) from the directory DIRFD, never
 * through a path that could lead elsewhere. */
static int unlink_entry(int dirfd, const char *path)
{
	const char *slash = strrchr(path, '/');
	return unlinkat(dirfd, slash ? slash + 1 : path, 0);
}

static int cmp_used(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->path, y->path);
}

static bool temp_is_stale(const char *name, long pid, const struct stat *st)
{
	if (time(NULL) - st->st_mtim.tv_sec > STALE_SECONDS)
		return true;
	return pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

struct stale_walk {
	ls_cache_fn fn;
	void *ctx;
	int dirfd;
};

static int remove_if_stale(void *ctx, const char *path, const char *name, long pid, enum entry_kind k,
                           const struct stat *st)
{
	struct stale_walk *w = ctx;
	if (k != ENTRY_TEMP || !temp_is_stale(name, pid, st))
		return 0;
	if (unlinkat(w->dirfd, name, 0) == 0 && w->fn) {
		ls_cache_info info = { .file = path, .size = (uint64_t)st->st_size, .last_used = st->st_mtim.tv_sec,
				       .problem = "a temporary left by a store that did not finish" };
		w->fn(w->ctx, &info);
	}
	return 0;
}

/* Calls FN (if any) on every stale temporary removed from DIR. */
static void remove_stale(int dirfd, const char *dir, ls_cache_fn fn, void *ctx)
{
	walk_dir(dirfd, dir, remove_if_stale, &(struct stale_walk){ fn, ctx, dirfd });
}

void ls_cache_remove_stale(int dirfd, const char *dir)
{
	remove_stale(dirfd, dir, NULL, NULL);
}

/* What FN is told of entry E; META (may be NULL) what its header says. */
static ls_cache_info entry_info(const struct entry *e, const struct ls_cache_meta *meta)
{
	ls_cache_info info = { .file = e->path, .size = e->size, .last_used = e->used.tv_sec };
	if (meta) {
		info.binary = meta->binary[0] ? meta->binary : NULL;
		info.build_id = meta->build_id[0] ? meta->build_id : NULL;
		info.loops = meta->loops;
		info.problem = meta->problem;
	}
	return info;
}

/* Evicts least recently used entries of DIR (not KEEP) until at most
 * BOUND bytes remain. */
static void evict(int dirfd, const char *dir, uint64_t bound, const char *keep, ls_cache_fn fn, void *ctx)
{
	struct listing l;
	if (list_dir(dirfd, dir, false, &l) < 0)
		return;
	if (l.total > bound) {
		qsort(l.v, l.n, sizeof *l.v, cmp_used);
		for (size_t i = 0; i < l.n && l.total > bound; i++) {
			if (keep && !strcmp(l.v[i].path, keep))
				continue;
			if (unlink_entry(dirfd, l.v[i].path) < 0)
				continue;
			l.total -= l.v[i].size;
			if (fn) {
				ls_cache_info info = entry_info(&l.v[i], NULL);
				info.problem = "least recently used, beyond the size bound";
				fn(ctx, &info);
			}
		}
	}
	listing_free(&l);
}

void ls_cache_enforce_bound(const ls_options *opt, int dirfd, const char *dir, const char *keep)
{
	evict(dirfd, dir, ls_cache_bound_of(opt), keep, NULL, NULL);
}

/* ---- the public side ---------------------------------------------------------- */

/* Each takes the caller's ls_options, of the size it was built with. */
LS_DEFAULT_SYMBOL(ls_cache_dir, ls_cache_dir_v02, LOOPSCOPE_0.2);
int ls_cache_dir_v02(const ls_options *opt, char *buf, size_t size)
{
	ls_options o;
	return ls_options_import(&o, opt, NULL) == 0 && ls_cache_dir_of(&o, buf, size) ? 0 : -1;
}

LS_DEFAULT_SYMBOL(ls_cache_bound, ls_cache_bound_v02, LOOPSCOPE_0.2);
uint64_t ls_cache_bound_v02(const ls_options *opt)
{
	ls_options o;
	return ls_cache_bound_of(ls_options_import(&o, opt, NULL) == 0 ? &o : NULL);
}

/* The cache directory, checked and open: its descriptor; -2 if there is
 * none yet (nothing to list or remove), -1 with ERR. */
static int open_dir(const ls_options *opt, char *dir, size_t size, ls_error *err)
{
	if (!ls_cache_dir_of(opt, dir, size)) {
		ls_set_error(err, LS_ERR_USAGE, "no cache directory: set XDG_CACHE_HOME or HOME");
		return -1;
	}
	const char *why;
	int fd = ls_cache_dir_open(dir, &why);
	if (fd >= 0)
		return fd;
	if (why && !strcmp(why, "not a directory"))
		ls_set_error(err, LS_ERR_IO, "%s: not a directory", dir);
	else if (why)
		ls_set_error(err, LS_ERR_IO, "%s: not used as the cache: %s", dir, why);
	else if (errno == ENOENT)
		return -2; /* no cache yet */
	else
		ls_set_error(err, LS_ERR_IO, "%s: %s", dir, strerror(errno));
	return -1;
}

static int list_entries(const ls_options *opt, int dirfd, const char *dir, ls_cache_fn fn, void *ctx)
{
	(void)opt;
	struct listing l;
	if (list_dir(dirfd, dir, false, &l) < 0)
		return -1;
	qsort(l.v, l.n, sizeof *l.v, cmp_used);
	struct ls_cache_meta *meta = ls_xmalloc(sizeof *meta);
	for (size_t i = l.n; i-- > 0;) { /* most recently used first */
		ls_cache_read_meta(l.v[i].path, false, meta);
		ls_cache_info info = entry_info(&l.v[i], meta);
		fn(ctx, &info);
	}
	free(meta);
	listing_free(&l);
	return 0;
}

static int prune_entries(const ls_options *opt, int dirfd, const char *dir, ls_cache_fn fn, void *ctx)
{
	remove_stale(dirfd, dir, fn, ctx);
	/* Entries that can only miss: unreadable, another format or build of
	 * loopscope, corrupt, or whose binary is gone or changed. */
	struct listing l;
	if (list_dir(dirfd, dir, false, &l) < 0)
		return -1;
	struct ls_cache_meta *meta = ls_xmalloc(sizeof *meta);
	for (size_t i = 0; i < l.n; i++) {
		ls_cache_read_meta(l.v[i].path, true, meta);
		if (!meta->problem || unlink_entry(dirfd, l.v[i].path) < 0)
			continue;
		ls_cache_info info = entry_info(&l.v[i], meta);
		fn(ctx, &info);
	}
	free(meta);
	listing_free(&l);
	evict(dirfd, dir, ls_cache_bound_of(opt), NULL, fn, ctx);
	return 0;
}

static int clear_entries(const ls_options *opt, int dirfd, const char *dir, ls_cache_fn fn, void *ctx)
{
	(void)opt;
	struct listing l;
	if (list_dir(dirfd, dir, true, &l) < 0)
		return -1;
	for (size_t i = 0; i < l.n; i++) {
		if (unlink_entry(dirfd, l.v[i].path) < 0)
			continue;
		ls_cache_info info = entry_info(&l.v[i], NULL);
		fn(ctx, &info);
	}
	listing_free(&l);
	return 0;
}

/* What ls_cache_list, ls_cache_prune and ls_cache_clear share: find the
 * directory (none yet: nothing to do), then OP on it. */
static int on_cache_dir(const ls_options *opt,
                        int (*op)(const ls_options *, int, const char *, ls_cache_fn, void *), ls_cache_fn fn,
                        void *ctx, ls_error *err)
{
	ls_options o;
	if (ls_options_import(&o, opt, err) < 0)
		return -1;
	opt = &o;
	char dir[PATH_MAX];
	int dirfd = open_dir(opt, dir, sizeof dir, err);
	if (dirfd < 0)
		return dirfd == -2 ? 0 : -1;
	struct ls_oom_guard g;
	ls_oom_push(&g);
	if (setjmp(g.env)) { /* the listing leaks */
		close(dirfd);
		ls_set_error(err, LS_ERR_NOMEM, "%s: out of memory", dir);
		return -1;
	}
	int rc = op(opt, dirfd, dir, fn, ctx);
	int e = errno;
	ls_oom_pop(&g);
	close(dirfd);
	errno = e;
	if (rc < 0) {
		ls_set_error(err, LS_ERR_IO, "%s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

LS_DEFAULT_SYMBOL(ls_cache_list, ls_cache_list_v02, LOOPSCOPE_0.2);
int ls_cache_list_v02(const ls_options *opt, ls_cache_fn fn, void *ctx, ls_error *err)
{
	return on_cache_dir(opt, list_entries, fn, ctx, err);
}

LS_DEFAULT_SYMBOL(ls_cache_prune, ls_cache_prune_v02, LOOPSCOPE_0.2);
int ls_cache_prune_v02(const ls_options *opt, ls_cache_fn fn, void *ctx, ls_error *err)
{
	return on_cache_dir(opt, prune_entries, fn, ctx, err);
}

LS_DEFAULT_SYMBOL(ls_cache_clear, ls_cache_clear_v02, LOOPSCOPE_0.2);
int ls_cache_clear_v02(const ls_options *opt, ls_cache_fn fn, void *ctx, ls_error *err)
{
	return on_cache_dir(opt, clear_entries, fn, ctx, err);
}
