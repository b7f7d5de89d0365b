/* The order in which the runtime starts ready tasks on one worker: a FIFO
 * topological frontier seeded in submission order (docs/design.md, Kahn's
 * algorithm). The executor (core/exec: ready queues) decides it at run time;
 * dg_plan_launch_order, the planner's model of it, is tested in
 * tests/core/plan/test_order.c. */
#include <criterion/criterion.h>
#include <dagger.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

static atomic_int released, started;
static int log_order[16];

/* Records its number (a by-value argument) at its start; task 0 holds the
 * one worker until the test has submitted everything. */
static int record(dagger_task_t *t)
{
    int me = *(const int *)dagger_task_arg(t, 0).data;
    log_order[atomic_fetch_add(&started, 1)] = me;
    while (me == 0 && !atomic_load(&released))
        usleep(1000);
    return DAGGER_OK;
}

static dagger_status_t task(dagger_region_t *r, dagger_codelet_t cl, int me, int nin,
                            const dagger_chunk_t *in, dagger_chunk_t out, dagger_runtime_t *rt)
{
    static int ids[16];
    ids[me] = me;
    dagger_arg_t a[4] = {DAGGER_VALUE(&ids[me], sizeof(int))};
    for (int i = 0; i < nin; i++)
        a[1 + i] = DAGGER_IN(dagger_view(rt, in[i]));
    a[1 + nin] = DAGGER_OUT(dagger_view(rt, out));
    return dagger_submit(r, cl, 2 + nin, a, NULL, NULL, NULL);
}

/* A sum tree of four leaves submitted depth-first (leaf, leaf, sum, leaf,
 * leaf, sum, sum) while the worker is held: every leaf starts before the
 * first sum, each sum in the order it became ready. */
Test(launch_order, independent_tasks_before_the_consumers_they_unlock)
{
    dagger_runtime_t *rt;
    cr_assert_eq(dagger_init(NULL, NULL, &(dagger_params_t){.num_threads = 1}, &rt), DAGGER_OK,
                 "%s", dagger_error_detail());
    cr_assert_eq(dagger_num_threads(rt), 1);
    dagger_codelet_t cl;
    cr_assert_eq(dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "record",
                                                                       .cpu = record}, &cl),
                 DAGGER_OK);
    dagger_chunk_t c[8];
    for (int i = 0; i < 8; i++)
        cr_assert_eq(dagger_chunk_create(rt, &(dagger_chunk_desc_t){.dtype = DAGGER_F64,
                                                 .ndims = 1, .dims = {1}, .owner = 0}, &c[i]),
                     DAGGER_OK);
    dagger_region_t *r;
    cr_assert_eq(dagger_region_begin(rt, NULL, &r), DAGGER_OK);
    cr_assert_eq(task(r, cl, 0, 0, NULL, c[7], rt), DAGGER_OK); /* the gate */
    cr_assert_eq(task(r, cl, 1, 0, NULL, c[0], rt), DAGGER_OK);
    cr_assert_eq(task(r, cl, 2, 0, NULL, c[1], rt), DAGGER_OK);
    cr_assert_eq(task(r, cl, 3, 2, (dagger_chunk_t[]){c[0], c[1]}, c[4], rt), DAGGER_OK);
    cr_assert_eq(task(r, cl, 4, 0, NULL, c[2], rt), DAGGER_OK);
    cr_assert_eq(task(r, cl, 5, 0, NULL, c[3], rt), DAGGER_OK);
    cr_assert_eq(task(r, cl, 6, 2, (dagger_chunk_t[]){c[2], c[3]}, c[5], rt), DAGGER_OK);
    cr_assert_eq(task(r, cl, 7, 2, (dagger_chunk_t[]){c[4], c[5]}, c[6], rt), DAGGER_OK);
    atomic_store(&released, 1);
    /* Not dagger_region_end yet: its waiting thread would take tasks too. */
    while (atomic_load(&started) < 8)
        usleep(1000);
    cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
    static const int want[8] = {0, 1, 2, 4, 5, 3, 6, 7};
    for (int i = 0; i < 8; i++)
        cr_assert_eq(log_order[i], want[i], "start %d was task %d, not %d", i, log_order[i],
                     want[i]);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}
