/* Failure marks (dg_plan_taint): what tasks from the failed one on wrote is
 * marked; reading marked data marks what is written; a whole overwrite from
 * clean data clears the mark; a partial or in-place write keeps it. */
#include <criterion/criterion.h>

#include "tests/core/plan/plan_fixture.h"

static uint32_t taint_of(world_t *w, uint64_t c)
{
    uint32_t tag = 99;
    cr_assert_eq(dg_plan_chunk_taint(w->pl[0], c, &tag), DAGGER_OK);
    for (int r = 1; r < w->P; r++) {
        uint32_t other;
        dg_plan_chunk_taint(w->pl[r], c, &other);
        cr_assert_eq(other, tag, "every planner marks alike");
    }
    return tag;
}

static void taint_all(world_t *w, uint64_t first, uint32_t tag)
{
    for (int r = 0; r < w->P; r++)
        dg_plan_taint(w->pl[r], first, tag);
}

Test(taint, follows_writes_reads_and_overwrites)
{
    world_t *w = w_create(2);
    uint32_t cl = w_codelet(w, "k", DG_PLAN_KIND_BIT(DG_PLAN_CPU), 8);
    uint64_t a = w_chunk1(w, 0, 8), b = w_chunk1(w, 1, 8), c = w_chunk1(w, 0, 8);
    w_region_begin(w, NULL);
    dg_plan_arg_t wa = w_view(w, a, DAGGER_MODE_INOUT);
    w_task(w, cl, &wa, 1, NULL);                       /* task 1: before the failure */
    dg_plan_arg_t wb = w_view(w, b, DAGGER_MODE_OUT);
    dg_plan_submitted_t t2 = w_task(w, cl, &wb, 1, NULL); /* task 2 fails */
    w_region_end(w);
    taint_all(w, 2, 5);
    cr_assert_eq(taint_of(w, a), 0, "written before the failure");
    cr_assert_eq(taint_of(w, b), 5);
    cr_assert_eq(taint_of(w, t2.future), 5, "its value too");
    cr_assert_eq(taint_of(w, c), 0, "never written");
    w_region_begin(w, NULL);
    dg_plan_arg_t rb_wc[2] = {w_view(w, b, DAGGER_MODE_IN), w_view(w, c, DAGGER_MODE_OUT)};
    dg_plan_submitted_t t3 = w_task(w, cl, rb_wc, 2, NULL);
    cr_assert_eq(taint_of(w, c), 5, "computed from marked data");
    cr_assert_eq(taint_of(w, t3.future), 5);
    dg_plan_arg_t part = w_view(w, b, DAGGER_MODE_OUT);
    part.view.ext[0] = 4;
    w_task(w, cl, &part, 1, NULL);
    cr_assert_eq(taint_of(w, b), 5, "half overwritten: the rest is still garbage");
    dg_plan_arg_t inout = w_view(w, b, DAGGER_MODE_INOUT);
    w_task(w, cl, &inout, 1, NULL);
    cr_assert_eq(taint_of(w, b), 5, "updated in place from itself");
    dg_plan_arg_t whole = w_view(w, b, DAGGER_MODE_OUT);
    dg_plan_submitted_t t6 = w_task(w, cl, &whole, 1, NULL);
    cr_assert_eq(taint_of(w, b), 0, "overwritten whole from clean data");
    cr_assert_eq(taint_of(w, t6.future), 0);
    w_region_end(w);
    w_destroy(w);
}
