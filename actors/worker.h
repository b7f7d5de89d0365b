/* Worker threads: run queues, the idle loop, sleeping and waking.
 *
 * Each worker has two run queues: a lock-free MPSC queue of the actors pinned
 * to it (only it runs them) and a small locked queue of unpinned actors that
 * any idle worker may steal from. An idle worker spins for a short while
 * (checking its queues, polling, sched_yield between rounds), then sleeps in
 * poll(2) on its eventfd (worker 0 also on the poller's fd).
 *
 * Wake-ups are never lost: a worker announces `sleeping` (and the counters),
 * issues a full fence and checks its queues once more before blocking; a
 * producer pushes, issues a full fence and then reads `sleeping`. Of the two,
 * at least one sees the other. `signalled` collapses repeated wake-ups into
 * one eventfd write.
 *
 * Run-next slot: an actor that a worker's own poll() gave work (a message
 * from another rank, delivered by the transport's progress on worker 0)
 * goes into that worker's `runnext` slot instead of a run queue, and its
 * first message, when the mailbox was empty, beside it instead of into the
 * mailbox. The worker runs it right after poll() returns: no queue lock, no
 * mailbox round trip, nobody to wake. Only the owning thread touches the
 * slot; it holds the actor's `scheduled` flag like a queue does, and keeps
 * the actor alive either with one `refs` (dg_act_schedule) or, for a
 * delivery (dg_act_run_next), with the registry hold the delivery already
 * had, kept until the end of the actor's turn: join waits for either. Every
 * 8th pick looks at the queues first, so a stream of remote messages cannot
 * starve queued actors. */
#ifndef DG_ACT_WORKER_H
#define DG_ACT_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "actors/actor.h"
#include "actors/mpsc.h"
#include "core/base/common.h"

struct dg_act_system;
struct dg_msg;
struct dg_reg_slot;

typedef struct dg_act_worker {
    dg_mpsc_t pinned; /* actors pinned to this worker */

    _Alignas(DG_CACHELINE) pthread_mutex_t shared_lock;
    dg_mpsc_node_t *shared_head, *shared_tail; /* unpinned actors (stealable) */
    _Atomic size_t shared_len;

    _Alignas(DG_CACHELINE) _Atomic int sleeping; /* 0 or a DG_SLEEP_ kind */
    _Atomic int signalled;
    int efd;
    int index;
    int polls;   /* worker 0 with a transport poller: it must not linger (dispatch.c),
                    its actors' next messages come only through that poller */
    int started;
    pthread_t thread;
    struct dg_act_system *sys;

    /* Owner thread only (the run-next slot, above). */
    _Alignas(DG_CACHELINE) struct dg_actor *runnext;
    struct dg_msg *runnext_msg;  /* runnext's first message (not in its mailbox), or NULL */
    struct dg_reg_slot *runnext_slot; /* registry hold keeping runnext alive, or NULL: a refs */
    int in_poll;                 /* inside the poller's poll() */
    int spinning;                /* counted in the system's nspinning */
    const struct dg_act_poller *poller; /* the poller this worker calls (worker 0), or NULL */
} dg_act_worker_t;

/* A worker's `sleeping`: asleep in its idle loop (counted in nsleeping, woken
 * for any work), or inside a task, asleep in a help wait (woken only for its
 * own actors and its reply: dg_act_worker_help). */
#define DG_SLEEP_IDLE    1
#define DG_SLEEP_HELPING 2

/* Creates the workers' eventfds and starts the threads. */
dagger_status_t dg_act_workers_start(struct dg_act_system *sys, int n);
/* Tells the workers to exit once out of work, joins them, frees them. */
void dg_act_workers_stop(struct dg_act_system *sys);

/* Queues an actor whose `scheduled` flag the caller just set (holding one
 * `refs`), and wakes a worker if needed. */
void dg_act_schedule(struct dg_act_system *sys, dg_actor_t *a);

/* Marks the actor scheduled and queues it unless it already is. Called after
 * a push: the load (a plain read while the actor stays scheduled, so a busy
 * mailbox costs no extra atomic write) pairs with the worker's store of 0
 * and its re-check of the mailbox (dispatch.c): both are sequentially
 * consistent, so either this load sees 0 or the worker sees the message. */
static inline void dg_act_schedule_if_idle(struct dg_act_system *sys, dg_actor_t *a)
{
    if (atomic_load_explicit(&a->scheduled, memory_order_seq_cst) == 0 &&
        atomic_exchange_explicit(&a->scheduled, 1, memory_order_seq_cst) == 0) {
        atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
        dg_act_schedule(sys, a);
    }
}

/* Called by the delivery of msg (checked, for actor a, held through the
 * registry slot `held`) on any thread. When the caller is a worker inside
 * its own poller's poll() and a is idle: claims a's `scheduled` flag, puts a
 * in the worker's run-next slot with msg as its first message (or behind
 * the mail already in its mailbox), takes over the hold (released at the
 * end of a's turn) and returns 1; the worker runs it as soon as poll()
 * returns. Otherwise returns 0: the caller pushes, schedules and releases
 * as usual. */
int dg_act_run_next(struct dg_act_system *sys, dg_actor_t *a, struct dg_msg *msg,
                    struct dg_reg_slot *held);

/* Wakes worker w if it sleeps, or makes its next sleep attempt return. */
void dg_act_worker_wake(dg_act_worker_t *w);
/* After work for any worker was published (an idle source's queue): wakes a
 * sleeping worker unless one is spinning (it will find the work), or in any
 * case with even_if_spinning. */
void dg_act_wake_idle(struct dg_act_system *sys, int even_if_spinning);
/* Wakes every worker asleep in its idle loop. */
void dg_act_wake_all_idle(struct dg_act_system *sys);

/* Worker w (the calling thread, its owner) is about to run work that may
 * take long: it leaves the spinning count, whose workers wakers trust to
 * find new work (dg_act_wake_idle). */
void dg_act_worker_stop_spinning(struct dg_act_system *sys, dg_act_worker_t *w);

/* Worker w, the calling thread, waits inside a task until done(arg) (a
 * request's reply, a joined actor's stop) or deadline_ns (CLOCK_MONOTONIC)
 * passes. Meanwhile it runs actor turns, from its queues and the others'
 * shared ones, and on worker 0 the transport's poller, but no idle source: a
 * task that waits starts no CPU task on its stack (a device processor's turn
 * may queue a task's device work). Otherwise the actor the task waits on
 * could sit on the queue of a worker blocked in such a task, and with every
 * thread in one, for ever (docs/actors.md, "Waiting inside tasks"). Spins
 * like an idle worker, then sleeps until work for it, the wake-up of what it
 * waits for (dg_act_worker_help_wake, which the waited-for event must call
 * after done() turns true) or the deadline. */
void dg_act_worker_help(struct dg_act_system *sys, dg_act_worker_t *w, int (*done)(const void *),
                        const void *arg, uint64_t deadline_ns);
/* The wake-up for dg_act_worker_help (arg: the worker). */
void dg_act_worker_help_wake(void *worker);
/* 1 if some actor is queued where worker w could take it (its own queues or
 * a queue it may steal from). Only w's own thread asks. */
int dg_act_worker_has_work(struct dg_act_system *sys, dg_act_worker_t *w);

/* A short pause inside a spin loop (lets the sibling hyperthread run). */
static inline void dg_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
