/* The executor: op ring, dependency edges, dispatch of ready ops, waiting. */
#include "core/exec/exec.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actors/bound.h"
#include "actors/clock.h"
#include "actors/ctx.h"
#include "actors/msg.h"
#include "actors/system.h"
#include "actors/thread_sched.h"
#include "core/base/alloc.h"
#include "core/base/common.h"
#include "core/exec/xfer.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "core/exec/msgs.h"
#include "core/trace/trace.h"
#include "core/exec/exec_trace.h"

/* Memory for what does not fit in the slot: a block of one of the two
 * pools up to DG_BLOB_BIG_BYTES, malloc beyond (blobpool.h). Submitting
 * thread only. */
static void *get_block(dg_exec_t *ex, size_t bytes)
{
    if (bytes <= DG_BLOB_BYTES)
        return dg_blob_get(&ex->blobs);
    if (bytes <= DG_BLOB_BIG_BYTES)
        return dg_blob_get(&ex->blobs_big);
    return dg_malloc(bytes);
}

/* Which get_block source a block of bytes came from (an op's blob_big,
 * edges_big): 0 the small pool, 1 the big pool, 2 malloc. */
static uint8_t block_kind(size_t bytes)
{
    return bytes <= DG_BLOB_BYTES ? 0 : bytes <= DG_BLOB_BIG_BYTES ? 1 : 2;
}

/* Gives back what get_block handed out for an op's blob or edges (NULL: none). */
static void put_block(dg_exec_t *ex, void *p, int kind)
{
    if (!p)
        return;
    if (kind == 2)
        free(p);
    else
        dg_blob_put(kind ? &ex->blobs_big : &ex->blobs, p);
}

/* Trivial ops (ALLOC, FREE, REGION_END) finish on the thread that readies
 * them; a thread-local list keeps chains of them from recursing. */
static _Thread_local dg_xop_t *tl_trivial;
static _Thread_local int tl_draining;

static int source(void *ctx, int worker, int last_look);

/* ------------------------------------------------------------ lifecycle */

static uint64_t pow2_at_least(uint64_t v)
{
    uint64_t p = 64;
    while (p < v)
        p <<= 1;
    return p;
}

dagger_status_t dg_exec_create(const dg_exec_params_t *p, dg_exec_t **out)
{
    /* Aligned: its hot counters are on cache lines of their own (exec.h). */
    size_t exbytes = (sizeof(dg_exec_t) + DG_CACHE_LINE - 1) / DG_CACHE_LINE * DG_CACHE_LINE;
    dg_exec_t *ex = dg_aligned_alloc(DG_CACHE_LINE, exbytes);
    if (!ex)
        return dg_error(DAGGER_ERR_NO_MEMORY, "executor: out of memory");
    memset(ex, 0, exbytes);
    ex->rank = p->rank;
    ex->nranks = p->nranks;
    ex->actors = p->actors;
    ex->tx = p->tx;
    ex->plan = p->plan;
    ex->hang_timeout = p->hang_timeout;
    ex->hang_exit = p->hang_exit;
    ex->no_signals = p->no_signals;
    ex->nworkers = dg_act_system_num_workers(p->actors);
    ex->blobs_big.bytes = DG_BLOB_BIG_BYTES;
    ex->blobs_big.cap = DG_BLOB_BIG_KEEP;
    uint64_t n = pow2_at_least(p->window ? p->window : 16384);
    ex->mask = n - 1;
    ex->ring = dg_calloc(n, sizeof(*ex->ring));
    dg_alloc_advise_huge(ex->ring, n * sizeof(*ex->ring));
    ex->own = dg_calloc((size_t)ex->nworkers, sizeof(*ex->own));
    ex->proc = dg_calloc((size_t)ex->nworkers + 1, sizeof(*ex->proc));
    ex->proc_turn = dg_calloc((size_t)ex->nworkers + 1, sizeof(*ex->proc_turn));
    if (dg_exec_codelets_init(ex) || !ex->ring || !ex->own || !ex->proc || !ex->proc_turn ||
        dg_readyq_init(&ex->shared, n)) {
        dg_exec_destroy(ex);
        return dg_error(DAGGER_ERR_NO_MEMORY, "executor: out of memory");
    }
    for (int w = 0; w < ex->nworkers; w++)
        if (dg_readyq_init(&ex->own[w], 0)) {
            dg_exec_destroy(ex);
            return dg_error(DAGGER_ERR_NO_MEMORY, "executor: out of memory");
        }
    pthread_mutex_init(&ex->wait_lock, NULL);
    pthread_cond_init(&ex->wait_cond, NULL);
    pthread_mutex_init(&ex->fail_lock, NULL);
    dagger_status_t st = dg_bufs_init(&ex->bufs, p->pool_limit);
    ex->bufs.spaces[0].huge = p->huge_pages; /* before the transfer layer's staging reads it */
    if (st == DAGGER_OK)
        st = dg_exec_msgs_register(ex);
    if (st == DAGGER_OK && p->tx)
        st = dg_xfer_create(ex, p->tx, &ex->xfer);
    if (st != DAGGER_OK) {
        dg_exec_destroy(ex);
        return st;
    }
    *out = ex;
    return DAGGER_OK;
}

void dg_exec_set_devices(dg_exec_t *ex, const dg_exec_devices_t *d)
{
    ex->dev = *d;
}

void dg_exec_start(dg_exec_t *ex)
{
    dg_act_system_add_idle_source(ex->actors, source, ex);
    if (!ex->no_signals)
        dg_watchdog_install_signal();
    dg_watchdog_start(&ex->watchdog, ex);
}

void dg_exec_quiet(dg_exec_t *ex)
{
    if (ex && ex->dev.quiet)
        ex->dev.quiet(ex->dev.ctx);
}

void dg_exec_close_arrivals(dg_exec_t *ex)
{
    struct dg_xfer *xf = ex ? __atomic_load_n(&ex->xfer, __ATOMIC_ACQUIRE) : NULL;
    if (xf)
        dg_xfer_close(xf);
}

void dg_exec_destroy(dg_exec_t *ex)
{
    if (!ex)
        return;
    if (ex->ring)
        dg_exec_wait_all(ex);
    dg_watchdog_stop(&ex->watchdog);
    if (ex->xfer)
        dg_xfer_destroy(ex->xfer);
    if (ex->ring) {
        uint64_t used = ex->seq_hi > ex->mask ? ex->mask + 1 : ex->seq_hi + 1;
        for (uint64_t i = 0; i < used; i++)
            put_block(ex, ex->ring[i].blob, ex->ring[i].blob_big); /* NULL once finished */
    }
    dg_blobpool_cleanup(&ex->blobs);
    dg_blobpool_cleanup(&ex->blobs_big);
    dg_bufs_cleanup(&ex->bufs);
    if (ex->dev.destroy) /* after the buffer table: it gives device blocks back */
        ex->dev.destroy(ex->dev.ctx);
    if (ex->own)
        for (int w = 0; w < ex->nworkers; w++)
            dg_readyq_cleanup(&ex->own[w]);
    if (ex->shared.heap)
        dg_readyq_cleanup(&ex->shared);
    free(ex->own);
    free(ex->proc);
    free(ex->proc_turn);
    free(ex->ring);
    dg_exec_codelets_cleanup(ex);
    free(ex);
}

/* ------------------------------------------------------------ outcome */

void dg_exec_fail(dg_exec_t *ex, uint64_t task, dagger_status_t st, const char *msg)
{
    pthread_mutex_lock(&ex->fail_lock);
    if (!atomic_load(&ex->failed) || task < ex->fail_task) {
        ex->fail_task = task;
        ex->fail_status = st;
        snprintf(ex->fail_msg, sizeof(ex->fail_msg), "%s", msg);
        atomic_store(&ex->failed, 1);
    }
    pthread_mutex_unlock(&ex->fail_lock);
}

void dg_exec_region_reset(dg_exec_t *ex)
{
    pthread_mutex_lock(&ex->fail_lock);
    atomic_store(&ex->failed, 0);
    ex->fail_task = UINT64_MAX;
    ex->fail_status = DAGGER_OK;
    ex->fail_msg[0] = '\0';
    pthread_mutex_unlock(&ex->fail_lock);
    ex->emit_status = DAGGER_OK; /* an out-of-memory failed that region, not this one */
    ex->emit_why[0] = '\0';
    atomic_store_explicit(&ex->long_seen, 0, memory_order_relaxed);
    ex->n_launch = ex->n_slots = ex->bytes_sent = ex->bytes_received = 0;
}

/* Wakes the workers asleep in their idle loops as a region opens: they come
 * out of their sleep (on this VM the idle core's halt alone takes about
 * 50 us) while the submitting thread plans the first tasks, and spin for
 * those instead of being woken one by one as they become ready. A 1024 x
 * 1024 stencil sweep (bench_stencil_sweep, 1 x 2, each sweep after the
 * serial loops, workers asleep) took 0.90-1.30 ms with blocks of 128 and
 * 0.73-1.26 with 512 before, 0.84-1.20 and 0.65-0.82 after (nine alternated
 * rounds); Task Bench stencil_1d (1 x 2 and 2 x 1) and bench_region_launch
 * (4 x 1) moved within the noise (docs/benchmarks.md). A worker with nothing
 * to do sleeps again after its spin. */
void dg_exec_wake_workers(dg_exec_t *ex)
{
    if (ex->actors)
        dg_act_system_wake_sleepers(ex->actors);
}

/* ------------------------------------------------------------ waking */

/* Wakes the waiting submitting thread when what it waits for holds, and in
 * a region of long tasks (take_slot) at every finish: there it takes the
 * ready tasks, so that worker 0 stays free to drive the transport (woken
 * only when a task was ready at a finish, Task Bench on 2 ranks x 1 worker
 * with 100 us tasks ran 1.2x slower; woken only for its condition, 1.5x).
 * Not on every finish otherwise: among short tasks a finishing
 * worker takes the next ready task itself, and waking the waiter for each op
 * (a futex wake, and the waiter's wake-up and sleep again) left gaps of
 * 7-10 us between a worker's tasks (bench_stencil_sweep, 1 worker: a quarter
 * of a 128 x 128 sweep task). New ready work wakes the workers (wake_one). */
static void notify_waiters(dg_exec_t *ex)
{
    if (atomic_load_explicit(&ex->waiters, memory_order_seq_cst)) {
        pthread_mutex_lock(&ex->wait_lock);
        if (!ex->wait_fn || atomic_load_explicit(&ex->long_seen, memory_order_relaxed) ||
            ex->wait_fn(ex, ex->wait_arg))
            pthread_cond_broadcast(&ex->wait_cond);
        pthread_mutex_unlock(&ex->wait_lock);
    }
}

/* Task slots. At most nworkers threads of a rank run tasks at once, the
 * waiting submitting thread counted, in a region where a long task has run
 * (dg_exec_run learns which codelets run long); in other regions a worker
 * takes a task whenever it is free, and the waiting thread when fewer than
 * nworkers run. Without the cap the waiting thread ran a BLAS tile whenever
 * a worker was between tasks, and the worker then took the next one: on 2
 * ranks x 1 worker on 2 cores four tiles were time-sliced on the two cores
 * (tiled Cholesky N=4096 at 0.81x of 1 rank x 2 threads), and worker 0, the
 * only thread that drives the transport, sat in a tile while transfers
 * waited for it; with it a worker that finds the slots taken stays free for
 * progress. Regions of short tasks keep every thread that is awake running
 * them: a cap there cost the tiny-task trees of bench_region_launch about
 * a quarter of their speed. */
static int take_slot(dg_exec_t *ex, int submitter)
{
    int r = atomic_fetch_add_explicit(&ex->running, 1, memory_order_seq_cst);
    if (DG_UNLIKELY(r >= ex->nworkers) &&
        (submitter || atomic_load_explicit(&ex->long_seen, memory_order_relaxed))) {
        atomic_fetch_sub_explicit(&ex->running, 1, memory_order_seq_cst);
        return 0;
    }
    return 1;
}

static void give_slot(dg_exec_t *ex)
{
    atomic_fetch_sub_explicit(&ex->running, 1, memory_order_seq_cst);
}

/* Pops a task from q with a slot taken: NULL when no slot is free or q is
 * empty (the slot is given back then). */
static dg_xop_t *pop_with_slot(dg_exec_t *ex, dg_readyq_t *q, int submitter)
{
    if (!dg_readyq_busy(q) || !take_slot(ex, submitter)) /* idle polls stay read-only */
        return NULL;
    dg_xop_t *op = dg_readyq_pop(q);
    if (!op)
        give_slot(ex);
    return op;
}

/* A task taken from the ready queues (the processor actors' mailboxes),
 * with a slot held (pop_with_slot): its dagger.proc.launch message, handled
 * in a turn of processor w (the calling worker's, or the submitting
 * thread's when w == nworkers). Gives the slot back. */
static void launch(dg_exec_t *ex, dg_xop_t *op, int w)
{
    union {
        dg_msg_t m;
        unsigned char bytes[sizeof(dg_msg_t) + sizeof(dg_proc_launch_msg_t)];
    } buf;
    const dg_act_prepared_t *pp = &ex->proc[w];
    dg_msg_hdr_set(&buf.m.hdr, (dagger_actor_addr_t){ex->rank, 0}, pp->to, pp->type,
                   sizeof(dg_proc_launch_msg_t));
    dg_proc_launch_msg_t *pl = (dg_proc_launch_msg_t *)buf.m.payload;
    *pl = (dg_proc_launch_msg_t){ex, op, w, 0};
    /* The calling worker's own processor actor is bound to it for good:
     * its turn needs no claim and no context set-up (actors/bound.h). */
    int ran = w < ex->nworkers ? dg_act_run_bound(&ex->proc_turn[w], &buf.m, pp->fn)
                               : dg_act_run_prepared(ex->actors, pp, &buf.m);
    if (DG_UNLIKELY(!ran)) {
        /* Its turn cannot run here now: a copy, run when the actor can. */
        dg_act_post_t p = {.to = pp->to, .type = pp->type, .payload = pl, .size = sizeof(*pl),
                           .what = "launch"};
        int direct;
        dagger_status_t st = dg_act_post(ex->actors, &p, &direct);
        if (st != DAGGER_OK) {
            dg_exec_fail(ex, op->u.launch.task, st, "a processor actor did not take its launch");
            dg_exec_finish(ex, op);
        }
    }
    give_slot(ex);
}

/* The waiting thread stops taking tasks: a worker that found every slot
 * taken while it ran one went to sleep, and the ready tasks it left must
 * not wait for the next submission to wake it. */
static void wake_left_work(dg_exec_t *ex)
{
    if (!ex->own) /* an executor whose creation failed: nothing ran */
        return;
    if (dg_readyq_busy(&ex->shared))
        dg_act_system_wake_any(ex->actors);
    for (int w = 0; w < ex->nworkers; w++)
        if (dg_readyq_busy(&ex->own[w]))
            dg_act_system_wake(ex->actors, w);
}

/* How long a waiting thread checks, yielding its core, before it sleeps. */
#define DG_WAIT_SPIN_NS 30000ull

/* Until cond holds, shared work appears or DG_WAIT_SPIN_NS pass, yielding
 * the core between checks: a region's last ops often finish within
 * microseconds of its end, and a sleep costs a wake-up on the finisher's
 * side and on this one (2 ranks x 2 threads on two cores: the tiny tree
 * and the gather of bench_region_launch at 0.18-0.19 and 0.42-0.46 ms in
 * three runs, against 0.19-0.63 and 0.79-1.08 without, docs/benchmarks.md). */
static void spin_briefly(dg_exec_t *ex, int (*cond)(dg_exec_t *, const void *), const void *arg)
{
    uint64_t t0 = dg_now_ns();
    do
        dg_spin_pause();
    while (!cond(ex, arg) && !dg_readyq_busy(&ex->shared) && dg_now_ns() - t0 < DG_WAIT_SPIN_NS);
}

/* How long a wait goes before it asks the ranks its receives wait for
 * whether they will still send (dg_xfer_probe_stuck), and again after as
 * long while it lasts. A correct run's waits that last this long cost one
 * small message per such rank; nothing is decided by the clock. */
#define DG_PROBE_AFTER_NS 1000000000ull

/* Waits until cond(ex, arg) holds, checking for hangs. */
static dagger_status_t wait_until(dg_exec_t *ex, int (*cond)(dg_exec_t *, const void *),
                                  const void *arg)
{
    int spun = 0;
    uint64_t probe_at = 0;
    while (!cond(ex, arg)) {
        /* The waiting thread is a processor too: with one core per rank it
         * would otherwise sit on that core while ready tasks wait for the
         * worker it displaces. It takes shared work only (tasks scoped to an
         * exact worker stay there), as processor index nworkers, and only
         * while fewer than nworkers threads run tasks (take_slot): when
         * every worker is busy, a task of its own would share their cores
         * with them (2 workers on 2 cores: 3 BLAS tiles time-sliced, 24 ms
         * per 512-tile dgemm instead of 16). */
        dg_xop_t *op = pop_with_slot(ex, &ex->shared, 1);
        if (op) {
            launch(ex, op, ex->nworkers);
            continue;
        }
        if (!spun) { /* once per wait: a longer one sleeps in between */
            spun = 1;
            spin_briefly(ex, cond, arg);
            continue;
        }
        if (ex->xfer) {
            uint64_t now = dg_now_ns();
            if (!probe_at) {
                probe_at = now + DG_PROBE_AFTER_NS;
            } else if (now >= probe_at) {
                dg_xfer_probe_stuck(ex->xfer);
                probe_at = now + DG_PROBE_AFTER_NS;
            }
        }
        pthread_mutex_lock(&ex->wait_lock);
        ex->wait_fn = cond;
        ex->wait_arg = arg;
        atomic_store(&ex->waiters, 1);
        if (!cond(ex, arg)) {
            /* Finishers signal; the timeout only bounds a missed signal. */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 200 * 1000 * 1000;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&ex->wait_cond, &ex->wait_lock, &ts);
        }
        atomic_store(&ex->waiters, 0);
        ex->wait_fn = NULL;
        pthread_mutex_unlock(&ex->wait_lock);
    }
    wake_left_work(ex);
    return DAGGER_OK;
}

static int all_retired(dg_exec_t *ex, const void *arg)
{
    (void)arg;
    return atomic_load(&ex->retired) == atomic_load_explicit(&ex->emitted, memory_order_relaxed);
}

dagger_status_t dg_exec_wait_all(dg_exec_t *ex)
{
    return wait_until(ex, all_retired, NULL);
}

static int slot_free(dg_exec_t *ex, const void *arg)
{
    const dg_xop_t *op = arg;
    (void)ex;
    return atomic_load_explicit(&op->retired, memory_order_acquire);
}

/* ------------------------------------------------------------ readiness */

/* Wakes the named worker, or for shared work a sleeping worker when none
 * is spinning, or even then when the shared queue holds more than the one
 * op just pushed: the spinning worker has not taken the last one (it may be
 * off its core, behind the submitting thread), and a sleeper on an idle
 * core would otherwise sit out a whole sweep of tasks. */
static void wake_one(dg_exec_t *ex, int worker)
{
    if (worker >= 0)
        dg_act_system_wake(ex->actors, worker);
    else if (dg_readyq_depth(&ex->shared) > 1)
        dg_act_system_wake_helper(ex->actors);
    else
        dg_act_system_wake_any(ex->actors);
}


static void ready(dg_exec_t *ex, dg_xop_t *op)
{
    switch (op->kind) {
    case DG_PLAN_OP_LAUNCH: {
        if (op->u.launch.device >= 0) {
            ex->dev.launch(ex->dev.ctx, op->u.launch.device, op);
            return;
        }
        int w = op->u.launch.worker;
        if (w >= 0 || op->u.launch.priority)
            op->ready_order = atomic_fetch_add_explicit(&ex->ready_counter, 1, memory_order_relaxed);
        dg_readyq_t *q = w >= 0 ? &ex->own[w] : &ex->shared;
        if (dg_readyq_push(q, op)) {
            dg_exec_fail(ex, op->u.launch.task, DAGGER_ERR_NO_MEMORY, "ready queue: out of memory");
            dg_exec_finish(ex, op);
            return;
        }
        wake_one(ex, w);
        return;
    }
    case DG_PLAN_OP_COPY:
        dg_exec_post_op(ex, ex->msg.copy, op->u.copy.dst_space ? op->u.copy.dst_space
                                                               : op->u.copy.src_space, op);
        return;
    case DG_PLAN_OP_SEND:
        dg_exec_post_op(ex, ex->msg.send, op->u.xfer.space, op);
        return;
    case DG_PLAN_OP_RECV:
        dg_exec_post_op(ex, ex->msg.recv, op->u.xfer.space, op);
        return;
    case DG_PLAN_OP_FREE:
        if (op->u.free_ptr) {
            dg_exec_post_op(ex, ex->msg.free, op->free_space, op);
            return;
        }
        /* nothing to release (the buffer never existed): trivial */
        /* fall through */
    default:
        op->link = tl_trivial;
        tl_trivial = op;
        if (tl_draining)
            return;
        tl_draining = 1;
        while (tl_trivial) {
            dg_xop_t *t = tl_trivial;
            tl_trivial = t->link;
            dg_exec_finish(ex, t);
        }
        tl_draining = 0;
        return;
    }
}

/* The op's slot may be reused: its edges and payload go back. Inlined into
 * dg_exec_finish, as it was before drop_hold called it too (callgrind:
 * about 13 instructions more per finish otherwise). */
static inline __attribute__((always_inline)) void retire(dg_exec_t *ex, dg_xop_t *op)
{
    if (op->edges != op->inline_edges)
        put_block(ex, op->edges, op->edges_big);
    op->edges = NULL;
    put_block(ex, op->blob, op->blob_big);
    op->blob = NULL;
    atomic_store_explicit(&op->retired, 1, memory_order_release);
    atomic_fetch_add_explicit(&ex->progress, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ex->retired, 1, memory_order_acq_rel);
    notify_waiters(ex);
}

/* Drops one hold on op (holds): the last one retires it. Rare (ops
 * released early). */
static __attribute__((noinline)) void drop_hold(dg_exec_t *ex, dg_xop_t *op)
{
    if (atomic_fetch_sub_explicit(&op->holds, 1, memory_order_acq_rel) == 1)
        retire(ex, op);
}

void dg_exec_finish(dg_exec_t *ex, dg_xop_t *op)
{
    if (DG_TRACE_ON())
        dg_trace_finish(op);
    dg_xedge_t *e = atomic_exchange_explicit(&op->succ, DG_XOP_CLOSED, memory_order_acq_rel);
    if (e && e->next)
        e = dg_xedge_release_order(e); /* sends first, in plan order (xop.h) */
    while (e) {
        /* Read the edge before releasing its op: once released, that op may
         * finish and its slot be reused by the submitting thread. */
        dg_xedge_t *next = e->next;
        dg_xop_t *succ = dg_xedge_op(e);
        if (dg_xedge_early(e))
            drop_hold(ex, succ); /* released already (dg_exec_release_early) */
        else if (atomic_fetch_sub_explicit(&succ->pending, 1, memory_order_acq_rel) == 1)
            ready(ex, succ);
        e = next;
    }
    /* Only this op holds itself unless an edge of it was released early; those
     * holds are added before it is ready, so a plain load tells. */
    if (atomic_load_explicit(&op->holds, memory_order_acquire) == 1)
        retire(ex, op);
    else
        drop_hold(ex, op);
}

void dg_exec_release_early(dg_exec_t *ex, dg_xop_t *op, int (*take)(void *arg, dg_xop_t *succ),
                           void *arg)
{
    /* Edges pushed after this load are released by op's finish, as usual. */
    for (dg_xedge_t *e = atomic_load_explicit(&op->succ, memory_order_acquire);
         e && e != DG_XOP_CLOSED; e = e->next) {
        dg_xop_t *succ = dg_xedge_op(e);
        if (dg_xedge_early(e) || !take(arg, succ))
            continue;
        atomic_fetch_add_explicit(&succ->holds, 1, memory_order_relaxed);
        e->op = (dg_xop_t *)((uintptr_t)succ | 1);
        if (atomic_fetch_sub_explicit(&succ->pending, 1, memory_order_acq_rel) == 1)
            ready(ex, succ);
    }
}

/* ------------------------------------------------------------ emitting */

static void *op_alloc(dg_exec_t *ex, dg_xop_t *op, size_t bytes)
{
    if (bytes <= sizeof(op->inline_blob))
        return op->inline_blob;
    op->blob = get_block(ex, bytes);
    if (op->blob)
        op->blob_big = block_kind(bytes);
    return op->blob;
}

static unsigned char *buffer_base(dg_exec_t *ex, dg_plan_buf_t b)
{
    dg_buf_entry_t *e = dg_bufs_find(&ex->bufs, b.chunk, b.space);
    return e ? e->ptr : NULL;
}

static int resolve_arg(dg_exec_t *ex, const dg_plan_op_arg_t *a, dg_xarg_t *x, unsigned char **vbytes)
{
    /* Field by field, not a memset of the whole: dims and strides are read
     * only below ndims, which is 0 for values and futures. */
    x->kind = a->kind;
    x->mode = a->mode;
    x->bytes = 0;
    x->dtype = 0;
    x->mod = 0;
    x->ndims = 0;
    if (a->kind == DG_PLAN_ARG_VALUE) {
        memcpy(*vbytes, a->value, a->len);
        x->data = *vbytes;
        x->bytes = a->len;
        *vbytes += (a->len + 15) & ~(size_t)15;
        return 0;
    }
    unsigned char *base = buffer_base(ex, a->buf);
    x->data = base;
    if (!base)
        return -1;
    if (a->kind == DG_PLAN_ARG_FUTURE) {
        x->bytes = a->len;
        x->dtype = DAGGER_U8;
        return 0;
    }
    const dg_plan_geom_t *g = a->geom;
    uint32_t nd = a->view.ndims < DAGGER_MAX_DIMS ? a->view.ndims : DAGGER_MAX_DIMS;
    size_t s = 1, origin = 0;
    for (uint32_t k = 0; k < nd; k++) {
        size_t st = g->strides[k] ? (size_t)g->strides[k] : s;
        s *= (size_t)g->dims[k];
        x->strides[k] = st;
        x->dims[k] = (size_t)a->view.ext[k];
        origin += (size_t)a->view.off[k] * st;
    }
    x->ndims = nd;
    x->data = base + origin * g->elsize;
    x->dtype = g->dtype;
    x->mod = a->view.mod;
    return 0;
}

/* A task whose argument or result (what) has no buffer: one that could not
 * be allocated (an ALLOC before it failed: ex->emit_why), or a bug. It does
 * not run (run.c, after_failure: its own failure is recorded first). */
static void fail_unprepared(dg_exec_t *ex, dg_xlaunch_t *l, const char *what)
{
    char msg[480];
    snprintf(msg, sizeof(msg), "task %llu on rank %d did not run: %s has no buffer (%s)",
             (unsigned long long)l->task, ex->rank, what,
             ex->emit_status != DAGGER_OK ? ex->emit_why : "missing");
    dg_exec_fail(ex, l->task, ex->emit_status != DAGGER_OK ? ex->emit_status : DAGGER_ERR_INTERNAL,
                 msg);
    l->nargs = 0;
}

static int emit_launch(dg_exec_t *ex, dg_xop_t *op, const dg_plan_op_t *p)
{
    dg_xlaunch_t *l = &op->u.launch;
    l->device = -1; /* first: a launch that fails to emit still runs (as nothing) on a CPU */
    l->after = NULL;
    l->after_arg = NULL;
    l->dev_waits = NULL;
    size_t vbytes = 0;
    for (uint32_t i = 0; i < p->u.launch.nargs; i++)
        if (p->u.launch.args[i].kind == DG_PLAN_ARG_VALUE)
            vbytes += (p->u.launch.args[i].len + 15) & ~(size_t)15;
    size_t argbytes = (p->u.launch.nargs * sizeof(dg_xarg_t) + 15) & ~(size_t)15;
    unsigned char *mem = op_alloc(ex, op, argbytes + vbytes);
    if (!mem)
        return -1;
    l->task = p->u.launch.task;
    l->codelet = p->u.launch.codelet;
    l->priority = p->u.launch.priority;
    l->nargs = p->u.launch.nargs;
    l->args = (dg_xarg_t *)mem;
    l->worker = -1;
    l->proc = p->u.launch.proc;
    if (p->u.launch.proc != DG_PLAN_ANY_CPU) {
        int32_t rank;
        dg_plan_kind_t kind;
        uint32_t index;
        if (dg_plan_proc_info(ex->plan, p->u.launch.proc, &rank, &kind, &index) == DAGGER_OK &&
            kind == DG_PLAN_CPU)
            l->worker = (int32_t)(index % (uint32_t)ex->nworkers);
        else if (p->u.launch.space > 0 && (int)p->u.launch.space <= ex->dev.n)
            l->device = (int32_t)p->u.launch.space - 1; /* the space's device runs it */
    }
    unsigned char *values = mem + argbytes;
    for (uint32_t i = 0; i < l->nargs; i++)
        if (resolve_arg(ex, &p->u.launch.args[i], &l->args[i], &values)) {
            char what[32];
            snprintf(what, sizeof(what), "its argument %u", i);
            fail_unprepared(ex, l, what);
        }
    l->ret = p->u.launch.ret.chunk ? buffer_base(ex, p->u.launch.ret) : NULL;
    if (p->u.launch.ret.chunk && !l->ret)
        fail_unprepared(ex, l, "its result");
    l->ret_size = p->u.launch.ret_size;
    ex->n_launch++;
    return 0;
}

static int emit_xfer(dg_exec_t *ex, dg_xop_t *op, const dg_plan_op_t *p)
{
    dg_xxfer_t *x = &op->u.xfer;
    x->tag = p->u.xfer.tag;
    x->peer = p->u.xfer.peer;
    x->chunk = p->u.xfer.buf.chunk;
    x->version = p->u.xfer.version;
    x->elsize = p->u.xfer.elsize;
    x->nspans = p->u.xfer.nspans;
    x->bytes = p->u.xfer.bytes;
    x->base = x->chunk ? buffer_base(ex, p->u.xfer.buf) : NULL;
    x->space = p->u.xfer.buf.space;
    x->peer_space = p->u.xfer.peer_space;
    x->ipc = 0;
    x->staged = NULL;
    x->pipe = NULL; /* the ring reuses ops: no other op's union bytes */
    x->spans = op_alloc(ex, op, x->nspans * sizeof(dg_plan_span_t) + 1);
    if (!x->spans)
        return -1;
    if (x->nspans) /* a signal (an explicit dependency across ranks) has none, spans NULL */
        memcpy(x->spans, p->u.xfer.spans, x->nspans * sizeof(dg_plan_span_t));
    if (p->kind == DG_PLAN_OP_SEND)
        ex->bytes_sent += x->bytes;
    else
        ex->bytes_received += x->bytes;
    return 0;
}

static int emit_copy(dg_exec_t *ex, dg_xop_t *op, const dg_plan_op_t *p)
{
    dg_xcopy_t *c = &op->u.copy;
    c->src = buffer_base(ex, p->u.copy.src);
    c->dst = buffer_base(ex, p->u.copy.dst);
    c->src_space = p->u.copy.src.space;
    c->dst_space = p->u.copy.dst.space;
    c->staged = NULL;
    c->elsize = p->u.copy.elsize;
    c->nspans = p->u.copy.nspans;
    c->spans = op_alloc(ex, op, c->nspans * sizeof(dg_plan_span_t) + 1);
    if (!c->spans)
        return -1;
    memcpy(c->spans, p->u.copy.spans, c->nspans * sizeof(dg_plan_span_t));
    return 0;
}

dagger_status_t dg_exec_alloc(dg_exec_t *ex, uint64_t chunk, uint32_t space, size_t bytes,
                              int home)
{
    if (space >= DG_MAX_SPACES || !dagger_actor_addr_valid(ex->space_actor[space]))
        return dg_error(DAGGER_ERR_UNSUPPORTED, "memory space %u does not exist on this rank",
                        space);
    dg_mem_reply_t r = {.ptr = NULL};
    dg_mem_alloc_msg_t m = {chunk, bytes, space, home, &r};
    dg_act_post_t p = {.to = ex->space_actor[space], .type = ex->msg.alloc, .payload = &m,
                       .size = sizeof(m), .what = "allocation"};
    int direct;
    dagger_status_t st = dg_exec_post_space(ex, space, &p, &direct);
    if (st != DAGGER_OK)
        return st;
    while (!atomic_load_explicit(&r.done, memory_order_acquire))
        sched_yield(); /* another thread runs the actor's turn: it handles ours next */
    if (r.status != DAGGER_OK)
        return dg_error(r.status, "chunk %llu: %s", (unsigned long long)chunk, r.detail);
    st = dg_bufs_insert(&ex->bufs, chunk, space, home, r.ptr, dg_bufs_block_size(bytes));
    /* No room in the table (out of memory): the block goes straight back
     * rather than through a FREE that will never come. */
    if (st != DAGGER_OK)
        dg_bufs_release(&ex->bufs, space, r.ptr, dg_bufs_block_size(bytes));
    return st;
}

static int emit_mem(dg_exec_t *ex, dg_xop_t *op, const dg_plan_op_t *p)
{
    const dg_plan_buf_t b = p->u.mem.buf;
    if (p->kind == DG_PLAN_OP_ALLOC) {
        if (dg_bufs_find(&ex->bufs, b.chunk, b.space))
            return 0; /* the home storage made at creation */
        ex->n_slots += !p->u.mem.home;
        if (dg_exec_alloc(ex, b.chunk, b.space, (size_t)p->u.mem.bytes, p->u.mem.home) ==
            DAGGER_OK)
            return 0;
        if (ex->emit_status == DAGGER_OK) /* the first failure is the one told */
            snprintf(ex->emit_why, sizeof(ex->emit_why), "a buffer could not be allocated: %s",
                     dagger_error_detail());
        return -1;
    }
    op->u.free_ptr = dg_bufs_remove(&ex->bufs, b.chunk, b.space, &op->free_bytes);
    op->free_space = b.space;
    return 0;
}

/* The ring is calloc'ed, so mapped lazily: on its first pass every 4 KiB
 * page (8 slots) faulted on the submitting thread at first touch, 10-17 us
 * each on a VM (a stencil sweep's traces: every 8th submission). The
 * slots ahead are mapped in batches instead, one system call per
 * DG_RING_POPULATE slots, as the first pass reaches them. */
#define DG_RING_POPULATE 512

static void populate_ahead(dg_exec_t *ex, uint64_t seq)
{
    uint64_t n = ex->mask + 1;
    if (seq < ex->populated || ex->populated >= n)
        return;
    uint64_t from = seq, to = seq + DG_RING_POPULATE < n ? seq + DG_RING_POPULATE : n;
    if (dg_alloc_populate(&ex->ring[from], (size_t)(to - from) * sizeof(*ex->ring)))
        to = n; /* the system cannot: stop asking */
    ex->populated = to;
}

static dg_xop_t *acquire_slot(dg_exec_t *ex, uint64_t seq)
{
    populate_ahead(ex, seq);
    dg_xop_t *op = &ex->ring[seq & ex->mask];
    if (op->seq != 0 && !atomic_load_explicit(&op->retired, memory_order_acquire))
        wait_until(ex, slot_free, op); /* back-pressure: the window is full */
    op->seq = seq;
    if (seq > ex->seq_hi)
        ex->seq_hi = seq;
    atomic_store_explicit(&op->succ, NULL, memory_order_relaxed);
    atomic_store_explicit(&op->retired, 0, memory_order_relaxed);
    atomic_store_explicit(&op->holds, 1, memory_order_relaxed);
    op->blob = NULL;
    op->edges = op->inline_edges;
    return op;
}

static void register_deps(dg_exec_t *ex, dg_xop_t *op, const dg_plan_op_t *p)
{
    atomic_store_explicit(&op->pending, 1, memory_order_relaxed);
    if (p->ndeps > DG_XOP_INLINE_EDGES) {
        size_t bytes = p->ndeps * sizeof(dg_xedge_t);
        op->edges = get_block(ex, bytes);
        op->edges_big = block_kind(bytes);
        if (!op->edges) {
            /* Without edges, wait for the dependencies here: correct, slower. */
            op->edges = op->inline_edges;
            for (uint32_t i = 0; i < p->ndeps; i++) {
                dg_xop_t *dep = &ex->ring[p->deps[i] & ex->mask];
                if (dep->seq == p->deps[i])
                    wait_until(ex, slot_free, dep);
            }
            return;
        }
    }
    for (uint32_t i = 0; i < p->ndeps; i++) {
        dg_xop_t *dep = &ex->ring[p->deps[i] & ex->mask];
        if (dep->seq != p->deps[i])
            continue; /* long finished: its slot was reused */
        dg_xedge_t *e = &op->edges[i];
        e->op = op;
        atomic_fetch_add_explicit(&op->pending, 1, memory_order_relaxed);
        dg_xedge_t *head = atomic_load_explicit(&dep->succ, memory_order_acquire);
        for (;;) {
            if (head == DG_XOP_CLOSED) {
                atomic_fetch_sub_explicit(&op->pending, 1, memory_order_relaxed);
                break;
            }
            e->next = head;
            if (atomic_compare_exchange_weak_explicit(&dep->succ, &head, e, memory_order_acq_rel,
                                                      memory_order_acquire))
                break;
        }
    }
}

void dg_exec_emit(void *ctx, const dg_plan_op_t *p)
{
    dg_exec_t *ex = ctx;
    const dagger_ctx_t *turn = dg_act_tls.ctx; /* ops leave the planner actor's turns only */
    if (DG_UNLIKELY(!turn || turn->actor != ex->planner))
        atomic_fetch_add_explicit(&ex->emits_outside, 1, memory_order_relaxed);
    dg_xop_t *op = acquire_slot(ex, p->seq);
    op->kind = p->kind;
    atomic_store_explicit(&ex->emitted, atomic_load_explicit(&ex->emitted, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    int rc = 0;
    switch (p->kind) {
    case DG_PLAN_OP_LAUNCH: rc = emit_launch(ex, op, p); break;
    case DG_PLAN_OP_SEND:
    case DG_PLAN_OP_RECV: rc = emit_xfer(ex, op, p); break;
    case DG_PLAN_OP_COPY: rc = emit_copy(ex, op, p); break;
    case DG_PLAN_OP_ALLOC:
    case DG_PLAN_OP_FREE: rc = emit_mem(ex, op, p); break;
    default: break;
    }
    if (rc) {
        if (ex->emit_status == DAGGER_OK && p->kind != DG_PLAN_OP_ALLOC)
            snprintf(ex->emit_why, sizeof(ex->emit_why), "out of memory preparing an op");
        ex->emit_status = DAGGER_ERR_NO_MEMORY;
        char msg[400];
        snprintf(msg, sizeof(msg), "rank %d: %s", ex->rank, ex->emit_why);
        /* Not a task's failure (UINT64_MAX would read as none at the region's
         * end); a task left without a buffer fails by its own id too. */
        dg_exec_fail(ex, UINT64_MAX - 1, DAGGER_ERR_NO_MEMORY, msg);
        if (p->kind == DG_PLAN_OP_LAUNCH)
            op->u.launch.nargs = 0;
    }
    if (DG_TRACE_ON())
        dg_trace_emit(p);
    register_deps(ex, op, p);
    if (atomic_fetch_sub_explicit(&op->pending, 1, memory_order_acq_rel) == 1)
        ready(ex, op);
}

/* ------------------------------------------------------------ workers */

/* 1 when a worker could take a task now (take_slot without taking). */
static int task_slot_free(const dg_exec_t *ex)
{
    return !atomic_load_explicit(&ex->long_seen, memory_order_relaxed) ||
           atomic_load_explicit(&ex->running, memory_order_seq_cst) < ex->nworkers;
}

/* The executor's idle source (actors/system.h): the transfer layer's and
 * the devices' polls, then a ready task. At a worker's last look before it
 * sleeps only the polls run, and a task that this worker could take is
 * reported, not launched: the worker counts as asleep until it has looked. */
static int source(void *ctx, int worker, int last_look)
{
    dg_exec_t *ex = ctx;
    int did = 0;
    /* Atomic: tests/core/exec/test_xfer.c plugs a transfer layer into a
     * running one-rank executor; everywhere else it is set before start. */
    struct dg_xfer *xf = __atomic_load_n(&ex->xfer, __ATOMIC_ACQUIRE);
    if (worker == 0 && xf)
        did += dg_xfer_poll(xf);
    if (ex->dev.n)
        did += ex->dev.poll(ex->dev.ctx);
    int own = worker >= 0 && worker < ex->nworkers;
    if (last_look)
        return did + ((dg_readyq_busy(&ex->shared) || (own && dg_readyq_busy(&ex->own[worker]))) &&
                      task_slot_free(ex));
    dg_xop_t *op = NULL;
    if (own)
        op = pop_with_slot(ex, &ex->own[worker], 0);
    if (!op && (op = pop_with_slot(ex, &ex->shared, 0)) && dg_readyq_busy(&ex->shared))
        dg_act_system_wake_helper(ex->actors); /* more waiting: spread the burst */
    if (op) {
        launch(ex, op, worker);
        did++;
    }
    return did;
}

/* ------------------------------------------------------------ diagnostics */

static const char *kind_name(dg_plan_op_kind_t k)
{
    switch (k) {
    case DG_PLAN_OP_LAUNCH: return "launch";
    case DG_PLAN_OP_SEND: return "send";
    case DG_PLAN_OP_RECV: return "recv";
    case DG_PLAN_OP_COPY: return "copy";
    case DG_PLAN_OP_ALLOC: return "alloc";
    case DG_PLAN_OP_FREE: return "free";
    case DG_PLAN_OP_REGION_END: return "region-end";
    }
    return "?";
}

void dg_exec_describe_op(const dg_exec_t *ex, const dg_xop_t *op, char *buf, size_t cap)
{
    int32_t pending = atomic_load(&((dg_xop_t *)op)->pending);
    if (op->kind == DG_PLAN_OP_SEND || op->kind == DG_PLAN_OP_RECV) {
        snprintf(buf, cap, "op %llu %s tag %llx (region %llu, transfer %llu) %s rank %d, "
                 "chunk %llu, %llu bytes, waiting for %d earlier ops",
                 (unsigned long long)op->seq, kind_name(op->kind),
                 (unsigned long long)op->u.xfer.tag, (unsigned long long)(op->u.xfer.tag >> 32),
                 (unsigned long long)(op->u.xfer.tag & 0xffffffffu),
                 op->kind == DG_PLAN_OP_SEND ? "to" : "from", op->u.xfer.peer,
                 (unsigned long long)op->u.xfer.chunk, (unsigned long long)op->u.xfer.bytes,
                 pending);
    } else if (op->kind == DG_PLAN_OP_LAUNCH) {
        const dg_exec_codelet_t *cl = dg_exec_codelet(ex, op->u.launch.codelet);
        snprintf(buf, cap, "op %llu launch of task %llu (%s), waiting for %d earlier ops",
                 (unsigned long long)op->seq, (unsigned long long)op->u.launch.task,
                 cl ? cl->name : "?", pending);
    } else {
        snprintf(buf, cap, "op %llu %s, waiting for %d earlier ops", (unsigned long long)op->seq,
                 kind_name(op->kind), pending);
    }
}

void dg_exec_dump(dg_exec_t *ex, const char *why)
{
    if (DG_TRACE_ON())
        dg_trace_hang_begin(ex, why);
    uint64_t retired = atomic_load(&ex->retired);
    dg_log(DG_LOG_ERROR, "%s: %llu of %llu ops of this rank finished; unfinished ops:", why,
           (unsigned long long)retired, (unsigned long long)atomic_load(&ex->emitted));
    int shown = 0;
    for (uint64_t i = 0; i <= ex->mask && shown < 32; i++) {
        dg_xop_t *op = &ex->ring[i];
        if (!op->seq || atomic_load(&op->retired))
            continue;
        shown++;
        char line[512];
        dg_exec_describe_op(ex, op, line, sizeof(line));
        dg_log(DG_LOG_ERROR, "  %s", line);
    }
    if (ex->xfer)
        dg_xfer_dump(ex->xfer);
    if (DG_TRACE_ON())
        dg_trace_hang_end();
}
