/* A bounded lock-free multi-producer multi-consumer FIFO of pointers
 * (Vyukov's sequence-numbered ring): one atomic load to find it empty, one
 * compare-and-swap per push or pop, no lock a preempted thread could hold. */
#ifndef DG_EXEC_MPMC_H
#define DG_EXEC_MPMC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dg_mpmc_cell {
    _Atomic size_t seq;
    void *item;
} dg_mpmc_cell_t;

typedef struct dg_mpmc {
    dg_mpmc_cell_t *cells;
    size_t mask;
    _Alignas(64) _Atomic size_t head; /* next pop */
    _Alignas(64) _Atomic size_t tail; /* next push */
} dg_mpmc_t;

/* cap is rounded up to a power of two. Returns -1 when out of memory. */
int dg_mpmc_init(dg_mpmc_t *q, size_t cap);
void dg_mpmc_cleanup(dg_mpmc_t *q);
/* 0, or -1 when full. */
int dg_mpmc_push(dg_mpmc_t *q, void *item);
/* The oldest item, or NULL when empty. */
void *dg_mpmc_pop(dg_mpmc_t *q);

#endif
