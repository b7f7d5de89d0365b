/* Small futures carried by a region's end agreement (core/runtime/carry.c):
 * a fetch after the region serves them without a broadcast. Run with 1..4
 * ranks: every rank must fetch the same bytes, carried or not; the cases
 * around the limits (four futures, 64 bytes), a future written again in a
 * later region, one freed, a region that failed. */
#include <stdio.h>

#include "core/runtime/runtime.h"
#include "core/runtime/tasks.h"
#include "mr_util.h"

/* Its value argument is (seed, n): returns n bytes, byte k being
 * (rank + 1) * 16 + k + seed. */
static int bytes_of(dagger_task_t *t)
{
    unsigned char arg[2], out[96];
    memcpy(arg, dagger_task_data(t, 0), sizeof(arg));
    for (size_t k = 0; k < arg[1] && k < sizeof(out); k++)
        out[k] = (unsigned char)((dagger_task_rank(t) + 1) * 16 + (int)k + arg[0]);
    return dagger_task_return(t, out, arg[1]);
}

/* What bytes_of returns on rank r with seed s. */
static void expected(int r, unsigned char s, size_t n, unsigned char *out)
{
    for (size_t k = 0; k < n; k++)
        out[k] = (unsigned char)((r + 1) * 16 + (int)k + s);
}

static int failing(dagger_task_t *t)
{
    double v = 1;
    dagger_task_return(t, &v, sizeof(v));
    return dagger_task_fail(t, "refused");
}

static dg_tasks_t *tasks_of(dagger_runtime_t *rt)
{
    dg_tasks_t *t = dg_tasks_get(rt, "test");
    cr_assert(t);
    return t;
}

/* One region whose futures (sizes[i] bytes each, on rank i % n, seed s)
 * survive it; fetches them after it and checks every byte. */
static void region_of(dagger_runtime_t *rt, const size_t *sizes, int count, unsigned char s,
                      int want_carried)
{
    int n = dagger_nranks(rt);
    dagger_codelet_t cl[5];
    dagger_future_t f[5];
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    for (int i = 0; i < count; i++) {
        char name[32];
        snprintf(name, sizeof(name), "bytes%zu", sizes[i]);
        cl[i] = mr_reg(rt, name, bytes_of, sizes[i]);
        unsigned char arg[2] = {s, (unsigned char)sizes[i]};
        dagger_arg_t a = DAGGER_VALUE(arg, sizeof(arg));
        MR_OK(mr_spawn_on(r, cl[i], i % n, 1, &a, &f[i]));
    }
    MR_OK(dagger_region_end(r));
    dg_tasks_t *t = tasks_of(rt);
    cr_assert_eq(t->carry.valid, want_carried, "%d futures: carried %d, expected %d", count,
                 t->carry.valid, want_carried);
    for (int i = 0; i < count; i++) {
        unsigned char got[96], want[96];
        size_t len = 0;
        memset(got, 0xee, sizeof(got));
        MR_OK(dagger_fetch(rt, f[i], got, sizeof(got), &len));
        expected(i % n, s, sizes[i], want);
        cr_assert_eq(len, sizes[i]);
        cr_assert(!memcmp(got, want, sizes[i]), "future %d of %zu bytes", i, sizes[i]);
        cr_assert_eq(got[sizes[i]], 0xee, "future %d: written past its %zu bytes", i, sizes[i]);
    }
    for (int i = 0; i < count; i++)
        MR_OK(dagger_future_free(rt, f[i]));
}

Test(fetch_carry, within_and_past_the_limits)
{
    dagger_runtime_t *rt = mr_init();
    static const size_t one[] = {8}, odd[] = {5, 3, 24, 13}, full[] = {16, 16, 16, 16},
                        five[] = {8, 8, 8, 8, 8}, big[] = {72};
    region_of(rt, one, 1, 1, 1);  /* the tiny tree's root */
    region_of(rt, odd, 4, 2, 1);  /* four, sizes that are not whole words: 6 words */
    region_of(rt, full, 4, 3, 1); /* 64 bytes: the limit */
    region_of(rt, five, 5, 4, 0); /* five: past the count, broadcast */
    region_of(rt, big, 1, 5, 0);  /* 72 bytes: past the size, broadcast */
    MR_OK(dagger_finalize(rt));
}

/* A value-returning tree: 64 leaves over the ranks, every inner future freed
 * in the region; the root's value fetches the same everywhere, carried. */
static int leaf(dagger_task_t *t)
{
    double v = (double)dagger_task_rank(t) + 0.5;
    return dagger_task_return(t, &v, sizeof(v));
}

static int add(dagger_task_t *t)
{
    double v = *(const double *)dagger_task_data(t, 0) + *(const double *)dagger_task_data(t, 1);
    return dagger_task_return(t, &v, sizeof(v));
}

static int twice(dagger_task_t *t)
{
    *(double *)dagger_task_data(t, 0) *= 2;
    return DAGGER_OK;
}

Test(fetch_carry, a_tree_root_and_later_regions)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt);
    dagger_codelet_t lf = mr_reg(rt, "leaf", leaf, sizeof(double));
    dagger_codelet_t ad = mr_reg(rt, "add", add, sizeof(double));
    dagger_codelet_t dbl = mr_reg(rt, "twice", twice, 0);
    double want = 0;
    for (int i = 0; i < 64; i++)
        want += (double)(i % n) + 0.5;
    for (int round = 0; round < 3; round++) {
        dagger_region_t *r;
        MR_OK(dagger_region_begin(rt, NULL, &r));
        dagger_future_t level[64];
        for (int i = 0; i < 64; i++)
            MR_OK(mr_spawn_on(r, lf, i % n, 0, NULL, &level[i]));
        for (int w = 64; w > 1; w /= 2)
            for (int i = 0; i < w / 2; i++) {
                dagger_arg_t a[2] = {DAGGER_FUTURE(level[2 * i]), DAGGER_FUTURE(level[2 * i + 1])};
                MR_OK(dagger_submit(r, ad, 2, a, NULL, NULL, &level[i]));
                MR_OK(dagger_future_free(rt, a[0].future));
                MR_OK(dagger_future_free(rt, a[1].future));
            }
        MR_OK(dagger_region_end(r));
        cr_assert(tasks_of(rt)->carry.valid, "round %d: the root was not carried", round);
        double v = 0;
        MR_OK(dagger_fetch(rt, level[0], &v, sizeof(v), NULL));
        cr_assert_eq(v, want, "round %d: %g, want %g", round, v, want);
        /* A later region doubles the root in place: the fetch after it sees
         * the new value (the carried one went when that region began). */
        MR_OK(dagger_region_begin(rt, NULL, &r));
        dagger_arg_t a = DAGGER_FUTURE_INOUT(level[0]);
        MR_OK(dagger_submit(r, dbl, 1, &a, NULL, NULL, NULL));
        MR_OK(dagger_region_end(r));
        MR_OK(dagger_fetch(rt, level[0], &v, sizeof(v), NULL));
        cr_assert_eq(v, 2 * want, "round %d: %g after doubling, want %g", round, v, 2 * want);
        MR_OK(dagger_future_free(rt, level[0]));
        dagger_status_t st = dagger_fetch(rt, level[0], &v, sizeof(v), NULL);
        cr_assert_eq(st, DAGGER_ERR_BAD_HANDLE, "a freed future fetched: %s", dagger_strerror(st));
    }
    MR_OK(dagger_finalize(rt));
}

/* A region with a failed task carries nothing: the fetch of its future
 * reports the failure on every rank, and the good one's value is right. */
Test(fetch_carry, not_after_a_failure)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt);
    dagger_codelet_t bad = mr_reg(rt, "failing", failing, sizeof(double));
    dagger_codelet_t lf = mr_reg(rt, "leaf", leaf, sizeof(double));
    dagger_region_t *r;
    dagger_future_t f, g;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, lf, 0, 0, NULL, &g));
    MR_OK(mr_spawn_on(r, bad, n - 1, 0, NULL, &f));
    dagger_status_t st = dagger_region_end(r);
    cr_assert_eq(st, DAGGER_ERR_TASK_FAILED, "%s", dagger_strerror(st));
    cr_assert(!tasks_of(rt)->carry.valid, "a failed region's values were kept");
    double v = 0;
    st = dagger_fetch(rt, f, &v, sizeof(v), NULL);
    cr_assert_eq(st, DAGGER_ERR_TASK_FAILED, "%s", dagger_strerror(st));
    MR_OK(dagger_fetch(rt, g, &v, sizeof(v), NULL));
    cr_assert_eq(v, 0.5);
    MR_OK(dagger_future_free(rt, f));
    MR_OK(dagger_future_free(rt, g));
    MR_OK(dagger_finalize(rt));
}
