/* QR's kernels of ours: the factorisation of one panel of ib columns
 * (LAPACK geqrt2, tpqrt2 with l = 0: Householder vectors and the T factor,
 * cuSOLVER having no routine that makes T), and the explicit unit-lower V
 * the block reflectors are applied with (cuBLAS gemm/trmm in la_cuda_qr.c).
 * The column steps are la_cuda_math.h's, which the host test checks against
 * LAPACK. */
#include <cuda_runtime.h>

/* Built into the module libdagger-cuda.so (devices/cuda/cuda_lib.h), whose
 * exports are the launchers: default visibility on their first declaration
 * (la_cuda_lib.h finds them there). */
#pragma GCC visibility push(default)
#include "core/linalg/cuda/la_cuda_kernels.h"
#pragma GCC visibility pop
#include "core/linalg/cuda/la_cuda_math.h"

/* One thread block per panel, one thread per column of it: column j's
 * reflector (thread 0), then its application to the columns on its right
 * and the dot products of T's column j (one thread each), then T's column
 * (thread 0); the steps are ordered by barriers. */
template <typename T>
__global__ void qr_panel_kernel(int kind, int m, int n, T *a, int64_t lda, T *b, int64_t ldb,
                                T *t, int64_t ldt)
{
    __shared__ T tau;
    int tid = (int)threadIdx.x;
    int f64 = sizeof(T) == sizeof(double);
    for (int j = 0; j < n; j++) {
        int len = DG_LA_QR_BLEN(kind, m, j);
        T *vj = DG_LA_QR_BOTTOM(kind, a, lda, b, ldb, m, j, j);
        if (tid == 0)
            tau = f64 ? (T)dg_la_larfg_d(len, (double *)(a + j + j * lda), (double *)vj)
                      : (T)dg_la_larfg_s(len, (float *)(a + j + j * lda), (float *)vj);
        __syncthreads();
        int c = j + 1 + tid;
        if (c < n) {
            T *top = a + j + c * lda, *y = DG_LA_QR_BOTTOM(kind, a, lda, b, ldb, m, j, c);
            if (f64)
                dg_la_reflect_d(len, (double)tau, (const double *)vj, (double *)top, (double *)y);
            else
                dg_la_reflect_s(len, (float)tau, (const float *)vj, (float *)top, (float *)y);
        }
        if (tid < j)
            t[tid + j * ldt] = f64 ? (T)dg_la_qr_z_d(kind, m, (const double *)a, lda,
                                                      (const double *)b, ldb, tid, j)
                                   : (T)dg_la_qr_z_s(kind, m, (const float *)a, lda,
                                                      (const float *)b, ldb, tid, j);
        __syncthreads();
        if (tid == 0) {
            if (f64)
                dg_la_tcol_d(j, (double)tau, (double *)t, ldt);
            else
                dg_la_tcol_s(j, (float)tau, (float *)t, ldt);
        }
        __syncthreads();
    }
}

cudaError_t dg_la_cuda_qr_panel(int f64, int kind, int m, int n, void *a, int64_t lda, void *b,
                                int64_t ldb, void *t, int64_t ldt, cudaStream_t s)
{
    if (n <= 0)
        return cudaSuccess;
    unsigned threads = (unsigned)((n + 31) / 32 * 32);
    if (f64)
        qr_panel_kernel<double><<<1, threads, 0, s>>>(kind, m, n, (double *)a, lda, (double *)b,
                                                      ldb, (double *)t, ldt);
    else
        qr_panel_kernel<float><<<1, threads, 0, s>>>(kind, m, n, (float *)a, lda, (float *)b, ldb,
                                                     (float *)t, ldt);
    return cudaGetLastError();
}

template <typename T>
__global__ void unit_lower_kernel(const T *src, int64_t lds, T *dst, int64_t ldd, int64_t rows,
                                  int cols)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int j = (int)blockIdx.y;
    if (i < rows && j < cols)
        dst[i + j * ldd] = i == j ? (T)1 : i > j ? src[i + j * lds] : (T)0;
}

cudaError_t dg_la_cuda_unit_lower(int f64, const void *src, int64_t lds, void *dst, int64_t ldd,
                                  int64_t rows, int cols, cudaStream_t s)
{
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    dim3 grid((unsigned)((rows + 127) / 128), (unsigned)cols);
    if (f64)
        unit_lower_kernel<double><<<grid, 128, 0, s>>>((const double *)src, lds, (double *)dst,
                                                       ldd, rows, cols);
    else
        unit_lower_kernel<float><<<grid, 128, 0, s>>>((const float *)src, lds, (float *)dst, ldd,
                                                      rows, cols);
    return cudaGetLastError();
}
