/* The CUDA tile codelets (cuBLAS, cuSOLVER), internal: per-stream library
 * handles and the pinned slots through which cuSOLVER's info reaches the
 * task's completion check. Built only with the CUDA backend (DAGGER_HAVE_CUDA
 * and cuBLAS/cuSOLVER found: DAGGER_HAVE_CUDA_LINALG). */
#ifndef DG_LINALG_CUDA_H
#define DG_LINALG_CUDA_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "core/linalg/cuda/la_cuda_lib.h"
#include "core/linalg/linalg_internal.h"

/* The handles bound to the task's stream (dagger_task_stream) on the current
 * device, created on the stream's first tile task and kept for the process
 * (creating them costs milliseconds and allocates device memory: never per
 * task). The first call of the process loads cuBLAS and cuSOLVER
 * (la_cuda_lib.h): every tile calls this before any routine of theirs. Fails
 * the task, naming the call or the library, when they cannot be had. */
int dg_la_cuda_handles(dagger_task_t *t, cublasHandle_t *blas, cusolverDnHandle_t *solver);

/* Reads the slots and parameters of a tile task with nviews views (no
 * OpenBLAS thread setting: nothing runs on the host), after loading the
 * libraries' tables (la_cuda_lib.h), which the tiles' kernels of ours are
 * called through even where no cuBLAS routine is. */
int dg_la_cuda_load(dagger_task_t *t, int nviews, dagger_slot_t s[], dg_la_par_t *p);

/* A cuBLAS call's status: 0 when it succeeded, else the task fails naming
 * what (the routine) and cuBLAS's message. */
int dg_la_cublas_ok(dagger_task_t *t, cublasStatus_t st, const char *what);

/* A factorisation's info, in page-locked host memory: cuSOLVER writes info
 * to device memory, the task's stream copies it here after the routine,
 * and the completion check (dagger_task_after) reads it once the stream's work
 * passed. par says what the message names (tile step, first row). */
typedef struct dg_la_info {
    int info;                  /* written by the device copy */
    int routine;               /* DG_LA_CL_POTRF or DG_LA_CL_GETRF */
    dg_la_par_t par;
    struct dg_la_info *next;   /* the free list */
} dg_la_info_t;

/* A free slot (NULL, with the task failed, when the pool is exhausted or
 * cannot be allocated). */
dg_la_info_t *dg_la_info_get(dagger_task_t *t);
/* The completion check of a slot (a dagger_task_check_fn): gives it back and
 * reports a positive info the way the CPU kernels do. */
int dg_la_info_check(void *arg, int ok, char *detail, size_t cap);

#endif
