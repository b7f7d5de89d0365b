/* Acceptance tests of distributed execution (issue 5), run with 1..4 ranks.
 * Each compares what every rank sees with a sequential reference. */
#include <math.h>
#include <stdio.h>

#include "mr_codelets.h"
#include "mr_util.h"

static double ramp(size_t i, size_t j)
{
    return (double)(i + 100 * j);
}

/* 1. A 12x12 array in 4x4 blocks, every block incremented: A+1 everywhere. */
Test(region, increment_every_block)
{
    dagger_runtime_t *rt = mr_init();
    dagger_codelet_t add1 = mr_reg(rt, "add1", mr_add1, 0);
    dagger_chunk_t blk[9];
    for (int b = 0; b < 9; b++)
        blk[b] = mr_chunk2(rt, 4, 4, -1, ramp);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    for (int b = 0; b < 9; b++)
        MR_OK(dagger_spawn(r, add1, DAGGER_INOUT(dagger_view(rt, blk[b])), DAGGER_END));
    MR_OK(dagger_region_end(r));
    for (int b = 0; b < 9; b++) {
        cr_assert_eq(dagger_chunk_owner(rt, blk[b]), b % dagger_nranks(rt));
        double got[16];
        mr_gather(rt, blk[b], got, sizeof(got));
        for (size_t j = 0; j < 4; j++)
            for (size_t i = 0; i < 4; i++)
                cr_assert_eq(got[i + 4 * j], ramp(i, j) + 1, "block %d (%zu,%zu)", b, i, j);
    }
    MR_OK(dagger_finalize(rt));
}

/* 2. +1 on rank r1, x2 on a sub-view on rank r2, x2 of the upper triangle on rank 0. */
Test(region, cross_rank_dataflow)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), r1 = 1 % n, r2 = 2 % n;
    dagger_codelet_t add1 = mr_reg(rt, "add1", mr_add1, 0), mul2 = mr_reg(rt, "mul2", mr_mul2, 0);
    dagger_chunk_t c = mr_chunk2(rt, 8, 8, 0, ramp);
    dagger_view_t all = dagger_view(rt, c);
    dagger_view_t sub = dagger_view_sub(all, (size_t[]){2, 1}, (size_t[]){4, 5});
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, add1, r1, 1, &DAGGER_INOUT(all), NULL));
    MR_OK(mr_spawn_on(r, mul2, r2, 1, &DAGGER_INOUT(sub), NULL));
    MR_OK(mr_spawn_on(r, mul2, 0, 1, &DAGGER_INOUT(dagger_view_mod(all, DAGGER_UPPER)), NULL));
    MR_OK(dagger_region_end(r));
    double got[64];
    mr_gather(rt, c, got, sizeof(got));
    for (size_t j = 0; j < 8; j++)
        for (size_t i = 0; i < 8; i++) {
            double v = ramp(i, j) + 1;
            if (i >= 2 && i < 6 && j >= 1 && j < 6)
                v *= 2;
            if (i <= j)
                v *= 2;
            cr_assert_eq(got[i + 8 * j], v, "(%zu,%zu): %g != %g", i, j, got[i + 8 * j], v);
        }
    MR_OK(dagger_finalize(rt));
}

/* 3. Two disjoint views of one parent used on another rank share one slot. */
Test(region, disjoint_views_share_one_slot)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), other = 1 % n;
    dagger_codelet_t touch = mr_reg(rt, "touch", mr_touch, 0);
    dagger_chunk_t c = mr_chunk2(rt, 8, 8, 0, ramp);
    dagger_view_t all = dagger_view(rt, c);
    dagger_view_t top = dagger_view_sub(all, (size_t[]){0, 0}, (size_t[]){4, 8});
    dagger_view_t bottom = dagger_view_sub(all, (size_t[]){4, 0}, (size_t[]){4, 8});
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, touch, other, 1, &DAGGER_IN(top), NULL));
    MR_OK(mr_spawn_on(r, touch, other, 1, &DAGGER_IN(bottom), NULL));
    MR_OK(dagger_region_end(r));
    dagger_region_stats_t s;
    MR_OK(dagger_region_stats(rt, &s));
    cr_assert_eq(s.transfers, n > 1 ? 2u : 0u);
    if (dagger_rank(rt) == other)
        cr_assert_eq(s.slots, n > 1 ? 1u : 0u, "rank %d allocated %llu slots", other,
                     (unsigned long long)s.slots);
    MR_OK(dagger_finalize(rt));
}

static uint64_t transfers_of(dagger_runtime_t *rt, dagger_codelet_t cl, dagger_chunk_t c,
                             const int *ranks, const dagger_access_t *modes, int ntasks)
{
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    for (int i = 0; i < ntasks; i++) {
        dagger_arg_t a = {.kind = DAGGER_ARG_VIEW, .mode = modes[i], .view = dagger_view(rt, c)};
        MR_OK(mr_spawn_on(r, cl, ranks[i], 1, &a, NULL));
    }
    MR_OK(dagger_region_end(r));
    dagger_region_stats_t s;
    MR_OK(dagger_region_stats(rt, &s));
    return s.transfers;
}

/* 4. Copy planning counts, from the plan. */
Test(region, copy_counts)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), rem = 1 % n;
    uint64_t remote = n > 1;
    dagger_codelet_t touch = mr_reg(rt, "touch", mr_touch, 0);
    dagger_chunk_t c = mr_chunk2(rt, 16, 16, 0, ramp);
    const dagger_access_t in[] = {DAGGER_MODE_IN}, io[] = {DAGGER_MODE_INOUT},
                          io2[] = {DAGGER_MODE_INOUT, DAGGER_MODE_INOUT};
    uint64_t tr = transfers_of(rt, touch, c, (int[]){rem}, in, 1);
    cr_assert_eq(tr, 1 * remote, "In remote: %llu transfers on rank %d", (unsigned long long)tr, dagger_rank(rt));
    cr_assert_eq(transfers_of(rt, touch, c, (int[]){0}, in, 1), 0u, "In local");
    cr_assert_eq(transfers_of(rt, touch, c, (int[]){0}, io, 1), 0u, "InOut on the owner");
    cr_assert_eq(transfers_of(rt, touch, c, (int[]){rem}, io, 1), 2 * remote, "InOut remote");
    cr_assert_eq(transfers_of(rt, touch, c, (int[]){rem, rem}, io2, 2), 2 * remote,
                 "two InOut on one remote rank");
    MR_OK(dagger_finalize(rt));
}

/* 5. Dependency-modifier chains across three ranks. */
Test(region, modifier_chains)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt);
    dagger_codelet_t add1 = mr_reg(rt, "add1", mr_add1, 0), mul2 = mr_reg(rt, "mul2", mr_mul2, 0);
    dagger_chunk_t c = mr_chunk2(rt, 8, 8, n - 1, ramp);
    const dagger_modifier_t mods[] = {DAGGER_DIAGONAL, DAGGER_UPPER, DAGGER_LOWER,
                                      DAGGER_UNIT_UPPER, DAGGER_UNIT_LOWER, DAGGER_DIAGONAL,
                                      DAGGER_FULL};
    const int nm = (int)(sizeof(mods) / sizeof(mods[0]));
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    for (int k = 0; k < nm; k++) {
        dagger_view_t v = dagger_view_mod(dagger_view(rt, c), mods[k]);
        MR_OK(mr_spawn_on(r, k % 2 ? mul2 : add1, k % 3 % n, 1, &DAGGER_INOUT(v), NULL));
    }
    MR_OK(dagger_region_end(r));
    double got[64];
    mr_gather(rt, c, got, sizeof(got));
    for (size_t j = 0; j < 8; j++)
        for (size_t i = 0; i < 8; i++) {
            double v = ramp(i, j);
            for (int k = 0; k < nm; k++)
                if (mr_in_mod(mods[k], i, j))
                    v = k % 2 ? v * 2 : v + 1;
            cr_assert_eq(got[i + 8 * j], v, "(%zu,%zu)", i, j);
        }
    MR_OK(dagger_finalize(rt));
}

/* 6. A value returned on one rank, consumed on another, fetched everywhere. */
Test(region, futures_across_ranks)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), prod = 1 % n, cons = (n - 1 + 2) % n;
    dagger_codelet_t rankval = mr_reg(rt, "rankval", mr_rankval, sizeof(double));
    dagger_codelet_t store = mr_reg(rt, "store", mr_store, 0);
    dagger_chunk_t c = mr_chunk2(rt, 3, 3, 0, NULL);
    dagger_future_t f;
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, rankval, prod, 0, NULL, &f));
    dagger_arg_t args[] = {DAGGER_OUT(dagger_view(rt, c)), DAGGER_FUTURE(f)};
    MR_OK(mr_spawn_on(r, store, cons, 2, args, NULL));
    MR_OK(dagger_region_end(r));
    double v = 0;
    size_t len = 0;
    MR_OK(dagger_fetch(rt, f, &v, sizeof(v), &len));
    cr_assert_eq(len, sizeof(double));
    cr_assert_eq(v, (prod + 1) * 10.0);
    double got[9];
    mr_gather(rt, c, got, sizeof(got));
    for (int i = 0; i < 9; i++)
        cr_assert_eq(got[i], (prod + 1) * 10.0);
    MR_OK(dagger_future_free(rt, f));
    cr_assert_eq(dagger_fetch(rt, f, &v, sizeof(v), &len), DAGGER_ERR_BAD_HANDLE);
    cr_assert_eq(dagger_future_free(rt, f), DAGGER_ERR_BAD_HANDLE);
    MR_OK(dagger_finalize(rt));
}

/* 7. A region scoped to one rank runs everything there; a scope nobody
 * satisfies is an error on every rank; the next region works. */
Test(region, scopes)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), last = n - 1;
    dagger_codelet_t who = mr_reg(rt, "whoami", mr_whoami, 0);
    dagger_chunk_t cs[4];
    for (int i = 0; i < 4; i++) {
        dagger_chunk_desc_t d = {.dtype = DAGGER_I32, .ndims = 1, .dims = {1}, .owner = i % n};
        MR_OK(dagger_chunk_create(rt, &d, &cs[i]));
    }
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, &DAGGER_SCOPE_RANK(last), &r));
    for (int i = 0; i < 4; i++)
        MR_OK(dagger_spawn(r, who, DAGGER_OUT(dagger_view(rt, cs[i])), DAGGER_END));
    MR_OK(dagger_region_end(r));
    for (int i = 0; i < 4; i++) {
        int32_t got = -1;
        mr_gather(rt, cs[i], &got, sizeof(got));
        cr_assert_eq(got, last, "task %d ran on rank %d, not %d", i, got, last);
    }
    cr_assert_eq(dagger_region_begin(rt, &DAGGER_SCOPE_RANK(n), &r), DAGGER_ERR_SCOPE);
    MR_OK(dagger_region_begin(rt, NULL, &r));
    dagger_scope_t gpu = {.kinds = DAGGER_PROC_CUDA};
    dagger_task_opts_t o = {.scope = &gpu};
    dagger_arg_t a = DAGGER_OUT(dagger_view(rt, cs[0]));
    cr_assert_eq(dagger_submit(r, who, 1, &a, &o, NULL, NULL), DAGGER_ERR_SCOPE);
    MR_OK(dagger_spawn(r, who, DAGGER_OUT(dagger_view(rt, cs[0])), DAGGER_END));
    MR_OK(dagger_region_end(r));
    int32_t got = -1;
    mr_gather(rt, cs[0], &got, sizeof(got));
    cr_assert_eq(got, 0, "owner computes: chunk 0 lives on rank 0");
    MR_OK(dagger_finalize(rt));
}

static int ret_timeout(dagger_task_t *t)
{
    (void)t;
    return DAGGER_ERR_TIMEOUT;
}

static int ret_seven(dagger_task_t *t)
{
    (void)t;
    return 7;
}

/* 8. A failing task: the same error on every rank; the next region works. */
Test(region, failing_task)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt);
    dagger_codelet_t fail = mr_reg(rt, "fail", mr_fail, 0), add1 = mr_reg(rt, "add1", mr_add1, 0);
    dagger_chunk_t c = mr_chunk2(rt, 4, 4, 0, ramp);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, add1, 0, 1, &DAGGER_INOUT(dagger_view(rt, c)), NULL));
    MR_OK(mr_spawn_on(r, fail, 1 % n, 1, &DAGGER_INOUT(dagger_view(rt, c)), NULL));
    MR_OK(mr_spawn_on(r, add1, 0, 1, &DAGGER_INOUT(dagger_view(rt, c)), NULL));
    dagger_status_t st = dagger_region_end(r);
    cr_assert_eq(st, DAGGER_ERR_TASK_FAILED, "got %s", dagger_strerror(st));
    char expect[64];
    snprintf(expect, sizeof(expect), "task 2 (fail) failed on rank %d", 1 % n);
    cr_assert(strstr(dagger_error_detail(), expect), "detail: %s", dagger_error_detail());
    /* A codelet that returns a code: a dagger status (passed on from a call
     * it made) is named, any other value is given as it is. */
    dagger_codelet_t cls[2] = {mr_reg(rt, "timeout", ret_timeout, 0),
                               mr_reg(rt, "seven", ret_seven, 0)};
    const char *says[2] = {"returned -6 (DAGGER_ERR_TIMEOUT: the wait reached its deadline)",
                           "returned 7"};
    for (int k = 0; k < 2; k++) {
        MR_OK(dagger_region_begin(rt, NULL, &r));
        MR_OK(mr_spawn_on(r, cls[k], (n - 1) % n, 1, &DAGGER_INOUT(dagger_view(rt, c)), NULL));
        cr_assert_eq(dagger_region_end(r), DAGGER_ERR_TASK_FAILED);
        cr_assert(strstr(dagger_error_detail(), says[k]), "detail: %s", dagger_error_detail());
        cr_assert(k == 0 || !strstr(dagger_error_detail(), "returned 7 ("), "%s",
                  dagger_error_detail());
    }
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(dagger_spawn(r, add1, DAGGER_INOUT(dagger_view(rt, c)), DAGGER_END));
    MR_OK(dagger_region_end(r));
    MR_OK(dagger_finalize(rt));
}

/* 9. A divergent program with uniformity checking on: an error on every rank, no hang. */
Test(region, divergence_is_an_error)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), me = dagger_rank(rt);
    MR_OK(dagger_check_uniformity(rt, 1));
    dagger_codelet_t add1 = mr_reg(rt, "add1", mr_add1, 0);
    dagger_chunk_t c = mr_chunk2(rt, 4, 4, 0, ramp);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(dagger_spawn(r, add1, DAGGER_INOUT(dagger_view(rt, c)), DAGGER_END));
    dagger_status_t extra = DAGGER_OK;
    if (me == n - 1 && n > 1) /* a rank-dependent branch reaching a submission */
        extra = dagger_spawn(r, add1, DAGGER_INOUT(dagger_view(rt, c)), DAGGER_END);
    dagger_status_t st = dagger_region_end(r);
    if (n == 1) {
        cr_assert_eq(st, DAGGER_OK);
    } else {
        cr_assert_eq(st, DAGGER_ERR_DIVERGENCE, "rank %d: %s", me, dagger_strerror(st));
        cr_assert(strstr(dagger_error_detail(), "submit task 2"), "%s", dagger_error_detail());
        if (me == n - 1)
            cr_assert_eq(extra, DAGGER_ERR_DIVERGENCE);
    }
    /* The runtime stays usable. */
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(dagger_spawn(r, add1, DAGGER_INOUT(dagger_view(rt, c)), DAGGER_END));
    MR_OK(dagger_region_end(r));
    MR_OK(dagger_finalize(rt));
}

/* 10. A tiled Cholesky (dagger_linalg_potrf: potrf/trsm/syrk/gemm tasks on
 * 64x64 tiles of a 256x256 block-cyclic array) equals the serial reference. */
#define CH_N 256
#define CH_T 64

static double spd(size_t i, size_t j)
{
    double v = 1.0 / (1.0 + (double)(i > j ? i - j : j - i));
    return i == j ? v + CH_N : v;
}

static double spd_fn(const size_t idx[], int nd, const void *args)
{
    (void)nd, (void)args;
    return spd(idx[0], idx[1]);
}

Test(region, tiled_cholesky)
{
    dagger_runtime_t *rt = mr_init();
    dagger_index_fn_id_t fn;
    MR_OK(dagger_index_fn_register(rt, "mr.spd", spd_fn, &fn));
    dagger_dist_t cyc = {.kind = DAGGER_DIST_CYCLIC_2D};
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {CH_N, CH_N},
                             .block = {CH_T, CH_T}, .dist = &cyc};
    dagger_array_t *a;
    MR_OK(dagger_array_from_fn(rt, &d, fn, NULL, 0, &a));
    MR_OK(dagger_linalg_potrf(NULL, DAGGER_LA_LOWER, a));
    /* Serial reference: the full matrix, unblocked right-looking Cholesky. */
    static double ref[CH_N * CH_N];
    for (size_t j = 0; j < CH_N; j++)
        for (size_t i = 0; i < CH_N; i++)
            ref[i + j * CH_N] = spd(i, j);
    for (size_t j = 0; j < CH_N; j++) {
        ref[j + j * CH_N] = sqrt(ref[j + j * CH_N]);
        for (size_t i = j + 1; i < CH_N; i++)
            ref[i + j * CH_N] /= ref[j + j * CH_N];
        for (size_t k = j + 1; k < CH_N; k++)
            for (size_t i = k; i < CH_N; i++)
                ref[i + k * CH_N] -= ref[i + j * CH_N] * ref[k + j * CH_N];
    }
    static double got[CH_N * CH_N];
    MR_OK(dagger_array_collect(a, got));
    double worst = 0;
    for (size_t j = 0; j < CH_N; j++)
        for (size_t i = j; i < CH_N; i++) {
            double e = fabs(got[i + j * CH_N] - ref[i + j * CH_N]);
            worst = e > worst ? e : worst;
        }
    cr_assert_leq(worst, 1e-12, "largest difference from the serial Cholesky: %g", worst);
    MR_OK(dagger_array_destroy(a));
    MR_OK(dagger_finalize(rt));
}
