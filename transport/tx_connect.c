/* The connection handshake at start-up: every rank sends one empty message
 * to every rank (itself included) and waits for one from each. Afterwards
 * every endpoint is wired up in both directions, so
 *  - an unreachable peer is reported by dg_tx_create, not by a later hang;
 *  - closing the endpoints at the end needs no help from the peer (UCX
 *    finishes a half-wired endpoint's wire-up before closing it, which a
 *    peer that already left would never answer).
 * It costs n messages per rank at start-up. */
#include "core/status_internal.h"
#include "transport/tx_internal.h"

/* Generous: slow launchers start ranks seconds apart. */
#define DG_TX_HANDSHAKE_TIMEOUT_S 120

static int on_hello(void *ctx, const dg_tx_msg_t *msg)
{
    dg_tx_t *tx = ctx;
    (void)msg;
    tx->hellos++;
    return 0;
}

static int all_hellos(void *arg)
{
    dg_tx_t *tx = arg;
    return tx->hellos >= tx->size && atomic_load(&tx->live_ops) == 0;
}

dagger_status_t dg_tx_listen_hello(dg_tx_t *tx)
{
    return dg_tx_set_handler(tx, DG_TX_CH_CTRL, on_hello, tx);
}

dagger_status_t dg_tx_handshake(dg_tx_t *tx)
{
    for (int i = 0; i < tx->size; i++) {
        int r = (tx->rank + i) % tx->size; /* spread the first messages over peers */
        dagger_status_t st = dg_tx_send(tx, r, DG_TX_CH_CTRL, NULL, 0, NULL, 0, 0, NULL, NULL);
        if (st != DAGGER_OK)
            return st;
    }
    dagger_status_t st = dg_tx_wait(tx, all_hellos, tx, DG_TX_HANDSHAKE_TIMEOUT_S);
    if (st == DAGGER_ERR_TIMEOUT)
        return dg_error(DAGGER_ERR_TRANSPORT, "dg_tx_create: heard from %d of %d ranks within %d s: "
                        "some ranks cannot reach this one (check UCX_TLS and UCX_NET_DEVICES)",
                        tx->hellos, tx->size, DG_TX_HANDSHAKE_TIMEOUT_S);
    return st;
}
