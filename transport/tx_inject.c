/* The send-failure countdown (tx_inject.h). */
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
