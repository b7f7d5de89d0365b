/* The operations any thread may start: active-message sends. They are
 * validated here, then handed to the owner. */
#include <string.h>

#include "core/base/common.h"
#include "core/base/status_internal.h"
#include "transport/tx_inject.h"
#include "transport/tx_internal.h"
#include "transport/wire.h"

/* A header on the stack is safe when UCX must complete the send before
 * returning (FORCE_IMM_CMPL); when it cannot (no room right now, or earlier
 * sends to this peer still queued), the caller takes the ordinary path. */
int dg_tx_try_send(dg_tx_t *tx, int dest, unsigned channel, const void *hdr, size_t hdr_len,
                   const void *payload, size_t len)
{
    if (!tx || dest < 0 || dest >= tx->size || channel >= DG_TX_NCHANNELS ||
        hdr_len > DG_TX_MAX_HDR)
        return 0;
    dg_tx_peer_t *p = &tx->peers[dest];
    /* The owner test first: the peer's queue is the owner's alone (another
     * thread reading it raced with the owner's pushes; ThreadSanitizer). */
    if (len > tx->eager_limit || !dg_tx_is_owner(tx) || p->pending.head || dg_tx_send_armed() ||
        atomic_load_explicit(&tx->lost_rank, memory_order_relaxed) >= 0 || !p->ep)
        return 0; /* (no endpoint yet: the queued path makes it, dg_tx_connect_self) */
    unsigned char frame[DG_WIRE_FRAME_LEN + DG_TX_MAX_HDR];
    dg_wire_frame_encode(frame, &(dg_wire_frame_t){.src = (uint32_t)tx->rank});
    if (hdr_len)
        memcpy(frame + DG_WIRE_FRAME_LEN, hdr, hdr_len);
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL,
        .flags = UCP_AM_SEND_FLAG_EAGER,
    };
    ucs_status_ptr_t req = ucp_am_send_nbx(p->ep, channel, frame, DG_WIRE_FRAME_LEN + hdr_len,
                                           payload, len, &prm);
    if (req != NULL)
        return 0; /* UCS_ERR_NO_RESOURCE (or another error the ordinary path reports) */
    tx->stats.sends++;
    return 1;
}

dagger_status_t dg_tx_send(dg_tx_t *tx, int dest, unsigned channel, const void *hdr,
                           size_t hdr_len, const void *payload, size_t len, unsigned flags,
                           dg_tx_done_fn done, void *arg)
{
    return dg_tx_send_ordered(tx, dest, channel, hdr, hdr_len, payload, len, flags, 0, done,
                              arg);
}

dagger_status_t dg_tx_send_ordered(dg_tx_t *tx, int dest, unsigned channel, const void *hdr,
                                   size_t hdr_len, const void *payload, size_t len,
                                   unsigned flags, uint64_t order, dg_tx_done_fn done,
                                   void *arg)
{
    DG_CHECK_ARG(tx && dest >= 0 && dest < tx->size,
                 "dg_tx_send: NULL transport or destination rank %d outside 0..%d", dest,
                 tx ? tx->size - 1 : -1);
    DG_CHECK_ARG(channel < DG_TX_NCHANNELS, "dg_tx_send: channel %u (< %d)", channel,
                 DG_TX_NCHANNELS);
    DG_CHECK_ARG(hdr_len <= DG_TX_MAX_HDR && (hdr || !hdr_len),
                 "dg_tx_send: header of %zu bytes (at most %d, non-NULL when not empty)", hdr_len,
                 DG_TX_MAX_HDR);
    DG_CHECK_ARG(payload || !len, "dg_tx_send: NULL payload of %zu bytes", len);
    if (!done && dg_tx_try_send(tx, dest, channel, hdr, hdr_len, payload, len))
        return DAGGER_OK;
    size_t copied = (flags & DG_TX_COPY) ? len : 0;
    dg_tx_op_t *op = dg_tx_op_new(tx, DG_TX_OP_SEND, dest, DG_WIRE_FRAME_LEN + hdr_len + copied);
    if (!op)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_tx_send: out of memory for a %zu-byte message",
                        len);
    dg_wire_frame_encode(op->hdr, &(dg_wire_frame_t){.src = (uint32_t)tx->rank});
    if (hdr_len)
        memcpy(op->hdr + DG_WIRE_FRAME_LEN, hdr, hdr_len);
    op->hdr_len = DG_WIRE_FRAME_LEN + hdr_len;
    op->channel = channel;
    op->len = len;
    op->large = len > tx->eager_limit && !(flags & DG_TX_EAGER);
    op->order = order;
    op->buf = payload;
    if (copied) {
        memcpy(op->hdr + op->hdr_len, payload, len);
        op->buf = op->hdr + op->hdr_len;
    }
    op->done = done;
    op->arg = arg;
    return dg_tx_submit(tx, op);
}
