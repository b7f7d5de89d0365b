/* The stencil codelets' CUDA implementations, internal: what the pack,
 * extend and sweep codelets (st_cuda_pack.c, st_cuda_sweep.c) share. Built
 * only with the CUDA backend (DAGGER_HAVE_CUDA); codelets.c registers them
 * as the codelets' cuda slots (declared in stencil_internal.h). A task's
 * view arguments are device pointers; its by-value parameters are in host
 * memory, read here to fill the kernels' parameters. */
#ifndef DG_ARRAY_CUDA_ST_CUDA_H
#define DG_ARRAY_CUDA_ST_CUDA_H

#include <cuda_runtime_api.h>

/* The kernels' declarations before their redirections below, and the CUDA
 * runtime's routines, redirected to the table that the backend loaded. */
#include "core/array/cuda/st_cuda_kernels.h"
#include "core/array/stencil_internal.h"
#include "devices/cuda/cuda_lib.h"

/* The kernels' launchers are in the module libdagger-cuda.so that the CUDA
 * backend loaded (devices/cuda/cuda_lib.h): a table filled by dlsym on its
 * handle, each launcher's name redirected to its field. */
#define DG_ST_CUDA_SYMS(X) X(dg_st_cuda_boxes) X(dg_st_cuda_extend) X(dg_st_cuda_expr)

typedef struct dg_st_cuda_lib {
#define DG_ST_CUDA_FIELD(name) __typeof__(&name) name;
    DG_ST_CUDA_SYMS(DG_ST_CUDA_FIELD)
#undef DG_ST_CUDA_FIELD
} dg_st_cuda_lib_t;

/* Filled by dg_st_cuda_load; read only after it returned 0. */
extern dg_st_cuda_lib_t dg_st_cu;

/* Fills dg_st_cu from the module, once per process: 0, or the task fails
 * saying what is missing (each codelet calls it before its first launch). */
int dg_st_cuda_load(dagger_task_t *t);

#ifndef DG_ST_CUDA_NO_REDIRECT
#define dg_st_cuda_boxes (dg_st_cu.dg_st_cuda_boxes)
#define dg_st_cuda_extend (dg_st_cu.dg_st_cuda_extend)
#define dg_st_cuda_expr (dg_st_cu.dg_st_cuda_expr)
#endif

/* The task's stream (dagger_task_stream) as CUDA's. */
static inline cudaStream_t dg_st_cuda_stream(dagger_task_t *t)
{
    return (cudaStream_t)dagger_task_stream(t);
}

/* 0 when e is cudaSuccess, else the task fails naming what was queued. */
int dg_st_cuda_ok(dagger_task_t *t, cudaError_t e, const char *what);

/* The box that copies src (NULL: fills with p's pad value) into d, as the
 * CPU pack does: d and src are slots of the same extents and dtype. */
void dg_st_cuda_box(dg_st_box_t *b, const dagger_slot_t *d, const dagger_slot_t *src,
                    const dg_st_pack_param_t *p);

#endif
