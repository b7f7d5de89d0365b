/* The GPU pack kernel's arithmetic (devices/gpu/gpu_pack_piece.h), run on
 * the host: every block and thread of a launch in turn, which is one order
 * the device could take (the kernel has no barriers). Together they must
 * move every byte of every span to its place, whatever the spans' lengths,
 * alignments and number; the real kernel on a GPU is checked by
 * devices_test_cuda_backend under tools/gpu-check. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "devices/gpu/gpu_pack_piece.h"

/* What a launch over these spans does: the runs the backend makes of them
 * (gpu_backend.inc), then every warp of dg_gpu_pack_grid's grid, each lane
 * in turn, over the items it takes in the kernel's grid-stride loop. */
static uint32_t run_launch(char *dst, const char *src, const dg_gpu_copy_span_t *spans, uint32_t n)
{
    dg_gpu_copy_run_t *runs = calloc(n ? n : 1, sizeof *runs);
    uint64_t items = 0;
    uint32_t m = dg_gpu_pack_runs(spans, n, runs, &items);
    uint32_t blocks = dg_gpu_pack_grid(items);
    cr_assert(blocks >= 1 && blocks <= DG_PACK_MAX_BLOCKS);
    uint64_t warps = (uint64_t)blocks * DG_PACK_WARPS;
    for (uint64_t w = 0; w < warps; w++)
        for (uint64_t it = w; it < items; it += warps) {
            uint32_t r = dg_gpu_pack_find(runs, m, it);
            cr_assert(it >= runs[r].first_item &&
                      it < runs[r].first_item + runs[r].segs * runs[r].count);
            for (uint32_t lane = 0; lane < DG_PACK_LANES; lane++)
                dg_gpu_pack_item(dst, src, &runs[r], it - runs[r].first_item, lane);
        }
    free(runs);
    return m;
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 33;
}

/* Span lengths: random up to arg, or arg + i (a sweep across a boundary). */
typedef uint64_t (*len_fn)(uint32_t i, uint64_t *seed, uint64_t arg);

static uint64_t random_len(uint32_t i, uint64_t *seed, uint64_t arg)
{
    return lcg(seed) % (arg + 1);
}

static uint64_t sweep_len(uint32_t i, uint64_t *seed, uint64_t arg)
{
    return arg + i;
}

/* Packs the n spans [at[i], at[i] + len[i]) of a source of size bytes, and
 * unpacks them into a zeroed copy: both must equal the host's own gather and
 * scatter. Returns the number of runs the pack made. */
static uint32_t layout_roundtrip(uint32_t n, const uint64_t *at, const uint64_t *len,
                                 uint64_t size, uint64_t seed)
{
    dg_gpu_copy_span_t *fwd = calloc(n ? n : 1, sizeof *fwd), *back = calloc(n ? n : 1, sizeof *back);
    uint64_t packed = 0;
    for (uint32_t i = 0; i < n; i++) {
        fwd[i] = (dg_gpu_copy_span_t){.src = at[i], .dst = packed, .bytes = len[i]};
        back[i] = (dg_gpu_copy_span_t){.src = packed, .dst = at[i], .bytes = len[i]};
        packed += len[i];
    }
    /* 16-byte aligned buffers: the spans' offsets decide the alignment */
    char *src = aligned_alloc(16, size + 16), *out = aligned_alloc(16, packed + 16);
    char *want = malloc(packed + 1), *scattered = aligned_alloc(16, size + 16);
    char *want_back = calloc(1, size + 1);
    memset(out, 0, packed + 16);
    memset(scattered, 0, size + 16);
    for (uint64_t i = 0; i < size; i++)
        src[i] = (char)lcg(&seed);
    for (uint32_t i = 0; i < n; i++) {
        memcpy(want + fwd[i].dst, src + fwd[i].src, fwd[i].bytes);
        memcpy(want_back + fwd[i].src, src + fwd[i].src, fwd[i].bytes);
    }
    uint32_t runs = run_launch(out, src, fwd, n);
    cr_assert_arr_eq(out, want, packed, "pack of %u spans", n);
    cr_assert_eq(run_launch(scattered, out, back, n), runs, "unpack: the same runs");
    cr_assert_arr_eq(scattered, want_back, size, "unpack of %u spans", n);
    free(want_back);
    free(scattered);
    free(want);
    free(out);
    free(src);
    free(back);
    free(fwd);
    return runs;
}

/* n spans (lengths from len_of) at offsets of any alignment, with gaps. */
static uint32_t spans_roundtrip(uint32_t n, len_fn len_of, uint64_t maxlen, uint64_t seed)
{
    uint64_t *at = calloc(n, sizeof *at), *len = calloc(n, sizeof *len), pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        len[i] = len_of(i, &seed, maxlen);
        pos += lcg(&seed) % 13;
        at[i] = pos;
        pos += len[i];
    }
    uint32_t runs = layout_roundtrip(n, at, len, pos, seed);
    free(len);
    free(at);
    return runs;
}

static void roundtrip(uint32_t n, uint64_t maxlen, uint64_t seed)
{
    spans_roundtrip(n, random_len, maxlen, seed);
}

/* rows of len bytes, stride apart, from offset first: one run */
static uint32_t strided(uint32_t rows, uint64_t first, uint64_t len, uint64_t stride)
{
    uint64_t *at = calloc(rows, sizeof *at), *lens = calloc(rows, sizeof *lens);
    for (uint32_t i = 0; i < rows; i++)
        at[i] = first + i * stride, lens[i] = len;
    uint32_t runs = layout_roundtrip(rows, at, lens, first + rows * stride, 9);
    free(lens);
    free(at);
    return runs;
}

Test(gpu_pack_grid, short_spans_of_any_alignment)
{
    roundtrip(100, 40, 1);
}

Test(gpu_pack_grid, more_items_than_warps_in_the_grid)
{
    roundtrip(DG_PACK_MAX_BLOCKS * DG_PACK_WARPS + 77, 24, 2);
}

Test(gpu_pack_grid, long_spans_cut_into_segments)
{
    roundtrip(5, 3 * DG_PACK_SEG + 5, 3);
}

/* 64 lengths past one and past two segments (2 and 3 items a row): each
 * remainder of a row's last item, with and without whole vectors. */
Test(gpu_pack_grid, lengths_across_segment_boundaries)
{
    spans_roundtrip(64, sweep_len, DG_PACK_SEG + 1, 5);
    spans_roundtrip(64, sweep_len, 2 * DG_PACK_SEG - 31, 6);
}

/* A strided sub-view is one run, whatever its alignment: 16-byte vectors,
 * 8-byte words, bytes; rows shorter than a warp's vectors, and rows of
 * several segments. */
Test(gpu_pack_grid, a_strided_layout_is_one_run)
{
    cr_assert_eq(strided(300, 0, 2048, 8192), 1u);     /* 16-aligned */
    cr_assert_eq(strided(300, 8, 2048, 8200), 1u);     /* 8-aligned rows */
    cr_assert_eq(strided(300, 3, 1000, 1017), 1u);     /* bytes */
    cr_assert_eq(strided(17, 16, 40, 48), 1u);         /* vectors and a tail */
    cr_assert_eq(strided(3, 0, 3 * DG_PACK_SEG + 48, 4 * DG_PACK_SEG), 1u);
    cr_assert_eq(strided(5000, 32, 48, 96), 1u);       /* many rows */
}

/* A triangle's columns all differ in length: one run each, more than fit in
 * the launch's arguments (the table path). */
Test(gpu_pack_grid, a_triangle_is_one_run_per_column)
{
    enum { N = 100 };
    uint64_t at[N], len[N];
    for (uint32_t j = 0; j < N; j++)
        at[j] = (uint64_t)j * N * 8 + j * 8, len[j] = (uint64_t)(N - j) * 8;
    cr_assert_eq(layout_roundtrip(N, at, len, (uint64_t)N * N * 8, 7), (uint32_t)N);
    cr_assert_gt(N, DG_GPU_PACK_INLINE);
}

/* A run ends where the stride or the length changes; empty spans are left
 * out without ending it. */
Test(gpu_pack_grid, a_break_in_stride_or_length_starts_a_new_run)
{
    uint64_t at[] = {0, 100, 200, 300, 420, 540, 700, 800, 800, 900};
    uint64_t len[] = {10, 10, 10, 10, 10, 10, 20, 20, 0, 20};
    /* runs: 0-300 (step 100), 420-540 (step 120), 700-900 (length 20) */
    cr_assert_eq(layout_roundtrip(10, at, len, 1000, 8), 3u);
    uint64_t back_at[] = {500, 400, 300, 200}, back_len[] = {16, 16, 16, 16};
    cr_assert_eq(layout_roundtrip(4, back_at, back_len, 600, 8), 1u); /* backwards */
}

Test(gpu_pack_grid, empty_spans_and_no_spans)
{
    dg_gpu_copy_span_t none = {.src = 0, .dst = 0, .bytes = 0};
    dg_gpu_copy_run_t r;
    uint64_t items = 1;
    char a = 'a', b = 'b';
    cr_assert_eq(run_launch(&b, &a, &none, 1), 0u);
    cr_assert_eq(b, 'b');
    cr_assert_eq(dg_gpu_pack_runs(&none, 1, &r, &items), 0u);
    cr_assert_eq(items, 0u);
    cr_assert_eq(dg_gpu_pack_grid(0), 1u);
}
