/* Regression test of a runtime issue the array benchmarks found (fixed in
 * 04e9d10): the tiles of an array operation ran on one worker thread of a
 * rank although it had several, from the second region on, so a map of a
 * compute-bound codelet was no faster with two threads than with one. Each
 * region here maps a codelet that computes for a few milliseconds over 16
 * tiles per rank; with two or more workers the tasks of every region must
 * not all land on one thread. */
#include <math.h>
#include <pthread.h>

#include "array_util.h"

#define MAX_SEEN 64

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t seen[MAX_SEEN];
static int nseen;

static int busy_tile(dagger_task_t *t)
{
    volatile double s = 0;
    for (int i = 0; i < 300000; i++)
        s += sin(i * 1e-6);
    dagger_slot_t o = dagger_task_arg(t, 0);
    ((double *)o.data)[0] = s;
    pthread_mutex_lock(&seen_lock);
    int k = 0;
    while (k < nseen && !pthread_equal(seen[k], pthread_self()))
        k++;
    if (k == nseen && nseen < MAX_SEEN)
        seen[nseen++] = pthread_self();
    pthread_mutex_unlock(&seen_lock);
    return DAGGER_OK;
}

Test(array_workers, every_region_uses_several_workers)
{
    dagger_runtime_t *rt = ar_init();
    int n = dagger_nranks(rt), threads = dagger_num_threads(rt);
    dagger_codelet_t cl;
    AR_OK(dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "test.busy", .cpu = busy_tile},
                                  &cl));
    /* 16 blocks per rank, each on its owner. */
    dagger_array_desc_t d = AR_D1(DAGGER_F64, (size_t)(16 * n), 1);
    int table[16 * 64];
    for (int b = 0; b < 16 * n && b < 16 * 64; b++)
        table[b] = b % n;
    dagger_dist_t dist = {.kind = DAGGER_DIST_TABLE, .table = table, .ntable = (size_t)(16 * n)};
    d.dist = &dist;
    dagger_array_t *a;
    AR_OK(dagger_array_zeros(rt, &d, &a));
    for (int region = 0; region < 3; region++) {
        pthread_mutex_lock(&seen_lock);
        nseen = 0;
        pthread_mutex_unlock(&seen_lock);
        AR_OK(dagger_array_map(NULL, cl, a, 0, NULL, NULL, 0));
        if (threads >= 2)
            cr_assert_geq(nseen, 2, "region %d: the 16 tasks of rank %d ran on %d of its %d worker "
                          "threads", region, dagger_rank(rt), nseen, threads);
    }
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_finalize(rt));
}
