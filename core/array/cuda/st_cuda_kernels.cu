/* The stencil's CUDA kernels: grid-stride loops over st_cuda_math.h's
 * per-element functions (the code the host test runs too), one thread per
 * element of a box, per line of an edge's ghosts, per element of a block. */
#include <cuda_runtime.h>

/* Built into the module libdagger-cuda.so (devices/cuda/cuda_lib.h), whose
 * exports are the launchers: default visibility on their first declaration
 * (st_cuda.h finds them there). */
#pragma GCC visibility push(default)
#include "core/array/cuda/st_cuda_kernels.h"
#pragma GCC visibility pop

#define THREADS 256u
#define MAX_BLOCKS 4096u

static unsigned grid(uint64_t n)
{
    uint64_t b = (n + THREADS - 1) / THREADS;
    return (unsigned)(b < MAX_BLOCKS ? b : MAX_BLOCKS);
}

typedef struct boxes {
    dg_st_box_t b[DG_ST_CUDA_BOXES];
} boxes_t;

/* Box blockIdx.y, its elements grid-stride along x. */
__global__ static void boxes_kernel(boxes_t p)
{
    const dg_st_box_t *b = &p.b[blockIdx.y];
    uint64_t n = dg_st_box_count(b);
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < n;
         k += (uint64_t)gridDim.x * blockDim.x)
        dg_st_box_elem(b, k);
}

__global__ static void extend_kernel(dg_st_ext_t x)
{
    uint64_t n = dg_st_ext_count(&x);
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < n;
         k += (uint64_t)gridDim.x * blockDim.x)
        dg_st_ext_line(&x, k);
}

__global__ static void expr_kernel(dg_st_expr_t x)
{
    uint64_t n = dg_st_expr_count(&x);
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < n;
         k += (uint64_t)gridDim.x * blockDim.x)
        dg_st_expr_elem(&x, k);
}

extern "C" cudaError_t dg_st_cuda_boxes(const dg_st_box_t *b, int n, cudaStream_t s)
{
    if (n <= 0 || n > (int)DG_ST_CUDA_BOXES)
        return n == 0 ? cudaSuccess : cudaErrorInvalidValue;
    boxes_t p;
    uint64_t most = 0;
    for (int i = 0; i < n; i++) {
        p.b[i] = b[i];
        most = dg_st_box_count(&b[i]) > most ? dg_st_box_count(&b[i]) : most;
    }
    if (most)
        boxes_kernel<<<dim3(grid(most), (unsigned)n), THREADS, 0, s>>>(p);
    return cudaGetLastError();
}

extern "C" cudaError_t dg_st_cuda_extend(const dg_st_ext_t *x, cudaStream_t s)
{
    uint64_t n = dg_st_ext_count(x);
    if (n)
        extend_kernel<<<grid(n), THREADS, 0, s>>>(*x);
    return cudaGetLastError();
}

extern "C" cudaError_t dg_st_cuda_expr(const dg_st_expr_t *x, cudaStream_t s)
{
    uint64_t n = dg_st_expr_count(x);
    if (n)
        expr_kernel<<<grid(n), THREADS, 0, s>>>(*x);
    return cudaGetLastError();
}
