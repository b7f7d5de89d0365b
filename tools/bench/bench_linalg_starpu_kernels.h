/* The tile kernels and codelets shared by bench_linalg_tiled's StarPU
 * reference (bench_linalg_starpu.h, bench_linalg_starpu_fact.h) and the
 * StarPU-MPI peer of its multi-rank rows (linalg_starpu_mpi.c): Cholesky,
 * gemm and syrk tiles, LU's update right of the panel, and tiled QR's
 * geqrt, gemqrt, tpqrt and tpmqrt; the same
 * OpenBLAS/LAPACKE calls, one thread each, as dagger/linalg.h's tiles
 * (trsm by halving into BLAS trsm and gemm, the library's own
 * dg_la_dtrsm_rec, which needs dg_la_blas_lib_load first). */
#ifndef BENCH_LINALG_STARPU_KERNELS_H
#define BENCH_LINALG_STARPU_KERNELS_H

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>

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

/* LU, right of the panel: rows r0.. of c (n x w, ld) get the unit-lower
 * trsm with the panel l (ld lld) and the gemm update below it. */
static void sp_lu_right(const double *l, int lld, double *c, int ld, int n, int w, int r0, int kb)
{
    dg_la_dtrsm_rec(CblasLeft, CblasLower, CblasNoTrans, CblasUnit, kb, w, 1.0, l + r0, lld,
                    c + r0, ld);
    if (r0 + kb < n)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n - r0 - kb, w, kb, -1.0,
                    l + r0 + kb, lld, c + r0, ld, 1.0, c + r0 + kb, ld);
}

#define SP_IB 32 /* dagger/linalg.h's inner blocking of the QR kernels */

/* Workspace of a QR tile kernel on tiles of n columns (freed by the caller). */
static double *sp_qr_work(int n)
{
    double *w = malloc((size_t)n * 64 * sizeof(double));
    if (!w) {
        fprintf(stderr, "out of memory (QR workspace)\n");
        exit(1);
    }
    return w;
}

static void s_geqrt(void *buf[], void *arg)
{
    const sp_par_t *p = arg;
    int m = SP_NX(buf[0]), n = SP_NY(buf[0]);
    double *w = sp_qr_work(n);
    LAPACKE_dgeqrt_work(LAPACK_COL_MAJOR, m, n, p->ib, SP_PTR(buf[0]), SP_LD(buf[0]),
                        SP_PTR(buf[1]), SP_LD(buf[1]), w);
    free(w);
}

static void s_gemqrt(void *buf[], void *arg)
{
    const sp_par_t *p = arg;
    int m = SP_NX(buf[2]), n = SP_NY(buf[2]), k = SP_NY(buf[0]);
    double *w = sp_qr_work(n);
    LAPACKE_dgemqrt_work(LAPACK_COL_MAJOR, 'L', 'T', m, n, k, p->ib, SP_PTR(buf[0]),
                         SP_LD(buf[0]), SP_PTR(buf[1]), SP_LD(buf[1]), SP_PTR(buf[2]),
                         SP_LD(buf[2]), w);
    free(w);
}

static void s_tpqrt(void *buf[], void *arg)
{
    const sp_par_t *p = arg;
    int m = SP_NX(buf[1]), n = SP_NY(buf[1]);
    double *w = sp_qr_work(n);
    LAPACKE_dtpqrt_work(LAPACK_COL_MAJOR, m, n, 0, p->ib, SP_PTR(buf[0]), SP_LD(buf[0]),
                        SP_PTR(buf[1]), SP_LD(buf[1]), SP_PTR(buf[2]), SP_LD(buf[2]), w);
    free(w);
}

static void s_tpmqrt(void *buf[], void *arg)
{
    const sp_par_t *p = arg;
    int m = SP_NX(buf[3]), n = SP_NY(buf[3]), k = SP_NY(buf[0]);
    double *w = sp_qr_work(n);
    LAPACKE_dtpmqrt_work(LAPACK_COL_MAJOR, 'L', 'T', m, n, k, 0, p->ib, SP_PTR(buf[0]),
                         SP_LD(buf[0]), SP_PTR(buf[1]), SP_LD(buf[1]), SP_PTR(buf[2]),
                         SP_LD(buf[2]), SP_PTR(buf[3]), SP_LD(buf[3]), w);
    free(w);
}

static struct starpu_codelet cl_geqrt = {.cpu_funcs = {s_geqrt}, .nbuffers = 2,
                                         .modes = {STARPU_RW, STARPU_W}, .name = "geqrt"};
static struct starpu_codelet cl_gemqrt = {.cpu_funcs = {s_gemqrt}, .nbuffers = 3,
                                          .modes = {STARPU_R, STARPU_R, STARPU_RW},
                                          .name = "gemqrt"};
static struct starpu_codelet cl_tpqrt = {.cpu_funcs = {s_tpqrt}, .nbuffers = 3,
                                         .modes = {STARPU_RW, STARPU_RW, STARPU_W},
                                         .name = "tpqrt"};
static struct starpu_codelet cl_tpmqrt = {.cpu_funcs = {s_tpmqrt}, .nbuffers = 4,
                                          .modes = {STARPU_R, STARPU_R, STARPU_RW, STARPU_RW},
                                          .name = "tpmqrt"};

#endif
