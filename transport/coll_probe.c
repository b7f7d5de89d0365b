/* Asking a peer what it sent, when a wait for its data will not end.
 *
 * The foresight (coll_foresee.c) proves a divergence from a message for
 * this rank's next collective. It cannot when this rank never gets there:
 * its submitting thread blocked on back-pressure, its op window full of ops
 * that wait for transfers a peer never planned, while that peer, having
 * begun as many regions, waits at its region end (whose message may even go
 * to another rank, up the tree). Then the waiting rank asks the peers it
 * waits for (the executor, after a second without progress: exec.c).
 *
 * A PROBE carries the asker's region count (header seq). A peer answers
 * only when it waits in the agreement at the end of that same region: it
 * has then finished every op of the region, so every message it will send
 * the asker before the next region is sent. Its ANSWER carries how many
 * data messages it sent the asker since it started (header sig.size; the
 * executor counts them). The asker compares that with how many arrived
 * from it: when all did and a receive from it still waits, the sender never
 * planned that receive's send, and the asker marks the divergence exactly as
 * the foresight does (every waiting receive fails, the other ranks are
 * told, the next collective's signatures name both calls). Nothing here
 * depends on the clock that sends the probe: a peer still planning, a count
 * not yet reached, or an answer for another region decides nothing, and the
 * asker asks again later. */
#include <stdatomic.h>

#include "core/base/common.h"
#include "core/base/status_internal.h"
#include "transport/coll_internal.h"
#include "transport/coll_wire.h"

void dg_tx_set_probe(dg_tx_t *tx, dg_tx_probe_sent_fn sent, dg_tx_probe_answer_fn answer,
                     void *ctx)
{
    if (!tx)
        return;
    tx->probe_sent = sent;
    tx->probe_answer = answer;
    tx->probe_ctx = ctx;
}

static void probe_sent(void *arg, dagger_status_t st)
{
    (void)arg;
    (void)st; /* a lost peer is reported by the loss detector; a probe is asked again */
}

static void send_part(dg_tx_t *tx, int peer, int phase, uint64_t regions, uint64_t count)
{
    unsigned char hdr[DG_COLL_HDR_LEN];
    dg_coll_hdr_encode(&(dg_coll_hdr_t){.phase = (uint8_t)phase, .seq = regions,
                                        .sig = {.size = count}},
                       hdr);
    /* done set: queued, never sent from inside the handler that answers */
    dg_tx_send(tx, peer, DG_TX_CH_COLL, hdr, sizeof(hdr), NULL, 0, 0, probe_sent, NULL);
}

dagger_status_t dg_tx_probe(dg_tx_t *tx, int peer)
{
    DG_CHECK_ARG(tx && peer >= 0 && peer < tx->size && peer != tx->rank,
                 "dg_tx_probe: rank %d is not a peer", peer);
    send_part(tx, peer, DG_COLL_PROBE, atomic_load(&tx->regions), 0);
    return DAGGER_OK;
}

void dg_coll_probe_on_msg(dg_coll_t *c, int src, const dg_coll_hdr_t *h)
{
    dg_tx_t *tx = c->tx;
    uint64_t mine = atomic_load(&tx->regions);
    if (h->seq != mine || !tx->probe_sent || !tx->probe_answer)
        return; /* another region's: stale, or the asker is ahead (it asks again) */
    int agreeing = atomic_load(&tx->agreeing) == mine;
    if (h->phase == DG_COLL_PROBE) {
        if (agreeing) /* else still planning or running: no answer */
            send_part(tx, src, DG_COLL_ANSWER, mine, tx->probe_sent(tx->probe_ctx, src));
        return;
    }
    /* An answer that comes after this rank reached the region's agreement
     * itself is late (its receives of the region are done; one that waits
     * now is for something after). */
    if (!agreeing)
        tx->probe_answer(tx->probe_ctx, src, h->sig.size);
}
