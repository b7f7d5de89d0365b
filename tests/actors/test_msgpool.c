/* Message memory: blocks of every size class and beyond, reused across
 * threads (allocated by one, freed by another, as messages are). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "actors/msgpool.h"

Test(msgpool, blocks_are_aligned_writable_and_reused)
{
    size_t sizes[] = {0, 1, 63, 112, 113, 240, 500, 1000, 2000, 2033, 5000, 1 << 20};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        unsigned char *p = dg_msgpool_get(sizes[i]);
        cr_assert_not_null(p);
        cr_assert_eq((uintptr_t)p % 16, 0, "size %zu not 16-byte aligned", sizes[i]);
        memset(p, 0xab, sizes[i]); /* ASan checks the block is that large */
        dg_msgpool_put(p);
    }
    void *a = dg_msgpool_get(40);
    dg_msgpool_put(a);
    void *b = dg_msgpool_get(40);
    cr_assert_eq(a, b, "a freed block of the class is reused first");
    dg_msgpool_put(b);
    dg_msgpool_put(NULL);
}

#define N 100000
static void *blocks[N];

static void *free_all(void *arg)
{
    (void)arg;
    for (int i = 0; i < N; i++) {
        cr_assert_eq(*(int *)blocks[i], i, "block %d was handed out twice", i);
        dg_msgpool_put(blocks[i]);
    }
    return NULL;
}

/* One thread allocates, another frees: blocks travel back through the
 * global pool in batches and no block is handed out twice. */
Test(msgpool, cross_thread_streams_recycle_through_the_pool)
{
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            blocks[i] = dg_msgpool_get(64);
            cr_assert_not_null(blocks[i]);
            *(int *)blocks[i] = i;
        }
        pthread_t t;
        pthread_create(&t, NULL, free_all, NULL);
        pthread_join(t, NULL); /* its cache is flushed to the pool at exit */
    }
}
