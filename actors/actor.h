/* The actor object: mailbox, scheduling state, handler table, counters.
 *
 * Scheduling: `scheduled` is 1 while the actor sits in a run queue or runs on
 * a worker. Whoever turns it from 0 to 1 (a sender, or the worker that just
 * ran it) queues the actor, so it is in at most one queue and runs on at most
 * one worker at a time. `refs` counts those holds (queued or running), so
 * join knows when no worker can touch the actor any more. */
#ifndef DG_ACT_ACTOR_H
#define DG_ACT_ACTOR_H

#include <dagger/actor.h>
#include <stdatomic.h>
#include <stdint.h>

#include "actors/mpsc.h"

#define DG_ACTOR_NAME_MAX 63

typedef enum {
    DG_ACTOR_RUNNING = 0,  /* accepts and handles messages */
    DG_ACTOR_STOPPING = 1, /* stop requested: drops messages, on_stop pending */
    DG_ACTOR_STOPPED = 2   /* on_stop done; join may free it */
} dg_actor_state_t;

typedef struct dg_actor {
    dg_mpsc_t mbox; /* producers' line, then the consumer's line */

    /* Read by every sender, written rarely (a schedule, a stop): its own line,
     * so a sender's read stays a cache hit while the actor runs. */
    _Alignas(DG_CACHELINE) _Atomic int scheduled;
    _Atomic int state;
    uint32_t id;
    int pinned;
    int worker;
    size_t nhandlers;

    /* Written by the worker that runs the actor, and by stop/join. */
    _Alignas(DG_CACHELINE) dg_mpsc_node_t rq; /* link in a run queue */
    _Atomic int refs;
    _Atomic int joining;
    void *join_helper; /* the joining worker while it helps (under the system's life_lock) */
    _Atomic uint64_t handled, failed, dropped, unhandled; /* handled/failed: only the runner */
    void *user_state;
    void (*on_stop)(dagger_ctx_t *ctx);
    char name[DG_ACTOR_NAME_MAX + 1];

    dagger_handler_t handlers[]; /* sorted by type; read-only after spawn */
} dg_actor_t;

/* Allocates an actor from a validated description (handlers sorted here). */
dg_actor_t *dg_actor_new(const dagger_actor_desc_t *desc);
void dg_actor_free(dg_actor_t *a);

/* The handler of a message type, or NULL. */
dagger_handler_fn dg_actor_handler(const dg_actor_t *a, uint32_t type);

/* One more for a counter that only one thread at a time updates. */
static inline void dg_count(_Atomic uint64_t *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

#endif
