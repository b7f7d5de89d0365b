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
 * 2*ceil(log2 n) messages. On at most 8 ranks (DG_COLL_FLAT_MAX) every rank
 * sends its part to every other one instead and replays that tree itself
 * (coll_flat.c): the same results, one message deep. */
#ifndef DG_COLL_H
#define DG_COLL_H

#include <dagger/coll.h>
#include <stdatomic.h>
#include <stdint.h>

#include "transport/tx.h"

dagger_status_t dg_coll_barrier(dg_tx_t *tx);
/* dagger_finalize's barrier: a signature of its own (coll_foresee.c). */
dagger_status_t dg_coll_barrier_final(dg_tx_t *tx);
/* An allreduce whose signature also carries plan, a hash of what the
 * caller planned: ranks that pass different ones get DAGGER_ERR_DIVERGENCE
 * (a region's end: the ranks submitted different work). */
dagger_status_t dg_coll_allreduce_plan(dg_tx_t *tx, void *buf, size_t count, dagger_dtype_t type,
                                       dagger_op_t op, uint64_t plan);
/* Early divergence detection (coll_foresee.c). Every collective's
 * signature carries the regions its caller had begun: region `region`
 * (numbered from 1) begins on this rank. */
void dg_tx_note_region(dg_tx_t *tx, uint64_t region);
/* This rank's next collective will be dg_coll_allreduce_plan(count, type,
 * op, plan), after a wait for something else: a peer's message for it with
 * another signature ends the job with DAGGER_ERR_DIVERGENCE at once, instead
 * of after the wait (which may never end). _none: the wait is over. */
void dg_coll_expect(dg_tx_t *tx, size_t count, dagger_dtype_t type, dagger_op_t op, uint64_t plan);
void dg_coll_expect_none(dg_tx_t *tx);
/* Marks the divergence (why: how it was found), says so and tells every
 * other rank, as the foresight does when it proves one. Any thread. */
void dg_tx_diverge(dg_tx_t *tx, const char *why);

/* Asking a peer what it sent (coll_probe.c). The runtime sets both hooks:
 * sent gives how many data messages this rank sent peer so far (answered
 * only while this rank waits in a region end's agreement); answer receives
 * a peer's count for the asker's current region (owner thread). */
typedef uint64_t (*dg_tx_probe_sent_fn)(void *ctx, int peer);
typedef void (*dg_tx_probe_answer_fn)(void *ctx, int peer, uint64_t sent);
void dg_tx_set_probe(dg_tx_t *tx, dg_tx_probe_sent_fn sent, dg_tx_probe_answer_fn answer,
                     void *ctx);
/* Asks peer, when it waits at the end of this rank's current region, for its
 * count; and tells it the last task this rank planned with the plan's hash
 * there, which the peer compares with its own (dg_tx_note_planned). Any
 * thread. */
dagger_status_t dg_tx_probe(dg_tx_t *tx, int peer);

/* What this rank planned, for the probes (coll_probe.c): ring[t mod
 * DG_TX_PLANNED] holds task t's id in its high bits and the low
 * DG_TX_PLANNED_BITS bits of the plan's shape hash after it below, as one
 * word, so a reader sees both together; last: the latest such word (0:
 * none yet). */
#define DG_TX_PLANNED (1u << 16)
#define DG_TX_PLANNED_BITS 24
typedef struct dg_tx_planned {
    _Atomic uint64_t *ring;
    _Atomic uint64_t last;
} dg_tx_planned_t;
/* This rank's record; NULL alone. */
dg_tx_planned_t *dg_tx_planned(dg_tx_t *tx);
/* This rank planned task `task` (ids from 1 in submission order: ranks that
 * planned the same work give each task the same id) and the shape hash
 * (dg_plan_shape_hash) after it is `hash`. One thread at a time. */
static inline void dg_tx_note_planned(dg_tx_planned_t *pl, uint64_t task, uint64_t hash)
{
    if (task >> (64 - DG_TX_PLANNED_BITS))
        return; /* (2^40 tasks) */
    uint64_t e = task << DG_TX_PLANNED_BITS | (hash & ((1ull << DG_TX_PLANNED_BITS) - 1));
    atomic_store_explicit(&pl->ring[task % DG_TX_PLANNED], e, memory_order_relaxed);
    atomic_store_explicit(&pl->last, e, memory_order_relaxed);
}
dagger_status_t dg_coll_bcast(dg_tx_t *tx, void *buf, size_t len, int root);
dagger_status_t dg_coll_allgather(dg_tx_t *tx, const void *mine, size_t len, void **all,
                                  size_t *lens);
dagger_status_t dg_coll_allreduce(dg_tx_t *tx, void *buf, size_t count, dagger_dtype_t type,
                                  dagger_op_t op);
dagger_status_t dg_coll_allreduce_bytes(dg_tx_t *tx, void *buf, size_t len, dagger_combine_fn fn,
                                        void *ctx);

#define DG_COLL_FLAT_MAX 8

/* Tests: the flat exchange on at most n ranks, the tree above (0: always
 * the tree). Every rank must set the same n before the same collective. */
void dg_coll_set_flat_max(dg_tx_t *tx, int n);

/* Whether this rank's caller waits in a collective now: its number, the rank
 * whose message it waits for, and since when (CLOCK_MONOTONIC seconds). Read
 * by the hang detector from another thread. */
int dg_coll_waiting(const dg_tx_t *tx, unsigned long long *seq, int *src, double *since);

#endif
