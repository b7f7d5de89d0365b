/* The actor system of one rank: worker threads, actors, message types,
 * futures and timers. This header is the kernel's interface to the other
 * layers (the runtime object, the transport, the task executor); the
 * contracts below are those of docs/design.md section 3. */
#ifndef DG_ACT_SYSTEM_H
#define DG_ACT_SYSTEM_H

#include <dagger/actor.h>
#include <stdint.h>

#include "actors/msg.h"

typedef struct dg_act_system dg_act_system_t;

typedef struct dg_act_params {
    int rank;        /* this rank (0 for a singleton) */
    int nranks;      /* ranks in the job (1 for a singleton) */
    int num_threads; /* worker threads; 0 = one per core of the process binding */
    int local_rank;  /* this process among the job's processes on its node... */
    int local_size;  /* ...and their number (0 or 1: alone); unbound processes share the cores */
    int bind;        /* 1: pin each worker to one core of the process binding */
    int slice_us;    /* scheduler slice each worker asks for (thread_sched.h); 0 = none */
    int no_spin_yield; /* 1: spinning threads keep their core (dg_spin_pause) */
    void *owner;     /* what dagger_ctx_runtime() returns (the dagger_runtime_t) */
} dg_act_params_t;

/* Reads the process binding (hwloc), starts the workers and the timer
 * thread. Errors: DAGGER_ERR_INVALID_ARG, DAGGER_ERR_NO_MEMORY,
 * DAGGER_ERR_SYSTEM (threads, eventfd or hwloc failed). */
dagger_status_t dg_act_system_create(const dg_act_params_t *params, dg_act_system_t **sys);

/* Stops every live actor and joins it (workers keep running, so the
 * transport can still progress). Must not be called from a handler. */
void dg_act_system_stop_all(dg_act_system_t *sys);

/* dg_act_system_stop_all, then stops the timer and worker threads and frees
 * everything (pending futures and timers included). */
void dg_act_system_destroy(dg_act_system_t *sys);

int dg_act_system_num_workers(const dg_act_system_t *sys);

/* Pins the calling thread to the cores the workers use, when the workers are
 * pinned and the process took its share of an unbound node (actors/
 * topology.h): the thread that submits then shares its rank's cores, not
 * another rank's, as under a launcher's binding. 1 when it did, 0 when there
 * is no share (or the OS refused: nothing changed). dg_act_system_destroy
 * puts the thread's binding back when that same thread calls it (a thread
 * that may be gone is not touched). At most once per system. */
int dg_act_system_bind_caller(dg_act_system_t *sys);

int dg_act_system_rank(const dg_act_system_t *sys);

/* The worker index of the calling thread if it is a worker of sys, else -1. */
int dg_act_current_worker(const dg_act_system_t *sys);

/* The handler context running on this thread, or NULL outside handlers. */
dagger_ctx_t *dg_act_current_ctx(void);

/* The system's message type registry. */
struct dg_msgtypes *dg_act_system_types(dg_act_system_t *sys);

/* Calls fn for every registered message type (in no particular order), and
 * for every live actor of this rank: what a trace names. */
void dg_act_system_each_type(dg_act_system_t *sys,
                             void (*fn)(void *arg, uint32_t id, const char *name), void *arg);
void dg_act_system_each_actor(dg_act_system_t *sys,
                              void (*fn)(void *arg, uint32_t id, const char *name), void *arg);

/* ------------------------------------------------ contracts (design.md §3) */

/* The transport installs this; the kernel calls it for messages whose
 * destination rank is not the local rank. Ownership of msg passes to route
 * (also when it fails). Until a route is installed, such sends fail with
 * DAGGER_ERR_NO_SUCH_ACTOR ("rank N is not reachable"). Install it before
 * remote traffic starts; fn NULL removes it. my_rank must be the rank the
 * system was created with. */
typedef dagger_status_t (*dg_act_route_fn)(void *ctx, dg_msg_t *msg);
void dg_act_system_set_route(dg_act_system_t *sys, int my_rank, int nranks, dg_act_route_fn fn,
                             void *ctx);

/* Delivers a message that arrived from another rank to a local actor (or to
 * a future of this rank). Takes ownership of msg in every case. The type is
 * checked against this rank's registry; a destination without a handler for
 * it counts the message (dagger_actor_stats_t.unhandled) and logs a warning.
 * A failed request from a future is answered with an error reply. Returns
 * the delivery status (DAGGER_ERR_MSG_TYPE, DAGGER_ERR_MSG_SIZE,
 * DAGGER_ERR_NO_SUCH_ACTOR, DAGGER_ERR_ACTOR_STOPPED, DAGGER_ERR_PROTOCOL for
 * a message not addressed to this rank). Any thread. */
dagger_status_t dg_act_deliver(dg_act_system_t *sys, dg_msg_t *msg);

/* Worker 0 calls poll() every time it looks for work and arm()+waits on fd
 * before blocking: this is how UCX progress shares the communication worker.
 * poll returns >0 when it did work; arm returns 0 when armed (worker 0 may
 * sleep in poll(2) on its wake-up fd and on fd), non-zero when events are
 * pending (worker 0 polls again instead of sleeping). Messages poll delivers
 * (dg_act_deliver) to an idle actor that worker 0 may run are run right
 * after poll returns, by worker 0, ahead of its run queues (worker.h).
 * send_now is optional (NULL: none): on worker 0 only, the kernel offers it
 * a small message for another rank, already checked and routable, which it
 * built on its stack; send_now returns 1 when the message is sent and no
 * longer needed (the transport completed the send at once), 0 when the
 * kernel should route a heap copy as usual. p NULL removes the poller.
 * Unless called on worker 0 itself, this returns after worker 0 has switched
 * to the new poller: after set_poller(sys, NULL) returns, the old
 * poll/arm/send_now are never called again. */
typedef struct dg_act_poller {
    int (*poll)(void *ctx); /* >0: did work */
    int (*arm)(void *ctx);  /* 0: armed, may sleep */
    int fd;
    void *ctx;
    int (*send_now)(void *ctx, dg_msg_t *msg); /* 1: sent, msg not kept */
} dg_act_poller_t;
void dg_act_system_set_poller(dg_act_system_t *sys, const dg_act_poller_t *p);

/* Any thread: wake worker w (e.g. worker 0 after pushing to the outbox). A
 * wake-up is never lost: a worker about to sleep sees it and runs its loop
 * (worker 0 calls poll()) once more. */
void dg_act_system_wake(dg_act_system_t *sys, int w);

/* Any thread, after publishing work that any worker may take (an idle
 * source's shared queue): wakes one sleeping worker unless a worker is
 * spinning. A worker about to sleep looks at the idle sources once more after
 * it announced it (last_look), so no such work is left behind. */
void dg_act_system_wake_any(dg_act_system_t *sys);
/* A worker that took shared work and sees more of it waiting: wakes one
 * sleeping worker even while others spin, so a burst spreads over the
 * workers (each woken worker does the same in turn). */
void dg_act_system_wake_helper(dg_act_system_t *sys);
/* Wakes every worker asleep in its idle loop (not those asleep in a help
 * wait): work is about to come (the executor, as a region opens). */
void dg_act_system_wake_sleepers(dg_act_system_t *sys);

/* Extra work sources polled by idle workers (the task executor's ready
 * queues), and by busy workers every 16th turn so actor traffic cannot
 * starve them. fn returns >0 when it did work. Whoever adds work for a
 * source must dg_act_system_wake() a worker. At most
 * DG_ACT_MAX_IDLE_SOURCES sources (more are refused with an error log).
 *
 * last_look: the worker has announced that it is going to sleep and counts
 * as asleep, so a wake-up meant for whoever is asleep may pick it. Then fn
 * must not start work that may take long (a task): it does only quick work
 * (polls) and returns >0 when work waits for this worker. The worker then
 * stays awake and calls fn again with last_look 0 to take it. A long task
 * run from the last look used to swallow the wake-ups of the other
 * sleepers for as long as it ran (docs/design.md, section 3, "Idle and
 * sleep"). */
#define DG_ACT_MAX_IDLE_SOURCES 16
typedef int (*dg_act_idle_fn)(void *ctx, int worker, int last_look);
/* Called on worker `worker`'s thread before it runs work from an idle
 * source that may take long (the executor: a task whose codelet is long or
 * not timed yet): the worker stops counting as spinning. A spinning worker
 * is trusted by dg_act_system_wake_any to find new work, so one counted
 * spinning through a long task left new work unwoken for as long as the
 * task ran. Short work keeps the count: its worker is back at once, and
 * waking a sleeper for each new task cost small-task regions time. */
void dg_act_system_worker_busy(dg_act_system_t *sys, int worker);
void dg_act_system_add_idle_source(dg_act_system_t *sys, dg_act_idle_fn fn, void *ctx);

/* ----------------------------------------- kernel calls for the other layers */

/* The public calls of dagger/actor.h minus the runtime-handle check; what
 * (e.g. "dagger_send") starts error details. */
dagger_status_t dg_act_spawn(dg_act_system_t *sys, const dagger_actor_desc_t *desc,
                             dagger_actor_addr_t *addr);
dagger_status_t dg_act_stop(dg_act_system_t *sys, dagger_actor_addr_t addr);
dagger_status_t dg_act_join(dg_act_system_t *sys, dagger_actor_addr_t addr, int64_t timeout_us,
                            dagger_actor_stats_t *stats);

/* Waits for the reply of request id (a future of sys->futures) until
 * deadline_ns and copies it into reply, as dg_future_wait. On a worker
 * thread (a task's codelet that asks an actor) the worker runs actor turns
 * while it waits (dg_act_worker_help); any other thread sleeps. */
dagger_status_t dg_act_request_wait(dg_act_system_t *sys, uint64_t id, uint64_t deadline_ns,
                                    dagger_reply_t *reply);

/* Sends a copy of payload. from is usually dg_act_self_or_none(sys). */
dagger_status_t dg_act_send(dg_act_system_t *sys, dagger_actor_addr_t from, dagger_actor_addr_t to,
                            uint32_t type, uint32_t flags, uint64_t corr, const void *payload,
                            size_t size, const char *what);

/* A message for dg_act_post. from_set 0: from the running actor (or from
 * no actor). keep (optional): called on the message's payload copy when the
 * message must wait in the mailbox (the actor is busy on another thread),
 * to make what the payload points to outlive the call (e.g. copy bytes the
 * caller only lends); non-OK fails the post. */
typedef struct dg_act_post {
    dagger_actor_addr_t from, to;
    int from_set;
    uint32_t type;
    const void *payload;
    size_t size;
    dagger_status_t (*keep)(void *payload);
    const char *what;
} dg_act_post_t;

/* Sends a copy of p->payload to actor p->to and, when that is a local actor
 * not pinned to another worker and no other thread is running it, runs its
 * turn now on the calling thread: any mail it already had, then this
 * message (*direct = 1: handled before this returns). When another thread
 * runs it, the message waits in its mailbox and that thread handles it
 * before letting go (*direct = 0). Remote destinations: dg_act_send.
 * Errors as dg_act_send. Any thread, also inside another actor's handler. */
dagger_status_t dg_act_post(dg_act_system_t *sys, const dg_act_post_t *p, int *direct);

/* The actor object of a local address, for the runtime's own actors, which
 * the caller keeps alive (it never joins them while it uses the pointer);
 * NULL when there is no such actor. */
struct dg_actor;
struct dg_actor *dg_act_local(dg_act_system_t *sys, dagger_actor_addr_t addr);

/* A turn for a message the caller keeps (m is not freed: it may live on
 * the caller's stack; m->hdr names type, to and from), run now on the
 * calling thread in a's context. An actor pinned to the calling worker
 * needs no claim (no other thread ever runs it); an unpinned actor is
 * claimed when idle, like a direct turn. Returns 1 when m was handled, 0 when the
 * turn cannot run here (pinned elsewhere, busy on another thread, not
 * running, this thread is inside a's turn, or mail was waiting, which this
 * call handled first): the caller then sends a copy the ordinary way
 * (dg_act_post), which keeps a sender's order. */
int dg_act_run_borrowed(dg_act_system_t *sys, struct dg_actor *a, dg_msg_t *m);

/* The hottest of the runtime's own messages (a task's launch, a
 * submission to the planner) are prepared once: the destination's object
 * and the handler of the type, looked up when the runtime starts (handler
 * tables never change after spawn). dg_act_run_prepared is then
 * dg_act_run_borrowed without the look-up. */
typedef struct dg_act_prepared {
    struct dg_actor *actor;
    dagger_handler_fn fn;
    dagger_actor_addr_t to;
    uint32_t type;
} dg_act_prepared_t;
dagger_status_t dg_act_prepare(dg_act_system_t *sys, dagger_actor_addr_t to, uint32_t type,
                               dg_act_prepared_t *out);
int dg_act_run_prepared(dg_act_system_t *sys, const dg_act_prepared_t *p, dg_msg_t *m);

/* Bound actors (a thread that holds an actor across many turns):
 * actors/bound.h. */

/* dg_act_post for the runtime's own actors, whose object a the caller
 * keeps (dg_act_local): the message is built on this thread's stack and,
 * when a's turn can run here (dg_act_run_borrowed), handled at once with no
 * allocation, registry hold or type lookup beyond the handler's; otherwise
 * it is posted as a copy (dg_act_post, which checks and reports). */
dagger_status_t dg_act_post_local(dg_act_system_t *sys, struct dg_actor *a, const dg_act_post_t *p,
                                  int *direct);
/* dg_act_post_local for a message that any of n interchangeable actors
 * (a[i] at address to[i]) may handle: the first whose turn can run here
 * takes it; when none can, it waits in the mailbox of p->to (which is one
 * of them). */
dagger_status_t dg_act_post_any(dg_act_system_t *sys, struct dg_actor *const *a,
                                const dagger_actor_addr_t *to, int n, const dg_act_post_t *p,
                                int *direct);

/* The checks of dg_act_send without sending: type and size, and whether the
 * destination would take it now (timers check this when they are set). */
dagger_status_t dg_act_check_dest(dg_act_system_t *sys, dagger_actor_addr_t to, uint32_t type,
                                  size_t size, const char *what);

/* The running actor's address on this thread, or "no actor" of this rank. */
dagger_actor_addr_t dg_act_self_or_none(dg_act_system_t *sys);

/* A fresh correlation id (unique within this rank, never 0). */
uint64_t dg_act_next_corr(dg_act_system_t *sys);

#endif
