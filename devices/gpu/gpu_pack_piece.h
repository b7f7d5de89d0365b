/* The pack kernel's arithmetic: runs made from spans (on the host), the
 * launch's grid, which run an item belongs to, and which bytes of an item
 * one lane copies. Plain C that nvcc and hipcc compile as device code
 * (gpu_pack_kernel.inc defines DG_GPU_DEVICE_FN) and a host compiler as
 * ordinary functions, so tests/devices/test_gpu_pack_grid.c checks it on
 * machines without a GPU by running every item and lane of a launch in turn
 * (the kernel has no barriers, so any order is one the device could take).
 *
 * Work: each row of each run is cut into items of at most DG_PACK_SEG bytes;
 * one warp (DG_PACK_LANES lanes) copies an item, grid-stride over items.
 * A lane moves 16-byte vectors when source and destination are 16-byte
 * aligned (8-byte words when 8-aligned, bytes otherwise), DG_PACK_UNROLL
 * loads in flight before their stores; the bytes past the last whole vector
 * one per lane. */
#ifndef DG_DEV_GPU_PACK_PIECE_H
#define DG_DEV_GPU_PACK_PIECE_H

#include <stdint.h>

#include "devices/gpu/gpu_pack.h"

#ifndef DG_GPU_DEVICE_FN
#define DG_GPU_DEVICE_FN static inline
#endif

#define DG_PACK_THREADS 256u
#define DG_PACK_LANES 32u
#define DG_PACK_WARPS (DG_PACK_THREADS / DG_PACK_LANES)
/* The grid's cap; a build may set another (-DDG_PACK_MAX_BLOCKS=n in the
 * kernel's compile flags) to compare grids on a GPU. */
#ifndef DG_PACK_MAX_BLOCKS
#define DG_PACK_MAX_BLOCKS 4096u
#endif
#define DG_PACK_SEG 8192u
#define DG_PACK_UNROLL 4u

/* Called where a lane starts moving width-byte vectors from s to d. A GPU
 * faults on a misaligned vector access and x86 does not, so the host test
 * defines it to check the alignment (and to see which width was taken). */
#ifndef DG_GPU_PACK_VECTORS
#define DG_GPU_PACK_VECTORS(d, s, width) ((void)0)
#endif

typedef struct __attribute__((aligned(16))) dg_gpu_v16 {
    uint64_t x, y;
} dg_gpu_v16_t;

/* A span of bytes at offset in the unpacked buffer and packed_at in the
 * packed one, resolved for one direction: packing gathers spans into
 * consecutive bytes, unpacking scatters them back. */
static inline dg_gpu_copy_span_t dg_gpu_pack_resolve(uint64_t offset, uint64_t bytes,
                                                     uint64_t packed_at, int unpack)
{
    dg_gpu_copy_span_t c = {offset, packed_at, bytes}; /* src, dst, bytes */
    if (unpack) {
        c.src = packed_at;
        c.dst = offset;
    }
    return c;
}

/* Adds a resolved span to the runs out[0 .. *m): it continues the last run
 * when it has the run's length and sits one step on from its last row (the
 * steps are set by the run's first two rows); empty spans are left out.
 * Returns 0, or -1 when the span starts a run and *m == cap (nothing
 * changed: grow out and add it again). */
static inline int dg_gpu_pack_run_add(dg_gpu_copy_run_t *out, uint32_t *m, uint32_t cap,
                                      dg_gpu_copy_span_t sp)
{
    if (sp.bytes == 0)
        return 0;
    dg_gpu_copy_run_t *r = *m ? &out[*m - 1] : 0;
    if (r && r->bytes == sp.bytes) {
        if (r->count == 1) {
            r->src_step = sp.src - r->src;
            r->dst_step = sp.dst - r->dst;
            r->count = 2;
            return 0;
        }
        if (sp.src == r->src + r->count * r->src_step &&
            sp.dst == r->dst + r->count * r->dst_step) {
            r->count++;
            return 0;
        }
    }
    if (*m == cap)
        return -1;
    dg_gpu_copy_run_t fresh = {sp.src, sp.dst, sp.bytes, 1, 0, 0, 0, 0};
    out[(*m)++] = fresh;
    return 0;
}

/* Cuts the m runs into items (segs, first_item); returns the items. */
static inline uint64_t dg_gpu_pack_runs_close(dg_gpu_copy_run_t *out, uint32_t m)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < m; i++) {
        out[i].segs = (out[i].bytes + DG_PACK_SEG - 1) / DG_PACK_SEG;
        out[i].first_item = total;
        total += out[i].segs * out[i].count;
    }
    return total;
}

/* The runs of n resolved spans at once (out holds n entries): their number,
 * and *items. */
static inline uint32_t dg_gpu_pack_runs(const dg_gpu_copy_span_t *sp, uint32_t n,
                                        dg_gpu_copy_run_t *out, uint64_t *items)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        (void)dg_gpu_pack_run_add(out, &m, n, sp[i]);
    *items = dg_gpu_pack_runs_close(out, m);
    return m;
}

/* Adds spans *i .. n-1 to the runs out[0 .. *m), resolved for one direction
 * and packed one after another from *packed_at (both advance). sp holds
 * each span as two words, offset then bytes (dg_dev_span_t's layout). Once
 * a run has two rows, the spans that go on at its length and step are taken
 * in one pass, without resolving each: a strided view of many rows costs
 * a compare per row. The runs are those dg_gpu_pack_run_add makes span by
 * span. Returns 0, or -1 when span *i needs a new run and *m == cap (grow
 * out and call again). */
static inline int dg_gpu_pack_spans_add(dg_gpu_copy_run_t *out, uint32_t *m, uint32_t cap,
                                        const uint64_t *sp, uint32_t n, uint32_t *i,
                                        uint64_t *packed_at, int unpack)
{
    while (*i < n) {
        uint64_t off = sp[2 * (uint64_t)*i], len = sp[2 * (uint64_t)*i + 1];
        if (dg_gpu_pack_run_add(out, m, cap, dg_gpu_pack_resolve(off, len, *packed_at, unpack)))
            return -1;
        *packed_at += len;
        (*i)++;
        dg_gpu_copy_run_t *r = *m ? &out[*m - 1] : 0;
        if (!r || len == 0 || r->count < 2)
            continue;
        /* The span just added ended r, whose packed side steps by len. */
        uint64_t step = unpack ? r->dst_step : r->src_step, next = off + step;
        uint32_t j = *i;
        while (j < n && sp[2 * (uint64_t)j] == next && sp[2 * (uint64_t)j + 1] == len) {
            next += step;
            j++;
        }
        r->count += j - *i;
        *packed_at += (uint64_t)(j - *i) * len;
        *i = j;
    }
    return 0;
}

/* Puts n (1 .. DG_GPU_PACK_INLINE) closed runs into a launch's arguments,
 * their items counted from the first one's (a launch's items start at 0);
 * returns their items. */
static inline uint64_t dg_gpu_pack_inline_fill(dg_gpu_pack_inline_t *inl,
                                               const dg_gpu_copy_run_t *runs, uint32_t n)
{
    uint64_t base = runs[0].first_item;
    for (uint32_t i = 0; i < n; i++) {
        inl->r[i] = runs[i];
        inl->r[i].first_item -= base;
    }
    return runs[n - 1].first_item + runs[n - 1].segs * runs[n - 1].count - base;
}

/* Blocks of DG_PACK_THREADS for a launch of items items (at least 1). */
static inline uint32_t dg_gpu_pack_grid(uint64_t items)
{
    uint64_t blocks = (items + DG_PACK_WARPS - 1) / DG_PACK_WARPS;
    return blocks < 1 ? 1u : blocks < DG_PACK_MAX_BLOCKS ? (uint32_t)blocks : DG_PACK_MAX_BLOCKS;
}

/* The run that item belongs to: the last whose first_item <= item. */
DG_GPU_DEVICE_FN uint32_t dg_gpu_pack_find(const dg_gpu_copy_run_t *runs, uint32_t n,
                                           uint64_t item)
{
    uint32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (runs[mid].first_item <= item)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* In dg_gpu_pack_item: the lane's share of the item's words of type T
 * (width bytes; d and s aligned to it), DG_PACK_UNROLL loads in flight
 * before their stores; done becomes the bytes the words cover. */
#define DG_PACK_WORDS(T, width)                                                \
    do {                                                                       \
        DG_GPU_PACK_VECTORS(d, s, width);                                      \
        const T *sw = (const T *)s;                                            \
        T *dw = (T *)d;                                                        \
        uint64_t nw = len / (width);                                           \
        for (; i + 3 * L < nw; i += DG_PACK_UNROLL * L) {                      \
            T a = sw[i], b = sw[i + L], c = sw[i + 2 * L], e = sw[i + 3 * L];  \
            dw[i] = a, dw[i + L] = b, dw[i + 2 * L] = c, dw[i + 3 * L] = e;    \
        }                                                                      \
        for (; i < nw; i += L)                                                 \
            dw[i] = sw[i];                                                     \
        done = nw * (width);                                                   \
    } while (0)

/* Lane `lane` of the warp that copies item k of run r (k counted from the
 * run's first item). */
DG_GPU_DEVICE_FN void dg_gpu_pack_item(char *dst, const char *src, const dg_gpu_copy_run_t *r,
                                       uint64_t k, uint32_t lane)
{
    uint64_t row = k / r->segs, from = (k - row * r->segs) * DG_PACK_SEG;
    uint64_t len = r->bytes - from < DG_PACK_SEG ? r->bytes - from : DG_PACK_SEG;
    /* The offsets are summed as unsigned numbers first: a backward step
     * wraps there (defined), never in the pointer (undefined). */
    char *d = dst + (r->dst + row * r->dst_step + from);
    const char *s = src + (r->src + row * r->src_step + from);
    uint64_t done = 0, i = lane;
    const uint64_t L = DG_PACK_LANES;
    if ((((uintptr_t)d | (uintptr_t)s) & 15u) == 0)
        DG_PACK_WORDS(dg_gpu_v16_t, 16);
    else if ((((uintptr_t)d | (uintptr_t)s) & 7u) == 0)
        DG_PACK_WORDS(uint64_t, 8);
    for (i = done + lane; i < len; i += L)
        d[i] = s[i];
}
#undef DG_PACK_WORDS

#endif
