/* The send-failure countdown and the late collective part (tx_inject.h). */
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
