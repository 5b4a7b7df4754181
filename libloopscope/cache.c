/* cache.c - saves and loads the scope tree, keyed by build-id.
 *
 * Analyzing a big binary takes seconds; loading its tree back must take
 * milliseconds, so that the second `loopscope lookup` and GDB's `structure`
 * answer at once.  One file per module:
 *
 *   DIR/<build-id>.lsc           (DIR: opt.cache_dir, else
 *   DIR/<build-id>-noloops.lsc    $XDG_CACHE_HOME/loopscope, else
 *   DIR/h<content-hash>.lsc       ~/.cache/loopscope)
 *
 * Binaries without a build-id are keyed by a 64-bit hash of their whole
 * contents.  The file is a header followed by flat arrays: scopes in
 * pre-order (each names its parent by index), their ranges, loop records,
 * loop entry addresses, loop edges and a string table.  Loading reads the
 * file into one buffer (m->cache_blob, freed by the module with free()):
 * ranges, edges and strings point into it, and the ls_scope nodes are laid
 * out in the same buffer after the file's bytes, so a load is one read, one
 * checksum and one pass over the records.
 *
 * The cache directory is shared and its files are untrusted: every count,
 * offset and index is checked, and a file that fails any check is a miss,
 * never a crash.  Stores write a temporary file in the same directory and
 * rename() it into place, so concurrent writers and readers are safe.
 */
#include "internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
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
	CACHE_HAS_LOOPS = 1, /* built with opt.want_loops */
	CACHE_HAS_DWARF = 2, /* built with debug information */
};

struct cache_header {
	char magic[8];
	uint32_t version;       /* LS_CACHE_FORMAT_VERSION */
	uint32_t byte_order;    /* CACHE_BYTE_ORDER as written by the storing host */
	uint32_t flags;         /* CACHE_HAS_* */
	uint32_t header_size;   /* sizeof(struct cache_header) */
	uint64_t file_size;     /* of this cache file */
	uint64_t checksum;      /* hash of the bytes after the header */
	uint64_t src_size;      /* the binary, when stored */
	int64_t src_mtime;
	uint64_t src_hash;      /* content hash; 0 when keyed by build-id */
	uint8_t producer[32];   /* identity of the libloopscope that built the tree */
	uint32_t path_str;      /* the binary's path when stored (string offset) */
	uint32_t build_id_str;
	uint64_t nscopes, scopes_off;
	uint64_t nranges, ranges_off;
	uint64_t nloops, loops_off;
	uint64_t naddrs, addrs_off;   /* loop entries */
	uint64_t nedges, edges_off;   /* loop back edges and exits */
	uint64_t strtab_size, strtab_off;
};

struct cache_scope {
	uint32_t kind;
	uint32_t parent;        /* index of an earlier scope; CACHE_NONE for the root */
	uint32_t name, linkage_name, file, call_file; /* string offsets or CACHE_NONE */
	uint32_t line, call_line, call_column;
	uint32_t loop;          /* index into the loops, or CACHE_NONE */
	uint32_t unresolved_jumps, pad; /* proc */
	uint64_t first_range;
	uint64_t nranges;
};

struct cache_loop {
	uint64_t header;
	uint64_t first_entry, nentries;
	uint64_t first_backedge, nbackedges;
	uint64_t first_exit, nexits;
	uint32_t depth, irreducible;
};

_Static_assert(sizeof(ls_range) == 16, "ls_range is stored raw");
_Static_assert(sizeof(ls_edge) == 16, "ls_edge is stored raw");
_Static_assert(sizeof(struct cache_header) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_scope) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_loop) % 8 == 0, "sections are 8-aligned");

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
	for (; p + 8 <= end; p += 8)
		h = rotl64(h ^ hash_round(0, read64(p)), 27) * P1 + P4;
	if (p + 4 <= end) {
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

static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX];
	size_t len = strlen(dir);
	if (len == 0 || len >= sizeof buf)
		return -1;
	memcpy(buf, dir, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

static bool cache_dir(const ls_module *m, char *buf, size_t size)
{
	int n;
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (m->opt.cache_dir && *m->opt.cache_dir)
		n = snprintf(buf, size, "%s", m->opt.cache_dir);
	else if (xdg && *xdg == '/')
		n = snprintf(buf, size, "%s/loopscope", xdg);
	else if (home && *home)
		n = snprintf(buf, size, "%s/.cache/loopscope", home);
	else
		return false;
	return n > 0 && (size_t)n < size;
}

/* The content hash of the binary, for modules without a build-id. */
static bool content_hash(const ls_module *m, uint64_t *hash, struct stat *st)
{
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = false;
	if (fstat(fd, st) == 0 && S_ISREG(st->st_mode)) {
		if (st->st_size == 0) {
			*hash = ls_hash64("", 0, 0);
			ok = true;
		} else {
			void *p = mmap(NULL, st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (p != MAP_FAILED) {
				*hash = ls_hash64(p, st->st_size, 0);
				munmap(p, st->st_size);
				ok = true;
			}
		}
	}
	close(fd);
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
	struct stat st;     /* of the binary */
	uint32_t flags;
};

static bool cache_key(const ls_module *m, struct cache_key *k)
{
	memset(k, 0, sizeof *k);
	if (!m->path || !cache_dir(m, k->dir, sizeof k->dir))
		return false;
	k->flags = (m->opt.want_loops ? CACHE_HAS_LOOPS : 0) | (m->dwarf ? CACHE_HAS_DWARF : 0);
	const char *variant = m->opt.want_loops ? "" : "-noloops";
	int n;
	if (m->build_id && is_hex_id(m->build_id)) {
		if (stat(m->path, &k->st) < 0)
			memset(&k->st, 0, sizeof k->st);
		n = snprintf(k->path, sizeof k->path, "%s/%s%s.lsc", k->dir, m->build_id, variant);
	} else {
		if (!content_hash(m, &k->src_hash, &k->st))
			return false;
		if (k->src_hash == 0)
			k->src_hash = 1; /* 0 means "keyed by build-id" */
		n = snprintf(k->path, sizeof k->path, "%s/h%016llx%s.lsc", k->dir,
			     (unsigned long long)k->src_hash, variant);
	}
	return n > 0 && (size_t)n < sizeof k->path;
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

static bool header_ok(const struct cache_header *h, const struct cache_key *k, uint64_t size)
{
	if (memcmp(h->magic, CACHE_MAGIC, 8) != 0 || h->version != LS_CACHE_FORMAT_VERSION ||
	    h->byte_order != CACHE_BYTE_ORDER || h->header_size != sizeof *h ||
	    h->file_size != size || h->flags != k->flags)
		return false;
	if (h->src_hash != k->src_hash)
		return false;
	uint8_t producer[32];
	producer_id(producer);
	if (memcmp(h->producer, producer, sizeof producer) != 0)
		return false;
	if (k->src_hash && h->src_size != (uint64_t)k->st.st_size)
		return false;
	return section_ok(h->scopes_off, h->nscopes, sizeof(struct cache_scope), size) &&
	       section_ok(h->ranges_off, h->nranges, sizeof(ls_range), size) &&
	       section_ok(h->loops_off, h->nloops, sizeof(struct cache_loop), size) &&
	       section_ok(h->addrs_off, h->naddrs, sizeof(uint64_t), size) &&
	       section_ok(h->edges_off, h->nedges, sizeof(ls_edge), size) &&
	       section_ok(h->strtab_off, h->strtab_size, 1, size) &&
	       h->nscopes >= 1 && h->nscopes < CACHE_NONE && h->nloops < CACHE_NONE &&
	       h->strtab_size >= 1 && h->strtab_size <= CACHE_NONE &&
	       str_ok(h->path_str, h->strtab_size) && str_ok(h->build_id_str, h->strtab_size);
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

/* Check every record of the file in BLOB and build the tree in NODES and
 * LOOPS.  Returns false, with nothing of the module touched, if any check
 * fails. */
static bool build_tree(const ls_module *m, char *blob, const struct cache_header *h,
		       struct ls_scope *nodes, struct ls_loop_info *loops)
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
		    !slice_ok(r->first_exit, r->nexits, h->nedges) || r->irreducible > 1)
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
	}

	/* Depths are checked because the writers and lookups walk the tree
	 * recursively; a forged file must not make them overflow the stack. */
	uint32_t *depth = malloc(h->nscopes * sizeof *depth);
	if (!depth)
		return false;
	bool ok = false;
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
		s->ranges = r->nranges ? ranges + r->first_range : NULL;
		s->nranges = s->cap_ranges = r->nranges;
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
	ok = true;
out:
	free(depth);
	return ok;
}

int ls_cache_load(ls_module *m)
{
	if (!m->opt.use_cache || m->root)
		return 0;
	struct cache_key *k = malloc(sizeof *k);
	if (!k)
		return 0;
	int fd = -1, loaded = 0;
	char *blob = NULL;
	if (!cache_key(m, k))
		goto out;
	fd = open(k->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto out;
	struct stat st;
	struct cache_header h;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof h ||
	    (uint64_t)st.st_size > SIZE_MAX / 2)
		goto out;
	uint64_t size = st.st_size;
	if (!read_all(fd, &h, sizeof h, 0) || !header_ok(&h, k, size))
		goto out;

	/* One buffer: the file's bytes, then the nodes and loop records.  The
	 * counts are bounded by the file size (checked above), so a forged
	 * header cannot ask for a huge allocation. */
	size_t file_part = (size + 15) & ~(size_t)15;
	size_t nodes_size = h.nscopes * sizeof(struct ls_scope);
	size_t loops_size = h.nloops * sizeof(struct ls_loop_info);
	size_t blob_size = file_part + nodes_size + loops_size;
	blob = malloc(blob_size);
	if (!blob)
		goto out;
	advise_huge(blob, blob_size);
	memcpy(blob, &h, sizeof h);
	if (!read_all(fd, blob + sizeof h, size - sizeof h, sizeof h))
		goto out;
	if (ls_hash64(blob + sizeof h, size - sizeof h, 0) != h.checksum)
		goto out;
	struct ls_scope *nodes = (struct ls_scope *)(blob + file_part);
	struct ls_loop_info *loops = (struct ls_loop_info *)(blob + file_part + nodes_size);
	if (!build_tree(m, blob, &h, nodes, loops))
		goto out;

	m->root = &nodes[0];
	m->cache_blob = blob;
	m->cache_blob_size = blob_size;
	m->from_cache = true;
	blob = NULL;
	loaded = 1;
out:
	if (fd >= 0)
		close(fd);
	free(blob);
	free(k);
	return loaded;
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

void ls_cache_store(ls_module *m)
{
	if (!m->opt.use_cache || !m->root || m->from_cache)
		return;
	struct cache_key *k = malloc(sizeof *k);
	if (!k)
		return;
	char *buf = NULL;
	struct str_table strs = { 0 };
	char tmp[PATH_MAX + 16];
	int fd = -1;
	bool tmp_made = false;
	if (!cache_key(m, k))
		goto out;

	/* Count everything, pre-order. */
	uint64_t nscopes = 0, nranges = 0, nloops = 0, naddrs = 0, nedges = 0;
	const struct ls_scope *root = m->root;
	for (const struct ls_scope *s = root; s;) {
		nscopes++;
		nranges += s->nranges;
		if (s->kind == LS_SCOPE_LOOP && s->loop) {
			nloops++;
			naddrs += s->loop->nentries;
			nedges += s->loop->nbackedges + s->loop->nexits;
		}
		if (s->first_child) {
			s = s->first_child;
			continue;
		}
		while (s != root && !s->next_sibling)
			s = s->parent;
		s = s == root ? NULL : s->next_sibling;
	}
	if (nscopes >= CACHE_NONE || nloops >= CACHE_NONE) {
		ls_warn(&m->opt, "%s: scope tree too large to cache", m->path);
		goto out;
	}

	struct cache_header h;
	memset(&h, 0, sizeof h);
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.version = LS_CACHE_FORMAT_VERSION;
	h.byte_order = CACHE_BYTE_ORDER;
	h.flags = k->flags;
	h.header_size = sizeof h;
	h.src_size = k->st.st_size;
	h.src_mtime = k->st.st_mtime;
	h.src_hash = k->src_hash;
	producer_id(h.producer);
	h.path_str = strt_add(&strs, m->path);
	h.build_id_str = strt_add(&strs, m->build_id);
	h.nscopes = nscopes;
	h.nranges = nranges;
	h.nloops = nloops;
	h.naddrs = naddrs;
	h.nedges = nedges;
	size_t off = sizeof h;
	h.scopes_off = off;
	off += align8(nscopes * sizeof(struct cache_scope));
	h.ranges_off = off;
	off += nranges * sizeof(ls_range);
	h.loops_off = off;
	off += nloops * sizeof(struct cache_loop);
	h.addrs_off = off;
	off += naddrs * sizeof(uint64_t);
	h.edges_off = off;
	off += nedges * sizeof(ls_edge);
	h.strtab_off = off;
	size_t fixed = off;

	buf = malloc(fixed);
	if (!buf) {
		ls_warn(&m->opt, "%s: out of memory writing the cache", m->path);
		goto out;
	}
	memset(buf, 0, fixed);
	struct cache_scope *cs = (struct cache_scope *)(buf + h.scopes_off);
	ls_range *ranges = (ls_range *)(buf + h.ranges_off);
	struct cache_loop *cl = (struct cache_loop *)(buf + h.loops_off);
	uint64_t *addrs = (uint64_t *)(buf + h.addrs_off);
	ls_edge *edges = (ls_edge *)(buf + h.edges_off);

	/* Fill the records.  A scope's parent index is found by keeping the
	 * index of every ancestor on a stack while walking. */
	uint32_t *stack = NULL;
	size_t stack_cap = 0, depth = 0;
	uint64_t si = 0, ri = 0, li = 0, ai = 0, ei = 0;
	for (const struct ls_scope *s = root; s;) {
		struct cache_scope *r = &cs[si];
		r->kind = s->kind;
		r->parent = depth ? stack[depth - 1] : CACHE_NONE;
		r->name = strt_add(&strs, s->name);
		r->linkage_name = strt_add(&strs, s->linkage_name);
		r->file = strt_add(&strs, s->file);
		r->call_file = strt_add(&strs, s->call_file);
		r->line = s->line;
		r->call_line = s->call_line;
		r->call_column = s->call_column;
		r->unresolved_jumps = s->unresolved_jumps;
		r->first_range = ri;
		r->nranges = s->nranges;
		if (s->nranges)
			memcpy(&ranges[ri], s->ranges, s->nranges * sizeof *ranges);
		ri += s->nranges;
		r->loop = CACHE_NONE;
		if (s->kind == LS_SCOPE_LOOP && s->loop) {
			const struct ls_loop_info *l = s->loop;
			struct cache_loop *c = &cl[li];
			r->loop = (uint32_t)li++;
			c->header = l->header;
			c->depth = l->depth;
			c->irreducible = l->irreducible ? 1 : 0;
			c->first_entry = ai;
			c->nentries = l->nentries;
			if (l->nentries)
				memcpy(&addrs[ai], l->entries, l->nentries * sizeof *addrs);
			ai += l->nentries;
			c->first_backedge = ei;
			c->nbackedges = l->nbackedges;
			if (l->nbackedges)
				memcpy(&edges[ei], l->backedges, l->nbackedges * sizeof *edges);
			ei += l->nbackedges;
			c->first_exit = ei;
			c->nexits = l->nexits;
			if (l->nexits)
				memcpy(&edges[ei], l->exits, l->nexits * sizeof *edges);
			ei += l->nexits;
		}
		if (s->first_child) {
			stack = ls_grow(stack, &stack_cap, depth + 1, sizeof *stack);
			stack[depth++] = (uint32_t)si;
			si++;
			s = s->first_child;
			continue;
		}
		si++;
		while (s != root && !s->next_sibling) {
			s = s->parent;
			depth--;
		}
		s = s == root ? NULL : s->next_sibling;
	}
	free(stack);
	if (strs.overflow) {
		ls_warn(&m->opt, "%s: string table too large to cache", m->path);
		goto out;
	}
	if (strs.len == 0)
		strt_add(&strs, ""); /* the table is never empty */
	h.strtab_size = strs.len;
	h.file_size = fixed + strs.len;

	/* The checksum runs over the bytes after the header as they will lie
	 * in the file: the fixed part, then the strings. */
	{
		char *whole = realloc(buf, h.file_size);
		if (!whole) {
			ls_warn(&m->opt, "%s: out of memory writing the cache", m->path);
			goto out;
		}
		buf = whole;
		memcpy(buf + fixed, strs.data, strs.len);
		h.checksum = ls_hash64(buf + sizeof h, h.file_size - sizeof h, 0);
		memcpy(buf, &h, sizeof h);
	}

	if (mkdir_p(k->dir) < 0) {
		ls_warn(&m->opt, "%s: cannot create the cache directory: %s", k->dir, strerror(errno));
		goto out;
	}
	snprintf(tmp, sizeof tmp, "%s.XXXXXX", k->path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		ls_warn(&m->opt, "%s: cannot write the cache: %s", k->dir, strerror(errno));
		goto out;
	}
	tmp_made = true;
	if (!write_all(fd, buf, h.file_size)) {
		ls_warn(&m->opt, "%s: cannot write the cache: %s", tmp, strerror(errno));
		goto out;
	}
	/* mkstemp makes the file 0600; the cache is as readable as its dir. */
	(void)fchmod(fd, 0644);
	if (close(fd) < 0) {
		fd = -1;
		ls_warn(&m->opt, "%s: cannot write the cache: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, k->path) < 0) {
		ls_warn(&m->opt, "%s: cannot write the cache: %s", k->path, strerror(errno));
		goto out;
	}
	tmp_made = false;
out:
	if (fd >= 0)
		close(fd);
	if (tmp_made)
		unlink(tmp);
	free(buf);
	free(strs.slots);
	free(strs.data);
	free(k);
}
