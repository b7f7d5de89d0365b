/* Ranks whose programs diverge, with uniformity checking off: the runtime
 * says so with DAGGER_ERR_DIVERGENCE, naming what each rank did, instead of
 * a hang or wrong results (transport/coll_foresee.c). A rank that calls
 * dagger_finalize where the others go on (an early return on one rank), a
 * rank that skips a region, ranks that submit different work. Run with
 * 1..4 ranks; alone there is nobody to diverge from. */
#include <stdio.h>

#include "mr_util.h"

#define EARLY 1 /* the rank that leaves */

/* 16 blocks dealt over the ranks: a dot product of it needs every rank. */
static dagger_array_t *spread_array(dagger_runtime_t *rt)
{
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 1, .dims = {4000}, .block = {250}};
    dagger_array_t *x;
    MR_OK(dagger_array_rand(rt, &d, 1, &x));
    return x;
}

/* The others' dot products need blocks of EARLY's: they wait for its
 * transfers, which never come, until its finalize barrier's message says
 * why. Every call returns; the first error is DAGGER_ERR_DIVERGENCE. */
Test(divergence, finalize_early_ends_the_others_regions, .timeout = 120)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), me = dagger_rank(rt);
    dagger_array_t *x = spread_array(rt);
    if (n == 1) {
        MR_OK(dagger_array_destroy(x));
        MR_OK(dagger_finalize(rt));
        return;
    }
    if (me == EARLY) {
        dagger_status_t st = dagger_finalize(rt);
        cr_assert_neq(st, DAGGER_OK, "rank %d left alone, yet its dagger_finalize succeeded", me);
        return;
    }
    dagger_status_t st = DAGGER_OK;
    double dot;
    for (int i = 0; i < 3 && st == DAGGER_OK; i++) {
        dagger_region_t *r;
        dagger_future_t f;
        st = dagger_region_begin(rt, NULL, &r);
        if (st != DAGGER_OK)
            break;
        st = dagger_array_dot(r, x, x, &f);
        dagger_status_t end = dagger_region_end(r);
        st = st != DAGGER_OK ? st : end;
        if (st == DAGGER_OK)
            st = dagger_fetch(rt, f, &dot, sizeof(dot), NULL);
    }
    char want[64];
    snprintf(want, sizeof(want), "rank %d called dagger_finalize() after 1 region", EARLY);
    MR_DIVERGED(st, me, want);
    cr_assert_neq(dagger_finalize(rt), DAGGER_OK);
}

/* Where the others call a collective instead, its signature check says it
 * on every rank, the leaving one included. */
Test(divergence, a_collective_against_finalize_names_it, .timeout = 120)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), me = dagger_rank(rt);
    if (n == 1) {
        MR_OK(dagger_finalize(rt));
        return;
    }
    dagger_status_t st;
    if (me == EARLY) {
        st = dagger_finalize(rt);
    } else {
        int64_t v = 1;
        st = dagger_allreduce(rt, &v, 1, DAGGER_I64, DAGGER_OP_ADD);
    }
    char want[64];
    snprintf(want, sizeof(want), "rank %d called dagger_finalize() after 0 regions", EARLY);
    MR_DIVERGED(st, me, want);
    if (me != EARLY)
        cr_assert_neq(dagger_finalize(rt), DAGGER_OK);
}

/* Rank EARLY submits other work than the others (the same shape: no
 * transfer waits on it): every rank's region end says the ranks submitted
 * different work, and the runtime stays usable. */
Test(divergence, different_work_fails_the_region_end_everywhere, .timeout = 120)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), me = dagger_rank(rt);
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 1, .dims = {1000}, .block = {100}};
    dagger_array_t *x, *y;
    MR_OK(dagger_array_rand(rt, &d, 1, &x));
    MR_OK(dagger_array_rand(rt, &d, 2, &y));
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    if (me == EARLY)
        MR_OK(dagger_array_copy(r, y, x));
    else
        MR_OK(dagger_array_copy(r, x, y));
    dagger_status_t st = dagger_region_end(r);
    if (n == 1)
        MR_OK(st);
    else
        MR_DIVERGED(st, me, "the ranks submitted different work");
    MR_OK(dagger_array_destroy(x));
    MR_OK(dagger_array_destroy(y));
    MR_OK(dagger_finalize(rt));
}

/* Rank EARLY skips a region whose dot product needs its blocks and goes on
 * to the next one: the others, waiting for its transfers, learn from its
 * next region's end that it planned something else, and both regions end
 * with DAGGER_ERR_DIVERGENCE rather than a hang. The others then skip the
 * second region, so every rank has begun as many regions again and
 * dagger_finalize succeeds. */
static void skip_a_region(void)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), me = dagger_rank(rt);
    dagger_array_t *x = spread_array(rt);
    dagger_status_t st = DAGGER_OK;
    dagger_region_t *r;
    if (me != EARLY || n == 1) {
        dagger_future_t f;
        MR_OK(dagger_region_begin(rt, NULL, &r));
        MR_OK(dagger_array_dot(r, x, x, &f));
        st = dagger_region_end(r);
    }
    if (st == DAGGER_OK) {
        MR_OK(dagger_region_begin(rt, NULL, &r));
        MR_OK(dagger_array_fill(r, x, 2.0));
        st = dagger_region_end(r);
    }
    if (n == 1) {
        MR_OK(st);
        MR_OK(dagger_array_destroy(x));
        MR_OK(dagger_finalize(rt));
        return;
    }
    MR_DIVERGED(st, me, "the ranks submitted different work");
    MR_OK(dagger_array_destroy(x));
    MR_OK(dagger_finalize(rt));
}

Test(divergence, a_skipped_region_ends_the_wait_for_its_data, .timeout = 120)
{
    skip_a_region();
}

/* The same with the smallest op window (64): the waiting ranks' submitting
 * threads block on back-pressure inside the dot product, behind receives
 * that never come, and never reach the region end whose message would
 * show the divergence. After a second they ask the rank they wait for;
 * it waits at its own region end having sent them everything, so they
 * mark the divergence (transport/coll_probe.c). Before, this hung. */
Test(divergence, a_skipped_region_ends_a_wait_on_back_pressure, .timeout = 120)
{
    setenv("DAGGER_TASK_WINDOW", "64", 1);
    skip_a_region();
    unsetenv("DAGGER_TASK_WINDOW");
}

/* Every rank submits the same tasks, but their by-value bytes differ
 * between the ranks (as the padding of a program's own struct may): the
 * plans' shapes match, so the region ends well with checking off. */
static int value_on_rank(dagger_task_t *t)
{
    dagger_slot_t v = dagger_task_arg(t, 0);
    int64_t got;
    memcpy(&got, v.data, sizeof(got));
    if (v.bytes != 16 || got != 7)
        return dagger_task_fail(t, "value %lld of %zu bytes", (long long)got, v.bytes);
    return DAGGER_OK;
}

Test(divergence, different_value_bytes_are_not_a_divergence, .timeout = 120)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), me = dagger_rank(rt);
    dagger_codelet_t cl = mr_reg(rt, "value_on_rank", value_on_rank, 0);
    /* 8 bytes every rank agrees on, then 8 that differ (like padding). */
    int64_t v[2] = {7, 1000 + me};
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    for (int q = 0; q < n; q++)
        MR_OK(mr_spawn_on(r, cl, q, 1, (dagger_arg_t[]){DAGGER_VALUE(v, sizeof(v))}, NULL));
    MR_OK(dagger_region_end(r));
    MR_OK(dagger_finalize(rt));
}
