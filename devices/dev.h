/* The actors of a device (any kind: CUDA, HIP, the test device kind), built
 * on the backend calls of devices/common/device.h only:
 *   - a processor actor ("<label> <i>", devices/dev_proc.c) with a small
 *     pool of streams: a dagger.dev.launch message runs a task's
 *     implementation for the device's kind with a stream current;
 *   - a memory-space actor ("mem:<label> <i>", devices/dev_space.c): a
 *     caching allocator of device memory, pinned host staging buffers,
 *     copies between host and device memory (strided, sub-view and
 *     triangular data packed by the backend's pack kernel), and the
 *     host-staged transfers to and from other ranks.
 * Neither waits for the device: each records an event after the work it
 * queued and keeps the op pending; dagger.dev.poll messages (sent by idle
 * workers while work is pending, woken by the backend's launch_host_fn)
 * query the events in the actor's turn and finish the ops that are done. */
#ifndef DG_DEV_DEV_H
#define DG_DEV_DEV_H

#include <dagger/actor.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/exec/exec.h"
#include "devices/common/device.h"
#include "devices/devices.h"

struct dg_actor;
struct dg_xfer_piece;

#define DG_DEV_STREAMS_MAX 8      /* the processor actor's pool: DAGGER_GPU_STREAMS of them */
/* The wake-ups of a device's streams: streams[k] at k, urgent[k] at
 * DG_DEV_STREAMS_MAX + k, the copy stream's last. */
#define DG_DEV_WAKE_COPY (2 * DG_DEV_STREAMS_MAX)
#define DG_DEV_WAKES (DG_DEV_WAKE_COPY + 1)
#define DG_DEV_PIECE_MAX (1u << 30) /* largest DAGGER_GPU_PIPELINE_PIECE used */

typedef struct dg_dev dg_dev_t;
typedef struct dg_devs dg_devs_t;
typedef struct dg_dev_pending dg_dev_pending_t;

/* What to do once a pending piece of device work has passed its event (in
 * the owning actor's turn). */
typedef void (*dg_dev_done_fn)(dg_dev_t *d, dg_dev_pending_t *p, int ok);

struct dg_dev_pending {
    dg_dev_pending_t *next;
    dg_dev_event_t *ev;
    dg_dev_stream_t *stream;      /* where ev was recorded */
    struct dg_xop *op;
    dg_dev_done_fn done;
    void *staging;                /* pinned host buffer (released after done) */
    size_t staging_bytes;
    void *scratch;                /* device buffer (released after done) */
    size_t scratch_bytes;
    uint32_t index;               /* a piece of a transfer in pieces (dev_pipe.c)... */
    void *buf;                    /* ...its pinned buffer, kept after done */
    uint64_t offset, bytes;       /* ...and its bytes in the packed transfer */
    uint64_t cookie;              /* an IPC receive (dev_ipc.c): the sender's block... */
    dagger_actor_addr_t lender;   /* ...and its memory-space actor, told when copied */
    uint64_t t0;                  /* an IPC op: when its copy was queued (dg_now_ns) */
    uint64_t gen;                 /* bumped each time the entry finishes (kept across reuse) */
};

/* A stream's wake-up: the backend's host function, queued on the stream,
 * runs wake(this) once the work before it is done (dev_pending.c). */
typedef struct dg_dev_wake {
    struct dg_dev_side *side;     /* whose poll it asks for */
    dg_dev_stream_t *stream;
    _Atomic int armed;            /* DAGGER_GPU_WAKE=armed: a host function is queued */
} dg_dev_wake_t;

/* One actor's share: its pending work and its spare events. */
typedef struct dg_dev_side {
    dagger_actor_addr_t addr;
    struct dg_actor *obj;
    dg_dev_pending_t *pending;    /* the actor's own (touched in its turns) */
    dg_dev_pending_t *spare;      /* finished entries with their events, for reuse */
    _Atomic int npending;
    _Atomic int poll_posted;      /* a dagger.dev.poll is on its way */
    _Atomic int signalled;        /* the backend's host function ran: some event passed */
    struct dg_dev *dev;
} dg_dev_side_t;

/* A kept block of one memory kind (device memory or pinned staging). */
typedef struct dg_dev_block {
    struct dg_dev_block *next;
    void *ptr;
    size_t bytes;
} dg_dev_block_t;

typedef struct dg_dev_cache {
    pthread_mutex_t lock;         /* FREE ops and cleanup may come from outside the turn */
    dg_dev_block_t *blocks;
    size_t bytes, limit;
    _Atomic uint64_t misses;      /* gets that found no kept block and allocated one */
} dg_dev_cache_t;

struct dg_dev {
    struct dg_exec *ex;
    dg_devs_t *all;               /* the rank's devices (their message types) */
    const dg_dev_backend_t *be;
    int index;                    /* the backend's device index */
    uint32_t space;               /* 1 + position in the rank's device list */
    char label[64];               /* "test device 0" */
    int direct;                   /* transfers to other ranks read/write device memory */
    uint32_t peers;               /* bit j: its streams reach device j's memory (peer_enable,
                                     DAGGER_GPU_PEER): copies from device j run on it, device
                                     to device */
    dg_dev_side_t side[2];        /* 0: processor actor, 1: memory-space actor */
    dg_dev_stream_t *streams[DG_DEV_STREAMS_MAX];
    uint32_t nstreams;            /* DAGGER_GPU_STREAMS */
    uint32_t next_stream;
    dg_dev_stream_t *urgent[DG_DEV_STREAMS_MAX]; /* DAGGER_GPU_PRIORITY: tasks with a priority
                                     above 0 (the kind's greatest stream priority where it has
                                     them, else plain streams of their own) */
    uint32_t nurgent;             /* nstreams, or 0 with DAGGER_GPU_PRIORITY=0 */
    uint32_t next_urgent;
    dg_dev_stream_t *copy_stream; /* the memory-space actor's */
    dg_dev_wake_t wakes[DG_DEV_WAKES]; /* one per stream: streams[k], urgent[k], copy_stream */
    _Atomic uint64_t hostfns;     /* host functions queued (wake-ups asked for) */
    dg_dev_cache_t mem, pinned;   /* device memory, staging */
    dg_dev_cache_t ipcmem;        /* exportable device memory: the blocks of IPC sends */
    struct dg_dev_ipc *ipc;       /* IPC state (dev_ipc.c): blocks sent, handles opened */
    _Atomic uint64_t completed;   /* pending entries finished (idle source) */
    _Atomic uint64_t launched;    /* tasks placed on it (tests check placement by it) */
    _Atomic uint64_t launched_urgent; /* ...of which on an urgent stream */
    _Atomic uint64_t chained;     /* ...of which released before a dependency on this device
                                     had finished (DAGGER_GPU_CHAIN) */
    _Atomic uint64_t chain_waits; /* stream waits queued for such tasks */
    _Atomic uint64_t staged;      /* transfers to/from other ranks that went host-staged */
    _Atomic uint64_t peer_copies; /* copies from another device of the rank into this one,
                                     device to device (the rest staged through host memory) */
    _Atomic uint64_t piped;       /* ...of which in pieces (dev_pipe.c) */
    _Atomic uint64_t pieces;      /* pieces sent and received */
    _Atomic uint64_t ipc_sent;    /* transfers to other ranks sent through an IPC handle... */
    _Atomic uint64_t ipc_received;/* ...and received (copied from the sender's memory) */
    _Atomic uint64_t ipc_opened;  /* handles opened (the rest reused an opened one) */
    _Atomic uint64_t ipc_lent;    /* blocks sent and not yet given back by their receivers */
    _Atomic uint64_t ipc_ns[4];   /* time (ns) in: the sender's pack until it passed, exports
                                     of handles, opens of handles, the receiver's copy until it
                                     passed (DG_IPC_NS_*: where a transfer's time goes) */
    _Atomic uint64_t overlapped;  /* a piece's staging copy queued while another piece of its
                                     transfer was on the wire (sender), or its copy to the
                                     device queued while another was still arriving (receiver) */
};

enum { DG_DEV_SIDE_PROC = 0, DG_DEV_SIDE_SPACE = 1 };

/* The devices of a rank (the executor's dg_exec_devices_t ctx), and the ids
 * of their own message types, which devices/ registers (each file beside
 * its handler). */
struct dg_devs {
    struct dg_exec *ex;
    int n;                        /* started (destroy cleans up these) */
    int gpu_direct;               /* DAGGER_GPU_DIRECT: 1 on, 0 off, -1 auto */
    size_t piece;                 /* DAGGER_GPU_PIPELINE_PIECE: bytes; 0 = no pieces */
    uint32_t streams;             /* DAGGER_GPU_STREAMS: each processor actor's streams */
    int wake_armed;               /* DAGGER_GPU_WAKE=armed (else each) */
    int priority;                 /* DAGGER_GPU_PRIORITY: urgent streams per device */
    int chain;                    /* DAGGER_GPU_CHAIN: a task queued behind the events of the
                                     tasks of its device it depends on */
    int peer;                     /* DAGGER_GPU_PEER: copies between the rank's devices device
                                     to device where they have peer access */
    _Atomic int quiet;            /* dg_devs_quiet: the actor kernel is going */
    _Atomic int waking;           /* streams' threads inside wake() */
    dg_host_pin_t pin;            /* the host space's pinned buffers (DAGGER_GPU_PIN_HOST) */
    const dg_dev_ipc_map_t *ipc;  /* which device pairs go through IPC handles (devices.h);
                                     NULL none */
    dg_dev_t *dev;                /* device d: memory space 1 + d */
    struct {
        uint32_t launch, poll, staged, piece, ipc_done;
    } msg;
};

/* The devices of ex (tests read their counters). */
static inline dg_devs_t *dg_devs_of(const dg_exec_t *ex)
{
    return ex->dev.ctx;
}

/* ---- the executor's hooks (dg_exec_devices_t; ctx: the dg_devs_t) ---- */

/* The idle workers' share: polls the devices with pending work (an idle
 * source of the executor). >0 when something finished, or when pending
 * work has no other way to wake a worker (dev_pending.c). */
int dg_devs_poll(void *ctx);
/* Before the actor kernel goes: the streams' wake-ups stop calling into it,
 * and one under way is waited for (dev_pending.c). */
void dg_devs_quiet(void *ctx);
/* A ready LAUNCH of device d: its dagger.dev.launch message (dev_proc.c). */
void dg_devs_launch(void *ctx, int d, dg_xop_t *op);
/* xfer.c: a staged transfer of a device buffer is done with the wire: its
 * dagger.dev.staged message (dev_space.c). */
void dg_devs_staged(void *ctx, dg_xop_t *op);
/* xfer.c: a piece of a RECV into device memory sent in pieces: its
 * dagger.dev.piece message (dev_pipe.c). */
void dg_devs_piece(void *ctx, dg_xop_t *op, struct dg_xfer_piece *p, uint32_t count);

/* ---- the devices' own message types (each beside its handler) ---- */

/* Registers one of them (dev_setup.c). */
dagger_status_t dg_devs_type(dg_devs_t *ds, const char *name, size_t size, uint32_t *id);
dagger_status_t dg_dev_launch_type(dg_devs_t *ds);  /* dagger.dev.launch, dev_proc.c */
dagger_status_t dg_dev_poll_type(dg_devs_t *ds);    /* dagger.dev.poll, dev_pending.c */
dagger_status_t dg_dev_staged_type(dg_devs_t *ds);  /* dagger.dev.staged, dev_space.c */
dagger_status_t dg_dev_piece_type(dg_devs_t *ds);   /* dagger.dev.piece, dev_pipe.c */
dagger_status_t dg_dev_ipc_done_type(dg_devs_t *ds); /* dagger.dev.ipc_done, dev_ipc.c */

/* ---- shared by the two actors (devices/dev_pending.c) ---- */

/* Records an event after the work queued on s and keeps `what` (op, done,
 * staging and scratch buffers) pending on side until the event passes; the
 * backend's host function wakes a worker to poll it. Returns the pending
 * entry (valid until the devices stop; it has finished once its gen has
 * moved on). When that fails, the op is failed, done runs at once (ok = 0)
 * and the result is NULL. Either way the buffers go back to their caches
 * after done. */
dg_dev_pending_t *dg_dev_pend(dg_dev_t *d, int side, dg_dev_stream_t *s,
                              const dg_dev_pending_t *what);
/* The dagger.dev.poll handler (both actors). */
dagger_status_t dg_dev_on_poll(dagger_ctx_t *ctx);
/* Frees the side's spare entries and their events. */
void dg_dev_side_cleanup(dg_dev_t *d, dg_dev_side_t *s);

/* Cached device memory and staging (devices/dev_space.c). */
dagger_status_t dg_dev_cache_get(dg_dev_t *d, dg_dev_cache_t *c, size_t bytes, void **ptr);
void dg_dev_cache_put(dg_dev_t *d, dg_dev_cache_t *c, void *ptr, size_t bytes);
void dg_dev_cache_cleanup(dg_dev_t *d, dg_dev_cache_t *c);

/* The packed size of spans, and the spans as byte spans (malloc'ed; NULL
 * out of memory) for the backend's pack kernel (dev_space.c). */
size_t dg_dev_span_bytes(const dg_plan_span_t *sp, uint32_t n, uint32_t elsize);
dg_dev_span_t *dg_dev_byte_spans(const dg_plan_span_t *sp, uint32_t n, uint32_t elsize);

/* Host-staged transfers in pieces (dev_pipe.c), in the memory-space
 * actor's turn: take a SEND / RECV of this device's memory when it is
 * larger than a piece (1; then they finish it), or leave it (0). abort:
 * a piped RECV that ended before any piece came (xfer.c failed it). */
int dg_dev_pipe_send(dg_dev_t *d, dg_xop_t *op);
/* The dagger.dev.piece handler (the memory-space actor's). */
dagger_status_t dg_dev_on_piece(dagger_ctx_t *ctx);
/* A pending entry's done that just finishes its op (dev_space.c). */
void dg_dev_op_done(dg_dev_t *d, dg_dev_pending_t *p, int ok);
int dg_dev_pipe_recv(dg_dev_t *d, dg_xop_t *op);
void dg_dev_pipe_abort(dg_dev_t *d, dg_xop_t *op);

enum { DG_IPC_NS_PACK, DG_IPC_NS_EXPORT, DG_IPC_NS_OPEN, DG_IPC_NS_COPY };

/* Device-to-device transfers between ranks of one node through IPC handles
 * (dev_ipc.c), in the memory-space actor's turn. Both ranks of a transfer
 * take it this way exactly when their devices' published IPC domains are
 * equal (devices.h), so they always agree. Sending: the view is packed into
 * an exportable block, and its handle is what goes on the wire; the block
 * is kept until the receiver's dagger.dev.ipc_done. Receiving: the handle
 * is opened (once per block: kept open), the bytes are copied (unpacked)
 * from the sender's memory into the view, then the sender is told.
 * dg_dev_ipc_send / _recv take a SEND / RECV (1) or leave it (0). */
int dg_dev_ipc_send(dg_dev_t *d, dg_xop_t *op);
int dg_dev_ipc_recv(dg_dev_t *d, dg_xop_t *op);
/* dagger.dev.staged of an IPC op: a SEND's handle message left (it is freed
 * and the op finished), or a RECV's arrived (the copy starts). */
void dg_dev_ipc_staged(dg_dev_t *d, dg_xop_t *op);
/* The dagger.dev.ipc_done handler (the sender's memory-space actor). */
dagger_status_t dg_dev_on_ipc_done(dagger_ctx_t *ctx);
/* Closes the handles opened and frees the blocks still lent (destroy,
 * after the streams). */
void dg_dev_ipc_cleanup(dg_dev_t *d);

/* The buffer table's ops for device memory spaces (ms->impl: the dg_dev_t). */
extern const dg_memspace_ops_t dg_dev_memspace_ops;

/* The device's memory-space actor and processor actor (spawn). */
dagger_status_t dg_dev_space_spawn(dg_dev_t *d);
dagger_status_t dg_dev_proc_spawn(dg_dev_t *d);

#endif
