/* What the bench_gpu_* programs share: a monotonic clock, a comparison for
 * medians, and failing loudly. Define BENCH_NAME (the program's name, for
 * messages) before including it. */
#ifndef DG_BENCH_GPU_COMMON_H
#define DG_BENCH_GPU_COMMON_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <dagger.h>

static double mono(void)
{
    struct timespec ts = {0, 0};
    return clock_gettime(CLOCK_MONOTONIC, &ts) ? 0 : (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void die(const char *what, const char *why)
{
    fprintf(stderr, "%s: %s: %s\n", BENCH_NAME, what, why);
    exit(1);
}

/* A Dagger-C call, a CUDA runtime call: any failure ends the program. */
#define OK(call) \
    do { if ((call) != DAGGER_OK) die(#call, dagger_error_detail()); } while (0)
#define CU(call) \
    do { cudaError_t e_ = (call); if (e_ != cudaSuccess) die(#call, cudaGetErrorString(e_)); } while (0)

#endif
