/* LU's kernels of ours: the pivots of cuSOLVER's getrf made global, and the
 * row interchanges (laswp; cuBLAS/cuSOLVER have no laswp that takes the
 * pivots of one panel on the rows of another view). The arithmetic is
 * la_cuda_math.h's, which the host test checks against LAPACK. */
#include <cuda_runtime.h>

/* Built into the module libdagger-cuda.so (devices/cuda/cuda_lib.h), whose
 * exports are the launchers: default visibility on their first declaration
 * (la_cuda_lib.h finds them there). */
#pragma GCC visibility push(default)
#include "core/linalg/cuda/la_cuda_kernels.h"
#pragma GCC visibility pop
#include "core/linalg/cuda/la_cuda_math.h"

#define THREADS 128

static unsigned blocks(int64_t n)
{
    return (unsigned)((n + THREADS - 1) / THREADS);
}

__global__ void pivots_kernel(const int *local, int64_t *out, int kb, int64_t row0)
{
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < kb)
        out[i] = dg_la_piv_global(local[i], row0);
}

cudaError_t dg_la_cuda_pivots(const int *local, int64_t *out, int kb, int64_t row0,
                              cudaStream_t s)
{
    if (kb > 0)
        pivots_kernel<<<blocks(kb), THREADS, 0, s>>>(local, out, kb, row0);
    return cudaGetLastError();
}

/* One thread per column: the kb swaps of a column run in order (a later
 * swap may move a row an earlier one wrote), columns independently. Every
 * thread validates the pivots first, so a bad set leaves all columns
 * untouched, as the CPU kernel does. */
template <typename T>
__global__ void laswp_kernel(T *a, int64_t ld, int64_t m, int64_t n, const int64_t *piv, int kb,
                             int64_t row0, int *bad)
{
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n)
        return;
    int first = dg_la_piv_first_bad(piv, kb, row0, m);
    if (first >= 0) {
        if (j == 0)
            *bad = first + 1;
        return;
    }
    T *col = a + j * ld;
    if (sizeof(T) == sizeof(double))
        dg_la_swap_column_d((double *)col, piv, kb, row0);
    else
        dg_la_swap_column_s((float *)col, piv, kb, row0);
}

cudaError_t dg_la_cuda_laswp(int f64, void *a, int64_t ld, int64_t m, int64_t n,
                             const int64_t *piv, int kb, int64_t row0, int *bad, cudaStream_t s)
{
    if (n > 0 && kb > 0) {
        if (f64)
            laswp_kernel<double><<<blocks(n), THREADS, 0, s>>>((double *)a, ld, m, n, piv, kb,
                                                               row0, bad);
        else
            laswp_kernel<float><<<blocks(n), THREADS, 0, s>>>((float *)a, ld, m, n, piv, kb,
                                                              row0, bad);
    }
    return cudaGetLastError();
}
