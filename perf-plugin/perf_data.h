/* perf_data.h - a reader of perf.data files (file and pipe mode).
 *
 * The reader maps the file (or reads a pipe into memory) and hands out one
 * record at a time, in file order, with COMPRESSED records inflated in line.
 * It owns the header: the event attributes (and which sample id belongs to
 * which), the feature sections we use (build-ids, cmdline, event names,
 * osrelease), and it parses samples and the side-band records perf loops
 * needs.  Nothing here knows about processes or symbols (session.c does).
 *
 * Bad input never crashes the reader: a record that does not fit is where
 * reading stops, and the number of bytes left unread is kept so the caller
 * can say how much was lost.
 */
#ifndef PERF_DATA_H
#define PERF_DATA_H

#include <stddef.h>
#include <stdint.h>

/* Record types (include/uapi/linux/perf_event.h, tools/perf/util/event.h). */
enum {
	PD_RECORD_MMAP = 1,
	PD_RECORD_LOST = 2,
	PD_RECORD_COMM = 3,
	PD_RECORD_EXIT = 4,
	PD_RECORD_THROTTLE = 5,
	PD_RECORD_UNTHROTTLE = 6,
	PD_RECORD_FORK = 7,
	PD_RECORD_READ = 8,
	PD_RECORD_SAMPLE = 9,
	PD_RECORD_MMAP2 = 10,
	PD_RECORD_LOST_SAMPLES = 13,
	PD_RECORD_SWITCH = 14,    /* --switch-events: misc says out or in */
	PD_RECORD_SWITCH_CPU_WIDE = 15, /* the same, of a CPU (perf record -a) */
	PD_RECORD_HEADER_ATTR = 64,
	PD_RECORD_HEADER_EVENT_TYPE = 65,
	PD_RECORD_HEADER_TRACING_DATA = 66,
	PD_RECORD_HEADER_BUILD_ID = 67,
	PD_RECORD_FINISHED_ROUND = 68,
	PD_RECORD_ID_INDEX = 69,
	PD_RECORD_AUXTRACE = 71,
	PD_RECORD_EVENT_UPDATE = 78,
	PD_RECORD_HEADER_FEATURE = 80,
	PD_RECORD_COMPRESSED = 81,
	PD_RECORD_FINISHED_INIT = 82,
	PD_RECORD_COMPRESSED2 = 83,
	PD_NRECORD_TYPES = 84,    /* the counts below: 0 counts the types beyond */
};

/* perf_event_attr.sample_type bits. */
enum {
	PD_SAMPLE_IP = 1u << 0,
	PD_SAMPLE_TID = 1u << 1,
	PD_SAMPLE_TIME = 1u << 2,
	PD_SAMPLE_ADDR = 1u << 3,
	PD_SAMPLE_READ = 1u << 4,
	PD_SAMPLE_CALLCHAIN = 1u << 5,
	PD_SAMPLE_ID = 1u << 6,
	PD_SAMPLE_CPU = 1u << 7,
	PD_SAMPLE_PERIOD = 1u << 8,
	PD_SAMPLE_STREAM_ID = 1u << 9,
	PD_SAMPLE_RAW = 1u << 10,
	PD_SAMPLE_BRANCH_STACK = 1u << 11,
	PD_SAMPLE_REGS_USER = 1u << 12,
	PD_SAMPLE_STACK_USER = 1u << 13,
	PD_SAMPLE_WEIGHT = 1u << 14,
	PD_SAMPLE_DATA_SRC = 1u << 15,
	PD_SAMPLE_IDENTIFIER = 1u << 16,
	PD_SAMPLE_TRANSACTION = 1u << 17,
	PD_SAMPLE_REGS_INTR = 1u << 18,
	PD_SAMPLE_PHYS_ADDR = 1u << 19,
	PD_SAMPLE_AUX = 1u << 20,
	PD_SAMPLE_CGROUP = 1u << 21,
	PD_SAMPLE_DATA_PAGE_SIZE = 1u << 22,
	PD_SAMPLE_CODE_PAGE_SIZE = 1u << 23,
	PD_SAMPLE_WEIGHT_STRUCT = 1u << 24,
};

/* header.misc */
#define PD_MISC_CPUMODE_MASK 7
#define PD_MISC_KERNEL 1
#define PD_MISC_USER 2
#define PD_MISC_HYPERVISOR 3
#define PD_MISC_GUEST_KERNEL 4
#define PD_MISC_GUEST_USER 5
#define PD_MISC_COMM_EXEC (1u << 13)
#define PD_MISC_SWITCH_OUT (1u << 13) /* SWITCH records: out (else in) */
#define PD_MISC_MMAP_BUILD_ID (1u << 14)
#define PD_MISC_LOST_SAMPLES_BPF (1u << 15)

/* Callchain context markers. */
#define PD_CONTEXT_HV ((uint64_t)-32)
#define PD_CONTEXT_KERNEL ((uint64_t)-128)
#define PD_CONTEXT_USER ((uint64_t)-512)
#define PD_CONTEXT_GUEST ((uint64_t)-2048)
#define PD_CONTEXT_GUEST_KERNEL ((uint64_t)-2176)
#define PD_CONTEXT_GUEST_USER ((uint64_t)-2560)
#define PD_CONTEXT_MAX ((uint64_t)-4095)

/* One event of the recording (an evsel, in perf's words). */
typedef struct pd_attr {
	uint32_t type;
	uint64_t config;
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags;            /* the bit-field word of perf_event_attr */
	uint64_t branch_sample_type;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	int sample_id_all;
	int freq;
	uint64_t sample_period;
	char *name;                /* from EVENT_DESC, or made from type/config */
	uint8_t raw[136];          /* perf_event_attr as recorded (zeros past raw_size) */
	uint32_t raw_size;
	uint64_t *ids;
	size_t nids, cap_ids;
} pd_attr;

typedef struct pd_branch {
	uint64_t from, to, flags;
} pd_branch;

typedef struct pd_sample {
	const pd_attr *attr;
	int attr_index;
	uint16_t cpumode;          /* PD_MISC_* of the record */
	uint64_t ip, time, addr, id, stream_id, period;
	uint32_t pid, tid, cpu;
	uint64_t nr_callchain;
	const uint64_t *callchain; /* leaf first, with PD_CONTEXT_* markers */
	uint32_t raw_size;         /* PD_SAMPLE_RAW: a tracepoint's fields */
	const uint8_t *raw;
	uint64_t nr_branches;
	const pd_branch *branches;
	uint64_t regs_abi;         /* 0: no user registers */
	uint64_t regs_mask;
	const uint64_t *regs_user; /* one per set bit of regs_mask */
	uint64_t stack_size;
	const uint8_t *stack_user;
	uint64_t stack_dyn_size;
} pd_sample;

/* One record, parsed as far as perf loops needs it. */
typedef struct pd_event {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	const uint8_t *raw;        /* the record, header included */
	/* MMAP, MMAP2, COMM, FORK, EXIT */
	uint32_t pid, tid, ppid, ptid;
	uint64_t start, len, pgoff;
	uint32_t prot, flags;
	const char *filename;      /* MMAP*: the mapped file; COMM: the new name */
	uint8_t build_id[20];      /* MMAP2 with PD_MISC_MMAP_BUILD_ID */
	uint8_t build_id_size;
	uint64_t lost;             /* LOST, LOST_SAMPLES */
	/* SAMPLE; for other records the sample_id_all fields (pid/tid/time/id) */
	pd_sample sample;
	int has_time;
} pd_event;

typedef struct pd_build_id {
	int32_t pid;
	uint16_t cpumode;
	uint8_t id[20];
	uint8_t size;
	char *filename;
} pd_build_id;

typedef struct pd_reader pd_reader;

/* Open PATH ("-": standard input).  On failure returns NULL and writes
 * "PATH: reason" into ERR.  Warnings (truncation, bad feature sections) are
 * collected and read with pd_warnings(). */
pd_reader *pd_open(const char *path, char *err, size_t errlen);
/* Same, over a buffer the caller keeps alive (the fuzz target uses it). */
pd_reader *pd_open_mem(const char *name, const uint8_t *data, size_t size, char *err, size_t errlen);
void pd_close(pd_reader *r);

/* The next record: 1, or 0 at the end (or where reading had to stop).
 * A record of the file stays valid until pd_close; one inflated from a
 * COMPRESSED record only until pd_next goes past its chunk: pd_keep()
 * gives a copy that lasts (and the record itself when it needs none). */
int pd_next(pd_reader *r, pd_event *ev);
const uint8_t *pd_keep(pd_reader *r, const uint8_t *raw);
/* Lazy mode: pd_next parses samples only as far as their time (and
 * ev->sample.time, has_time); pd_parse gives the rest later. */
void pd_set_lazy(pd_reader *r, int lazy);
/* While FROZEN, pd_next changes nothing that pd_parse, pd_attr_at or
 * pd_build_id_at read (records that would, HEADER_ATTR and the like, are
 * ignored with a warning): one thread may then run pd_next while another
 * parses the records it handed over (session.c). */
void pd_freeze(pd_reader *r, int frozen);
/* Parse a record returned earlier by pd_next again (records are re-read in
 * time order by the session).  0, or -1 if it does not parse. */
int pd_parse(pd_reader *r, const uint8_t *raw, pd_event *ev);

size_t pd_nattrs(const pd_reader *r);
const pd_attr *pd_attr_at(const pd_reader *r, size_t i);
size_t pd_nbuild_ids(const pd_reader *r);
const pd_build_id *pd_build_id_at(const pd_reader *r, size_t i);
const char *pd_cmdline(const pd_reader *r);   /* NULL if absent */
const char *pd_osrelease(const pd_reader *r); /* NULL if absent */
/* The first and last sample times perf record wrote in the header: 0, or
 * -1 when the file has none (pipe data, an older perf). */
int pd_sample_time_range(const pd_reader *r, uint64_t *first, uint64_t *last);
int pd_is_pipe(const pd_reader *r);
/* Data from several files (perf record --threads): each file is in time
 * order by itself, and FINISHED_ROUND says nothing across them. */
int pd_is_multipart(const pd_reader *r);
const char *pd_name(const pd_reader *r);

/* Bytes of the data that could not be read (truncation, a corrupt record). */
uint64_t pd_bytes_lost(const pd_reader *r);
/* Warnings so far, one per line, NULL if none. */
const char *pd_warnings(const pd_reader *r);

/* Feature section FEAT (perf's HEADER_* number) as the file holds it: 0,
 * or -1 when it has none.  In pipe mode, as its HEADER_FEATURE record said. */
int pd_feature(const pd_reader *r, int feat, const uint8_t **p, size_t *size);
/* A file's data offset and size and where its feature sections start:
 * 0, or -1 in pipe mode. */
int pd_file_layout(const pd_reader *r, uint64_t *data_off, uint64_t *data_size, uint64_t *feat_off);

/* How many records of TYPE were read so far (COMPRESSED ones and each
 * record inflated from them alike, as perf report --stats counts). */
uint64_t pd_record_count(const pd_reader *r, uint32_t type);
/* perf's name of a record type ("MMAP2"), or NULL. */
const char *pd_record_name(uint32_t type);

/* The event name perf would give a type/config pair. */
const char *pd_event_name(uint32_t type, uint64_t config);

#endif
