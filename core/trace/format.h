/* The trace file format, version 1: what the recorder (core/trace) writes and
 * dagger-trace (tools/trace) reads. Plain data and one checksum, nothing
 * else, so the tool needs no part of the runtime. docs/trace.md describes
 * the same format for readers in other languages.
 *
 * A trace directory holds job.meta (text, written by rank 0) and one file
 * per rank, rank-<r>.dgt:
 *
 *   file   = header, block*
 *   header = dg_trf_header_t (128 bytes)
 *   block  = dg_trf_block_t (24 bytes), then `bytes` bytes of events
 *   event  = dg_trf_ev_t (8 bytes: type, size, aux), then its fields;
 *            size counts the whole event and is a multiple of 8
 *
 * Integers are in the writer's byte order (byte_order tells which); times
 * are the writer's CLOCK_MONOTONIC in nanoseconds; add clock_offset_ns to
 * get the job clock (rank 0's). Each block is one thread's events in time
 * order; blocks of different threads interleave. A reader skips event types
 * it does not know (a later version may add some) but never a bad block. */
#ifndef DG_TRACE_FORMAT_H
#define DG_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define DG_TRF_MAGIC "DGTRACE"          /* 8 bytes with the terminating NUL */
#define DG_TRF_VERSION 1u
#define DG_TRF_BYTE_ORDER 0x01020304u
#define DG_TRF_BLOCK_MAGIC 0x4b4c4244u  /* "DBLK" */
#define DG_TRF_HOST_LEN 48
#define DG_TRF_NAME_LEN 64
#define DG_TRF_META_NAME "job.meta"
#define DG_TRF_META_VERSION 1

typedef struct dg_trf_header {
    char magic[8];
    uint32_t version;
    uint32_t header_bytes;             /* sizeof(dg_trf_header_t) */
    uint32_t byte_order;               /* DG_TRF_BYTE_ORDER as written */
    int32_t rank;
    int32_t nranks;
    uint32_t nworkers;                 /* CPU processors of this rank (worker threads) */
    uint32_t nspaces;                  /* memory spaces of this rank (0 = host) */
    uint32_t pid;
    uint64_t job_id;                   /* the same in every file of one run */
    int64_t clock_offset_ns;           /* local time + offset = job clock */
    uint64_t clock_uncert_ns;          /* the offset is exact to +- this */
    uint64_t start_ns;                 /* local clock when recording began */
    uint64_t unix_start_ns;            /* CLOCK_REALTIME then, for people */
    char host[DG_TRF_HOST_LEN];
} dg_trf_header_t;

typedef struct dg_trf_block {
    uint32_t magic;                    /* DG_TRF_BLOCK_MAGIC */
    uint32_t bytes;                    /* event bytes after this header */
    int32_t thread;                    /* the recording thread's number in this file */
    int32_t worker;                    /* its worker index, -1 for other threads */
    uint64_t checksum;                 /* dg_trf_checksum of the event bytes */
} dg_trf_block_t;

typedef struct dg_trf_ev {
    uint16_t type;                     /* dg_trf_type_t */
    uint16_t size;                     /* bytes of the whole event, multiple of 8 */
    uint32_t aux;                      /* meaning depends on the type */
} dg_trf_ev_t;

typedef enum dg_trf_type {
    DG_TRE_TASK = 1,     /* a task ran: aux = worker */
    DG_TRE_PLAN = 2,     /* the planner planned a task: aux = number of deps */
    DG_TRE_XFER = 3,     /* a transfer between ranks: aux = dg_trf_xfer_kind_t */
    DG_TRE_MEM = 4,      /* an allocation or release: aux = dg_trf_mem_kind_t */
    DG_TRE_PHASE = 5,    /* a phase of the submitting thread: aux = dg_trf_phase_t */
    DG_TRE_IDLE = 6,     /* a worker had nothing to do: aux = worker */
    DG_TRE_ACTOR = 7,    /* actor turns of a worker so far: aux = worker */
    DG_TRE_CHECK = 8,    /* a uniformity check: aux = check kind (core/runtime/tasks.h) */
    DG_TRE_HANG = 9,     /* a part of a hang dump: aux = dg_trf_hang_kind_t */
    DG_TRE_CODELET = 10, /* a codelet's name: aux = codelet id */
    DG_TRE_COPY = 11,    /* a local copy between buffers ran: aux = worker */
    DG_TRE_END = 12,     /* recording ended normally (last event of the file) */
    DG_TRE_MSG = 13,     /* an actor handled a message: aux = message type id */
    DG_TRE_ACTOR_NAME = 14, /* an actor's name (dg_trf_name_t): aux = actor id */
    DG_TRE_TYPE_NAME = 15   /* a message type's name (dg_trf_name_t): aux = type id */
} dg_trf_type_t;

typedef struct dg_trf_task {
    dg_trf_ev_t h;
    uint64_t t0, t1;
    uint64_t task;
    uint32_t codelet;
    uint32_t failed;                   /* 1: the region had failed when it ended */
} dg_trf_task_t;

/* Followed by aux uint64_t task ids: the task's logical dependencies. */
typedef struct dg_trf_plan {
    dg_trf_ev_t h;
    uint64_t t0, t1;                   /* time inside dg_plan_submit */
    uint64_t task;
    uint64_t region;
    uint32_t codelet;
    int32_t rank;                      /* where it runs */
    uint32_t proc;                     /* global processor id, UINT32_MAX = any CPU */
    uint32_t space;
} dg_trf_plan_t;

typedef enum dg_trf_xfer_kind {
    DG_TRX_PLANNED = 1,                /* op emitted by the planner (t = then) */
    DG_TRX_SEND_START = 2,             /* its inputs were ready; handed to the transport */
    DG_TRX_SEND_DONE = 3,
    DG_TRX_RECV_POST = 4,              /* ready to receive */
    DG_TRX_RECV_ARRIVE = 5,            /* data arrived (seq 0: the op is not known here) */
    DG_TRX_RECV_DONE = 6
} dg_trf_xfer_kind_t;

typedef struct dg_trf_xfer {
    dg_trf_ev_t h;
    uint64_t t;
    uint64_t seq;                      /* op sequence number on this rank */
    uint64_t tag;                      /* (region << 32) | transfer index */
    uint64_t bytes;
    uint64_t chunk;
    int32_t peer;
    uint32_t is_send;                  /* PLANNED: 1 send, 0 receive */
} dg_trf_xfer_t;

typedef enum dg_trf_mem_kind { DG_TRM_ALLOC = 1, DG_TRM_RELEASE = 2 } dg_trf_mem_kind_t;

typedef struct dg_trf_mem {
    dg_trf_ev_t h;
    uint64_t t;
    uint64_t chunk;                    /* 0 for a release (memory is not named then) */
    uint64_t bytes;
    uint32_t space;
    uint32_t home;                     /* 1: a chunk's own storage, 0: a temporary slot */
} dg_trf_mem_t;

typedef enum dg_trf_phase {
    DG_TRP_CLOCK_SYNC = 1,             /* start-up: clock offsets between ranks */
    DG_TRP_REGION_BEGIN = 2,
    DG_TRP_REGION_PLAN_END = 3,        /* dg_plan_region_end: copy-back planning */
    DG_TRP_REGION_WAIT = 4,            /* waiting for this rank's ops */
    DG_TRP_REGION_AGREE = 5            /* agreeing on the region's status */
} dg_trf_phase_t;

typedef struct dg_trf_phase_ev {
    dg_trf_ev_t h;
    uint64_t t0, t1;
    uint64_t region;
    int32_t status;
    uint32_t pad;
} dg_trf_phase_ev_t;

typedef struct dg_trf_span {           /* IDLE */
    dg_trf_ev_t h;
    uint64_t t0, t1;
} dg_trf_span_t;

typedef struct dg_trf_count {          /* ACTOR */
    dg_trf_ev_t h;
    uint64_t t;
    uint64_t count;
} dg_trf_count_t;

typedef struct dg_trf_check {
    dg_trf_ev_t h;
    uint64_t t0, t1;
    uint64_t task;
    uint64_t hash;
    uint32_t codelet;
    int32_t status;                    /* 0: the ranks agreed, 1: they diverged */
} dg_trf_check_t;

typedef enum dg_trf_hang_kind {
    DG_TRH_BEGIN = 1,    /* seq = ops finished, tag = ops emitted; followed by text: why */
    DG_TRH_OP = 2,       /* an unfinished op */
    DG_TRH_WAITER = 3,   /* seq waits for op `task` (an edge of the wait graph) */
    DG_TRH_RUNNING = 4,  /* worker `peer` runs task `task` since t0 */
    DG_TRH_RECV_WAIT = 5,/* a posted receive whose data never came */
    DG_TRH_EARLY = 6,    /* data that came before its receive was planned */
    DG_TRH_END = 7
} dg_trf_hang_kind_t;

/* The kinds of ops a hang dump names (the planner's op kinds). */
typedef enum dg_trf_op_kind {
    DG_TRF_OP_LAUNCH = 1, DG_TRF_OP_SEND = 2, DG_TRF_OP_RECV = 3, DG_TRF_OP_COPY = 4,
    DG_TRF_OP_ALLOC = 5, DG_TRF_OP_FREE = 6, DG_TRF_OP_REGION_END = 7
} dg_trf_op_kind_t;

typedef struct dg_trf_hang {
    dg_trf_ev_t h;
    uint64_t t;
    uint64_t t0;                       /* RUNNING: when the task started */
    uint64_t seq;
    uint64_t tag;
    uint64_t chunk;
    uint64_t bytes;
    uint64_t task;
    int32_t peer;
    uint32_t opkind;                   /* dg_trf_op_kind_t */
    int32_t pending;                   /* dependencies not finished yet */
    uint32_t codelet;
} dg_trf_hang_t;

typedef struct dg_trf_name {           /* CODELET */
    dg_trf_ev_t h;
    char name[DG_TRF_NAME_LEN];
} dg_trf_name_t;

typedef struct dg_trf_copy {
    dg_trf_ev_t h;
    uint64_t t0, t1;
    uint64_t bytes;
} dg_trf_copy_t;

typedef struct dg_trf_msg {          /* MSG: recorded by the thread that ran the turn */
    dg_trf_ev_t h;
    uint64_t t;
    int32_t from_rank;                 /* the sender (rank -1: a plain thread of ...) */
    uint32_t from_id;                  /* ...this rank; 0: no actor, 0xffffffff: a future */
    uint32_t actor;                    /* the actor of this rank that handled it */
    uint32_t size;                     /* payload bytes */
} dg_trf_msg_t;

typedef struct dg_trf_end {
    dg_trf_ev_t h;
    uint64_t t;
    uint64_t events;                   /* events written, this one excluded */
    uint64_t dropped;                  /* events lost (a failed write, no memory) */
} dg_trf_end_t;

_Static_assert(sizeof(dg_trf_header_t) == 128, "trace header layout");
_Static_assert(sizeof(dg_trf_block_t) == 24, "trace block layout");
_Static_assert(sizeof(dg_trf_task_t) % 8 == 0 && sizeof(dg_trf_plan_t) % 8 == 0 &&
               sizeof(dg_trf_xfer_t) % 8 == 0 && sizeof(dg_trf_mem_t) % 8 == 0 &&
               sizeof(dg_trf_phase_ev_t) % 8 == 0 && sizeof(dg_trf_hang_t) % 8 == 0 &&
               sizeof(dg_trf_check_t) % 8 == 0 && sizeof(dg_trf_name_t) % 8 == 0 &&
               sizeof(dg_trf_msg_t) % 8 == 0,
               "trace events are whole 8-byte words");

/* The checksum of a block's events: FNV-1a over 64-bit words (bytes is a
 * multiple of 8). Cheap enough to run on every flush. */
static inline uint64_t dg_trf_checksum(const void *data, size_t bytes)
{
    const unsigned char *p = (const unsigned char *)data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
        uint64_t w;
        __builtin_memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    return h ^ (h >> 32);
}

#endif
