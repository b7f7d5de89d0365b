/* Worker threads and their idle loop (protocol in worker.h). */
#include "actors/worker.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "actors/clock.h"
#include "actors/ctx.h"
#include "actors/dispatch.h"
#include "actors/msg.h"
#include "actors/system_impl.h"
#include "actors/thread_sched.h"
#include "core/base/alloc.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"

/* How long an idle worker keeps looking for work before it sleeps, and how
 * many cheap checks it makes between two sched_yield calls. Long enough to
 * catch the answer of a round trip without a wake-up, short enough that an
 * idle process costs nothing to its neighbours. */
#ifndef DG_SPIN_NS /* overridable at build time for the spin-length comparison */
#define DG_SPIN_NS      50000ull
#endif
#define DG_SPIN_CHECKS  32

/* ---------------------------------------------------------------- queues */

static void shared_push(dg_act_worker_t *w, dg_actor_t *a)
{
    atomic_store_explicit(&a->rq.next, NULL, memory_order_relaxed);
    pthread_mutex_lock(&w->shared_lock);
    if (w->shared_tail)
        atomic_store_explicit(&w->shared_tail->next, &a->rq, memory_order_relaxed);
    else
        w->shared_head = &a->rq;
    w->shared_tail = &a->rq;
    atomic_fetch_add_explicit(&w->shared_len, 1, memory_order_seq_cst);
    pthread_mutex_unlock(&w->shared_lock);
}

static dg_actor_t *shared_pop(dg_act_worker_t *w)
{
    if (atomic_load_explicit(&w->shared_len, memory_order_relaxed) == 0)
        return NULL;
    pthread_mutex_lock(&w->shared_lock);
    dg_mpsc_node_t *n = w->shared_head;
    if (n) {
        w->shared_head = atomic_load_explicit(&n->next, memory_order_relaxed);
        if (!w->shared_head)
            w->shared_tail = NULL;
        atomic_fetch_sub_explicit(&w->shared_len, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&w->shared_lock);
    return n ? DG_CONTAINER_OF(n, dg_actor_t, rq) : NULL;
}

static dg_actor_t *pinned_pop(dg_act_worker_t *w)
{
    dg_mpsc_node_t *n;
    return dg_mpsc_pop(&w->pinned, &n) == DG_MPSC_ITEM ? DG_CONTAINER_OF(n, dg_actor_t, rq) : NULL;
}

static dg_actor_t *take_runnext(dg_act_worker_t *w, dg_act_turn_t *turn)
{
    dg_actor_t *a = w->runnext;
    turn->first = w->runnext_msg;
    turn->held = w->runnext_slot;
    w->runnext = NULL;
    w->runnext_msg = NULL;
    w->runnext_slot = NULL;
    return a;
}

/* The next actor to run (with its first message when it has one outside
 * its mailbox): the run-next slot, then pinned ones, but every 8th pick the
 * shared queue first and the slot last so nothing starves; then steal from
 * the others. */
static dg_actor_t *next_actor(dg_act_system_t *sys, dg_act_worker_t *w, unsigned tick,
                              dg_act_turn_t *turn)
{
    *turn = (dg_act_turn_t){NULL, NULL};
    if (w->runnext && (tick & 7))
        return take_runnext(w, turn);
    dg_actor_t *a = (tick & 7) ? pinned_pop(w) : shared_pop(w);
    if (!a)
        a = (tick & 7) ? shared_pop(w) : pinned_pop(w);
    if (!a && w->runnext)
        return take_runnext(w, turn);
    for (int k = 1; !a && k < sys->nworkers; k++)
        a = shared_pop(&sys->workers[(w->index + k) % sys->nworkers]);
    return a;
}

int dg_act_worker_has_work(dg_act_system_t *sys, dg_act_worker_t *w)
{
    if (w->runnext || !dg_mpsc_is_empty(&w->pinned))
        return 1;
    for (int k = 0; k < sys->nworkers; k++)
        if (atomic_load_explicit(&sys->workers[k].shared_len, memory_order_seq_cst))
            return 1;
    return 0;
}

/* -------------------------------------------------------------- waking */

void dg_act_worker_wake(dg_act_worker_t *w)
{
    if (atomic_exchange_explicit(&w->signalled, 1, memory_order_seq_cst) == 0) {
        uint64_t one = 1;
        ssize_t rc = write(w->efd, &one, sizeof(one));
        DG_UNUSED(rc); /* the counter cannot overflow: signalled dedups writes */
    }
}

/* Wakes one worker asleep in its idle loop; one asleep in a help wait
 * (DG_SLEEP_HELPING) takes only actor turns, so it is not woken for work
 * that any worker may take. */
static void wake_one_sleeper(dg_act_system_t *sys)
{
    for (int k = 0; k < sys->nworkers; k++)
        if (atomic_load_explicit(&sys->workers[k].sleeping, memory_order_seq_cst) == DG_SLEEP_IDLE) {
            dg_act_worker_wake(&sys->workers[k]);
            return;
        }
}

/* The calling worker, when it is inside its poller's poll() and its run-next
 * slot is free and may take a. */
static dg_act_worker_t *runnext_worker(dg_act_system_t *sys, const dg_actor_t *a)
{
    int me = dg_act_tls_worker(sys);
    if (me < 0)
        return NULL;
    dg_act_worker_t *w = &sys->workers[me];
    return w->in_poll && !w->runnext && (!a->pinned || a->worker == me) ? w : NULL;
}

int dg_act_run_next(dg_act_system_t *sys, dg_actor_t *a, dg_msg_t *msg, dg_reg_slot_t *held)
{
    dg_act_worker_t *w = runnext_worker(sys, a);
    if (!w || atomic_load_explicit(&a->scheduled, memory_order_seq_cst) != 0 ||
        atomic_exchange_explicit(&a->scheduled, 1, memory_order_seq_cst) != 0)
        return 0;
    w->runnext = a;
    w->runnext_slot = held; /* instead of a `refs`: one atomic less each way */
    /* Mail already queued (a sender that has not looked at `scheduled` yet,
     * or messages the last runner left) is older than msg: msg goes behind
     * it. An empty mailbox holds nothing of this thread's, so msg is first;
     * other senders' concurrent pushes are not ordered against it anyway. */
    if (dg_mpsc_is_empty(&a->mbox))
        w->runnext_msg = msg;
    else
        dg_mpsc_push(&a->mbox, &msg->link);
    return 1;
}

void dg_act_schedule(dg_act_system_t *sys, dg_actor_t *a)
{
    dg_act_worker_t *self = runnext_worker(sys, a);
    if (self) {
        self->runnext = a; /* runs as soon as poll() returns: nobody to wake */
        return;
    }
    if (a->pinned) {
        dg_act_worker_t *w = &sys->workers[a->worker];
        dg_mpsc_push(&w->pinned, &a->rq);
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&w->sleeping, memory_order_seq_cst))
            dg_act_worker_wake(w);
        return;
    }
    /* Unpinned: onto this worker's own queue (the actor it talks to is
     * likely warm in this cache), or round robin from a plain thread. */
    int t = dg_act_tls_worker(sys);
    if (t < 0)
        t = (int)(atomic_fetch_add_explicit(&sys->rr, 1, memory_order_relaxed) % (unsigned)sys->nworkers);
    shared_push(&sys->workers[t], a);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&sys->workers[t].sleeping, memory_order_seq_cst))
        dg_act_worker_wake(&sys->workers[t]);
    else if (atomic_load_explicit(&sys->nspinning, memory_order_seq_cst) == 0 &&
             atomic_load_explicit(&sys->nsleeping, memory_order_seq_cst) > 0)
        wake_one_sleeper(sys); /* nobody idle is looking: let a sleeper steal it */
}

void dg_act_worker_stop_spinning(dg_act_system_t *sys, dg_act_worker_t *w)
{
    if (w->spinning) {
        w->spinning = 0;
        atomic_fetch_sub_explicit(&sys->nspinning, 1, memory_order_seq_cst);
    }
}

void dg_act_wake_idle(dg_act_system_t *sys, int even_if_spinning)
{
    atomic_thread_fence(memory_order_seq_cst);
    if ((even_if_spinning || atomic_load_explicit(&sys->nspinning, memory_order_seq_cst) == 0) &&
        atomic_load_explicit(&sys->nsleeping, memory_order_seq_cst) > 0)
        wake_one_sleeper(sys);
}

void dg_act_wake_all_idle(dg_act_system_t *sys)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&sys->nsleeping, memory_order_seq_cst) == 0)
        return;
    for (int k = 0; k < sys->nworkers; k++)
        if (atomic_load_explicit(&sys->workers[k].sleeping, memory_order_seq_cst) == DG_SLEEP_IDLE)
            dg_act_worker_wake(&sys->workers[k]);
}

/* ------------------------------------------------------------ idle work */

/* Worker 0 switches to the poller set by dg_act_system_set_poller. */
static void adopt_poller(dg_act_system_t *sys, dg_act_poller_t *cur, uint64_t *seen)
{
    uint64_t gen = atomic_load_explicit(&sys->poller_gen, memory_order_acquire);
    if (gen == *seen)
        return;
    pthread_mutex_lock(&sys->poller_lock);
    *cur = sys->poller_next;
    *seen = sys->poller_ack = atomic_load_explicit(&sys->poller_gen, memory_order_relaxed);
    pthread_cond_broadcast(&sys->poller_cond);
    pthread_mutex_unlock(&sys->poller_lock);
}

static int poll_idle_sources(dg_act_system_t *sys, int worker, int last_look)
{
    int n = atomic_load_explicit(&sys->nidle, memory_order_acquire), did = 0;
    for (int i = 0; i < n; i++)
        did |= sys->idle[i].fn(sys->idle[i].ctx, worker, last_look) > 0;
    return did;
}

/* Blocks until woken (see worker.h for why no wake-up is lost). */
static void worker_sleep(dg_act_system_t *sys, dg_act_worker_t *w, const dg_act_poller_t *poller)
{
    atomic_store_explicit(&w->sleeping, DG_SLEEP_IDLE, memory_order_seq_cst);
    atomic_fetch_add_explicit(&sys->nsleeping, 1, memory_order_seq_cst);
    w->spinning = 0;
    atomic_fetch_sub_explicit(&sys->nspinning, 1, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst);
    int nfds = poller->poll ? 2 : 1;
    /* Work an idle source got after this worker's last look, while nobody
     * counted it as asleep, is found here: dg_act_wake_idle then either saw
     * this worker spinning or sees it sleeping. The sources only report it
     * (last_look): run here, a task would keep this worker counted asleep,
     * and a wake-up for new work could pick it while the real sleepers
     * sleep on (system.h). Reported work is taken by the loop, awake. */
    int found = 0;
    if (!dg_act_worker_has_work(sys, w) && !atomic_load(&w->signalled) && !atomic_load(&sys->quit) &&
        !(found = poll_idle_sources(sys, w->index, 1)) &&
        (!poller->arm || poller->arm(poller->ctx) == 0)) {
        struct pollfd fds[2] = {{.fd = w->efd, .events = POLLIN}, {.fd = poller->fd, .events = POLLIN}};
        if (poll(fds, (nfds_t)nfds, -1) < 0 && errno != EINTR)
            dg_log(DG_LOG_ERROR, "worker %d: poll failed: %s", w->index, strerror(errno));
    }
    atomic_store_explicit(&w->sleeping, 0, memory_order_seq_cst);
    atomic_fetch_sub_explicit(&sys->nsleeping, 1, memory_order_seq_cst);
    if (atomic_exchange_explicit(&w->signalled, 0, memory_order_seq_cst)) {
        uint64_t v;
        ssize_t rc = read(w->efd, &v, sizeof(v)); /* non-blocking: may find it drained */
        DG_UNUSED(rc);
        /* Woken between its last look, which found work of its own, and
         * here: the wake-up may have been for other work, which this worker
         * (off to its own, perhaps long) leaves to a real sleeper. */
        if (found)
            dg_act_wake_idle(sys, 1);
    }
}

/* One call of the poller's poll(); deliveries it makes may fill the
 * run-next slot (dg_act_schedule, dg_act_run_next). */
static int poll_once(dg_act_worker_t *w, const dg_act_poller_t *poller)
{
    w->in_poll = 1;
    int did = poller->poll(poller->ctx) > 0;
    w->in_poll = 0;
    return did || w->runnext;
}

/* A short wait between two looks for work: cheap checks, then a yield.
 * Worker 0 also polls the transport between them: messages for its actors
 * arrive only that way, and a yield is a slow way to wait for them. Returns
 * 1 when that poll did work (the caller then skips its own next poll: the
 * actor a message arrived for runs first). */
static int spin_pause(dg_act_system_t *sys, dg_act_worker_t *w, const dg_act_poller_t *poller)
{
    for (int i = 0; i < DG_SPIN_CHECKS; i++) {
        if (dg_act_worker_has_work(sys, w))
            return 0;
        if (poller->poll && poll_once(w, poller))
            return 1;
        dg_cpu_relax();
    }
    dg_spin_pause();
    return 0;
}

/* ------------------------------------------------------------ help waits */

/* Sleeps until woken, done(arg), or the deadline passes (a help wait
 * with nothing to do). Only actor work wakes it: an actor queued for this
 * worker (dg_act_schedule sees `sleeping`), what it waits for (its waker),
 * and on worker 0 the transport's fd. It is not counted in nsleeping. */
static void help_sleep(dg_act_system_t *sys, dg_act_worker_t *w, const dg_act_poller_t *poller,
                       int (*done)(const void *), const void *arg, uint64_t deadline_ns)
{
    atomic_store_explicit(&w->sleeping, DG_SLEEP_HELPING, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst);
    int nfds = poller && poller->poll ? 2 : 1;
    if (!dg_act_worker_has_work(sys, w) && !atomic_load(&w->signalled) && !done(arg) &&
        (nfds == 1 || !poller->arm || poller->arm(poller->ctx) == 0)) {
        uint64_t now = dg_now_ns();
        int ms = -1;
        if (deadline_ns != UINT64_MAX)
            ms = now >= deadline_ns ? 0 : (int)DG_MIN((deadline_ns - now + 999999) / 1000000, 60000);
        struct pollfd fds[2] = {{.fd = w->efd, .events = POLLIN},
                                {.fd = nfds == 2 ? poller->fd : -1, .events = POLLIN}};
        if (poll(fds, (nfds_t)nfds, ms) < 0 && errno != EINTR)
            dg_log(DG_LOG_ERROR, "worker %d: poll failed: %s", w->index, strerror(errno));
    }
    atomic_store_explicit(&w->sleeping, 0, memory_order_seq_cst);
    if (atomic_exchange_explicit(&w->signalled, 0, memory_order_seq_cst)) {
        uint64_t v;
        ssize_t rc = read(w->efd, &v, sizeof(v)); /* non-blocking: may find it drained */
        DG_UNUSED(rc);
    }
}

void dg_act_worker_help(dg_act_system_t *sys, dg_act_worker_t *w, int (*done)(const void *),
                        const void *arg, uint64_t deadline_ns)
{
    /* Not looking for tasks: wakers must not count on this worker. */
    dg_act_worker_stop_spinning(sys, w);
    /* Worker 0 polls the transport too (a reply from another rank comes
     * only that way), unless the wait is inside that poll already. */
    const dg_act_poller_t *poller = w->index == 0 && !w->in_poll ? w->poller : NULL;
    dagger_ctx_t *outer = dg_act_tls.ctx;
    uint64_t idle_since = 0;
    for (unsigned tick = 1; !done(arg); tick++) {
        int did = poller && poller->poll && poll_once(w, poller);
        dg_act_turn_t turn;
        dg_actor_t *a = next_actor(sys, w, tick, &turn);
        if (a) {
            dg_act_run_actor(sys, w, a, &turn);
            dg_act_tls.ctx = outer;
            did = 1;
        }
        if (did) {
            idle_since = 0;
            continue;
        }
        uint64_t now = dg_now_ns();
        if (now >= deadline_ns)
            break;
        if (!idle_since)
            idle_since = now;
        if (now - idle_since < DG_SPIN_NS) {
            for (int i = 0; i < DG_SPIN_CHECKS && !dg_act_worker_has_work(sys, w) && !done(arg); i++)
                dg_cpu_relax();
            dg_spin_pause();
            continue;
        }
        help_sleep(sys, w, poller, done, arg, deadline_ns);
        idle_since = 0;
    }
}

void dg_act_worker_help_wake(void *worker)
{
    dg_act_worker_wake(worker);
}

static void pin_self(dg_act_system_t *sys, dg_act_worker_t *w)
{
    if (sys->bind && dg_topo_bind_self(&sys->topo, w->index) != 0)
        dg_log(w->index == 0 ? DG_LOG_WARN : DG_LOG_DEBUG,
               "worker %d: cannot pin to a core (%s); running unpinned (DAGGER_BIND_THREADS=0 "
               "silences this)", w->index, strerror(errno));
}

/* The thread's name ("dagger-w<index>") and its scheduler slice
 * (thread_sched.h). A kernel that refuses the slice, or does not keep it,
 * leaves the worker as it was; worker 0 says so once. */
static void name_and_slice_self(dg_act_system_t *sys, dg_act_worker_t *w)
{
    char name[16];
    snprintf(name, sizeof(name), "dagger-w%d", w->index);
    dg_thread_name(name);
    if (!sys->slice_us)
        return;
    int rc = dg_thread_set_slice((uint32_t)sys->slice_us);
    uint64_t kept = 0;
    if (!rc)
        rc = dg_thread_slice_ns(0, &kept);
    if (w->index == 0 && (rc || kept != (uint64_t)sys->slice_us * 1000u))
        dg_log(DG_LOG_WARN, "DAGGER_SCHED_SLICE_US=%d has no effect here: %s", sys->slice_us,
               rc ? strerror(rc) : "this kernel keeps no slice for normal threads (Linux 6.12 "
                                  "and later do)");
}

static void *worker_main(void *arg)
{
    dg_act_worker_t *w = arg;
    dg_act_system_t *sys = w->sys;
    dg_act_tls.sys = sys;
    dg_act_tls.worker = w->index;
    pin_self(sys, w);
    name_and_slice_self(sys, w);
    dg_act_poller_t poller = {0};
    w->poller = &poller;
    uint64_t poller_seen = 0, spin_since = 0;
    int polled = 0;
    for (unsigned tick = 0;; tick++) {
        int did = polled; /* spin_pause's poll just did work: run it before polling again */
        if (w->index == 0 && !polled) {
            adopt_poller(sys, &poller, &poller_seen);
            w->polls = poller.poll != NULL;
            if (poller.poll)
                did = poll_once(w, &poller);
        }
        polled = 0;
        dg_act_turn_t turn;
        dg_actor_t *a = next_actor(sys, w, tick, &turn);
        if (a)
            dg_act_run_actor(sys, w, a, &turn);
        /* Idle sources run when there is nothing else, and every 16th turn
         * anyway, so a stream of actor messages cannot starve them. */
        if ((!a && !did) || (tick & 15) == 0)
            did |= poll_idle_sources(sys, w->index, 0);
        if (a || did) {
            if (DG_TRACE_ON())
                dg_trace_worker_busy(a != NULL);
            dg_act_worker_stop_spinning(sys, w);
            continue;
        }
        if (atomic_load_explicit(&sys->quit, memory_order_acquire))
            break;
        if (!w->spinning) {
            if (DG_TRACE_ON())
                dg_trace_worker_idle(w->index);
            w->spinning = 1;
            spin_since = dg_now_ns();
            atomic_fetch_add_explicit(&sys->nspinning, 1, memory_order_seq_cst);
        } else if (dg_now_ns() - spin_since > DG_SPIN_NS) {
            worker_sleep(sys, w, &poller); /* leaves the spinning count */
            continue;
        }
        polled = spin_pause(sys, w, &poller);
    }
    dg_act_worker_stop_spinning(sys, w);
    w->poller = NULL;
    dg_act_tls.sys = NULL;
    dg_act_tls.worker = -1;
    return NULL;
}

/* ------------------------------------------------------------ lifecycle */

static int worker_init(dg_act_system_t *sys, dg_act_worker_t *w, int index)
{
    memset(w, 0, sizeof(*w));
    dg_mpsc_init(&w->pinned);
    pthread_mutex_init(&w->shared_lock, NULL);
    atomic_init(&w->shared_len, 0);
    atomic_init(&w->sleeping, 0);
    atomic_init(&w->signalled, 0);
    w->index = index;
    w->sys = sys;
    w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return w->efd < 0 ? -1 : 0;
}

static void worker_cleanup(dg_act_worker_t *w)
{
    if (w->efd >= 0)
        close(w->efd);
    pthread_mutex_destroy(&w->shared_lock);
}

dagger_status_t dg_act_workers_start(dg_act_system_t *sys, int n)
{
    sys->workers = dg_aligned_alloc(DG_CACHELINE, (size_t)n * sizeof(dg_act_worker_t));
    if (!sys->workers)
        return dg_error(DAGGER_ERR_NO_MEMORY, "no memory for %d worker threads", n);
    sys->nworkers = 0;
    for (int i = 0; i < n; i++) {
        if (worker_init(sys, &sys->workers[i], i)) {
            dagger_status_t st = dg_error(DAGGER_ERR_SYSTEM, "eventfd for worker %d failed: %s", i,
                                          strerror(errno));
            worker_cleanup(&sys->workers[i]);
            dg_act_workers_stop(sys);
            return st;
        }
        sys->nworkers = i + 1;
    }
    atomic_store(&sys->running, 1);
    for (int i = 0; i < n; i++) {
        int rc = pthread_create(&sys->workers[i].thread, NULL, worker_main, &sys->workers[i]);
        if (rc) {
            dagger_status_t st = dg_error(DAGGER_ERR_SYSTEM, "cannot start worker thread %d of %d: %s",
                                          i, n, strerror(rc));
            dg_act_workers_stop(sys);
            return st;
        }
        sys->workers[i].started = 1;
    }
    return DAGGER_OK;
}

void dg_act_workers_stop(dg_act_system_t *sys)
{
    atomic_store(&sys->quit, 1);
    for (int i = 0; i < sys->nworkers; i++)
        dg_act_worker_wake(&sys->workers[i]);
    for (int i = 0; i < sys->nworkers; i++)
        if (sys->workers[i].started)
            pthread_join(sys->workers[i].thread, NULL);
    pthread_mutex_lock(&sys->poller_lock);
    atomic_store(&sys->running, 0);
    pthread_cond_broadcast(&sys->poller_cond); /* a set_poller waiting for worker 0 */
    pthread_mutex_unlock(&sys->poller_lock);
    for (int i = 0; i < sys->nworkers; i++)
        worker_cleanup(&sys->workers[i]);
    free(sys->workers);
    sys->workers = NULL;
    sys->nworkers = 0;
}
