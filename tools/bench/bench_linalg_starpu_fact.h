/* The StarPU reference of bench_linalg_tiled, factorisations: LU with
 * partial pivoting on block columns (as dagger_linalg_getrf: a LAPACK getrf
 * task per panel, then per other block column its interchanges and, right
 * of the panel, the unit-lower trsm and gemm update; one task per block
 * column here, where Dagger-C makes the next column's update tile tasks,
 * and every column's on ranks of one worker), the solve
 * through it (dgetrs on the factors after the DAG), and tiled Householder QR
 * (geqrt, gemqrt, tpqrt, tpmqrt, flat tree, as dagger_linalg_geqrf). The QR
 * tile kernels and LU's update right of the panel are in
 * bench_linalg_starpu_kernels.h, shared with linalg_starpu_mpi.c. */
#ifndef BENCH_LINALG_STARPU_FACT_H
#define BENCH_LINALG_STARPU_FACT_H

#include "bench_linalg_starpu.h"

/* LU of rows r0.. of a block column; pivots made global (1-based). */
static void s_getrf(void *buf[], void *arg)
{
    const sp_par_t *p = arg;
    int ld = SP_LD(buf[0]), m = SP_NX(buf[0]) - p->r0, n = SP_NY(buf[0]);
    if (LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, SP_PTR(buf[0]) + p->r0, ld, p->ipiv + p->r0))
        SP_PTR(buf[0])[0] = NAN;
    for (int i = 0; i < p->kb; i++)
        p->ipiv[p->r0 + i] += p->r0;
}

/* Step r0's interchanges on another block column; right of the panel also
 * its trsm (unit lower) and the gemm update of the rows below. */
static void s_lu_update(void *buf[], void *arg)
{
    const sp_par_t *p = arg;
    int n = SP_NX(buf[1]), w = SP_NY(buf[1]), kb = p->kb, r0 = p->r0, ld = SP_LD(buf[1]);
    double *l = SP_PTR(buf[0]), *c = SP_PTR(buf[1]);
    LAPACKE_dlaswp_work(LAPACK_COL_MAJOR, w, c, ld, r0 + 1, r0 + kb, p->ipiv, 1);
    if (p->right)
        sp_lu_right(l, SP_LD(buf[0]), c, ld, n, w, r0, kb);
}

/* x = A^-1 b from the factors (b the handle, the factors in p->mat). */
static void s_getrs(void *buf[], void *arg)
{
    const sp_par_t *p = arg;
    int n = SP_NX(buf[0]);
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', n, 1, p->mat, n, p->ipiv, SP_PTR(buf[0]), n);
}

static struct starpu_codelet cl_getrf = {.cpu_funcs = {s_getrf}, .nbuffers = 1,
                                         .modes = {STARPU_RW}, .name = "getrf"};
static struct starpu_codelet cl_lu_update = {.cpu_funcs = {s_lu_update}, .nbuffers = 2,
                                             .modes = {STARPU_R, STARPU_RW}, .name = "lu_update"};
static struct starpu_codelet cl_getrs = {.cpu_funcs = {s_getrs}, .nbuffers = 1,
                                         .modes = {STARPU_RW}, .name = "getrs"};

/* LU of in into out (full layouts, out also the work matrix), pivots into
 * ipiv (n); with b (n), also the solve, its x into b. */
static double starpu_lu(const sp_shape_t *s, const double *in, double *out, lapack_int *ipiv,
                        double *b, double (*now)(void))
{
    int nt = s->nt, ts = s->ts;
    memcpy(out, in, (size_t)s->n * (size_t)s->n * sizeof(double));
    sp_start();
    starpu_data_handle_t *col = sp_grid(1, nt, s->n, ts, out), *hb = b ? sp_grid(1, 1, s->n, 1, b) : NULL;
    double t0 = now();
    for (int k = 0; k < nt; k++) {
        sp_par_t p = {.r0 = k * ts, .kb = ts, .ipiv = ipiv};
        sp_task(&cl_getrf, &p, col[k], NULL, NULL, NULL);
        for (int j = 0; j < nt; j++) {
            p.right = j > k;
            if (j != k)
                sp_task(&cl_lu_update, &p, col[k], col[j], NULL, NULL);
        }
    }
    starpu_task_wait_for_all();
    if (b) {
        sp_par_t p = {.ipiv = ipiv, .mat = out};
        sp_task(&cl_getrs, &p, hb[0], NULL, NULL, NULL);
        starpu_task_wait_for_all();
    }
    double t = now() - t0;
    sp_unregister(nt, col);
    if (b)
        sp_unregister(1, hb);
    starpu_shutdown();
    return t;
}

/* QR (R and the reflectors) of in into out (full layouts). StarPU orders
 * gemqrt (reading A_kk's reflectors) before tpqrt (rewriting its R): it has
 * no view modifiers to run them at once. */
static double starpu_qr(const sp_shape_t *s, double *in, double *tiles, double *out,
                        double (*now)(void))
{
    int nt = s->nt, ts = s->ts, ib = ts < SP_IB ? ts : SP_IB;
    double *t = malloc((size_t)nt * (size_t)nt * (size_t)ib * (size_t)ts * sizeof(double));
    if (!t) {
        fprintf(stderr, "bench_linalg_tiled: out of memory (QR T)\n");
        exit(1);
    }
    sp_layout(s, in, tiles, 1);
    sp_start();
    starpu_data_handle_t *h = sp_register(s, tiles), *ht = sp_grid(nt, nt, ib, ts, t);
#define H(i, j) h[(i) + (j) * nt]
#define T(i, j) ht[(i) + (j) * nt]
    sp_par_t p = {.ib = ib};
    double t0 = now();
    for (int k = 0; k < nt; k++) {
        sp_task(&cl_geqrt, &p, H(k, k), T(k, k), NULL, NULL);
        for (int n = k + 1; n < nt; n++)
            sp_task(&cl_gemqrt, &p, H(k, k), T(k, k), H(k, n), NULL);
        for (int m = k + 1; m < nt; m++) {
            sp_task(&cl_tpqrt, &p, H(k, k), H(m, k), T(m, k), NULL);
            for (int n = k + 1; n < nt; n++)
                sp_task(&cl_tpmqrt, &p, H(m, k), T(m, k), H(k, n), H(m, n));
        }
    }
    starpu_task_wait_for_all();
    double el = now() - t0;
#undef H
#undef T
    sp_unregister(nt * nt, h);
    sp_unregister(nt * nt, ht);
    starpu_shutdown();
    sp_layout(s, out, tiles, 0);
    free(t);
    return el;
}

#endif
