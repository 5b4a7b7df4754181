/* file.c - opening the files loopscope reads: regular files only.
 *
 * A plain open() of a FIFO blocks until some writer appears, and one of a
 * device may have side effects: a FIFO given as BINARY, planted where the
 * cache or a separate debug file goes, or named by a perf.data or by DWARF
 * as a source, would hang the run for ever (and GDB with it).  So a file
 * is first reached with O_PATH, which opens nothing (no FIFO waits, no
 * device acts), and checked with fstat() to be a regular file, then opened
 * for reading through that very descriptor (/proc/self/fd/N), so that what
 * is read is what was checked.
 *
 * Regular is not enough for /proc and /sys (and debugfs, tracefs...):
 * their files say size 0 or 4096 whatever a read returns, and some reads
 * act (/proc/kmsg consumes the kernel's log, as root; its read blocks).
 * Files there are refused unless the caller asks for one (LS_OPEN_PSEUDO_FS:
 * the kernel's kallsyms and module sections, which are read on purpose).
 * Source files are read whole: LS_OPEN_SOURCE bounds their size
 * (LS_MAX_SOURCE_SIZE), so that a source named /dev/zero-like or a 4 GiB
 * sparse file costs nothing, and the refusal says the size.
 *
 * The one place that does so: the stages call ls_open_input (a reason as a
 * string, the fstat), the front ends ls_open_regular (loopscope.h: an
 * ls_error naming the file).
 */
#include "support/base.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

const char *ls_file_type_name(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symbolic link";
	if (S_ISREG(mode))
		return "a regular file";
	return "not a regular file";
}

/* Whether a filesystem of this type makes files up as they are read. */
static bool pseudo_fs(long type)
{
	static const long types[] = {
		PROC_SUPER_MAGIC, SYSFS_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC, SECURITYFS_MAGIC, CGROUP_SUPER_MAGIC,
		CGROUP2_SUPER_MAGIC, DEVPTS_SUPER_MAGIC, BPF_FS_MAGIC, PSTOREFS_MAGIC, EFIVARFS_MAGIC,
		0x62656570 /* configfs */, 0x65735543 /* fusectl */,
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (type == types[i])
			return true;
	return false;
}

/* Why a regular file may not be opened with FLAGS: NULL if it may. */
static const char *refusal(int pathfd, const struct stat *st, unsigned flags)
{
	static _Thread_local char said[160];
	struct statfs sf;
	if (!(flags & LS_OPEN_PSEUDO_FS) && fstatfs(pathfd, &sf) == 0 && pseudo_fs((long)sf.f_type)) {
		errno = EOPNOTSUPP;
		return "a file of /proc, /sys or the like (its size says nothing of what a read returns)";
	}
	if ((flags & LS_OPEN_SOURCE) && (uint64_t)st->st_size > LS_MAX_SOURCE_SIZE) {
		snprintf(said, sizeof said, "%llu MiB, more than the %u MiB a source file may have",
		         (unsigned long long)((uint64_t)st->st_size >> 20), (unsigned)(LS_MAX_SOURCE_SIZE >> 20));
		errno = EFBIG;
		return said;
	}
	return NULL;
}

/* PATH relative to DIRFD (AT_FDCWD: as open does); NOFOLLOW: a link at
 * its last component is refused, not followed. */
static int open_input(int dirfd, const char *path, bool nofollow, unsigned flags, struct stat *st,
                      const char **why)
{
	struct stat local, again;
	if (!st)
		st = &local;
	*why = NULL;
	int pfd = openat(dirfd, path, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	if (pfd < 0 || fstat(pfd, st) < 0) {
		int e = errno;
		*why = strerror(e);
		if (pfd >= 0)
			close(pfd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		*why = ls_file_type_name(st->st_mode);
		close(pfd);
		errno = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	if ((*why = refusal(pfd, st, flags))) { /* errno: EOPNOTSUPP, EFBIG */
		int e = errno;
		close(pfd);
		errno = e;
		return -1;
	}
	/* The file checked, opened for reading through its descriptor; the
	 * path again only where /proc is not mounted (then compared). */
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
	int fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && errno == ENOENT)
		fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));
	int e = errno;
	close(pfd);
	if (fd < 0) {
		*why = strerror(e);
		errno = e;
		return -1;
	}
	if (fstat(fd, &again) < 0 || again.st_dev != st->st_dev || again.st_ino != st->st_ino) {
		close(fd);
		*why = "replaced while being opened";
		errno = EAGAIN;
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int ls_open_input_flags(const char *path, unsigned flags, struct stat *st, const char **why)
{
	return open_input(AT_FDCWD, path, false, flags, st, why);
}

int ls_open_input_at(int dirfd, const char *name, struct stat *st, const char **why)
{
	return open_input(dirfd, name, true, 0, st, why);
}

int ls_open_input(const char *path, struct stat *st, const char **why)
{
	return ls_open_input_flags(path, 0, st, why);
}

bool ls_path_is_special(const char *path, const char **what)
{
	struct stat st;
	if (stat(path, &st) < 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return false;
	*what = ls_file_type_name(st.st_mode);
	return true;
}

int ls_open_regular(const char *path, unsigned flags, ls_error *err)
{
	if (!path || (flags & ~(unsigned)(LS_OPEN_SOURCE | LS_OPEN_PSEUDO_FS))) {
		ls_set_error(err, LS_ERR_USAGE, "%s: ls_open_regular: %s", path ? path : "(null)",
			     path ? "unknown flags" : "no file name");
		return -1;
	}
	const char *why;
	int fd = ls_open_input_flags(path, flags, NULL, &why);
	if (fd >= 0)
		return fd;
	if (errno == EISDIR)
		ls_set_error(err, LS_ERR_IO, "%s: is a directory", path);
	else if (errno == EINVAL)
		ls_set_error(err, LS_ERR_IO, "%s: not a regular file (%s)", path, why);
	else if (errno == EOPNOTSUPP || errno == EFBIG)
		ls_set_error(err, LS_ERR_IO, "%s: not read: %s", path, why);
	else
		ls_set_error(err, errno == ENOENT ? LS_ERR_NOT_FOUND : LS_ERR_IO, "%s: %s", path, why);
	return -1;
}
