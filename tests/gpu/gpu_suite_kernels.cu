/* The device kernels of the suite's codelets (tests/gpu/gpu_kind.h) for the
 * CUDA backend: the element-wise update of mr_codelets.h's mr_affine over
 * the elements a view's modifier selects (sub-views arrive as strides,
 * triangles as a mask of the relations of i and j the modifier admits:
 * 1 i < j, 2 i == j, 4 i > j), and the three-value record of gpu_where.
 * No dagger.h here: it is C, and this file is C++.
 * Launched on the task's stream; completion is the runtime's business. */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

__global__ static void affine_kernel(double *x, int rel, size_t n0, size_t n1, size_t s0,
                                     size_t s1, double a, double b)
{
    size_t n = n0 * n1;
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;
         k += (size_t)gridDim.x * blockDim.x) {
        size_t i = k % n0, j = k / n0;
        if (rel & (i < j ? 1 : i == j ? 2 : 4))
            x[i * s0 + j * s1] = a * x[i * s0 + j * s1] + b;
    }
}

__global__ static void put3_kernel(int32_t *p, int32_t a, int32_t b, int32_t c)
{
    p[0] = a;
    p[1] = b;
    p[2] = c;
}

extern "C" int gpu_suite_affine_launch(void *stream, double *x, int rel, size_t n0, size_t n1,
                                       size_t s0, size_t s1, double a, double b)
{
    size_t n = n0 * n1;
    unsigned blocks = n ? (unsigned)((n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024) : 1;
    affine_kernel<<<blocks, 256, 0, (cudaStream_t)stream>>>(x, rel, n0, n1, s0, s1, a, b);
    return (int)cudaGetLastError();
}

extern "C" int gpu_suite_put3_launch(void *stream, int32_t *p, int32_t a, int32_t b, int32_t c)
{
    put3_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(p, a, b, c);
    return (int)cudaGetLastError();
}
