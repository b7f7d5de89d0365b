/* The executor's buffer table and its reuse pool. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/exec/bufs.h"

Test(bufs, find_alloc_remove)
{
    dg_bufs_t b;
    cr_assert_eq(dg_bufs_init(&b, 1 << 20), DAGGER_OK);
    void *p;
    cr_assert_eq(dg_bufs_alloc(&b, 7, 0, 100, 1, 1, &p), DAGGER_OK);
    cr_assert_eq(((unsigned char *)p)[99], 0, "home buffers are zeroed");
    dg_buf_entry_t *e = dg_bufs_find(&b, 7, 0);
    cr_assert(e && e->ptr == p && e->home);
    cr_assert_null(dg_bufs_find(&b, 7, 1));
    cr_assert_null(dg_bufs_find(&b, 8, 0));
    size_t bytes;
    cr_assert_eq(dg_bufs_remove(&b, 7, 0, &bytes), p);
    cr_assert_null(dg_bufs_find(&b, 7, 0));
    dg_bufs_release(&b, 0, p, bytes);
    cr_assert_eq(dg_bufs_alloc(&b, 9, 1, 10, 0, 0, &p), DAGGER_ERR_UNSUPPORTED,
                 "a memory space the rank does not have");
    dg_bufs_cleanup(&b);
}

Test(bufs, released_blocks_are_reused_by_size)
{
    dg_bufs_t b;
    cr_assert_eq(dg_bufs_init(&b, 1 << 20), DAGGER_OK);
    void *small[50], *big;
    size_t bytes;
    for (uint64_t c = 1; c <= 50; c++)
        cr_assert_eq(dg_bufs_alloc(&b, c, 0, 64, 0, 0, &small[c - 1]), DAGGER_OK);
    for (uint64_t c = 1; c <= 50; c++)
        dg_bufs_release(&b, 0, dg_bufs_remove(&b, c, 0, &bytes), bytes);
    /* Another size does not take a 64-byte block, whatever the pool holds. */
    cr_assert_eq(dg_bufs_alloc(&b, 100, 0, 4096, 0, 0, &big), DAGGER_OK);
    for (int i = 0; i < 50; i++)
        cr_assert_neq(big, small[i]);
    void *again;
    cr_assert_eq(dg_bufs_alloc(&b, 101, 0, 64, 0, 0, &again), DAGGER_OK);
    int reused = 0;
    for (int i = 0; i < 50; i++)
        reused |= again == small[i];
    cr_assert(reused, "a released block of the same size is reused");
    dg_bufs_cleanup(&b);
}

Test(bufs, pool_limit_and_table_size_stay_bounded)
{
    dg_bufs_t b;
    cr_assert_eq(dg_bufs_init(&b, 1000), DAGGER_OK);
    for (uint64_t c = 1; c <= 100000; c++) {
        void *p;
        size_t bytes;
        cr_assert_eq(dg_bufs_alloc(&b, c, 0, 64 + (c % 7) * 8, 0, 0, &p), DAGGER_OK);
        if (c > 10)
            dg_bufs_release(&b, 0, dg_bufs_remove(&b, c - 10, 0, &bytes), bytes);
    }
    cr_assert_leq(b.pool_bytes, 1000u);
    cr_assert_leq(b.cap, 1024u, "a churn of created and freed chunks keeps the table small (%zu)",
                  b.cap);
    dg_bufs_cleanup(&b);
}
