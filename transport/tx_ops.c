/* Operation life cycle: creation, hand-over to the owner (outbox), flow
 * control per peer (bounded in-flight operations, the rest queued in
 * order, ordered sends overtaking), completion and done callbacks. */
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/common.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "transport/tx_internal.h"

dg_tx_op_t *dg_tx_op_new(dg_tx_t *tx, dg_tx_op_kind_t kind, int peer, size_t extra)
{
    size_t bytes = sizeof(dg_tx_op_t) + extra;
    int small = bytes <= DG_TX_OP_SPARE_BYTES;
    dg_tx_op_t *op = small ? dg_spares_take(&tx->spare_ops) : NULL;
    if (op)
        memset(op, 0, bytes); /* what this one uses of the spare's DG_TX_OP_SPARE_BYTES */
    else
        op = dg_calloc(1, small ? DG_TX_OP_SPARE_BYTES : bytes);
    if (!op)
        return NULL;
    op->spare = small;
    op->tx = tx;
    op->kind = kind;
    op->peer = peer;
    atomic_fetch_add(&tx->live_ops, 1);
    return op;
}

void dg_tx_op_free(dg_tx_t *tx, dg_tx_op_t *op)
{
    if (op->spare)
        dg_spares_give(&tx->spare_ops, op);
    else
        free(op);
}

void dg_tx_queue_push(dg_tx_queue_t *q, dg_tx_op_t *op)
{
    op->next = NULL;
    if (q->tail)
        q->tail->next = op;
    else
        q->head = op;
    q->tail = op;
}

dg_tx_op_t *dg_tx_queue_pop(dg_tx_queue_t *q)
{
    dg_tx_op_t *op = q->head;
    if (op) {
        q->head = op->next;
        if (!q->head)
            q->tail = NULL;
        op->next = NULL;
    }
    return op;
}

dagger_status_t dg_tx_ucs_error(ucs_status_t st, const char *what, int peer)
{
    switch (st) {
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_UNREACHABLE:
        return dg_error(DAGGER_ERR_PEER_LOST, "%s: rank %d is unreachable (%s)", what, peer,
                        ucs_status_string(st));
    default:
        return dg_error(DAGGER_ERR_TRANSPORT, "%s (rank %d): UCX error %s", what, peer,
                        ucs_status_string(st));
    }
}

static int has_room(const dg_tx_t *tx, const dg_tx_peer_t *p, const dg_tx_op_t *op)
{
    if (p->inflight >= tx->peer_inflight)
        return 0;
    return !op->large || p->large_inflight < DG_TX_LARGE_INFLIGHT;
}

/* Whether op, an ordered send, may start past the bounds: every ordered
 * send to the same peer in flight was planned after it, and each may be
 * waiting for a receive its peer plans only once this one has arrived. (A
 * send planned before it completes without this one, since the peer
 * planned its receive earlier, and then frees its place: until then op
 * waits its turn as before.) So the queued send with the lowest order
 * always starts, and the plan's earliest unfinished op, on whichever rank,
 * always gets its data. */
static int may_overtake(const dg_tx_peer_t *p, const dg_tx_op_t *op)
{
    return op->order && p->flying && op->order < p->order_lo;
}

static void fly(dg_tx_peer_t *p, dg_tx_op_t *op)
{
    if (!p->flying) { /* queued sends with a lower order may overtake from now on */
        p->order_lo = op->order;
        p->rescan |= p->pending.head != NULL;
    } else if (op->order < p->order_lo) { /* (fewer may: no rescan) */
        p->order_lo = op->order;
    }
    op->fprev = NULL;
    op->fnext = p->flying;
    if (p->flying)
        p->flying->fprev = op;
    p->flying = op;
}

static void land(dg_tx_peer_t *p, dg_tx_op_t *op)
{
    if (op->fprev)
        op->fprev->fnext = op->fnext;
    else
        p->flying = op->fnext;
    if (op->fnext)
        op->fnext->fprev = op->fprev;
    if (op->order == p->order_lo && p->flying) { /* the list is short (the bounds) */
        uint64_t lo = UINT64_MAX;
        for (const dg_tx_op_t *o = p->flying; o; o = o->fnext)
            if (o->order < lo)
                lo = o->order;
        p->order_lo = lo;
        p->rescan |= p->pending.head != NULL; /* more queued sends may overtake now */
    }
}

static void start(dg_tx_t *tx, dg_tx_op_t *op)
{
    dg_tx_peer_t *p = &tx->peers[op->peer];
    if (DG_UNLIKELY(atomic_load_explicit(&tx->lost_rank, memory_order_relaxed) == op->peer)) {
        dg_tx_op_finished(op, DAGGER_ERR_PEER_LOST);
        return;
    }
    op->posted = 1;
    p->inflight++;
    p->large_inflight += op->large;
    if (op->order)
        fly(p, op);
    if (p->inflight > tx->stats.max_inflight)
        tx->stats.max_inflight = p->inflight;
    dg_tx_post(tx, op);
}

void dg_tx_start_or_queue(dg_tx_t *tx, dg_tx_op_t *op)
{
    if (op->kind == DG_TX_OP_RECV) { /* receives are paced by their senders */
        dg_tx_post(tx, op);
        return;
    }
    dg_tx_peer_t *p = &tx->peers[op->peer];
    if (p->pending.head || !has_room(tx, p, op)) {
        if (!p->pending.head && may_overtake(p, op)) {
            tx->stats.overtook++;
            start(tx, op);
            return;
        }
        /* Behind others: start_queued takes it past them, in queue order. */
        p->rescan |= may_overtake(p, op);
        dg_tx_queue_push(&p->pending, op);
        tx->stats.queued++;
        tx->queued_ops++;
        return;
    }
    start(tx, op);
}

dagger_status_t dg_tx_submit(dg_tx_t *tx, dg_tx_op_t *op)
{
    if (dg_tx_is_owner(tx)) {
        dg_tx_start_or_queue(tx, op);
        return DAGGER_OK;
    }
    /* Lock-free push; the owner takes the whole list at once and reverses
     * it, so each producer's operations keep their order. Only the push
     * onto an empty outbox wakes the owner: later ones find it awake. */
    dg_tx_op_t *head = atomic_load_explicit(&tx->outbox, memory_order_relaxed);
    do {
        op->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&tx->outbox, &head, op, memory_order_release,
                                                    memory_order_relaxed));
    if (!head)
        dg_tx_wake_owner(tx);
    return DAGGER_OK;
}

int dg_tx_drain_outbox(dg_tx_t *tx)
{
    if (!atomic_load_explicit(&tx->outbox, memory_order_relaxed))
        return 0;
    dg_tx_op_t *op = atomic_exchange_explicit(&tx->outbox, NULL, memory_order_acquire);
    dg_tx_op_t *fifo = NULL;
    while (op) { /* reverse the LIFO into submission order */
        dg_tx_op_t *next = op->next;
        op->next = fifo;
        fifo = op;
        op = next;
    }
    int n = 0;
    while (fifo) {
        dg_tx_op_t *next = fifo->next;
        dg_tx_start_or_queue(tx, fifo);
        fifo = next;
        n++;
    }
    return n;
}

void dg_tx_op_finished(dg_tx_op_t *op, dagger_status_t status)
{
    dg_tx_t *tx = op->tx;
    op->status = status;
    if (op->posted) {
        dg_tx_peer_t *p = &tx->peers[op->peer];
        p->inflight--;
        p->large_inflight -= op->large;
        op->posted = 0;
        if (op->order)
            land(p, op);
    }
    dg_tx_queue_push(&tx->completed, op);
}

/* Starts the queued sends of p that may overtake (may_overtake), in
 * queue order; those left keep theirs. Each one started lowers order_lo to
 * its own order, so a later one in the queue overtakes only with a lower
 * order still. */
static int overtake_queued(dg_tx_t *tx, dg_tx_peer_t *p)
{
    int n = 0;
    dg_tx_op_t *prev = NULL, *op = p->pending.head;
    p->rescan = 0;
    while (op) {
        dg_tx_op_t *next = op->next;
        if (!may_overtake(p, op)) {
            prev = op;
            op = next;
            continue;
        }
        if (prev)
            prev->next = next;
        else
            p->pending.head = next;
        if (p->pending.tail == op)
            p->pending.tail = prev;
        op->next = NULL;
        tx->queued_ops--;
        tx->stats.overtook++;
        start(tx, op);
        n++;
        op = next;
    }
    return n;
}

/* Starts queued operations of every peer that has room again. */
static int start_queued(dg_tx_t *tx)
{
    int n = 0;
    for (int r = 0; r < tx->size; r++) {
        dg_tx_peer_t *p = &tx->peers[r];
        while (p->pending.head && has_room(tx, p, p->pending.head)) {
            start(tx, dg_tx_queue_pop(&p->pending));
            tx->queued_ops--;
            n++;
        }
        if (p->rescan && p->pending.head)
            n += overtake_queued(tx, p);
    }
    return n;
}

int dg_tx_run_completions(dg_tx_t *tx)
{
    int n = 0;
    dg_tx_op_t *op;
    while ((op = dg_tx_queue_pop(&tx->completed))) {
        if (op->done)
            op->done(op->arg, op->status);
        dg_tx_op_free(tx, op);
        atomic_fetch_sub(&tx->live_ops, 1);
        n++;
    }
    if (tx->queued_ops)
        n += start_queued(tx);
    /* Threads waiting in dg_tx_flush; other waits are notified by whoever
     * changes what they wait for (channel handlers, callbacks). */
    if (n && atomic_load(&tx->flush_waiters) && atomic_load(&tx->live_ops) == 0)
        dg_tx_notify(tx);
    return n;
}
