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

/* A kind the run does not use, for the "no such device" test: HIP on a CUDA
 * run (tools/gpu-check builds without HIP), else CUDA. */
static inline dagger_proc_kind_t gpu_missing_kind(void)
{
    return gpu_kind() == DAGGER_PROC_CUDA ? DAGGER_PROC_HIP : DAGGER_PROC_CUDA;
}

#endif
