/* Intrusive multi-producer single-consumer queue (Vyukov's algorithm with a
 * stub node). Push is one atomic exchange plus one store, never blocks and
 * never fails; pop is done by one consumer at a time.
 *
 * Used for actor mailboxes (nodes are messages) and for the per-worker run
 * queues of pinned actors (nodes are actors).
 *
 * A push is two steps: swap the producer end, then link the previous node.
 * Between the two steps the consumer cannot see past the previous node; pop
 * then answers DG_MPSC_BUSY ("a producer is mid-push, try again") rather than
 * DG_MPSC_EMPTY, so callers never mistake it for an empty queue. */
#ifndef DG_ACT_MPSC_H
#define DG_ACT_MPSC_H

#include <stdatomic.h>
#include <stddef.h>

#include "core/base/common.h"

typedef struct dg_mpsc_node {
    _Atomic(struct dg_mpsc_node *) next;
} dg_mpsc_node_t;

typedef struct dg_mpsc {
    /* Producer end: swapped by every push. Own cache line, so producers do not
     * bounce the consumer's line. */
    _Alignas(DG_CACHELINE) _Atomic(dg_mpsc_node_t *) in;
    /* Consumer end: the oldest node not yet returned, or the stub. Atomic only
     * so that dg_mpsc_is_empty() may be asked by a thread that is not (or no
     * longer) the consumer; the consumer uses relaxed accesses. */
    _Alignas(DG_CACHELINE) _Atomic(dg_mpsc_node_t *) out;
    dg_mpsc_node_t stub;
} dg_mpsc_t;

typedef enum { DG_MPSC_ITEM = 0, DG_MPSC_EMPTY = 1, DG_MPSC_BUSY = 2 } dg_mpsc_pop_t;

static inline void dg_mpsc_init(dg_mpsc_t *q)
{
    atomic_init(&q->stub.next, NULL);
    atomic_init(&q->in, &q->stub);
    atomic_init(&q->out, &q->stub);
}

/* Any thread. Returns 1 when the queue was empty before this push (the
 * producer end was the stub), which callers may use as a hint only. */
static inline void dg_mpsc_push(dg_mpsc_t *q, dg_mpsc_node_t *n)
{
    atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
    dg_mpsc_node_t *prev = atomic_exchange_explicit(&q->in, n, memory_order_seq_cst);
    atomic_store_explicit(&prev->next, n, memory_order_release);
}

/* Consumer only. On DG_MPSC_ITEM, *item is the oldest node, now owned by the
 * caller. */
static inline dg_mpsc_pop_t dg_mpsc_pop(dg_mpsc_t *q, dg_mpsc_node_t **item)
{
    dg_mpsc_node_t *out = atomic_load_explicit(&q->out, memory_order_relaxed);
    dg_mpsc_node_t *next = atomic_load_explicit(&out->next, memory_order_acquire);
    if (out == &q->stub) {
        if (!next)
            return atomic_load_explicit(&q->in, memory_order_seq_cst) == &q->stub ? DG_MPSC_EMPTY
                                                                                   : DG_MPSC_BUSY;
        out = next;
        atomic_store_explicit(&q->out, out, memory_order_relaxed);
        next = atomic_load_explicit(&out->next, memory_order_acquire);
    }
    if (next) {
        atomic_store_explicit(&q->out, next, memory_order_relaxed);
        *item = out;
        return DG_MPSC_ITEM;
    }
    /* out is the last linked node: return it only if no producer is mid-push
     * behind it, re-pushing the stub so the queue never becomes node-less. */
    if (atomic_load_explicit(&q->in, memory_order_seq_cst) != out)
        return DG_MPSC_BUSY;
    dg_mpsc_push(q, &q->stub);
    next = atomic_load_explicit(&out->next, memory_order_acquire);
    if (!next)
        return DG_MPSC_BUSY;
    atomic_store_explicit(&q->out, next, memory_order_relaxed);
    *item = out;
    return DG_MPSC_ITEM;
}

/* Any thread; reads only the queue's own two ends, never a node. 0 means
 * something was pushed and not yet popped (possibly still mid-push). */
static inline int dg_mpsc_is_empty(dg_mpsc_t *q)
{
    return atomic_load_explicit(&q->in, memory_order_seq_cst) == &q->stub &&
           atomic_load_explicit(&q->out, memory_order_seq_cst) == &q->stub;
}

#endif
