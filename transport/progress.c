/* The progress engine's round and its owner (progress.h says who drives
 * it, on which thread, for which channels): which thread holds the UCX
 * worker, one round of progress, and arming the worker's fd before the
 * owner sleeps. Waiting is in progress_wait.c. */
#include "core/base/common.h"
#include "core/base/log.h"
#include "transport/tx_internal.h"

/* Any address unique to the calling thread identifies it. */
static _Thread_local char dg_tx_thread_tag;

static uintptr_t self_tag(void)
{
    return (uintptr_t)&dg_tx_thread_tag;
}

int dg_tx_is_owner(const dg_tx_t *tx)
{
    return atomic_load_explicit(&((dg_tx_t *)tx)->owner, memory_order_acquire) == self_tag();
}

void dg_tx_adopt(dg_tx_t *tx)
{
    atomic_store_explicit(&tx->owner, self_tag(), memory_order_release);
    if (tx->worker)
        dg_tx_wake_owner(tx); /* outbox entries pushed meanwhile: look at them */
}

void dg_tx_release(dg_tx_t *tx)
{
    atomic_store_explicit(&tx->owner, 0, memory_order_release);
}

int dg_tx_fd(const dg_tx_t *tx)
{
    return tx->efd;
}

void dg_tx_notify(dg_tx_t *tx)
{
    if (!atomic_load(&tx->waiters))
        return;
    pthread_mutex_lock(&tx->lock);
    pthread_cond_broadcast(&tx->cond);
    pthread_mutex_unlock(&tx->lock);
}

int dg_tx_progress(dg_tx_t *tx)
{
    DG_ASSERT(dg_tx_is_owner(tx));
    /* One round of UCX progress: callers loop while there is work, and a
     * second round right after a message costs as much as the message. */
    int n = dg_tx_drain_outbox(tx) + (int)ucp_worker_progress(tx->worker);
    if (tx->completed.head || tx->queued_ops)
        n += dg_tx_run_completions(tx);
    return n;
}

int dg_tx_arm(dg_tx_t *tx)
{
    DG_ASSERT(dg_tx_is_owner(tx));
    if (atomic_load(&tx->outbox) || tx->completed.head)
        return 1;
    ucs_status_t st = ucp_worker_arm(tx->worker);
    if (st == UCS_OK)
        return 0;
    if (st != UCS_ERR_BUSY)
        dg_log(DG_LOG_WARN, "ucp_worker_arm: %s", ucs_status_string(st));
    return 1;
}
