/* Clock offsets between ranks, estimated once at the start of a trace. */
#ifndef DG_RUNTIME_TRACE_CLOCKSYNC_H
#define DG_RUNTIME_TRACE_CLOCKSYNC_H

#include <dagger/status.h>
#include <stdint.h>

struct dg_tx;

/* Collective. Sets *offset so that (this rank's CLOCK_MONOTONIC + offset) is
 * rank 0's clock, exact to +- *uncert. Alone (tx NULL) both are 0. */
dagger_status_t dg_trace_clock_sync(struct dg_tx *tx, int rank, int nranks, int64_t *offset,
                                    uint64_t *uncert);

#endif
