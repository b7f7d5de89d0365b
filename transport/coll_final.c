/* dagger_finalize's barrier, and the divergence it reveals early.
 *
 * The barrier of dagger_finalize carries its own signature: DG_COLL_OP_FINAL
 * and, as its size, the regions the rank began. A rank that calls
 * dagger_finalize where the others open another region (an early return
 * on one rank) leaves them waiting for its transfers, which never come,
 * before they reach a collective whose signatures could disagree. Its
 * barrier message arrives meanwhile: a rank that has begun more regions
 * than a peer's dagger_finalize announced knows at once that the programs
 * diverged, and ends the job as a lost peer does (dg_tx_mark_failed), with
 * DAGGER_ERR_DIVERGENCE naming both points. The two checks (on the
 * message's arrival and at each region's begin) meet through seq_cst
 * atomics, so whichever comes second sees the other. */
#include <stdio.h>

#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "transport/coll_internal.h"

#define FINAL_RANK_BITS 20 /* final_key: regions << 20 | rank */

/* Ends the job when this rank began more regions than key's peer did. */
static void check(dg_tx_t *tx, uint64_t mine, uint64_t key)
{
    uint64_t theirs = key >> FINAL_RANK_BITS;
    if (key == UINT64_MAX || mine <= theirs || dg_tx_lost_rank(tx) >= 0)
        return;
    char why[384];
    snprintf(why, sizeof(why), "rank %d called dagger_finalize after %llu region%s, but rank %d "
             "began region %llu: the ranks' programs diverged (every rank opens the same regions "
             "and calls dagger_finalize at the same point); the job cannot continue",
             (int)(key & ((1u << FINAL_RANK_BITS) - 1)), (unsigned long long)theirs,
             theirs == 1 ? "" : "s", tx->rank, (unsigned long long)mine);
    dg_tx_mark_failed(tx, DAGGER_ERR_DIVERGENCE, why);
    /* Said at once: the launcher may end this rank before its wait returns. */
    dg_log(DG_LOG_ERROR, "DAGGER_ERR_DIVERGENCE: %s", why);
}

dagger_status_t dg_coll_barrier_final(dg_tx_t *tx, uint64_t regions)
{
    DG_CHECK_ARG(tx, "dagger_finalize: NULL transport");
    dg_coll_call_t call;
    dg_coll_call_init(&call, tx,
                      &(dg_coll_sig_t){.kind = DG_COLL_BARRIER, .op = DG_COLL_OP_FINAL,
                                       .size = regions});
    dg_coll_buf_t acc = {0}, out = {0};
    dagger_status_t st = dg_coll_run(&call, &acc, &out);
    dg_coll_buf_free(&out);
    return st;
}

void dg_tx_note_region(dg_tx_t *tx, uint64_t region)
{
    if (!tx)
        return;
    atomic_store(&tx->regions, region);
    check(tx, region, atomic_load(&tx->final_key));
}

void dg_coll_final_seen(dg_tx_t *tx, const dg_coll_hdr_t *h, int src)
{
    if (h->sig.kind != DG_COLL_BARRIER || h->sig.op != DG_COLL_OP_FINAL || src < 0 ||
        src >= (1 << FINAL_RANK_BITS) || h->sig.size >= (UINT64_MAX >> FINAL_RANK_BITS))
        return;
    uint64_t key = h->sig.size << FINAL_RANK_BITS | (uint64_t)src;
    uint64_t was = atomic_load(&tx->final_key);
    while (key < was && !atomic_compare_exchange_weak(&tx->final_key, &was, key))
        ;
    check(tx, atomic_load(&tx->regions), atomic_load(&tx->final_key));
}
