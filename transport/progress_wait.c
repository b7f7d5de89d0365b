/* Waiting on the progress engine (progress.h) without spinning a core: the
 * owner runs rounds while it waits and sleeps on the UCX worker's event fd
 * when idle; other threads check for a few microseconds, yielding, then
 * sleep on a condition variable that channel handlers and done callbacks
 * signal (dg_tx_notify). */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "actors/thread_sched.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "transport/tx_inject.h"
#include "transport/tx_internal.h"

/* How long a thread other than the owner checks, yielding, before it
 * sleeps (wait_other). */
#define DG_TX_WAIT_SPIN_S 30e-6

/* Longest sleep between checks of the lost-peer state and deadlines. */
#define DG_TX_SLICE_MS 200

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

/* One wait's view of the lost-peer state (dg_tx_wait_from). */
typedef struct loss_view {
    int src;            /* the rank whose message the wait is for, or -1 */
    double seen;        /* when this wait first saw a loss it went on after; 0: none */
} loss_view_t;

/* The error of a wait that a loss ended: the first loss's text, or in the
 * closing barrier what this wait missed (the first rank lost there may
 * have left normally). The latter is also said on stderr, once: the loss
 * was not (tx_liveness.c, lost_now), and a program may not look at
 * dagger_finalize's status. */
static dagger_status_t loss_error(dg_tx_t *tx, const loss_view_t *v)
{
    dagger_status_t st = dg_tx_health(tx);
    if (st == DAGGER_OK || !atomic_load(&tx->closing))
        return st;
    if (v->src >= 0 && atomic_load(&tx->peers[v->src].gone)) {
        const dg_tx_peer_t *p = &tx->peers[v->src];
        dg_error(st, "rank %d (pid %d on %s) is gone and its part of the closing barrier never "
                 "came (the ranks that have every part leave; this one left or died before "
                 "sending it)", v->src, (int)p->proc.pid, p->hostname ? p->hostname : "?");
    } else {
        char first[512];
        snprintf(first, sizeof(first), "%s", dagger_error_detail());
        dg_error(st, "a part of the closing barrier did not come within %.0f s of a peer's exit "
                 "(first loss seen here: %s)", dg_tx_closing_grace_s(), first);
    }
    if (!atomic_exchange(&tx->closing_said, 1))
        dg_log(DG_LOG_ERROR, "the closing barrier on rank %d: %s", tx->rank,
               dagger_error_detail());
    return st;
}

/* A peer is gone; what we wait for may still be on its way (it may have
 * left normally after sending it), so take in what is there first. */
static dagger_status_t after_loss(dg_tx_t *tx, int (*done)(void *), void *arg,
                                  const loss_view_t *v)
{
    if (dg_tx_is_owner(tx))
        for (int idle = 0, i = 0; idle < 2 && i < 1000; i++)
            idle = dg_tx_progress(tx) ? 0 : idle + 1;
    return done(arg) ? DAGGER_OK : loss_error(tx, v);
}

/* Whether the loss state ends the wait: any loss does, except in the
 * closing barrier, where only src's does, or the grace's end. */
static int loss_ends(dg_tx_t *tx, loss_view_t *v)
{
    if (atomic_load(&tx->lost_rank) < 0)
        return 0;
    if (!atomic_load(&tx->closing) || (v->src >= 0 && atomic_load(&tx->peers[v->src].gone)))
        return 1;
    double t = now_s();
    if (v->seen == 0)
        v->seen = t;
    return t - v->seen >= dg_tx_closing_grace_s();
}

/* The deadline of the next sleep: the grace's end comes first once it runs. */
static double sleep_until(const loss_view_t *v, double deadline)
{
    double grace = dg_tx_closing_grace_s();
    return v->seen > 0 && v->seen + grace < deadline ? v->seen + grace : deadline;
}

static dagger_status_t wait_owner(dg_tx_t *tx, int (*done)(void *), void *arg, double deadline,
                                  double timeout_s, loss_view_t *v)
{
    for (;;) {
        if (done(arg))
            return DAGGER_OK;
        if (loss_ends(tx, v))
            return after_loss(tx, done, arg, v);
        if (dg_tx_progress(tx) || done(arg))
            continue;
        int ms = slice_ms(sleep_until(v, deadline));
        if (!ms && v->seen > 0 && now_s() < deadline)
            continue; /* the grace ran out: loss_ends says so */
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
                                  double timeout_s, loss_view_t *v)
{
    dagger_status_t st = DAGGER_OK;
    /* What a collective waits for is often a few microseconds away, and a
     * sleep on the condition variable costs a wake-up on each side: on two
     * cores an 8-byte allreduce took 29 us on 2 ranks x 2 threads with the
     * sleep and 8 us with this (docs/benchmarks.md). Yielding lets a rank
     * that shares the core run meanwhile. */
    for (double t0 = now_s(); !done(arg) && now_s() - t0 < DG_TX_WAIT_SPIN_S;)
        dg_spin_pause();
    pthread_mutex_lock(&tx->lock);
    atomic_fetch_add(&tx->waiters, 1);
    while (!done(arg)) {
        if (loss_ends(tx, v)) {
            st = loss_error(tx, v);
            break;
        }
        int ms = slice_ms(sleep_until(v, deadline));
        if (!ms && v->seen > 0 && now_s() < deadline)
            continue; /* the grace ran out: loss_ends says so */
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

dagger_status_t dg_tx_wait_from(dg_tx_t *tx, int (*done)(void *arg), void *arg, double timeout_s,
                                int src)
{
    DG_CHECK_ARG(tx && done, "dg_tx_wait: NULL transport or predicate");
    DG_CHECK_ARG(src >= -1 && src < tx->size, "dg_tx_wait: no rank %d", src);
    double deadline = timeout_s > 0 ? now_s() + timeout_s : 1e300;
    loss_view_t v = {.src = src, .seen = 0};
    if (dg_tx_is_owner(tx))
        return wait_owner(tx, done, arg, deadline, timeout_s, &v);
    return wait_other(tx, done, arg, deadline, timeout_s, &v);
}

dagger_status_t dg_tx_wait(dg_tx_t *tx, int (*done)(void *arg), void *arg, double timeout_s)
{
    return dg_tx_wait_from(tx, done, arg, timeout_s, -1);
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
