/* fuzz-cachedir.c - libFuzzer target: the cache directory checks
 * (cache/cache_dir.c), on directories the input lays out.
 *
 * Five bytes: what the cache directory is (missing, a directory, a
 * symbolic link to a root-owned 0755 directory, a regular file, a
 * dangling link), its mode and owner, its parent's mode and owner (owners:
 * this user, root or uid 4242; the fuzzer runs as root to chown, else the
 * owners stay this user's).  ls_cache_dir_distrust must agree with the
 * rules written here independently (the user's own directory, not
 * writable by others, not a link, in a parent no other user controls),
 * and ls_cache_dir_make must never change the mode of what a link points
 * to nor succeed through a link. */
#include "cache/cache.h"
#include "support/base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char base[64];

static uid_t owner_of(uint8_t b)
{
	if (geteuid() != 0)
		return geteuid();
	static const uid_t owners[] = { 0, 4242 };
	return owners[b % 2];
}

/* PARENT empty again (CACHE, whatever it was, removed). */
static void reset(const char *parent, const char *cache, const char *target)
{
	(void)chmod(parent, 0700);
	if (unlink(cache) < 0 && errno != ENOENT && rmdir(cache) < 0)
		abort();
	if (rmdir(parent) < 0 && errno != ENOENT)
		abort();
	if (mkdir(parent, 0700) < 0)
		abort();
	(void)chmod(target, 0755);
}

/* The rules, independently of cache_dir.c. */
static bool parent_ok(const struct stat *ps)
{
	return (ps->st_uid == geteuid() || ps->st_uid == 0) && (!(ps->st_mode & 022) || (ps->st_mode & S_ISVTX));
}

static bool want_trust(uint8_t kind, const struct stat *cs, const struct stat *ps)
{
	switch (kind) {
	case 0:
		return parent_ok(ps);
	case 1:
		return cs->st_uid == geteuid() && !(cs->st_mode & 022) && parent_ok(ps);
	default:
		return false;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!base[0]) {
		snprintf(base, sizeof base, "/tmp/fuzz-cachedir.XXXXXX");
		if (!mkdtemp(base))
			abort();
		chmod(base, 0755);
	}
	if (size < 5)
		return 0;
	char parent[96], cache[128], target[96];
	snprintf(parent, sizeof parent, "%s/p", base);
	snprintf(cache, sizeof cache, "%s/p/loopscope", base);
	snprintf(target, sizeof target, "%s/target", base);
	mkdir(target, 0755);
	reset(parent, cache, target);
	uint8_t kind = data[0] % 5;
	if (kind == 1 && (mkdir(cache, 0700) < 0 || chmod(cache, (data[1] & 0777) | ((data[1] & 0x80) ? S_ISVTX : 0)) < 0 ||
	                  lchown(cache, owner_of(data[2]), (gid_t)-1) < 0))
		abort();
	if (kind == 2 && symlink(target, cache) < 0)
		abort();
	if (kind == 3) {
		FILE *f = fopen(cache, "w");
		if (!f)
			abort();
		fclose(f);
	}
	if (kind == 4 && symlink("/nonexistent/loopscope", cache) < 0)
		abort();
	mode_t pmode = (mode_t)(((data[3] << 1) | (data[4] >> 7)) & 0777) | ((data[4] & 0x40) ? S_ISVTX : 0);
	if (chmod(parent, pmode) < 0 || chown(parent, owner_of(data[4]), (gid_t)-1) < 0)
		abort();
	struct stat cs = { 0 }, ps, ts;
	lstat(cache, &cs);
	if (stat(parent, &ps) < 0)
		abort();
	const char *why = ls_cache_dir_distrust(cache);
	if ((why == NULL) != want_trust(kind, &cs, &ps))
		abort();
	int made = ls_cache_dir_make(cache);
	if (stat(target, &ts) < 0 || (ts.st_mode & 07777) != 0755)
		abort(); /* chmod'ed through the link */
	if ((kind == 2 || kind == 4) && made == 0)
		abort(); /* "made" through a link */
	return 0;
}
