/* The tile kernels and codelets of the Cholesky and gemm DAGs shared by
 * bench_linalg_tiled's StarPU reference (bench_linalg_starpu.h) and the
 * StarPU-MPI peer of its multi-rank rows (linalg_starpu_mpi.c): the same
 * OpenBLAS/LAPACKE calls, one thread each, as dagger/linalg.h's tiles
 * (trsm by halving into BLAS trsm and gemm, the library's own
 * dg_la_dtrsm_rec, which needs dg_la_blas_lib_load first). */
#ifndef BENCH_LINALG_STARPU_KERNELS_H
#define BENCH_LINALG_STARPU_KERNELS_H

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <starpu.h>

#define DG_LA_BLAS_LIB_NO_REDIRECT 1 /* this file's BLAS calls: the linked OpenBLAS */
#include "core/linalg/la_blas_lib.h"
#include "core/linalg/trsm_rec.h"

/* A task's parameters (its cl_arg, a copy freed by StarPU). */
typedef struct sp_par {
    int ta, tb, r0, kb, right, ib;
    double alpha, beta;
    lapack_int *ipiv; /* LU: the global 1-based pivots */
    double *mat;      /* solve: the factored matrix (n x n, ld n) */
} sp_par_t;

#define SP_PTR(h) ((double *)STARPU_MATRIX_GET_PTR(h))
#define SP_LD(h) ((int)STARPU_MATRIX_GET_LD(h))
#define SP_NX(h) ((int)STARPU_MATRIX_GET_NX(h))
#define SP_NY(h) ((int)STARPU_MATRIX_GET_NY(h))
#define SP_TR(t) ((t) ? CblasTrans : CblasNoTrans)

static void s_potrf(void *buf[], void *arg)
{
    (void)arg;
    if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', SP_NX(buf[0]), SP_PTR(buf[0]), SP_LD(buf[0])))
        SP_PTR(buf[0])[0] = NAN; /* the check reports it */
}

/* Cholesky's panel: B = B L^-T. */
static void s_trsm(void *buf[], void *arg)
{
    (void)arg;
    dg_la_dtrsm_rec(CblasRight, CblasLower, CblasTrans, CblasNonUnit, SP_NX(buf[1]), SP_NY(buf[1]),
                    1.0, SP_PTR(buf[0]), SP_LD(buf[0]), SP_PTR(buf[1]), SP_LD(buf[1]));
}

/* C = alpha op(A) op(A)^T + beta C, lower. */
static void s_syrk(void *buf[], void *arg)
{
    const sp_par_t *p = arg;
    int k = p->ta ? SP_NX(buf[0]) : SP_NY(buf[0]);
    cblas_dsyrk(CblasColMajor, CblasLower, SP_TR(p->ta), SP_NX(buf[1]), k, p->alpha,
                SP_PTR(buf[0]), SP_LD(buf[0]), p->beta, SP_PTR(buf[1]), SP_LD(buf[1]));
}

/* C = alpha op(A) op(B) + beta C. */
static void s_gemm(void *buf[], void *arg)
{
    const sp_par_t *p = arg;
    int k = p->ta ? SP_NX(buf[0]) : SP_NY(buf[0]);
    cblas_dgemm(CblasColMajor, SP_TR(p->ta), SP_TR(p->tb), SP_NX(buf[2]), SP_NY(buf[2]), k,
                p->alpha, SP_PTR(buf[0]), SP_LD(buf[0]), SP_PTR(buf[1]), SP_LD(buf[1]), p->beta,
                SP_PTR(buf[2]), SP_LD(buf[2]));
}

static struct starpu_codelet cl_potrf = {.cpu_funcs = {s_potrf}, .nbuffers = 1,
                                         .modes = {STARPU_RW}, .name = "potrf"};
static struct starpu_codelet cl_trsm = {.cpu_funcs = {s_trsm}, .nbuffers = 2,
                                        .modes = {STARPU_R, STARPU_RW}, .name = "trsm"};
static struct starpu_codelet cl_syrk = {.cpu_funcs = {s_syrk}, .nbuffers = 2,
                                        .modes = {STARPU_R, STARPU_RW}, .name = "syrk"};
static struct starpu_codelet cl_gemm = {.cpu_funcs = {s_gemm}, .nbuffers = 3,
                                        .modes = {STARPU_R, STARPU_R, STARPU_RW}, .name = "gemm"};

#endif
