/* OpenBLAS and LAPACKE, loaded by the first CPU tile task instead of at
 * process start. Linked, every program that links libdagger loaded them and
 * their dependencies (libgfortran, the reference LAPACK wrappers) and ran
 * OpenBLAS's constructor, which starts its thread pool: about 11 ms of a
 * singleton dagger_init + dagger_finalize that otherwise takes about 60 ms,
 * and threads that compete with the runtime's workers for the cores
 * (docs/linalg.md, "Dependencies"). Each routine the tiles call is a field of
 * one table filled by dlsym, and the routine's name is redirected to its
 * field below, so the tile code calls them by their own names. A routine
 * used without a row here is an undefined reference when a program links
 * libdagger: add the row and its redirection. */
#ifndef DG_LINALG_LA_BLAS_LIB_H
#define DG_LINALG_LA_BLAS_LIB_H

#include <stddef.h>

#include <cblas.h>
#include <lapacke.h>

#define DG_LA_OPENBLAS_SYMS(X)                                                          \
    X(openblas_get_num_threads) X(openblas_set_num_threads) X(cblas_dgemm) X(cblas_sgemm) \
    X(cblas_dgemv) X(cblas_sgemv) X(cblas_dsyrk) X(cblas_ssyrk) X(cblas_dtrsm) X(cblas_strsm)
#define DG_LA_LAPACKE_SYMS(X)                                                          \
    X(LAPACKE_dpotrf_work) X(LAPACKE_spotrf_work) X(LAPACKE_dgetrf_work)               \
    X(LAPACKE_sgetrf_work) X(LAPACKE_dlaswp_work) X(LAPACKE_slaswp_work)               \
    X(LAPACKE_dgeqrt_work) X(LAPACKE_sgeqrt_work) X(LAPACKE_dgemqrt_work)              \
    X(LAPACKE_sgemqrt_work) X(LAPACKE_dtpqrt_work) X(LAPACKE_stpqrt_work)              \
    X(LAPACKE_dtpmqrt_work) X(LAPACKE_stpmqrt_work)

typedef struct dg_la_blas_lib {
#define DG_LA_FIELD(name) __typeof__(&name) name;
    DG_LA_OPENBLAS_SYMS(DG_LA_FIELD)
    DG_LA_LAPACKE_SYMS(DG_LA_FIELD)
#undef DG_LA_FIELD
} dg_la_blas_lib_t;

extern dg_la_blas_lib_t dg_la_blas;

/* Loads both libraries and every routine of the table, once per process
 * (later calls return the first call's result). 0, or -1 with what is
 * missing (the library or routine, and dlerror's words) in why. */
int dg_la_blas_lib_load(char *why, size_t cap);

#ifndef DG_LA_BLAS_LIB_NO_REDIRECT
#define openblas_get_num_threads (dg_la_blas.openblas_get_num_threads)
#define openblas_set_num_threads (dg_la_blas.openblas_set_num_threads)
#define cblas_dgemm (dg_la_blas.cblas_dgemm)
#define cblas_sgemm (dg_la_blas.cblas_sgemm)
#define cblas_dgemv (dg_la_blas.cblas_dgemv)
#define cblas_sgemv (dg_la_blas.cblas_sgemv)
#define cblas_dsyrk (dg_la_blas.cblas_dsyrk)
#define cblas_ssyrk (dg_la_blas.cblas_ssyrk)
#define cblas_dtrsm (dg_la_blas.cblas_dtrsm)
#define cblas_strsm (dg_la_blas.cblas_strsm)
#define LAPACKE_dpotrf_work (dg_la_blas.LAPACKE_dpotrf_work)
#define LAPACKE_spotrf_work (dg_la_blas.LAPACKE_spotrf_work)
#define LAPACKE_dgetrf_work (dg_la_blas.LAPACKE_dgetrf_work)
#define LAPACKE_sgetrf_work (dg_la_blas.LAPACKE_sgetrf_work)
#define LAPACKE_dlaswp_work (dg_la_blas.LAPACKE_dlaswp_work)
#define LAPACKE_slaswp_work (dg_la_blas.LAPACKE_slaswp_work)
#define LAPACKE_dgeqrt_work (dg_la_blas.LAPACKE_dgeqrt_work)
#define LAPACKE_sgeqrt_work (dg_la_blas.LAPACKE_sgeqrt_work)
#define LAPACKE_dgemqrt_work (dg_la_blas.LAPACKE_dgemqrt_work)
#define LAPACKE_sgemqrt_work (dg_la_blas.LAPACKE_sgemqrt_work)
#define LAPACKE_dtpqrt_work (dg_la_blas.LAPACKE_dtpqrt_work)
#define LAPACKE_stpqrt_work (dg_la_blas.LAPACKE_stpqrt_work)
#define LAPACKE_dtpmqrt_work (dg_la_blas.LAPACKE_dtpmqrt_work)
#define LAPACKE_stpmqrt_work (dg_la_blas.LAPACKE_stpmqrt_work)
#endif

#endif
