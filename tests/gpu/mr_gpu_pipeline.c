/* Host-staged transfers of device data between ranks in pieces
 * (DAGGER_GPU_PIPELINE_PIECE; ctest sets 64 KiB, DAGGER_GPU_DIRECT=0):
 * sizes below, at, just above and many times a piece, with odd remainders
 * (a last piece small enough to go eagerly), and strided sub-views that
 * are packed; between devices of different ranks, from a device to a
 * rank's host memory and from host memory to a device. Every element is
 * checked, and the device counters say which transfers went in pieces and
 * that staging one piece overlapped the wire of another. */
#include <stdio.h>
#include <stdlib.h>

#include "gpu/mr_gpu_dev.h"

#define PIECE 65536 /* bytes: DAGGER_GPU_PIPELINE_PIECE as ctest sets it */

static double ramp(size_t i, size_t j)
{
    return (double)(3 * i + 7 * j);
}

typedef struct counts {
    uint64_t piped, pieces, overlapped;
} counts_t;

/* The device counters summed over the ranks. */
static counts_t counts(dagger_runtime_t *rt)
{
    dg_dev_t *d = gpu_dev_under_test(rt);
    uint64_t c[3] = {atomic_load(&d->piped), atomic_load(&d->pieces), atomic_load(&d->overlapped)};
    MR_OK(dagger_allreduce(rt, c, 3, DAGGER_U64, DAGGER_OP_ADD));
    return (counts_t){c[0], c[1], c[2]};
}

/* gpu_run_chain (mr_gpu_util.h), the sub-view from (3, 5). */
static void run_chain(dagger_runtime_t *rt, size_t m, size_t n, int sub)
{
    const size_t lo[2] = {3, 5}, ext[2] = {m > 8 ? m - 8 : m, n > 9 ? n - 9 : n};
    gpu_run_chain(rt, m, n, sub, lo, ext, ramp);
}

/* Transfers of at most one piece go whole, larger ones in pieces. */
Test(gpu_pipeline, sizes_around_a_piece_arrive_byte_for_byte)
{
    dagger_runtime_t *rt = mr_init();
    int nr = dagger_nranks(rt);
    const struct {
        size_t m, n;
        int sub, pieced;
    } cases[] = {
        {4000, 1, 0, 0},           /* below a piece */
        {PIECE / 8, 1, 0, 0},      /* exactly one piece: whole */
        {PIECE / 8 + 1, 1, 0, 1},  /* just above: a piece and 8 bytes (eager) */
        {7 * PIECE / 8 + 13, 1, 0, 1}, /* 7 pieces and an odd remainder */
        {301, 97, 1, 1},           /* a strided sub-view: packed on the device */
        {65, 65, 1, 0},            /* a small strided sub-view: whole, packed */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        counts_t before = counts(rt);
        run_chain(rt, cases[i].m, cases[i].n, cases[i].sub);
        counts_t after = counts(rt);
        if (nr == 1 || !cases[i].pieced)
            cr_assert_eq(after.piped, before.piped, "case %zu (%zu x %zu) went in pieces", i,
                         cases[i].m, cases[i].n);
        else
            cr_assert_gt(after.piped, before.piped, "case %zu (%zu x %zu) did not go in pieces",
                         i, cases[i].m, cases[i].n);
    }
    dg_exec_t *ex = rt->tasks->exec;
    cr_assert_eq(atomic_load(&ex->bufs.outside_owner_turn), 0,
                 "every allocation and release inside its memory-space actor's turn");
    MR_OK(dagger_finalize(rt));
}

/* A large transfer goes in many pieces, and its pieces overlap: a piece was
 * being copied to pinned memory while another was on the wire (or copied
 * to the device while another still arrived). */
Test(gpu_pipeline, a_large_transfer_overlaps_staging_and_the_wire)
{
    dagger_runtime_t *rt = mr_init();
    int nr = dagger_nranks(rt);
    counts_t before = counts(rt);
    size_t m = 32 * PIECE / 8 + 5; /* 32 pieces and 40 bytes */
    run_chain(rt, m, 1, 0);
    counts_t after = counts(rt);
    if (nr == 1) {
        cr_assert_eq(after.pieces, before.pieces, "one rank: nothing leaves");
    } else {
        /* nr - 1 moves between devices (33 pieces sent, 33 received),
         * two from a device to host memory (33 sent), one from host memory
         * to a device (one whole piece received) */
        uint64_t want = (uint64_t)(nr - 1) * 66 + 66 + 1;
        cr_assert_geq(after.pieces - before.pieces, want, "%llu pieces, want at least %llu",
                      (unsigned long long)(after.pieces - before.pieces),
                      (unsigned long long)want);
        cr_assert_gt(after.overlapped, before.overlapped,
                     "no piece was staged while another was on the wire");
    }
    MR_OK(dagger_finalize(rt));
}
