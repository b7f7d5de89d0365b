/* Helpers of the linear algebra tests: matrices made on every rank the same
 * way, collected into doubles, and compared with LAPACK/BLAS on the
 * collected matrix. Everything here is collective. */
#ifndef DG_TEST_LA_UTIL_H
#define DG_TEST_LA_UTIL_H

#include <cblas.h>
#include <dagger.h>
#include <lapacke.h>

#include "multirank/array_util.h"

/* Relative residual bounds (the issue's): f64 and f32. */
#define LA_TOL(t) ((t) == DAGGER_F64 ? 1e-12 : 1e-5)

static inline dagger_array_desc_t la_desc(dagger_dtype_t t, size_t m, size_t n, size_t mb,
                                          size_t nb)
{
    static const dagger_dist_t cyc = {.kind = DAGGER_DIST_CYCLIC_2D};
    dagger_array_desc_t d = AR_D2(t, m, n, mb, nb);
    d.dist = &cyc;
    return d;
}

/* A random m x n matrix (uniform [0, 1)) in mb x nb blocks, 2-D cyclic. */
static inline dagger_array_t *la_rand(dagger_runtime_t *rt, dagger_dtype_t t, size_t m, size_t n,
                                      size_t mb, size_t nb, uint64_t seed)
{
    dagger_array_desc_t d = la_desc(t, m, n, mb, nb);
    dagger_array_t *a;
    AR_OK(dagger_array_rand(rt, &d, seed, &a));
    return a;
}

static inline dagger_array_t *la_vec(dagger_runtime_t *rt, dagger_dtype_t t, size_t n, size_t b,
                                     uint64_t seed)
{
    dagger_array_desc_t d = AR_D1(t, n, b);
    dagger_array_t *a;
    AR_OK(dagger_array_rand(rt, &d, seed, &a));
    return a;
}

/* A symmetric positive definite n x n matrix: U(min, max) + n on the diagonal. */
static double la_spd_fn(const size_t idx[], int nd, const void *args)
{
    (void)nd;
    uint64_t n;
    memcpy(&n, args, sizeof(n));
    size_t lo = idx[0] < idx[1] ? idx[0] : idx[1], hi = idx[0] < idx[1] ? idx[1] : idx[0];
    return dagger_rand_uniform(5, lo + hi * n) + (idx[0] == idx[1] ? (double)n : 0.0);
}

static inline dagger_array_t *la_spd(dagger_runtime_t *rt, dagger_dtype_t t, size_t n, size_t mb,
                                     size_t nb)
{
    dagger_index_fn_id_t fn;
    AR_OK(dagger_index_fn_register(rt, "test.la.spd", la_spd_fn, &fn));
    dagger_array_desc_t d = la_desc(t, n, n, mb, nb);
    uint64_t args = n;
    dagger_array_t *a;
    AR_OK(dagger_array_from_fn(rt, &d, fn, &args, sizeof(args), &a));
    return a;
}

/* ||x - ref||_F / ||ref||_F over an m x n column-major matrix; tri = 0 all,
 * 'L' the lower triangle, 'U' the upper, 'l' and 'u' without the diagonal. */
static inline double la_rel(const double *x, const double *ref, size_t m, size_t n, int tri)
{
    double num = 0, den = 0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < m; i++) {
            if ((tri == 'L' && i < j) || (tri == 'U' && i > j) || (tri == 'l' && i <= j) ||
                (tri == 'u' && i >= j))
                continue;
            double d = x[i + j * m] - ref[i + j * m];
            num += d * d;
            den += ref[i + j * m] * ref[i + j * m];
        }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Asserts the relative residual is below the dtype's bound. */
#define LA_CLOSE(x, ref, m, n, tri, t, what)                                            \
    do {                                                                                \
        double e_ = la_rel((x), (ref), (m), (n), (tri));                                \
        cr_assert(e_ < LA_TOL(t), "%s: relative residual %.3e (bound %.0e)", (what), e_,  \
                  LA_TOL(t));                                                           \
    } while (0)

#define LA_DTYPES {DAGGER_F64, DAGGER_F32}

/* One gemm case: random op(A) (M x K), op(B) (K x N), C (M x N) in blocks
 * mb, nb, kb, and their collected copies. */
typedef struct la_gemm_case {
    dagger_array_t *A, *B, *C;
    double *a, *b, *c;
    int ta, tb;
    size_t M, N, K;
    dagger_dtype_t t;
} la_gemm_case_t;

static inline la_gemm_case_t la_gemm_case(dagger_runtime_t *rt, dagger_dtype_t t, int ta, int tb,
                                          size_t M, size_t N, size_t K, size_t mb, size_t nb,
                                          size_t kb)
{
    la_gemm_case_t g = {.ta = ta, .tb = tb, .M = M, .N = N, .K = K, .t = t};
    g.A = ta ? la_rand(rt, t, K, M, kb, mb, 1) : la_rand(rt, t, M, K, mb, kb, 1);
    g.B = tb ? la_rand(rt, t, N, K, nb, kb, 2) : la_rand(rt, t, K, N, kb, nb, 2);
    g.C = la_rand(rt, t, M, N, mb, nb, 3);
    g.a = ar_collect(g.A), g.b = ar_collect(g.B), g.c = ar_collect(g.C);
    return g;
}

/* After C = alpha op(A) op(B) + beta C: C equals BLAS on the collected
 * inputs; frees the case. */
static inline void la_gemm_check(la_gemm_case_t *g, double alpha, double beta, const char *what)
{
    cblas_dgemm(CblasColMajor, g->ta ? CblasTrans : CblasNoTrans,
                g->tb ? CblasTrans : CblasNoTrans, (int)g->M, (int)g->N, (int)g->K, alpha, g->a,
                g->ta ? (int)g->K : (int)g->M, g->b, g->tb ? (int)g->N : (int)g->K, beta, g->c,
                (int)g->M);
    double *got = ar_collect(g->C);
    LA_CLOSE(got, g->c, g->M, g->N, 0, g->t, what);
    free(got), free(g->a), free(g->b), free(g->c);
    dagger_array_destroy(g->A), dagger_array_destroy(g->B), dagger_array_destroy(g->C);
}

#endif
