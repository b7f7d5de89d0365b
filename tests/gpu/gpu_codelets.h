/* The CUDA implementations of the suite's codelets (mr_gpu_util.h): they
 * launch the kernels of gpu_suite_kernels.cu on the task's stream. Without
 * the CUDA backend a codelet's cuda slot is NULL. */
#ifndef DG_TEST_GPU_CODELETS_H
#define DG_TEST_GPU_CODELETS_H

#include "multirank/mr_codelets.h"
#include "multirank/mr_util.h"

#ifdef DAGGER_HAVE_CUDA
/* gpu_suite_kernels.cu: 0 or the cudaError_t of the launch. */
int gpu_suite_affine_launch(void *stream, double *x, int rel, size_t n0, size_t n1, size_t s0,
                            size_t s1, double a, double b);
int gpu_suite_put3_launch(void *stream, int32_t *p, int32_t a, int32_t b, int32_t c);

static inline int gpu_cuda_launched(dagger_task_t *t, int e)
{
    return e ? dagger_task_fail(t, "CUDA kernel launch failed (cudaError_t %d)", e) : DAGGER_OK;
}

/* x = a*x + b over the selected elements of slot s, on the device. */
static inline int gpu_cuda_affine(dagger_task_t *t, dagger_slot_t s, double a, double b)
{
    /* the relations of i and j the modifier admits (all for a 1-D view) */
    int rel = s.ndims < 2 ? 7
                          : mr_in_mod(s.mod, 0, 1) | mr_in_mod(s.mod, 0, 0) << 1 |
                                mr_in_mod(s.mod, 1, 0) << 2;
    int e = gpu_suite_affine_launch(dagger_task_stream(t), s.data, rel, s.dims[0],
                                    s.ndims > 1 ? s.dims[1] : 1, s.strides[0],
                                    s.ndims > 1 ? s.strides[1] : 0, a, b);
    return gpu_cuda_launched(t, e);
}

/* The CUDA implementations of mr_gpu_util.h's codelets. A CUDA one runs
 * only on a CUDA device: the "expected a CPU" case is its whole check. */
static inline int gpu_cuda_on_device(dagger_task_t *t)
{
    if (!*(const int32_t *)dagger_task_arg(t, 1).data)
        return dagger_task_fail(t, "ran on a CUDA device, expected a CPU");
    return DAGGER_OK;
}

static inline int gpu_where_cuda(dagger_task_t *t)
{
    int e = gpu_suite_put3_launch(dagger_task_stream(t), dagger_task_arg(t, 0).data,
                                  dagger_task_rank(t), dagger_task_proc(t),
                                  dagger_task_stream(t) != NULL);
    return gpu_cuda_launched(t, e);
}

static inline int gpu_add1_cuda(dagger_task_t *t)
{
    int rc = gpu_cuda_on_device(t);
    return rc == DAGGER_OK ? gpu_cuda_affine(t, dagger_task_arg(t, 0), 1.0, 1.0) : rc;
}

static inline int gpu_scale2_cuda(dagger_task_t *t)
{
    int rc = gpu_cuda_on_device(t);
    return rc == DAGGER_OK ? gpu_cuda_affine(t, dagger_task_arg(t, 0), 2.0, 0.0) : rc;
}
#define GPU_CUDA_IMPL(fn) fn##_cuda
#else
#define GPU_CUDA_IMPL(fn) NULL
#endif

/* Registers codelet fn under its own name, with its CUDA implementation
 * (fn_cuda) when the backend is built. */
#define GPU_REG(rt, fn) gpu_reg((rt), #fn, fn, GPU_CUDA_IMPL(fn))

static inline dagger_codelet_t gpu_reg(dagger_runtime_t *rt, const char *name, dagger_impl_fn cpu,
                                       dagger_impl_fn cuda)
{
    dagger_codelet_t cl;
    MR_OK(dagger_codelet_register(
        rt, &(dagger_codelet_desc_t){.name = name, .cpu = cpu, .cuda = cuda}, &cl));
    return cl;
}

#endif
