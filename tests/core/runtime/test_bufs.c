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

/* Random churn on both spaces against a plain record of what is live: an
 * insertion takes the first free slot (a tomb, often) and the table
 * rehashes at half full, so every live entry must stay findable through
 * runs of tombs and rehashes, and no removed one may come back. */
Test(bufs, churn_keeps_every_live_entry_findable)
{
    enum { KEYS = 3000 };
    static void *live[KEYS][2];
    dg_bufs_t b;
    cr_assert_eq(dg_bufs_init(&b, 1 << 16), DAGGER_OK);
    uint64_t rng = 12345, next = 1;
    uint64_t ids[KEYS];
    for (int i = 0; i < KEYS; i++)
        ids[i] = 0;
    for (int step = 0; step < 200000; step++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        int k = (int)((rng >> 33) % KEYS);
        if (!ids[k]) {
            /* ids come from a counter, as chunk ids do; space 0 gets a block
             * of the host space, space 1 (none here) an entry only */
            ids[k] = next++;
            cr_assert_eq(dg_bufs_alloc(&b, ids[k], 0, 16, 0, 0, &live[k][0]), DAGGER_OK);
            static char other;
            cr_assert_eq(dg_bufs_insert(&b, ids[k], 1, 0, &other, 16), DAGGER_OK);
            live[k][1] = &other;
        } else {
            size_t bytes;
            void *p = dg_bufs_remove(&b, ids[k], 0, &bytes);
            cr_assert_eq(p, live[k][0], "step %d: key %llu's block", step,
                         (unsigned long long)ids[k]);
            dg_bufs_release(&b, 0, p, bytes);
            cr_assert_eq(dg_bufs_remove(&b, ids[k], 1, &bytes), live[k][1]);
            cr_assert_null(dg_bufs_find(&b, ids[k], 0), "step %d: a removed entry is found", step);
            ids[k] = 0;
        }
        if (step % 997 == 0)
            for (int i = 0; i < KEYS; i++)
                if (ids[i]) {
                    dg_buf_entry_t *e = dg_bufs_find(&b, ids[i], 0), *f = dg_bufs_find(&b, ids[i], 1);
                    cr_assert(e && e->ptr == live[i][0] && f && f->ptr == live[i][1],
                              "step %d: live key %llu not found", step, (unsigned long long)ids[i]);
                }
    }
    cr_assert_leq((b.used + b.tombs) * 2, b.cap, "at most half the slots in use or tombs");
    for (int i = 0; i < KEYS; i++)
        if (ids[i]) {
            size_t bytes;
            dg_bufs_remove(&b, ids[i], 1, &bytes);
        }
    dg_bufs_cleanup(&b);
}
