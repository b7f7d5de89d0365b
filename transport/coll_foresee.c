/* Divergences a collective's messages reveal before this rank calls it.
 *
 * Every collective's signature carries the regions its caller had begun
 * (and a region's end, the hash of what the caller planned). In a correct
 * program every rank calls its k-th collective after the same regions with
 * the same plan, so a message for this rank's next collective can prove a
 * divergence before the rank gets there, while it still waits for something
 * that will never come (a transfer of a rank that left the region, or never
 * opened it):
 *
 * - the sender had begun fewer regions than this rank has now (a rank that
 *   called dagger_finalize, or skipped a region, while this one opened it);
 * - this rank already knows the signature of its next call (dagger_region_end
 *   waiting for its share, dg_coll_expect) and the message's differs.
 *
 * Either marks the transport diverged (dg_tx_mark_diverged): the receives
 * that wait for region data fail with DAGGER_ERR_DIVERGENCE and data that
 * arrives is dropped, so every wait for transfers ends, and the rank goes on
 * to its next collective, whose signatures disagree: every rank, the one
 * that left included, gets DAGGER_ERR_DIVERGENCE with the same text, naming
 * both calls. The finding is also sent to every other rank (a NOTE message),
 * since the ranks that wait for this one may hear from nobody else. The
 * checks run when such a message arrives (dg_coll_on_msg), when a region
 * begins (dg_tx_note_region) and when an expectation is set, each over the
 * inbox under the collectives' lock, so whichever of arrival and this
 * rank's step comes second sees the other. */
#include <stdio.h>
#include <string.h>

#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "transport/coll_internal.h"

/* Why m proves a divergence, into why; 0 when it does not. c->lock held. */
static int proves(dg_coll_t *c, const dg_coll_msg_t *m, char *why, size_t cap)
{
    dg_tx_t *tx = c->tx;
    uint64_t next = atomic_load(&c->seq), mine = atomic_load(&tx->regions);
    if (m->hdr.seq != next)
        return 0;
    const dg_coll_sig_t *s = &m->hdr.sig;
    char theirs[160];
    if (s->regions < mine) {
        dg_coll_describe(s, NULL, theirs, sizeof(theirs));
        snprintf(why, cap, "rank %d called %s, but rank %d began region %llu first: the ranks' "
                 "programs diverged (every rank opens the same regions and calls the same "
                 "collectives, dagger_finalize included, in the same order)", m->src, theirs,
                 tx->rank, (unsigned long long)mine);
        return 1;
    }
    if (!c->expect_set || dg_coll_same_sig(s, &c->expect))
        return 0;
    char own[160];
    dg_coll_describe(&c->expect, s, own, sizeof(own));
    dg_coll_describe(s, &c->expect, theirs, sizeof(theirs));
    snprintf(why, cap, "collective #%llu: rank %d is about to call %s but rank %d called %s: the "
             "ranks' programs diverged%s", (unsigned long long)next,
             tx->rank, own, m->src, theirs,
             s->plan != c->expect.plan && s->plan && c->expect.plan
                 ? " (DAGGER_CHECK_UNIFORMITY=1 names the first submission that differs)"
                 : "");
    return 1;
}

static void note_sent(void *arg, dagger_status_t st)
{
    (void)arg;
    (void)st; /* a rank that cannot be told learns it from the collective */
}

/* Marks the divergence, says so, and (tell) tells every other rank. */
static void diverge(dg_tx_t *tx, const char *why, int tell)
{
    if (!dg_tx_mark_diverged(tx, why))
        return;
    /* Said at once: the launcher may end this rank before its wait returns. */
    dg_log(DG_LOG_ERROR, "DAGGER_ERR_DIVERGENCE: %s", why);
    if (!tell)
        return;
    unsigned char hdr[DG_COLL_HDR_LEN];
    dg_coll_hdr_encode(&(dg_coll_hdr_t){.phase = DG_COLL_NOTE}, hdr);
    /* Queued (done set), never sent from inside a message handler. */
    for (int r = 0; r < tx->size; r++)
        if (r != tx->rank)
            dg_tx_send(tx, r, DG_TX_CH_COLL, hdr, sizeof(hdr), why, strlen(why), DG_TX_COPY,
                       note_sent, NULL);
}

/* Scans the inbox (or only m) and marks the divergence on the first proof. */
static void check(dg_coll_t *c, const dg_coll_msg_t *only)
{
    dg_tx_t *tx = c->tx;
    if (dg_tx_recvs_doomed(tx))
        return;
    char why[768];
    int found = 0;
    pthread_mutex_lock(&c->lock);
    for (const dg_coll_msg_t *m = only ? only : c->inbox; m && !found; m = only ? NULL : m->next)
        found = proves(c, m, why, sizeof(why));
    pthread_mutex_unlock(&c->lock);
    if (found)
        diverge(tx, why, 1);
}

void dg_tx_diverge(dg_tx_t *tx, const char *why)
{
    if (tx && !dg_tx_recvs_doomed(tx))
        diverge(tx, why, 1);
}

void dg_coll_foresee_note(dg_coll_t *c, int src, const void *text, size_t len)
{
    char why[768];
    size_t n = len < sizeof(why) - 1 ? len : sizeof(why) - 1;
    memcpy(why, text, n);
    why[n] = 0;
    for (size_t i = 0; i < n; i++) /* another rank's bytes: printable only */
        if ((unsigned char)why[i] < 32 || (unsigned char)why[i] > 126)
            why[i] = '?';
    (void)src;
    diverge(c->tx, why, 0);
}

void dg_coll_foresee_msg(dg_coll_t *c, const dg_coll_msg_t *m)
{
    check(c, m);
}

void dg_tx_note_region(dg_tx_t *tx, uint64_t region)
{
    if (!tx || !tx->coll)
        return;
    atomic_store(&tx->regions, region);
    check(tx->coll, NULL);
}

void dg_coll_expect(dg_tx_t *tx, size_t count, dagger_dtype_t type, dagger_op_t op, uint64_t plan)
{
    if (!tx || !tx->coll)
        return;
    dg_coll_t *c = tx->coll;
    pthread_mutex_lock(&c->lock);
    c->expect = (dg_coll_sig_t){.kind = DG_COLL_ALLREDUCE, .op = (uint8_t)op, .type = (uint8_t)type,
                                .size = count, .regions = atomic_load(&tx->regions), .plan = plan};
    c->expect_set = 1;
    pthread_mutex_unlock(&c->lock);
    check(c, NULL);
}

void dg_coll_expect_none(dg_tx_t *tx)
{
    if (!tx || !tx->coll)
        return;
    pthread_mutex_lock(&tx->coll->lock);
    tx->coll->expect_set = 0;
    pthread_mutex_unlock(&tx->coll->lock);
}

dagger_status_t dg_coll_barrier_final(dg_tx_t *tx)
{
    DG_CHECK_ARG(tx, "dagger_finalize: NULL transport");
    dg_coll_call_t call;
    dg_coll_call_init(&call, tx, &(dg_coll_sig_t){.kind = DG_COLL_BARRIER, .op = DG_COLL_OP_FINAL});
    dg_coll_buf_t acc = {0}, out = {0};
    dagger_status_t st = dg_coll_run(&call, &acc, &out);
    dg_coll_buf_free(&out);
    return st;
}
