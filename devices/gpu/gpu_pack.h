/* The pack/unpack kernel's interface, shared by the C side of the CUDA and
 * HIP backends (gpu_backend.inc) and their kernel files (gpu_pack_kernel.inc).
 * The host resolves each span into a source and destination offset, so one
 * kernel serves both directions, and joins spans of one length at constant
 * steps into runs (a strided sub-view is one run: rows of equal length, one
 * stride apart; a triangle is one run per column). Up to DG_GPU_PACK_INLINE
 * runs travel in the launch's arguments, more in a table in device memory. */
#ifndef DG_DEV_GPU_PACK_H
#define DG_DEV_GPU_PACK_H

#include <stdint.h>

/* 24 runs of 64 bytes: 1.5 KiB of kernel arguments, under both runtimes'
 * 4 KiB limit. */
#define DG_GPU_PACK_INLINE 24

/* A span resolved for one direction: bytes from src to dst (offsets from the
 * start of the source and destination buffers). */
typedef struct dg_gpu_copy_span {
    uint64_t src;
    uint64_t dst;
    uint64_t bytes;
} dg_gpu_copy_span_t;

/* count rows of bytes each; row k at src + k * src_step and dst + k *
 * dst_step (steps wrap modulo 2^64, so they may go backwards). The launch
 * cuts each row into segs items of at most DG_PACK_SEG bytes (0 for empty
 * rows); first_item is the number of items of the runs before this one. */
typedef struct dg_gpu_copy_run {
    uint64_t src, dst, bytes, count;
    uint64_t src_step, dst_step;
    uint64_t segs, first_item;
} dg_gpu_copy_run_t;

typedef struct dg_gpu_pack_inline {
    dg_gpu_copy_run_t r[DG_GPU_PACK_INLINE];
} dg_gpu_pack_inline_t;

#ifdef __cplusplus
extern "C" {
#endif
/* Queues one launch on stream (a cudaStream_t or hipStream_t) that copies
 * every item of n runs (items in all; items > 0): from table (device memory)
 * when it is not NULL, else from inl. Returns the runtime's error code
 * (0: queued). */
int dg_cuda_pack_launch(void *stream, char *dst, const char *src, const dg_gpu_copy_run_t *table,
                        const dg_gpu_pack_inline_t *inl, uint32_t n, uint64_t items);
int dg_hip_pack_launch(void *stream, char *dst, const char *src, const dg_gpu_copy_run_t *table,
                       const dg_gpu_pack_inline_t *inl, uint32_t n, uint64_t items);
#ifdef __cplusplus
}
#endif

#endif
