/* The StarPU reference of bench_linalg_tiled: the same tile kernels
 * (OpenBLAS/LAPACKE, one thread; trsm by halving into BLAS trsm and gemm,
 * the library's own dg_la_dtrsm_rec; bench_linalg_starpu_kernels.h) and
 * the same DAGs as dagger/linalg.h's routines, with StarPU's implicit
 * data dependencies: one starpu_matrix_data_register per tile,
 * starpu_task_submit, starpu_task_wait_for_all. StarPU's idle workers
 * spin, so it is initialised before and shut down after each run (outside
 * the timing).
 * This file holds the common part and the Level-3/2 rows (cholesky,
 * matmul, matvec, syrk); bench_linalg_starpu_fact.h holds lu, solve and qr.
 * Only built when StarPU is found (DG_HAVE_STARPU). */
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

#include "bench_linalg_starpu_kernels.h"

/* y = alpha A x + beta y (x and y ts x 1 tiles). */
static void s_gemv(void *buf[], void *arg)
{
    const sp_par_t *p = arg;
    cblas_dgemv(CblasColMajor, CblasNoTrans, SP_NX(buf[0]), SP_NY(buf[0]), p->alpha,
                SP_PTR(buf[0]), SP_LD(buf[0]), SP_PTR(buf[1]), 1, p->beta, SP_PTR(buf[2]), 1);
}

static struct starpu_codelet cl_gemv = {.cpu_funcs = {s_gemv}, .nbuffers = 3,
                                        .modes = {STARPU_R, STARPU_R, STARPU_RW}, .name = "gemv"};

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

/* Handles of an mt x nt grid of tm x tn pieces of base: piece (i, j) starts
 * at (i + j mt) tm tn and has leading dimension tm. That is the tile
 * layout (tm = tn = ts), vector pieces (nt = tn = 1) and block columns of
 * a full matrix (mt = 1, tm = n). */
static starpu_data_handle_t *sp_grid(int mt, int nt, int tm, int tn, double *base)
{
    starpu_data_handle_t *h = calloc((size_t)mt * (size_t)nt, sizeof(*h));
    if (!h) {
        fprintf(stderr, "bench_linalg_tiled: out of memory (StarPU handles)\n");
        exit(1);
    }
    for (int j = 0; j < nt; j++)
        for (int i = 0; i < mt; i++)
            starpu_matrix_data_register(&h[i + j * mt], STARPU_MAIN_RAM,
                                        (uintptr_t)(base + ((size_t)i + (size_t)j * (size_t)mt) *
                                                               (size_t)tm * (size_t)tn),
                                        (uint32_t)tm, (uint32_t)tm, (uint32_t)tn, sizeof(double));
    return h;
}

static starpu_data_handle_t *sp_register(const sp_shape_t *s, double *tiles)
{
    return sp_grid(s->nt, s->nt, s->ts, s->ts, tiles);
}

static void sp_unregister(int count, starpu_data_handle_t *h)
{
    for (int i = 0; i < count; i++)
        starpu_data_unregister(h[i]);
    free(h);
}

/* Submits cl on handles h[0 .. cl->nbuffers) with a copy of par. */
static void sp_task(struct starpu_codelet *cl, const sp_par_t *par, starpu_data_handle_t h0,
                    starpu_data_handle_t h1, starpu_data_handle_t h2, starpu_data_handle_t h3)
{
    struct starpu_task *t = starpu_task_create();
    starpu_data_handle_t h[4] = {h0, h1, h2, h3};
    t->cl = cl;
    for (int i = 0; i < cl->nbuffers; i++)
        t->handles[i] = h[i];
    if (par) {
        sp_par_t *copy = malloc(sizeof(*copy));
        if (!copy) {
            fprintf(stderr, "bench_linalg_tiled: out of memory (StarPU task)\n");
            exit(1);
        }
        *copy = *par;
        t->cl_arg = copy;
        t->cl_arg_size = sizeof(*copy);
        t->cl_arg_free = 1;
    }
    int rc = starpu_task_submit(t);
    if (rc != 0) {
        fprintf(stderr, "bench_linalg_tiled: starpu_task_submit: %d\n", rc);
        exit(1);
    }
}

static void sp_gemm(const sp_par_t *p, starpu_data_handle_t a, starpu_data_handle_t b,
                    starpu_data_handle_t c)
{
    sp_task(&cl_gemm, p, a, b, c, NULL);
}

static void sp_start(void)
{
    char why[256];
    if (dg_la_blas_lib_load(why, sizeof(why))) { /* dg_la_dtrsm_rec calls through it */
        fprintf(stderr, "bench_linalg_tiled: %s\n", why);
        exit(1);
    }
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
    sp_par_t upd = {.ta = 0, .tb = 1, .alpha = -1.0, .beta = 1.0};
    double t0 = now();
    for (int k = 0; k < nt; k++) {
        sp_task(&cl_potrf, NULL, H(k, k), NULL, NULL, NULL);
        for (int i = k + 1; i < nt; i++)
            sp_task(&cl_trsm, NULL, H(k, k), H(i, k), NULL, NULL);
        for (int i = k + 1; i < nt; i++) {
            sp_task(&cl_syrk, &upd, H(i, k), H(i, i), NULL, NULL);
            for (int j = k + 1; j < i; j++)
                sp_gemm(&upd, H(i, k), H(j, k), H(i, j));
        }
    }
    starpu_task_wait_for_all();
    double t = now() - t0;
#undef H
    sp_unregister(nt * nt, h);
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
    sp_par_t nn1 = {.alpha = 1.0, .beta = 1.0};
    double t0 = now();
    for (int k = 0; k < nt; k++)
        for (int j = 0; j < nt; j++)
            for (int i = 0; i < nt; i++)
                sp_gemm(&nn1, ha[i + k * nt], hb[k + j * nt], hc[i + j * nt]);
    starpu_task_wait_for_all();
    double t = now() - t0;
    sp_unregister(nt * nt, ha);
    sp_unregister(nt * nt, hb);
    sp_unregister(nt * nt, hc);
    starpu_shutdown();
    sp_layout(s, out, tc, 0);
    return t;
}

/* out (lower) = a^T a, beta 0 on the first product of each tile, as
 * dagger_linalg_syrk: syrk tasks on the diagonal, gemm (T, N) below. */
static double starpu_syrk(const sp_shape_t *s, double *a, double *tiles, double *out,
                          double (*now)(void))
{
    int nt = s->nt;
    size_t nn = (size_t)s->n * (size_t)s->n;
    double *ta = tiles, *tc = tiles + nn;
    sp_layout(s, a, ta, 1);
    memset(tc, 0, nn * sizeof(double));
    sp_start();
    starpu_data_handle_t *ha = sp_register(s, ta), *hc = sp_register(s, tc);
    double t0 = now();
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++)
            for (int l = 0; l < nt; l++) {
                sp_par_t p = {.ta = 1, .tb = 0, .alpha = 1.0, .beta = l ? 1.0 : 0.0};
                if (i == j)
                    sp_task(&cl_syrk, &p, ha[l + i * nt], hc[i + i * nt], NULL, NULL);
                else
                    sp_gemm(&p, ha[l + i * nt], ha[l + j * nt], hc[i + j * nt]);
            }
    starpu_task_wait_for_all();
    double t = now() - t0;
    sp_unregister(nt * nt, ha);
    sp_unregister(nt * nt, hc);
    starpu_shutdown();
    sp_layout(s, out, tc, 0);
    return t;
}

/* out = a x (out n doubles), beta 0 on the first product of each piece of y. */
static double starpu_gemv(const sp_shape_t *s, double *a, double *x, double *tiles, double *out,
                          double (*now)(void))
{
    int nt = s->nt;
    sp_layout(s, a, tiles, 1);
    memset(out, 0, (size_t)s->n * sizeof(double));
    sp_start();
    starpu_data_handle_t *ha = sp_register(s, tiles), *hx = sp_grid(nt, 1, s->ts, 1, x),
                         *hy = sp_grid(nt, 1, s->ts, 1, out);
    double t0 = now();
    for (int i = 0; i < nt; i++)
        for (int l = 0; l < nt; l++) {
            sp_par_t p = {.alpha = 1.0, .beta = l ? 1.0 : 0.0};
            sp_task(&cl_gemv, &p, ha[i + l * nt], hx[l], hy[i], NULL);
        }
    starpu_task_wait_for_all();
    double t = now() - t0;
    sp_unregister(nt * nt, ha);
    sp_unregister(nt, hx);
    sp_unregister(nt, hy);
    starpu_shutdown();
    return t;
}

#endif
