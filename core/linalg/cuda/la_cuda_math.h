/* The index arithmetic of the CUDA tile kernels, in plain C so that the
 * kernels (nvcc, __device__) and a host unit test against LAPACK
 * (tests/core/linalg/test_la_cuda_math.c) run the same code: LU's pivot
 * forms and row interchanges. No CUDA header: the host test builds without
 * the toolkit. */
#ifndef DG_LINALG_CUDA_MATH_H
#define DG_LINALG_CUDA_MATH_H

#include <stdint.h>

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

#endif
