/* Ready work of this rank's CPU workers: tasks and local copies whose
 * dependencies are done. Higher priority first, then the order in which the
 * work became ready (FIFO: Kahn's algorithm with a FIFO frontier).
 * Priority-0 work, the common case, goes through a lock-free FIFO ring;
 * prioritised work (and overflow of the ring) through a heap under a lock. */
#ifndef DG_EXEC_READYQ_H
#define DG_EXEC_READYQ_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "core/exec/mpmc.h"
#include "core/exec/xop.h"

typedef struct dg_readyq {
    dg_mpmc_t fifo;           /* priority 0 */
    pthread_mutex_t lock;     /* guards the heap */
    dg_xop_t **heap;
    size_t n, cap;
    _Atomic size_t approx; /* size without the lock, to skip empty queues */
} dg_readyq_t;

/* fifo_cap: slots of the lock-free ring (0: heap only). */
int dg_readyq_init(dg_readyq_t *q, size_t fifo_cap);
void dg_readyq_cleanup(dg_readyq_t *q);
/* Returns -1 when out of memory. */
int dg_readyq_push(dg_readyq_t *q, dg_xop_t *op);
/* The next op, or NULL. */
dg_xop_t *dg_readyq_pop(dg_readyq_t *q);
/* 1 when the queue seems to hold work (a hint: no lock taken). */
int dg_readyq_busy(dg_readyq_t *q);
/* How many ops the queue seems to hold (a hint, like dg_readyq_busy). */
size_t dg_readyq_depth(dg_readyq_t *q);

#endif
