/* Distributed arrays: reductions against serial references, and their
 * reproducibility: the same bits whatever the placement of the blocks and
 * the number of ranks (the expected bits below were computed once; every
 * rank count of the multi-rank run must reproduce them). */
#include <stdio.h>

#include "array_util.h"

static double fetch_f64(dagger_runtime_t *rt, dagger_future_t f)
{
    double v = 0;
    size_t len = 0;
    AR_OK(dagger_fetch(rt, f, &v, sizeof(v), &len));
    cr_assert_eq(len, sizeof(double));
    return v;
}

static int64_t fetch_i64(dagger_runtime_t *rt, dagger_future_t f)
{
    int64_t v = 0;
    AR_OK(dagger_fetch(rt, f, &v, sizeof(v), NULL));
    return v;
}

Test(array_reduce, float_reductions_match_serial)
{
    dagger_runtime_t *rt = ar_init();
    const dagger_dtype_t types[] = {DAGGER_F32, DAGGER_F64};
    const size_t blocks[][2] = {{17, 10}, {4, 3}, {5, 10}};
    for (int t = 0; t < 2; t++)
        for (int b = 0; b < 3; b++) {
            dagger_array_desc_t d = AR_D2(types[t], 17, 10, blocks[b][0], blocks[b][1]);
            dagger_array_t *x, *y;
            AR_OK(dagger_array_randn(rt, &d, 11, &x));
            AR_OK(dagger_array_rand(rt, &d, 12, &y));
            double *vx = ar_collect(x), *vy = ar_collect(y), v[5], ref[5];
            ar_reduce5(rt, x, y, vx, vy, 170, v, ref);
            cr_assert(fabs(v[0] - ref[0]) < 1e-12 * 170, "sum");
            cr_assert_eq(v[1], ref[1], "min");
            cr_assert_eq(v[2], ref[2], "max");
            cr_assert(fabs(v[3] - ref[3]) < 1e-12 * ref[3], "norm");
            cr_assert(fabs(v[4] - ref[4]) < 1e-12 * 170, "dot");
            free(vx);
            free(vy);
            AR_OK(dagger_array_destroy(x));
            AR_OK(dagger_array_destroy(y));
        }
    AR_OK(dagger_finalize(rt));
}

Test(array_reduce, integer_reductions_wrap_exactly)
{
    dagger_runtime_t *rt = ar_init();
    const dagger_dtype_t types[] = {DAGGER_I32, DAGGER_I64};
    for (int t = 0; t < 2; t++) {
        dagger_array_desc_t d = AR_D1(types[t], 1000, 77);
        dagger_array_t *x;
        AR_OK(dagger_array_rand(rt, &d, 5, &x));
        void *raw = malloc(1000 * 8);
        AR_OK(dagger_array_collect(x, raw));
        uint64_t sum = 0, dot = 0;
        int64_t mn = INT64_MAX, mx = INT64_MIN;
        for (int i = 0; i < 1000; i++) {
            int64_t v = t == 0 ? ((int32_t *)raw)[i] : ((int64_t *)raw)[i];
            sum += (uint64_t)v;
            dot += (uint64_t)v * (uint64_t)v;
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        }
        dagger_future_t f[4];
        AR_OK(dagger_array_reduce(NULL, DAGGER_OP_ADD, x, &f[0]));
        AR_OK(dagger_array_reduce(NULL, DAGGER_OP_MIN, x, &f[1]));
        AR_OK(dagger_array_reduce(NULL, DAGGER_OP_MAX, x, &f[2]));
        AR_OK(dagger_array_dot(NULL, x, x, &f[3]));
        cr_assert_eq((uint64_t)fetch_i64(rt, f[0]), sum);
        cr_assert_eq(fetch_i64(rt, f[1]), mn);
        cr_assert_eq(fetch_i64(rt, f[2]), mx);
        cr_assert_eq((uint64_t)fetch_i64(rt, f[3]), dot);
        free(raw);
        AR_OK(dagger_array_destroy(x));
    }
    AR_OK(dagger_finalize(rt));
}

Test(array_reduce, nan_propagates_through_min_and_max)
{
    dagger_runtime_t *rt = ar_init();
    double host[40];
    for (int i = 0; i < 40; i++)
        host[i] = i;
    host[33] = NAN;
    dagger_array_desc_t d = AR_D1(DAGGER_F64, 40, 8);
    dagger_array_t *x;
    AR_OK(dagger_array_from_host(rt, &d, host, &x));
    dagger_future_t mn, mx;
    AR_OK(dagger_array_reduce(NULL, DAGGER_OP_MIN, x, &mn));
    AR_OK(dagger_array_reduce(NULL, DAGGER_OP_MAX, x, &mx));
    cr_assert(isnan(fetch_f64(rt, mn)) && isnan(fetch_f64(rt, mx)));
    AR_OK(dagger_array_destroy(x));
    AR_OK(dagger_finalize(rt));
}

/* The bits of the sum and the norm of randn(seed 99) as 1000 x 37 in
 * 64 x 8 blocks. Computed with one rank; the same on any number. */
static const double expect_sum = 0x1.1fcbbf7d2a3bp+8, expect_norm = 0x1.8223a82c444f8p+7;

static int last_rank(const size_t block[], int nd, int nranks, void *ctx)
{
    (void)block;
    (void)nd;
    (void)ctx;
    return nranks - 1;
}

Test(array_reduce, bit_identical_whatever_the_placement)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dist_t dists[3] = {{.kind = DAGGER_DIST_DEFAULT}, {.kind = DAGGER_DIST_CYCLIC_2D},
                              {.kind = DAGGER_DIST_MAP, .map = last_rank}};
    for (int k = 0; k < 3; k++) {
        dagger_array_desc_t d = AR_D2(DAGGER_F64, 1000, 37, 64, 8);
        d.dist = &dists[k];
        dagger_array_t *x;
        AR_OK(dagger_array_randn(rt, &d, 99, &x));
        dagger_future_t s, n;
        AR_OK(dagger_array_reduce(NULL, DAGGER_OP_ADD, x, &s));
        AR_OK(dagger_array_reduce(NULL, DAGGER_OP_NORM2, x, &n));
        double vs = fetch_f64(rt, s), vn = fetch_f64(rt, n), *v = ar_collect(x), ref = 0;
        for (int i = 0; i < 37000; i++)
            ref += v[i];
        free(v);
        cr_assert(fabs(vs - ref) < 1e-9, "sum %g, serial %g", vs, ref);
        cr_assert(vs == expect_sum && vn == expect_norm,
                  "distribution %d on %d ranks: sum %a norm %a, expected %a and %a", k,
                  dagger_nranks(rt), vs, vn, expect_sum, expect_norm);
        AR_OK(dagger_array_destroy(x));
    }
    AR_OK(dagger_finalize(rt));
}

Test(array_reduce, bad_input)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D1(DAGGER_F64, 10, 3), e = AR_D1(DAGGER_F32, 10, 3);
    dagger_array_t *a, *b;
    AR_OK(dagger_array_zeros(rt, &d, &a));
    AR_OK(dagger_array_zeros(rt, &e, &b));
    dagger_future_t f;
    AR_FAILS(dagger_array_reduce(NULL, (dagger_op_t)7, a, &f), DAGGER_ERR_INVALID_ARG,
             "unknown reduction");
    AR_FAILS(dagger_array_dot(NULL, a, b, &f), DAGGER_ERR_DTYPE, "element types differ");
    AR_FAILS(dagger_array_reduce(NULL, DAGGER_OP_ADD, a, NULL), DAGGER_ERR_INVALID_ARG,
             "NULL future");
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(b));
    AR_OK(dagger_finalize(rt));
}
