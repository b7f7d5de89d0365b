/* The kernels of ours that the CUDA tile codelets queue (la_cuda_*.cu),
 * declared for C: each launcher queues its kernel on stream s and returns
 * the launch's error (cudaGetLastError), never waiting for the device. */
#ifndef DG_LINALG_CUDA_KERNELS_H
#define DG_LINALG_CUDA_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[i] = local[i] + row0 for i < kb: cuSOLVER's 32-bit panel pivots to
 * the global 64-bit ones the CPU codelet writes. */
cudaError_t dg_la_cuda_pivots(const int *local, int64_t *out, int kb, int64_t row0,
                              cudaStream_t s);

/* LAPACK's laswp on the m x n view a (column stride ld, f64 when f64, else
 * f32): row i with row piv[i] - row0 - 1 (0-based), i = 0 .. kb - 1, piv in
 * device memory. When a pivot is no pivot of its row (dg_la_piv_first_bad)
 * nothing is swapped and *bad (device memory) becomes 1 + the first such
 * row; *bad is left alone otherwise. */
cudaError_t dg_la_cuda_laswp(int f64, void *a, int64_t ld, int64_t m, int64_t n,
                             const int64_t *piv, int kb, int64_t row0, int *bad, cudaStream_t s);

/* One QR panel of n <= 1024 columns (kind DG_LA_QR_GEQRT: the m x n panel
 * a; DG_LA_QR_TPQRT: the n x n triangle a on top of the m x n tile b), its
 * reflectors in place and its T factor into t (n x n upper, ldt), as LAPACK
 * geqrt2 / tpqrt2 (l = 0). */
cudaError_t dg_la_cuda_qr_panel(int f64, int kind, int m, int n, void *a, int64_t lda, void *b,
                                int64_t ldb, void *t, int64_t ldt, cudaStream_t s);

/* dst (rows x cols, ldd) = the unit lower trapezoid of src (ones on the
 * diagonal, zeros above): the explicit V of a block reflector. */
cudaError_t dg_la_cuda_unit_lower(int f64, const void *src, int64_t lds, void *dst, int64_t ldd,
                                  int64_t rows, int cols, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
