/* Spare blocks for what does not fit in an op slot (a launch's argument
 * block, a transfer's span list, a long dependency list), passed from the
 * threads that finish ops back to the submitting thread that fills them.
 *
 * With plain malloc and free, the submitting thread allocated every such
 * block and a worker on another core freed it: glibc then takes the arena's
 * lock, and under Task Bench's small tasks the two threads met on it in
 * futex calls (perf: a fifth of the samples in the lock and malloc's paths;
 * stencil_1d, 1 rank x 2 threads, iter 16). Here finishing threads push
 * blocks on a lock-free stack; the submitting thread takes the whole stack
 * when its own list is empty. One consumer only, so the stack has no ABA
 * problem. A pool hands out blocks of one size (the executor keeps one of
 * DG_BLOB_BYTES and one of DG_BLOB_BIG_BYTES, for a stencil sweep's 2-3 KiB
 * argument blocks; larger requests use malloc). A pool with a cap keeps at
 * most that many spare blocks and frees the rest as they come back.
 *
 * A pool allocates only when it has no spare block, so it never holds more
 * blocks than were in use at once; the cap only bounds what it keeps after
 * such a peak. It must not be below what a repeated region has in flight:
 * with 512, a stencil sweep of 1024 blocks (each task's arguments 2-3 KiB)
 * freed half its blocks at the end of every region and allocated them again
 * in the next, and glibc gave the pages back in between, so the submitting
 * thread took ~170 page faults a sweep and twice the time to submit it
 * (docs/benchmarks.md, "The argument blocks of a 1024-task sweep"). */
#ifndef DG_EXEC_BLOBPOOL_H
#define DG_EXEC_BLOBPOOL_H

#include <stdatomic.h>
#include <stdlib.h>

#include "core/base/alloc.h"

#define DG_BLOB_BYTES 1024
#define DG_BLOB_BIG_BYTES 8192
#define DG_BLOB_BIG_KEEP 8192     /* spare big blocks kept at most (64 MiB) */
#define DG_BLOB_PREFETCH 640 /* bytes of the next block fetched ahead (five arguments) */

typedef struct dg_blob {
    struct dg_blob *next;
} dg_blob_t;

typedef struct dg_blobpool {
    _Atomic(dg_blob_t *) returned;    /* pushed by finishing threads */
    dg_blob_t *own;                   /* the submitting thread's */
    size_t bytes;                     /* of every block (0: DG_BLOB_BYTES) */
    long cap;                         /* spare blocks kept at most (0: no cap) */
    _Atomic(long) kept;               /* spare blocks in own and returned (with a cap) */
} dg_blobpool_t;

static inline size_t dg_blob_bytes(const dg_blobpool_t *bp)
{
    return bp->bytes ? bp->bytes : DG_BLOB_BYTES;
}

/* A block of the pool's size (16-byte aligned), or NULL. Submitting thread only. */
static inline void *dg_blob_get(dg_blobpool_t *bp)
{
    dg_blob_t *b = bp->own;
    if (!b)
        b = atomic_exchange_explicit(&bp->returned, NULL, memory_order_acquire);
    if (b) {
        bp->own = b->next;
        if (bp->cap)
            atomic_fetch_sub_explicit(&bp->kept, 1, memory_order_relaxed);
        /* The next block was written last on another core (its next field):
         * ask for its lines now, so the next launch's stores do not wait. */
        if (bp->own)
            for (int i = 0; i < DG_BLOB_PREFETCH; i += 64)
                __builtin_prefetch((char *)bp->own + i, 1);
        return b;
    }
    return dg_malloc(dg_blob_bytes(bp));
}

/* Gives a block back; any thread. */
static inline void dg_blob_put(dg_blobpool_t *bp, void *p)
{
    if (bp->cap && atomic_fetch_add_explicit(&bp->kept, 1, memory_order_relaxed) >= bp->cap) {
        atomic_fetch_sub_explicit(&bp->kept, 1, memory_order_relaxed);
        free(p);
        return;
    }
    dg_blob_t *b = p;
    dg_blob_t *head = atomic_load_explicit(&bp->returned, memory_order_relaxed);
    do
        b->next = head;
    while (!atomic_compare_exchange_weak_explicit(&bp->returned, &head, b, memory_order_release,
                                                  memory_order_relaxed));
}

/* Frees every block; no other thread may use the pool. */
static inline void dg_blobpool_cleanup(dg_blobpool_t *bp)
{
    dg_blob_t *lists[2] = {bp->own, atomic_load_explicit(&bp->returned, memory_order_acquire)};
    for (int i = 0; i < 2; i++)
        while (lists[i]) {
            dg_blob_t *n = lists[i]->next;
            free(lists[i]);
            lists[i] = n;
        }
    bp->own = NULL;
    atomic_store_explicit(&bp->returned, NULL, memory_order_relaxed);
    atomic_store_explicit(&bp->kept, 0, memory_order_relaxed);
}

#endif
