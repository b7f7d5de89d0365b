/* The transport under the actor kernel: actor messages to other ranks go out
 * on DG_TX_CH_ACTOR and come in through dg_act_deliver, and the UCX worker is
 * driven by actor worker 0 through the kernel's poller contract
 * (actors/system.h, docs/design.md sections 3 and 4). */
#ifndef DG_CHAN_ACTOR_H
#define DG_CHAN_ACTOR_H

#include <dagger/status.h>

#include "actors/system.h"
#include "transport/tx.h"

typedef struct dg_tx_actors dg_tx_actors_t;

/* Owner thread of tx: installs the actor channel handler and the kernel's
 * route. Every rank must attach before any rank sends to a remote actor (a
 * barrier after attaching does it). */
dagger_status_t dg_tx_actors_attach(dg_tx_t *tx, dg_act_system_t *sys, dg_tx_actors_t **out);

/* Hands the UCX worker to actor worker 0: the caller (the owner) releases it
 * and worker 0 adopts it on its first poll. Returns once worker 0 polls. */
void dg_tx_actors_start_polling(dg_tx_actors_t *a);

/* Takes the worker back from worker 0 to the calling thread (returns once
 * worker 0 no longer touches it). */
void dg_tx_actors_stop_polling(dg_tx_actors_t *a);

/* Owner thread: removes the route (remote sends fail with
 * DAGGER_ERR_NO_SUCH_ACTOR from now on) and drops actor messages that still
 * arrive, then frees a. */
void dg_tx_actors_detach(dg_tx_actors_t *a);

/* The wake-up the transport needs to reach worker 0 (dg_tx_params_t.wake
 * with the actor system as context). */
void dg_tx_actors_wake(void *sys);

#endif
