/* cuBLAS and cuSOLVER, loaded by the first CUDA tile task instead of at
 * process start. Linked, they made every program that links libdagger run
 * their constructors, relocations and destructors whether or not it ever
 * ran a tile on a GPU: about 100M of the 157M instructions of a program
 * that only calls dagger_init and dagger_finalize (callgrind; docs/linalg.md,
 * "GPUs"). Each routine the tiles call is a field of one table filled by
 * dlsym, and the routine's name is redirected to its field below, so the
 * tile code calls cuBLAS and cuSOLVER by their own names. A routine used
 * without a row here is an undefined reference when a program links
 * libdagger (the libraries are no longer linked): add the row and its
 * redirection. */
#ifndef DG_LINALG_CUDA_LIB_H
#define DG_LINALG_CUDA_LIB_H

#include <stddef.h>

#include <cublas_v2.h>
#include <cusolverDn.h>

/* The CUDA runtime's routines, redirected to the loaded table, and our
 * kernels' declarations, before their redirections below. */
#include "core/linalg/cuda/la_cuda_kernels.h"
#include "devices/cuda/cuda_lib.h"

/* The real (exported) names: cublas_v2.h maps cublasDgemm to cublasDgemm_v2. */
#define DG_LA_CUBLAS_SYMS(X)                                                              \
    X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasGetStatusString) \
    X(cublasDgemm_v2) X(cublasSgemm_v2) X(cublasDgemv_v2) X(cublasSgemv_v2)               \
    X(cublasDsyrk_v2) X(cublasSsyrk_v2) X(cublasDtrsm_v2) X(cublasStrsm_v2)               \
    X(cublasDtrmm_v2) X(cublasStrmm_v2) X(cublasDgeam) X(cublasSgeam)
#define DG_LA_CUSOLVER_SYMS(X)                                                    \
    X(cusolverDnCreate) X(cusolverDnSetStream) X(cusolverDnDpotrf)                \
    X(cusolverDnSpotrf) X(cusolverDnDpotrf_bufferSize) X(cusolverDnSpotrf_bufferSize) \
    X(cusolverDnDgetrf) X(cusolverDnSgetrf) X(cusolverDnDgetrf_bufferSize)         \
    X(cusolverDnSgetrf_bufferSize)

/* The launchers of our kernels (la_cuda_kernels.h), in the module that the
 * CUDA backend loaded (devices/cuda/cuda_lib.h). */
#define DG_LA_CUDA_KERNEL_SYMS(X) \
    X(dg_la_cuda_pivots) X(dg_la_cuda_laswp) X(dg_la_cuda_qr_panel) X(dg_la_cuda_unit_lower)

typedef struct dg_la_cuda_lib {
#define DG_LA_FIELD(name) __typeof__(&name) name;
    DG_LA_CUBLAS_SYMS(DG_LA_FIELD)
    DG_LA_CUSOLVER_SYMS(DG_LA_FIELD)
    DG_LA_CUDA_KERNEL_SYMS(DG_LA_FIELD)
#undef DG_LA_FIELD
} dg_la_cuda_lib_t;

extern dg_la_cuda_lib_t dg_la_cu;

/* Loads both libraries and every routine of the table, once per process
 * (later calls return the first call's result), the kernels' launchers
 * from the CUDA backend's module when it is loaded (a CUDA tile runs only
 * on a device that the backend found, so it is; tests that load cuBLAS and
 * cuSOLVER alone leave them NULL). 0, or -1 with what is missing (the
 * library or routine, and dlerror's words) in why. */
int dg_la_cuda_lib_load(char *why, size_t cap);

#ifndef DG_LA_CUDA_LIB_NO_REDIRECT
#define cublasCreate_v2 (dg_la_cu.cublasCreate_v2)
#define cublasDestroy_v2 (dg_la_cu.cublasDestroy_v2)
#define cublasSetStream_v2 (dg_la_cu.cublasSetStream_v2)
#define cublasGetStatusString (dg_la_cu.cublasGetStatusString)
#define cublasDgemm_v2 (dg_la_cu.cublasDgemm_v2)
#define cublasSgemm_v2 (dg_la_cu.cublasSgemm_v2)
#define cublasDgemv_v2 (dg_la_cu.cublasDgemv_v2)
#define cublasSgemv_v2 (dg_la_cu.cublasSgemv_v2)
#define cublasDsyrk_v2 (dg_la_cu.cublasDsyrk_v2)
#define cublasSsyrk_v2 (dg_la_cu.cublasSsyrk_v2)
#define cublasDtrsm_v2 (dg_la_cu.cublasDtrsm_v2)
#define cublasStrsm_v2 (dg_la_cu.cublasStrsm_v2)
#define cusolverDnCreate (dg_la_cu.cusolverDnCreate)
#define cusolverDnSetStream (dg_la_cu.cusolverDnSetStream)
#define cusolverDnDpotrf (dg_la_cu.cusolverDnDpotrf)
#define cusolverDnSpotrf (dg_la_cu.cusolverDnSpotrf)
#define cusolverDnDpotrf_bufferSize (dg_la_cu.cusolverDnDpotrf_bufferSize)
#define cusolverDnSpotrf_bufferSize (dg_la_cu.cusolverDnSpotrf_bufferSize)
#define cublasDtrmm_v2 (dg_la_cu.cublasDtrmm_v2)
#define cublasStrmm_v2 (dg_la_cu.cublasStrmm_v2)
#define cublasDgeam (dg_la_cu.cublasDgeam)
#define cublasSgeam (dg_la_cu.cublasSgeam)
#define cusolverDnDgetrf (dg_la_cu.cusolverDnDgetrf)
#define cusolverDnSgetrf (dg_la_cu.cusolverDnSgetrf)
#define cusolverDnDgetrf_bufferSize (dg_la_cu.cusolverDnDgetrf_bufferSize)
#define cusolverDnSgetrf_bufferSize (dg_la_cu.cusolverDnSgetrf_bufferSize)
#define dg_la_cuda_pivots (dg_la_cu.dg_la_cuda_pivots)
#define dg_la_cuda_laswp (dg_la_cu.dg_la_cuda_laswp)
#define dg_la_cuda_qr_panel (dg_la_cu.dg_la_cuda_qr_panel)
#define dg_la_cuda_unit_lower (dg_la_cu.dg_la_cuda_unit_lower)
#endif

#endif
