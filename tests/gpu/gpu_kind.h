/* The device kind the suite in tests/gpu runs on: test devices by default
 * (DAGGER_TEST_DEVICES, set by ctest), CUDA devices when DG_GPU_SUITE=cuda
 * (tools/gpu-check on a GPU machine, ctest -L cuda). */
#ifndef DG_TEST_GPU_KIND_H
#define DG_TEST_GPU_KIND_H

#include <stdlib.h>
#include <string.h>

#include <dagger.h>

static inline dagger_proc_kind_t gpu_kind(void)
{
    const char *s = getenv("DG_GPU_SUITE");
    return s && strcmp(s, "cuda") == 0 ? DAGGER_PROC_CUDA : DAGGER_PROC_TESTDEV;
}

/* In messages: never "GPU" for a test device. */
static inline const char *gpu_kind_name(void)
{
    return gpu_kind() == DAGGER_PROC_CUDA ? "CUDA device" : "test device";
}

/* A device kind that no rank of the job has, for the "no such device" test:
 * of HIP and CUDA (in that order: tools/gpu-check builds without HIP), the
 * first whose count in the processor table is 0. 0 when the job has both
 * (the test then says it cannot run). On a GPU machine the test-device suite
 * sees the real CUDA devices too, so the kind must be looked up, not assumed. */
static inline dagger_proc_kind_t gpu_missing_kind(dagger_runtime_t *rt)
{
    static const dagger_proc_kind_t cand[] = {DAGGER_PROC_HIP, DAGGER_PROC_CUDA};
    int n = dagger_procs(rt, NULL, 0);
    dagger_proc_info_t *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
    if (!p)
        return 0;
    n = dagger_procs(rt, p, n);
    dagger_proc_kind_t found = 0;
    for (size_t c = 0; c < sizeof cand / sizeof cand[0] && !found; c++) {
        int have = 0;
        for (int i = 0; i < n; i++)
            have += p[i].kind == cand[c];
        if (!have)
            found = cand[c];
    }
    free(p);
    return found;
}

#endif
