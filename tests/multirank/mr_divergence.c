/* Ranks whose programs diverge, with uniformity checking off: the runtime
 * says so with DAGGER_ERR_DIVERGENCE, naming what each rank did, instead of
 * a hang or wrong results (transport/coll_foresee.c). A rank that calls
 * dagger_finalize where the others go on (an early return on one rank), a
 * rank that skips a region, ranks that submit different work. Run with
 * 1..4 ranks; alone there is nobody to diverge from. */
#include <stdio.h>
#include <unistd.h>

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

static int read_only(dagger_task_t *t)
{
    (void)t;
    return DAGGER_OK;
}

/* A region of 200 tasks on rank `on`, each reading chunk c. */
static dagger_status_t reads_on(dagger_runtime_t *rt, dagger_codelet_t cl, int on, dagger_chunk_t c)
{
    dagger_region_t *r;
    dagger_status_t st = dagger_region_begin(rt, NULL, &r);
    if (st != DAGGER_OK)
        return st;
    for (int i = 0; i < 200 && st == DAGGER_OK; i++)
        st = mr_spawn_on(r, cl, on, 1, (dagger_arg_t[]){DAGGER_IN_CHUNK(c)}, NULL);
    dagger_status_t end = dagger_region_end(r);
    return st != DAGGER_OK ? st : end;
}

/* Two ranks that both block on back-pressure, each behind a receive from
 * the other that the other never planned: rank EARLY skips a region whose
 * tasks on rank 0 read its chunk, and in its next region its own tasks read
 * rank 0's. Neither reaches a region end, so neither can answer as above;
 * each asks the other after a second, with the last task it planned and
 * its plan's hash there, and the one that planned that task too finds its
 * own hash differs (transport/coll_probe.c). Before, this hung. */
Test(divergence, two_ranks_blocked_on_each_other_end_the_wait, .timeout = 120)
{
    setenv("DAGGER_TASK_WINDOW", "64", 1);
    dagger_runtime_t *rt = mr_init();
    unsetenv("DAGGER_TASK_WINDOW");
    int n = dagger_nranks(rt), me = dagger_rank(rt);
    if (n == 1) {
        MR_OK(dagger_finalize(rt));
        return;
    }
    dagger_codelet_t cl = mr_reg(rt, "read_only", read_only, 0);
    dagger_chunk_t c0 = mr_chunk2(rt, 4, 4, 0, NULL), c1 = mr_chunk2(rt, 4, 4, EARLY, NULL);
    dagger_status_t st = DAGGER_OK;
    if (me != EARLY)
        st = reads_on(rt, cl, 0, c1);
    if (st == DAGGER_OK)
        st = reads_on(rt, cl, EARLY, c0);
    MR_DIVERGED(st, me, "the ranks submitted different work");
    MR_OK(dagger_finalize(rt));
}

/* Sleeps the milliseconds its value says, then sets its chunk to 5. */
static int fill_after(dagger_task_t *t)
{
    dagger_slot_t c = dagger_task_arg(t, 0), ms = dagger_task_arg(t, 1);
    int wait;
    memcpy(&wait, ms.data, sizeof(wait));
    usleep((useconds_t)wait * 1000);
    for (size_t i = 0; i < c.bytes / sizeof(double); i++)
        ((double *)c.data)[i] = 5.0;
    return DAGGER_OK;
}

static int expect_five(dagger_task_t *t)
{
    dagger_slot_t c = dagger_task_arg(t, 0);
    for (size_t i = 0; i < c.bytes / sizeof(double); i++)
        if (((const double *)c.data)[i] != 5.0)
            return dagger_task_fail(t, "element %zu is %g, not 5", i, ((const double *)c.data)[i]);
    return DAGGER_OK;
}

/* A region where rank `slow` fills its chunk after 2.5 s and rank `fast`
 * at once, then 200 tasks on `fast` read the slow chunk (more than the
 * 64-op window: its submitting thread blocks on back-pressure) and 200 on
 * `slow` read the fast one. */
static void wait_for_slow(dagger_runtime_t *rt, dagger_codelet_t fill, dagger_codelet_t check,
                          int slow, int fast)
{
    dagger_chunk_t cs = mr_chunk2(rt, 4, 4, slow, NULL), cf = mr_chunk2(rt, 4, 4, fast, NULL);
    int long_ms = 2500, no_ms = 0;
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, fill, slow, 2,
                      (dagger_arg_t[]){DAGGER_OUT_CHUNK(cs), DAGGER_VALUE(&long_ms, sizeof(int))},
                      NULL));
    MR_OK(mr_spawn_on(r, fill, fast, 2,
                      (dagger_arg_t[]){DAGGER_OUT_CHUNK(cf), DAGGER_VALUE(&no_ms, sizeof(int))},
                      NULL));
    for (int i = 0; i < 200; i++)
        MR_OK(mr_spawn_on(r, check, fast, 1, (dagger_arg_t[]){DAGGER_IN_CHUNK(cs)}, NULL));
    for (int i = 0; i < 200; i++)
        MR_OK(mr_spawn_on(r, check, slow, 1, (dagger_arg_t[]){DAGGER_IN_CHUNK(cf)}, NULL));
    MR_OK(dagger_region_end(r));
}

/* The same work on every rank, where a rank blocks on back-pressure for
 * seconds behind a receive of what a slow task on another writes, once
 * rank 0 and once EARLY: their probes, carrying the last task each planned,
 * find the same plan there (or a task not planned yet), and the regions
 * end well. */
Test(divergence, slow_senders_are_not_a_divergence, .timeout = 120)
{
    setenv("DAGGER_TASK_WINDOW", "64", 1);
    dagger_runtime_t *rt = mr_init();
    unsetenv("DAGGER_TASK_WINDOW");
    int other = dagger_nranks(rt) > 1 ? EARLY : 0;
    dagger_codelet_t fill = mr_reg(rt, "fill_after", fill_after, 0);
    dagger_codelet_t check = mr_reg(rt, "expect_five", expect_five, 0);
    wait_for_slow(rt, fill, check, other, 0);
    wait_for_slow(rt, fill, check, 0, other);
    MR_OK(dagger_finalize(rt));
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
