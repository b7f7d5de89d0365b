/* Memory for messages. A message is allocated by its sender's thread and
 * freed by the worker that handled it, so a general-purpose allocator pays
 * for a cross-thread free on every message. Here each thread keeps free
 * blocks per size class and trades them with a global pool in batches of
 * DG_MSGPOOL_BATCH (one lock per batch): a steady stream from one thread to
 * another costs two list operations per message. Blocks above the largest
 * class come from malloc. A thread's blocks go back to the pool when it
 * exits; the pool keeps at most DG_MSGPOOL_MAX_BYTES of blocks per class and
 * frees the rest. */
#ifndef DG_ACT_MSGPOOL_H
#define DG_ACT_MSGPOOL_H

#include <stddef.h>

#define DG_MSGPOOL_BATCH 128
#define DG_MSGPOOL_MAX_BYTES (2u << 20)

/* At least bytes of memory, 16-byte aligned; NULL when out of memory. */
void *dg_msgpool_get(size_t bytes);
/* Returns memory from dg_msgpool_get (NULL is ignored). */
void dg_msgpool_put(void *p);

#endif
