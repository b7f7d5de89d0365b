/* Test-only fault injection in the transport's send path: the k-th
 * active-message send posted from now, on any thread of this process,
 * fails as if ucp_am_send_nbx had returned UCS_ERR_IO_ERROR. Compiled in
 * every build; disarmed it costs one relaxed load and a predictable branch
 * per send. tests/multirank/mr_fault_send.c uses it. */
#ifndef DG_TX_INJECT_H
#define DG_TX_INJECT_H

#include <stdatomic.h>

#include "core/base/common.h"

extern _Atomic long dg_tx_send_countdown;

/* 1 if a failure is armed (the fast path must then take the posting path). */
static inline int dg_tx_send_armed(void)
{
    return DG_UNLIKELY(atomic_load_explicit(&dg_tx_send_countdown, memory_order_relaxed) != 0);
}

/* Counts one posted send down; 1 when this one is to fail. */
int dg_tx_send_refused(void);

/* Arms (k >= 1) or disarms (k = 0) the failure. */
void dg_tx_inject_send_failure(long k);

#endif
