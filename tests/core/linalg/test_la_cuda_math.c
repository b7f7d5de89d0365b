/* The CUDA tile kernels' index arithmetic (core/linalg/cuda/la_cuda_math.h,
 * the code the kernels run) on the host, against LAPACK: LU's panel pivots
 * made global and back, and the row interchanges of one column against
 * LAPACKE's laswp, for pivots from real getrf panels. */
#include <criterion/criterion.h>
#include <math.h>
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "core/linalg/cuda/la_cuda_math.h"

/* A deterministic m x n matrix in [-1, 1). */
static void fill(double *a, size_t count, unsigned seed)
{
    srand(seed);
    for (size_t i = 0; i < count; i++)
        a[i] = 2.0 * rand() / ((double)RAND_MAX + 1.0) - 1.0;
}

/* The panel of step k of an LU on an M x N matrix in nb columns: LAPACK's
 * pivots of that panel (rows row0.. of it), made global as the CUDA
 * codelet does, then applied to another block column of the same rows with
 * the swap function; the result equals LAPACKE_dlaswp with the relative
 * pivots, and going back (dg_la_piv_row) gives the relative pivots. */
Test(la_cuda_math, pivots_and_swaps_equal_lapack)
{
    const int M = 70, nb = 16;
    for (int64_t row0 = 0; row0 < M; row0 += nb) {
        int m = M - (int)row0, kb = m < nb ? m : nb;
        double *panel = malloc((size_t)m * kb * sizeof(double));
        double *other = malloc((size_t)m * 5 * sizeof(double));
        double *ref = malloc((size_t)m * 5 * sizeof(double));
        fill(panel, (size_t)m * kb, (unsigned)row0 + 1);
        fill(other, (size_t)m * 5, (unsigned)row0 + 100);
        memcpy(ref, other, (size_t)m * 5 * sizeof(double));
        lapack_int ipiv[16];
        cr_assert_eq(LAPACKE_dgetrf(LAPACK_COL_MAJOR, m, kb, panel, m, ipiv), 0);
        int64_t g[16];
        for (int i = 0; i < kb; i++) {
            g[i] = dg_la_piv_global((int)ipiv[i], row0);
            cr_assert_eq(g[i], (int64_t)ipiv[i] + row0);
            cr_assert_eq(dg_la_piv_row(g[i], row0, i, m), (int64_t)ipiv[i] - 1);
        }
        cr_assert_eq(dg_la_piv_first_bad(g, kb, row0, m), -1, "step at row %lld",
                     (long long)row0);
        LAPACKE_dlaswp(LAPACK_COL_MAJOR, 5, ref, m, 1, kb, ipiv, 1);
        for (int j = 0; j < 5; j++)
            dg_la_swap_column_d(other + (size_t)j * m, g, kb, row0);
        cr_assert_arr_eq(other, ref, (size_t)m * 5 * sizeof(double), "step at row %lld",
                         (long long)row0);
        free(panel), free(other), free(ref);
    }
}

/* Float columns too, with pivots that swap back and forth (later swaps
 * move rows earlier ones wrote: the order matters). */
Test(la_cuda_math, float_swaps_in_order)
{
    float col[6] = {0, 1, 2, 3, 4, 5}, ref[6];
    memcpy(ref, col, sizeof(col));
    int64_t g[3] = {13, 12, 16};          /* row0 = 10: rows 3, 2, 6 of the view */
    lapack_int rel[3] = {3, 2, 6};
    LAPACKE_slaswp(LAPACK_COL_MAJOR, 1, ref, 6, 1, 3, rel, 1);
    cr_assert_eq(dg_la_piv_first_bad(g, 3, 10, 6), -1);
    dg_la_swap_column_s(col, g, 3, 10);
    cr_assert_arr_eq(col, ref, sizeof(col));
}

/* What a failed panel may leave (zeros) or a pivot outside the view is
 * refused, naming the first bad row, so the kernel swaps nothing. */
Test(la_cuda_math, bad_pivots_are_refused)
{
    int64_t zeros[4] = {0, 0, 0, 0};
    cr_assert_eq(dg_la_piv_first_bad(zeros, 4, 0, 8), 0);
    int64_t before_row[3] = {33, 34, 33}; /* row0 32: row 2 pivots with row 0 */
    cr_assert_eq(dg_la_piv_first_bad(before_row, 3, 32, 8), 2);
    int64_t past[2] = {1, 9};             /* row0 0, m 8: row 9 is past the view */
    cr_assert_eq(dg_la_piv_first_bad(past, 2, 0, 8), 1);
    cr_assert_eq(dg_la_piv_row(9, 0, 1, 9), 8);
}

/* The relative difference of two m x n column-major matrices (ld m). */
static double rel(const double *x, const double *ref, int m, int n)
{
    double num = 0, den = 0;
    for (int i = 0; i < m * n; i++) {
        num += (x[i] - ref[i]) * (x[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

/* One geqrt panel (m x n, T n x n) by the kernels' functions equals
 * LAPACKE_dgeqrt with nb = n: R, the reflectors below it, and T. */
Test(la_cuda_math, geqrt_panel_equals_lapack)
{
    const int shapes[][2] = {{64, 32}, {40, 16}, {16, 16}, {33, 7}};
    for (int s = 0; s < 4; s++) {
        int m = shapes[s][0], n = shapes[s][1];
        double *a = malloc((size_t)m * n * sizeof(double)), *ref = malloc((size_t)m * n * sizeof(double));
        double *t = calloc((size_t)n * n, sizeof(double)), *tref = calloc((size_t)n * n, sizeof(double));
        fill(a, (size_t)m * n, (unsigned)s + 7);
        memcpy(ref, a, (size_t)m * n * sizeof(double));
        cr_assert_eq(LAPACKE_dgeqrt(LAPACK_COL_MAJOR, m, n, n, ref, m, tref, n), 0);
        dg_la_qr_panel_d(DG_LA_QR_GEQRT, m, n, a, m, NULL, 0, t, n);
        cr_assert(rel(a, ref, m, n) < 1e-13, "shape %d: V and R differ by %.3e", s,
                  rel(a, ref, m, n));
        /* only T's upper triangle is defined */
        for (int j = 0; j < n; j++)
            for (int i = j + 1; i < n; i++)
                t[i + j * n] = tref[i + j * n] = 0;
        cr_assert(rel(t, tref, n, n) < 1e-13, "shape %d: T differs by %.3e", s, rel(t, tref, n, n));
        free(a), free(ref), free(t), free(tref);
    }
}

/* One tpqrt panel (R n x n on top of B m x n, l = 0) equals LAPACKE_dtpqrt
 * with nb = n: R, B's reflectors and T; and the float functions equal
 * LAPACKE_stpqrt to float rounding. */
Test(la_cuda_math, tpqrt_panel_equals_lapack)
{
    const int shapes[][2] = {{32, 32}, {20, 16}, {50, 8}};
    for (int s = 0; s < 3; s++) {
        int m = shapes[s][0], n = shapes[s][1];
        double *r = calloc((size_t)n * n, sizeof(double)), *b = malloc((size_t)m * n * sizeof(double));
        fill(b, (size_t)m * n, (unsigned)s + 20);
        fill(r, (size_t)n * n, (unsigned)s + 30);
        for (int j = 0; j < n; j++)
            for (int i = j + 1; i < n; i++)
                r[i + j * n] = 0;
        double *rr = malloc((size_t)n * n * sizeof(double)), *br = malloc((size_t)m * n * sizeof(double));
        memcpy(rr, r, (size_t)n * n * sizeof(double));
        memcpy(br, b, (size_t)m * n * sizeof(double));
        double *t = calloc((size_t)n * n, sizeof(double)), *tref = calloc((size_t)n * n, sizeof(double));
        cr_assert_eq(LAPACKE_dtpqrt(LAPACK_COL_MAJOR, m, n, 0, n, rr, n, br, m, tref, n), 0);
        dg_la_qr_panel_d(DG_LA_QR_TPQRT, m, n, r, n, b, m, t, n);
        cr_assert(rel(r, rr, n, n) < 1e-13, "shape %d: R differs by %.3e", s, rel(r, rr, n, n));
        cr_assert(rel(b, br, m, n) < 1e-13, "shape %d: V differs by %.3e", s, rel(b, br, m, n));
        for (int j = 0; j < n; j++)
            for (int i = j + 1; i < n; i++)
                t[i + j * n] = tref[i + j * n] = 0;
        cr_assert(rel(t, tref, n, n) < 1e-13, "shape %d: T differs by %.3e", s, rel(t, tref, n, n));

        /* the same pair in float (R's input refilled: r now holds the output) */
        float *rf = calloc((size_t)n * n, sizeof(float)), *bf = malloc((size_t)m * n * sizeof(float));
        float *tf = calloc((size_t)n * n, sizeof(float));
        double *got = malloc((size_t)m * n * sizeof(double));
        fill(b, (size_t)m * n, (unsigned)s + 20);
        fill(r, (size_t)n * n, (unsigned)s + 30);
        for (int i = 0; i < m * n; i++)
            bf[i] = (float)b[i];
        for (int j = 0; j < n; j++)
            for (int i = 0; i <= j; i++)
                rf[i + j * n] = (float)r[i + j * n];
        dg_la_qr_panel_s(DG_LA_QR_TPQRT, m, n, rf, n, bf, m, tf, n);
        for (int i = 0; i < m * n; i++)
            got[i] = bf[i];
        cr_assert(rel(got, br, m, n) < 1e-4, "shape %d: float V differs by %.3e", s,
                  rel(got, br, m, n));
        free(rf), free(bf), free(tf), free(got);
        free(r), free(b), free(rr), free(br), free(t), free(tref);
    }
}
