/* The index arithmetic of the CUDA tile kernels, in plain C so that the
 * kernels (nvcc, __device__) and a host unit test against LAPACK
 * (tests/core/linalg/test_la_cuda_math.c) run the same code: LU's pivot
 * forms and row interchanges, and the column steps of QR's panel
 * factorisations (LAPACK geqrt2/tpqrt2: Householder vectors as larfg makes
 * them, and the T factor by larft's recurrence). No CUDA header: the host
 * test builds without the toolkit. */
#ifndef DG_LINALG_CUDA_MATH_H
#define DG_LINALG_CUDA_MATH_H

#include <stdint.h>
#ifndef __CUDACC__
#include <math.h>
#endif

#ifdef __CUDACC__
#define DG_LA_HD __host__ __device__
#else
#define DG_LA_HD
#endif

/* A panel's pivot as the CPU codelet stores it: cuSOLVER's (and LAPACK's)
 * 1-based row of the panel, made global by the panel's first row row0. */
static inline DG_LA_HD int64_t dg_la_piv_global(int local, int64_t row0)
{
    return (int64_t)local + row0;
}

/* The 0-based row of a view (rows row0 .. row0 + m of the matrix) that
 * global pivot g sends row i of the step to; -1 when g is no pivot of row i
 * (before it, or past the view: what a failed panel leaves). */
static inline DG_LA_HD int64_t dg_la_piv_row(int64_t g, int64_t row0, int i, int64_t m)
{
    int64_t r = g - row0 - 1;
    return r < i || r >= m ? -1 : r;
}

/* The first of kb pivots that is no pivot of its row (-1: all valid). */
static inline DG_LA_HD int dg_la_piv_first_bad(const int64_t *piv, int kb, int64_t row0,
                                               int64_t m)
{
    for (int i = 0; i < kb; i++)
        if (dg_la_piv_row(piv[i], row0, i, m) < 0)
            return i;
    return -1;
}

/* LAPACK laswp (forward, incx 1) on one column of a view: row i swapped
 * with row piv[i] (global, made relative by row0), for i = 0 .. kb - 1, in
 * that order. The pivots must be valid (dg_la_piv_first_bad). One function
 * per element type: C has no templates. */
#define DG_LA_SWAP_COLUMN(name, T)                                                       \
    static inline DG_LA_HD void name(T *col, const int64_t *piv, int kb, int64_t row0) \
    {                                                                                    \
        for (int i = 0; i < kb; i++) {                                                   \
            int64_t r = piv[i] - row0 - 1;                                               \
            T v = col[i];                                                                \
            col[i] = col[r];                                                             \
            col[r] = v;                                                                  \
        }                                                                                \
    }
DG_LA_SWAP_COLUMN(dg_la_swap_column_d, double)
DG_LA_SWAP_COLUMN(dg_la_swap_column_s, float)

/* ---- QR panels: the reflectors of one panel of ib columns ----
 *
 * Panel kinds. GEQRT: a is the m x n panel itself; reflector j is
 * v = [1; a(j+1:m, j)] on rows j.. (its "top" row is row j of a). TPQRT
 * (LAPACK's tpqrt with l = 0): a is the n x n upper triangle R on top of
 * the m x n tile b; reflector j is v = [e_j; b(:, j)]: its top is row j of
 * a, its bottom all of b's column j. A column c of the panel is (top
 * a(j, c), bottom y): y = a(j+1:m, c) for GEQRT, b(:, c) for TPQRT. */
#define DG_LA_QR_GEQRT 0
#define DG_LA_QR_TPQRT 1

/* The bottom of column c for reflector j, and its length. */
#define DG_LA_QR_BOTTOM(kind, a, lda, b, ldb, m, j, c) \
    ((kind) == DG_LA_QR_GEQRT ? (a) + (j) + 1 + (int64_t)(c) * (lda) : (b) + (int64_t)(c) * (ldb))
#define DG_LA_QR_BLEN(kind, m, j) ((kind) == DG_LA_QR_GEQRT ? (m) - (j) - 1 : (m))

/* The functions for one element type T (suffix d or s; SQRT its square
 * root). LAPACK's larfg also rescales tiny vectors (|beta| < safmin): these
 * do not, so columns whose norm is below the type's safe minimum (~1e-292
 * in f64) may differ; nothing else does. */
#define DG_LA_QR_FUNCS(sfx, T, SQRT)                                                       \
    /* larfg on (alpha, x[0..n)): returns tau; alpha becomes beta, x the vector's tail. */ \
    static inline DG_LA_HD T dg_la_larfg_##sfx(int n, T *alpha, T *x)                     \
    {                                                                                      \
        T ss = 0;                                                                          \
        for (int i = 0; i < n; i++)                                                        \
            ss += x[i] * x[i];                                                             \
        if (ss == 0)                                                                       \
            return 0;                                                                      \
        T a = *alpha, beta = SQRT(a * a + ss);                                             \
        beta = a >= 0 ? -beta : beta;                                                      \
        T tau = (beta - a) / beta, scale = 1 / (a - beta);                                 \
        for (int i = 0; i < n; i++)                                                        \
            x[i] *= scale;                                                                 \
        *alpha = beta;                                                                     \
        return tau;                                                                        \
    }                                                                                      \
    /* H c for H = I - tau v v^T, v = [1; v[0..n)], c = (top, y[0..n)). */                \
    static inline DG_LA_HD void dg_la_reflect_##sfx(int n, T tau, const T *v, T *top, T *y) \
    {                                                                                      \
        T w = *top;                                                                        \
        for (int i = 0; i < n; i++)                                                        \
            w += v[i] * y[i];                                                              \
        w *= tau;                                                                          \
        *top -= w;                                                                         \
        for (int i = 0; i < n; i++)                                                        \
            y[i] -= w * v[i];                                                              \
    }                                                                                      \
    /* Column j of T (ldt; upper, columns 0..j-1 done) from z = V(:, 0:j)^T v_j, held in \
     * t(0:j, j) on entry: t(0:j, j) = -tau T(0:j, 0:j) z, t(j, j) = tau (larft's       \
     * recurrence; in place: row i reads z(i..j-1), not yet overwritten). */             \
    static inline DG_LA_HD void dg_la_tcol_##sfx(int j, T tau, T *t, int64_t ldt)         \
    {                                                                                      \
        T *tj = t + (int64_t)j * ldt;                                                      \
        for (int i = 0; i < j; i++) {                                                      \
            T s = 0;                                                                       \
            for (int l = i; l < j; l++)                                                    \
                s += t[i + (int64_t)l * ldt] * tj[l];                                      \
            tj[i] = -tau * s;                                                              \
        }                                                                                  \
        tj[j] = tau;                                                                       \
    }                                                                                      \
    /* z_i = v_i^T v_j for reflectors i < j of a panel of `kind` (m rows; for TPQRT the  \
     * tops are distinct unit vectors, so only the bottoms meet). */                      \
    static inline DG_LA_HD T dg_la_qr_z_##sfx(int kind, int m, const T *a, int64_t lda,   \
                                              const T *b, int64_t ldb, int i, int j)       \
    {                                                                                      \
        int n = DG_LA_QR_BLEN(kind, m, j);                                                 \
        const T *vi = DG_LA_QR_BOTTOM(kind, a, lda, b, ldb, m, j, i);                      \
        const T *vj = DG_LA_QR_BOTTOM(kind, a, lda, b, ldb, m, j, j);                      \
        T z = kind == DG_LA_QR_GEQRT ? a[j + (int64_t)i * lda] : 0;                        \
        for (int r = 0; r < n; r++)                                                        \
            z += vi[r] * vj[r];                                                            \
        return z;                                                                          \
    }                                                                                      \
    /* The whole panel (n <= columns of t), serially: what the kernel does with one    \
     * thread per column, in the same steps (LAPACK geqrt2 / tpqrt2 with l = 0). */       \
    static inline DG_LA_HD void dg_la_qr_panel_##sfx(int kind, int m, int n, T *a,        \
                                                     int64_t lda, T *b, int64_t ldb, T *t, \
                                                     int64_t ldt)                          \
    {                                                                                      \
        for (int j = 0; j < n; j++) {                                                      \
            int len = DG_LA_QR_BLEN(kind, m, j);                                           \
            T *vj = DG_LA_QR_BOTTOM(kind, a, lda, b, ldb, m, j, j);                        \
            T tau = dg_la_larfg_##sfx(len, a + j + (int64_t)j * lda, vj);                  \
            for (int c = j + 1; c < n; c++)                                                \
                dg_la_reflect_##sfx(len, tau, vj, a + j + (int64_t)c * lda,                \
                                    DG_LA_QR_BOTTOM(kind, a, lda, b, ldb, m, j, c));       \
            for (int i = 0; i < j; i++)                                                    \
                t[i + (int64_t)j * ldt] = dg_la_qr_z_##sfx(kind, m, a, lda, b, ldb, i, j); \
            dg_la_tcol_##sfx(j, tau, t, ldt);                                              \
        }                                                                                  \
    }
DG_LA_QR_FUNCS(d, double, sqrt)
DG_LA_QR_FUNCS(s, float, sqrtf)

#endif
