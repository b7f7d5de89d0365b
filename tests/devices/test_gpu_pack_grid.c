/* The GPU pack kernel's arithmetic (devices/gpu/gpu_pack_piece.h), run on
 * the host: every block and thread of a launch in turn, which is one order
 * the device could take (the kernel has no barriers). Together they must
 * move every byte of every span to its place, whatever the spans' lengths,
 * alignments and number; the real kernel on a GPU is checked by
 * devices_test_cuda_backend under tools/gpu-check. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The widths of the vectors lanes moved since the last reset (bit w: w
 * bytes). A GPU faults on a misaligned vector and x86 does not, so every
 * vector path checks its alignment here. */
static unsigned widths_seen;

static void vectors_at(const char *d, const char *s, unsigned width)
{
    if (((uintptr_t)d | (uintptr_t)s) % width != 0)
        cr_assert_fail("%u-byte vectors from %p to %p", width, (const void *)s, (const void *)d);
    widths_seen |= width;
}

#define DG_GPU_PACK_VECTORS(d, s, width) vectors_at((d), (s), (width))
#include "devices/gpu/gpu_pack_piece.h"

/* Every warp of dg_gpu_pack_grid's grid, each lane in turn, over the items
 * it takes in the kernel's grid-stride loop: one launch over n runs. */
static void launch(char *dst, const char *src, const dg_gpu_copy_run_t *runs, uint32_t n,
                   uint64_t items)
{
    uint32_t blocks = dg_gpu_pack_grid(items);
    cr_assert(blocks >= 1 && blocks <= DG_PACK_MAX_BLOCKS);
    uint64_t warps = (uint64_t)blocks * DG_PACK_WARPS;
    for (uint64_t w = 0; w < warps; w++)
        for (uint64_t it = w; it < items; it += warps) {
            uint32_t r = dg_gpu_pack_find(runs, n, it);
            if (it < runs[r].first_item || it >= runs[r].first_item + runs[r].segs * runs[r].count)
                cr_assert_fail("item %llu is not in run %u", (unsigned long long)it, r);
            for (uint32_t lane = 0; lane < DG_PACK_LANES; lane++)
                dg_gpu_pack_item(dst, src, &runs[r], it - runs[r].first_item, lane);
        }
}

/* What gpu_pack (gpu_backend.inc) does with these spans: their runs, in the
 * launch's arguments when they fit, else in a table; chunked, the fallback
 * of a device without stream-ordered allocation: one launch per
 * DG_GPU_PACK_INLINE runs. Returns the number of runs. */
static uint32_t run_launch(char *dst, const char *src, const dg_gpu_copy_span_t *spans, uint32_t n,
                           int chunked)
{
    dg_gpu_copy_run_t *runs = calloc(n ? n : 1, sizeof *runs);
    uint64_t items = 0;
    uint32_t m = dg_gpu_pack_runs(spans, n, runs, &items);
    if (m > DG_GPU_PACK_INLINE && !chunked)
        launch(dst, src, runs, m, items);
    else
        for (uint32_t i = 0; i < m; i += DG_GPU_PACK_INLINE) {
            uint32_t k = m - i < DG_GPU_PACK_INLINE ? m - i : DG_GPU_PACK_INLINE;
            dg_gpu_pack_inline_t inl;
            launch(dst, src, inl.r, k, dg_gpu_pack_inline_fill(&inl, runs + i, k));
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

/* At least n + 16 bytes, 16-byte aligned (aligned_alloc's size is a
 * multiple of the alignment). */
static char *alloc16(uint64_t n)
{
    return aligned_alloc(16, (size_t)(n + 31) / 16 * 16);
}

/* Packs the n spans [at[i], at[i] + len[i]) of a source of size bytes, and
 * unpacks them into a zeroed copy: both must equal the host's own gather and
 * scatter, through the backend's launches and, when the runs do not fit in
 * one launch's arguments, its fallback too. Returns the number of runs the
 * pack made. */
static uint32_t layout_roundtrip(uint32_t n, const uint64_t *at, const uint64_t *len,
                                 uint64_t size, uint64_t seed)
{
    dg_gpu_copy_span_t *fwd = calloc(n ? n : 1, sizeof *fwd), *back = calloc(n ? n : 1, sizeof *back);
    uint64_t packed = 0;
    for (uint32_t i = 0; i < n; i++) {
        fwd[i] = dg_gpu_pack_resolve(at[i], len[i], packed, 0);
        back[i] = dg_gpu_pack_resolve(at[i], len[i], packed, 1);
        packed += len[i];
    }
    /* 16-byte aligned buffers: the spans' offsets decide the alignment */
    char *src = alloc16(size), *out = alloc16(packed);
    char *want = malloc(packed + 1), *scattered = alloc16(size);
    char *want_back = calloc(1, size + 1);
    for (uint64_t i = 0; i < size; i++)
        src[i] = (char)lcg(&seed);
    for (uint64_t i = 0, p = 0; i < n; p += len[i++]) {
        memcpy(want + p, src + at[i], len[i]);
        memcpy(want_back + at[i], src + at[i], len[i]);
    }
    uint32_t runs = 0;
    for (int chunked = 0; chunked <= (runs > DG_GPU_PACK_INLINE); chunked++) {
        memset(out, 0, packed + 16);
        memset(scattered, 0, size + 16);
        runs = run_launch(out, src, fwd, n, chunked);
        cr_assert_arr_eq(out, want, packed, "pack of %u spans (chunked %d)", n, chunked);
        cr_assert_eq(run_launch(scattered, out, back, n, chunked), runs, "unpack: the same runs");
        cr_assert_arr_eq(scattered, want_back, size, "unpack of %u spans (chunked %d)", n, chunked);
    }
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

/* rows of len bytes, stride apart, from offset first: one run, whose lanes
 * move the vectors of the widths given (bit w: w bytes) and no other. */
static void strided(uint32_t rows, uint64_t first, uint64_t len, uint64_t stride, unsigned widths)
{
    uint64_t *at = calloc(rows, sizeof *at), *lens = calloc(rows, sizeof *lens);
    for (uint32_t i = 0; i < rows; i++)
        at[i] = first + i * stride, lens[i] = len;
    widths_seen = 0;
    cr_assert_eq(layout_roundtrip(rows, at, lens, first + rows * stride, 9), 1u,
                 "%u rows of %llu bytes %llu apart: one run", rows, (unsigned long long)len,
                 (unsigned long long)stride);
    cr_assert_eq(widths_seen, widths, "%u rows of %llu bytes %llu apart from %llu", rows,
                 (unsigned long long)len, (unsigned long long)stride, (unsigned long long)first);
    free(lens);
    free(at);
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

/* A strided sub-view is one run, whatever its alignment; its lanes move
 * 16-byte vectors where source and destination are 16-aligned, 8-byte words
 * where 8-aligned, else bytes (the packed rows sit at multiples of their
 * length, so a length that is no multiple of 16 alternates them). */
Test(gpu_pack_grid, a_strided_layout_is_one_run)
{
    strided(300, 0, 2048, 8192, 16);
    strided(300, 8, 2048, 8208, 8);
    strided(300, 8, 2048, 8200, 16 | 8);      /* source rows alternate */
    strided(300, 3, 1000, 1018, 0);           /* odd sources: bytes */
    strided(300, 3, 1000, 1017, 8);           /* every 8th source 8-aligned */
    strided(17, 16, 40, 48, 16 | 8);          /* rows shorter than a warp's vectors, a tail */
    strided(3, 0, 3 * DG_PACK_SEG + 48, 4 * DG_PACK_SEG, 16); /* rows of 4 items */
    strided(3, 1, 3 * DG_PACK_SEG + 5, 4 * DG_PACK_SEG, 0);   /* odd sources, odd lengths */
    strided(5000, 32, 48, 96, 16);            /* many rows */
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
    cr_assert_eq(run_launch(&b, &a, &none, 1, 0), 0u);
    cr_assert_eq(b, 'b');
    cr_assert_eq(dg_gpu_pack_runs(&none, 1, &r, &items), 0u);
    cr_assert_eq(items, 0u);
    cr_assert_eq(dg_gpu_pack_grid(0), 1u);
}

/* The backend reads the spans into a small array and grows it when a span
 * would start a run past its end: that span is refused and nothing changes,
 * a span that continues the last run is taken, and once the array has grown
 * the refused span goes in: the runs of an array with room for all. */
Test(gpu_pack_grid, a_full_run_array_refuses_only_a_new_run)
{
    const dg_gpu_copy_span_t sp[] = {{0, 0, 10},   {100, 10, 10}, {200, 20, 10}, {420, 30, 10},
                                     {540, 40, 10}, {700, 50, 20}, {800, 70, 20}, {900, 90, 20}};
    enum { N = sizeof sp / sizeof sp[0] };
    dg_gpu_copy_run_t runs[N] = {{0}}, before[N], roomy[N];
    uint32_t m = 0, cap = 2, refused = 0;
    for (uint32_t i = 0; i < N; i++) {
        memcpy(before, runs, sizeof runs);
        if (dg_gpu_pack_run_add(runs, &m, cap, sp[i]) == 0)
            continue;
        refused++;
        cr_assert_eq(i, 5u, "only the span that starts the third run is refused");
        cr_assert_eq(m, cap);
        cr_assert_arr_eq(runs, before, m * sizeof *runs, "a refused span changes nothing");
        cap = N;
        cr_assert_eq(dg_gpu_pack_run_add(runs, &m, cap, sp[i]), 0);
    }
    cr_assert_eq(refused, 1u);
    uint64_t items = 0, roomy_items = 0;
    cr_assert_eq(dg_gpu_pack_runs(sp, N, roomy, &roomy_items), 3u);
    items = dg_gpu_pack_runs_close(runs, m);
    cr_assert_eq(m, 3u);
    cr_assert_eq(items, roomy_items);
    cr_assert_arr_eq(runs, roomy, m * sizeof *runs);
}

/* Packing gathers a span from its offset to its place in the packed buffer;
 * unpacking scatters it back. */
Test(gpu_pack_grid, pack_and_unpack_resolve_opposite_ways)
{
    dg_gpu_copy_span_t p = dg_gpu_pack_resolve(4096, 100, 300, 0);
    dg_gpu_copy_span_t u = dg_gpu_pack_resolve(4096, 100, 300, 1);
    cr_assert(p.src == 4096 && p.dst == 300 && p.bytes == 100);
    cr_assert(u.src == 300 && u.dst == 4096 && u.bytes == 100);
}

/* dg_gpu_pack_spans_add (the backend's way, strided stretches in one pass)
 * makes the same runs as dg_gpu_pack_run_add span by span, in both
 * directions, for layouts that mix strided stretches (forward and
 * backward), breaks of stride and of length, empty spans and single spans;
 * growing the run array from a small capacity on each refusal. */
static uint32_t spans_add_grown(const uint64_t *words, uint32_t n, int unpack,
                                dg_gpu_copy_run_t *out, uint64_t *packed)
{
    uint32_t m = 0, cap = 1, i = 0, refusals = 0;
    *packed = 0;
    while (dg_gpu_pack_spans_add(out, &m, cap, words, n, &i, packed, unpack)) {
        cr_assert_eq(m, cap, "refused with room left");
        cap = cap * 2 < n ? cap * 2 : n;
        refusals++;
    }
    cr_assert_eq(i, n);
    cr_assert(refusals < 32);
    return m;
}

Test(gpu_pack_grid, spans_in_one_pass_make_the_same_runs)
{
    enum { N = 3000 };
    static uint64_t words[2 * N];
    static dg_gpu_copy_span_t one_by_one[N];
    static dg_gpu_copy_run_t want[N], got[N];
    srand(7);
    for (int trial = 0; trial < 40; trial++) {
        uint32_t n = 0;
        uint64_t at = 1u << 30;
        while (n < N) {
            /* a stretch: k rows of len bytes, step apart (backward sometimes) */
            uint32_t k = 1 + (uint32_t)(rand() % (trial % 4 == 0 ? 3 : 400));
            uint64_t len = (uint64_t)(rand() % 5 == 0 ? 0 : 1 + rand() % 3000);
            int64_t step = (int64_t)len + rand() % 9000;
            if (rand() % 6 == 0)
                step = -step;
            for (uint32_t r = 0; r < k && n < N; r++, n++) {
                words[2 * n] = at;
                words[2 * n + 1] = len;
                at += (uint64_t)step;
            }
            at += (uint64_t)(rand() % 50); /* a break in stride */
        }
        for (int unpack = 0; unpack < 2; unpack++) {
            uint64_t packed_want = 0, packed_got = 0, items_want = 0;
            for (uint32_t i = 0; i < n; i++) {
                one_by_one[i] = dg_gpu_pack_resolve(words[2 * i], words[2 * i + 1], packed_want,
                                                    unpack);
                packed_want += words[2 * i + 1];
            }
            uint32_t mw = dg_gpu_pack_runs(one_by_one, n, want, &items_want);
            uint32_t mg = spans_add_grown(words, n, unpack, got, &packed_got);
            cr_assert_eq(mg, mw, "trial %d unpack %d: %u runs, want %u", trial, unpack, mg, mw);
            cr_assert_eq(packed_got, packed_want);
            cr_assert_eq(dg_gpu_pack_runs_close(got, mg), items_want);
            cr_assert_arr_eq(got, want, mw * sizeof *want, "trial %d unpack %d", trial, unpack);
        }
    }
}
