/* The StarPU reference of bench_linalg_tiled: the same tile kernels
 * (OpenBLAS/LAPACKE, one thread) and the same right-looking DAGs as
 * dagger/linalg.h's Cholesky and GEMM, with StarPU's implicit data
 * dependencies: one starpu_matrix_data_register per tile,
 * starpu_task_insert, starpu_task_wait_for_all. StarPU's idle workers spin,
 * so it is initialised before and shut down after each run (outside the
 * timing). Only built when StarPU is found (DG_HAVE_STARPU). */
#ifndef BENCH_LINALG_STARPU_H
#define BENCH_LINALG_STARPU_H

#include <cblas.h>
#include <lapacke.h>
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sp_shape {
    int n, ts, nt; /* n a multiple of ts */
} sp_shape_t;

#define SP_PTR(h) ((double *)STARPU_MATRIX_GET_PTR(h))
#define SP_LD(h) ((int)STARPU_MATRIX_GET_LD(h))
#define SP_NX(h) ((int)STARPU_MATRIX_GET_NX(h))
#define SP_NY(h) ((int)STARPU_MATRIX_GET_NY(h))

static void s_potrf(void *buf[], void *arg)
{
    (void)arg;
    if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', SP_NX(buf[0]), SP_PTR(buf[0]), SP_LD(buf[0])))
        SP_PTR(buf[0])[0] = NAN; /* the check reports it */
}

static void s_trsm(void *buf[], void *arg)
{
    (void)arg;
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, SP_NX(buf[1]),
                SP_NY(buf[1]), 1.0, SP_PTR(buf[0]), SP_LD(buf[0]), SP_PTR(buf[1]), SP_LD(buf[1]));
}

static void s_syrk(void *buf[], void *arg)
{
    (void)arg;
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, SP_NX(buf[1]), SP_NY(buf[0]), -1.0,
                SP_PTR(buf[0]), SP_LD(buf[0]), 1.0, SP_PTR(buf[1]), SP_LD(buf[1]));
}

/* C += alpha A op(B): op = T, alpha -1 for the Cholesky update; N, 1 for GEMM. */
static void s_gemm(void *buf[], int nt)
{
    cblas_dgemm(CblasColMajor, CblasNoTrans, nt ? CblasTrans : CblasNoTrans, SP_NX(buf[2]),
                SP_NY(buf[2]), SP_NY(buf[0]), nt ? -1.0 : 1.0, SP_PTR(buf[0]), SP_LD(buf[0]),
                SP_PTR(buf[1]), SP_LD(buf[1]), 1.0, SP_PTR(buf[2]), SP_LD(buf[2]));
}

static void s_gemm_nt(void *buf[], void *arg)
{
    (void)arg;
    s_gemm(buf, 1);
}

static void s_gemm_nn(void *buf[], void *arg)
{
    (void)arg;
    s_gemm(buf, 0);
}

static struct starpu_codelet cl_potrf = {.cpu_funcs = {s_potrf}, .nbuffers = 1,
                                         .modes = {STARPU_RW}, .name = "potrf"};
static struct starpu_codelet cl_trsm = {.cpu_funcs = {s_trsm}, .nbuffers = 2,
                                        .modes = {STARPU_R, STARPU_RW}, .name = "trsm"};
static struct starpu_codelet cl_syrk = {.cpu_funcs = {s_syrk}, .nbuffers = 2,
                                        .modes = {STARPU_R, STARPU_RW}, .name = "syrk"};
static struct starpu_codelet cl_gemm_nt = {.cpu_funcs = {s_gemm_nt}, .nbuffers = 3,
                                           .modes = {STARPU_R, STARPU_R, STARPU_RW},
                                           .name = "gemm_nt"};
static struct starpu_codelet cl_gemm_nn = {.cpu_funcs = {s_gemm_nn}, .nbuffers = 3,
                                           .modes = {STARPU_R, STARPU_R, STARPU_RW},
                                           .name = "gemm_nn"};

static double *sp_tile(double *tiles, const sp_shape_t *s, int i, int j)
{
    return tiles + ((size_t)i + (size_t)j * (size_t)s->nt) * (size_t)s->ts * (size_t)s->ts;
}

/* Full column-major <-> tile layout (tile (i, j) contiguous, ld = ts). */
static void sp_layout(const sp_shape_t *s, double *full, double *tiles, int to_tiles)
{
    size_t n = (size_t)s->n, ts = (size_t)s->ts;
    for (int j = 0; j < s->nt; j++)
        for (int i = 0; i < s->nt; i++)
            for (size_t y = 0; y < ts; y++) {
                double *f = full + (size_t)i * ts + ((size_t)j * ts + y) * n;
                double *t = sp_tile(tiles, s, i, j) + y * ts;
                memcpy(to_tiles ? t : f, to_tiles ? f : t, ts * sizeof(double));
            }
}

static starpu_data_handle_t *sp_register(const sp_shape_t *s, double *tiles)
{
    starpu_data_handle_t *h = calloc((size_t)s->nt * (size_t)s->nt, sizeof(*h));
    for (int j = 0; j < s->nt; j++)
        for (int i = 0; i < s->nt; i++)
            starpu_matrix_data_register(&h[i + j * s->nt], STARPU_MAIN_RAM,
                                        (uintptr_t)sp_tile(tiles, s, i, j), (uint32_t)s->ts,
                                        (uint32_t)s->ts, (uint32_t)s->ts, sizeof(double));
    return h;
}

static void sp_unregister(const sp_shape_t *s, starpu_data_handle_t *h)
{
    for (int i = 0; i < s->nt * s->nt; i++)
        starpu_data_unregister(h[i]);
    free(h);
}

static void sp_insert(struct starpu_codelet *cl, int nbuf, starpu_data_handle_t x,
                      starpu_data_handle_t y, starpu_data_handle_t z)
{
    int rc = nbuf == 1   ? starpu_task_insert(cl, STARPU_RW, x, 0)
             : nbuf == 2 ? starpu_task_insert(cl, STARPU_R, x, STARPU_RW, y, 0)
                         : starpu_task_insert(cl, STARPU_R, x, STARPU_R, y, STARPU_RW, z, 0);
    if (rc != 0) {
        fprintf(stderr, "bench_linalg_tiled: starpu_task_insert: %d\n", rc);
        exit(1);
    }
}

static void sp_start(void)
{
    if (starpu_init(NULL) != 0) {
        fprintf(stderr, "bench_linalg_tiled: starpu_init failed\n");
        exit(1);
    }
}

/* Cholesky (lower) of in into out (full layouts): seconds of the DAG. */
static double starpu_chol(const sp_shape_t *s, double *in, double *tiles, double *out,
                          double (*now)(void))
{
    int nt = s->nt;
    sp_layout(s, in, tiles, 1);
    sp_start();
    starpu_data_handle_t *h = sp_register(s, tiles);
#define H(i, j) h[(i) + (j) * nt]
    double t0 = now();
    for (int k = 0; k < nt; k++) {
        sp_insert(&cl_potrf, 1, H(k, k), NULL, NULL);
        for (int i = k + 1; i < nt; i++)
            sp_insert(&cl_trsm, 2, H(k, k), H(i, k), NULL);
        for (int i = k + 1; i < nt; i++) {
            sp_insert(&cl_syrk, 2, H(i, k), H(i, i), NULL);
            for (int j = k + 1; j < i; j++)
                sp_insert(&cl_gemm_nt, 3, H(i, k), H(j, k), H(i, j));
        }
    }
    starpu_task_wait_for_all();
    double t = now() - t0;
#undef H
    sp_unregister(s, h);
    starpu_shutdown();
    sp_layout(s, out, tiles, 0);
    return t;
}

/* out = c + a b (full layouts; tiles has room for three matrices). */
static double starpu_gemm(const sp_shape_t *s, double *a, double *b, double *c, double *tiles,
                          double *out, double (*now)(void))
{
    int nt = s->nt;
    size_t nn = (size_t)s->n * (size_t)s->n;
    double *ta = tiles, *tb = tiles + nn, *tc = tiles + 2 * nn;
    sp_layout(s, a, ta, 1);
    sp_layout(s, b, tb, 1);
    sp_layout(s, c, tc, 1);
    sp_start();
    starpu_data_handle_t *ha = sp_register(s, ta), *hb = sp_register(s, tb), *hc = sp_register(s, tc);
    double t0 = now();
    for (int k = 0; k < nt; k++)
        for (int j = 0; j < nt; j++)
            for (int i = 0; i < nt; i++)
                sp_insert(&cl_gemm_nn, 3, ha[i + k * nt], hb[k + j * nt], hc[i + j * nt]);
    starpu_task_wait_for_all();
    double t = now() - t0;
    sp_unregister(s, ha);
    sp_unregister(s, hb);
    sp_unregister(s, hc);
    starpu_shutdown();
    sp_layout(s, out, tc, 0);
    return t;
}

#endif
