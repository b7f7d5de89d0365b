/* The deterministic planner (prefix dg_plan_): every rank feeds it the same
 * submissions and gets the same global plan, of which it emits only its own
 * part as a stream of ops. No communication, clocks, pointers or arrival
 * order influence a decision. docs/planner.md describes the model, the rules
 * and the op stream in full. */
#ifndef DG_PLAN_PLAN_H
#define DG_PLAN_PLAN_H

#include <dagger/status.h>
#include <dagger/types.h>
#include <stddef.h>
#include <stdint.h>

#include "core/plan/spans.h"
#include "core/plan/view.h"

typedef struct dg_plan dg_plan_t;

/* ---- processors ---- */

/* DG_PLAN_TESTDEV: the test device kind (DAGGER_TEST_DEVICES), a device like
 * a GPU whose tasks run the codelet's CPU implementation on its memory. */
typedef enum dg_plan_kind {
    DG_PLAN_CPU = 0, DG_PLAN_CUDA = 1, DG_PLAN_HIP = 2, DG_PLAN_TESTDEV = 3
} dg_plan_kind_t;
#define DG_PLAN_NKINDS 4
#define DG_PLAN_KIND_BIT(k) (1u << (k))
#define DG_PLAN_KINDS_ALL 15u
#define DG_PLAN_DEVICE_KINDS (DG_PLAN_KINDS_ALL & ~DG_PLAN_KIND_BIT(DG_PLAN_CPU))

/* "Any CPU thread of this rank": the executor picks the thread at run time. */
#define DG_PLAN_ANY_CPU UINT32_MAX

typedef struct dg_plan_rank_desc {
    uint32_t ncpus;                /* CPU threads, at least 1 */
    uint32_t ndevs;
    const dg_plan_kind_t *devs;    /* device kinds (CUDA, HIP, TESTDEV), in device order */
} dg_plan_rank_desc_t;

/* ---- scopes ---- */

/* A conjunction of filters; an empty list means "no restriction". With
 * parts, a processor must also be admitted by at least one part (a union):
 * each part is a conjunction of its own lists and kinds, where kinds 0 means
 * CPU only unless the part names processors (what the part would mean as a
 * scope alone). Parts have no parts of their own. */
typedef struct dg_plan_scope {
    const int32_t *ranks;
    uint32_t nranks;
    uint32_t kinds;                /* DG_PLAN_KIND_BIT mask; 0 = default (CPU only) */
    const uint32_t *procs;         /* exact processors (global ids) */
    uint32_t nprocs;
    const struct dg_plan_scope *parts; /* the union, at most DG_PLAN_MAX_PARTS */
    uint32_t nparts;
} dg_plan_scope_t;
#define DG_PLAN_MAX_PARTS 64

/* ---- codelets ---- */

typedef struct dg_plan_codelet_desc {
    const char *name;              /* id = dg_name_id(name) */
    uint32_t kinds;                /* implementations: DG_PLAN_KIND_BIT mask, non-zero */
    uint32_t ret_size;             /* bytes of the return value, up to DG_PLAN_MAX_RET; 0 = none */
    const dagger_dtype_t *dtypes;  /* optional: expected dtype per argument (0 = any) */
    uint32_t ndtypes;              /* 0 = unchecked; otherwise the exact argument count */
    double cost;                   /* optional hint; recorded, unused by placement */
} dg_plan_codelet_desc_t;

#define DG_PLAN_MAX_RET (1u << 30)
#define DG_PLAN_MAX_VALUE (1u << 20) /* a by-value argument's bytes (DAGGER_MAX_VALUE) */

/* ---- chunks ---- */

typedef struct dg_plan_chunk_desc {
    int32_t owner;                 /* rank that holds the data */
    uint32_t home_space;           /* 0 = host, 1 + d = device d of the owner */
    dg_plan_geom_t geom;           /* dtype, ndims, dims, strides (0 = dense) */
} dg_plan_chunk_desc_t;

/* ---- tasks ---- */

typedef enum dg_plan_arg_kind {
    DG_PLAN_ARG_VIEW = 1,          /* a view of a chunk with an access mode */
    DG_PLAN_ARG_VALUE = 2,         /* bytes passed by value */
    DG_PLAN_ARG_FUTURE = 3         /* the return value of an earlier task (mode 0 = IN) */
} dg_plan_arg_kind_t;

typedef struct dg_plan_arg {
    dg_plan_arg_kind_t kind;
    dagger_access_t mode;          /* VIEW; FUTURE: IN (or 0), OUT or INOUT */
    dg_plan_view_t view;           /* VIEW */
    const void *value;             /* VALUE */
    size_t len;                    /* VALUE */
    uint64_t future;               /* FUTURE: the future's chunk id (dg_plan_submitted_t) */
} dg_plan_arg_t;

typedef struct dg_plan_task_desc {
    uint32_t codelet;
    const dg_plan_arg_t *args;
    uint32_t nargs;
    const dg_plan_scope_t *scope;  /* NULL = any */
    int32_t priority;
    const uint64_t *deps;          /* explicit dependencies: ids of earlier tasks */
    uint32_t ndeps;
    uint32_t ret_size;             /* bytes of its return value; 0 = the codelet's */
} dg_plan_task_desc_t;

typedef struct dg_plan_submitted {
    uint64_t task;                 /* task id */
    uint64_t future;               /* chunk id of its return value, 0 if none */
    int32_t rank;                  /* where it runs */
    uint32_t proc;                 /* global processor id or DG_PLAN_ANY_CPU */
    uint32_t space;
    uint32_t bytes;                /* the size of its future (0: none) */
} dg_plan_submitted_t;

/* ---- the op stream ---- */

typedef enum dg_plan_op_kind {
    DG_PLAN_OP_LAUNCH = 1,
    DG_PLAN_OP_SEND = 2,
    DG_PLAN_OP_RECV = 3,
    DG_PLAN_OP_COPY = 4,
    DG_PLAN_OP_ALLOC = 5,
    DG_PLAN_OP_FREE = 6,
    DG_PLAN_OP_REGION_END = 7
} dg_plan_op_kind_t;

/* A buffer: the one copy of a chunk in one memory space of this rank. */
typedef struct dg_plan_buf {
    uint64_t chunk;                /* 0 for a zero-byte signal */
    uint32_t space;
} dg_plan_buf_t;

typedef struct dg_plan_op_arg {
    dg_plan_arg_kind_t kind;
    dagger_access_t mode;          /* VIEW, FUTURE: IN, OUT or INOUT */
    dg_plan_buf_t buf;             /* VIEW, FUTURE */
    const dg_plan_geom_t *geom;    /* VIEW, FUTURE: the buffer's layout */
    dg_plan_view_t view;           /* VIEW: the elements within the buffer */
    const void *value;             /* VALUE */
    size_t len;                    /* VALUE; FUTURE: bytes of the value */
} dg_plan_op_arg_t;

typedef struct dg_plan_op {
    uint64_t seq;                  /* per-rank sequence number, from 1, never reused */
    dg_plan_op_kind_t kind;
    uint32_t ndeps;
    const uint64_t *deps;          /* seqs of earlier ops of this rank, sorted */
    union {
        struct {
            uint64_t task;
            uint32_t codelet;
            uint32_t proc;         /* global id or DG_PLAN_ANY_CPU */
            uint32_t space;        /* memory space the arguments live in */
            int32_t priority;
            uint32_t nargs;
            const dg_plan_op_arg_t *args;
            dg_plan_buf_t ret;     /* return value buffer (host space), chunk 0 if none */
            uint32_t ret_size;
        } launch;
        struct {                   /* SEND and RECV */
            uint64_t tag;          /* (region << 32) | transfer index in the region */
            int32_t peer;
            uint32_t peer_space;   /* the memory space of the other half on peer (0: host) */
            dg_plan_buf_t buf;
            uint64_t version;      /* chunk version the data belongs to */
            uint32_t elsize;       /* bytes per element */
            uint32_t nspans;
            const dg_plan_span_t *spans; /* element offsets in the buffer */
            uint64_t bytes;
        } xfer;
        struct {
            dg_plan_buf_t src, dst;
            uint32_t elsize;
            uint32_t nspans;
            const dg_plan_span_t *spans;
            uint64_t bytes;
        } copy;
        struct {                   /* ALLOC and FREE */
            dg_plan_buf_t buf;
            uint64_t bytes;
            int home;              /* the chunk's own storage (futures; FREE of a freed chunk) */
            int cached;            /* ALLOC: reuse a kept allocation of this size;
                                      FREE: keep the allocation for reuse */
        } mem;
        struct {
            uint64_t region;
            uint64_t nops;         /* ops of this rank in the region, this one excluded */
        } region;
    } u;
} dg_plan_op_t;

typedef void (*dg_plan_emit_fn)(void *ctx, const dg_plan_op_t *op);

/* What every rank learns about each planned task (tests, trace DAG). */
typedef struct dg_plan_task_info {
    uint64_t task;
    uint32_t codelet;
    int32_t rank;
    uint32_t proc;
    uint32_t space;
    uint32_t ndeps;
    const uint64_t *deps;          /* logical dependencies (task ids, sorted) */
    uint64_t hash;                 /* uniformity hash after this task */
    uint64_t future;
} dg_plan_task_info_t;

typedef struct dg_plan_params {
    int32_t nranks;
    int32_t my_rank;
    const dg_plan_rank_desc_t *ranks;  /* nranks entries */
    dg_plan_emit_fn emit;              /* required */
    void *emit_ctx;
    void (*on_task)(void *ctx, const dg_plan_task_info_t *info); /* optional */
    void *task_ctx;
    int no_task_deps;                  /* on_task gets no dependencies; none are computed */
    uint64_t slot_cache_bytes;         /* per memory space; DAGGER_SLOT_CACHE */
    uint32_t dep_window;               /* explicit deps reach this many tasks back; 0 = 65536 */
    /* The executor's promise: before it starts op s, every op <= s - retire_window
     * of this rank has finished (its ring of that many slots). Accesses that old
     * leave the planner's histories, whose memory then stays bounded however
     * often a chunk is read. 0: no promise, keep them all. */
    uint64_t retire_window;
    /* Regions of at most this many tasks are recorded, and a region that
     * repeats a recorded one's inputs gets its plan back instead of being
     * planned again (replay.h); 0: never. */
    uint32_t replay_tasks;
} dg_plan_params_t;

typedef struct dg_plan_stats {
    /* transfers, copies, bytes_moved: this rank's part (ops it emitted);
     * planned_transfers, planned_copies: the whole job's, the same on every rank */
    uint64_t tasks, ops, transfers, copies, bytes_moved;
    uint64_t planned_transfers, planned_copies;
    uint64_t live_chunks;
    /* region replay (replay.h): tasks whose plan came from a recording,
     * tasks of those planned again when their region stopped matching, and
     * times another recording of the same first tasks took over instead */
    uint64_t replayed_tasks, replay_replanned, replay_switches;
    uint64_t mem_in_use, mem_peak, mem_reserved, mem_sys_bytes, mem_sys_calls;
} dg_plan_stats_t;

dagger_status_t dg_plan_create(const dg_plan_params_t *params, dg_plan_t **out);
void dg_plan_destroy(dg_plan_t *p);

/* Global processor ids: processors sorted by (rank, kind, index). */
uint32_t dg_plan_nprocs(const dg_plan_t *p);
dagger_status_t dg_plan_proc_id(const dg_plan_t *p, int32_t rank, dg_plan_kind_t kind,
                                uint32_t index, uint32_t *id);
dagger_status_t dg_plan_proc_info(const dg_plan_t *p, uint32_t id, int32_t *rank,
                                  dg_plan_kind_t *kind, uint32_t *index);

/* Registering the same name again with the same description is a no-op; a
 * different description is DAGGER_ERR_EXISTS. */
dagger_status_t dg_plan_codelet_register(dg_plan_t *p, const dg_plan_codelet_desc_t *d,
                                         uint32_t *id);

dagger_status_t dg_plan_chunk_create(dg_plan_t *p, const dg_plan_chunk_desc_t *d, uint64_t *id);
/* The memory space of rank's first device of kind (a device kind): 1 + the
 * number of the rank's devices before it (procs.c's order). DAGGER_ERR_SCOPE
 * naming the rank and the kind where the rank has none. */
dagger_status_t dg_plan_device_space(const dg_plan_t *p, int32_t rank, dg_plan_kind_t kind,
                                     uint32_t *space);
/* Frees a chunk (or a future). Inside a region its buffers are freed once
 * every earlier op on them is done; its contents are discarded. */
dagger_status_t dg_plan_chunk_free(dg_plan_t *p, uint64_t id);
/* The layout of a live chunk, or NULL. */
const dg_plan_geom_t *dg_plan_chunk_geom(const dg_plan_t *p, uint64_t id);
/* The same for a live data chunk only: NULL for a future too. */
const dg_plan_geom_t *dg_plan_data_chunk_geom(const dg_plan_t *p, uint64_t id);
/* The owning rank of a live chunk (query.c). DAGGER_ERR_NOT_FOUND otherwise. */
dagger_status_t dg_plan_chunk_owner(const dg_plan_t *p, uint64_t id, int32_t *owner);
/* The id of the last task planned to write a live chunk or future (0: none
 * yet), so the runtime can tell whether a failed task produced its data. */
dagger_status_t dg_plan_chunk_writer(dg_plan_t *p, uint64_t id, uint64_t *task);
/* Failures (the runtime learns them; the plan does not change): after a
 * region whose tasks from `first` on are suspect, marks every live chunk such
 * a task wrote with tag (non-zero). Later, a task that reads a marked chunk
 * marks what it writes with the same tag; a write of a whole chunk from
 * unmarked data (Out) clears the mark; other writes keep it. */
void dg_plan_taint(dg_plan_t *p, uint64_t first, uint32_t tag);
/* The mark of a live chunk (0: none). */
dagger_status_t dg_plan_chunk_taint(const dg_plan_t *p, uint64_t id, uint32_t *tag);

dagger_status_t dg_plan_region_begin(dg_plan_t *p, const dg_plan_scope_t *scope);
/* Copies changed data home, frees or caches slots, emits REGION_END. */
dagger_status_t dg_plan_region_end(dg_plan_t *p);

/* Inside a region: plans the copy of a chunk's (or future's) stale parts to
 * its home, so that once this rank's ops so far are done the owner's storage
 * holds the current contents (fetch inside a region). Outside: nothing to do. */
dagger_status_t dg_plan_chunk_sync_home(dg_plan_t *p, uint64_t id);

/* Plans one task. On any error nothing is planned and no state changes. */
dagger_status_t dg_plan_submit(dg_plan_t *p, const dg_plan_task_desc_t *t,
                               dg_plan_submitted_t *out);

/* The running uniformity hash over every planning input so far (codelet
 * registrations only through the tasks that use them: their order is free). */
uint64_t dg_plan_hash(const dg_plan_t *p);
/* The same without by-value bytes: what every rank must have planned alike
 * for its transfers and placement to match, whatever padding a program's
 * own value structs carry (the region ends compare it, checking on or off). */
uint64_t dg_plan_shape_hash(const dg_plan_t *p);
/* The hash of a registered codelet's name and description (0: unknown id). */
uint64_t dg_plan_codelet_hash(const dg_plan_t *p, uint32_t id);
void dg_plan_get_stats(const dg_plan_t *p, dg_plan_stats_t *st);

/* Launch order: Kahn's algorithm with a FIFO frontier seeded in submission
 * order. Node i (0..n-1) depends on deps[dep_off[i] .. dep_off[i+1]) (indices
 * of earlier nodes). Writes the order to order[n]; DAGGER_ERR_CYCLE if some
 * nodes can never run. */
dagger_status_t dg_plan_launch_order(uint32_t n, const uint32_t *dep_off, const uint32_t *deps,
                                     uint32_t *order);

#endif
