/* file.c - opening the files loopscope reads: regular files only.
 *
 * A plain open() of a FIFO blocks until some writer appears, and one of a
 * device may have side effects: a FIFO given as BINARY, planted where the
 * cache or a separate debug file goes, or named by a perf.data, would hang
 * the run for ever.  So every input is opened with O_NONBLOCK (which makes
 * open() itself return at once for FIFOs), checked with fstat() to be a
 * regular file before a byte is read, and only then switched back to
 * blocking reads.
 *
 * The one place that does so: the stages call ls_open_input (a reason as a
 * string, the fstat), the front ends ls_open_regular (loopscope.h: an
 * ls_error naming the file).
 */
#include "support/base.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
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
	if (S_ISREG(mode))
		return "a regular file";
	return "not a regular file";
}

int ls_open_input(const char *path, struct stat *st, const char **why)
{
	struct stat local;
	if (!st)
		st = &local;
	*why = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (fstat(fd, st) < 0) {
		*why = strerror(errno);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		*why = ls_file_type_name(st->st_mode);
		close(fd);
		errno = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
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
	if (!path || flags) {
		ls_set_error(err, LS_ERR_USAGE, "%s: ls_open_regular: %s", path ? path : "(null)",
			     path ? "unknown flags" : "no file name");
		return -1;
	}
	const char *why;
	int fd = ls_open_input(path, NULL, &why);
	if (fd >= 0)
		return fd;
	if (errno == EISDIR)
		ls_set_error(err, LS_ERR_IO, "%s: is a directory", path);
	else if (errno == EINVAL)
		ls_set_error(err, LS_ERR_IO, "%s: not a regular file (%s)", path, why);
	else
		ls_set_error(err, errno == ENOENT ? LS_ERR_NOT_FOUND : LS_ERR_IO, "%s: %s", path, why);
	return -1;
}
