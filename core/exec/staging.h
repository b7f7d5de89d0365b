/* Host blocks that transfers with several spans pack into (xfer.c): the
 * sender's packed copy and the receiver's landing block, kept for reuse.
 *
 * A fresh block from malloc at these sizes is mapped lazily (glibc maps
 * blocks of 128 KiB and more on their own, and unmaps them at free), so
 * the first write of each 4 KiB page faults: writing a fresh 2 MiB block
 * took 4.6 ms on the development VM (9 us a page), writing it again 0.03 ms.
 * A 2 x 1 LU moves each factored panel to the other rank as row blocks of
 * 2 MiB, packed on the sender and unpacked on the receiver, so every such
 * transfer paid about 9 ms of faults on the critical path
 * (docs/linalg.md). Blocks go back here instead, by exact size, up to
 * DG_STAGING_KEEP bytes; any thread. New blocks of 2 MiB or more come in
 * transparent huge pages where the host space's do (dg_alloc_block). */
#ifndef DG_EXEC_STAGING_H
#define DG_EXEC_STAGING_H

#include <pthread.h>
#include <stddef.h>

#define DG_STAGING_SIZES 16
#define DG_STAGING_KEEP ((size_t)64 << 20)

typedef struct dg_staging_block {
    struct dg_staging_block *next;
} dg_staging_block_t;

typedef struct dg_staging {
    pthread_mutex_t lock;
    struct {
        size_t bytes;            /* 0: unused list */
        dg_staging_block_t *head;
    } list[DG_STAGING_SIZES];
    size_t kept;                 /* bytes in the lists */
    int huge;                    /* new blocks from dg_alloc_block with huge pages */
} dg_staging_t;

void dg_staging_init(dg_staging_t *s, int huge);
/* A block of bytes (kept, or new), or NULL when out of memory. */
void *dg_staging_get(dg_staging_t *s, size_t bytes);
/* Gives a block of dg_staging_get back (NULL: nothing): kept while the
 * lists have room for its size, freed otherwise. */
void dg_staging_put(dg_staging_t *s, void *p, size_t bytes);
void dg_staging_cleanup(dg_staging_t *s);

#endif
