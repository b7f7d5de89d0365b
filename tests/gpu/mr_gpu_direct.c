/* Transfers of device data between ranks, host-staged (DAGGER_GPU_DIRECT=0,
 * the default for test devices) or direct (=1): the same results, and the
 * setting decides the path (counted by the device's memory-space actor).
 * Every allocation and task ran inside its owner actor's turn. */
#include <stdio.h>

#include "gpu/mr_gpu_dev.h"

static double ramp(size_t i, size_t j)
{
    return (double)(3 * i + j);
}

/* add1 on every rank's device in turn (rank order), then scale2 on rank 0's:
 * each step moves the chunk (strided sub-view) between two ranks' devices. */
Test(gpu_direct, device_data_moves_between_ranks_by_the_chosen_path)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt);
    const char *env = getenv("DAGGER_GPU_DIRECT");
    int want_direct = env && strcmp(env, "1") == 0;
    dg_exec_t *ex = rt->tasks->exec;
    dg_dev_t *dev = gpu_dev_under_test(rt);
    cr_assert_eq(dev->direct, want_direct, "DAGGER_GPU_DIRECT=%s", env ? env : "unset");
    dagger_chunk_t c = mr_chunk2(rt, 16, 16, 0, ramp);
    dagger_codelet_t add1 = GPU_REG(rt, gpu_add1);
    dagger_codelet_t scale2 = GPU_REG(rt, gpu_scale2);
    dagger_view_t v = dagger_view(rt, c);
    dagger_view_t sub = dagger_view_sub(v, (const size_t[]){3, 2}, (const size_t[]){9, 11});
    dagger_scope_t all = {.kinds = gpu_kind()};
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, &all, &r));
    gpu_add1_steps(rt, r, add1, v, sub);
    int d0 = gpu_proc(rt, 0, 0);
    dagger_scope_t s0 = gpu_scope(&d0);
    gpu_on(r, scale2, sub, &s0, 1);
    MR_OK(dagger_region_end(r));
    double want[256];
    for (size_t k = 0; k < 256; k++) {
        size_t i = k % 16, j = k / 16;
        int in_sub = i >= 3 && i < 12 && j >= 2 && j < 13;
        double x = ramp(i, j);
        for (int step = 0; step < n; step++)
            x += step % 2 == 0 || in_sub;
        want[k] = in_sub ? 2 * x : x;
    }
    gpu_expect(rt, c, want, 256);
    uint64_t staged = atomic_load(&dev->staged);
    uint64_t all_staged = staged;
    MR_OK(dagger_allreduce(rt, &all_staged, 1, DAGGER_U64, DAGGER_OP_ADD));
    if (want_direct || n == 1)
        cr_assert_eq(all_staged, 0, "no transfer is host-staged");
    else
        cr_assert_gt(all_staged, 0, "device data between ranks goes through pinned host memory");
    cr_assert_eq(atomic_load(&ex->bufs.outside_owner_turn), 0,
                 "every allocation and release inside its memory-space actor's turn");
    cr_assert_eq(atomic_load(&ex->tasks_outside), 0, "every task inside a processor's turn");
    MR_OK(dagger_finalize(rt));
}
