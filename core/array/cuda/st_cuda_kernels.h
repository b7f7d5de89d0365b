/* The stencil's CUDA kernels (st_cuda_kernels.cu), declared for C: each
 * launcher queues its kernel on stream s and returns the launch's error
 * (cudaGetLastError), never waiting for the device. Their parameters travel
 * by value in the launch (st_cuda_math.h's structs, device pointers). */
#ifndef DG_ARRAY_CUDA_ST_CUDA_KERNELS_H
#define DG_ARRAY_CUDA_ST_CUDA_KERNELS_H

#include <cuda_runtime_api.h>

#include "core/array/cuda/st_cuda_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Boxes per launch of dg_st_cuda_boxes (their parameters stay under the
 * 4 KiB every architecture takes). */
#define DG_ST_CUDA_BOXES 16

/* Copies (or fills) boxes b[0 .. n), n <= DG_ST_CUDA_BOXES, into padded buffers. */
cudaError_t dg_st_cuda_boxes(const dg_st_box_t *b, int n, cudaStream_t s);

/* The affine ghosts of one edge (dg_st_ext_line on every line of x). */
cudaError_t dg_st_cuda_extend(const dg_st_ext_t *x, cudaStream_t s);

/* One expression over one block (dg_st_expr_elem on every element). */
cudaError_t dg_st_cuda_expr(const dg_st_expr_t *x, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
