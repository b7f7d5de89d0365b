/* Task results as data (issue 15) and fetch after a failure (issue 11), run
 * with 1..4 ranks: every rank must see the same bytes or the same error. */
#include <stdio.h>

#include "mr_codelets.h"
#include "mr_util.h"

/* Sets a value, then fails: the value must never be fetched. */
static int failval(dagger_task_t *t)
{
    double v = 42.0;
    dagger_task_return(t, &v, sizeof(v));
    return dagger_task_fail(t, "no value today");
}

static void expect_failed_fetch(dagger_runtime_t *rt, dagger_future_t f, const char *expect)
{
    double v = -1;
    size_t len = 0;
    dagger_status_t st = dagger_fetch(rt, f, &v, sizeof(v), &len);
    cr_assert_eq(st, DAGGER_ERR_TASK_FAILED, "rank %d: fetch gave %s (value %g)", dagger_rank(rt),
                 dagger_strerror(st), v);
    cr_assert(strstr(dagger_error_detail(), expect), "detail: %s", dagger_error_detail());
}

/* A future whose task failed: fetch returns that task's error on every rank,
 * inside the region and after it; values of tasks before it still fetch. */
Test(results, fetch_after_failure)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), bad = (n - 1) % n;
    dagger_codelet_t ok = mr_reg(rt, "rankval", mr_rankval, sizeof(double));
    dagger_codelet_t fail = mr_reg(rt, "failval", failval, sizeof(double));
    dagger_future_t good, f;
    char expect[96];
    snprintf(expect, sizeof(expect), "task 2 (failval) failed on rank %d: no value today", bad);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, ok, 0, 0, NULL, &good));
    MR_OK(mr_spawn_on(r, fail, bad, 0, NULL, &f));
    expect_failed_fetch(rt, f, expect); /* inside the region */
    double v = 0;
    MR_OK(dagger_fetch(rt, good, &v, sizeof(v), NULL));
    cr_assert_eq(v, 10.0);
    cr_assert_eq(dagger_region_end(r), DAGGER_ERR_TASK_FAILED);
    expect_failed_fetch(rt, f, expect); /* after it */
    MR_OK(dagger_fetch(rt, good, &v, sizeof(v), NULL));
    cr_assert_eq(v, 10.0);
    /* A task of a later region produces a good value again. */
    dagger_future_t g;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, ok, bad, 0, NULL, &g));
    MR_OK(dagger_region_end(r));
    MR_OK(dagger_fetch(rt, g, &v, sizeof(v), NULL));
    cr_assert_eq(v, (bad + 1) * 10.0);
    expect_failed_fetch(rt, f, expect);
    MR_OK(dagger_finalize(rt));
}

/* ---- results as data ---- */

/* rand(4, 4) as a result: 16 doubles from a seed (argument 0). */
static int rand44(dagger_task_t *t)
{
    uint64_t x = *(const uint64_t *)dagger_task_arg(t, 0).data;
    size_t size;
    double *m = dagger_task_result(t, &size);
    for (size_t i = 0; i < size / sizeof(double); i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        m[i] = (double)(x >> 11) / 9007199254740992.0;
    }
    return DAGGER_OK;
}

/* add1!(InOut(future)): every double of the value + 1. */
static int add1_value(dagger_task_t *t)
{
    dagger_slot_t v = dagger_task_arg(t, 0);
    for (size_t i = 0; i < v.bytes / sizeof(double); i++)
        ((double *)v.data)[i] += 1.0;
    return DAGGER_OK;
}

static void fetch44(dagger_runtime_t *rt, dagger_future_t f, double out[16])
{
    size_t len = 0;
    MR_OK(dagger_fetch(rt, f, out, 16 * sizeof(double), &len));
    cr_assert_eq(len, 16 * sizeof(double));
}

/* The seeds: t = spawn rand(4,4); B = fetch(t); add1!(InOut(t)) on another
 * rank; fetch(t) == B .+ 1, inside the region and after it. */
Test(results, future_updated_in_place_on_another_rank)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), other = n - 1;
    dagger_codelet_t rnd = mr_reg(rt, "rand44", rand44, 16 * sizeof(double));
    dagger_codelet_t add1 = mr_reg(rt, "add1_value", add1_value, 0);
    uint64_t seed = 42;
    dagger_future_t t;
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, rnd, 0, 1, &DAGGER_VALUE(&seed, sizeof(seed)), &t));
    MR_OK(dagger_region_end(r));
    double b[16], got[16];
    fetch44(rt, t, b);
    cr_assert(b[0] > 0 && b[0] < 1 && b[0] != b[1]);
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, add1, other, 1, &DAGGER_FUTURE_INOUT(t), NULL));
    fetch44(rt, t, got); /* inside the region: the update is brought home */
    for (int i = 0; i < 16; i++)
        cr_assert_eq(got[i], b[i] + 1.0, "inside: [%d] %g, not %g", i, got[i], b[i] + 1.0);
    MR_OK(mr_spawn_on(r, add1, 0, 1, &DAGGER_FUTURE_INOUT(t), NULL));
    MR_OK(mr_spawn_on(r, add1, other, 1, &DAGGER_FUTURE_INOUT(t), NULL));
    MR_OK(dagger_region_end(r));
    fetch44(rt, t, got);
    for (int i = 0; i < 16; i++)
        cr_assert_eq(got[i], b[i] + 3.0, "after: [%d] %g, not %g", i, got[i], b[i] + 3.0);
    MR_OK(dagger_future_free(rt, t));
    MR_OK(dagger_finalize(rt));
}

/* Writes the sum of the doubles of its future (argument 1) into argument 0. */
static int sum_value(dagger_task_t *t)
{
    dagger_slot_t v = dagger_task_arg(t, 1);
    double s = 0;
    for (size_t i = 0; i < v.bytes / sizeof(double); i++)
        s += ((const double *)v.data)[i];
    mr_fill(dagger_task_arg(t, 0), s);
    return DAGGER_OK;
}

/* Fills its whole result with 1, 2, 3, ... (size from the declaration). */
static int ramp_value(dagger_task_t *t)
{
    size_t size;
    double *m = dagger_task_result(t, &size);
    for (size_t i = 0; i < size / sizeof(double); i++)
        m[i] = (double)(i + 1);
    return DAGGER_OK;
}

/* Overwrites its future argument with 2, 4, 6, ... (an Out future). */
static int ramp2_arg(dagger_task_t *t)
{
    dagger_slot_t v = dagger_task_arg(t, 0);
    for (size_t i = 0; i < v.bytes / sizeof(double); i++)
        ((double *)v.data)[i] = 2.0 * (double)(i + 1);
    return DAGGER_OK;
}

/* Results larger than 256 bytes, declared at registration or per submission,
 * read on another rank, overwritten there (Out), fetched everywhere. */
Test(results, large_results_and_out_futures)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), other = n - 1;
    dagger_codelet_t big = mr_reg(rt, "ramp2k", ramp_value, 2048); /* 256 doubles */
    dagger_codelet_t any = mr_reg(rt, "ramp_any", ramp_value, 0);
    dagger_codelet_t sum = mr_reg(rt, "sum_value", sum_value, 0);
    dagger_codelet_t ramp2 = mr_reg(rt, "ramp2_arg", ramp2_arg, 0);
    dagger_chunk_t c = mr_chunk2(rt, 2, 2, 0, NULL);
    dagger_future_t f1, f2;
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, big, other, 0, NULL, &f1));
    dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(0), .return_size = 8000}; /* 1000 */
    MR_OK(dagger_submit(r, any, 0, NULL, &o, NULL, &f2));
    dagger_arg_t args[2] = {DAGGER_OUT(dagger_view(rt, c)), DAGGER_FUTURE(f2)};
    MR_OK(mr_spawn_on(r, sum, other, 2, args, NULL));
    MR_OK(mr_spawn_on(r, ramp2, 0, 1, &DAGGER_FUTURE_OUT(f1), NULL)); /* a non-owner overwrites */
    MR_OK(dagger_region_end(r));
    static double v[1000];
    size_t len = 0;
    MR_OK(dagger_fetch(rt, f1, v, sizeof(v), &len));
    cr_assert_eq(len, 2048);
    for (int i = 0; i < 256; i++)
        cr_assert_eq(v[i], 2.0 * (i + 1), "[%d] is %g", i, v[i]);
    MR_OK(dagger_fetch(rt, f2, v, sizeof(v), &len));
    cr_assert_eq(len, 8000);
    cr_assert_eq(v[999], 1000.0);
    double got[4];
    mr_gather(rt, c, got, sizeof(got));
    cr_assert_eq(got[3], 1000.0 * 1001.0 / 2, "the sum of 1..1000, computed on rank %d", other);
    cr_assert_eq(dagger_fetch(rt, f2, v, 100, &len), DAGGER_ERR_OVERFLOW);
    MR_OK(dagger_finalize(rt));
}

static int too_long(dagger_task_t *t)
{
    static const unsigned char bytes[300];
    dagger_task_return(t, bytes, sizeof(bytes));
    return DAGGER_OK; /* ignoring the error does not hide it */
}

/* A result larger than its declared size: an error naming the task, on every
 * rank, at region end and at fetch. */
Test(results, result_larger_than_declared)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), other = n - 1;
    dagger_codelet_t tl = mr_reg(rt, "too_long", too_long, 256);
    dagger_future_t f;
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, tl, other, 0, NULL, &f));
    dagger_status_t st = dagger_region_end(r);
    char expect[96];
    snprintf(expect, sizeof(expect), "task 1 (too_long) on rank %d returned 300 bytes, but its "
             "result holds 256", other);
    cr_assert_eq(st, DAGGER_ERR_OVERFLOW, "got %s", dagger_strerror(st));
    cr_assert(strstr(dagger_error_detail(), expect), "detail: %s", dagger_error_detail());
    unsigned char buf[256];
    cr_assert_eq(dagger_fetch(rt, f, buf, sizeof(buf), NULL), DAGGER_ERR_OVERFLOW);
    cr_assert(strstr(dagger_error_detail(), expect), "detail: %s", dagger_error_detail());
    MR_OK(dagger_finalize(rt));
}

/* ---- fetch of chunks and views ---- */

static double ramp(size_t i, size_t j)
{
    return (double)(i + 100 * j);
}

/* The box (r0..r0+m, c0..c0+k) of the 6x5 ramp, plus `add` where (i, j) is in
 * the second box (a0.., b0.., 2x2). */
static void expect_box(const double *got, size_t r0, size_t c0, size_t m, size_t k, double add,
                       size_t a0, size_t b0)
{
    for (size_t j = 0; j < k; j++)
        for (size_t i = 0; i < m; i++) {
            size_t gi = r0 + i, gj = c0 + j;
            int in = gi >= a0 && gi < a0 + 2 && gj >= b0 && gj < b0 + 2;
            double want = ramp(gi, gj) + (in ? add : 0.0);
            cr_assert_eq(got[i + j * m], want, "(%zu, %zu): %g, not %g", gi, gj, got[i + j * m],
                         want);
        }
}

/* A chunk's and a view's current bytes on every rank: after a region, inside
 * one (updated on another rank), and the failure of its writer. */
Test(results, fetch_chunks_and_views)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), owner = 1 % n, other = n - 1;
    dagger_codelet_t add1 = mr_reg(rt, "add1", mr_add1, 0);
    dagger_codelet_t fail = mr_reg(rt, "fail", mr_fail, 0);
    dagger_chunk_t c = mr_chunk2(rt, 6, 5, owner, ramp);
    double all[30], box[12];
    size_t len = 0;
    MR_OK(dagger_fetch_chunk(rt, c, all, sizeof(all), &len));
    cr_assert_eq(len, sizeof(all));
    expect_box(all, 0, 0, 6, 5, 0, 0, 0);
    dagger_view_t sub = dagger_view_sub(dagger_view(rt, c), (size_t[]){1, 2}, (size_t[]){4, 3});
    MR_OK(dagger_fetch_view(rt, sub, box, sizeof(box), &len));
    cr_assert_eq(len, sizeof(box));
    expect_box(box, 1, 2, 4, 3, 0, 0, 0);
    /* Inside a region: a 2x2 block updated on another rank shows at once. */
    dagger_view_t blk = dagger_view_sub(dagger_view(rt, c), (size_t[]){2, 3}, (size_t[]){2, 2});
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, add1, other, 1, &DAGGER_INOUT(blk), NULL));
    MR_OK(dagger_fetch_view(rt, sub, box, sizeof(box), NULL));
    expect_box(box, 1, 2, 4, 3, 1.0, 2, 3);
    MR_OK(mr_spawn_on(r, add1, other, 1, &DAGGER_INOUT(blk), NULL));
    MR_OK(dagger_region_end(r));
    MR_OK(dagger_fetch_chunk(rt, c, all, sizeof(all), NULL));
    expect_box(all, 0, 0, 6, 5, 2.0, 2, 3);
    /* Bad input: the same error everywhere. */
    cr_assert_eq(dagger_fetch_view(rt, sub, box, 8, NULL), DAGGER_ERR_OVERFLOW);
    dagger_view_t out = sub;
    out.ext[0] = 9;
    cr_assert_eq(dagger_fetch_view(rt, out, box, sizeof(box), NULL), DAGGER_ERR_BAD_VIEW);
    cr_assert_eq(dagger_fetch_chunk(rt, (dagger_chunk_t){999}, all, sizeof(all), NULL),
                 DAGGER_ERR_BAD_HANDLE);
    /* A chunk whose writer failed: its error, not stale bytes. */
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, fail, other, 1, &DAGGER_INOUT(blk), NULL));
    char expect[64];
    snprintf(expect, sizeof(expect), "(fail) failed on rank %d", other);
    cr_assert_eq(dagger_fetch_chunk(rt, c, all, sizeof(all), NULL), DAGGER_ERR_TASK_FAILED);
    cr_assert(strstr(dagger_error_detail(), expect), "%s", dagger_error_detail());
    cr_assert_eq(dagger_region_end(r), DAGGER_ERR_TASK_FAILED);
    cr_assert_eq(dagger_fetch_view(rt, sub, box, sizeof(box), NULL), DAGGER_ERR_TASK_FAILED);
    cr_assert(strstr(dagger_error_detail(), expect), "%s", dagger_error_detail());
    MR_OK(dagger_finalize(rt));
}

static int sevens(dagger_task_t *t) /* Out: every element 7 */
{
    mr_fill(dagger_task_arg(t, 0), 7.0);
    return DAGGER_OK;
}

/* A chunk a failed task wrote stays an error through later regions until it
 * is overwritten whole; data computed from it is an error too. */
Test(results, failure_spoils_until_overwritten)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), other = n - 1;
    dagger_codelet_t add1 = mr_reg(rt, "add1", mr_add1, 0), fail = mr_reg(rt, "fail", mr_fail, 0);
    dagger_codelet_t seven = mr_reg(rt, "sevens", sevens, 0), copy = mr_reg(rt, "copy_sum",
                                                                           sum_value, 0);
    dagger_codelet_t rnd = mr_reg(rt, "rand44", rand44, 16 * sizeof(double));
    dagger_chunk_t c = mr_chunk2(rt, 6, 5, 0, ramp), d = mr_chunk2(rt, 2, 2, 0, NULL);
    dagger_view_t top = dagger_view_sub(dagger_view(rt, c), (size_t[]){0, 0}, (size_t[]){3, 5});
    dagger_view_t bottom = dagger_view_sub(dagger_view(rt, c), (size_t[]){3, 0}, (size_t[]){3, 5});
    double all[30];
    char expect[64];
    snprintf(expect, sizeof(expect), "task 1 (fail) failed on rank %d", other);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, fail, other, 1, &DAGGER_INOUT(top), NULL));
    cr_assert_eq(dagger_region_end(r), DAGGER_ERR_TASK_FAILED);
    /* The other half updated in a later region: the top half is still garbage. */
    uint64_t seed = 1;
    dagger_future_t f;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, add1, 0, 1, &DAGGER_INOUT(bottom), NULL));
    MR_OK(mr_spawn_on(r, rnd, other, 1, &DAGGER_VALUE(&seed, sizeof(seed)), &f));
    dagger_arg_t from_f[2] = {DAGGER_OUT(dagger_view(rt, d)), DAGGER_FUTURE(f)};
    MR_OK(mr_spawn_on(r, copy, 0, 2, from_f, NULL));
    MR_OK(dagger_region_end(r));
    cr_assert_eq(dagger_fetch_chunk(rt, c, all, sizeof(all), NULL), DAGGER_ERR_TASK_FAILED);
    cr_assert(strstr(dagger_error_detail(), expect), "%s", dagger_error_detail());
    MR_OK(dagger_fetch_chunk(rt, d, all, 4 * sizeof(double), NULL)); /* clean data stays clean */
    /* Computed from it: spoiled too. */
    MR_OK(dagger_region_begin(rt, NULL, &r));
    dagger_arg_t from_c[2] = {DAGGER_IN(top), DAGGER_OUT(dagger_view(rt, d))};
    MR_OK(mr_spawn_on(r, add1, 0, 1, &DAGGER_INOUT(dagger_view(rt, d)), NULL));
    MR_OK(dagger_submit(r, mr_reg(rt, "touch2", mr_touch, 0), 2, from_c, NULL, NULL, NULL));
    MR_OK(dagger_region_end(r));
    cr_assert_eq(dagger_fetch_chunk(rt, d, all, 4 * sizeof(double), NULL), DAGGER_ERR_TASK_FAILED);
    /* Overwritten whole: good again. */
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, seven, other, 1, &DAGGER_OUT(dagger_view(rt, c)), NULL));
    MR_OK(dagger_region_end(r));
    MR_OK(dagger_fetch_chunk(rt, c, all, sizeof(all), NULL));
    for (int i = 0; i < 30; i++)
        cr_assert_eq(all[i], 7.0);
    MR_OK(dagger_finalize(rt));
}
