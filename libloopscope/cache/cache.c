/* cache.c - saves and loads the scope tree, keyed by build-id.
 *
 * Analyzing a big binary takes seconds; loading its tree back must take
 * milliseconds, so that the second `loopscope lookup` and GDB's `structure`
 * answer at once.  One file per module:
 *
 *   DIR/<build-id>.lsc           (DIR: opt.cache_dir, else
 *   DIR/<build-id>-noloops.lsc    $XDG_CACHE_HOME/loopscope, else
 *   DIR/h<content-hash>.lsc       ~/.cache/loopscope; see cache_dir.c)
 *
 * Binaries without a build-id are keyed by a 64-bit hash of their whole
 * contents.  The file is a header followed by flat arrays: scopes in
 * pre-order (each names its parent by index), their ranges, loop records,
 * loop entry addresses, loop edges, the lookup index and a string table.
 * Loading reads the file into one buffer (m->cache_blob, freed by the
 * module with free()): ranges, edges and strings point into it, and the
 * ls_scope nodes are laid out in the same buffer after the file's bytes, so
 * a load is one read, one checksum and one pass over the records.  The
 * lookup index is stored as the order of the statement ranges by address
 * (indices into the ranges), so that a load makes it in a linear pass
 * instead of collecting and sorting every range again (a third of the
 * load's time on libc).
 *
 * A cache can only miss, never lie: every input that changes the tree is
 * in the key.  The entry must be for this very file (its build-id, and the
 * size, mtime and inode the binary had when it was stored), made by this
 * very libloopscope (its build-id: cache/producer), in this format, with
 * the options that change the analysis (loops, reading sources, the
 * source path), from the same debug file (its path and identity), and
 * every source file the loop lines looked at -- read, or looked for and
 * not found -- must be as it was (present or absent, size, mtime, inode):
 * a source that appears later is a miss.  The directory is shared and its
 * files are untrusted: a file is opened only if it is a regular file; the
 * checksum covers all of its bytes; every count, offset and index is
 * checked.  Anything else is a miss, with a note saying why under -v.  Stores write a temporary file of their own (0600, in a 0700
 * directory) and rename() it into place, so concurrent writers and readers
 * are safe; a hit refreshes the file's mtime, which is what the size
 * bound's least-recently-used eviction goes by (cache_dir.c).
 */
#include "cache/cache.h"
#include "elf/module.h"
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define CACHE_MAGIC "LSCACHE\n"
#define CACHE_BYTE_ORDER 0x01020304u
#define CACHE_NONE UINT32_MAX
#define CACHE_MAX_DEPTH 4096 /* deeper trees are refused: walkers recurse */

enum {
	CACHE_HAS_LOOPS = 1,    /* built with opt.want_loops */
	CACHE_HAS_DWARF = 2,    /* built with debug information */
	CACHE_READ_SOURCES = 4, /* built with opt.read_sources */
};

struct cache_header {
	char magic[8];
	uint32_t version;       /* LS_CACHE_FORMAT_VERSION */
	uint32_t byte_order;    /* CACHE_BYTE_ORDER as written by the storing host */
	uint32_t flags;         /* CACHE_HAS_* */
	uint32_t header_size;   /* sizeof(struct cache_header) */
	uint64_t file_size;     /* of this cache file */
	uint64_t checksum;      /* ls_cache_checksum: all bytes, this field as 0 */
	/* The binary when it was stored: a file that differs is a miss. */
	uint64_t src_size;
	int64_t src_mtime_sec, src_mtime_nsec;
	uint64_t src_ino;
	uint64_t src_hash;      /* content hash; 0 when keyed by build-id */
	uint8_t producer[32];   /* identity of the libloopscope that built the tree */
	uint32_t path_str;      /* the binary's path when stored (string offset) */
	uint32_t build_id_str;  /* its build-id in hex, or CACHE_NONE */
	uint64_t nscopes, scopes_off;
	uint64_t nranges, ranges_off;
	uint64_t nloops, loops_off;
	uint64_t naddrs, addrs_off;   /* loop entries */
	uint64_t nedges, edges_off;   /* loop back edges and exits */
	uint64_t nsegs, segs_off;     /* the lookup index: uint32 range indices, by address */
	uint64_t strtab_size, strtab_off;
	/* The other inputs: the debug file (its path when found, and what it
	 * was then), the source path option, the source files looked at. */
	uint32_t debug_path_str, source_path_str; /* string offsets or CACHE_NONE */
	uint64_t debug_size, debug_ino;
	int64_t debug_mtime_sec, debug_mtime_nsec;
	uint64_t nprobes, probes_off;
};

/* A source file the loop lines looked at, as it was. */
struct cache_probe {
	uint32_t path;          /* string offset */
	uint32_t exists;
	uint32_t mode, pad;
	uint64_t size, ino;
	int64_t mtime_sec, mtime_nsec;
};

struct cache_scope {
	uint32_t kind;
	uint32_t parent;        /* index of an earlier scope; CACHE_NONE for the root */
	uint32_t name, linkage_name, file, call_file; /* string offsets or CACHE_NONE */
	uint32_t line, call_line, call_column;
	uint32_t loop;          /* index into the loops, or CACHE_NONE */
	uint32_t unresolved_jumps; /* proc */
	uint32_t aux;           /* proc: its first unresolved jump's offset from its lowest address;
	                         * stmt: the inlined calls cut above it (ls_scope.cut) */
	uint64_t first_range;
	uint64_t nranges;
};

struct cache_loop {
	uint64_t header;
	uint64_t first_entry, nentries;
	uint64_t first_backedge, nbackedges;
	uint64_t first_exit, nexits;
	uint32_t depth, irreducible;
	uint8_t made, guess;      /* enum ls_loop_made, enum ls_loop_guess (format 9) */
	uint16_t part, nparts;
	uint32_t pad;
};

_Static_assert(sizeof(ls_range) == 16, "ls_range is stored raw");
_Static_assert(sizeof(ls_edge) == 16, "ls_edge is stored raw");
_Static_assert(sizeof(struct cache_header) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_scope) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_loop) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_probe) % 8 == 0, "sections are 8-aligned");

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

static void producer_id(uint8_t id[32])
{
	struct producer_search ps = { .addr = (uintptr_t)&producer_id };
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

/* What identifies the module's cache file, and its path. */
struct cache_key {
	char dir[PATH_MAX];
	char path[PATH_MAX];
	uint64_t src_hash;  /* 0 when keyed by build-id */
	uint32_t flags;
	char why[PATH_MAX + 128]; /* a miss's reason that names a file */
};

/* opt.source_path as the analysis uses it: NULL when it names nothing. */
static const char *source_path(const ls_module *m)
{
	const char *p = m->opt.source_path;
	return m->opt.read_sources && p && *p ? p : NULL;
}

/* The options and facts a tree depends on that the flags hold. */
static uint32_t key_flags(const ls_module *m)
{
	return (m->opt.want_loops ? CACHE_HAS_LOOPS : 0) | (m->dwarf_found ? CACHE_HAS_DWARF : 0) |
	       (m->opt.read_sources ? CACHE_READ_SOURCES : 0);
}

/* Whether K->dir may be used (cache_dir.c); if not, says why once a
 * process (a perf loops report opens many modules) and the cache is off. */
static bool dir_trusted(const ls_module *m, const char *dir)
{
	static atomic_bool said;
	const char *why = ls_cache_dir_distrust(dir);
	if (why && !atomic_exchange(&said, true))
		ls_warn(&m->opt, "%s: the cache is off: the directory is %s", dir, why);
	return !why;
}

static bool cache_key(const ls_module *m, struct cache_key *k)
{
	memset(k, 0, sizeof *k);
	if (!m->path || !ls_cache_dir_of(&m->opt, k->dir, sizeof k->dir) || !dir_trusted(m, k->dir))
		return false;
	k->flags = key_flags(m);
	const char *variant = m->opt.want_loops ? "" : "-noloops";
	int n;
	if (m->build_id && is_hex_id(m->build_id)) {
		n = snprintf(k->path, sizeof k->path, "%s/%s%s.lsc", k->dir, m->build_id, variant);
	} else {
		if (!content_hash(m, &k->src_hash))
			return false;
		if (k->src_hash == 0)
			k->src_hash = 1; /* 0 means "keyed by build-id" */
		n = snprintf(k->path, sizeof k->path, "%s/h%016llx%s.lsc", k->dir,
			     (unsigned long long)k->src_hash, variant);
	}
	return n > 0 && (size_t)n < sizeof k->path;
}

/* The whole file's checksum, its checksum field taken as 0: no byte of
 * a cache file, header included, can change unnoticed. */
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

/* ---- load -------------------------------------------------------------------- */

/* [OFF, OFF + COUNT * ELEM) lies inside a file of SIZE bytes, 8-aligned,
 * after the header, without overflow. */
static bool section_ok(uint64_t off, uint64_t count, uint64_t elem, uint64_t size)
{
	if (off % 8 || off < sizeof(struct cache_header) || off > size)
		return false;
	if (count > (size - off) / elem)
		return false;
	return true;
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
 * (its own bytes are checked later), or NULL. */
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
	producer_id(producer);
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
	if (section_ok(h->scopes_off, h->nscopes, sizeof(struct cache_scope), size) &&
	    section_ok(h->ranges_off, h->nranges, sizeof(ls_range), size) &&
	    section_ok(h->loops_off, h->nloops, sizeof(struct cache_loop), size) &&
	    section_ok(h->addrs_off, h->naddrs, sizeof(uint64_t), size) &&
	    section_ok(h->edges_off, h->nedges, sizeof(ls_edge), size) &&
	    section_ok(h->segs_off, h->nsegs, sizeof(uint32_t), size) &&
	    section_ok(h->probes_off, h->nprobes, sizeof(struct cache_probe), size) &&
	    section_ok(h->strtab_off, h->strtab_size, 1, size) &&
	    str_ok(h->debug_path_str, h->strtab_size) && str_ok(h->source_path_str, h->strtab_size) &&
	    h->nscopes >= 1 && h->nscopes < CACHE_NONE && h->nloops < CACHE_NONE &&
	    h->strtab_size >= 1 && h->strtab_size <= CACHE_NONE &&
	    str_ok(h->path_str, h->strtab_size) && str_ok(h->build_id_str, h->strtab_size))
		return NULL;
	return "corrupt header";
}

static bool same_file(const struct stat *st, uint64_t size, uint64_t ino, int64_t sec, int64_t nsec)
{
	return size == (uint64_t)st->st_size && ino == (uint64_t)st->st_ino && sec == (int64_t)st->st_mtim.tv_sec &&
	       nsec == (int64_t)st->st_mtim.tv_nsec;
}

/* Why the debug file and the source files the tree was made from are not
 * as they were, or NULL: the entry's records at BLOB (the whole file),
 * its strings at STRTAB; the message in BUF. */
static const char *inputs_problem(const struct cache_header *h, const char *blob, const char *strtab, char *buf,
				  size_t size)
{
	struct stat st;
	const char *debug = str_at(strtab, h->debug_path_str);
	if (debug && (stat(debug, &st) < 0 ||
		      !same_file(&st, h->debug_size, h->debug_ino, h->debug_mtime_sec, h->debug_mtime_nsec))) {
		snprintf(buf, size, "its debug file %s changed since (size, mtime or inode differ)", debug);
		return buf;
	}
	const struct cache_probe *pr = (const struct cache_probe *)(blob + h->probes_off);
	for (uint64_t i = 0; i < h->nprobes; i++) {
		const char *path = str_at(strtab, pr[i].path);
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
static const char *identity_problem(const ls_module *m, const struct cache_header *h, const char *blob,
				    const char *strtab, char *buf, size_t size)
{
	const char *id = str_at(strtab, h->build_id_str);
	if ((id != NULL) != (m->build_id != NULL) || (id && strcmp(id, m->build_id) != 0))
		return "made for another binary (its build-id differs)";
	if (!same_file(&m->file_stat, h->src_size, h->src_ino, h->src_mtime_sec, h->src_mtime_nsec))
		return "the binary is not the file it was made from (size, mtime or inode differ)";
	const char *sp = str_at(strtab, h->source_path_str), *want = source_path(m);
	if ((sp != NULL) != (want != NULL) || (sp && strcmp(sp, want) != 0))
		return "made with another source path";
	const char *debug = str_at(strtab, h->debug_path_str);
	if ((debug != NULL) != (m->debug_path != NULL) || (debug && strcmp(debug, m->debug_path) != 0)) {
		snprintf(buf, size, "made with another debug file (%s)", debug ? debug : "none");
		return buf;
	}
	return inputs_problem(h, blob, strtab, buf, size);
}

/* A big tree (libc's: 10 MB of file, 15 MB of nodes) is mostly page-fault
 * time when its fresh buffer is first touched: ask for transparent huge
 * pages on the 2 MiB-aligned part of it, where the kernel allows them. */
static void advise_huge(void *p, size_t size)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = 2u << 20;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t hi = ((uintptr_t)p + size) & ~(huge - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)p, (void)size;
#endif
}

static bool read_all(int fd, void *buf, size_t size, off_t off)
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

/* The lookup index from the stored order of the statement ranges: OWNER
 * names each range's scope.  The index lookup.c would build from the tree,
 * without its collecting and sorting; the same clipping keeps it sorted and
 * without overlaps whatever the file says, so a forged order cannot break
 * the binary search.  False if an index names no statement's range. */
static bool load_index(struct ls_lookup_index *ix, const struct cache_header *h, const uint32_t *order,
		       const ls_range *ranges, const uint32_t *owner, const struct ls_scope *nodes)
{
	ix->segs = malloc((h->nsegs + 1) * sizeof *ix->segs);
	ix->nsegs = 0;
	if (!ix->segs)
		return false;
	size_t n = 0;
	for (uint64_t i = 0; i < h->nsegs; i++) {
		uint32_t r = order[i];
		if (r >= h->nranges || owner[r] == CACHE_NONE || nodes[owner[r]].kind != LS_SCOPE_STMT) {
			ls_lookup_index_free(ix);
			return false;
		}
		struct ls_stmt_seg seg = { ranges[r].lo, ranges[r].hi, &nodes[owner[r]] };
		if (n && seg.lo < ix->segs[n - 1].hi)
			seg.lo = ix->segs[n - 1].hi;
		if (seg.lo < seg.hi)
			ix->segs[n++] = seg;
	}
	ix->nsegs = n;
	return true;
}

/* Check every record of the file in BLOB and build the tree in NODES and
 * LOOPS, and the lookup index in IX.  Returns false, with nothing of the
 * module touched, if any check fails. */
static bool build_tree(const ls_module *m, char *blob, const struct cache_header *h,
		       struct ls_scope *nodes, struct ls_loop_info *loops, struct ls_lookup_index *ix)
{
	const struct cache_scope *cs = (const struct cache_scope *)(blob + h->scopes_off);
	const struct cache_loop *cl = (const struct cache_loop *)(blob + h->loops_off);
	ls_range *ranges = (ls_range *)(blob + h->ranges_off);
	uint64_t *addrs = (uint64_t *)(blob + h->addrs_off);
	ls_edge *edges = (ls_edge *)(blob + h->edges_off);
	const char *strtab = blob + h->strtab_off;
	const char *stored_path = str_at(strtab, h->path_str);

	if (strtab[h->strtab_size - 1] != '\0')
		return false;

	for (uint64_t i = 0; i < h->nloops; i++) {
		const struct cache_loop *r = &cl[i];
		if (!slice_ok(r->first_entry, r->nentries, h->naddrs) ||
		    !slice_ok(r->first_backedge, r->nbackedges, h->nedges) ||
		    !slice_ok(r->first_exit, r->nexits, h->nedges) || r->irreducible > 1 || r->made >= LS_MADE_COUNT ||
		    r->guess >= LS_GUESS_COUNT || r->part > r->nparts || (r->nparts && !r->part))
			return false;
		struct ls_loop_info *l = &loops[i];
		l->header = r->header;
		l->entries = r->nentries ? addrs + r->first_entry : NULL;
		l->nentries = r->nentries;
		l->backedges = r->nbackedges ? edges + r->first_backedge : NULL;
		l->nbackedges = r->nbackedges;
		l->exits = r->nexits ? edges + r->first_exit : NULL;
		l->nexits = r->nexits;
		l->depth = r->depth;
		l->irreducible = r->irreducible;
		l->made = r->made;
		l->guess = r->guess;
		l->part = r->part;
		l->nparts = r->nparts;
	}

	/* Depths are checked because the writers and lookups walk the tree
	 * recursively; a forged file must not make them overflow the stack. */
	uint32_t *depth = malloc(h->nscopes * sizeof *depth);
	uint32_t *owner = malloc((h->nranges + 1) * sizeof *owner); /* range -> its scope */
	bool ok = false;
	if (!depth || !owner)
		goto out;
	memset(owner, 0xff, (h->nranges + 1) * sizeof *owner); /* CACHE_NONE */
	for (uint64_t i = 0; i < h->nscopes; i++) {
		const struct cache_scope *r = &cs[i];
		struct ls_scope *s = &nodes[i];
		if (r->kind > LS_SCOPE_STMT)
			goto out;
		if (i == 0 ? (r->parent != CACHE_NONE || r->kind != LS_SCOPE_MODULE)
			   : (r->parent >= i || r->kind == LS_SCOPE_MODULE))
			goto out;
		if (!str_ok(r->name, h->strtab_size) || !str_ok(r->linkage_name, h->strtab_size) ||
		    !str_ok(r->file, h->strtab_size) || !str_ok(r->call_file, h->strtab_size))
			goto out;
		if (!slice_ok(r->first_range, r->nranges, h->nranges))
			goto out;
		if (r->loop != CACHE_NONE && (r->loop >= h->nloops || r->kind != LS_SCOPE_LOOP))
			goto out;

		memset(s, 0, sizeof *s);
		s->kind = (ls_scope_kind)r->kind;
		s->name = str_at(strtab, r->name);
		s->linkage_name = str_at(strtab, r->linkage_name);
		s->file = str_at(strtab, r->file);
		s->call_file = str_at(strtab, r->call_file);
		s->line = r->line;
		s->call_line = r->call_line;
		s->call_column = r->call_column;
		s->unresolved_jumps = r->unresolved_jumps;
		if (s->kind == LS_SCOPE_STMT)
			s->cut = r->aux;
		else if (s->kind == LS_SCOPE_PROC && r->unresolved_jumps && r->nranges)
			s->first_unresolved = ranges[r->first_range].lo + r->aux;
		s->ranges = r->nranges ? ranges + r->first_range : NULL;
		s->nranges = s->cap_ranges = r->nranges;
		for (uint64_t k = 0; k < r->nranges; k++)
			owner[r->first_range + k] = (uint32_t)i;
		s->loop = r->loop == CACHE_NONE ? NULL : &loops[r->loop];
		if (i == 0) {
			depth[i] = 0;
			/* The same binary may sit at another path now. */
			if (s->name && stored_path && strcmp(s->name, stored_path) == 0)
				s->name = m->path;
			continue;
		}
		depth[i] = depth[r->parent] + 1;
		if (depth[i] > CACHE_MAX_DEPTH)
			goto out;
		struct ls_scope *parent = &nodes[r->parent];
		s->parent = parent;
		if (parent->last_child)
			parent->last_child->next_sibling = s;
		else
			parent->first_child = s;
		parent->last_child = s;
	}
	ok = load_index(ix, h, (const uint32_t *)(blob + h->segs_off), ranges, owner, nodes);
out:
	free(depth);
	free(owner);
	return ok;
}

/* Reads the entry at K->path into a fresh blob (file bytes, then room for
 * NODES nodes and LOOPS loop records); NULL with *WHY on any problem. */
static char *read_entry(const ls_module *m, struct cache_key *k, struct cache_header *h,
			size_t *blob_size, const char **why)
{
	struct stat st;
	const char *open_why;
	int fd = ls_open_input(k->path, &st, &open_why);
	if (fd < 0) {
		*why = errno == ENOENT ? "no entry yet" : open_why;
		return NULL;
	}
	char *blob = NULL;
	*why = "truncated (shorter than a header)";
	if ((uint64_t)st.st_size < sizeof *h || (uint64_t)st.st_size > SIZE_MAX / 2 ||
	    !read_all(fd, h, sizeof *h, 0))
		goto out;
	uint64_t size = st.st_size;
	if ((*why = header_problem(h, k, size)))
		goto out;
	/* One buffer: the file's bytes, then the nodes and loop records.  The
	 * counts are bounded by the file size (checked above), so a forged
	 * header cannot ask for a huge allocation. */
	size_t file_part = (size + 15) & ~(size_t)15;
	*blob_size = file_part + h->nscopes * sizeof(struct ls_scope) + h->nloops * sizeof(struct ls_loop_info);
	blob = malloc(*blob_size);
	*why = "out of memory";
	if (!blob)
		goto out;
	advise_huge(blob, *blob_size);
	memcpy(blob, h, sizeof *h);
	*why = "truncated while being read";
	if (!read_all(fd, blob + sizeof *h, size - sizeof *h, sizeof *h))
		goto fail;
	*why = "corrupt (its checksum does not match)";
	if (ls_cache_checksum(blob, size) != h->checksum)
		goto fail;
	*why = "corrupt (its string table is not terminated)";
	if (blob[h->strtab_off + h->strtab_size - 1] != '\0')
		goto fail;
	if ((*why = identity_problem(m, h, blob, blob + h->strtab_off, k->why, sizeof k->why)))
		goto fail;
	/* A hit: the entry is recently used (the size bound evicts by mtime). */
	(void)futimens(fd, NULL);
	*why = NULL;
	goto out;
fail:
	free(blob);
	blob = NULL;
out:
	close(fd);
	return blob;
}

/* What the analysis warned of, said again on a hit: unresolved jumps and
 * inlined calls cut, procedure by procedure (NODES in pre-order: a
 * procedure's statements follow it, before the next procedure). */
static void warn_marks(const ls_module *m, const struct ls_scope *nodes, uint64_t n)
{
	const struct ls_scope *proc = NULL;
	unsigned cut = 0;
	for (uint64_t i = 0; i <= n; i++) {
		const struct ls_scope *s = i < n ? &nodes[i] : NULL;
		if (s && s->kind == LS_SCOPE_STMT && s->cut > cut)
			cut = s->cut;
		if (s && s->kind != LS_SCOPE_PROC && s->kind != LS_SCOPE_FILE)
			continue;
		if (proc && (proc->unresolved_jumps || cut))
			ls_warn_proc_marks(&m->opt, m->path, proc, true, cut);
		proc = s && s->kind == LS_SCOPE_PROC ? s : NULL;
		cut = 0;
	}
}

int ls_cache_load(ls_module *m)
{
	if (!m->opt.use_cache || m->root)
		return 0;
	struct cache_key *k = malloc(sizeof *k);
	if (!k)
		return 0;
	int loaded = 0;
	char *blob = NULL;
	const char *why = NULL;
	struct cache_header h;
	size_t blob_size = 0;
	if (!cache_key(m, k))
		goto out;
	blob = read_entry(m, k, &h, &blob_size, &why);
	if (!blob)
		goto out;
	size_t file_part = (h.file_size + 15) & ~(size_t)15;
	struct ls_scope *nodes = (struct ls_scope *)(blob + file_part);
	struct ls_loop_info *loops = (struct ls_loop_info *)(blob + file_part + h.nscopes * sizeof *nodes);
	struct ls_lookup_index ix = { 0 };
	if (!build_tree(m, blob, &h, nodes, loops, &ix)) {
		why = "corrupt (a record does not check)";
		goto out;
	}
	warn_marks(m, nodes, h.nscopes);
	ls_lookup_index_free(&m->lookup);
	m->lookup = ix;
	m->root = &nodes[0];
	m->cache_blob = blob;
	m->cache_blob_size = blob_size;
	m->from_cache = true;
	blob = NULL;
	loaded = 1;
out:
	if (why)
		ls_note(&m->opt, "%s: cache miss: %s: %s; analyzing it", m->path, k->path, why);
	free(blob);
	free(k);
	return loaded;
}

/* ---- forging an entry (tests and the fuzz target) ------------------------------ */

/* Makes the cache file FILE of SIZE bytes pass what only an honest writer
 * could get right - magic, version, producer, flags, size, the identity of
 * the binary M stands for (M is made to match the file), and the checksum -
 * so that the record checks are what a test or a fuzzer exercises.  Returns
 * 0, or -1 if FILE is too short to carry a header. */
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
	producer_id(h.producer);
	h.flags = key_flags(m);
	h.src_hash = 0;
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
	if (h.build_id_str != CACHE_NONE && h.strtab_off < size && h.strtab_size <= size - h.strtab_off &&
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
	h.checksum = 0;
	memcpy(file, &h, sizeof h);
	h.checksum = ls_cache_checksum(file, size);
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
	if ((uint64_t)st.st_size < sizeof h || (uint64_t)st.st_size > SIZE_MAX / 2 || !read_all(fd, &h, sizeof h, 0))
		goto out;
	struct cache_key k = { .flags = h.flags, .src_hash = h.src_hash };
	if ((meta->problem = header_problem(&h, &k, (uint64_t)st.st_size)))
		goto out;
	meta->loops = h.flags & CACHE_HAS_LOOPS;
	/* The strings are at the end; the checksum needs all of it. */
	size_t from = full_check ? 0 : h.strtab_off, len = (size_t)st.st_size - from;
	buf = malloc(len + 1);
	meta->problem = "out of memory";
	if (!buf)
		goto out;
	meta->problem = "truncated while being read";
	if (!read_all(fd, buf, len, from))
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

/* ---- store ------------------------------------------------------------------- */

/* Strings, deduplicated by content, in an open-addressing table. */
struct str_table {
	struct { const char *s; uint32_t off; } *slots;
	size_t nslots, count;
	char *data;
	size_t len, cap;
	bool overflow;
};

static void strt_grow(struct str_table *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024;
	__typeof__(t->slots) slots = ls_xcalloc(n, sizeof *slots);
	for (size_t i = 0; i < t->nslots; i++) {
		if (!t->slots[i].s)
			continue;
		size_t j = ls_hash64(t->slots[i].s, strlen(t->slots[i].s), 0) & (n - 1);
		while (slots[j].s)
			j = (j + 1) & (n - 1);
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
}

static uint32_t strt_add(struct str_table *t, const char *s)
{
	if (!s)
		return CACHE_NONE;
	if ((t->count + 1) * 2 > t->nslots)
		strt_grow(t);
	size_t len = strlen(s);
	size_t j = ls_hash64(s, len, 0) & (t->nslots - 1);
	while (t->slots[j].s) {
		if (strcmp(t->slots[j].s, s) == 0)
			return t->slots[j].off;
		j = (j + 1) & (t->nslots - 1);
	}
	if (t->len + len + 1 >= CACHE_NONE) {
		t->overflow = true;
		return CACHE_NONE;
	}
	if (t->len + len + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		while (cap < t->len + len + 1)
			cap *= 2;
		char *d = realloc(t->data, cap);
		if (!d) {
			t->overflow = true;
			return CACHE_NONE;
		}
		t->data = d;
		t->cap = cap;
	}
	uint32_t off = (uint32_t)t->len;
	memcpy(t->data + t->len, s, len + 1);
	t->len += len + 1;
	t->slots[j].s = s;
	t->slots[j].off = off;
	t->count++;
	return off;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static bool write_all(int fd, const void *buf, size_t size)
{
	const char *p = buf;
	while (size) {
		ssize_t n = write(fd, p, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		size -= n;
	}
	return true;
}

/* Writes the entry BUF of SIZE bytes as K->path: a temporary of this
 * process's own (mkstemp: unique, 0600) renamed into place when complete,
 * so readers never see a partial file; then the directory's size bound. */
static void write_entry(ls_module *m, const struct cache_key *k, const char *buf, uint64_t size)
{
	if (size > ls_cache_bound_of(&m->opt)) {
		ls_note(&m->opt, "%s: not cached: its %llu-byte entry is more than the cache may hold", m->path,
			(unsigned long long)size);
		return;
	}
	if (ls_cache_dir_make(k->dir) < 0) {
		ls_warn(&m->opt, "%s: cannot create the cache directory: %s", k->dir, strerror(errno));
		return;
	}
	if (!dir_trusted(m, k->dir)) /* made by another user since cache_key looked */
		return;
	ls_cache_remove_stale(k->dir);
	char tmp[PATH_MAX + 64];
	snprintf(tmp, sizeof tmp, "%s.tmp-%ld-XXXXXX", k->path, (long)getpid());
	int fd = mkstemp(tmp);
	if (fd < 0) {
		ls_warn(&m->opt, "%s: cannot write the cache: %s", k->dir, strerror(errno));
		return;
	}
	bool written = write_all(fd, buf, size);
	int saved = errno;
	if (close(fd) < 0 && written) {
		written = false;
		saved = errno;
	}
	if (!written) {
		ls_warn(&m->opt, "%s: cannot write the cache: %s", tmp, strerror(saved));
		unlink(tmp);
		return;
	}
	if (rename(tmp, k->path) < 0) {
		ls_warn(&m->opt, "%s: cannot write the cache: %s", k->path, strerror(errno));
		unlink(tmp);
		return;
	}
	ls_cache_enforce_bound(&m->opt, k->dir, k->path);
}

/* What the scope tree holds, counted pre-order: the sizes of the records. */
struct tree_counts {
	uint64_t nscopes, nranges, nloops, naddrs, nedges, nsegs;
};

static struct tree_counts count_tree(const struct ls_scope *root)
{
	struct tree_counts n = { 0 };
	for (const struct ls_scope *s = root; s;) {
		n.nscopes++;
		n.nranges += s->nranges;
		if (s->kind == LS_SCOPE_LOOP && s->loop) {
			n.nloops++;
			n.naddrs += s->loop->nentries;
			n.nedges += s->loop->nbackedges + s->loop->nexits;
		}
		if (s->first_child) {
			s = s->first_child;
			continue;
		}
		while (s != root && !s->next_sibling)
			s = s->parent;
		s = s == root ? NULL : s->next_sibling;
	}
	return n;
}

/* The header of M's entry, its records laid out after it; returns where
 * the string table starts (the size of everything before it). */
static size_t layout_header(const ls_module *m, const struct cache_key *k, const struct tree_counts *n,
                            struct str_table *strs, struct cache_header *h)
{
	memset(h, 0, sizeof *h);
	memcpy(h->magic, CACHE_MAGIC, 8);
	h->version = LS_CACHE_FORMAT_VERSION;
	h->byte_order = CACHE_BYTE_ORDER;
	h->flags = k->flags;
	h->header_size = sizeof *h;
	h->src_size = m->file_stat.st_size;
	h->src_mtime_sec = m->file_stat.st_mtim.tv_sec;
	h->src_mtime_nsec = m->file_stat.st_mtim.tv_nsec;
	h->src_ino = m->file_stat.st_ino;
	h->src_hash = k->src_hash;
	producer_id(h->producer);
	h->path_str = strt_add(strs, m->path);
	h->build_id_str = strt_add(strs, m->build_id);
	h->nscopes = n->nscopes;
	h->nranges = n->nranges;
	h->nloops = n->nloops;
	h->naddrs = n->naddrs;
	h->nedges = n->nedges;
	size_t off = sizeof *h;
	h->scopes_off = off;
	off += align8(n->nscopes * sizeof(struct cache_scope));
	h->ranges_off = off;
	off += n->nranges * sizeof(ls_range);
	h->loops_off = off;
	off += n->nloops * sizeof(struct cache_loop);
	h->addrs_off = off;
	off += n->naddrs * sizeof(uint64_t);
	h->edges_off = off;
	off += n->nedges * sizeof(ls_edge);
	h->nsegs = n->nsegs;
	h->segs_off = off;
	off += align8(n->nsegs * sizeof(uint32_t));
	h->nprobes = m->nsource_probes;
	h->probes_off = off;
	off += m->nsource_probes * sizeof(struct cache_probe);
	h->strtab_off = off;
	return off;
}

/* The inputs besides the binary: the debug file as it was when found, the
 * source path, the source files the loop lines looked at. */
static void fill_inputs(const ls_module *m, char *buf, struct cache_header *h, struct str_table *strs)
{
	h->debug_path_str = strt_add(strs, m->debug_path);
	if (m->debug_path) {
		h->debug_size = (uint64_t)m->debug_stat.st_size;
		h->debug_ino = (uint64_t)m->debug_stat.st_ino;
		h->debug_mtime_sec = (int64_t)m->debug_stat.st_mtim.tv_sec;
		h->debug_mtime_nsec = (int64_t)m->debug_stat.st_mtim.tv_nsec;
	}
	h->source_path_str = strt_add(strs, source_path(m));
	struct cache_probe *pr = (struct cache_probe *)(buf + h->probes_off);
	for (size_t i = 0; i < m->nsource_probes; i++) {
		const struct ls_source_probe *p = &m->source_probes[i];
		pr[i] = (struct cache_probe){ .path = strt_add(strs, p->path), .exists = p->exists, .mode = p->mode,
		                              .size = p->size, .ino = p->ino, .mtime_sec = p->mtime_sec,
		                              .mtime_nsec = p->mtime_nsec };
	}
}

/* Each statement's first range index in the file, by its address in
 * memory: what the stored lookup index is written in (open addressing). */
struct stmt_ranges {
	struct { const struct ls_scope *s; uint64_t first; } *slots;
	size_t mask;
};

static size_t stmt_slot(const struct stmt_ranges *t, const struct ls_scope *s)
{
	uint64_t h = (uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 32) & t->mask;
	while (t->slots[i].s && t->slots[i].s != s)
		i = (i + 1) & t->mask;
	return i;
}

/* Where fill_records writes next, in each array of BUF. */
struct record_cursor {
	struct cache_scope *cs;
	ls_range *ranges;
	struct cache_loop *cl;
	uint64_t *addrs;
	ls_edge *edges;
	uint64_t si, ri, li, ai, ei;
	struct stmt_ranges *stmts;
};

/* Loop L's record and its entries, back edges and exits; returns its index. */
static uint32_t fill_loop(struct record_cursor *c, const struct ls_loop_info *l)
{
	struct cache_loop *r = &c->cl[c->li];
	r->header = l->header;
	r->depth = l->depth;
	r->irreducible = l->irreducible ? 1 : 0;
	r->made = l->made;
	r->guess = l->guess;
	r->part = l->part;
	r->nparts = l->nparts;
	r->pad = 0;
	r->first_entry = c->ai;
	r->nentries = l->nentries;
	if (l->nentries)
		memcpy(&c->addrs[c->ai], l->entries, l->nentries * sizeof *c->addrs);
	c->ai += l->nentries;
	r->first_backedge = c->ei;
	r->nbackedges = l->nbackedges;
	if (l->nbackedges)
		memcpy(&c->edges[c->ei], l->backedges, l->nbackedges * sizeof *c->edges);
	c->ei += l->nbackedges;
	r->first_exit = c->ei;
	r->nexits = l->nexits;
	if (l->nexits)
		memcpy(&c->edges[c->ei], l->exits, l->nexits * sizeof *c->edges);
	c->ei += l->nexits;
	return (uint32_t)c->li++;
}

/* Scope S's record, with PARENT's index. */
static void fill_scope(struct record_cursor *c, const struct ls_scope *s, uint32_t parent, struct str_table *strs)
{
	struct cache_scope *r = &c->cs[c->si];
	r->kind = s->kind;
	r->parent = parent;
	r->name = strt_add(strs, s->name);
	r->linkage_name = strt_add(strs, s->linkage_name);
	r->file = strt_add(strs, s->file);
	r->call_file = strt_add(strs, s->call_file);
	r->line = s->line;
	r->call_line = s->call_line;
	r->call_column = s->call_column;
	r->unresolved_jumps = s->unresolved_jumps;
	if (s->kind == LS_SCOPE_STMT)
		r->aux = s->cut;
	else if (s->kind == LS_SCOPE_PROC && s->unresolved_jumps && s->nranges &&
	         s->first_unresolved - s->ranges[0].lo <= UINT32_MAX)
		r->aux = (uint32_t)(s->first_unresolved - s->ranges[0].lo);
	r->first_range = c->ri;
	r->nranges = s->nranges;
	if (s->kind == LS_SCOPE_STMT && s->nranges) {
		size_t i = stmt_slot(c->stmts, s);
		c->stmts->slots[i].s = s;
		c->stmts->slots[i].first = c->ri;
	}
	if (s->nranges)
		memcpy(&c->ranges[c->ri], s->ranges, s->nranges * sizeof *c->ranges);
	c->ri += s->nranges;
	r->loop = s->kind == LS_SCOPE_LOOP && s->loop ? fill_loop(c, s->loop) : CACHE_NONE;
}

/* Fill the records of the tree below ROOT into BUF, laid out by H.  A
 * scope's parent index is found by keeping the index of every ancestor on
 * a stack while walking. */
static void fill_records(const struct ls_scope *root, char *buf, const struct cache_header *h,
                         struct str_table *strs, struct stmt_ranges *stmts)
{
	struct record_cursor c = {
		.cs = (struct cache_scope *)(buf + h->scopes_off),
		.ranges = (ls_range *)(buf + h->ranges_off),
		.cl = (struct cache_loop *)(buf + h->loops_off),
		.addrs = (uint64_t *)(buf + h->addrs_off),
		.edges = (ls_edge *)(buf + h->edges_off),
		.stmts = stmts,
	};
	uint32_t *stack = NULL;
	size_t stack_cap = 0, depth = 0;
	for (const struct ls_scope *s = root; s;) {
		fill_scope(&c, s, depth ? stack[depth - 1] : CACHE_NONE, strs);
		if (s->first_child) {
			stack = ls_grow(stack, &stack_cap, depth + 1, sizeof *stack);
			stack[depth++] = (uint32_t)c.si;
			c.si++;
			s = s->first_child;
			continue;
		}
		c.si++;
		while (s != root && !s->next_sibling) {
			s = s->parent;
			depth--;
		}
		s = s == root ? NULL : s->next_sibling;
	}
	free(stack);
}

/* The lookup index IX as the file's range indices, in its order: each
 * segment is a range of its statement (the one it ends with: the index
 * only ever moves a start, to clip an overlap). */
static bool fill_segs(char *buf, const struct cache_header *h, const struct ls_lookup_index *ix,
		      const struct stmt_ranges *stmts)
{
	uint32_t *order = (uint32_t *)(buf + h->segs_off);
	for (size_t i = 0; i < ix->nsegs; i++) {
		const struct ls_scope *s = ix->segs[i].stmt;
		assert(s); /* every segment of the index is a statement's (lookup.c) */
		size_t slot = stmt_slot(stmts, s);
		if (stmts->slots[slot].s != s)
			return false;
		size_t k = LS_FIRST_AT_LEAST(s->ranges, s->nranges, hi, ix->segs[i].hi);
		if (k >= s->nranges || s->ranges[k].hi != ix->segs[i].hi)
			return false;
		order[i] = (uint32_t)(stmts->slots[slot].first + k);
	}
	return true;
}

void ls_cache_store(ls_module *m)
{
	if (!m->opt.use_cache || !m->root || m->from_cache)
		return;
	struct cache_key *k = malloc(sizeof *k);
	if (!k)
		return;
	char *buf = NULL;
	struct str_table strs = { 0 };
	struct ls_lookup_index own_ix = { 0 };
	struct stmt_ranges stmts = { 0 };
	if (!cache_key(m, k))
		goto out;

	/* 1. Count everything; the lookup index is the module's, or made
	 * now when the caller has not made it yet. */
	const struct ls_lookup_index *ix = &m->lookup;
	if (!ix->segs) {
		ls_error err;
		if (ls_lookup_index_build(&own_ix, m->root, &err) < 0)
			goto out;
		ix = &own_ix;
	}
	struct tree_counts n = count_tree(m->root);
	n.nsegs = ix->nsegs;
	if (n.nscopes >= CACHE_NONE || n.nloops >= CACHE_NONE || n.nranges >= CACHE_NONE) {
		ls_warn(&m->opt, "%s: scope tree too large to cache", m->path);
		goto out;
	}

	/* 2. Lay out the header and the records. */
	struct cache_header h;
	size_t fixed = layout_header(m, k, &n, &strs, &h);
	buf = malloc(fixed);
	if (!buf) {
		ls_warn(&m->opt, "%s: out of memory writing the cache", m->path);
		goto out;
	}
	memset(buf, 0, fixed);

	/* 3. Fill the records, collecting the strings, and the index. */
	size_t nslots = 16;
	while (nslots < 2 * n.nscopes)
		nslots *= 2;
	stmts.slots = calloc(nslots, sizeof *stmts.slots);
	stmts.mask = nslots - 1;
	if (!stmts.slots) {
		ls_warn(&m->opt, "%s: out of memory writing the cache", m->path);
		goto out;
	}
	fill_records(m->root, buf, &h, &strs, &stmts);
	fill_inputs(m, buf, &h, &strs);
	if (!fill_segs(buf, &h, ix, &stmts)) {
		ls_warn(&m->opt, "%s: not cached: its lookup index does not match its tree", m->path);
		goto out;
	}
	if (strs.len == 0)
		strt_add(&strs, ""); /* the table is never empty */
	if (strs.overflow) {
		ls_warn(&m->opt, "%s: string table too large to cache", m->path);
		goto out;
	}
	assert(strs.len > 0 && strs.data);
	h.strtab_size = strs.len;
	h.file_size = fixed + strs.len;

	/* 4. The checksum runs over the whole file as it will lie on disk. */
	{
		char *whole = realloc(buf, h.file_size);
		if (!whole) {
			ls_warn(&m->opt, "%s: out of memory writing the cache", m->path);
			goto out;
		}
		buf = whole;
		memcpy(buf + fixed, strs.data, strs.len);
		memcpy(buf, &h, sizeof h);
		h.checksum = ls_cache_checksum(buf, h.file_size);
		memcpy(buf, &h, sizeof h);
	}
	write_entry(m, k, buf, h.file_size);
out:
	ls_lookup_index_free(&own_ix);
	free(stmts.slots);
	free(buf);
	free(strs.slots);
	free(strs.data);
	free(k);
}
