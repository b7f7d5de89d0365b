/* The ACTOR channel (DG_TX_CH_ACTOR): actor messages between ranks. The
 * kernel's route sends a message for another rank on it, and its handler
 * (on_actor_msg) hands what arrives to dg_act_deliver (actors/system.h,
 * docs/design.md sections 3 and 4). The engine that runs the handler, on
 * actor worker 0, is the progress engine (progress.h). */
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

/* Owner thread: removes the route (remote sends fail with
 * DAGGER_ERR_NO_SUCH_ACTOR from now on) and drops actor messages that still
 * arrive, then frees a. */
void dg_tx_actors_detach(dg_tx_actors_t *a);

/* The kernel's send_now on worker 0 (dg_act_poller_t, ctx the transport):
 * sends a small message at once and returns 1, or returns 0 having done
 * nothing (the kernel then routes a heap copy). */
int dg_tx_actors_send_now(void *tx, dg_msg_t *msg);

#endif
