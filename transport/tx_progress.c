/* Progress and waiting: the owner thread drives the UCX worker and sleeps
 * on its event fd when idle; other threads sleep on a condition variable
 * that the owner's progress signals. Nothing here spins a core. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "core/base/common.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "transport/tx_internal.h"

/* Longest sleep between checks of the lost-peer state and deadlines. */
#define DG_TX_SLICE_MS 200

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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int slice_ms(double deadline)
{
    double left = deadline - now_s();
    if (left <= 0)
        return 0;
    return left * 1e3 < DG_TX_SLICE_MS ? (int)(left * 1e3) + 1 : DG_TX_SLICE_MS;
}

static dagger_status_t timed_out(double timeout_s)
{
    return dg_error(DAGGER_ERR_TIMEOUT, "transport wait: nothing arrived within %.1f s", timeout_s);
}

/* A peer is gone; what we wait for may still be on its way (it may have
 * left normally after sending it), so take in what is there first. */
static dagger_status_t after_loss(dg_tx_t *tx, int (*done)(void *), void *arg)
{
    if (dg_tx_is_owner(tx))
        for (int idle = 0, i = 0; idle < 2 && i < 1000; i++)
            idle = dg_tx_progress(tx) ? 0 : idle + 1;
    return done(arg) ? DAGGER_OK : dg_tx_health(tx);
}

static dagger_status_t wait_owner(dg_tx_t *tx, int (*done)(void *), void *arg, double deadline,
                                  double timeout_s)
{
    for (;;) {
        if (done(arg))
            return DAGGER_OK;
        if (atomic_load(&tx->lost_rank) >= 0)
            return after_loss(tx, done, arg);
        if (dg_tx_progress(tx) || done(arg))
            continue;
        int ms = slice_ms(deadline);
        if (!ms)
            return timed_out(timeout_s);
        if (dg_tx_arm(tx))
            continue;
        struct pollfd pfd = {.fd = tx->efd, .events = POLLIN};
        if (poll(&pfd, 1, ms) < 0 && errno != EINTR)
            return dg_error(DAGGER_ERR_SYSTEM, "transport wait: poll failed (errno %d)", errno);
    }
}

static dagger_status_t wait_other(dg_tx_t *tx, int (*done)(void *), void *arg, double deadline,
                                  double timeout_s)
{
    dagger_status_t st = DAGGER_OK;
    pthread_mutex_lock(&tx->lock);
    atomic_fetch_add(&tx->waiters, 1);
    while (!done(arg)) {
        if (atomic_load(&tx->lost_rank) >= 0) {
            st = dg_tx_health(tx);
            break;
        }
        int ms = slice_ms(deadline);
        if (!ms) {
            st = timed_out(timeout_s);
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long long ns = (long long)ts.tv_nsec + (long long)ms * 1000000ll;
        ts.tv_sec += (time_t)(ns / 1000000000ll);
        ts.tv_nsec = (long)(ns % 1000000000ll);
        pthread_cond_timedwait(&tx->cond, &tx->lock, &ts);
    }
    atomic_fetch_sub(&tx->waiters, 1);
    pthread_mutex_unlock(&tx->lock);
    return st;
}

dagger_status_t dg_tx_wait(dg_tx_t *tx, int (*done)(void *arg), void *arg, double timeout_s)
{
    DG_CHECK_ARG(tx && done, "dg_tx_wait: NULL transport or predicate");
    double deadline = timeout_s > 0 ? now_s() + timeout_s : 1e300;
    if (dg_tx_is_owner(tx))
        return wait_owner(tx, done, arg, deadline, timeout_s);
    return wait_other(tx, done, arg, deadline, timeout_s);
}

static int nothing_live(void *arg)
{
    return atomic_load(&((dg_tx_t *)arg)->live_ops) == 0;
}

dagger_status_t dg_tx_flush(dg_tx_t *tx)
{
    DG_CHECK_ARG(tx, "dg_tx_flush: NULL transport");
    atomic_fetch_add(&tx->flush_waiters, 1);
    dagger_status_t st = dg_tx_wait(tx, nothing_live, tx, 0);
    atomic_fetch_sub(&tx->flush_waiters, 1);
    return st;
}

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

void dg_tx_mark_lost(dg_tx_t *tx, int r, const char *why)
{
    if (!tx || atomic_load(&tx->leaving))
        return;
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
    dg_tx_wake_owner(tx);
    dg_tx_notify(tx);
}

void dg_tx_get_stats(const dg_tx_t *tx, dg_tx_stats_t *out)
{
    *out = tx->stats;
}
