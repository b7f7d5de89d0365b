/* Ready queue: a binary heap under a mutex. */
#include "core/exec/readyq.h"

#include <stdlib.h>

#include "core/base/alloc.h"

static int32_t prio(const dg_xop_t *op)
{
    return op->kind == DG_PLAN_OP_LAUNCH ? op->u.launch.priority : 0;
}

/* 1 when a should run before b. */
static int before(const dg_xop_t *a, const dg_xop_t *b)
{
    int32_t pa = prio(a), pb = prio(b);
    if (pa != pb)
        return pa > pb;
    return a->ready_order < b->ready_order;
}

int dg_readyq_init(dg_readyq_t *q, size_t fifo_cap)
{
    q->fifo.cells = NULL;
    if (fifo_cap && dg_mpmc_init(&q->fifo, fifo_cap))
        return -1;
    q->n = 0;
    q->cap = 256;
    q->heap = dg_malloc(q->cap * sizeof(*q->heap));
    if (!q->heap) { /* a failed init leaves nothing to clean up */
        if (q->fifo.cells)
            dg_mpmc_cleanup(&q->fifo);
        return -1;
    }
    atomic_store(&q->approx, 0);
    pthread_mutex_init(&q->lock, NULL);
    return 0;
}

void dg_readyq_cleanup(dg_readyq_t *q)
{
    if (q->fifo.cells)
        dg_mpmc_cleanup(&q->fifo);
    free(q->heap);
    pthread_mutex_destroy(&q->lock);
}

int dg_readyq_push(dg_readyq_t *q, dg_xop_t *op)
{
    /* FIFO order among priority-0 work holds in the ring; work that
     * overflows it (or has a priority) is ordered by ready_order in the heap. */
    if (q->fifo.cells && prio(op) == 0 && dg_mpmc_push(&q->fifo, op) == 0)
        return 0;
    pthread_mutex_lock(&q->lock);
    if (q->n == q->cap) {
        dg_xop_t **h = dg_realloc(q->heap, q->cap * 2 * sizeof(*h));
        if (!h) {
            pthread_mutex_unlock(&q->lock);
            return -1;
        }
        q->heap = h;
        q->cap *= 2;
    }
    size_t i = q->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(op, q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = op;
    atomic_store_explicit(&q->approx, q->n, memory_order_relaxed);
    pthread_mutex_unlock(&q->lock);
    return 0;
}

/* Pops the heap's top when it has at least min_prio. Lock not held. */
static dg_xop_t *heap_pop(dg_readyq_t *q, int64_t min_prio)
{
    pthread_mutex_lock(&q->lock);
    if (q->n == 0 || prio(q->heap[0]) < min_prio) {
        pthread_mutex_unlock(&q->lock);
        return NULL;
    }
    dg_xop_t *top = q->heap[0];
    dg_xop_t *last = q->heap[--q->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && before(q->heap[c + 1], q->heap[c]))
            c++;
        if (!before(q->heap[c], last))
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (q->n)
        q->heap[i] = last;
    atomic_store_explicit(&q->approx, q->n, memory_order_relaxed);
    pthread_mutex_unlock(&q->lock);
    return top;
}

dg_xop_t *dg_readyq_pop(dg_readyq_t *q)
{
    /* Prioritised work (>= 0) first, then the priority-0 ring, then work
     * with a negative priority. */
    int heap = atomic_load_explicit(&q->approx, memory_order_relaxed) != 0;
    dg_xop_t *op = heap ? heap_pop(q, 0) : NULL;
    if (!op && q->fifo.cells)
        op = dg_mpmc_pop(&q->fifo);
    if (!op && heap)
        op = heap_pop(q, INT64_MIN);
    return op;
}

size_t dg_readyq_depth(dg_readyq_t *q)
{
    size_t n = atomic_load_explicit(&q->approx, memory_order_relaxed);
    if (q->fifo.cells) {
        size_t tail = atomic_load_explicit(&q->fifo.tail, memory_order_relaxed);
        size_t head = atomic_load_explicit(&q->fifo.head, memory_order_relaxed);
        n += tail > head ? tail - head : 0;
    }
    return n;
}

int dg_readyq_busy(dg_readyq_t *q)
{
    if (atomic_load_explicit(&q->approx, memory_order_relaxed))
        return 1;
    return q->fifo.cells && atomic_load_explicit(&q->fifo.tail, memory_order_relaxed) !=
                                atomic_load_explicit(&q->fifo.head, memory_order_relaxed);
}
