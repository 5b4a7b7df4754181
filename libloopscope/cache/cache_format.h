/* cache_format.h - the cache file as it lies on disk, and what the reader
 * (cache.c) and the writer (cache_store.c) share.  Not for other stages:
 * they see cache.h.
 *
 * An entry is a head, then one record per procedure stored:
 *
 *   head     struct cache_header (the key: format, producer, the binary,
 *            the options, the debug file), the directory (every procedure
 *            of the module by entry: what is known of it, and where its
 *            records' places are if it has any), those places (the
 *            records' offsets, sizes and checksums), the owner index (which procedure owns
 *            each address), the source files the loop lines looked at,
 *            and the head's strings.  One checksum covers the head.
 *   records  one per procedure analyzed and not empty, anywhere after the
 *            head: struct cache_record, then its scopes in pre-order (each
 *            names its parent by index; the first is the procedure), their
 *            ranges, loops, loop entries and edges, the order of its
 *            statement ranges by address (its lookup index) and its own
 *            strings.  A record holds nothing of another's: it can be
 *            copied from one entry into another as it is, and the
 *            directory's checksum of it is checked when it is read.
 *   accesses one per procedure whose memory accesses were asked for
 *            (data/accesses.c; since format 13), anywhere after the head:
 *            struct cache_acc_record, its accesses (struct cache_access),
 *            the starts of its basic blocks, its own strings.  Apart from
 *            the procedure's record: the accesses are asked for later (a
 *            -s type report of a recording whose structure is cached), and
 *            each kind of record is copied and checked on its own.
 *
 * Every array is 8-aligned; every offset is from the start of the file
 * (the head's) or of the record (a record's).
 */
#ifndef LOOPSCOPE_CACHE_FORMAT_H
#define LOOPSCOPE_CACHE_FORMAT_H

#include "cache/cache.h"

#include <limits.h>
#include <sys/stat.h>

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
	uint64_t checksum;      /* ls_cache_checksum of the head, this field as 0 */
	uint64_t head_size;     /* the header and everything the checksum covers */
	/* The binary when it was stored: a file that differs is a miss. */
	uint64_t src_size;
	int64_t src_mtime_sec, src_mtime_nsec;
	uint64_t src_ino;
	uint64_t src_hash;      /* content hash; 0 when keyed by build-id */
	uint8_t producer[32];   /* identity of the libloopscope that built the trees */
	uint32_t path_str;      /* the binary's path when stored (string offset) */
	uint32_t build_id_str;  /* its build-id in hex, or CACHE_NONE */
	/* The other inputs: the debug file (its path when found, and what it
	 * was then), the source path option, the source files looked at. */
	uint32_t debug_path_str, source_path_str; /* string offsets or CACHE_NONE */
	uint64_t debug_size, debug_ino;
	int64_t debug_mtime_sec, debug_mtime_nsec;
	uint64_t nprocs, procs_off;   /* struct cache_proc, by entry */
	uint64_t nindex, index_off;   /* struct cache_range, by address */
	uint64_t nprobes, probes_off; /* struct cache_probe */
	uint64_t strtab_size, strtab_off;
	/* The source files the loop lines wanted and did not find, by the
	 * names DWARF gives them (sorted string offsets, uint32_t each): a hit
	 * says they are missing as the run that stored the entry did. */
	uint64_t nmissing, missing_off;
	/* Where the records of the procedures that have some are (struct
	 * cache_proc_recs, by entry; since format 14). */
	uint64_t nrecs, recs_off;
};

/* A procedure of the directory. */
enum {
	CACHE_PROC_ANALYZED = 1, /* its analysis is stored: a record, or CACHE_PROC_EMPTY */
	CACHE_PROC_EMPTY = 2,    /* analyzed: no statement (not in the tree), no record */
	CACHE_PROC_RETURNS = 4,  /* proved to return (cfg/noreturn.c) */
	CACHE_PROC_NEVER = 8,    /* proved never to return */
	CACHE_PROC_ACCESSES = 16, /* its accesses are stored: an accesses record */
	CACHE_PROC_FLAGS = 31,
};
struct cache_proc {
	uint64_t entry;
	uint32_t flags;          /* CACHE_PROC_* */
	uint32_t recs;           /* its records' place in the recs table, or CACHE_NONE */
};

/* Where a procedure's records are, for the procedures that have one
 * (since format 14: apart from the directory, whose every procedure of a
 * large library had its 40 bytes, though few of them are ever analyzed --
 * most of the bytes a first report wrote and a second one read). */
struct cache_proc_recs {
	uint64_t rec_off;        /* its record; 0 without */
	uint64_t rec_checksum;   /* ls_hash64 of the record's bytes */
	uint64_t acc_off;        /* its accesses record (CACHE_PROC_ACCESSES); 0 without */
	uint64_t acc_checksum;   /* ls_hash64 of that record's bytes */
	uint32_t rec_size, acc_size;
};

/* The owner index: [lo, hi) is procedure PROC's. */
struct cache_range {
	uint64_t lo, hi;
	uint32_t proc, pad;
};

/* A source file the loop lines looked at, as it was. */
struct cache_probe {
	uint32_t path;          /* string offset */
	uint32_t exists;
	uint32_t mode, pad;
	uint64_t size, ino;
	int64_t mtime_sec, mtime_nsec;
};

/* A procedure's record: this, then its arrays in this order. */
struct cache_record {
	uint64_t entry;         /* its procedure's: the directory's */
	uint32_t nscopes, nranges, nloops, naddrs, nedges, nsegs;
	uint32_t strtab_size, pad;
};

struct cache_scope {
	uint32_t kind;
	uint32_t parent;        /* index of an earlier scope of the record; CACHE_NONE for the first */
	uint32_t name, linkage_name, file, call_file; /* the record's string offsets or CACHE_NONE */
	uint32_t line, call_line, call_column;
	uint32_t loop;          /* index into the record's loops, or CACHE_NONE */
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
	uint8_t made, guess;      /* enum ls_loop_made, enum ls_loop_guess */
	uint16_t part, nparts;
	uint32_t pad;
};

/* A procedure's accesses record: this, then its accesses, the starts of
 * its basic blocks (ascending: ls_accesses_block_of searches them), and
 * its strings. */
struct cache_acc_record {
	uint64_t entry;         /* its procedure's: the directory's */
	uint64_t proc;          /* ls_accesses_proc: the procedure's lowest address */
	uint32_t naccesses, nblocks;
	uint32_t strtab_size, pad;
};

/* One ls_access.  RULE is ls_access_rule's value, checked against the
 * rules this build names (ls_access_rule_name): a rule added later is
 * stored and read like the others.  The strings are the record's offsets:
 * OPERAND always, VARIABLE..EXPR all of them with a rule, none without. */
struct cache_access {
	uint64_t addr;
	int64_t offset;
	uint64_t type_die;      /* the type's DIE (its layout is read from the DWARF), 0: none */
	uint32_t len, operand_index, kind, width, rule;
	uint8_t indexed, bitfield, c_lang, pad;
	uint32_t operand, variable, type, field, field_type, expr;
};

_Static_assert(sizeof(ls_range) == 16, "ls_range is stored raw");
_Static_assert(sizeof(ls_edge) == 16, "ls_edge is stored raw");
_Static_assert(sizeof(struct cache_header) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_proc) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_proc_recs) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_range) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_record) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_scope) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_loop) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_probe) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_acc_record) % 8 == 0, "sections are 8-aligned");
_Static_assert(sizeof(struct cache_access) % 8 == 0, "sections are 8-aligned");

static inline uint64_t cache_align8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

/* Where a record's arrays are, from its counts (all 8-aligned). */
struct record_layout {
	uint64_t scopes, ranges, loops, addrs, edges, segs, strtab, size;
};
static inline struct record_layout cache_record_layout(const struct cache_record *r)
{
	struct record_layout l;
	uint64_t off = sizeof *r;
	l.scopes = off;
	off += (uint64_t)r->nscopes * sizeof(struct cache_scope);
	l.ranges = off;
	off += (uint64_t)r->nranges * sizeof(ls_range);
	l.loops = off;
	off += (uint64_t)r->nloops * sizeof(struct cache_loop);
	l.addrs = off;
	off += (uint64_t)r->naddrs * sizeof(uint64_t);
	l.edges = off;
	off += (uint64_t)r->nedges * sizeof(ls_edge);
	l.segs = off;
	off += cache_align8((uint64_t)r->nsegs * sizeof(uint32_t));
	l.strtab = off;
	off += cache_align8(r->strtab_size);
	l.size = off;
	return l;
}

/* Where an accesses record's arrays are, from its counts. */
struct acc_layout {
	uint64_t accesses, blocks, strtab, size;
};
static inline struct acc_layout cache_acc_layout(const struct cache_acc_record *r)
{
	struct acc_layout l;
	uint64_t off = sizeof *r;
	l.accesses = off;
	off += (uint64_t)r->naccesses * sizeof(struct cache_access);
	l.blocks = off;
	off += (uint64_t)r->nblocks * sizeof(uint64_t);
	l.strtab = off;
	off += cache_align8(r->strtab_size);
	l.size = off;
	return l;
}

/* What identifies the module's cache file, and its path. */
struct cache_key {
	char dir[PATH_MAX];
	char path[PATH_MAX];  /* DIR/NAME, for messages */
	const char *name;     /* in PATH */
	int dirfd;            /* DIR checked and open (ls_cache_dir_open); -1: not there yet */
	uint64_t src_hash;  /* 0 when keyed by build-id */
	uint32_t flags;
	char why[PATH_MAX + 128]; /* a miss's reason that names a file */
};

/* An entry read for a module: its head (checked), the file kept open for
 * its records (a store renames another file into place: this one stays
 * what it was). */
struct ls_cache_entry {
	int fd;
	struct stat st;
	char path[PATH_MAX];
	struct cache_header h;
	char *head;                      /* h.head_size bytes */
	const struct cache_proc *procs;
	const struct cache_proc_recs *recs;
	const struct cache_range *index;
	const struct cache_probe *probes;
	const uint32_t *missing;         /* h.nmissing string offsets */
	const char *strtab;
};

/* Strings, deduplicated by content, in an open-addressing table: a
 * record's or the head's string table (cache_store.c). */
struct cache_strtab {
	struct { const char *s; uint32_t off; } *slots;
	size_t nslots, count;
	char *data;
	size_t len, cap;
	bool overflow;
};
/* S's offset (CACHE_NONE for NULL, or when the table would pass 4 GiB:
 * then overflow is set).  S must live as long as the table's entries. */
uint32_t ls_cache_strs_add(struct cache_strtab *t, const char *s);
void ls_cache_strs_clear(struct cache_strtab *t);
void ls_cache_strs_free(struct cache_strtab *t);

/* cache.c, for cache_store.c */
bool ls_cache_key(const ls_module *m, struct cache_key *k);
/* Closes K's directory (K itself stays the caller's). */
void ls_cache_key_release(struct cache_key *k);
/* DIR open if it may be used as the cache (cache_dir.c's checks, made on
 * the descriptor): -1 if it is not there yet (errno ENOENT, *DISTRUSTED
 * false) or distrusted (*DISTRUSTED true: said once a process, the cache
 * is off). */
int ls_cache_dir_trusted(const ls_module *m, const char *dir, bool *distrusted);
uint32_t ls_cache_key_flags(const ls_module *m);
const char *ls_cache_source_path(const ls_module *m);
void ls_cache_producer(uint8_t id[32]);
bool ls_cache_read_all(int fd, void *buf, size_t size, off_t off);
/* The entry at PATH (an open FD) read and checked for M: NULL with *WHY
 * (K->why holds a reason that names a file). */
struct ls_cache_entry *ls_cache_entry_read(const ls_module *m, int fd, const char *path, struct cache_key *k,
                                           const char **why);
void ls_cache_entry_free(struct ls_cache_entry *e);
/* Record I of E into BUF (its rec_size bytes), its checksum checked. */
bool ls_cache_record_read(const struct ls_cache_entry *e, size_t i, void *buf);
/* Procedure I's accesses record of E into BUF (its acc_size bytes), its
 * checksum checked. */
bool ls_cache_acc_record_read(const struct ls_cache_entry *e, size_t i, void *buf);
/* Where procedure I's records are in E (all zero when it has none). */
static inline const struct cache_proc_recs *ls_cache_recs_of(const struct ls_cache_entry *e, size_t i)
{
	static const struct cache_proc_recs none;
	uint32_t r = e->procs[i].recs;
	return r == CACHE_NONE ? &none : &e->recs[r];
}
/* cache_accesses.c, for cache_store.c: procedure I's accesses computed by
 * this run, as a record (NULL if none; *SIZE, *CHECKSUM set). */
const void *ls_cache_accesses_made(const ls_module *m, size_t i, uint32_t *size, uint64_t *checksum);

#endif
