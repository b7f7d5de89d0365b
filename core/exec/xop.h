/* Executor ops: the runtime copy of one planned op of this rank, with the
 * edges that make it wait for earlier ops.
 *
 * Ops live in a ring indexed by their sequence number, so a dependency on op
 * d is a look at ring[d & mask]; the ring's size is the window of ops in
 * flight (back-pressure). Dependencies are registered without locks: each
 * waiting op owns one edge per dependency, pushed on the dependency's
 * successor stack; completion swaps that stack for DG_XOP_CLOSED and
 * releases the successors it held. */
#ifndef DG_EXEC_XOP_H
#define DG_EXEC_XOP_H

#include <stdatomic.h>
#include <stdint.h>

#include <dagger/task.h>

#include "core/plan/plan.h"

typedef struct dg_xop dg_xop_t;

typedef struct dg_xedge {
    struct dg_xedge *next;
    dg_xop_t *op; /* the waiting op */
} dg_xedge_t;

#define DG_XOP_CLOSED ((dg_xedge_t *)(uintptr_t)1)

/* An edge released before its dependency finished (dg_exec_release_early)
 * has the low bit of its op pointer set: the dependency's finish passes it
 * over, and only drops the hold it keeps on the waiting op. */
static inline dg_xop_t *dg_xedge_op(const dg_xedge_t *e)
{
    return (dg_xop_t *)((uintptr_t)e->op & ~(uintptr_t)1);
}

static inline int dg_xedge_early(const dg_xedge_t *e)
{
    return (int)((uintptr_t)e->op & 1);
}

#define DG_XOP_INLINE_EDGES 4
/* The argument block of a launch lives here when it fits (two view
 * arguments and a small value), else in a pool block or a malloc'ed blob
 * (blobpool.h). Not larger: every
 * byte of a slot is touched once per slot of the ring (16384 by default,
 * 65536 until 2026-12-07, DAGGER_TASK_WINDOW), and the ring's first pass takes a huge-page fault
 * every 2 MB, 0.4-3.5 ms each on these machines. With 640 bytes (five views
 * inline, no malloc) the ring grew from 32 to 58 MB and Task Bench's spread
 * on 2 ranks x 1 thread, whose METG sweep decides within the ring's first
 * pass, went from 7 to 15 us (three alternated runs each; 7.1 us again with
 * an 8192-op window). */
#define DG_XOP_INLINE_BLOB 256

/* A view or future argument resolved to memory at emit time. */
typedef struct dg_xarg {
    dg_plan_arg_kind_t kind;
    dagger_access_t mode;
    void *data;                       /* the view's origin, the value or the future */
    size_t bytes;                     /* values and futures */
    dagger_dtype_t dtype;
    dagger_modifier_t mod;
    uint32_t ndims;
    size_t dims[DAGGER_MAX_DIMS];
    size_t strides[DAGGER_MAX_DIMS];
} dg_xarg_t;

typedef struct dg_xlaunch {
    uint64_t task;
    uint32_t codelet;
    int32_t worker;                   /* exact worker, or -1 for any CPU worker */
    int32_t device;                   /* device index (space - 1), or -1: a CPU task */
    uint32_t proc;                    /* the planned processor (global id or DG_PLAN_ANY_CPU) */
    int32_t priority;
    uint32_t nargs;
    dg_xarg_t *args;
    void *ret;                        /* return value buffer, NULL if none */
    uint32_t ret_size;
    /* A device task's check once its queued work is done (dagger_task_after);
     * NULL: none. Set by the implementation, cleared when it ran. */
    dagger_task_check_fn after;
    void *after_arg;
    /* A device task released before some of its dependencies finished
     * (DAGGER_GPU_CHAIN): the device's record of their events, which its
     * streams wait for (devices/dev_proc.c); NULL otherwise. */
    void *dev_waits;
} dg_xlaunch_t;

typedef struct dg_xxfer {
    uint64_t tag;
    int32_t peer;
    uint64_t chunk, version;
    uint32_t elsize, nspans;
    dg_plan_span_t *spans;            /* element offsets into base */
    unsigned char *base;
    uint64_t bytes;
    uint32_t space;                   /* the buffer's memory space */
    uint32_t peer_space;              /* the other half's memory space on peer */
    uint32_t ipc;                     /* through IPC handles (devices/dev_ipc.c): the bytes of
                                         the handle message in staged, which is all that goes
                                         on the wire; 0: the data itself goes */
    unsigned char *staged;            /* host-staged device transfer: the packed bytes in
                                         pinned memory (xfer.c sends/receives these) */
    void *pipe;                       /* a transfer of device memory in pieces: the device's
                                         state (devices/dev_pipe.c); xfer.c hands a RECV's
                                         pieces to the device when set */
} dg_xxfer_t;

typedef struct dg_xcopy {
    unsigned char *src, *dst;
    uint32_t src_space, dst_space;
    uint32_t elsize, nspans;
    dg_plan_span_t *spans;
    unsigned char *staged;            /* between two devices: the packed bytes in pinned memory */
} dg_xcopy_t;

struct dg_xop {
    uint64_t seq;                     /* written by the submitting thread only */
    dg_plan_op_kind_t kind;
    _Atomic(dg_xedge_t *) succ;       /* waiting ops, or DG_XOP_CLOSED once done */
    _Atomic int32_t pending;          /* unfinished dependencies + 1 while registering */
    _Atomic int retired;              /* 1 once done and its memory may be reused */
    _Atomic int32_t holds;            /* 1 until done, +1 per early-released edge of it not yet
                                         passed over by its dependency's finish: its edges are
                                         still in that dependency's successor stack, so the
                                         slot is reused only once this reaches 0 */
    uint64_t ready_order;             /* when it became ready (FIFO among ready work) */
    dg_xop_t *link;                   /* the finishing thread's list of trivial ready ops */
    dg_xedge_t inline_edges[DG_XOP_INLINE_EDGES];
    dg_xedge_t *edges;                /* inline_edges, a pool block or a malloc'ed array */
    void *blob;                       /* payload when inline_blob is too small: a pool
                                         block (blobpool.h) or, larger, malloc'ed */
    uint8_t blob_big, edges_big;      /* where they came from: 0 the small pool,
                                         1 the big pool, 2 malloc (exec.c) */
    size_t free_bytes;                /* FREE: size of free_ptr... */
    uint32_t free_space;              /* ...and its memory space */
    union {
        dg_xlaunch_t launch;
        dg_xxfer_t xfer;
        dg_xcopy_t copy;
        void *free_ptr;               /* FREE: memory to release when it runs */
    } u;
    _Alignas(16) unsigned char inline_blob[DG_XOP_INLINE_BLOB];
};

/* The order in which a finished op releases its waiters, given its closed
 * successor stack (the last-planned waiter on top): sends first, in the
 * plan's order, the order their consumers need them in (a panel's pivots,
 * then its row blocks); the rest as they come, last-planned first. Released
 * last-first, a step's 4 KiB of pivots waited behind seven 2 MiB blocks on
 * their way to the other rank, and the other rank's first task of the step
 * started 13-37 ms after the panel ended; 0.4 ms after with sends in plan
 * order (tiled LU, N = 4096, tiles 512, 2 ranks x 1 thread). Releasing the
 * local waiters in plan order too cost the 1 x 2 Cholesky about 2 %, so
 * one rank's order stays as it was. */
static inline dg_xedge_t *dg_xedge_release_order(dg_xedge_t *e)
{
    dg_xedge_t *sends = NULL, *sends_last = NULL, *rest = NULL, **tail = &rest;
    while (e) {
        dg_xedge_t *n = e->next;
        if (!dg_xedge_early(e) && dg_xedge_op(e)->kind == DG_PLAN_OP_SEND) {
            if (!sends)
                sends_last = e;
            e->next = sends;
            sends = e;
        } else {
            *tail = e;
            tail = &e->next;
        }
        e = n;
    }
    *tail = NULL;
    if (!sends)
        return rest;
    sends_last->next = rest;
    return sends;
}

#endif
