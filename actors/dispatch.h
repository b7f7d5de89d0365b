/* Running one actor on a worker: a batch of its messages, its stop, and the
 * hand-back of its `scheduled` flag. */
#ifndef DG_ACT_DISPATCH_H
#define DG_ACT_DISPATCH_H

#include "actors/actor.h"

struct dg_act_system;
struct dg_act_worker;

/* At most this many messages per turn, so one busy actor cannot starve the
 * others queued on the same worker. */
#define DG_ACT_BATCH 64

/* How long an actor whose mailbox ran dry waits for its next message before
 * it hands itself back, when its worker has nothing else to run. A steady
 * stream then keeps the actor scheduled (senders skip the scheduling path),
 * and a request's answer is often handled without a round through the run
 * queue. */
#define DG_ACT_LINGER_NS 2000
/* How a turn was handed over beside the actor (the run-next slot in
 * worker.h); both NULL for an actor from a run queue. */
struct dg_msg;
struct dg_reg_slot;
typedef struct dg_act_turn {
    struct dg_msg *first;      /* handle this before the mailbox */
    struct dg_reg_slot *held;  /* the registry hold keeping the actor alive, instead of a `refs` */
} dg_act_turn_t;

/* Runs a scheduled actor (the caller holds the run-queue reference, or
 * turn->held): turn->first, then its mailbox. The actor is queued again if
 * mail is left, else the reference (or hold) is dropped. */
void dg_act_run_actor(struct dg_act_system *sys, struct dg_act_worker *w, dg_actor_t *a,
                      const dg_act_turn_t *turn);

/* A direct turn (direct.c): the calling thread, which just claimed a's
 * `scheduled` flag and took a `refs` for it, handles m (NULL: none), then
 * the actor's mail until the mailbox is empty, then hands the actor back;
 * mail that arrives during the hand-back is handled by this thread too. */
struct dg_msg;
void dg_act_run_direct(struct dg_act_system *sys, dg_actor_t *a, struct dg_msg *m);
/* Claims an idle actor for a turn on the calling thread (its `scheduled`
 * flag and a `refs`); 0 when it is busy or pinned to another worker. */
int dg_act_claim(struct dg_act_system *sys, dg_actor_t *a);

#endif
