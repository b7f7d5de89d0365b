/* Posting operations to UCX (owner thread). Each kind maps to one UCX
 * call; completion, immediate or later, goes through dg_tx_op_finished. */
#include <stdio.h>

#include "core/base/common.h"
#include "core/base/log.h"
#include "transport/tx_inject.h"
#include "transport/tx_internal.h"

static dagger_status_t map_status(ucs_status_t st)
{
    switch (st) {
    case UCS_OK:
        return DAGGER_OK;
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CANCELED:
        return DAGGER_ERR_PEER_LOST;
    default:
        return DAGGER_ERR_TRANSPORT;
    }
}

/* A failed operation leaves the two ranks disagreeing on what was said (the
 * peer may wait forever for the lost message), so the peer counts as lost:
 * every wait of this rank then ends with DAGGER_ERR_PEER_LOST naming it, and
 * the peer notices this rank leave. Cancelled operations (teardown) do not. */
static void finish_ucs(dg_tx_op_t *op, ucs_status_t st)
{
    if (st != UCS_OK) {
        dg_log(DG_LOG_DEBUG, "transport operation %d towards rank %d ended with %s", (int)op->kind,
               op->peer, ucs_status_string(st));
        if (st != UCS_ERR_CANCELED) {
            char why[160];
            snprintf(why, sizeof(why), "a transfer to it failed (UCX: %s)", ucs_status_string(st));
            dg_tx_mark_lost(op->tx, op->peer, why);
        }
    }
    dg_tx_op_finished(op, map_status(st));
}

static void send_cb(void *request, ucs_status_t st, void *user_data)
{
    finish_ucs(user_data, st);
    ucp_request_free(request);
}

static void recv_cb(void *request, ucs_status_t st, size_t length, void *user_data)
{
    (void)length;
    finish_ucs(user_data, st);
    ucp_request_free(request);
}

/* Immediate completion, failure, or a request whose callback comes later. */
static void track(dg_tx_op_t *op, ucs_status_ptr_t req)
{
    if (req == NULL)
        finish_ucs(op, UCS_OK);
    else if (UCS_PTR_IS_ERR(req))
        finish_ucs(op, UCS_PTR_STATUS(req));
}

static ucp_request_param_t param_for(dg_tx_op_t *op)
{
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .user_data = op,
    };
    p.cb.send = send_cb;
    return p;
}

static void post_send(dg_tx_t *tx, dg_tx_op_t *op)
{
    ucp_request_param_t p = param_for(op);
    p.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
    /* Forcing the protocol keeps DAGGER_EAGER_LIMIT meaningful: above it the
     * receiver pulls the payload into its own buffer (rendezvous). */
    p.flags = op->large ? UCP_AM_SEND_FLAG_RNDV : UCP_AM_SEND_FLAG_EAGER;
    if (!tx->peers[op->peer].ep) {
        /* Only a singleton's endpoint to itself waits for its first send
         * (dg_tx_connect_self); no other is ever missing here. */
        if (op->peer != tx->rank || dg_tx_connect_self(tx) != DAGGER_OK) {
            finish_ucs(op, UCS_ERR_UNREACHABLE);
            return;
        }
    }
    ucp_ep_h ep = tx->peers[op->peer].ep;
    tx->stats.sends++;
    if (dg_tx_send_armed() && dg_tx_send_refused()) {
        finish_ucs(op, UCS_ERR_IO_ERROR); /* an injected failure (tests) */
        return;
    }
    track(op, ucp_am_send_nbx(ep, op->channel, op->hdr, op->hdr_len, op->buf, op->len, &p));
}

static void post_recv(dg_tx_t *tx, dg_tx_op_t *op)
{
    ucp_request_param_t p = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .user_data = op,
    };
    p.cb.recv_am = recv_cb;
    track(op, ucp_am_recv_data_nbx(tx->worker, op->rndv, (void *)(uintptr_t)op->buf, op->len, &p));
}

void dg_tx_post(dg_tx_t *tx, dg_tx_op_t *op)
{
    switch (op->kind) {
    case DG_TX_OP_SEND: post_send(tx, op); break;
    case DG_TX_OP_RECV: post_recv(tx, op); break;
    }
}
