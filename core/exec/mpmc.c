/* Bounded MPMC ring (see mpmc.h). A cell's sequence number says whose turn
 * it is: seq == pos means free for the push at pos, seq == pos + 1 means
 * full for the pop at pos. Cell i stores seq - i (pos - i is pos & ~mask),
 * so a zeroed array is the initial state: calloc'ed, a cell's page is
 * touched only when the queue first reaches it (the executor's ready queue
 * of 65536 cells was 256 page faults at every start, ~4 ms here). */
#include "core/exec/mpmc.h"

#include <stdlib.h>

#include "core/base/alloc.h"

int dg_mpmc_init(dg_mpmc_t *q, size_t cap)
{
    size_t n = 2;
    while (n < cap)
        n <<= 1;
    q->cells = dg_calloc(n, sizeof(*q->cells));
    if (!q->cells)
        return -1;
    q->mask = n - 1;
    atomic_init(&q->head, 0);
    atomic_init(&q->tail, 0);
    return 0;
}

void dg_mpmc_cleanup(dg_mpmc_t *q)
{
    free(q->cells);
    q->cells = NULL;
}

int dg_mpmc_push(dg_mpmc_t *q, void *item)
{
    size_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
    for (;;) {
        dg_mpmc_cell_t *c = &q->cells[pos & q->mask];
        size_t base = pos & ~q->mask; /* pos - the cell's index */
        size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        intptr_t diff = (intptr_t)seq - (intptr_t)base;
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&q->tail, &pos, pos + 1,
                                                      memory_order_relaxed, memory_order_relaxed)) {
                c->item = item;
                atomic_store_explicit(&c->seq, base + 1, memory_order_release);
                return 0;
            }
        } else if (diff < 0) {
            return -1; /* full */
        } else {
            pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
        }
    }
}

void *dg_mpmc_pop(dg_mpmc_t *q)
{
    size_t pos = atomic_load_explicit(&q->head, memory_order_relaxed);
    for (;;) {
        dg_mpmc_cell_t *c = &q->cells[pos & q->mask];
        size_t base = pos & ~q->mask;
        size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        intptr_t diff = (intptr_t)seq - (intptr_t)(base + 1);
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&q->head, &pos, pos + 1,
                                                      memory_order_relaxed, memory_order_relaxed)) {
                void *item = c->item;
                atomic_store_explicit(&c->seq, base + q->mask + 1, memory_order_release);
                return item;
            }
        } else if (diff < 0) {
            return NULL; /* empty */
        } else {
            pos = atomic_load_explicit(&q->head, memory_order_relaxed);
        }
    }
}
