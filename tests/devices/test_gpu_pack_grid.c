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

/* What a launch with dg_gpu_pack_grid's grid does, block by block. */
static void run_launch(char *dst, const char *src, const dg_gpu_copy_span_t *spans, uint32_t n)
{
    uint64_t max_bytes = 0;
    uint32_t gx, gy;
    for (uint32_t i = 0; i < n; i++)
        max_bytes = spans[i].bytes > max_bytes ? spans[i].bytes : max_bytes;
    dg_gpu_pack_grid(n, max_bytes, &gx, &gy);
    cr_assert(gx >= 1 && gx <= DG_PACK_MAX_X && gy >= 1 && gy <= DG_PACK_MAX_Y);
    for (uint32_t bx = 0; bx < gx; bx++)
        for (uint32_t i = bx; i < n; i += gx)
            for (uint32_t y = 0; y < gy; y++)
                for (uint32_t t = 0; t < DG_PACK_THREADS; t++)
                    dg_gpu_pack_piece(dst, src, spans[i], y, gy, t, DG_PACK_THREADS);
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

/* Packs n spans (lengths from len_of) at offsets of any alignment, with
 * gaps between them, and unpacks them into a zeroed copy: both must equal
 * the host's own gather and scatter. */
static void spans_roundtrip(uint32_t n, len_fn len_of, uint64_t maxlen, uint64_t seed)
{
    dg_gpu_copy_span_t *fwd = calloc(n, sizeof *fwd), *back = calloc(n, sizeof *back);
    uint64_t at = 0, packed = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t len = len_of(i, &seed, maxlen);
        at += lcg(&seed) % 13;
        fwd[i] = (dg_gpu_copy_span_t){.src = at, .dst = packed, .bytes = len};
        back[i] = (dg_gpu_copy_span_t){.src = packed, .dst = at, .bytes = len};
        at += len;
        packed += len;
    }
    char *src = malloc(at + 1), *out = calloc(1, packed + 1), *want = malloc(packed + 1);
    char *scattered = calloc(1, at + 1), *want_back = calloc(1, at + 1);
    for (uint64_t i = 0; i < at; i++)
        src[i] = (char)lcg(&seed);
    for (uint32_t i = 0; i < n; i++) {
        memcpy(want + fwd[i].dst, src + fwd[i].src, fwd[i].bytes);
        memcpy(want_back + fwd[i].src, src + fwd[i].src, fwd[i].bytes);
    }
    run_launch(out, src, fwd, n);
    cr_assert_arr_eq(out, want, packed, "pack of %u spans (%llu)", n, (unsigned long long)maxlen);
    run_launch(scattered, out, back, n);
    cr_assert_arr_eq(scattered, want_back, at, "unpack of %u spans", n);
    free(want_back);
    free(scattered);
    free(want);
    free(out);
    free(src);
    free(back);
    free(fwd);
}

static void roundtrip(uint32_t n, uint64_t maxlen, uint64_t seed)
{
    spans_roundtrip(n, random_len, maxlen, seed);
}

Test(gpu_pack_grid, short_spans_of_any_alignment)
{
    roundtrip(100, 40, 1);
}

Test(gpu_pack_grid, more_spans_than_blocks_in_x)
{
    roundtrip(DG_PACK_MAX_X * 2 + 7, 24, 2);
}

Test(gpu_pack_grid, long_spans_cut_into_pieces)
{
    roundtrip(5, 3 * DG_PACK_PIECE + 5, 3);
}

/* 64 lengths past one and past two pieces (2 and 3 blocks a span): each
 * remainder of a block's share, which is rounded to whole words. */
Test(gpu_pack_grid, lengths_across_piece_boundaries)
{
    spans_roundtrip(64, sweep_len, DG_PACK_PIECE + 1, 5);
    spans_roundtrip(64, sweep_len, 2 * DG_PACK_PIECE + 1, 6);
}

Test(gpu_pack_grid, a_span_longer_than_every_piece_together)
{
    /* more than DG_PACK_MAX_Y pieces: the pieces grow instead */
    roundtrip(2, DG_PACK_PIECE * DG_PACK_MAX_Y * 2 + 11, 4);
}

Test(gpu_pack_grid, empty_spans_and_no_spans)
{
    dg_gpu_copy_span_t none = {.src = 0, .dst = 0, .bytes = 0};
    char a = 'a', b = 'b';
    run_launch(&b, &a, &none, 1);
    cr_assert_eq(b, 'b');
    uint32_t gx, gy;
    dg_gpu_pack_grid(0, 0, &gx, &gy);
    cr_assert_eq(gy, 1u);
}
