/* Ready queue: a binary heap under a mutex. */
#include "core/exec/readyq.h"

#include <stdlib.h>

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

int dg_readyq_init(dg_readyq_t *q)
{
    q->n = 0;
    q->cap = 256;
    q->heap = malloc(q->cap * sizeof(*q->heap));
    atomic_store(&q->approx, 0);
    pthread_mutex_init(&q->lock, NULL);
    return q->heap ? 0 : -1;
}

void dg_readyq_cleanup(dg_readyq_t *q)
{
    free(q->heap);
    pthread_mutex_destroy(&q->lock);
}

int dg_readyq_push(dg_readyq_t *q, dg_xop_t *op)
{
    pthread_mutex_lock(&q->lock);
    if (q->n == q->cap) {
        dg_xop_t **h = realloc(q->heap, q->cap * 2 * sizeof(*h));
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

dg_xop_t *dg_readyq_pop(dg_readyq_t *q)
{
    if (atomic_load_explicit(&q->approx, memory_order_relaxed) == 0)
        return NULL;
    pthread_mutex_lock(&q->lock);
    if (q->n == 0) {
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
