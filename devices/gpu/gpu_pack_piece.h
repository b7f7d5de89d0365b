/* The pack kernel's arithmetic: how a launch is cut into blocks, and which
 * bytes of which span one thread copies. Plain C that nvcc and hipcc
 * compile as device code (gpu_pack_kernel.inc defines DG_GPU_DEVICE_FN) and
 * a host compiler as ordinary functions, so tests/devices/test_gpu_pack_grid.c
 * checks it on machines without a GPU by running every block and thread of
 * a launch in turn (the kernel has no barriers, so any order is one the
 * device could take).
 *
 * Grid: blockIdx.x walks the spans (grid-stride), blockIdx.y cuts a long
 * span into pieces, so a few long spans and many short ones both fill the
 * device. 8-byte words when a piece allows it, bytes otherwise. */
#ifndef DG_DEV_GPU_PACK_PIECE_H
#define DG_DEV_GPU_PACK_PIECE_H

#include <stdint.h>

#include "devices/gpu/gpu_pack.h"

#ifndef DG_GPU_DEVICE_FN
#define DG_GPU_DEVICE_FN static inline
#endif

#define DG_PACK_THREADS 256u
#define DG_PACK_MAX_X 4096u
#define DG_PACK_MAX_Y 256u
/* a block's share of a long span: 16 words per thread */
#define DG_PACK_PIECE ((uint64_t)DG_PACK_THREADS * 8u * 16u)

/* The launch's grid for n spans, the longest max_bytes long. */
static inline void dg_gpu_pack_grid(uint32_t n, uint64_t max_bytes, uint32_t *gx, uint32_t *gy)
{
    uint64_t pieces = (max_bytes + DG_PACK_PIECE - 1) / DG_PACK_PIECE;
    *gx = n < DG_PACK_MAX_X ? n : DG_PACK_MAX_X;
    *gy = (uint32_t)(pieces < 1 ? 1 : pieces < DG_PACK_MAX_Y ? pieces : DG_PACK_MAX_Y);
}

/* Thread t of threads copies its share of piece y (of gy) of span sp. */
DG_GPU_DEVICE_FN void dg_gpu_pack_piece(char *dst, const char *src, dg_gpu_copy_span_t sp,
                                        uint32_t y, uint32_t gy, uint32_t t, uint32_t threads)
{
    uint64_t piece = (sp.bytes + gy - 1) / gy;
    piece = (piece + 7) & ~(uint64_t)7;
    uint64_t from = piece * y;
    uint64_t to = from + piece < sp.bytes ? from + piece : sp.bytes;
    char *d = dst + sp.dst;
    const char *s = src + sp.src;
    if (from >= to)
        return;
    if ((((uintptr_t)d | (uintptr_t)s | from | to) & 7u) == 0) {
        for (uint64_t i = from / 8 + t; i < to / 8; i += threads)
            ((uint64_t *)d)[i] = ((const uint64_t *)s)[i];
    } else {
        for (uint64_t i = from + t; i < to; i += threads)
            d[i] = s[i];
    }
}

#endif
