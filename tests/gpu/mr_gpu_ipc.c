/* Device-to-device transfers between ranks of one node through IPC handles
 * (DAGGER_GPU_IPC, on by default; ctest also runs it with 0): the same
 * results either way; with IPC on every such transfer is sent and received
 * through a handle (counted by the memory-space actors), none host-staged,
 * and a handle opened once is kept for the next transfer that reuses its
 * block; transfers between a device and host memory stay host-staged. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "devices/testdev/testdev.h"
#include "gpu/mr_gpu_dev.h"

static double ramp(size_t i, size_t j)
{
    return (double)(5 * i + 3 * j);
}

typedef struct counts {
    uint64_t sent, received, opened, staged;
} counts_t;

/* The device counters summed over the ranks, once every rank's receivers
 * gave back the blocks they were lent (the blocks go back to the senders'
 * caches, where the next transfers of their size find them). */
static counts_t counts(dagger_runtime_t *rt)
{
    dg_dev_t *d = gpu_dev_under_test(rt);
    for (int settled = 0; !settled;) {
        time_t t0 = time(NULL);
        while (atomic_load(&d->ipc_lent) && time(NULL) - t0 < 20)
            sched_yield();
        cr_assert_eq(atomic_load(&d->ipc_lent), 0, "rank %d: receivers kept %llu blocks for 20 s",
                     dagger_rank(rt), (unsigned long long)atomic_load(&d->ipc_lent));
        uint64_t lent = 0;
        MR_OK(dagger_allreduce(rt, &lent, 1, DAGGER_U64, DAGGER_OP_ADD));
        settled = lent == 0;
    }
    uint64_t c[4] = {atomic_load(&d->ipc_sent), atomic_load(&d->ipc_received),
                     atomic_load(&d->ipc_opened), atomic_load(&d->staged)};
    MR_OK(dagger_allreduce(rt, c, 4, DAGGER_U64, DAGGER_OP_ADD));
    return (counts_t){c[0], c[1], c[2], c[3]};
}

/* gpu_run_chain (mr_gpu_util.h), the sub-view from (2, 3). */
static void run_chain(dagger_runtime_t *rt, size_t m, size_t n, int sub)
{
    const size_t lo[2] = {2, 3}, ext[2] = {m - 5, n - 4};
    gpu_run_chain(rt, m, n, sub, lo, ext, ramp);
}

static int ipc_on(void)
{
    const char *env = getenv("DAGGER_GPU_IPC");
    return !env || strcmp(env, "0") != 0;
}

Test(gpu_ipc, device_data_between_ranks_goes_through_handles_and_arrives_whole)
{
    dagger_runtime_t *rt = mr_init();
    int nr = dagger_nranks(rt);
    const struct {
        size_t m, n;
        int sub;
    } cases[] = {
        {16, 16, 0},   /* 2 KiB, one span */
        {40, 33, 1},   /* a strided sub-view: packed, unpacked */
        {512, 520, 0}, /* 2 MiB */
        {700, 300, 1}, /* 1.6 MiB sub-view, 296 spans */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        counts_t b = counts(rt);
        run_chain(rt, cases[i].m, cases[i].n, cases[i].sub);
        counts_t a = counts(rt);
        /* device to device between ranks: one move per step for the whole
         * chunk; a sub-view step can need two (the sub-view and the rest) */
        uint64_t moves = (uint64_t)(nr - 1), got = a.received - b.received;
        cr_assert_eq(a.sent - b.sent, got, "case %zu: sent and received through handles differ",
                     i);
        if (!ipc_on())
            cr_assert_eq(a.received, 0, "case %zu: DAGGER_GPU_IPC=0, yet a handle was used", i);
        else if (cases[i].sub)
            cr_assert_geq(got, moves, "case %zu: %llu moves through handles, want at least %llu",
                          i, (unsigned long long)got, (unsigned long long)moves);
        else
            cr_assert_eq(got, moves, "case %zu: %llu moves through handles, want %llu", i,
                         (unsigned long long)got, (unsigned long long)moves);
        if (nr > 1) /* device to rank 0's host, host to the last device: staged */
            cr_assert_gt(a.staged, b.staged, "case %zu: nothing was host-staged", i);
    }
    MR_OK(dagger_finalize(rt));
}

/* The second identical round reuses every block and every opened handle. */
Test(gpu_ipc, a_handle_opened_once_serves_the_next_transfers_of_its_block)
{
    dagger_runtime_t *rt = mr_init();
    int nr = dagger_nranks(rt);
    counts_t b = counts(rt);
    run_chain(rt, 96, 64, 0);
    counts_t mid = counts(rt);
    run_chain(rt, 96, 64, 0);
    counts_t a = counts(rt);
    if (!ipc_on() || nr == 1) {
        cr_assert_eq(a.opened, 0, "no handle opened");
    } else {
        cr_assert_eq(mid.opened - b.opened, mid.received - b.received,
                     "round 1: one open per transfer (each to a new receiver)");
        cr_assert_eq(a.received - mid.received, (uint64_t)(nr - 1), "round 2 went through handles");
        cr_assert_eq(a.opened, mid.opened, "round 2 opened %llu handles: it should reuse all",
                     (unsigned long long)(a.opened - mid.opened));
    }
    MR_OK(dagger_finalize(rt));
}

/* A receiver that cannot open a handle (injected on the last rank): the
 * region fails on every rank naming what failed and the setting that
 * avoids it, nothing hangs, the block goes back to its sender, and the
 * next region works. */
Test(gpu_ipc, a_handle_that_cannot_be_opened_fails_the_region_everywhere)
{
    dagger_runtime_t *rt = mr_init();
    int nr = dagger_nranks(rt);
    if (nr == 1 || !ipc_on() || gpu_kind() != DAGGER_PROC_TESTDEV) {
        MR_OK(dagger_finalize(rt));
        cr_skip_test("needs 2+ ranks, IPC on and test devices (the fault is the test kind's)");
    }
    if (dagger_rank(rt) == nr - 1)
        dg_testdev_ipc_fail_open(1);
    dagger_chunk_t c = mr_chunk2(rt, 32, 8, 0, ramp);
    dagger_codelet_t add1 = GPU_REG(rt, gpu_add1);
    dagger_scope_t all = {.kinds = gpu_kind()};
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, &all, &r));
    gpu_add1_steps(rt, r, add1, dagger_view(rt, c), dagger_view(rt, c));
    dagger_status_t st = dagger_region_end(r);
    cr_assert_neq(st, DAGGER_OK, "rank %d: the region succeeded", dagger_rank(rt));
    cr_assert(strstr(dagger_error_detail(), "opening the sender's IPC handle failed") &&
                  strstr(dagger_error_detail(), "DAGGER_GPU_IPC=0"),
              "rank %d: %s", dagger_rank(rt), dagger_error_detail());
    dg_testdev_ipc_fail_open(0);
    counts(rt); /* every lent block came back */
    MR_OK(dagger_chunk_free(rt, c));
    run_chain(rt, 24, 20, 1); /* and the runtime goes on */
    MR_OK(dagger_finalize(rt));
}
