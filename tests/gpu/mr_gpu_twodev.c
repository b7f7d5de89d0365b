/* Two test devices per rank (DAGGER_TEST_DEVICES=2): data moves between the
 * devices of one rank (host-staged in two halves) and placement over "all
 * devices" uses both. */
#include <stdio.h>

#include "gpu/mr_gpu_util.h"

static double ramp(size_t i, size_t j)
{
    return (double)(i + 100 * j);
}

Test(gpu_twodev, data_moves_between_the_devices_of_a_rank)
{
    dagger_runtime_t *rt = mr_init();
    int last = dagger_nranks(rt) - 1;
    dagger_chunk_t c = mr_chunk2(rt, 8, 8, last, ramp);
    dagger_codelet_t add1 = GPU_REG(rt, gpu_add1);
    int a = gpu_proc(rt, last, 0), b = gpu_proc(rt, last, 1);
    cr_assert(a >= 0 && b >= 0, "two test devices on rank %d", last);
    dagger_scope_t sa = gpu_scope(&a), sb = gpu_scope(&b), all = {.kinds = gpu_kind()};
    dagger_view_t v = dagger_view(rt, c);
    dagger_view_t lower = dagger_view_mod(v, DAGGER_LOWER);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, &all, &r));
    gpu_on(r, add1, v, &sa, 1);     /* whole chunk on device 0 */
    gpu_on(r, add1, lower, &sb, 1); /* its lower triangle on device 1 */
    gpu_on(r, add1, v, &sa, 1);     /* back on device 0 */
    MR_OK(dagger_region_end(r));
    double want[64];
    for (size_t k = 0; k < 64; k++)
        want[k] = ramp(k % 8, k / 8) + 2 + (k % 8 >= k / 8);
    gpu_expect(rt, c, want, 64);
    dagger_region_stats_t st;
    MR_OK(dagger_region_stats(rt, &st));
    cr_assert_gt(st.copies, 0, "copies between the rank's memory spaces");
    MR_OK(dagger_finalize(rt));
}
