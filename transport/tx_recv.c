/* Receiving: one UCX active-message handler per channel, which checks the
 * frame header and hands the message to the channel's handler; rendezvous
 * payloads are pulled straight into the buffer the handler names. */
#include "core/base/common.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "transport/tx_internal.h"
#include "transport/wire.h"

static ucs_status_t on_am(void *arg, const void *header, size_t header_length, void *data,
                          size_t length, const ucp_am_recv_param_t *param)
{
    struct dg_tx_chan *ch = arg;
    dg_tx_t *tx = ch->tx;
    int rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
    dg_wire_frame_t frame;
    const char *why = NULL;
    if (dg_wire_frame_decode(header, header_length, &frame, &why) || (int)frame.src >= tx->size) {
        dg_log(DG_LOG_ERROR, "dropped a message on channel %u: %s", ch->channel,
               why ? why : "sender rank out of range");
        return UCS_OK;
    }
    if (DG_UNLIKELY(!ch->fn)) {
        dg_log(DG_LOG_ERROR, "dropped a message from rank %u on channel %u: no handler installed "
               "(install handlers before a barrier that precedes the first message)",
               frame.src, ch->channel);
        return UCS_OK;
    }
    dg_tx_msg_t msg = {
        .src = (int)frame.src,
        .channel = ch->channel,
        .hdr = (const unsigned char *)header + DG_WIRE_FRAME_LEN,
        .hdr_len = header_length - DG_WIRE_FRAME_LEN,
        .data = rndv ? NULL : data,
        .len = length,
        .rndv = rndv ? data : NULL,
    };
    tx->stats.recvs++;
    void *outer = tx->cb_rndv; /* handlers do not progress, but nesting costs nothing */
    int outer_dropped = tx->cb_dropped;
    tx->cb_rndv = msg.rndv;
    tx->cb_dropped = 0;
    int keep = ch->fn(ch->ctx, &msg);
    int dropped = tx->cb_dropped;
    tx->cb_rndv = outer;
    tx->cb_dropped = outer_dropped;
    return rndv && keep == DG_TX_KEEP && !dropped ? UCS_INPROGRESS : UCS_OK;
}

dagger_status_t dg_tx_register_channels(dg_tx_t *tx)
{
    for (unsigned c = 0; c < DG_TX_NCHANNELS; c++) {
        tx->chans[c].tx = tx;
        tx->chans[c].channel = c;
        ucp_am_handler_param_t p = {
            .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                          UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
            .id = c,
            .cb = on_am,
            .arg = &tx->chans[c],
            .flags = UCP_AM_FLAG_WHOLE_MSG,
        };
        ucs_status_t st = ucp_worker_set_am_recv_handler(tx->worker, &p);
        if (st != UCS_OK)
            return dg_tx_ucs_error(st, "registering an active-message handler", tx->rank);
    }
    return DAGGER_OK;
}

dagger_status_t dg_tx_set_handler(dg_tx_t *tx, unsigned channel, dg_tx_handler_fn fn, void *ctx)
{
    DG_CHECK_ARG(tx && channel < DG_TX_NCHANNELS,
                 "dg_tx_set_handler: NULL transport or channel %u (< %d)", channel, DG_TX_NCHANNELS);
    DG_CHECK_ARG(dg_tx_is_owner(tx), "dg_tx_set_handler: only the owner thread installs handlers");
    tx->chans[channel].ctx = ctx;
    tx->chans[channel].fn = fn;
    return DAGGER_OK;
}

static int on_closed(void *ctx, const dg_tx_msg_t *m)
{
    dg_log(DG_LOG_DEBUG, "dropped a message from rank %d on channel %u: this rank is finalizing",
           m->src, m->channel);
    dg_tx_drop(ctx, m->rndv);
    return 0;
}

dagger_status_t dg_tx_close_channel(dg_tx_t *tx, unsigned channel)
{
    return dg_tx_set_handler(tx, channel, on_closed, tx);
}

dagger_status_t dg_tx_recv_into(dg_tx_t *tx, void *rndv, void *buf, size_t len,
                                dg_tx_done_fn done, void *arg)
{
    DG_CHECK_ARG(tx && rndv && (buf || !len), "dg_tx_recv_into: NULL transport, descriptor or buffer");
    DG_CHECK_ARG(dg_tx_is_owner(tx), "dg_tx_recv_into: only the owner thread receives");
    dg_tx_op_t *op = dg_tx_op_new(tx, DG_TX_OP_RECV, tx->rank, 0);
    if (!op) {
        dg_tx_drop(tx, rndv);
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_tx_recv_into: out of memory");
    }
    op->rndv = rndv;
    op->buf = buf;
    op->len = len;
    op->done = done;
    op->arg = arg;
    dg_tx_start_or_queue(tx, op);
    return DAGGER_OK;
}

/* Inside on_am, the descriptor being handed out is dropped by returning
 * UCS_OK (UCX then completes the sender's send): ucp_am_data_release is
 * only for a descriptor kept past its callback (UCS_INPROGRESS), and on a
 * rendezvous one still inside it, it crashed (a receiver that could not
 * allocate the buffer for a transfer, 2026-12-06). */
void dg_tx_drop(dg_tx_t *tx, void *rndv)
{
    if (!tx || !rndv)
        return;
    if (rndv == tx->cb_rndv)
        tx->cb_dropped = 1;
    else
        ucp_am_data_release(tx->worker, rndv);
}
