/* Where a rank's threads run when the launcher does not bind the ranks
 * (dagger-run passes --bind-to none, so every rank's binding is the whole
 * machine). First a reproducer of a runtime issue found by the array
 * benchmarks (2 ranks x 1 thread): each rank pinned its worker 0 to the
 * first core, so the single workers of all ranks shared one core and a
 * two-rank map was no faster than one rank. Each rank here runs with one
 * worker; a tile task reports the CPUs its worker may run on. With no more
 * ranks than cores, two ranks must not be pinned to the same single core.
 * Then the thread that calls dagger_init (the submitting thread): on such a
 * node it runs on its rank's cores until dagger_finalize, unless
 * DAGGER_BIND_SUBMITTER=0; under a launcher's binding it keeps that. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "actors/topology.h"
#include "array_util.h"

static int64_t mask_of(const cpu_set_t *set)
{
    int64_t mask = 0;
    for (int c = 0; c < 64; c++)
        if (CPU_ISSET(c, set))
            mask |= (int64_t)1 << c;
    return mask;
}

/* The CPUs (0..63 as bits) the calling thread may run on; 0 when unknown
 * (no assertion here: workers call it too). */
static int64_t my_mask(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    return pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0 ? mask_of(&set) : 0;
}

/* Whether a rank of a node with others takes its share of the cores: its
 * binding is every CPU it is allowed (the launcher bound nothing), as the
 * runtime reads it (actors/topology.c). */
static int would_share(void)
{
    dg_topo_t t;
    cr_assert_eq(dg_topo_init(&t, 0, 2), DAGGER_OK);
    int shared = t.shared;
    dg_topo_cleanup(&t);
    return shared;
}

/* Writes the worker's affinity into its tile. */
static int affinity_tile(dagger_task_t *t)
{
    ((int64_t *)dagger_task_arg(t, 0).data)[0] = my_mask();
    return DAGGER_OK;
}

/* Every rank's single worker's CPU mask, in rank order (masks: 64 entries). */
static void worker_masks(dagger_runtime_t *rt, int64_t *masks)
{
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
    AR_OK(dagger_array_collect(a, masks));
    AR_OK(dagger_array_destroy(a));
}

Test(array_binding, single_workers_of_ranks_do_not_share_a_core)
{
    dagger_runtime_t *rt = NULL;
    dagger_params_t prm = {.num_threads = 1};
    mr_tag_test();
    AR_OK(dagger_init(NULL, NULL, &prm, &rt));
    int n = dagger_nranks(rt);
    int64_t masks[64];
    worker_masks(rt, masks);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    for (int r = 0; r < n && n <= cores; r++)
        for (int q = 0; q < r; q++)
            cr_assert(!(masks[r] == masks[q] && __builtin_popcountll((unsigned long long)masks[r]) == 1),
                      "ranks %d and %d both pin their only worker to CPU mask 0x%llx (%d ranks, "
                      "%ld cores)", q, r, (unsigned long long)masks[r], n, cores);
    AR_OK(dagger_finalize(rt));
}

/* Runs a job with the setting as given and checks where its submitting
 * thread ran: pinned (bind: the rank's share) or as before. */
static void check_submitter(int bind)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores > 64) /* the same on every rank of the node */
        cr_skip_test("%ld CPUs: this test's masks hold 64", cores);
    int64_t before = my_mask();
    int unbound = would_share();
    dagger_runtime_t *rt = NULL;
    dagger_params_t prm = {.num_threads = 1};
    mr_tag_test();
    AR_OK(dagger_init(NULL, NULL, &prm, &rt));
    int n = dagger_nranks(rt), me = dagger_rank(rt);
    int64_t during = my_mask(), masks[64];
    worker_masks(rt, masks);
    int64_t *subs = NULL;
    size_t lens[64];
    AR_OK(dagger_allgather(rt, &during, sizeof(during), (void **)&subs, lens));
    if (bind && unbound && n > 1) {
        cr_assert_eq(during & masks[me], masks[me], "rank %d: its worker runs on 0x%llx, outside "
                     "its submitting thread's 0x%llx", me, (unsigned long long)masks[me],
                     (unsigned long long)during);
        cr_assert_neq(during, before, "rank %d: the submitting thread may still run anywhere", me);
        for (int q = 0; q < n && n <= cores; q++)
            cr_assert(q == me || !(subs[q] & during), "ranks %d and %d submit from the same CPUs "
                      "(0x%llx, 0x%llx)", q, me, (unsigned long long)subs[q],
                      (unsigned long long)during);
    } else {
        cr_assert_eq(during, before, "rank %d: the submitting thread moved from 0x%llx to 0x%llx "
                     "(pinning it: %d, launcher-bound: %d, ranks: %d)", me,
                     (unsigned long long)before, (unsigned long long)during, bind, !unbound, n);
    }
    free(subs);
    AR_OK(dagger_finalize(rt));
    cr_assert_eq(my_mask(), before, "dagger_finalize left the submitting thread on 0x%llx",
                 (unsigned long long)my_mask());
}

Test(array_binding, the_submitting_thread_runs_on_its_ranks_cores_until_finalize)
{
    check_submitter(1);
}

Test(array_binding, bind_submitter_off_leaves_the_submitting_thread_alone)
{
    setenv("DAGGER_BIND_SUBMITTER", "0", 1);
    check_submitter(0);
}
