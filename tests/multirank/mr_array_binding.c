/* Reproducer of a runtime issue found by the array benchmarks (2 ranks x 1
 * thread): when the launcher does not bind the ranks (dagger-run passes
 * --bind-to none), every rank's binding is the whole machine and each rank
 * pins its worker 0 to the first core of it, so the single workers of all
 * ranks share one core and a two-rank map is no faster than one rank. Each
 * rank here runs with one worker; a tile task reports the CPUs its worker
 * may run on. With no more ranks than cores, two ranks must not be pinned
 * to the same single core. */
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "array_util.h"

/* Writes the worker's affinity (CPUs 0..63 as bits) into its tile. */
static int affinity_tile(dagger_task_t *t)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    int64_t mask = 0;
    if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0)
        for (int c = 0; c < 64; c++)
            if (CPU_ISSET(c, &set))
                mask |= (int64_t)1 << c;
    ((int64_t *)dagger_task_arg(t, 0).data)[0] = mask;
    return DAGGER_OK;
}

Test(array_binding, single_workers_of_ranks_do_not_share_a_core)
{
    dagger_runtime_t *rt = NULL;
    dagger_params_t prm = {.num_threads = 1};
    mr_tag_test();
    AR_OK(dagger_init(NULL, NULL, &prm, &rt));
    int n = dagger_nranks(rt);
    dagger_codelet_t cl;
    AR_OK(dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "test.affinity",
                                                                .cpu = affinity_tile}, &cl));
    int table[64];
    for (int r = 0; r < n && r < 64; r++)
        table[r] = r;
    dagger_dist_t dist = {.kind = DAGGER_DIST_TABLE, .table = table, .ntable = (size_t)n};
    dagger_array_desc_t d = AR_D1(DAGGER_I64, (size_t)n, 1);
    d.dist = &dist;
    dagger_array_t *a;
    AR_OK(dagger_array_zeros(rt, &d, &a));
    AR_OK(dagger_array_map(NULL, cl, a, 0, NULL, NULL, 0));
    int64_t masks[64];
    AR_OK(dagger_array_collect(a, masks));
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    for (int r = 0; r < n && n <= cores; r++)
        for (int q = 0; q < r; q++)
            cr_assert(!(masks[r] == masks[q] && __builtin_popcountll((unsigned long long)masks[r]) == 1),
                      "ranks %d and %d both pin their only worker to CPU mask 0x%llx (%d ranks, "
                      "%ld cores)", q, r, (unsigned long long)masks[r], n, cores);
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_finalize(rt));
}
