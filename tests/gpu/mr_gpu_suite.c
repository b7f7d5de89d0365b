/* The seeds' GPU suite on the test device kind, 1..4 ranks (each rank has
 * DAGGER_TEST_DEVICES=1): devices visible per rank and uniform, scope
 * dispatch, cross-rank and mixed CPU/device dataflow, modifier chains on
 * device data. */
#include <stdio.h>

#include "gpu/mr_gpu_util.h"

static double fill_ij(size_t i, size_t j)
{
    return (double)(i + 10 * j);
}

Test(gpu, devices_visible_per_rank_and_uniform)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt);
    dagger_proc_info_t p[256];
    int np = dagger_procs(rt, p, 256);
    int per_rank[64] = {0};
    for (int i = 0; i < np; i++)
        if (p[i].kind == gpu_kind())
            per_rank[p[i].rank]++;
    for (int r = 0; r < n; r++)
        cr_assert_eq(per_rank[r], 1, "rank %d has %d %ss", r, per_rank[r], gpu_kind_name());
    /* every rank sees the same table */
    int mine[256 * 3], root[256 * 3];
    for (int i = 0; i < np; i++) {
        mine[3 * i] = p[i].rank;
        mine[3 * i + 1] = (int)p[i].kind;
        mine[3 * i + 2] = p[i].index;
    }
    memcpy(root, mine, sizeof(int) * 3 * (size_t)np);
    MR_OK(dagger_bcast(rt, root, sizeof(int) * 3 * (size_t)np, 0));
    cr_assert_arr_eq(root, mine, sizeof(int) * 3 * (size_t)np);
    MR_OK(dagger_finalize(rt));
}

/* Runs gpu_where once in scope s (inside an outer region scope) and
 * returns what it recorded. */
static void where(dagger_runtime_t *rt, const dagger_scope_t *s, int32_t out[3])
{
    dagger_chunk_desc_t d = {.dtype = DAGGER_I32, .ndims = 1, .dims = {3}, .owner = 0};
    dagger_chunk_t c;
    MR_OK(dagger_chunk_create(rt, &d, &c));
    dagger_codelet_t cl = GPU_REG(rt, gpu_where);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    dagger_arg_t a = DAGGER_OUT(dagger_view(rt, c));
    dagger_task_opts_t o = {.scope = s};
    MR_OK(dagger_submit(r, cl, 1, &a, &o, NULL, NULL));
    MR_OK(dagger_region_end(r));
    mr_gather(rt, c, out, 3 * sizeof(int32_t));
    MR_OK(dagger_chunk_free(rt, c));
}

Test(gpu, scope_dispatch)
{
    dagger_runtime_t *rt = mr_init();
    int last = dagger_nranks(rt) - 1;
    int32_t w[3];
    /* a rank's device */
    int dev_last = gpu_proc(rt, last, 0);
    dagger_scope_t s = gpu_scope(&dev_last);
    where(rt, &s, w);
    cr_assert(w[0] == last && w[1] == dev_last && w[2] == 1, "ran on rank %d proc %d stream %d",
              w[0], w[1], w[2]);
    /* a rank list with devices */
    s = (dagger_scope_t){.ranks = (const int[]){last}, .nranks = 1, .kinds = gpu_kind()};
    where(rt, &s, w);
    cr_assert(w[0] == last && w[1] == dev_last && w[2] == 1);
    /* all devices: owner computes (the chunk is rank 0's) on its device */
    s = (dagger_scope_t){.kinds = gpu_kind()};
    where(rt, &s, w);
    cr_assert(w[0] == 0 && w[1] == gpu_proc(rt, 0, 0) && w[2] == 1);
    /* a union of the CPUs of rank 0 and the device of the last rank */
    s = DAGGER_SCOPE_UNION(DAGGER_SCOPE_RANK(0), gpu_scope(&dev_last));
    where(rt, &s, w);
    /* owner computes on rank 0; within a rank a device the scope admits
     * comes first (alone, rank 0 is the last rank) */
    cr_assert(w[0] == 0 && w[2] == (last == 0), "rank %d, stream %d", w[0], w[2]);
    /* ...and a union of the last rank's CPUs and rank 0's device */
    int dev0 = gpu_proc(rt, 0, 0);
    s = DAGGER_SCOPE_UNION(DAGGER_SCOPE_RANK(last), gpu_scope(&dev0));
    where(rt, &s, w);
    cr_assert(w[0] == 0 && w[1] == dev0 && w[2] == 1);
    /* the default stays CPU-only */
    where(rt, NULL, w);
    cr_assert_eq(w[2], 0);
    MR_OK(dagger_finalize(rt));
}

Test(gpu, cross_rank_device_dataflow)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), r1 = n > 1 ? 1 : 0;
    dagger_chunk_t c = mr_chunk2(rt, 8, 8, 0, fill_ij);
    dagger_codelet_t add1 = GPU_REG(rt, gpu_add1);
    dagger_codelet_t scale2 = GPU_REG(rt, gpu_scale2);
    int d1 = gpu_proc(rt, r1, 0), d0 = gpu_proc(rt, 0, 0);
    dagger_scope_t all = {.kinds = gpu_kind()};
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, &all, &r));
    dagger_scope_t s1 = gpu_scope(&d1), s0 = gpu_scope(&d0);
    gpu_on(r, add1, dagger_view(rt, c), &s1, 1);
    gpu_on(r, scale2, dagger_view(rt, c), &s0, 1);
    MR_OK(dagger_region_end(r));
    double want[64];
    for (size_t k = 0; k < 64; k++)
        want[k] = (fill_ij(k % 8, k / 8) + 1) * 2;
    gpu_expect(rt, c, want, 64);
    MR_OK(dagger_finalize(rt));
}

Test(gpu, mixed_cpu_device_dataflow_in_one_region)
{
    dagger_runtime_t *rt = mr_init();
    int last = dagger_nranks(rt) - 1;
    dagger_chunk_t c = mr_chunk2(rt, 8, 4, last, fill_ij);
    dagger_codelet_t add1 = GPU_REG(rt, gpu_add1);
    dagger_codelet_t scale2 = GPU_REG(rt, gpu_scale2);
    int d0 = gpu_proc(rt, 0, 0);
    dagger_scope_t dev = gpu_scope(&d0);
    dagger_scope_t outer = DAGGER_SCOPE_UNION(DAGGER_SCOPE_RANK(last), gpu_scope(&d0));
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, &outer, &r));
    gpu_on(r, add1, dagger_view(rt, c), &dev, 1);                 /* device */
    /* CPU: a task scope without kinds inside a region that admits devices
     * could take one; name the kind */
    dagger_scope_t cpu = {.ranks = (const int[]){last}, .nranks = 1, .kinds = DAGGER_PROC_CPU};
    gpu_on(r, scale2, dagger_view(rt, c), &cpu, 0);
    gpu_on(r, add1, dagger_view(rt, c), &dev, 1);                 /* device again */
    MR_OK(dagger_region_end(r));
    double want[32];
    for (size_t k = 0; k < 32; k++)
        want[k] = (fill_ij(k % 8, k / 8) + 1) * 2 + 1;
    gpu_expect(rt, c, want, 32);
    MR_OK(dagger_finalize(rt));
}

/* Sub-views and triangular modifiers on device data: strided spans move
 * packed (the device's pack kernel) and only the selected elements change. */
Test(gpu, subview_and_triangular_chains_on_device_data)
{
    dagger_runtime_t *rt = mr_init();
    int last = dagger_nranks(rt) - 1;
    dagger_chunk_t c = mr_chunk2(rt, 8, 8, 0, fill_ij);
    dagger_codelet_t add1 = GPU_REG(rt, gpu_add1);
    dagger_codelet_t scale2 = GPU_REG(rt, gpu_scale2);
    int dl = gpu_proc(rt, last, 0), d0 = gpu_proc(rt, 0, 0);
    dagger_scope_t sl = gpu_scope(&dl), s0 = gpu_scope(&d0);
    dagger_scope_t all = {.kinds = gpu_kind()};
    dagger_view_t v = dagger_view(rt, c);
    dagger_view_t sub = dagger_view_sub(v, (const size_t[]){2, 1}, (const size_t[]){4, 5});
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, &all, &r));
    gpu_on(r, add1, sub, &sl, 1);                               /* rows 2-5, cols 1-5 */
    gpu_on(r, scale2, dagger_view_mod(v, DAGGER_UPPER), &s0, 1); /* i <= j */
    gpu_on(r, add1, dagger_view_mod(sub, DAGGER_LOWER), &sl, 1); /* in sub: i >= j */
    MR_OK(dagger_region_end(r));
    double want[64];
    for (size_t k = 0; k < 64; k++) {
        size_t i = k % 8, j = k / 8;
        int in_sub = i >= 2 && i < 6 && j >= 1 && j < 6;
        want[k] = (fill_ij(i, j) + in_sub) * (i <= j ? 2 : 1) + (in_sub && i - 2 >= j - 1);
    }
    gpu_expect(rt, c, want, 64);
    MR_OK(dagger_finalize(rt));
}

Test(gpu, a_device_scope_where_none_exists_is_a_scope_error_everywhere)
{
    dagger_runtime_t *rt = mr_init();
    dagger_region_t *r;
    dagger_proc_kind_t missing = gpu_missing_kind(rt);
    cr_assert(missing != 0, "every rank has both CUDA and HIP devices: no kind is missing");
    dagger_scope_t cuda = {.kinds = missing};
    cr_assert_eq(dagger_region_begin(rt, &cuda, &r), DAGGER_ERR_SCOPE, "%s",
                 dagger_error_detail());
    dagger_codelet_t cl = GPU_REG(rt, gpu_where);
    dagger_chunk_desc_t d = {.dtype = DAGGER_I32, .ndims = 1, .dims = {3}, .owner = 0};
    dagger_chunk_t c;
    MR_OK(dagger_chunk_create(rt, &d, &c));
    MR_OK(dagger_region_begin(rt, NULL, &r));
    dagger_arg_t a = DAGGER_OUT(dagger_view(rt, c));
    dagger_task_opts_t o = {.scope = &cuda};
    cr_assert_eq(dagger_submit(r, cl, 1, &a, &o, NULL, NULL), DAGGER_ERR_SCOPE);
    char want[64];
    snprintf(want, sizeof(want), "no rank has a device of kind %s",
             missing == DAGGER_PROC_HIP ? "HIP" : "CUDA");
    cr_assert(strstr(dagger_error_detail(), want), "%s", dagger_error_detail());
    MR_OK(dagger_region_end(r));
    MR_OK(dagger_finalize(rt));
}
