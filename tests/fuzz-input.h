/* fuzz-input.h - the fuzz targets that hand their input to the core as a
 * file (the core reads binaries through libdwfl, by path) write it here.
 */
#ifndef LOOPSCOPE_FUZZ_INPUT_H
#define LOOPSCOPE_FUZZ_INPUT_H

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* DATA written whole to a new file made from the template PATH (which
 * mkstemp fills in): 0, or -1 when no file could be made.  A short write
 * leaves the file short, which is input like any other. */
static inline int fuzz_write_input(const uint8_t *data, size_t size, char *path)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	size_t off = 0;
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(fd);
	return 0;
}

#endif
