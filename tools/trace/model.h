/* A trace directory loaded into memory: every rank's events joined into
 * tasks, transfers and per-rank records, on one clock (the job clock, in ns
 * from the earliest start of any rank). */
#ifndef TR_MODEL_H
#define TR_MODEL_H

#include <stdint.h>

#include "core/trace/format.h"
#include "util.h"

#define TR_NONE INT64_MIN   /* a time that was not recorded */

typedef struct tr_task {
    uint64_t id;
    uint64_t region;
    uint32_t codelet;
    int32_t rank;           /* where the plan put it */
    uint32_t proc;          /* global processor id, UINT32_MAX = any CPU of the rank */
    int32_t worker;         /* the worker that ran it, -1 if no run was recorded */
    uint32_t ndeps;
    size_t deps_at;         /* its dependencies: trace deps[deps_at .. +ndeps) */
    int64_t t0, t1;         /* its run */
    int64_t plan_t0;        /* the planner's time for it on the rank that runs it */
    int64_t planned_at;     /* (its end: when that rank had planned it) */
    int planned, ran, failed;
} tr_task_t;

typedef struct tr_xfer {
    uint64_t tag, bytes, chunk;
    int32_t src, dst;
    uint64_t send_seq, recv_seq;
    int64_t planned_send, planned_recv;   /* when each side's planner emitted it */
    int64_t send_t0, send_t1;             /* sender: ready .. completed */
    int64_t post, arrive, recv_t1;        /* receiver: posted, data came, done */
} tr_xfer_t;

typedef struct tr_span {    /* idle spans, copies, phases, uniformity checks */
    int64_t t0, t1;
    uint32_t kind;          /* phase or check kind; worker for idle spans and copies */
    int32_t status;
    uint64_t a, b;          /* phase: region; copy: bytes; check: task, hash */
} tr_span_t;

typedef struct tr_mem {
    int64_t t;
    int64_t delta;          /* bytes: + allocation, - release */
    uint32_t space;
    int home;
    uint64_t chunk;
} tr_mem_t;

typedef struct tr_count {
    int64_t t;
    int32_t worker;
    uint64_t count;
} tr_count_t;

typedef struct tr_msg {     /* a message an actor of the rank handled */
    int64_t t;
    uint32_t type, actor;   /* message type id; the handling actor's id */
    int32_t from_rank;      /* the sender (from_id 0: a plain thread) */
    uint32_t from_id;
} tr_msg_t;

typedef struct tr_name {    /* an actor's or a message type's name */
    uint32_t id;
    char name[DG_TRF_NAME_LEN];
} tr_name_t;

typedef struct tr_hang_op {
    uint64_t seq, tag, chunk, bytes, task;
    int64_t t0;             /* RUNNING: task start */
    int32_t peer, pending;  /* RUNNING: peer is the worker */
    uint32_t kind, codelet;
} tr_hang_op_t;

typedef struct tr_hang_edge {
    uint64_t waiter, op;    /* op seq `waiter` waits for op seq `op` */
} tr_hang_edge_t;

typedef struct tr_hang {
    int64_t t;
    char why[256];
    uint64_t retired, emitted;
    int complete;           /* its end record was written */
    tr_vec_t ops, edges, running, recv_wait, early;   /* tr_hang_op_t, tr_hang_edge_t */
} tr_hang_t;

typedef struct tr_rank {
    char *path;
    dg_trf_header_t hdr;
    int64_t meta_offset;    /* what job.meta says, checked against the header */
    uint32_t meta_workers;
    uint32_t meta_cpus;     /* CPUs the process could run on, its host's online CPUs: */
    uint32_t meta_online;   /* 0 when job.meta does not say (traces before they were kept) */
    unsigned char *raw;     /* the file, between reading and parsing */
    size_t raw_size;
    int complete;           /* the end record was found */
    uint64_t events, dropped;
    int64_t start, last;    /* first and last time seen */
    tr_vec_t idle, copies, phases, checks;  /* tr_span_t */
    tr_vec_t mem;           /* tr_mem_t */
    tr_vec_t actors;        /* tr_count_t */
    tr_vec_t msgs;          /* tr_msg_t */
    tr_vec_t actor_names;   /* tr_name_t */
    tr_vec_t hangs;         /* tr_hang_t */
    double plan_ns;         /* time in the planner, over every task it planned */
    uint64_t planned;       /* tasks it planned */
    uint64_t last_planned;  /* highest task id it planned */
} tr_rank_t;

typedef struct tr_codelet {
    uint32_t id;
    uint32_t index;         /* legend order (by name) */
    char name[DG_TRF_NAME_LEN];
} tr_codelet_t;

typedef struct tr_trace {
    char *dir;
    int nranks;
    int deps_recorded;      /* 0: recorded with DAGGER_TRACE_DEPS=0 (no dependencies) */
    uint64_t job_id;
    tr_rank_t *ranks;
    tr_task_t *tasks;       /* by id; tasks[0] unused */
    uint64_t ntasks;        /* highest id + 1 */
    uint64_t planned, ran;  /* tasks with a plan / a run */
    tr_vec_t deps;          /* uint64_t */
    tr_vec_t xfers;         /* tr_xfer_t */
    tr_map_t xfer_by_tag;
    tr_vec_t codelets;      /* tr_codelet_t */
    tr_map_t codelet_by_id;
    tr_vec_t type_names;    /* tr_name_t: message types (the same ids on every rank) */
    int64_t origin;         /* job clock of time 0 */
    int64_t t_begin, t_end; /* the traced work: first region begin .. last region end */
    char error[1024];       /* why loading failed */
} tr_trace_t;

/* The largest time (or clock offset) a trace may hold, in ns: 2^59, about
 * 18 years of a monotonic clock. Bounded so that job times (sums of two)
 * and their differences never overflow. */
#define TR_MAX_TIME_NS (1ull << 59)
/* The most worker threads and memory spaces a rank file may describe (the
 * tools loop over them per task). */
#define TR_MAX_WORKERS 4096
#define TR_MAX_SPACES 256

/* Loads dir (job.meta and rank-<r>.dgt). 0 on success; -1 with tr->error
 * naming the file and the byte offset of the problem. */
int tr_load(tr_trace_t *tr, const char *dir);
void tr_free(tr_trace_t *tr);

const char *tr_codelet_name(const tr_trace_t *tr, uint32_t id);
/* Names of a message type, and of an actor of rank r ("?" when unnamed). */
const char *tr_type_name(const tr_trace_t *tr, uint32_t id);
const char *tr_actor_name(const tr_trace_t *tr, int r, uint32_t id);
/* Legend index of a codelet (0.. in name order), for colours. */
uint32_t tr_codelet_index(const tr_trace_t *tr, uint32_t id);
const tr_xfer_t *tr_xfer_find(const tr_trace_t *tr, uint64_t tag);
/* NULL (t has no dependencies) while the trace recorded none: an offset,
 * even 0, from a null pointer is undefined (found by fuzzing). */
static inline const uint64_t *tr_task_deps(const tr_trace_t *tr, const tr_task_t *t)
{
    return tr->deps.data ? (const uint64_t *)tr->deps.data + t->deps_at : NULL;
}

/* Internal to loading (read.c, meta.c, build.c). */
int tr_fail(tr_trace_t *tr, const char *path, long long offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int tr_read_meta(tr_trace_t *tr, const char *path);
/* The whole file (malloc'ed, plus a NUL byte after its size bytes). */
int tr_read_file(tr_trace_t *tr, const char *path, unsigned char **data, size_t *size);
/* Reads a rank file and checks its header; tr_parse_rank then reads its
 * events (once tr->origin is known from every header). */
int tr_read_rank(tr_trace_t *tr, int rank, const char *path);
/* The same for the size bytes of a rank file already in memory (malloc'ed;
 * tr takes them); tests/fuzz feeds its inputs here. */
int tr_take_rank(tr_trace_t *tr, int rank, const char *path, unsigned char *data, size_t size);
int tr_parse_rank(tr_trace_t *tr, int rank);
/* tr_load in steps, for inputs that are not files: tr_load_begin empties tr
 * for dir; then job.meta (tr_read_meta or tr_parse_meta) and every rank's
 * header (tr_read_rank or tr_take_rank); tr_load_events reads the events.
 * tr_free frees tr after any step. */
void tr_load_begin(tr_trace_t *tr, const char *dir);
int tr_load_events(tr_trace_t *tr);
/* job.meta's len bytes of text (text[len] must be NUL; lines are cut in
 * place). */
int tr_parse_meta(tr_trace_t *tr, const char *path, char *text, size_t len);
void tr_rank_init(tr_rank_t *rk);
tr_task_t *tr_task_slot(tr_trace_t *tr, uint64_t id);
tr_xfer_t *tr_xfer_slot(tr_trace_t *tr, uint64_t tag);
void tr_finish_load(tr_trace_t *tr);

#endif
