/* The send-failure countdown, the late collective part and the closing
 * grace (tx_inject.h). */
#include "transport/tx_inject.h"

_Atomic long dg_tx_send_countdown;

int dg_tx_send_refused(void)
{
    long left = atomic_load_explicit(&dg_tx_send_countdown, memory_order_relaxed);
    while (left > 0)
        if (atomic_compare_exchange_weak(&dg_tx_send_countdown, &left, left - 1))
            return left == 1;
    return 0;
}

void dg_tx_inject_send_failure(long k)
{
    atomic_store(&dg_tx_send_countdown, k > 0 ? k : 0);
}

/* The rank whose part is late, + 1 (0: disarmed), and the hold after a loss. */
static _Atomic int late_dst;
static _Atomic int late_ms;

void dg_tx_inject_late_part(int dst, int after_ms)
{
    atomic_store(&late_ms, after_ms);
    atomic_store(&late_dst, dst >= 0 ? dst + 1 : 0);
}

int dg_tx_late_part(int dst, int *after_ms)
{
    int want = dst + 1;
    if (DG_LIKELY(atomic_load_explicit(&late_dst, memory_order_relaxed) != want))
        return 0;
    if (!atomic_compare_exchange_strong(&late_dst, &want, 0))
        return 0;
    *after_ms = atomic_load(&late_ms);
    return 1;
}

/* In the closing barrier, how long a wait goes on after a loss it is told
 * of while the rank it waits for is not among the lost (dg_tx_wait_from).
 * The part of a live rank that has sent everyone else theirs is a few
 * scheduling delays away; this bounds the wait when that rank is stuck.
 * 2 s was too short on a loaded machine: in a CI run a part held 300 ms
 * behind the holder's own sight of the exit came after the waiting rank
 * had given up (docs/transport.md, "When a rank is lost"). */
#define DG_TX_CLOSING_GRACE_S 10.0

static _Atomic double closing_grace;

void dg_tx_inject_closing_grace(double s)
{
    atomic_store(&closing_grace, s > 0 ? s : 0);
}

double dg_tx_closing_grace_s(void)
{
    double s = atomic_load_explicit(&closing_grace, memory_order_relaxed);
    return s > 0 ? s : DG_TX_CLOSING_GRACE_S;
}
