/* The tile trsm by halving (core/linalg/trsm_rec.c) against one BLAS trsm
 * call: every side, uplo, op and diag, triangles narrower than a leaf, of
 * one leaf, and of several levels (odd sizes too), leading dimensions
 * larger than the blocks (whose padding must stay untouched), f64 and f32,
 * alpha not 1. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#define DG_LA_BLAS_LIB_NO_REDIRECT 1
#include "core/linalg/la_blas_lib.h"
#include "core/linalg/trsm_rec.h"

static uint64_t g_rng = 12345;

static double rnd(void) /* in [-1, 1) */
{
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(g_rng >> 11) / (double)(1ull << 52) - 1.0;
}

#define PAD 5

/* One case in precision T: the recursive solve and BLAS's on copies of B,
 * their largest difference over the reference's largest entry. */
#define CASE_FN(NAME, T, REC, REF)                                                              \
    static double NAME(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE ta, CBLAS_DIAG diag,  \
                       int m, int n)                                                           \
    {                                                                                          \
        int k = side == CblasLeft ? m : n, lda = k + 3, ldb = m + PAD;                         \
        T *a = malloc(sizeof(T) * (size_t)lda * k);                                            \
        T *b = malloc(sizeof(T) * (size_t)ldb * n), *c = malloc(sizeof(T) * (size_t)ldb * n);  \
        cr_assert(a && b && c);                                                                \
        for (int j = 0; j < k; j++)                                                            \
            for (int i = 0; i < lda; i++)                                                      \
                a[i + (size_t)j * lda] = (T)(i == j ? 2.0 + rnd() : rnd() / k);                \
        for (size_t i = 0; i < (size_t)ldb * n; i++)                                           \
            b[i] = c[i] = (T)rnd();                                                            \
        REC(side, uplo, ta, diag, m, n, (T)0.75, a, lda, b, ldb);                              \
        REF(CblasColMajor, side, uplo, ta, diag, m, n, (T)0.75, a, lda, c, ldb);               \
        double diff = 0, big = 0;                                                              \
        for (int j = 0; j < n; j++)                                                            \
            for (int i = 0; i < ldb; i++) {                                                    \
                double x = b[i + (size_t)j * ldb], y = c[i + (size_t)j * ldb];                 \
                if (i >= m)                                                                    \
                    cr_assert_eq(x, y, "padding row %d of column %d changed", i, j);           \
                diff = fmax(diff, fabs(x - y));                                                \
                big = fmax(big, fabs(y));                                                      \
            }                                                                                  \
        free(a);                                                                               \
        free(b);                                                                               \
        free(c);                                                                               \
        return diff / big;                                                                     \
    }

CASE_FN(case_d, double, dg_la_dtrsm_rec, cblas_dtrsm)
CASE_FN(case_s, float, dg_la_strsm_rec, cblas_strsm)

static void all_cases(int f32)
{
    char why[512] = "";
    cr_assert_eq(dg_la_blas_lib_load(why, sizeof(why)), 0, "%s", why);
    static const int ks[] = {1, 100, DG_LA_TRSM_LEAF, DG_LA_TRSM_LEAF + 1, 300, 520};
    static const int others[] = {37, 200};
    for (int c = 0; c < 16; c++) {
        CBLAS_SIDE side = c & 1 ? CblasRight : CblasLeft;
        CBLAS_UPLO uplo = c & 2 ? CblasUpper : CblasLower;
        CBLAS_TRANSPOSE ta = c & 4 ? CblasTrans : CblasNoTrans;
        CBLAS_DIAG diag = c & 8 ? CblasUnit : CblasNonUnit;
        for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
            for (size_t j = 0; j < sizeof(others) / sizeof(others[0]); j++) {
                int m = side == CblasLeft ? ks[i] : others[j];
                int n = side == CblasLeft ? others[j] : ks[i];
                double e = f32 ? case_s(side, uplo, ta, diag, m, n)
                               : case_d(side, uplo, ta, diag, m, n);
                cr_assert(e < (f32 ? 1e-4 : 1e-12), "%s case %d (side %d uplo %d op %d diag %d), "
                          "%d x %d: relative difference %.3e", f32 ? "f32" : "f64", c, c & 1,
                          (c >> 1) & 1, (c >> 2) & 1, (c >> 3) & 1, m, n, e);
            }
    }
}

Test(la_trsm_rec, every_case_equals_one_trsm_f64)
{
    all_cases(0);
}

Test(la_trsm_rec, every_case_equals_one_trsm_f32)
{
    all_cases(1);
}
