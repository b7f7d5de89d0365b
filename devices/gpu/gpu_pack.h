/* The pack/unpack kernel's interface, shared by the C side of the CUDA and
 * HIP backends (gpu_backend.inc) and their kernel files (gpu_pack_kernel.inc).
 * The host resolves each span into a source and destination offset, so one
 * kernel serves both directions; up to DG_GPU_PACK_INLINE spans travel in
 * the launch's arguments, more in a table in device memory. */
#ifndef DG_DEV_GPU_PACK_H
#define DG_DEV_GPU_PACK_H

#include <stdint.h>

/* 64 spans of 24 bytes: 1.5 KiB of kernel arguments, under both runtimes'
 * 4 KiB limit. */
#define DG_GPU_PACK_INLINE 64

typedef struct dg_gpu_copy_span {
    uint64_t src;            /* bytes from the source buffer's start */
    uint64_t dst;            /* bytes from the destination buffer's start */
    uint64_t bytes;
} dg_gpu_copy_span_t;

typedef struct dg_gpu_pack_inline {
    dg_gpu_copy_span_t s[DG_GPU_PACK_INLINE];
} dg_gpu_pack_inline_t;

#ifdef __cplusplus
extern "C" {
#endif
/* Queues one launch on stream (a cudaStream_t or hipStream_t) that copies
 * every span: from table (device memory) when it is not NULL, else from
 * inl. max_bytes is the largest span, which sizes the grid. Returns the
 * runtime's error code (0: queued). */
int dg_cuda_pack_launch(void *stream, char *dst, const char *src, const dg_gpu_copy_span_t *table,
                        const dg_gpu_pack_inline_t *inl, uint32_t n, uint64_t max_bytes);
int dg_hip_pack_launch(void *stream, char *dst, const char *src, const dg_gpu_copy_span_t *table,
                       const dg_gpu_pack_inline_t *inl, uint32_t n, uint64_t max_bytes);
#ifdef __cplusplus
}
#endif

#endif
