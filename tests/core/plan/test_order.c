/* Launch order: FIFO Kahn seeded in submission order. */
#include <criterion/criterion.h>

#include "tests/core/plan/plan_fixture.h"

Test(order, independent_producers_come_before_the_consumers_they_unlock)
{
    /* A reduction tree submitted depth-first: leaf, leaf, sum, leaf, leaf,
     * sum, sum. Every leaf must be exposed before any sum. */
    uint32_t dep_off[8] = {0, 0, 0, 2, 2, 2, 4, 6};
    uint32_t deps[6] = {0, 1, 3, 4, 2, 5};
    uint32_t order[7];
    cr_assert_eq(dg_plan_launch_order(7, dep_off, deps, order), DAGGER_OK);
    uint32_t want[7] = {0, 1, 3, 4, 2, 5, 6};
    for (int i = 0; i < 7; i++)
        cr_assert_eq(order[i], want[i], "position %d", i);
}

Test(order, ties_follow_submission_order_and_cycles_fail)
{
    uint32_t dep_off[4] = {0, 0, 1, 1};
    uint32_t deps[1] = {0};
    uint32_t order[3];
    cr_assert_eq(dg_plan_launch_order(3, dep_off, deps, order), DAGGER_OK);
    cr_assert(order[0] == 0 && order[1] == 2 && order[2] == 1);
    /* a back edge (node 0 depends on node 1, node 1 on node 0) */
    uint32_t off2[3] = {0, 1, 2}, d2[2] = {1, 0};
    cr_assert_eq(dg_plan_launch_order(2, off2, d2, order), DAGGER_ERR_CYCLE);
    uint32_t off3[2] = {0, 1}, d3[1] = {5};
    cr_assert_eq(dg_plan_launch_order(1, off3, d3, order), DAGGER_ERR_INVALID_ARG);
}

Test(order, planned_tasks_of_a_tree_expose_all_leaves_first)
{
    /* Plan a reduction over futures; the FIFO order of the logical DAG runs
     * all 8 leaves before the first combine. */
    world_t *w = w_create(2);
    uint32_t leaf = w_codelet(w, "leaf", DG_PLAN_KIND_BIT(DG_PLAN_CPU), 8);
    uint32_t sum = w_codelet(w, "sum", DG_PLAN_KIND_BIT(DG_PLAN_CPU), 8);
    w_region_begin(w, NULL);
    uint32_t nf = 0;
    /* depth-first submission: combine as soon as two values exist */
    uint64_t stack[16];
    uint32_t levels[16], sp = 0;
    for (int i = 0; i < 8; i++) {
        stack[sp] = w_task(w, leaf, NULL, 0, NULL).future;
        levels[sp++] = 0;
        while (sp >= 2 && levels[sp - 1] == levels[sp - 2]) {
            dg_plan_arg_t a[2] = {{.kind = DG_PLAN_ARG_FUTURE, .future = stack[sp - 2]},
                                  {.kind = DG_PLAN_ARG_FUTURE, .future = stack[sp - 1]}};
            uint32_t lv = levels[sp - 1] + 1;
            sp -= 2;
            stack[sp] = w_task(w, sum, a, 2, NULL).future;
            levels[sp++] = lv;
            nf++;
        }
    }
    w_region_end(w);
    uint32_t n = 15, off[16], deps[64], m = 0;
    for (uint32_t t = 1; t <= n; t++) {
        off[t - 1] = m;
        for (uint32_t d = 0; d < w->tasks[t].ndeps; d++)
            deps[m++] = (uint32_t)w->tasks[t].deps[d] - 1;
    }
    off[n] = m;
    uint32_t order[15];
    cr_assert_eq(dg_plan_launch_order(n, off, deps, order), DAGGER_OK);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(w->tasks[order[i] + 1].ndeps, 0, "position %d is a combine", i);
    cr_assert_eq(nf, 7);
    w_destroy(w);
}
