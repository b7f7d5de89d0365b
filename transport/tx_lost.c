/* The lost-peer state: the first rank found lost, and the detail every
 * later call reports. The detectors (tx_liveness.c, the handshake in
 * chan_ctrl.c, UCX endpoint errors) set it once; waits end on it. */
#include <sched.h>
#include <stdio.h>

#include "core/base/status_internal.h"
#include "transport/tx_internal.h"

int dg_tx_lost_rank(const dg_tx_t *tx)
{
    return atomic_load(&((dg_tx_t *)tx)->lost_rank);
}

dagger_status_t dg_tx_health(dg_tx_t *tx)
{
    int r = atomic_load(&tx->lost_rank);
    if (r < 0)
        return DAGGER_OK;
    while (!atomic_load(&tx->lost_ready)) /* its writer is a few instructions away */
        sched_yield();
    return dg_error(DAGGER_ERR_PEER_LOST, "%s", tx->lost_why);
}

/* Wakes whoever waits: the owner (the executor's poll fails the receives). */
static void lost_wake(dg_tx_t *tx)
{
    /* The liveness thread or the owner: once the engine has
     * left the actor kernel, that kernel is torn down next, so only the UCX
     * worker's fd is signalled (the owner sleeps on it alone then). */
    atomic_fetch_add_explicit(&tx->lost_waking, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&tx->wake_off, memory_order_seq_cst))
        ucp_worker_signal(tx->worker);
    else
        dg_tx_wake_owner(tx);
    atomic_fetch_sub_explicit(&tx->lost_waking, 1, memory_order_seq_cst);
    dg_tx_notify(tx);
}

int dg_tx_mark_diverged(dg_tx_t *tx, const char *why)
{
    int no = 0;
    if (!tx || atomic_load(&tx->leaving) || !atomic_compare_exchange_strong(&tx->diverged, &no, 1))
        return 0;
    snprintf(tx->diverged_why, sizeof(tx->diverged_why), "%s", why);
    atomic_store(&tx->diverged_ready, 1);
    lost_wake(tx);
    return 1;
}

dagger_status_t dg_tx_divergence(dg_tx_t *tx)
{
    if (!atomic_load(&tx->diverged))
        return DAGGER_OK;
    while (!atomic_load(&tx->diverged_ready)) /* its writer is a few instructions away */
        sched_yield();
    return dg_error(DAGGER_ERR_DIVERGENCE, "%s", tx->diverged_why);
}

int dg_tx_recvs_doomed(const dg_tx_t *tx)
{
    dg_tx_t *t = (dg_tx_t *)tx;
    return atomic_load_explicit(&t->lost_rank, memory_order_relaxed) >= 0 ||
           atomic_load_explicit(&t->diverged, memory_order_relaxed);
}

void dg_tx_mark_lost(dg_tx_t *tx, int r, const char *why)
{
    if (!tx || atomic_load(&tx->leaving))
        return;
    if (r >= 0 && r < tx->size)
        atomic_store(&tx->peers[r].gone, 1);
    int none = -1;
    if (!atomic_compare_exchange_strong(&tx->lost_rank, &none, r < 0 ? tx->size : r))
        return;
    if (r >= 0 && r < tx->size) {
        const dg_tx_peer_t *p = &tx->peers[r];
        snprintf(tx->lost_why, sizeof(tx->lost_why),
                 "rank %d (pid %d on %s) was lost: %s; the job cannot continue", r,
                 (int)p->proc.pid, p->hostname ? p->hostname : "?", why);
    } else {
        snprintf(tx->lost_why, sizeof(tx->lost_why), "the job was lost: %s", why);
    }
    atomic_store(&tx->lost_ready, 1);
    lost_wake(tx);
}
