/* The executor: turns this rank's planned ops into work. The planner calls
 * dg_exec_emit on the submitting thread; each op waits for its dependencies
 * (lock-free edges, xop.h) and, once ready, goes where it belongs:
 *   LAUNCH        -> the ready queues, taken by the CPU worker threads
 *                    (any worker, or the exact one a scope named; work is
 *                    shared inside the rank only)
 *   ALLOC, FREE,  -> a message to the memory-space actor of the op's space
 *   COPY, SEND,     (core/exec/msgs.h): it allocates (the emitting
 *   RECV            thread waits for the block), releases, copies, and
 *                    carries out the move_rewrap transfers (xfer.c)
 *   LAUNCH on a   -> the device's processor actor, through the devices'
 *   device           hooks (dg_exec_devices_t)
 * The memory-space actor's turn runs on the sending thread when the actor
 * is idle (dg_act_post), so a message costs no thread hop.
 * The submitting thread never waits for data: it waits only when the window
 * of ops in flight is full, and at region end.
 *
 * The executor knows no device kind: the actors that handle its messages
 * (the CPU processors, the memory spaces, the devices) are spawned and
 * wired by devices/ (devices/devices.h) between dg_exec_create and
 * dg_exec_start, and reach the executor through this header. */
#ifndef DG_EXEC_EXEC_H
#define DG_EXEC_EXEC_H

#include <dagger/task.h>
#include <pthread.h>
#include <stdatomic.h>

#include "core/exec/blobpool.h"
#include "core/exec/bufs.h"
#include "core/exec/readyq.h"
#include "core/exec/watchdog.h"
#include "core/exec/xop.h"
#include "core/plan/plan.h"

struct dg_act_system;
struct dg_tx;
struct dg_xfer;
struct dg_xfer_piece;

/* Run-time sampling of task lengths (run.c): only where a thread runs its
 * next task, never a planning input. A codelet whose sampled mean run time
 * is at least DG_LONG_TASK_US is long; in a region where one ran, at most
 * nworkers threads run tasks at once (exec.c, take_slot). */
#define DG_TASK_STAT_BUCKETS 256 /* codelet id % this (a collision only mixes two means) */
#define DG_LONG_TASK_US 200

typedef struct dg_exec_codelet {
    _Atomic uint32_t id;              /* 0: empty; set last, once (codelets.c) */
    char name[64];
    dagger_impl_fn cpu, cuda, hip;
} dg_exec_codelet_t;

/* The codelet table (open addressing by id). Workers read it while the
 * submitting thread registers codelets: see codelets.c. */
typedef struct dg_exec_codelets {
    struct dg_exec_codelets *older;   /* tables it replaced, freed with the executor */
    size_t nslots, used;
    dg_exec_codelet_t slot[];
} dg_exec_codelets_t;

typedef struct dg_exec_params {
    int rank, nranks;
    struct dg_act_system *actors;     /* workers run the ready queues */
    struct dg_tx *tx;                 /* NULL when alone */
    const dg_plan_t *plan;            /* processor ids */
    uint32_t window;                  /* ops in flight; rounded up to a power of two */
    size_t pool_limit;                /* bytes of released buffers kept for reuse */
    int huge_pages;                   /* host blocks of 2 MiB or more in huge pages */
    double hang_timeout;              /* seconds; 0 = off */
    double hang_exit;                 /* seconds more, then the rank exits; 0 = never */
    int no_signals;                   /* 1: no SIGUSR1 handler (dagger_params_t) */
} dg_exec_params_t;

typedef struct dg_exec dg_exec_t;

/* The ids of the executor's message types (msgs.c registers them by name;
 * msgs.h has their payloads). */
typedef struct dg_exec_msgs {
    uint32_t alloc, free, copy, send, recv, rewrap, piece, launch;
} dg_exec_msgs_t;

/* What the executor needs of the rank's devices (memory spaces 1..n), which
 * devices/ gives it at start-up (dg_exec_set_devices): the executor calls
 * them and never names a device kind. Unset (n = 0, NULL calls): no devices. */
typedef struct dg_exec_devices {
    void *ctx;                        /* the devices' state, first argument of each call */
    int n;                            /* devices; device d is memory space 1 + d */
    uint32_t launch_type;             /* the message type that runs a task on a device
                                         (tasks_outside counts the others) */
    /* An idle worker's share: polls the devices with pending work. >0 when
     * something finished, or when pending work has no other way to wake a
     * worker. */
    int (*poll)(void *ctx);
    /* A ready LAUNCH op placed on device d: the device runs it and finishes it. */
    void (*launch)(void *ctx, int d, dg_xop_t *op);
    /* A host-staged transfer of a device buffer is done with the wire
     * (xfer.c): the device's memory-space actor finishes it. */
    void (*staged)(void *ctx, dg_xop_t *op);
    /* A piece of a transfer in pieces for a RECV into device memory
     * (op->u.xfer.pipe, set by the device): the device's memory-space actor
     * takes it (and its eager copy or rendezvous descriptor) and lands it;
     * count: the transfer's pieces. Once it has them all, it finishes op. */
    void (*piece)(void *ctx, dg_xop_t *op, struct dg_xfer_piece *p, uint32_t count);
    /* Before the actor kernel goes: the devices stop waking its workers
     * (work still queued on their streams may finish later). */
    void (*quiet)(void *ctx);
    /* After every op finished and the buffer table is gone: frees ctx. */
    void (*destroy)(void *ctx);
} dg_exec_devices_t;

struct dg_exec {
    int rank, nranks, nworkers;
    struct dg_act_system *actors;
    struct dg_tx *tx;
    const dg_plan_t *plan;
    double hang_timeout, hang_exit;
    int no_signals;

    /* the ring of ops in flight */
    dg_xop_t *ring;
    uint64_t mask;
    uint64_t seq_hi; /* the highest op seq given a slot (planner actor only): finalize
                      * visits only the slots ever used, not the whole lazily mapped ring */
    uint64_t populated; /* the ring's slots below this are mapped (planner actor only) */
    /* The counters that different threads write sit on cache lines of their
     * own (each group below starts one), apart from the fields the threads
     * only read. dg_exec_create allocates the struct aligned to DG_CACHE_LINE,
     * which the ready queue's indices (mpmc.h) already asked for. */
    _Alignas(DG_CACHE_LINE) _Atomic uint64_t emitted; /* ops emitted (the submitting thread) */
    _Alignas(DG_CACHE_LINE) _Atomic uint64_t retired; /* ops finished */
    _Atomic uint64_t progress;        /* bumps on every finished op (hang detector) */
    _Alignas(DG_CACHE_LINE) _Atomic uint64_t ready_counter; /* ready order */
    _Alignas(DG_CACHE_LINE) dg_blobpool_t blobs; /* op blocks that do not fit a slot */
    _Alignas(DG_CACHE_LINE) dg_blobpool_t blobs_big; /* the same, up to DG_BLOB_BIG_BYTES */

    /* waiting of the submitting thread */
    _Alignas(DG_CACHE_LINE) pthread_mutex_t wait_lock;
    pthread_cond_t wait_cond;
    _Atomic int waiters;
    /* what it waits for (wait_lock): finishers wake it only once that holds */
    int (*wait_fn)(struct dg_exec *, const void *);
    const void *wait_arg;

    /* work */
    _Alignas(DG_CACHE_LINE) _Atomic int running; /* threads running a task now (workers and
                                         the waiting submitting thread; exec.c take_slot) */
    _Atomic int long_seen;            /* a long task ran in this region: capped (run.c) */
    _Alignas(DG_CACHE_LINE) char after_hot; /* the read-mostly fields below start a new line */
    _Atomic uint32_t task_us[DG_TASK_STAT_BUCKETS]; /* per codelet id bucket: the
                                         sampled mean run time in us (run.c) */
    dg_readyq_t shared;               /* any CPU worker */
    dg_readyq_t *own;                 /* per worker: exact-processor tasks */
    dg_bufs_t bufs;
    struct dg_xfer *xfer;
    dg_exec_msgs_t msg;               /* message type ids */
    dagger_actor_addr_t space_actor[DG_MAX_SPACES]; /* memory-space actors (0: host) */
    struct dg_actor *space[DG_MAX_SPACES]; /* ...their objects (dg_act_post_local) */
    dg_exec_devices_t dev;            /* the rank's devices (devices/); space 1 + d */
    /* Every lane of each space (lane 0 is space_actor/space): interchangeable
     * memory-space actors of one space (devices/host/host_space.c). */
    dagger_actor_addr_t lane_addr[DG_MAX_SPACES][DG_MEM_LANES];
    struct dg_actor *lane[DG_MAX_SPACES][DG_MEM_LANES];
    int nlanes[DG_MAX_SPACES];
    struct dg_act_prepared *proc;     /* CPU processor actors' launch handlers: per
                                         worker, then the submitting thread's (nworkers) */
    struct dg_act_bound *proc_turn;   /* per worker: its processor actor's bound turn context */
    _Atomic uint64_t tasks_outside;   /* tasks run outside a processor actor's turn (tests) */
    struct dg_actor *planner;         /* the planner actor, whose turns emit the ops */
    _Atomic uint64_t emits_outside;   /* ops emitted outside its turn (tests) */
    dg_watchdog_t watchdog;           /* the hang detector */

    /* codelet implementations by id */
    _Atomic(dg_exec_codelets_t *) codelets;
    pthread_mutex_t codelet_lock;     /* registrations */

    /* the current region's outcome on this rank */
    pthread_mutex_t fail_lock;
    _Atomic int failed;
    uint64_t fail_task;               /* first failed task (lowest id) */
    dagger_status_t fail_status;
    char fail_msg[512];
    dagger_status_t emit_status;      /* an error while emitting (out of memory) */
    char emit_why[320];               /* ...and what it was (the emitting thread's) */

    /* counters of this rank's share */
    uint64_t n_launch, n_slots, bytes_sent, bytes_received;
};

/* The executor without its actors: devices/ (dg_devices_start) spawns them
 * next, before dg_exec_start. */
dagger_status_t dg_exec_create(const dg_exec_params_t *p, dg_exec_t **out);
/* Gives the executor its devices (once, before dg_exec_start); destroy runs
 * in dg_exec_destroy, also when start-up failed after this call. */
void dg_exec_set_devices(dg_exec_t *ex, const dg_exec_devices_t *d);
/* Lets the workers take the executor's ready work and starts the hang
 * detector. Last step of start-up, once nothing can fail: a source cannot be
 * taken back from the workers, so an executor freed on a failure path must
 * never have been started. */
void dg_exec_start(dg_exec_t *ex);
/* Waits for every op, then frees everything. */
void dg_exec_destroy(dg_exec_t *ex);
/* Before the actor kernel is destroyed (the executor goes after it): the
 * devices stop waking its workers (dg_exec_devices_t.quiet). */
void dg_exec_quiet(dg_exec_t *ex);
/* After the last op, before the memory-space actors stop: data from other
 * ranks is dropped from then on (dg_xfer_close), for only a rank that
 * diverged or has not yet seen a loss still sends. */
void dg_exec_close_arrivals(dg_exec_t *ex);

/* The planner's emit callback (ctx = the executor). */
void dg_exec_emit(void *ctx, const dg_plan_op_t *op);

/* Waits until every emitted op has finished. With a hang timeout, prints what
 * this rank waits for when nothing progresses for that long. */
dagger_status_t dg_exec_wait_all(dg_exec_t *ex);

/* Codelet implementations (the planner knows codelets by id only). */
dagger_status_t dg_exec_codelet_add(dg_exec_t *ex, uint32_t id, const char *name,
                                    dagger_impl_fn cpu, dagger_impl_fn cuda, dagger_impl_fn hip);
/* Any thread; the entry stays valid until the executor is destroyed. */
const dg_exec_codelet_t *dg_exec_codelet(const dg_exec_t *ex, uint32_t id);
int dg_exec_codelets_init(dg_exec_t *ex);
void dg_exec_codelets_cleanup(dg_exec_t *ex);

/* Records the failure of a task (keeps the lowest task id). */
void dg_exec_fail(dg_exec_t *ex, uint64_t task, dagger_status_t st, const char *msg);
/* Clears the region outcome (at region begin). */
void dg_exec_region_reset(dg_exec_t *ex);
/* Wakes the workers that sleep, so that they are up when a region's first
 * tasks become ready (at region begin). */
void dg_exec_wake_workers(dg_exec_t *ex);

/* Called by whoever finishes an op: releases its successors. */
void dg_exec_finish(dg_exec_t *ex, dg_xop_t *op);
/* Releases now, before op finishes, each successor edge of op for which
 * take(arg, succ) says 1: the successor becomes ready once its other
 * dependencies have finished or been released so (devices/: a task queued
 * on a device behind events of the tasks it depends on, DAGGER_GPU_CHAIN).
 * take must make sure the successor's work cannot start before op's. The
 * successor may then finish first; its slot is reused only after op's
 * finish has passed the edge. Edges registered after the call are left. */
void dg_exec_release_early(dg_exec_t *ex, dg_xop_t *op, int (*take)(void *arg, dg_xop_t *succ),
                           void *arg);

/* Prints what this rank waits for (the watchdog: hangs, SIGUSR1). */
void dg_exec_dump(dg_exec_t *ex, const char *why);
/* One unfinished op in words ("recv tag ... from rank 1, ..."), into buf. */
void dg_exec_describe_op(const dg_exec_t *ex, const dg_xop_t *op, char *buf, size_t cap);

/* Runs a ready LAUNCH op on the calling worker (run.c). */
void dg_exec_run(dg_exec_t *ex, dg_xop_t *op, int worker);
/* Runs a LAUNCH op's implementation for a device of this kind, with its
 * stream (what dagger_task_stream returns) in a turn of the device's
 * processor actor; the caller finishes the op once the device is done. */
void dg_exec_run_device(dg_exec_t *ex, dg_xop_t *op, dg_plan_kind_t kind, void *stream,
                        uint32_t proc, int worker);
/* Runs the check a LAUNCH op's implementation registered (dagger_task_after),
 * if any, once its work is done (ok = 0: the work failed); records the
 * failure it reports. Before dg_exec_finish. */
void dg_exec_after(dg_exec_t *ex, dg_xop_t *op, int ok);
/* Records that the LAUNCH op's task failed with this detail, in the form
 * every rank reports ("task N (name) failed on rank R: detail"). */
void dg_exec_fail_task(dg_exec_t *ex, const dg_xop_t *op, const char *detail);

/* Allocates the buffer of (chunk, space): a dagger.mem.alloc request to the
 * space's memory-space actor, whose turn usually runs on this thread (it
 * is idle); otherwise the thread running it handles the request next and
 * this one waits. home: the chunk's own storage (zeroed). */
dagger_status_t dg_exec_alloc(dg_exec_t *ex, uint64_t chunk, uint32_t space, size_t bytes,
                              int home);

/* Registers the executor's message types (msgs.c). */
dagger_status_t dg_exec_msgs_register(dg_exec_t *ex);
/* Sends a ready op to the memory-space actor of space as a message of type
 * (dagger.mem.free/copy/send/recv); its turn runs on this thread when the
 * actor is idle. When the actor does not take it, the op fails and is
 * finished here (the region reports why). */
dagger_status_t dg_exec_post_op(dg_exec_t *ex, uint32_t type, uint32_t space, dg_xop_t *op);
struct dg_act_post;
/* A message to the memory-space actors of a space (p->to: lane 0): the
 * first idle lane handles it on this thread; all busy, it waits for lane 0. */
dagger_status_t dg_exec_post_space(dg_exec_t *ex, uint32_t space, const struct dg_act_post *p,
                                   int *direct);

#endif
