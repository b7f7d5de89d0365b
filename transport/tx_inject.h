/* Test-only fault injection in the transport's send path, compiled in every
 * build; disarmed, each costs one relaxed load and a predictable branch.
 *  - A failed send: the k-th active-message send posted from now, on any
 *    thread of this process, fails as if ucp_am_send_nbx had returned
 *    UCS_ERR_IO_ERROR (tests/multirank/mr_fault_send.c).
 *  - A late collective part: the next collective's part for one rank goes
 *    out after everything else this rank does in that collective, as a
 *    send that UCX queued behind a busy peer would
 *    (tests/transport/mr_coll.c, the closing barrier's tests).
 *  - A shorter closing grace: how long a wait in the closing barrier goes
 *    on after a peer's exit (progress_wait.c), so that the test of giving
 *    up need not wait the default. */
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

/* Arms the late part: the next collective of this process holds its part
 * for rank dst until a peer has been found lost here (at most
 * DG_TX_LATE_PART_MAX_MS), then after_ms more (300 lets the other ranks'
 * probes see the loss too). */
void dg_tx_inject_late_part(int dst, int after_ms);
#define DG_TX_LATE_PART_MAX_MS 5000

/* 1 (and disarmed) if this collective's part for dst is the late one; the
 * hold after the loss in *after_ms. */
int dg_tx_late_part(int dst, int *after_ms);

/* The closing grace in seconds (s > 0), or back to the default (s <= 0);
 * and the grace in force. */
void dg_tx_inject_closing_grace(double s);
double dg_tx_closing_grace_s(void);

#endif
