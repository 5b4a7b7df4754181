/* cache.c - reads the analysis cache: an entry's head when a module
 * opens, each procedure's record when the analysis asks for it.
 *
 * Analyzing a big binary takes seconds; a lookup from the cache must take
 * milliseconds, so that `loopscope lookup`, `decode` of one frame and a
 * report of a few samples answer at once.  One file per module:
 *
 *   DIR/<build-id>.lsc           (DIR: opt.cache_dir, else
 *   DIR/<build-id>-noloops.lsc    $XDG_CACHE_HOME/loopscope, else
 *   DIR/h<content-hash>.lsc       ~/.cache/loopscope; see cache_dir.c)
 *
 * Binaries without a build-id are keyed by a 64-bit hash of their whole
 * contents.  cache_format.h lays the file out: a head (the key, a directory
 * of every procedure, the owner index, the source files looked at), one
 * record per procedure analyzed, and one per procedure whose accesses were
 * asked for (cache_accesses.c).  Opening a module reads and checks the
 * head alone (one read, one checksum); a procedure's record is read when a
 * lookup (or the whole tree) asks for it, and checked then: its checksum
 * (kept in the head), every count, offset and index.  So a lookup of one
 * address in vmlinux reads the head and one record, not the whole tree.
 *
 * A cache can only miss, never lie: every input that changes the analysis
 * is in the key.  The entry must be for this very file (its build-id, and
 * the size, mtime and inode the binary had when it was stored), made by
 * this very libloopscope (its build-id: the producer), in this format,
 * with the options that change the analysis (loops, reading sources, the
 * source path), from the same debug file (its path and identity), and
 * every source file the loop lines looked at -- read, or looked for and
 * not found -- must be as it was (present or absent, size, mtime, inode):
 * a source that appears later is a miss.  The directory is shared and its
 * files are untrusted: a file is opened only if it is a regular file, and
 * read (never mapped: a file cut short must not raise SIGBUS).  A head that
 * does not check is a miss of the whole entry; a record that does not
 * check is a miss of that procedure, analyzed again.  Under -v a note says
 * why.  Stores (cache_store.c) write a temporary file of their own and
 * rename() it into place, so concurrent writers and readers are safe; a
 * hit refreshes the file's mtime, which is what the size bound's
 * least-recently-used eviction goes by (cache_dir.c).
 */
#include "analyze.h"
#include "cache/cache_format.h"
#include "cfg/cfg.h"
#include "elf/module.h"
#include "pipeline.h"
#include "loops/source.h"
#include "structure/lookup.h"
#include "structure/scope.h"
#include "support/base.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ---- a fast 64-bit hash (xxHash64's structure: four lanes of
 * multiply-rotate, then an avalanche) --------------------------------------- */

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static inline uint64_t rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t read64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t hash_round(uint64_t acc, uint64_t in)
{
	acc += in * P2;
	acc = rotl64(acc, 31);
	return acc * P1;
}

static inline uint64_t hash_merge(uint64_t acc, uint64_t v)
{
	acc ^= hash_round(0, v);
	return acc * P1 + P4;
}

uint64_t ls_hash64(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data, *end = p + len;
	uint64_t h;
	if (len >= 32) {
		uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
		const unsigned char *limit = end - 32;
		do {
			v1 = hash_round(v1, read64(p));
			v2 = hash_round(v2, read64(p + 8));
			v3 = hash_round(v3, read64(p + 16));
			v4 = hash_round(v4, read64(p + 24));
			p += 32;
		} while (p <= limit);
		h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
		h = hash_merge(h, v1);
		h = hash_merge(h, v2);
		h = hash_merge(h, v3);
		h = hash_merge(h, v4);
	} else {
		h = seed + P5;
	}
	h += (uint64_t)len;
	/* Counted by what is left, not by p + 8 <= end: a pointer more than
	 * one past the end of the data is undefined even unread. */
	for (; end - p >= 8; p += 8)
		h = rotl64(h ^ hash_round(0, read64(p)), 27) * P1 + P4;
	if (end - p >= 4) {
		uint32_t v;
		memcpy(&v, p, 4);
		h = rotl64(h ^ ((uint64_t)v * P1), 23) * P2 + P3;
		p += 4;
	}
	for (; p < end; p++)
		h = rotl64(h ^ (*p * P5), 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}

/* ---- who made the tree -------------------------------------------------------- */

/* A tree is only as good as the analysis that built it: a cache made by
 * another build of libloopscope is a miss.  The producer is the build-id of
 * the object holding this code (libloopscope.so, or the program it is linked
 * into), so any rebuilt analysis invalidates old caches by itself; without
 * a build-id note, LS_VERSION stands in. */
struct producer_search {
	uintptr_t addr;
	uint8_t id[32];
	bool found;
};

static int find_producer(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct producer_search *ps = arg;
	bool mine = false;
	for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		mine = ph->p_type == PT_LOAD && ps->addr >= lo && ps->addr < lo + ph->p_memsz;
	}
	if (!mine)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		const unsigned char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const unsigned char *name = p + sizeof *n;
			const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);
			const unsigned char *next = desc + ((n->n_descsz + 3) & ~3u);
			if (next > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && n->n_descsz > 0) {
				memcpy(ps->id, desc, n->n_descsz < 32 ? n->n_descsz : 32);
				ps->found = true;
				return 1;
			}
			p = next;
		}
	}
	return 1;
}

void ls_cache_producer(uint8_t id[32])
{
	struct producer_search ps = { .addr = (uintptr_t)&ls_cache_producer };
	dl_iterate_phdr(find_producer, &ps);
	if (!ps.found) {
		uint64_t h = ls_hash64(LS_VERSION, strlen(LS_VERSION), 0);
		memcpy(ps.id, &h, sizeof h);
	}
	memcpy(id, ps.id, 32);
}

/* ---- where the file is ------------------------------------------------------ */

/* The content hash of the binary, for modules without a build-id.  Read,
 * not mapped: a file truncated meanwhile must not raise SIGBUS. */
static bool content_hash(const ls_module *m, uint64_t *hash)
{
	const char *why;
	struct stat st;
	int fd = ls_open_input(m->path, &st, &why);
	if (fd < 0)
		return false;
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	bool ok = buf != NULL;
	uint64_t h = ls_hash64("", 0, 0);
	for (off_t off = 0; ok;) {
		ssize_t n = pread(fd, buf, cap, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			ok = false;
		if (n <= 0)
			break;
		h = ls_hash64(buf, (size_t)n, h);
		off += n;
	}
	free(buf);
	close(fd);
	*hash = h;
	return ok;
}

static bool is_hex_id(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f') ||
		      (s[n] >= 'A' && s[n] <= 'F')))
			return false;
	return n > 0 && n <= 128;
}

/* opt.source_path as the analysis uses it: NULL when it names nothing. */
const char *ls_cache_source_path(const ls_module *m)
{
	const char *p = m->opt.source_path;
	return m->opt.read_sources && p && *p ? p : NULL;
}

/* The options and facts a tree depends on that the flags hold. */
uint32_t ls_cache_key_flags(const ls_module *m)
{
	return (m->opt.want_loops ? CACHE_HAS_LOOPS : 0) | (m->dwarf_found ? CACHE_HAS_DWARF : 0) |
	       (m->opt.read_sources ? CACHE_READ_SOURCES : 0);
}

/* Once a process: a perf loops report opens many modules. */
int ls_cache_dir_trusted(const ls_module *m, const char *dir, bool *distrusted)
{
	static atomic_bool said;
	const char *why;
	int fd = ls_cache_dir_open(dir, &why);
	if (why && !atomic_exchange(&said, true))
		ls_warn(&m->opt, "%s: the cache is off: the directory is %s", dir, why);
	*distrusted = why != NULL;
	return fd;
}

void ls_cache_key_release(struct cache_key *k)
{
	if (k && k->dirfd >= 0)
		close(k->dirfd);
	if (k)
		k->dirfd = -1;
}

/* The key's directory, checked and open (not there yet: -1, and the
 * store makes it); false if it is distrusted. */
static bool key_dir(const ls_module *m, struct cache_key *k)
{
	bool distrusted;
	if (!m->path || !ls_cache_dir_of(&m->opt, k->dir, sizeof k->dir))
		return false;
	k->dirfd = ls_cache_dir_trusted(m, k->dir, &distrusted);
	return !distrusted;
}

bool ls_cache_key(const ls_module *m, struct cache_key *k)
{
	memset(k, 0, sizeof *k);
	k->dirfd = -1;
	if (!key_dir(m, k))
		return false;
	ls_stop_point("cache dir"); /* a test swaps the directory here */
	k->flags = ls_cache_key_flags(m);
	const char *variant = m->opt.want_loops ? "" : "-noloops";
	int n;
	if (m->build_id && is_hex_id(m->build_id)) {
		n = snprintf(k->path, sizeof k->path, "%s/%s%s.lsc", k->dir, m->build_id, variant);
	} else {
		if (!content_hash(m, &k->src_hash)) {
			ls_cache_key_release(k);
			return false;
		}
		if (k->src_hash == 0)
			k->src_hash = 1; /* 0 means "keyed by build-id" */
		n = snprintf(k->path, sizeof k->path, "%s/h%016llx%s.lsc", k->dir,
			     (unsigned long long)k->src_hash, variant);
	}
	if (n <= 0 || (size_t)n >= sizeof k->path) {
		ls_cache_key_release(k);
		return false;
	}
	k->name = k->path + strlen(k->dir) + 1;
	return true;
}

/* The head's checksum, its checksum field taken as 0: no byte of the
 * head, header included, can change unnoticed (the records have their own,
 * in the head). */
uint64_t ls_cache_checksum(const void *file, size_t size)
{
	struct cache_header h;
	if (size < sizeof h)
		return ls_hash64(file, size, 0);
	memcpy(&h, file, sizeof h);
	h.checksum = 0;
	uint64_t seed = ls_hash64(&h, sizeof h, 0);
	return ls_hash64((const char *)file + sizeof h, size - sizeof h, seed);
}

bool ls_cache_read_all(int fd, void *buf, size_t size, off_t off)
{
	char *p = buf;
	while (size) {
		ssize_t n = pread(fd, p, size, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		off += n;
		size -= n;
	}
	return true;
}

/* ---- the head ---------------------------------------------------------------- */

/* [OFF, OFF + COUNT * ELEM) lies inside a head of SIZE bytes, 8-aligned,
 * after the header, without overflow. */
static bool section_ok(uint64_t off, uint64_t count, uint64_t elem, uint64_t size)
{
	if (off % 8 || off < sizeof(struct cache_header) || off > size)
		return false;
	return count <= (size - off) / elem;
}

static bool str_ok(uint32_t ref, uint64_t strtab_size)
{
	return ref == CACHE_NONE || ref < strtab_size;
}

static const char *str_at(const char *strtab, uint32_t ref)
{
	return ref == CACHE_NONE ? NULL : strtab + ref;
}

/* A slice [first, first + n) of an array of TOTAL elements. */
static bool slice_ok(uint64_t first, uint64_t n, uint64_t total)
{
	return first <= total && n <= total - first;
}

/* Why the header H of a file of SIZE bytes cannot be this module's entry
 * (K: the key it must have), or NULL; its head's bytes are checked later. */
static const char *header_problem(const struct cache_header *h, const struct cache_key *k, uint64_t size)
{
	if (memcmp(h->magic, CACHE_MAGIC, 8) != 0)
		return "not a loopscope cache file";
	if (h->version != LS_CACHE_FORMAT_VERSION)
		return "another cache format version";
	if (h->byte_order != CACHE_BYTE_ORDER || h->header_size != sizeof *h)
		return "written by another kind of machine";
	if (h->file_size != size)
		return "truncated or extended (its size is not the one it was written with)";
	uint8_t producer[32];
	ls_cache_producer(producer);
	if (memcmp(h->producer, producer, sizeof producer) != 0)
		return "made by another build of libloopscope";
	if ((h->flags & CACHE_HAS_LOOPS) != (k->flags & CACHE_HAS_LOOPS))
		return k->flags & CACHE_HAS_LOOPS ? "made without loops (want_loops 0)" : "made with loops (want_loops 1)";
	if ((h->flags & CACHE_READ_SOURCES) != (k->flags & CACHE_READ_SOURCES))
		return k->flags & CACHE_READ_SOURCES ? "made without reading the source files"
						     : "made reading the source files, which are not read now";
	if (h->flags != k->flags)
		return k->flags & CACHE_HAS_DWARF ? "made without debug information, which is there now"
						  : "made with debug information, which is not there now";
	if (h->src_hash != k->src_hash)
		return "made for a binary with other contents";
	uint64_t hs = h->head_size;
	if (hs >= sizeof *h && hs <= size && hs % 8 == 0 &&
	    section_ok(h->procs_off, h->nprocs, sizeof(struct cache_proc), hs) &&
	    section_ok(h->recs_off, h->nrecs, sizeof(struct cache_proc_recs), hs) &&
	    section_ok(h->index_off, h->nindex, sizeof(struct cache_range), hs) &&
	    section_ok(h->probes_off, h->nprobes, sizeof(struct cache_probe), hs) &&
	    section_ok(h->missing_off, h->nmissing, sizeof(uint32_t), hs) &&
	    section_ok(h->strtab_off, h->strtab_size, 1, hs) && h->strtab_size >= 1 &&
	    h->strtab_size <= CACHE_NONE && h->nprocs < CACHE_NONE && str_ok(h->debug_path_str, h->strtab_size) &&
	    str_ok(h->source_path_str, h->strtab_size) && str_ok(h->path_str, h->strtab_size) &&
	    str_ok(h->build_id_str, h->strtab_size))
		return NULL;
	return "corrupt header";
}

static bool same_file(const struct stat *st, uint64_t size, uint64_t ino, int64_t sec, int64_t nsec)
{
	return size == (uint64_t)st->st_size && ino == (uint64_t)st->st_ino && sec == (int64_t)st->st_mtim.tv_sec &&
	       nsec == (int64_t)st->st_mtim.tv_nsec;
}

/* Why the debug file and the source files the trees were made from are not
 * as they were, or NULL: the head at HEAD, its strings at STRTAB; the
 * message in BUF. */
static const char *inputs_problem(const struct cache_header *h, const char *head, const char *strtab, char *buf,
				  size_t size)
{
	struct stat st;
	const char *debug = str_at(strtab, h->debug_path_str);
	if (debug && (stat(debug, &st) < 0 ||
		      !same_file(&st, h->debug_size, h->debug_ino, h->debug_mtime_sec, h->debug_mtime_nsec))) {
		snprintf(buf, size, "its debug file %s changed since (size, mtime or inode differ)", debug);
		return buf;
	}
	const struct cache_probe *pr = (const struct cache_probe *)(head + h->probes_off);
	for (uint64_t i = 0; i < h->nprobes; i++) {
		const char *path = str_ok(pr[i].path, h->strtab_size) ? str_at(strtab, pr[i].path) : NULL;
		bool exists = path && stat(path, &st) == 0;
		const char *what = !path ? "a source file record is corrupt" :
				   exists != (pr[i].exists != 0) ? (exists ? "appeared" : "is gone") :
				   exists && ((uint32_t)st.st_mode != pr[i].mode ||
					      !same_file(&st, pr[i].size, pr[i].ino, pr[i].mtime_sec, pr[i].mtime_nsec))
					   ? "changed (size, mtime or inode differ)" : NULL;
		if (what) {
			snprintf(buf, size, "source file %s %s since it was made", path ? path : "", what);
			return buf;
		}
	}
	return NULL;
}

/* Why the entry is not for the file M analyzed, or NULL: another binary's
 * entry under this name, the binary changed since the store, another
 * source path, another debug file, or one of them or a source file
 * changed (the message in BUF). */
static const char *identity_problem(const ls_module *m, const struct cache_header *h, const char *head,
				    const char *strtab, char *buf, size_t size)
{
	const char *id = str_at(strtab, h->build_id_str);
	if ((id != NULL) != (m->build_id != NULL) || (id && strcmp(id, m->build_id) != 0))
		return "made for another binary (its build-id differs)";
	if (!same_file(&m->file_stat, h->src_size, h->src_ino, h->src_mtime_sec, h->src_mtime_nsec))
		return "the binary is not the file it was made from (size, mtime or inode differ)";
	const char *sp = str_at(strtab, h->source_path_str), *want = ls_cache_source_path(m);
	if ((sp != NULL) != (want != NULL) || (sp && strcmp(sp, want) != 0))
		return "made with another source path";
	const char *debug = str_at(strtab, h->debug_path_str);
	if ((debug != NULL) != (m->debug_path != NULL) || (debug && strcmp(debug, m->debug_path) != 0)) {
		snprintf(buf, size, "made with another debug file (%s)", debug ? debug : "none");
		return buf;
	}
	return inputs_problem(h, head, strtab, buf, size);
}

/* Whether procedure P's records' place R (all zero if it has none) says
 * what its flags do, each record inside the file and after the head. */
static bool recs_ok(const struct cache_header *h, const struct cache_proc *p, const struct cache_proc_recs *r)
{
	bool has_record = (p->flags & CACHE_PROC_ANALYZED) && !(p->flags & CACHE_PROC_EMPTY);
	if (has_record ? (r->rec_off < h->head_size || r->rec_off % 8 || r->rec_size < sizeof(struct cache_record) ||
			  r->rec_off > h->file_size || r->rec_size > h->file_size - r->rec_off)
		       : (r->rec_off != 0 || r->rec_size != 0))
		return false;
	if ((p->flags & CACHE_PROC_ACCESSES) ? (r->acc_off < h->head_size || r->acc_off % 8 ||
	                                        r->acc_size < sizeof(struct cache_acc_record) ||
	                                        r->acc_off > h->file_size || r->acc_size > h->file_size - r->acc_off)
	                                     : (r->acc_off != 0 || r->acc_size != 0))
		return false;
	/* a place only for a procedure with records, each its own, in order */
	return p->recs == CACHE_NONE || has_record || (p->flags & CACHE_PROC_ACCESSES);
}

/* Whether the directory and the owner index of head E are well formed:
 * procedures by ascending entry, their records' places taken in order,
 * once each, the records as their flags say, the index ascending and
 * non-overlapping, naming procedures there are. */
static bool directory_ok(const struct ls_cache_entry *e)
{
	const struct cache_header *h = &e->h;
	uint64_t nrecs = 0;
	for (uint64_t i = 0; i < h->nprocs; i++) {
		const struct cache_proc *p = &e->procs[i];
		if (i && p->entry <= e->procs[i - 1].entry)
			return false;
		if (p->flags & ~(uint32_t)CACHE_PROC_FLAGS)
			return false;
		if ((p->flags & CACHE_PROC_RETURNS) && (p->flags & CACHE_PROC_NEVER))
			return false;
		if (p->recs != CACHE_NONE && p->recs != nrecs++)
			return false;
		if (nrecs > h->nrecs || !recs_ok(h, p, ls_cache_recs_of(e, i)))
			return false;
	}
	if (nrecs != h->nrecs)
		return false;
	for (uint64_t i = 0; i < h->nindex; i++) {
		const struct cache_range *r = &e->index[i];
		if (r->lo >= r->hi || r->proc >= h->nprocs || (i && r->lo < e->index[i - 1].hi))
			return false;
	}
	return true;
}

void ls_cache_entry_free(struct ls_cache_entry *e)
{
	if (!e)
		return;
	if (e->fd >= 0)
		close(e->fd);
	free(e->head);
	free(e);
}

struct ls_cache_entry *ls_cache_entry_read(const ls_module *m, int fd, const char *path, struct cache_key *k,
                                           const char **why)
{
	struct ls_cache_entry *e = calloc(1, sizeof *e);
	*why = "out of memory";
	if (!e) {
		close(fd);
		return NULL;
	}
	e->fd = fd;
	snprintf(e->path, sizeof e->path, "%s", path);
	*why = "truncated (shorter than a header)";
	if (fstat(fd, &e->st) < 0 || (uint64_t)e->st.st_size < sizeof e->h ||
	    (uint64_t)e->st.st_size > SIZE_MAX / 2 || !ls_cache_read_all(fd, &e->h, sizeof e->h, 0))
		goto fail;
	if ((*why = header_problem(&e->h, k, (uint64_t)e->st.st_size)))
		goto fail;
	/* the head is bounded by the file's size (checked above) */
	e->head = malloc(e->h.head_size + 1);
	*why = "out of memory";
	if (!e->head)
		goto fail;
	*why = "truncated while being read";
	if (!ls_cache_read_all(fd, e->head, e->h.head_size, 0))
		goto fail;
	*why = "corrupt (its checksum does not match)";
	if (ls_cache_checksum(e->head, e->h.head_size) != e->h.checksum)
		goto fail;
	e->procs = (const struct cache_proc *)(e->head + e->h.procs_off);
	e->recs = (const struct cache_proc_recs *)(e->head + e->h.recs_off);
	e->index = (const struct cache_range *)(e->head + e->h.index_off);
	e->probes = (const struct cache_probe *)(e->head + e->h.probes_off);
	e->missing = (const uint32_t *)(e->head + e->h.missing_off);
	e->strtab = e->head + e->h.strtab_off;
	*why = "corrupt (its string table is not terminated)";
	if (e->strtab[e->h.strtab_size - 1] != '\0')
		goto fail;
	*why = "corrupt (a missing source's name is out of its string table)";
	for (uint64_t i = 0; i < e->h.nmissing; i++)
		if (e->missing[i] >= e->h.strtab_size)
			goto fail;
	*why = "corrupt (its directory of procedures does not check)";
	if (!directory_ok(e))
		goto fail;
	if ((*why = identity_problem(m, &e->h, e->head, e->strtab, k->why, sizeof k->why)))
		goto fail;
	*why = NULL;
	return e;
fail:
	ls_cache_entry_free(e);
	return NULL;
}

void ls_cache_open(ls_module *m)
{
	ls_cache_close(m);
	if (!m->opt.use_cache)
		return;
	ls_cache_accesses_init(m); /* kept for the store, entry or not */
	struct cache_key *k = malloc(sizeof *k);
	if (!k)
		return;
	const char *why = NULL;
	if (!ls_cache_key(m, k))
		goto out;
	const char *open_why = "no entry yet";
	int fd = -1;
	if (k->dirfd >= 0)
		fd = ls_open_input_at(k->dirfd, k->name, NULL, &open_why);
	else
		errno = ENOENT; /* no directory yet */
	if (fd < 0) {
		why = errno == ENOENT ? "no entry yet" : open_why;
		goto out;
	}
	m->cache = ls_cache_entry_read(m, fd, k->path, k, &why);
	/* A hit: the entry is recently used (the size bound evicts by mtime). */
	if (m->cache)
		(void)futimens(m->cache->fd, NULL);
out:
	if (why)
		ls_note(&m->opt, "%s: cache miss: %s: %s; analyzing it", m->path, k->path, why);
	ls_cache_key_release(k);
	free(k);
}

void ls_cache_close(ls_module *m)
{
	ls_cache_entry_free(m->cache);
	m->cache = NULL;
}

const char *ls_cache_path(const ls_module *m)
{
	return m->cache ? m->cache->path : "";
}

bool ls_cache_directory(const ls_module *m, struct ls_directory *dir, uint64_t **entries,
                        struct ls_proc_range **index)
{
	const struct ls_cache_entry *e = m->cache;
	if (!e)
		return false;
	uint64_t *en = ls_xmalloc((e->h.nprocs + 1) * sizeof *en);
	struct ls_proc_range *ix = ls_xmalloc((e->h.nindex + 1) * sizeof *ix);
	for (uint64_t i = 0; i < e->h.nprocs; i++)
		en[i] = e->procs[i].entry;
	for (uint64_t i = 0; i < e->h.nindex; i++)
		ix[i] = (struct ls_proc_range){ e->index[i].lo, e->index[i].hi, e->index[i].proc };
	*entries = en;
	*index = ix;
	*dir = (struct ls_directory){ e->h.nprocs, en, ix, e->h.nindex };
	return true;
}

size_t ls_cache_missing_sources(const ls_module *m, const char **names, size_t max)
{
	const struct ls_cache_entry *e = m->cache;
	size_t n = e ? (size_t)e->h.nmissing : 0;
	for (size_t i = 0; i < n && i < max; i++)
		names[i] = e->strtab + e->missing[i];
	return n;
}

void ls_cache_seed_facts(const ls_module *m)
{
	const struct ls_cache_entry *e = m->cache;
	for (uint64_t i = 0; e && i < e->h.nprocs && i < m->procs.nprocs; i++) {
		uint32_t f = e->procs[i].flags;
		if (f & (CACHE_PROC_RETURNS | CACHE_PROC_NEVER))
			ls_cfg_set_fact(m, i, (f & CACHE_PROC_RETURNS) ? LS_FACT_RETURNS : LS_FACT_NEVER);
	}
}

/* ---- a procedure's record --------------------------------------------------------- */

bool ls_cache_record_read(const struct ls_cache_entry *e, size_t i, void *buf)
{
	const struct cache_proc_recs *r = ls_cache_recs_of(e, i);
	return ls_cache_read_all(e->fd, buf, r->rec_size, (off_t)r->rec_off) &&
	       ls_hash64(buf, r->rec_size, 0) == r->rec_checksum;
}

bool ls_cache_acc_record_read(const struct ls_cache_entry *e, size_t i, void *buf)
{
	const struct cache_proc_recs *r = ls_cache_recs_of(e, i);
	return ls_cache_read_all(e->fd, buf, r->acc_size, (off_t)r->acc_off) &&
	       ls_hash64(buf, r->acc_size, 0) == r->acc_checksum;
}

/* The record's arrays, its counts checked against its size. */
struct record_view {
	const struct cache_record *r;
	struct record_layout l;
	const struct cache_scope *cs;
	ls_range *ranges;
	const struct cache_loop *cl;
	uint64_t *addrs;
	ls_edge *edges;
	const uint32_t *segs;
	const char *strtab;
};

static bool record_view(char *buf, size_t size, struct record_view *v)
{
	v->r = (const struct cache_record *)buf;
	v->l = cache_record_layout(v->r);
	if (v->l.size != size || v->r->nscopes < 1 || v->r->nscopes >= CACHE_NONE || v->r->nranges >= CACHE_NONE ||
	    v->r->nloops >= CACHE_NONE)
		return false;
	v->cs = (const struct cache_scope *)(buf + v->l.scopes);
	v->ranges = (ls_range *)(buf + v->l.ranges);
	v->cl = (const struct cache_loop *)(buf + v->l.loops);
	v->addrs = (uint64_t *)(buf + v->l.addrs);
	v->edges = (ls_edge *)(buf + v->l.edges);
	v->segs = (const uint32_t *)(buf + v->l.segs);
	v->strtab = buf + v->l.strtab;
	return v->r->strtab_size == 0 || v->strtab[v->r->strtab_size - 1] == '\0';
}

static bool record_loops(const struct record_view *v, struct ls_loop_info *loops)
{
	for (uint64_t i = 0; i < v->r->nloops; i++) {
		const struct cache_loop *r = &v->cl[i];
		if (!slice_ok(r->first_entry, r->nentries, v->r->naddrs) ||
		    !slice_ok(r->first_backedge, r->nbackedges, v->r->nedges) ||
		    !slice_ok(r->first_exit, r->nexits, v->r->nedges) || r->irreducible > 1 ||
		    r->made >= LS_MADE_COUNT || r->guess >= LS_GUESS_COUNT || r->part > r->nparts || (r->nparts && !r->part))
			return false;
		struct ls_loop_info *l = &loops[i];
		l->header = r->header;
		l->entries = r->nentries ? v->addrs + r->first_entry : NULL;
		l->nentries = r->nentries;
		l->backedges = r->nbackedges ? v->edges + r->first_backedge : NULL;
		l->nbackedges = r->nbackedges;
		l->exits = r->nexits ? v->edges + r->first_exit : NULL;
		l->nexits = r->nexits;
		l->depth = r->depth;
		l->irreducible = r->irreducible;
		l->made = r->made;
		l->guess = r->guess;
		l->part = r->part;
		l->nparts = r->nparts;
	}
	return true;
}

/* Scope I of the record into NODES[I], linked under its parent; DEPTH
 * keeps every scope's depth (the writers and lookups recurse: a forged
 * record must not make them overflow the stack). */
static bool record_scope(const struct record_view *v, uint32_t i, struct ls_scope *nodes, struct ls_loop_info *loops,
                         uint32_t *depth, uint32_t *owner)
{
	const struct cache_scope *r = &v->cs[i];
	struct ls_scope *s = &nodes[i];
	uint32_t ns = v->r->strtab_size;
	if (r->kind > LS_SCOPE_STMT || r->kind == LS_SCOPE_MODULE || r->kind == LS_SCOPE_FILE)
		return false;
	if (i == 0 ? (r->parent != CACHE_NONE || r->kind != LS_SCOPE_PROC) : (r->parent >= i || r->kind == LS_SCOPE_PROC))
		return false;
	if (!str_ok(r->name, ns) || !str_ok(r->linkage_name, ns) || !str_ok(r->file, ns) || !str_ok(r->call_file, ns) ||
	    (ns == 0 && (r->name != CACHE_NONE || r->linkage_name != CACHE_NONE || r->file != CACHE_NONE ||
	                 r->call_file != CACHE_NONE)))
		return false;
	if (!slice_ok(r->first_range, r->nranges, v->r->nranges))
		return false;
	if (r->loop != CACHE_NONE && (r->loop >= v->r->nloops || r->kind != LS_SCOPE_LOOP))
		return false;
	memset(s, 0, sizeof *s);
	s->kind = (ls_scope_kind)r->kind;
	s->name = str_at(v->strtab, r->name);
	s->linkage_name = str_at(v->strtab, r->linkage_name);
	s->file = str_at(v->strtab, r->file);
	s->call_file = str_at(v->strtab, r->call_file);
	s->line = r->line;
	s->call_line = r->call_line;
	s->call_column = r->call_column;
	s->unresolved_jumps = r->unresolved_jumps;
	if (s->kind == LS_SCOPE_STMT)
		s->cut = r->aux;
	else if (s->kind == LS_SCOPE_PROC && r->unresolved_jumps && r->nranges)
		s->first_unresolved = v->ranges[r->first_range].lo + r->aux;
	s->ranges = r->nranges ? v->ranges + r->first_range : NULL;
	s->nranges = s->cap_ranges = r->nranges;
	for (uint64_t k = 0; k < r->nranges; k++)
		owner[r->first_range + k] = i;
	s->loop = r->loop == CACHE_NONE ? NULL : &loops[r->loop];
	if (i == 0) {
		depth[0] = 0;
		return true;
	}
	depth[i] = depth[r->parent] + 1;
	if (depth[i] > CACHE_MAX_DEPTH)
		return false;
	ls_scope_add_child(&nodes[r->parent], s);
	return true;
}

/* The lookup index of the record's procedure from the stored order of its
 * statement ranges (OWNER: each range's scope): lookup.c's without the
 * collecting and sorting; the same clipping keeps it sorted and without
 * overlaps whatever the file says, so a forged order cannot break the
 * binary search.  False if an index names no statement's range. */
static bool record_segs(const struct record_view *v, const struct ls_scope *nodes, const uint32_t *owner,
                        struct ls_stmt_seg *segs, size_t *nsegs)
{
	size_t n = 0;
	for (uint32_t i = 0; i < v->r->nsegs; i++) {
		uint32_t r = v->segs[i];
		if (r >= v->r->nranges || owner[r] == CACHE_NONE || nodes[owner[r]].kind != LS_SCOPE_STMT)
			return false;
		struct ls_stmt_seg seg = { v->ranges[r].lo, v->ranges[r].hi, &nodes[owner[r]] };
		if (n && seg.lo < segs[n - 1].hi)
			seg.lo = segs[n - 1].hi;
		if (seg.lo < seg.hi)
			segs[n++] = seg;
	}
	*nsegs = n;
	return true;
}

/* The record in BUF (SIZE bytes, in arena A, where the nodes go too) as
 * procedure ENTRY's scope tree and lookup index; false if it does not
 * check. */
static bool record_parse(char *buf, size_t size, uint64_t entry, struct ls_arena *a, struct ls_proc_done *out)
{
	struct record_view v;
	if (!record_view(buf, size, &v) || v.r->entry != entry)
		return false;
	struct ls_scope *nodes = ls_arena_alloc(a, (size_t)v.r->nscopes * sizeof *nodes);
	struct ls_loop_info *loops = ls_arena_alloc(a, ((size_t)v.r->nloops + 1) * sizeof *loops);
	struct ls_stmt_seg *segs = ls_arena_alloc(a, ((size_t)v.r->nsegs + 1) * sizeof *segs);
	uint32_t *depth = ls_xmalloc((size_t)v.r->nscopes * sizeof *depth);
	uint32_t *owner = ls_xmalloc(((size_t)v.r->nranges + 1) * sizeof *owner);
	memset(owner, 0xff, ((size_t)v.r->nranges + 1) * sizeof *owner); /* CACHE_NONE */
	bool ok = record_loops(&v, loops);
	for (uint32_t i = 0; ok && i < v.r->nscopes; i++)
		ok = record_scope(&v, i, nodes, loops, depth, owner);
	size_t nsegs = 0;
	ok = ok && record_segs(&v, nodes, owner, segs, &nsegs);
	free(depth);
	free(owner);
	if (!ok)
		return false;
	*out = (struct ls_proc_done){ .scope = nodes[0].first_child ? &nodes[0] : NULL, .segs = segs, .nsegs = nsegs };
	return true;
}

/* What the analysis warned of, said again when procedure PROC is read
 * from the cache: its unresolved jumps, and the inlined calls cut above
 * its statements (the deepest cut, as the analysis says it). */
static void warn_marks(const ls_module *m, const struct ls_scope *proc)
{
	unsigned cut = 0;
	for (const struct ls_scope *s = proc->first_child; s;) { /* the scopes below PROC, pre-order */
		if (s->kind == LS_SCOPE_STMT && s->cut > cut)
			cut = s->cut;
		if (s->first_child) {
			s = s->first_child;
			continue;
		}
		while (s->parent != proc && !s->next_sibling)
			s = s->parent;
		s = s->next_sibling;
	}
	if (proc->unresolved_jumps || cut)
		ls_warn_proc_marks(&m->opt, m->path, proc, true, cut);
}

int ls_cache_load_proc(ls_module *m, size_t i, struct ls_arena *a, struct ls_proc_done *out)
{
	const struct ls_cache_entry *e = m->cache;
	if (!e || i >= e->h.nprocs || !(e->procs[i].flags & CACHE_PROC_ANALYZED))
		return 0;
	const struct cache_proc *p = &e->procs[i];
	memset(out, 0, sizeof *out);
	if (p->flags & CACHE_PROC_EMPTY)
		return 1;
	/* 8-aligned in the arena: the arrays are read in place */
	uint32_t size = ls_cache_recs_of(e, i)->rec_size;
	char *buf = ls_arena_alloc(a, size);
	const char *why = "cannot be read, or its checksum does not match";
	if (ls_cache_record_read(e, i, buf)) {
		why = "does not check";
		if (record_parse(buf, size, p->entry, a, out)) {
			if (out->scope)
				warn_marks(m, out->scope);
			return 1;
		}
	}
	ls_note(&m->opt, "%s: cache miss: %s: the record of the procedure at 0x%llx %s; analyzing it", m->path,
	        e->path, (unsigned long long)p->entry, why);
	return 0;
}

/* ---- forging an entry (tests and the fuzz target) ------------------------------ */

/* Makes the cache file FILE of SIZE bytes pass what only an honest writer
 * could get right - magic, version, producer, flags, size, the identity of
 * the binary M stands for (M is made to match the file), the checksums of
 * the records its directory names and of the head - so that the directory
 * and record checks are what a test or a fuzzer exercises.  Returns 0, or
 * -1 if FILE is too short to carry a header. */
int ls_cache_forge(void *file, size_t size, ls_module *m)
{
	struct cache_header h;
	if (size < sizeof h)
		return -1;
	memcpy(&h, file, sizeof h);
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.version = LS_CACHE_FORMAT_VERSION;
	h.byte_order = CACHE_BYTE_ORDER;
	h.header_size = sizeof h;
	h.file_size = size;
	ls_cache_producer(h.producer);
	h.flags = ls_cache_key_flags(m);
	h.src_hash = 0;
	if (h.head_size < sizeof h || h.head_size > size)
		h.head_size = size & ~(uint64_t)7;
	/* no other input: the debug file's, the source path's and the source
	 * files' checks would miss before the records are read */
	h.debug_path_str = h.source_path_str = CACHE_NONE;
	h.nprobes = 0;
	free(m->debug_path);
	m->debug_path = NULL;
	m->opt.source_path = NULL;
	m->file_stat.st_size = (off_t)h.src_size;
	m->file_stat.st_ino = (ino_t)h.src_ino;
	m->file_stat.st_mtim.tv_sec = (time_t)h.src_mtime_sec;
	m->file_stat.st_mtim.tv_nsec = (long)h.src_mtime_nsec;
	/* The module's build-id: the file's, if it names a hex one. */
	free(m->build_id);
	m->build_id = NULL;
	if (h.build_id_str != CACHE_NONE && h.strtab_off < h.head_size && h.strtab_size <= h.head_size - h.strtab_off &&
	    h.build_id_str < h.strtab_size) {
		const char *id = (const char *)file + h.strtab_off + h.build_id_str;
		size_t n = strnlen(id, h.strtab_size - h.build_id_str);
		if (n < h.strtab_size - h.build_id_str)
			m->build_id = ls_xstrdup(id);
	}
	if (!m->build_id || !is_hex_id(m->build_id)) {
		free(m->build_id);
		m->build_id = ls_xstrdup("00ff");
		h.build_id_str = CACHE_NONE; /* fails the identity check: a miss */
	}
	/* The records' checksums, where the directory's fields make sense. */
	if (h.recs_off % 8 == 0 && h.recs_off >= sizeof h && h.recs_off <= h.head_size &&
	    h.nrecs <= (h.head_size - h.recs_off) / sizeof(struct cache_proc_recs)) {
		struct cache_proc_recs *p = (struct cache_proc_recs *)((char *)file + h.recs_off);
		for (uint64_t i = 0; i < h.nrecs; i++) {
			if (p[i].rec_off <= size && p[i].rec_size <= size - p[i].rec_off)
				p[i].rec_checksum = ls_hash64((char *)file + p[i].rec_off, p[i].rec_size, 0);
			if (p[i].acc_off <= size && p[i].acc_size <= size - p[i].acc_off)
				p[i].acc_checksum = ls_hash64((char *)file + p[i].acc_off, p[i].acc_size, 0);
		}
	}
	h.checksum = 0;
	memcpy(file, &h, sizeof h);
	h.checksum = ls_cache_checksum(file, h.head_size);
	memcpy(file, &h, sizeof h);
	return 0;
}

/* ---- what an entry says of itself (for `loopscope cache --list`) ------------ */

void ls_cache_read_meta(const char *file, bool full_check, struct ls_cache_meta *meta)
{
	memset(meta, 0, sizeof *meta);
	struct stat st;
	const char *why;
	int fd = ls_open_input(file, &st, &why);
	if (fd < 0) {
		meta->problem = why;
		return;
	}
	struct cache_header h;
	char *buf = NULL;
	meta->problem = "truncated (shorter than a header)";
	if ((uint64_t)st.st_size < sizeof h || (uint64_t)st.st_size > SIZE_MAX / 2 ||
	    !ls_cache_read_all(fd, &h, sizeof h, 0))
		goto out;
	struct cache_key k = { .flags = h.flags, .src_hash = h.src_hash };
	if ((meta->problem = header_problem(&h, &k, (uint64_t)st.st_size)))
		goto out;
	meta->loops = h.flags & CACHE_HAS_LOOPS;
	/* The strings are at the head's end; the checksum needs all of it. */
	size_t from = full_check ? 0 : h.strtab_off, len = (size_t)h.head_size - from;
	buf = malloc(len + 1);
	meta->problem = "out of memory";
	if (!buf)
		goto out;
	meta->problem = "truncated while being read";
	if (!ls_cache_read_all(fd, buf, len, from))
		goto out;
	buf[len] = 0;
	meta->problem = "corrupt (its checksum does not match)";
	if (full_check && ls_cache_checksum(buf, len) != h.checksum)
		goto out;
	const char *strtab = buf + (h.strtab_off - from);
	meta->problem = "corrupt (its string table is not terminated)";
	if (strtab[h.strtab_size - 1] != 0)
		goto out;
	const char *bin = str_at(strtab, h.path_str), *id = str_at(strtab, h.build_id_str);
	snprintf(meta->binary, sizeof meta->binary, "%s", bin ? bin : "");
	snprintf(meta->build_id, sizeof meta->build_id, "%s", id ? id : "");
	meta->problem = NULL;
	if (!full_check)
		goto out;
	/* Would it serve its binary as it is now? */
	struct stat bs;
	if (!bin || stat(bin, &bs) < 0)
		meta->problem = "its binary is gone";
	else if (!same_file(&bs, h.src_size, h.src_ino, h.src_mtime_sec, h.src_mtime_nsec))
		meta->problem = "its binary changed since";
	else /* its debug file or a source file changed (the options are the caller's) */
		meta->problem = inputs_problem(&h, buf, strtab, meta->why, sizeof meta->why);
out:
	free(buf);
	close(fd);
}
