/* The executor's block pools (core/exec/blobpool.h): blocks come back to
 * the taker in LIFO order and are handed out again instead of new memory; a
 * capped pool keeps at most its cap of spare blocks and frees the rest; many
 * threads giving blocks back at once lose none and keep the cap. Runs under
 * tools/tsan-tests too. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "core/exec/blobpool.h"

/* The spare blocks of a pool: its own list and the returned stack. */
static long spares(dg_blobpool_t *bp)
{
    long n = 0;
    for (dg_blob_t *b = bp->own; b; b = b->next)
        n++;
    for (dg_blob_t *b = atomic_load(&bp->returned); b; b = b->next)
        n++;
    return n;
}

Test(blobpool, reuses_blocks_of_its_size)
{
    dg_blobpool_t bp;
    memset(&bp, 0, sizeof(bp));
    cr_assert_eq(dg_blob_bytes(&bp), DG_BLOB_BYTES, "bytes 0 means the small size");
    void *a = dg_blob_get(&bp), *b = dg_blob_get(&bp);
    cr_assert(a && b && a != b);
    memset(a, 0xab, DG_BLOB_BYTES); /* the whole block is usable (ASan checks) */
    dg_blob_put(&bp, a);
    dg_blob_put(&bp, b);
    cr_assert_eq(spares(&bp), 2);
    cr_assert_eq(dg_blob_get(&bp), b, "the last block given back comes out first");
    cr_assert_eq(dg_blob_get(&bp), a);
    cr_assert_eq(spares(&bp), 0);
    dg_blob_put(&bp, a);
    dg_blob_put(&bp, b);
    dg_blobpool_cleanup(&bp);
    cr_assert_eq(spares(&bp), 0);
}

Test(blobpool, capped_pool_frees_past_its_cap)
{
    dg_blobpool_t bp;
    memset(&bp, 0, sizeof(bp));
    bp.bytes = DG_BLOB_BIG_BYTES;
    bp.cap = 3;
    void *blk[8];
    for (int i = 0; i < 8; i++) {
        blk[i] = dg_blob_get(&bp);
        cr_assert(blk[i]);
        memset(blk[i], i, DG_BLOB_BIG_BYTES);
    }
    for (int i = 0; i < 8; i++)
        dg_blob_put(&bp, blk[i]); /* five of them are freed (ASan: no leak) */
    cr_assert_eq(spares(&bp), 3);
    cr_assert_eq(atomic_load(&bp.kept), 3);
    void *x = dg_blob_get(&bp);
    cr_assert_eq(x, blk[2], "the kept ones are the first three given back, last first");
    cr_assert_eq(atomic_load(&bp.kept), 2);
    dg_blob_put(&bp, x);
    cr_assert_eq(atomic_load(&bp.kept), 3);
    dg_blobpool_cleanup(&bp);
    cr_assert_eq(atomic_load(&bp.kept), 0);
}

enum { THREADS = 4, PER_THREAD = 2000 };

typedef struct giver {
    dg_blobpool_t *bp;
    void **blocks;
} giver_t;

static void *give_back(void *arg)
{
    giver_t *g = arg;
    for (int i = 0; i < PER_THREAD; i++)
        dg_blob_put(g->bp, g->blocks[i]);
    return NULL;
}

/* Blocks handed out by the taker, given back by several threads at once
 * while the taker keeps taking: with a cap, none is lost and no more than
 * the cap stay spare. */
static void concurrent_returns(long cap)
{
    dg_blobpool_t bp;
    memset(&bp, 0, sizeof(bp));
    bp.bytes = cap ? DG_BLOB_BIG_BYTES : 0;
    bp.cap = cap;
    static void *blocks[THREADS][PER_THREAD];
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < PER_THREAD; i++)
            cr_assert((blocks[t][i] = dg_blob_get(&bp)));
    pthread_t th[THREADS];
    giver_t g[THREADS];
    for (int t = 0; t < THREADS; t++) {
        g[t] = (giver_t){&bp, blocks[t]};
        cr_assert_eq(pthread_create(&th[t], NULL, give_back, &g[t]), 0);
    }
    void *taken[256];
    int ntaken = 0;
    for (int i = 0; i < 256; i++) /* the taker meanwhile: reused or new blocks */
        cr_assert((taken[ntaken++] = dg_blob_get(&bp)));
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int i = 0; i < ntaken; i++)
        dg_blob_put(&bp, taken[i]);
    long n = spares(&bp);
    if (cap) {
        cr_assert_leq(n, cap, "%ld spare blocks, cap %ld", n, cap);
        cr_assert_eq(atomic_load(&bp.kept), n);
    } else {
        /* Every block is spare again: the givers' and those the taker had
         * to allocate anew (0 to ntaken; the rest it reused). */
        cr_assert(n >= THREADS * PER_THREAD && n <= THREADS * PER_THREAD + ntaken,
                  "uncapped: %ld spare blocks", n);
    }
    dg_blobpool_cleanup(&bp);
}

Test(blobpool, concurrent_returns_capped)
{
    concurrent_returns(100);
}

Test(blobpool, concurrent_returns_uncapped)
{
    concurrent_returns(0);
}
