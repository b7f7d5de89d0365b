/* Tiled dense linear algebra with BLAS tile kernels: Dagger-C against one
 * OpenBLAS call on the same cores and against StarPU, all measured in the
 * same run (the DESIGN budget: >= 90% of OpenBLAS, faster than StarPU).
 *
 *   bench_linalg_tiled [OUT=/tmp/bench_linalg_tiled.txt] [N=4096] [TILE=512] [REPS=5]
 *                      [WHAT=all|chol|gemm]
 *   tools/dagger-run -n 2 build/tools/bench/bench_linalg_tiled ...   (rank 0 prints)
 *
 * Two problems, double precision, N x N:
 *   chol  A = L L^T, lower, right-looking tiled algorithm: potrf, trsm, syrk,
 *         gemm tasks on TILE x TILE tiles (N^3/3 flops);
 *   gemm  C += A B, one gemm task per (i, j, k) tile triple, k outermost
 *         (2 N^3 flops).
 * Variants, alternated within every repetition (the order rotates each
 * repetition, with a short pause between variants, so that drift of a shared
 * machine hits all alike; medians are reported):
 *   openblas  one LAPACKE_dpotrf_work / cblas_dgemm call on the full
 *             column-major matrix, OpenBLAS set to as many threads as Dagger
 *             has CPU workers in the job (rank 0 runs it; other ranks wait);
 *   dagger    distributed arrays (block = TILE, 2-D block-cyclic over the
 *             ranks), one task per tile operation on dagger_array_block views;
 *             region begin to region end;
 *   starpu    StarPU 1.3 (when found at build time and run on one rank), the
 *             same tile kernels with implicit data dependencies: one
 *             starpu_matrix_data_register per tile, starpu_task_insert,
 *             starpu_task_wait_for_all; STARPU_NCPU = Dagger's worker count,
 *             STARPU_SCHED lws unless set. StarPU's idle workers spin, so it
 *             is initialised before and shut down after each of its runs
 *             (outside the timing).
 * TILE=512 by default: one-thread OpenBLAS dgemm on the 2-core development
 * VM runs 16.6 GFLOP/s on 256 tiles, 18.4 on 512, 19.2 on 1024 (19.6 on
 * 2048), and 8x8 tiles still keep 2 cores busy through a Cholesky (120
 * tasks; 1024 tiles leave 20 and run it ~10% slower; 256 gains nothing).
 * Tile kernels call OpenBLAS with one thread (openblas_set_num_threads(1));
 * only the reference call gets more. Each result is checked (the reference
 * Cholesky by its residual, the reference GEMM at sampled entries, the
 * others element by element against the reference); a wrong answer makes the
 * benchmark report WRONG and exit 1. */
#include <cblas.h>
#include <dagger.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef DG_HAVE_STARPU
#include <starpu.h>
#endif

#define MAX_REPS 100
#define SEED_SPD 11
#define SEED_A 21
#define SEED_B 22
#define SEED_C 23

enum { V_REF, V_DAGGER, V_STARPU, NVAR };
static const char *var_names[NVAR] = {"openblas", "dagger", "starpu"};

static void check(dagger_status_t st, const char *what)
{
    if (st != DAGGER_OK) {
        fprintf(stderr, "bench_linalg_tiled: %s: %s: %s\n", what, dagger_strerror(st),
                dagger_error_detail());
        exit(1);
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pause_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "bench_linalg_tiled: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

/* ------------------------------------------------------------ tile kernels */

/* A = L L^T of one tile, in place (lower). */
static int k_potrf(double *a, int n, int lda)
{
    return (int)LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, a, lda);
}

/* B = B L^-T (m x n panel tile below the diagonal tile L). */
static void k_trsm(const double *l, int ldl, double *b, int m, int n, int ldb)
{
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, m, n, 1.0, l,
                ldl, b, ldb);
}

/* C = C - A A^T (lower of C). */
static void k_syrk(const double *a, int lda, double *c, int n, int k, int ldc)
{
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, k, -1.0, a, lda, 1.0, c, ldc);
}

/* C = C - A B^T. */
static void k_gemm_nt(const double *a, int lda, const double *b, int ldb, double *c, int ldc,
                      int m, int n, int k)
{
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, m, n, k, -1.0, a, lda, b, ldb, 1.0, c,
                ldc);
}

/* C = C + A B. */
static void k_gemm_nn(const double *a, int lda, const double *b, int ldb, double *c, int ldc,
                      int m, int n, int k)
{
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, lda, b, ldb, 1.0, c,
                ldc);
}

/* ------------------------------------------------------------ Dagger codelets */

#define DP(s) ((double *)(s).data)
#define LD(s) ((int)(s).strides[1])
#define D0(s) ((int)(s).dims[0])
#define D1(s) ((int)(s).dims[1])

static int d_potrf(dagger_task_t *t)
{
    dagger_slot_t a = dagger_task_arg(t, 0);
    int info = k_potrf(DP(a), D0(a), LD(a));
    return info ? dagger_task_fail(t, "dpotrf: info %d", info) : DAGGER_OK;
}

static int d_trsm(dagger_task_t *t)
{
    dagger_slot_t l = dagger_task_arg(t, 0), b = dagger_task_arg(t, 1);
    k_trsm(DP(l), LD(l), DP(b), D0(b), D1(b), LD(b));
    return DAGGER_OK;
}

static int d_syrk(dagger_task_t *t)
{
    dagger_slot_t a = dagger_task_arg(t, 0), c = dagger_task_arg(t, 1);
    k_syrk(DP(a), LD(a), DP(c), D0(c), D1(a), LD(c));
    return DAGGER_OK;
}

static int d_gemm_nt(dagger_task_t *t)
{
    dagger_slot_t a = dagger_task_arg(t, 0), b = dagger_task_arg(t, 1), c = dagger_task_arg(t, 2);
    k_gemm_nt(DP(a), LD(a), DP(b), LD(b), DP(c), LD(c), D0(c), D1(c), D1(a));
    return DAGGER_OK;
}

static int d_gemm_nn(dagger_task_t *t)
{
    dagger_slot_t a = dagger_task_arg(t, 0), b = dagger_task_arg(t, 1), c = dagger_task_arg(t, 2);
    k_gemm_nn(DP(a), LD(a), DP(b), LD(b), DP(c), LD(c), D0(c), D1(c), D1(a));
    return DAGGER_OK;
}

/* ------------------------------------------------------------ matrices */

typedef struct spd_args {
    uint64_t n, seed;
} spd_args_t;

/* A symmetric, diagonally dominant (so positive definite) matrix:
 * U(min(i,j), max(i,j)) in [0, 1) plus n on the diagonal. */
static double spd_value(size_t i, size_t j, uint64_t n, uint64_t seed)
{
    size_t lo = i < j ? i : j, hi = i < j ? j : i;
    return dagger_rand_uniform(seed, lo + hi * n) + (i == j ? (double)n : 0.0);
}

static double spd_fn(const size_t idx[], int nd, const void *args)
{
    spd_args_t a;
    memcpy(&a, args, sizeof(a));
    return spd_value(idx[0], idx[1], a.n, a.seed);
}

typedef struct bench {
    dagger_runtime_t *rt;
    int rank, nranks, threads, ref_threads;
    int n, tile, nt, reps;
    const char *sched;
    dagger_codelet_t potrf, trsm, syrk, gemm_nt, gemm_nn;
    dagger_index_fn_id_t spd;
    dagger_dist_t dist;
} bench_t;

/* Per problem: seconds of each variant per repetition, and check results. */
typedef struct result {
    const char *name;
    double flops;
    double t[NVAR][MAX_REPS];
    double err[NVAR]; /* worst relative error seen */
    int have[NVAR];
    int wrong;
    unsigned long long tasks;
} result_t;

/* One problem's data. Cholesky: c0 = A, c = the factor (in place), a and bm
 * unused; GEMM: c = c0 + a bm. Host copies (full column-major) on rank 0:
 * af, bf, c0f the inputs, ref the reference result, got a collected one,
 * tiles StarPU's tile-layout copies. */
typedef struct problem {
    int chol;
    dagger_array_t *a, *bm, *c0, *c;
    double *af, *bf, *c0f, *ref, *got, *tiles;
} problem_t;

static dagger_array_desc_t desc_of(const bench_t *b)
{
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2,
                             .dims = {(size_t)b->n, (size_t)b->n},
                             .block = {(size_t)b->tile, (size_t)b->tile}, .dist = &b->dist};
    return d;
}

#ifdef DG_HAVE_STARPU /* only StarPU's variant keeps its matrix as tiles */
/* Full column-major n x n <-> tile layout (tile (i, j) contiguous, ld = ts). */
static double *tile_ptr(double *tiles, const bench_t *b, int i, int j)
{
    return tiles + ((size_t)i + (size_t)j * (size_t)b->nt) * (size_t)b->tile * (size_t)b->tile;
}

static void to_tiles(const bench_t *b, const double *full, double *tiles, int lower_only)
{
    size_t n = (size_t)b->n, ts = (size_t)b->tile;
    for (int j = 0; j < b->nt; j++)
        for (int i = lower_only ? j : 0; i < b->nt; i++) {
            double *t = tile_ptr(tiles, b, i, j);
            for (size_t y = 0; y < ts; y++)
                memcpy(t + y * ts, full + (size_t)i * ts + ((size_t)j * ts + y) * n,
                       ts * sizeof(double));
        }
}

static void from_tiles(const bench_t *b, const double *tiles, double *full, int lower_only)
{
    size_t n = (size_t)b->n, ts = (size_t)b->tile;
    for (int j = 0; j < b->nt; j++)
        for (int i = lower_only ? j : 0; i < b->nt; i++) {
            const double *t = tile_ptr((double *)tiles, b, i, j);
            for (size_t y = 0; y < ts; y++)
                memcpy(full + (size_t)i * ts + ((size_t)j * ts + y) * n, t + y * ts,
                       ts * sizeof(double));
        }
}
#endif

/* max |x - ref| / max |ref| over the lower triangle (or everything). */
static double rel_diff(const bench_t *b, const double *x, const double *ref, int lower_only)
{
    size_t n = (size_t)b->n;
    double worst = 0, scale = 0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = lower_only ? j : 0; i < n; i++) {
            double d = fabs(x[i + j * n] - ref[i + j * n]);
            worst = d > worst || isnan(d) ? d : worst;
            scale = fmax(scale, fabs(ref[i + j * n]));
        }
    return scale > 0 ? worst / scale : worst;
}

/* ------------------------------------------------------------ Dagger regions */

#define BLK(x, i, j) dagger_array_block(x, (size_t)(i) + (size_t)(j) * (size_t)b->nt)

/* Right-looking tiled Cholesky of the lower triangle of a. */
static void submit_chol(const bench_t *b, dagger_region_t *r, dagger_array_t *a)
{
    int nt = b->nt;
    for (int k = 0; k < nt; k++) {
        check(dagger_spawn(r, b->potrf, DAGGER_INOUT(BLK(a, k, k)), DAGGER_END), "potrf");
        for (int i = k + 1; i < nt; i++)
            check(dagger_spawn(r, b->trsm, DAGGER_IN(BLK(a, k, k)), DAGGER_INOUT(BLK(a, i, k)),
                               DAGGER_END), "trsm");
        for (int i = k + 1; i < nt; i++) {
            check(dagger_spawn(r, b->syrk, DAGGER_IN(BLK(a, i, k)), DAGGER_INOUT(BLK(a, i, i)),
                               DAGGER_END), "syrk");
            for (int j = k + 1; j < i; j++)
                check(dagger_spawn(r, b->gemm_nt, DAGGER_IN(BLK(a, i, k)), DAGGER_IN(BLK(a, j, k)),
                                   DAGGER_INOUT(BLK(a, i, j)), DAGGER_END), "gemm");
        }
    }
}

/* C += A B, k outermost: every (i, j) of step k is ready at once. */
static void submit_gemm(const bench_t *b, dagger_region_t *r, dagger_array_t *a,
                        dagger_array_t *bm, dagger_array_t *c)
{
    int nt = b->nt;
    for (int k = 0; k < nt; k++)
        for (int j = 0; j < nt; j++)
            for (int i = 0; i < nt; i++)
                check(dagger_spawn(r, b->gemm_nn, DAGGER_IN(BLK(a, i, k)),
                                   DAGGER_IN(BLK(bm, k, j)), DAGGER_INOUT(BLK(c, i, j)),
                                   DAGGER_END), "gemm");
}
#undef BLK

/* The problem in one region, on p->c: seconds from region begin to end
 * (the ranks start together; the end returns once every rank is done). */
static double dagger_run(const bench_t *b, problem_t *p, unsigned long long *tasks)
{
    check(dagger_barrier(b->rt), "barrier");
    double t0 = now_s();
    dagger_region_t *r;
    check(dagger_region_begin(b->rt, NULL, &r), "region begin");
    if (p->chol)
        submit_chol(b, r, p->c);
    else
        submit_gemm(b, r, p->a, p->bm, p->c);
    check(dagger_region_end(r), p->chol ? "Cholesky region" : "GEMM region");
    double t = now_s() - t0;
    dagger_region_stats_t st;
    check(dagger_region_stats(b->rt, &st), "stats");
    *tasks = (unsigned long long)st.tasks;
    return t;
}

/* ------------------------------------------------------------ StarPU */

#ifdef DG_HAVE_STARPU
#define SP_PTR(h) ((double *)STARPU_MATRIX_GET_PTR(h))
#define SP_LD(h) ((int)STARPU_MATRIX_GET_LD(h))
#define SP_NX(h) ((int)STARPU_MATRIX_GET_NX(h))
#define SP_NY(h) ((int)STARPU_MATRIX_GET_NY(h))

static void s_potrf(void *buf[], void *arg)
{
    (void)arg;
    if (k_potrf(SP_PTR(buf[0]), SP_NX(buf[0]), SP_LD(buf[0])) != 0)
        SP_PTR(buf[0])[0] = NAN; /* the check reports it */
}

static void s_trsm(void *buf[], void *arg)
{
    (void)arg;
    k_trsm(SP_PTR(buf[0]), SP_LD(buf[0]), SP_PTR(buf[1]), SP_NX(buf[1]), SP_NY(buf[1]),
           SP_LD(buf[1]));
}

static void s_syrk(void *buf[], void *arg)
{
    (void)arg;
    k_syrk(SP_PTR(buf[0]), SP_LD(buf[0]), SP_PTR(buf[1]), SP_NX(buf[1]), SP_NY(buf[0]),
           SP_LD(buf[1]));
}

static void s_gemm_nt(void *buf[], void *arg)
{
    (void)arg;
    k_gemm_nt(SP_PTR(buf[0]), SP_LD(buf[0]), SP_PTR(buf[1]), SP_LD(buf[1]), SP_PTR(buf[2]),
              SP_LD(buf[2]), SP_NX(buf[2]), SP_NY(buf[2]), SP_NY(buf[0]));
}

static void s_gemm_nn(void *buf[], void *arg)
{
    (void)arg;
    k_gemm_nn(SP_PTR(buf[0]), SP_LD(buf[0]), SP_PTR(buf[1]), SP_LD(buf[1]), SP_PTR(buf[2]),
              SP_LD(buf[2]), SP_NX(buf[2]), SP_NY(buf[2]), SP_NY(buf[0]));
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

static void sp_start(void)
{
    if (starpu_init(NULL) != 0) {
        fprintf(stderr, "bench_linalg_tiled: starpu_init failed\n");
        exit(1);
    }
}

/* Registers tiles (i, j) with j <= i (lower) or all of them. */
static starpu_data_handle_t *sp_register(const bench_t *b, double *tiles, int lower_only)
{
    int nt = b->nt;
    starpu_data_handle_t *h = calloc((size_t)nt * (size_t)nt, sizeof(*h));
    for (int j = 0; j < nt; j++)
        for (int i = lower_only ? j : 0; i < nt; i++)
            starpu_matrix_data_register(&h[i + j * nt], STARPU_MAIN_RAM,
                                        (uintptr_t)tile_ptr(tiles, b, i, j), (uint32_t)b->tile,
                                        (uint32_t)b->tile, (uint32_t)b->tile, sizeof(double));
    return h;
}

static void sp_unregister(const bench_t *b, starpu_data_handle_t *h)
{
    for (int i = 0; i < b->nt * b->nt; i++)
        if (h[i])
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

static double starpu_chol(bench_t *b, const double *a0, double *tiles, double *out)
{
    int nt = b->nt;
    to_tiles(b, a0, tiles, 1);
    sp_start();
    starpu_data_handle_t *h = sp_register(b, tiles, 1);
#define H(i, j) h[(i) + (j) * nt]
    double t0 = now_s();
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
    double t = now_s() - t0;
#undef H
    sp_unregister(b, h);
    starpu_shutdown();
    from_tiles(b, tiles, out, 1);
    return t;
}

static double starpu_gemm(bench_t *b, const double *af, const double *bf, const double *c0,
                          double *tiles, double *out)
{
    int nt = b->nt;
    size_t nn = (size_t)b->n * (size_t)b->n;
    double *ta = tiles, *tb = tiles + nn, *tc = tiles + 2 * nn;
    to_tiles(b, af, ta, 0);
    to_tiles(b, bf, tb, 0);
    to_tiles(b, c0, tc, 0);
    sp_start();
    starpu_data_handle_t *ha = sp_register(b, ta, 0), *hb = sp_register(b, tb, 0),
                         *hc = sp_register(b, tc, 0);
    double t0 = now_s();
    for (int k = 0; k < nt; k++)
        for (int j = 0; j < nt; j++)
            for (int i = 0; i < nt; i++)
                sp_insert(&cl_gemm_nn, 3, ha[i + k * nt], hb[k + j * nt], hc[i + j * nt]);
    starpu_task_wait_for_all();
    double t = now_s() - t0;
    sp_unregister(b, ha);
    sp_unregister(b, hb);
    sp_unregister(b, hc);
    starpu_shutdown();
    from_tiles(b, tc, out, 0);
    return t;
}
#endif

/* ------------------------------------------------------------ reference and checks */

/* The reference: one call on the full matrix with ref_threads threads. */
static double ref_call(const bench_t *b, int chol, const double *a, const double *bm, double *c,
                       int *info)
{
    int n = b->n;
    openblas_set_num_threads(b->ref_threads);
    double t0 = now_s();
    if (chol)
        *info = (int)LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, c, n);
    else
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, bm, n, 1.0, c,
                    n);
    double t = now_s() - t0;
    openblas_set_num_threads(1);
    return t;
}

/* ||A - L L^T||_F / ||A||_F over the lower triangle (L's upper part ignored). */
static double chol_residual(const bench_t *b, const double *a0, const double *l)
{
    size_t n = (size_t)b->n;
    double *lz = xmalloc(n * n * sizeof(double)), *r = xmalloc(n * n * sizeof(double));
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++)
            lz[i + j * n] = i >= j ? l[i + j * n] : 0.0;
    memcpy(r, a0, n * n * sizeof(double));
    openblas_set_num_threads(b->ref_threads);
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int)n, (int)n, -1.0, lz, (int)n, 1.0, r,
                (int)n);
    openblas_set_num_threads(1);
    double num = 0, den = 0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = j; i < n; i++) {
            num += r[i + j * n] * r[i + j * n];
            den += a0[i + j * n] * a0[i + j * n];
        }
    free(lz);
    free(r);
    return sqrt(num / den);
}

/* Worst relative error of the reference GEMM at 512 sampled entries. */
static double gemm_sample_check(const bench_t *b, const double *a, const double *bm,
                                const double *c0, const double *c)
{
    size_t n = (size_t)b->n;
    double worst = 0, scale = 0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++)
            scale = fmax(scale, fabs(c[i + j * n]));
    for (uint64_t s = 0; s < 512; s++) {
        size_t i = (size_t)(dagger_rand_bits(99, 2 * s) % n),
               j = (size_t)(dagger_rand_bits(99, 2 * s + 1) % n);
        double v = c0[i + j * n];
        for (size_t k = 0; k < n; k++)
            v += a[i + k * n] * bm[k + j * n];
        double d = fabs(v - c[i + j * n]);
        worst = d > worst || isnan(d) ? d : worst;
    }
    return worst / scale;
}

static void note_err(result_t *res, int v, double err, double tol)
{
    res->have[v] = 1;
    if (err > res->err[v] || isnan(err))
        res->err[v] = err;
    if (!(err <= tol))
        res->wrong = 1;
}

/* ------------------------------------------------------------ driver */

static void problem_init(bench_t *b, int chol, int with_starpu, problem_t *p)
{
    size_t n = (size_t)b->n, nn = n * n;
    memset(p, 0, sizeof(*p));
    p->chol = chol;
    dagger_array_desc_t d = desc_of(b);
    if (chol) {
        spd_args_t args = {(uint64_t)b->n, SEED_SPD};
        check(dagger_array_from_fn(b->rt, &d, b->spd, &args, sizeof(args), &p->c0), "array A");
    } else {
        check(dagger_array_rand(b->rt, &d, SEED_A, &p->a), "array A");
        check(dagger_array_rand(b->rt, &d, SEED_B, &p->bm), "array B");
        check(dagger_array_rand(b->rt, &d, SEED_C, &p->c0), "array C");
    }
    check(dagger_array_similar(p->c0, &p->c), "array");
    if (b->rank != 0)
        return;
    p->c0f = xmalloc(nn * sizeof(double));
    p->ref = xmalloc(nn * sizeof(double));
    p->got = xmalloc(nn * sizeof(double));
    if (with_starpu)
        p->tiles = xmalloc((chol ? 1 : 3) * nn * sizeof(double));
    if (chol) {
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++)
                p->c0f[i + j * n] = spd_value(i, j, (uint64_t)b->n, SEED_SPD);
        return;
    }
    p->af = xmalloc(nn * sizeof(double));
    p->bf = xmalloc(nn * sizeof(double));
    for (size_t i = 0; i < nn; i++) {
        p->af[i] = dagger_rand_uniform(SEED_A, i);
        p->bf[i] = dagger_rand_uniform(SEED_B, i);
        p->c0f[i] = dagger_rand_uniform(SEED_C, i);
    }
}

static void problem_free(problem_t *p)
{
    dagger_array_t *arrays[] = {p->a, p->bm, p->c0, p->c};
    for (int i = 0; i < 4; i++)
        if (arrays[i])
            check(dagger_array_destroy(arrays[i]), "destroy");
    double *bufs[] = {p->af, p->bf, p->c0f, p->ref, p->got, p->tiles};
    for (int i = 0; i < 6; i++)
        free(bufs[i]);
}

#define TOL 1e-10

/* Runs every variant REPS times (plus a warm-up repetition -1: page faults,
 * thread pools, slot caches), rotating their order each repetition. */
static void run_problem(bench_t *b, problem_t *p, result_t *res)
{
    int root = b->rank == 0, nvar = b->nranks == 1 ? NVAR : 2;
#ifndef DG_HAVE_STARPU
    nvar = 2;
#endif
    for (int rep = -1; rep < b->reps; rep++) {
        for (int s = 0; s < nvar; s++) {
            int v = (rep + 1 + s) % nvar; /* the warm-up runs the reference first */
            double t = 0, err = 0;
            pause_s(0.2); /* OpenBLAS's pool threads spin a while after a call */
            if (v == V_REF) {
                if (root) {
                    int info = 0;
                    memcpy(p->ref, p->c0f, (size_t)b->n * (size_t)b->n * sizeof(double));
                    t = ref_call(b, p->chol, p->af, p->bf, p->ref, &info);
                    if (rep == -1)
                        note_err(res, V_REF,
                                 info ? NAN
                                 : p->chol ? chol_residual(b, p->c0f, p->ref)
                                           : gemm_sample_check(b, p->af, p->bf, p->c0f, p->ref),
                                 1e-13);
                }
                check(dagger_barrier(b->rt), "barrier");
            } else if (v == V_DAGGER) {
                check(dagger_array_copy(NULL, p->c, p->c0), "copy");
                t = dagger_run(b, p, &res->tasks);
                check(dagger_array_collect_to(p->c, 0, p->got), "collect");
            } else {
#ifdef DG_HAVE_STARPU
                t = p->chol ? starpu_chol(b, p->c0f, p->tiles, p->got)
                            : starpu_gemm(b, p->af, p->bf, p->c0f, p->tiles, p->got);
#endif
            }
            if (v != V_REF && root) {
                err = rel_diff(b, p->got, p->ref, p->chol);
                note_err(res, v, err, TOL);
            }
            if (rep >= 0)
                res->t[v][rep] = t;
        }
    }
    if (nvar < NVAR)
        res->have[V_STARPU] = 0;
}

/* ------------------------------------------------------------ report */

static int by_value(const void *x, const void *y)
{
    double p = *(const double *)x, q = *(const double *)y;
    return p < q ? -1 : p > q;
}

static double median(const double *v, int n)
{
    double s[MAX_REPS];
    memcpy(s, v, (size_t)n * sizeof(double));
    qsort(s, (size_t)n, sizeof(double), by_value);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* Prints one problem's line and appends it to the results file. Returns 1
 * when a result was wrong. */
static int report(const bench_t *b, const result_t *res, FILE *f)
{
    double gf[NVAR] = {0}, pair[2][MAX_REPS];
    for (int v = 0; v < NVAR; v++)
        if (res->have[v])
            gf[v] = res->flops / median(res->t[v], b->reps) * 1e-9;
    for (int i = 0; i < b->reps; i++) {
        pair[0][i] = res->t[V_REF][i] / res->t[V_DAGGER][i];
        pair[1][i] = res->have[V_STARPU] ? res->t[V_STARPU][i] / res->t[V_DAGGER][i] : 0;
    }
    double r_ref = gf[V_DAGGER] / gf[V_REF], r_ref_pairs = median(pair[0], b->reps);
    double r_sp = res->have[V_STARPU] ? gf[V_DAGGER] / gf[V_STARPU] : 0;
    double r_sp_pairs = res->have[V_STARPU] ? median(pair[1], b->reps) : 0;
    char sp[32] = "n/a", rsp[48] = "n/a";
    if (res->have[V_STARPU]) {
        snprintf(sp, sizeof(sp), "%.2f", gf[V_STARPU]);
        snprintf(rsp, sizeof(rsp), "%.3f (pairs %.3f)", r_sp, r_sp_pairs);
    }
    printf("%-5s %10.2f %10.2f %10s   %.3f (pairs %.3f)   %-22s %6llu  %s\n", res->name,
           gf[V_REF], gf[V_DAGGER], sp, r_ref, r_ref_pairs, rsp, res->tasks,
           res->wrong ? "WRONG" : "ok");
    char sperr[16] = "n/a";
    if (res->have[V_STARPU])
        snprintf(sperr, sizeof(sperr), "%.1e", res->err[V_STARPU]);
    printf("      max relative errors: openblas %.1e, dagger %.1e, starpu %s; ", res->err[V_REF],
           res->err[V_DAGGER], sperr);
    if (res->wrong)
        printf("budget: not judged (a result is WRONG)\n");
    else
        printf("budget: dagger >= 0.90 x openblas %s, dagger > starpu %s\n",
               r_ref >= 0.9 ? "MET" : "NOT met",
               !res->have[V_STARPU] ? "n/a" : r_sp > 1 ? "MET" : "NOT met");
    for (int v = 0; v < NVAR; v++) {
        if (!res->have[v])
            continue;
        printf("      %-8s s/rep:", var_names[v]);
        for (int i = 0; i < b->reps; i++)
            printf(" %.3f", res->t[v][i]);
        printf("\n");
    }
    if (f) {
        fprintf(f, "%s n=%d tile=%d reps=%d ranks=%d threads=%d ref_threads=%d tasks=%llu "
                "openblas_gflops=%.3f dagger_gflops=%.3f starpu_gflops=%.3f "
                "dagger_over_openblas=%.4f dagger_over_openblas_pairs=%.4f "
                "dagger_over_starpu=%.4f dagger_over_starpu_pairs=%.4f starpu_sched=%s "
                "err_openblas=%.2e err_dagger=%.2e err_starpu=%.2e check=%s\n",
                res->name, b->n, b->tile, b->reps, b->nranks, b->threads, b->ref_threads,
                res->tasks, gf[V_REF], gf[V_DAGGER], gf[V_STARPU], r_ref, r_ref_pairs, r_sp,
                r_sp_pairs, res->have[V_STARPU] ? b->sched : "n/a", res->err[V_REF],
                res->err[V_DAGGER], res->err[V_STARPU], res->wrong ? "WRONG" : "ok");
    }
    return res->wrong;
}

static dagger_codelet_t reg(dagger_runtime_t *rt, const char *name, dagger_impl_fn fn)
{
    dagger_codelet_t cl;
    check(dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = name, .cpu = fn}, &cl),
          name);
    return cl;
}

int main(int argc, char **argv)
{
    /* Tile kernels run one BLAS thread each; only the reference call gets more. */
    openblas_set_num_threads(1);
    bench_t b = {0};
    check(dagger_init(&argc, &argv, NULL, &b.rt), "dagger_init");
    b.rank = dagger_rank(b.rt);
    b.nranks = dagger_nranks(b.rt);
    b.threads = dagger_num_threads(b.rt);
    const char *out = argc > 1 ? argv[1] : "/tmp/bench_linalg_tiled.txt";
    b.n = argc > 2 ? atoi(argv[2]) : 4096;
    b.tile = argc > 3 ? atoi(argv[3]) : 512;
    b.reps = argc > 4 ? atoi(argv[4]) : 5;
    const char *what = argc > 5 ? argv[5] : "all";
    int do_chol = !strcmp(what, "all") || !strcmp(what, "chol");
    int do_gemm = !strcmp(what, "all") || !strcmp(what, "gemm");
    if (b.tile <= 0 || b.n <= 0 || b.n % b.tile || b.reps < 1 || b.reps > MAX_REPS ||
        !(do_chol || do_gemm)) {
        if (b.rank == 0)
            fprintf(stderr, "usage: bench_linalg_tiled [OUT] [N] [TILE] [REPS] [all|chol|gemm]: "
                    "N a multiple of TILE, 1 to %d repetitions\n", MAX_REPS);
        dagger_finalize(b.rt);
        return 2;
    }
    b.nt = b.n / b.tile;
    /* The reference gets every CPU worker of the job (one host: the same cores). */
    int nprocs = dagger_procs(b.rt, NULL, 0);
    dagger_proc_info_t *procs = xmalloc((size_t)nprocs * sizeof(*procs));
    dagger_procs(b.rt, procs, nprocs);
    for (int i = 0; i < nprocs; i++)
        b.ref_threads += procs[i].kind == DAGGER_PROC_CPU;
    free(procs);
    b.dist = (dagger_dist_t){.kind = DAGGER_DIST_CYCLIC_2D};
    b.potrf = reg(b.rt, "linalg.potrf", d_potrf);
    b.trsm = reg(b.rt, "linalg.trsm", d_trsm);
    b.syrk = reg(b.rt, "linalg.syrk", d_syrk);
    b.gemm_nt = reg(b.rt, "linalg.gemm_nt", d_gemm_nt);
    b.gemm_nn = reg(b.rt, "linalg.gemm_nn", d_gemm_nn);
    check(dagger_index_fn_register(b.rt, "linalg.spd", spd_fn, &b.spd), "index fn");
#ifdef DG_HAVE_STARPU
    char ncpu[16];
    snprintf(ncpu, sizeof(ncpu), "%d", b.threads);
    setenv("STARPU_NCPU", ncpu, 1);
    setenv("STARPU_NCUDA", "0", 1);
    setenv("STARPU_NOPENCL", "0", 1);
    setenv("STARPU_SILENT", "1", 1);
    setenv("STARPU_CALIBRATE", "0", 0);
    setenv("STARPU_SCHED", "lws", 0);
    b.sched = getenv("STARPU_SCHED");
#else
    b.sched = "n/a";
#endif
    if (b.rank == 0) {
        openblas_set_num_threads(b.ref_threads);
        int ob = openblas_get_num_threads();
        openblas_set_num_threads(1);
        printf("bench_linalg_tiled: N=%d tile=%d (%dx%d tiles), %d reps (+1 warm-up); %d rank(s) "
               "x %d worker thread(s); OpenBLAS reference with %d thread(s) (%s); StarPU: %s\n",
               b.n, b.tile, b.nt, b.nt, b.reps, b.nranks, b.threads, ob, openblas_get_config(),
#ifdef DG_HAVE_STARPU
               b.nranks == 1 ? b.sched : "skipped (more than one rank)"
#else
               "not built"
#endif
        );
        printf("%-5s %10s %10s %10s   %-22s %-22s %6s  %s\n", "", "openblas", "dagger", "starpu",
               "dagger/openblas", "dagger/starpu", "tasks", "check");
        printf("%-5s %10s %10s %10s   %-22s %-22s\n", "", "GFLOP/s", "GFLOP/s", "GFLOP/s",
               "(medians)", "(medians)");
    }
    double n3 = (double)b.n * (double)b.n * (double)b.n;
    static result_t chol = {.name = "chol"}, gemm = {.name = "gemm"};
    chol.flops = n3 / 3;
    gemm.flops = 2 * n3;
    chol.have[V_REF] = chol.have[V_DAGGER] = gemm.have[V_REF] = gemm.have[V_DAGGER] = 1;
    FILE *f = NULL;
    if (b.rank == 0 && !(f = fopen(out, "w")))
        perror(out);
    int wrong = 0;
    int with_starpu = b.nranks == 1;
    for (int chol_pass = 1; chol_pass >= 0; chol_pass--) {
        if (!(chol_pass ? do_chol : do_gemm))
            continue;
        problem_t p;
        result_t *res = chol_pass ? &chol : &gemm;
        problem_init(&b, chol_pass, with_starpu, &p);
        run_problem(&b, &p, res);
        problem_free(&p);
        if (b.rank == 0)
            wrong |= report(&b, res, f);
    }
    if (f) {
        fclose(f);
        printf("results written to %s\n", out);
    }
    check(dagger_finalize(b.rt), "finalize");
    return wrong ? 1 : 0;
}
