/* The ACTOR channel: actor messages between ranks (see chan_actor.h), the
 * kernel's route out and the channel's handler in. A message travels as its
 * wire bytes (the 40-byte header, then the payload) in the payload of one
 * active message: eagerly when small, by rendezvous straight into a new
 * message's buffer when large. The sender's dg_msg_t is the send buffer (no
 * copy) and is freed when the send completes. */
#include <stdlib.h>

#include "core/base/alloc.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "transport/chan_actor.h"

struct dg_tx_actors {
    dg_tx_t *tx;
    dg_act_system_t *sys;
};

static void sent(void *arg, dagger_status_t st)
{
    dg_msg_t *msg = arg;
    if (st != DAGGER_OK)
        dg_log(DG_LOG_DEBUG, "an actor message to rank %d was lost: %s", (int)msg->hdr.to.rank,
               dagger_strerror(st));
    dg_msg_free(msg);
}

/* The kernel's route (any thread): ownership of msg passes to us. */
static dagger_status_t route(void *ctx, dg_msg_t *msg)
{
    dg_tx_actors_t *a = ctx;
    int dest = (int)msg->hdr.to.rank;
    if (dg_tx_try_send(a->tx, dest, DG_TX_CH_ACTOR, NULL, 0, dg_msg_wire(msg),
                       dg_msg_wire_size(msg))) {
        dg_msg_free(msg); /* out already: worker 0's common case */
        return DAGGER_OK;
    }
    dagger_status_t st = dg_tx_send(a->tx, dest, DG_TX_CH_ACTOR, NULL, 0, dg_msg_wire(msg),
                                    dg_msg_wire_size(msg), 0, sent, msg);
    if (st != DAGGER_OK)
        dg_msg_free(msg);
    return st;
}

typedef struct dg_actor_pull {
    dg_tx_actors_t *a;
    dg_msg_t *msg;
    size_t len;            /* bytes announced (and received) */
    int src;
} dg_actor_pull_t;

static void deliver(dg_tx_actors_t *a, dg_msg_t *msg, int src)
{
    dagger_status_t st = dg_act_deliver(a->sys, msg);
    if (st != DAGGER_OK)
        dg_log(DG_LOG_DEBUG, "an actor message from rank %d was not delivered: %s", src,
               dagger_error_detail());
}

static void pulled(void *arg, dagger_status_t st)
{
    dg_actor_pull_t *p = arg;
    /* The bytes overwrote the header: its size must still be the block's. */
    if (st == DAGGER_OK && dg_msg_wire_check(&p->msg->hdr, p->len) != DAGGER_OK) {
        dg_log(DG_LOG_ERROR, "dropped an actor message from rank %d: %s", p->src,
               dagger_error_detail());
        st = DAGGER_ERR_PROTOCOL;
    }
    if (st == DAGGER_OK)
        deliver(p->a, p->msg, p->src);
    else
        dg_msg_free(p->msg);
    free(p);
}

/* A large message: a new dg_msg_t of the announced size receives the bytes. */
static void pull(dg_tx_actors_t *a, const dg_tx_msg_t *m)
{
    dg_actor_pull_t *p = dg_malloc(sizeof(*p));
    dg_msg_t *msg = p ? dg_msg_alloc(m->len - sizeof(dg_msg_hdr_t)) : NULL;
    if (!msg) {
        dg_log(DG_LOG_ERROR, "out of memory for a %zu-byte actor message from rank %d", m->len,
               m->src);
        free(p);
        dg_tx_drop(a->tx, m->rndv);
        return;
    }
    *p = (dg_actor_pull_t){a, msg, m->len, m->src};
    if (dg_tx_recv_into(a->tx, m->rndv, dg_msg_wire(msg), m->len, pulled, p) != DAGGER_OK)
        pulled(p, DAGGER_ERR_NO_MEMORY);
}

/* The ACTOR channel's handler (the progress engine's owner thread: worker 0
 * once the engine runs there). */
static int on_actor_msg(void *ctx, const dg_tx_msg_t *m)
{
    dg_tx_actors_t *a = ctx;
    if (m->len < sizeof(dg_msg_hdr_t)) {
        dg_log(DG_LOG_ERROR, "dropped a %zu-byte actor message from rank %d: shorter than its "
               "header", m->len, m->src);
        dg_tx_drop(a->tx, m->rndv);
        return 0;
    }
    if (m->rndv) {
        pull(a, m);
        return 0;
    }
    dg_msg_t *msg;
    if (dg_msg_from_wire(m->data, m->len, &msg) != DAGGER_OK)
        dg_log(DG_LOG_ERROR, "dropped an actor message from rank %d: %s", m->src,
               dagger_error_detail());
    else
        deliver(a, msg, m->src);
    return 0;
}

static int on_late_actor_msg(void *ctx, const dg_tx_msg_t *m)
{
    dg_log(DG_LOG_DEBUG, "dropped an actor message from rank %d: this rank is finalizing", m->src);
    dg_tx_drop(ctx, m->rndv);
    return 0;
}

dagger_status_t dg_tx_actors_attach(dg_tx_t *tx, dg_act_system_t *sys, dg_tx_actors_t **out)
{
    DG_CHECK_ARG(tx && sys && out, "dg_tx_actors_attach: NULL argument");
    dg_tx_actors_t *a = dg_calloc(1, sizeof(*a));
    if (!a)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: out of memory");
    a->tx = tx;
    a->sys = sys;
    dagger_status_t st = dg_tx_set_handler(tx, DG_TX_CH_ACTOR, on_actor_msg, a);
    if (st != DAGGER_OK) {
        free(a);
        return st;
    }
    dg_act_system_set_route(sys, dg_tx_rank(tx), dg_tx_size(tx), route, a);
    *out = a;
    return DAGGER_OK;
}

/* Worker 0's shortcut for small messages (the kernel's stack copy): out at
 * once, or declined (dg_tx_try_send declines until worker 0 owns the UCX
 * worker) so the kernel takes route() with a heap copy. */
int dg_tx_actors_send_now(void *tx, dg_msg_t *msg)
{
    return dg_tx_try_send(tx, (int)msg->hdr.to.rank, DG_TX_CH_ACTOR, NULL, 0, dg_msg_wire(msg),
                          dg_msg_wire_size(msg));
}

void dg_tx_actors_detach(dg_tx_actors_t *a)
{
    if (!a)
        return;
    dg_act_system_set_route(a->sys, dg_tx_rank(a->tx), dg_tx_size(a->tx), NULL, NULL);
    dg_tx_set_handler(a->tx, DG_TX_CH_ACTOR, on_late_actor_msg, a->tx);
    free(a);
}
