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
 * asker asks again later.
 *
 * That answer needs the peer at its region end. Two ranks that both block
 * on back-pressure, each behind a receive the other never planned, never
 * get there. So a PROBE also carries the last task the asker planned and
 * 24 bits of its plan's shape hash after it (the hash the region ends
 * compare, which depends only on what was planned up to that task). A peer
 * that planned that task too compares the hash with its own there: when
 * they differ, the two ranks planned different work before it, and the
 * peer marks the divergence. A stuck rank's last task lies past the point
 * where the plans part (were they the same up to it, every transfer it
 * waits for would be planned on both sides and would come), so whichever
 * of the two planned more tasks sees the difference. Equal hashes decide
 * nothing (a 24-bit hash may collide), and neither does a task the peer has
 * not planned yet or planned more than DG_TX_PLANNED tasks ago. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/base/alloc.h"
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

#define PLANNED_HASH_MASK ((1ull << DG_TX_PLANNED_BITS) - 1)

dagger_status_t dg_coll_planned_init(dg_coll_t *c)
{
    c->planned.ring = dg_calloc(DG_TX_PLANNED, sizeof(*c->planned.ring));
    return c->planned.ring ? DAGGER_OK : DAGGER_ERR_NO_MEMORY;
}

dg_tx_planned_t *dg_tx_planned(dg_tx_t *tx)
{
    return tx && tx->coll && tx->coll->planned.ring ? &tx->coll->planned : NULL;
}

/* A probe from src says its plan's hash after `task` was `hash`: when this
 * rank planned that task too and its hash there differs, the two ranks
 * planned different work (owner thread). */
static void compare_planned(dg_coll_t *c, int src, uint64_t task, uint64_t hash)
{
    if (!task || !c->planned.ring || task >> (64 - DG_TX_PLANNED_BITS))
        return;
    uint64_t e = atomic_load_explicit(&c->planned.ring[task % DG_TX_PLANNED], memory_order_relaxed);
    if (e >> DG_TX_PLANNED_BITS != task || (e & PLANNED_HASH_MASK) == (hash & PLANNED_HASH_MASK))
        return; /* not planned here yet, long ago, or alike */
    char why[600];
    snprintf(why, sizeof(why), "rank %d, waiting for transfers from rank %d, asked it after "
             "a second, and the two had planned different work by task %llu (the hashes of what "
             "each planned up to that task differ): the ranks' programs diverged "
             "(DAGGER_CHECK_UNIFORMITY=1 names the first submission that differs)",
             src, c->tx->rank, (unsigned long long)task);
    dg_tx_diverge(c->tx, why);
}

static void send_part(dg_tx_t *tx, int peer, int phase, uint64_t regions, uint64_t count,
                      uint64_t plan)
{
    unsigned char hdr[DG_COLL_HDR_LEN];
    dg_coll_hdr_encode(&(dg_coll_hdr_t){.phase = (uint8_t)phase, .seq = regions,
                                        .sig = {.size = count, .plan = plan}},
                       hdr);
    /* done set: queued, never sent from inside the handler that answers */
    dg_tx_send(tx, peer, DG_TX_CH_COLL, hdr, sizeof(hdr), NULL, 0, 0, probe_sent, NULL);
}

dagger_status_t dg_tx_probe(dg_tx_t *tx, int peer)
{
    DG_CHECK_ARG(tx && peer >= 0 && peer < tx->size && peer != tx->rank,
                 "dg_tx_probe: rank %d is not a peer", peer);
    uint64_t e = tx->coll ? atomic_load_explicit(&tx->coll->planned.last, memory_order_relaxed) : 0;
    send_part(tx, peer, DG_COLL_PROBE, atomic_load(&tx->regions), e >> DG_TX_PLANNED_BITS,
              e & PLANNED_HASH_MASK);
    return DAGGER_OK;
}

void dg_coll_probe_on_msg(dg_coll_t *c, int src, const dg_coll_hdr_t *h)
{
    dg_tx_t *tx = c->tx;
    if (h->phase == DG_COLL_PROBE) {
        tx->stats.probes++;
        compare_planned(c, src, h->sig.size, h->sig.plan);
    }
    uint64_t mine = atomic_load(&tx->regions);
    if (h->seq != mine || !tx->probe_sent || !tx->probe_answer)
        return; /* another region's: stale, or the asker is ahead (it asks again) */
    int agreeing = atomic_load(&tx->agreeing) == mine;
    if (h->phase == DG_COLL_PROBE) {
        if (agreeing) /* else still planning or running: no answer */
            send_part(tx, src, DG_COLL_ANSWER, mine, tx->probe_sent(tx->probe_ctx, src), 0);
        return;
    }
    /* An answer that comes after this rank reached the region's agreement
     * itself is late (its receives of the region are done; one that waits
     * now is for something after). */
    if (!agreeing)
        tx->probe_answer(tx->probe_ctx, src, h->sig.size);
}
