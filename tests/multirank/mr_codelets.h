/* Small codelets for the multi-rank region tests: element-wise arithmetic on
 * the elements a view's modifier selects, and tile kernels of a Cholesky. */
#ifndef DG_TEST_MR_CODELETS_H
#define DG_TEST_MR_CODELETS_H

#include <dagger.h>
#include <math.h>

static inline int mr_in_mod(dagger_modifier_t mod, size_t i, size_t j)
{
    switch (mod) {
    case DAGGER_FULL: return 1;
    case DAGGER_UPPER: return i <= j;
    case DAGGER_LOWER: return i >= j;
    case DAGGER_UNIT_UPPER: return i < j;
    case DAGGER_UNIT_LOWER: return i > j;
    case DAGGER_DIAGONAL: return i == j;
    }
    return 0;
}

/* x = a*x + b over the selected elements of a 1-D or 2-D f64 view. */
static inline void mr_affine(dagger_slot_t s, double a, double b)
{
    double *x = s.data;
    size_t n1 = s.ndims > 1 ? s.dims[1] : 1;
    for (size_t j = 0; j < n1; j++)
        for (size_t i = 0; i < s.dims[0]; i++)
            if (s.ndims < 2 || mr_in_mod(s.mod, i, j))
                x[i * s.strides[0] + j * (s.ndims > 1 ? s.strides[1] : 0)] =
                    a * x[i * s.strides[0] + j * (s.ndims > 1 ? s.strides[1] : 0)] + b;
}

/* Sets every selected element of s to v without reading it: for Out
 * arguments, whose old contents are undefined (0 * a NaN left there is
 * still NaN, which TSan's allocator made visible). */
static inline void mr_fill(dagger_slot_t s, double v)
{
    double *x = s.data;
    size_t n1 = s.ndims > 1 ? s.dims[1] : 1;
    for (size_t j = 0; j < n1; j++)
        for (size_t i = 0; i < s.dims[0]; i++)
            if (s.ndims < 2 || mr_in_mod(s.mod, i, j))
                x[i * s.strides[0] + j * (s.ndims > 1 ? s.strides[1] : 0)] = v;
}

static inline int mr_add1(dagger_task_t *t)
{
    mr_affine(dagger_task_arg(t, 0), 1.0, 1.0);
    return DAGGER_OK;
}

static inline int mr_mul2(dagger_task_t *t)
{
    mr_affine(dagger_task_arg(t, 0), 2.0, 0.0);
    return DAGGER_OK;
}

/* Reads its arguments, writes nothing (a consumer for copy counting). */
static inline int mr_touch(dagger_task_t *t)
{
    (void)t;
    return DAGGER_OK;
}

/* Returns (rank + 1) * 10 as a double. */
static inline int mr_rankval(dagger_task_t *t)
{
    double v = (dagger_task_rank(t) + 1) * 10.0;
    return dagger_task_return(t, &v, sizeof(v));
}

/* Writes the value of its future argument (arg 1) into every element of arg 0. */
static inline int mr_store(dagger_task_t *t)
{
    dagger_slot_t x = dagger_task_arg(t, 0), v = dagger_task_arg(t, 1);
    double val = *(const double *)v.data;
    mr_fill(x, val);
    return DAGGER_OK;
}

/* Writes the running rank into an i32 chunk of one element. */
static inline int mr_whoami(dagger_task_t *t)
{
    *(int32_t *)dagger_task_arg(t, 0).data = dagger_task_rank(t);
    return DAGGER_OK;
}

static inline int mr_fail(dagger_task_t *t)
{
    return dagger_task_fail(t, "deliberate failure for the test");
}

/* ---- Cholesky tiles (lower, column-major, leading dimension = strides[1]) ---- */

#define MR_AT(s, i, j) (((double *)(s).data)[(i) + (j) * (s).strides[1]])

static inline int mr_potrf(dagger_task_t *t)
{
    dagger_slot_t a = dagger_task_arg(t, 0);
    size_t n = a.dims[0];
    for (size_t j = 0; j < n; j++) {
        double d = MR_AT(a, j, j);
        for (size_t k = 0; k < j; k++)
            d -= MR_AT(a, j, k) * MR_AT(a, j, k);
        if (d <= 0)
            return dagger_task_fail(t, "tile is not positive definite");
        d = sqrt(d);
        MR_AT(a, j, j) = d;
        for (size_t i = j + 1; i < n; i++) {
            double s = MR_AT(a, i, j);
            for (size_t k = 0; k < j; k++)
                s -= MR_AT(a, i, k) * MR_AT(a, j, k);
            MR_AT(a, i, j) = s / d;
        }
        for (size_t i = 0; i < j; i++)
            MR_AT(a, i, j) = 0.0;
    }
    return DAGGER_OK;
}

/* B = B * L^-T with L lower (arg 0 In: L, arg 1 InOut: B). */
static inline int mr_trsm(dagger_task_t *t)
{
    dagger_slot_t l = dagger_task_arg(t, 0), b = dagger_task_arg(t, 1);
    size_t m = b.dims[0], n = b.dims[1];
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double s = MR_AT(b, i, j);
            for (size_t k = 0; k < j; k++)
                s -= MR_AT(b, i, k) * MR_AT(l, j, k);
            MR_AT(b, i, j) = s / MR_AT(l, j, j);
        }
    return DAGGER_OK;
}

/* C = C - A * B^T (arg 0 In: A, arg 1 In: B, arg 2 InOut: C). syrk is gemm with A = B. */
static inline int mr_gemm(dagger_task_t *t)
{
    dagger_slot_t a = dagger_task_arg(t, 0), b = dagger_task_arg(t, 1), c = dagger_task_arg(t, 2);
    size_t m = c.dims[0], n = c.dims[1], kk = a.dims[1];
    for (size_t j = 0; j < n; j++)
        for (size_t k = 0; k < kk; k++) {
            double bjk = MR_AT(b, j, k);
            for (size_t i = 0; i < m; i++)
                MR_AT(c, i, j) -= MR_AT(a, i, k) * bjk;
        }
    return DAGGER_OK;
}

static inline int mr_syrk(dagger_task_t *t)
{
    dagger_slot_t a = dagger_task_arg(t, 0), c = dagger_task_arg(t, 1);
    size_t n = c.dims[0], kk = a.dims[1];
    for (size_t j = 0; j < n; j++)
        for (size_t k = 0; k < kk; k++) {
            double ajk = MR_AT(a, j, k);
            for (size_t i = 0; i < n; i++)
                MR_AT(c, i, j) -= MR_AT(a, i, k) * ajk;
        }
    return DAGGER_OK;
}

#endif
