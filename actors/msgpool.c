/* Per-thread message block caches over a global pool (see msgpool.h).
 *
 * Free blocks are kept as arrays of pointers, not as lists linked through
 * the blocks: a block freed by the consumer's thread is cold in the
 * producer's cache, and following a link inside it would stall every
 * allocation on a cache miss. Allocation writes the block instead, which the
 * CPU can overlap with other work. */
#include "actors/msgpool.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/common.h"

/* Every block starts with this 16-byte prefix, so the caller's memory stays
 * 16-byte aligned. */
typedef struct dg_block {
    uint32_t cls; /* size class, or DG_CLASS_MALLOC */
    uint32_t pad[3];
} dg_block_t;

#define DG_NCLASSES 5
#define DG_CLASS_MALLOC UINT32_MAX
static const size_t dg_class_size[DG_NCLASSES] = {128, 256, 512, 1024, 2048};

typedef struct dg_batch {
    struct dg_batch *next; /* in the pool's list of full or of empty batches */
    dg_block_t *blk[DG_MSGPOOL_BATCH];
} dg_batch_t;

/* A thread's free blocks of one class: up to two batches' worth. */
typedef struct {
    uint32_t count;
    dg_block_t *blk[2 * DG_MSGPOOL_BATCH];
} dg_freelist_t;

typedef struct {
    dg_freelist_t cls[DG_NCLASSES];
    int registered; /* the thread-exit destructor knows about this thread */
} dg_cache_t;

static struct {
    pthread_mutex_t lock;
    dg_batch_t *full;  /* batches of free blocks */
    dg_batch_t *empty; /* spare batch holders */
    int nfull;
} dg_pool[DG_NCLASSES] = {
#define DG_POOL_INIT {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0}
    DG_POOL_INIT, DG_POOL_INIT, DG_POOL_INIT, DG_POOL_INIT, DG_POOL_INIT};

static _Thread_local dg_cache_t dg_cache;
static pthread_key_t dg_cache_key;
static pthread_once_t dg_cache_once = PTHREAD_ONCE_INIT;

/* Moves the last DG_MSGPOOL_BATCH blocks of fl into the pool (or frees them
 * when the pool is full or no batch holder can be had). */
static void give_batch(uint32_t c, dg_freelist_t *fl)
{
    dg_block_t **src = &fl->blk[fl->count - DG_MSGPOOL_BATCH];
    fl->count -= DG_MSGPOOL_BATCH;
    pthread_mutex_lock(&dg_pool[c].lock);
    dg_batch_t *b = NULL;
    if ((size_t)dg_pool[c].nfull * DG_MSGPOOL_BATCH * dg_class_size[c] < DG_MSGPOOL_MAX_BYTES) {
        b = dg_pool[c].empty;
        if (b)
            dg_pool[c].empty = b->next;
        else
            b = dg_malloc(sizeof(*b));
    }
    if (b) {
        memcpy(b->blk, src, sizeof(b->blk));
        b->next = dg_pool[c].full;
        dg_pool[c].full = b;
        dg_pool[c].nfull++;
    }
    pthread_mutex_unlock(&dg_pool[c].lock);
    if (!b)
        for (int i = 0; i < DG_MSGPOOL_BATCH; i++)
            free(src[i]);
}

/* Fills an empty fl with one batch from the pool; 0 if the pool is empty. */
static int take_batch(uint32_t c, dg_freelist_t *fl)
{
    pthread_mutex_lock(&dg_pool[c].lock);
    dg_batch_t *b = dg_pool[c].full;
    if (b) {
        dg_pool[c].full = b->next;
        dg_pool[c].nfull--;
        memcpy(fl->blk, b->blk, sizeof(b->blk));
        fl->count = DG_MSGPOOL_BATCH;
        b->next = dg_pool[c].empty;
        dg_pool[c].empty = b;
    }
    pthread_mutex_unlock(&dg_pool[c].lock);
    return b != NULL;
}

/* At thread exit: whole batches go back to the pool, the rest is freed. */
static void cache_flush(void *arg)
{
    dg_cache_t *cache = arg;
    for (uint32_t c = 0; c < DG_NCLASSES; c++) {
        dg_freelist_t *fl = &cache->cls[c];
        while (fl->count >= DG_MSGPOOL_BATCH)
            give_batch(c, fl);
        while (fl->count)
            free(fl->blk[--fl->count]);
    }
    cache->registered = 0;
}

static void make_key(void)
{
    pthread_key_create(&dg_cache_key, cache_flush);
}

static void cache_register(void)
{
    pthread_once(&dg_cache_once, make_key);
    pthread_setspecific(dg_cache_key, &dg_cache);
    dg_cache.registered = 1;
}

static uint32_t class_of(size_t bytes)
{
    for (uint32_t c = 0; c < DG_NCLASSES; c++)
        if (bytes <= dg_class_size[c])
            return c;
    return DG_CLASS_MALLOC;
}

void *dg_msgpool_get(size_t bytes)
{
    if (bytes > SIZE_MAX - sizeof(dg_block_t))
        return NULL;
    bytes += sizeof(dg_block_t);
    uint32_t c = class_of(bytes);
    dg_block_t *b;
    if (DG_UNLIKELY(c == DG_CLASS_MALLOC)) {
        b = dg_malloc(bytes);
    } else {
        dg_freelist_t *fl = &dg_cache.cls[c];
        if (DG_UNLIKELY(fl->count == 0)) {
            if (DG_UNLIKELY(!dg_cache.registered))
                cache_register();
            if (!take_batch(c, fl))
                fl->blk[fl->count++] = dg_malloc(dg_class_size[c]);
        }
        b = fl->blk[--fl->count];
    }
    if (!b)
        return NULL;
    b->cls = c;
    return b + 1;
}

void dg_msgpool_put(void *p)
{
    if (!p)
        return;
    dg_block_t *b = (dg_block_t *)p - 1;
    uint32_t c = b->cls;
    if (DG_UNLIKELY(c == DG_CLASS_MALLOC)) {
        free(b);
        return;
    }
    DG_ASSERT(c < DG_NCLASSES);
    if (DG_UNLIKELY(!dg_cache.registered)) /* so the blocks kept here go back at exit */
        cache_register();
    dg_freelist_t *fl = &dg_cache.cls[c];
    if (DG_UNLIKELY(fl->count == 2 * DG_MSGPOOL_BATCH))
        give_batch(c, fl); /* this thread frees what others allocate: they find it in the pool */
    fl->blk[fl->count++] = b;
}
