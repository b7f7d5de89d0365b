/* Collectives on the transport's messages (the public wrappers in
 * dagger/coll.h call these with the runtime's transport). Semantics are
 * documented there; these take the transport directly so the layer is
 * usable and testable without the runtime.
 *
 * Algorithm: every collective is an "up" phase (binomial tree towards
 * rank 0; each node combines its own part with its children's parts in
 * rank order and compares their call signatures with its own) followed by
 * a "down" phase (binomial broadcast of rank 0's verdict and result). So
 * every rank returns the same status and the same bytes, and depth is
 * 2*ceil(log2 n) messages. */
#ifndef DG_COLL_H
#define DG_COLL_H

#include <dagger/coll.h>

#include "transport/tx.h"

dagger_status_t dg_coll_barrier(dg_tx_t *tx);
dagger_status_t dg_coll_bcast(dg_tx_t *tx, void *buf, size_t len, int root);
dagger_status_t dg_coll_allgather(dg_tx_t *tx, const void *mine, size_t len, void **all,
                                  size_t *lens);
dagger_status_t dg_coll_allreduce(dg_tx_t *tx, void *buf, size_t count, dagger_dtype_t type,
                                  dagger_op_t op);
dagger_status_t dg_coll_allreduce_bytes(dg_tx_t *tx, void *buf, size_t len, dagger_combine_fn fn,
                                        void *ctx);

/* Whether this rank's caller waits in a collective now: its number, the rank
 * whose message it waits for, and since when (CLOCK_MONOTONIC seconds). Read
 * by the hang detector from another thread. */
int dg_coll_waiting(const dg_tx_t *tx, unsigned long long *seq, int *src, double *since);

#endif
