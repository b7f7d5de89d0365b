/* Helpers of the device tests (tests/gpu): they run on the test device
 * kind (DAGGER_TEST_DEVICES, set by ctest) where a machine has no GPU. */
#ifndef DG_TEST_MR_GPU_UTIL_H
#define DG_TEST_MR_GPU_UTIL_H

#include <stdlib.h>

#include "multirank/mr_codelets.h"
#include "multirank/mr_util.h"
#include "gpu/gpu_codelets.h"
#include "gpu/gpu_kind.h"

/* The global id of device `index` of rank r; a test failure naming what is
 * missing when there is none. */
static inline int gpu_proc(dagger_runtime_t *rt, int r, int index)
{
    dagger_proc_info_t p[256];
    int n = dagger_procs(rt, p, 256);
    for (int i = 0; i < n && i < 256; i++)
        if (p[i].rank == r && p[i].kind == gpu_kind() && p[i].index == index)
            return p[i].id;
    cr_assert_fail("rank %d has no %s %d (%s)", r, gpu_kind_name(), index,
                   gpu_kind() == DAGGER_PROC_CUDA ? "DG_GPU_SUITE=cuda needs a GPU on every rank"
                                                  : "DAGGER_TEST_DEVICES=N gives each rank N");
    return -1;
}

/* Device tasks see their stream; CPU tasks do not. The codelet records
 * where it ran into an i32 chunk of 3: rank, processor, stream seen. */
static inline int gpu_where(dagger_task_t *t)
{
    int32_t *p = dagger_task_arg(t, 0).data;
    p[0] = dagger_task_rank(t);
    p[1] = dagger_task_proc(t);
    p[2] = dagger_task_stream(t) != NULL;
    return DAGGER_OK;
}

/* add1 and scale2 that also check where they run: arg 1 is the i32 the
 * task expects for "on a device" (1) or "on a CPU" (0). */
static inline int gpu_check_kind(dagger_task_t *t)
{
    int want = *(const int32_t *)dagger_task_arg(t, 1).data;
    if ((dagger_task_stream(t) != NULL) != want)
        return dagger_task_fail(t, "ran on a %s, expected a %s",
                                dagger_task_stream(t) ? gpu_kind_name() : "CPU",
                                want ? gpu_kind_name() : "CPU");
    return DAGGER_OK;
}

static inline int gpu_add1(dagger_task_t *t)
{
    int rc = gpu_check_kind(t);
    if (rc == DAGGER_OK)
        mr_affine(dagger_task_arg(t, 0), 1.0, 1.0);
    return rc;
}

static inline int gpu_scale2(dagger_task_t *t)
{
    int rc = gpu_check_kind(t);
    if (rc == DAGGER_OK)
        mr_affine(dagger_task_arg(t, 0), 2.0, 0.0);
    return rc;
}

/* Submits fn on view v (InOut) in scope s, telling it whether it should
 * land on a device. */
static inline void gpu_on(dagger_region_t *r, dagger_codelet_t cl, dagger_view_t v,
                          const dagger_scope_t *s, int32_t on_device)
{
    dagger_arg_t a[2] = {DAGGER_INOUT(v), DAGGER_VALUE(&on_device, sizeof(on_device))};
    dagger_task_opts_t o = {.scope = s};
    MR_OK(dagger_submit(r, cl, 2, a, &o, NULL, NULL));
}

static inline dagger_scope_t gpu_scope(int *id)
{
    return (dagger_scope_t){.procs = id, .nprocs = 1, .kinds = gpu_kind()};
}

/* The chunk's n doubles equal want[] on every rank. */
static inline void gpu_expect(dagger_runtime_t *rt, dagger_chunk_t c, const double *want, size_t n)
{
    double got[256];
    cr_assert_leq(n, 256);
    mr_gather(rt, c, got, n * sizeof(double));
    for (size_t k = 0; k < n; k++)
        cr_assert_eq(got[k], want[k], "element %zu: %g, want %g", k, got[k], want[k]);
}

/* add1 on every rank's device in rank order, on v at even steps and on sv
 * at odd ones: each step moves (part of) the chunk between two ranks'
 * devices. */
static inline void gpu_add1_steps(dagger_runtime_t *rt, dagger_region_t *r, dagger_codelet_t add1,
                                  dagger_view_t v, dagger_view_t sv)
{
    for (int k = 0; k < dagger_nranks(rt); k++) {
        int dk = gpu_proc(rt, k, 0);
        dagger_scope_t s = gpu_scope(&dk);
        gpu_on(r, add1, k % 2 ? sv : v, &s, 1);
    }
}

/* A chain of steps on one m x n chunk of doubles (element (i, j) starts as
 * ramp(i, j)), home on rank 0's host memory: add1 on every rank's device in
 * rank order (device to device between ranks; odd steps on the sub-view
 * [lo, lo + ext) when sub), add1 on rank 0's CPU on the sub-view (device to
 * host), scale2 on the last rank's device (host to device), and home again
 * at region end. Checks every element on every rank. */
static inline void gpu_run_chain(dagger_runtime_t *rt, size_t m, size_t n, int sub,
                                 const size_t lo_sub[2], const size_t ext_sub[2],
                                 double (*ramp)(size_t, size_t))
{
    int nr = dagger_nranks(rt), last = nr - 1;
    size_t lo[2] = {0, 0}, ext[2] = {m, n};
    if (sub)
        lo[0] = lo_sub[0], lo[1] = lo_sub[1], ext[0] = ext_sub[0], ext[1] = ext_sub[1];
    dagger_chunk_t c = mr_chunk2(rt, m, n, 0, ramp);
    dagger_codelet_t add1 = GPU_REG(rt, gpu_add1);
    dagger_codelet_t scale2 = GPU_REG(rt, gpu_scale2);
    dagger_view_t v = dagger_view(rt, c);
    dagger_view_t sv = sub ? dagger_view_sub(v, lo, ext) : v;
    dagger_scope_t all = {.kinds = DAGGER_PROC_CPU | gpu_kind()};
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, &all, &r));
    gpu_add1_steps(rt, r, add1, v, sv);
    int zero = 0;
    dagger_scope_t cpu = {.ranks = &zero, .nranks = 1, .kinds = DAGGER_PROC_CPU};
    gpu_on(r, add1, sv, &cpu, 0);
    int dl = gpu_proc(rt, last, 0);
    dagger_scope_t sl = gpu_scope(&dl);
    gpu_on(r, scale2, v, &sl, 1);
    MR_OK(dagger_region_end(r));
    size_t total = m * n, bad = 0, first = 0;
    double *got = malloc(total * sizeof(double)), want_first = 0;
    cr_assert(got);
    mr_gather(rt, c, got, total * sizeof(double));
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < m; i++) {
            int in = i >= lo[0] && i < lo[0] + ext[0] && j >= lo[1] && j < lo[1] + ext[1];
            double x = ramp(i, j);
            for (int k = 0; k < nr; k++)
                x += k % 2 == 0 || in;
            x = 2 * (x + in);
            if (got[i + j * m] != x && !bad++) {
                first = i + j * m;
                want_first = x;
            }
        }
    cr_assert_eq(bad, 0, "%zu x %zu%s on %d ranks: %zu elements wrong, the first at %zu: %g, "
                 "want %g", m, n, sub ? " (sub-view)" : "", nr, bad, first, got[first],
                 want_first);
    free(got);
    MR_OK(dagger_chunk_free(rt, c));
}

#endif
