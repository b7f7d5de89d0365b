/* The seeds' linear algebra rows with dagger/linalg.h: each routine on
 * distributed arrays beside one OpenBLAS/LAPACK call with as many threads
 * as the job has CPU workers, and StarPU (every row, same tile kernels)
 * when it was found at build time and the job has one rank; all in the
 * same run, variants alternated. tools/bench/linalg-sweep runs the issue's
 * whole matrix of configurations and tabulates it.
 *
 *   bench_linalg_tiled [OUT=/tmp/bench_linalg_tiled.txt] [SIZES=256,1024,4096] [REPS=5]
 *                      [WHAT=all|cholesky,lu,matmul,matvec,qr,solve,syrk] [TILES=issue]
 *   tools/dagger-run -n 2 build/tools/bench/bench_linalg_tiled ...   (rank 0 prints)
 * BENCH_REF_THREADS=k gives the reference call k threads (default: the
 * job's CPU workers); BENCH_STARPU=0 skips StarPU; BENCH_GRID=PxQ the
 * arrays' rank grid (default the squarest, 1 x 2 on two ranks), or
 * BENCH_GRID=diag: tile (i, j) on rank (i + j) mod P, which shares each
 * factorization step's column of tiles (and the lower triangle) evenly, or
 * BENCH_GRID=fold: block column j whole on one rank, dealt 0, 1, .., P-1,
 * P-1, .., 0 (on 2 ranks 0, 1, 1, 0, 0, 1, 1, 0), which evens out the
 * trailing updates the later columns get (docs/linalg.md: QR on 2 x 1).
 * BENCH_PEER_HUGE=0|1: the references' and StarPU's large buffers in
 * transparent huge pages or not (default: as the runtime's blocks,
 * DAGGER_HUGE_PAGES, on; docs/linalg.md, "Data blocks in huge pages").
 * BENCH_BACK_TO_BACK=k (1..16, default 1): each variant runs k times in a
 * row and the last run is timed, as a program that calls the routine in a
 * loop sees it; by default every timed run follows a 0.1 s pause (the other
 * variants' threads go idle), so it starts with the workers asleep
 * (docs/linalg.md, "matvec on 2 x 1 after a pause and back to back").
 *
 * Rows, f64, N x N, tiles per N as the issue asks (256: 256 and 128;
 * 1024: 512 and 128; 4096: 512 and 256; TILES=t1,t2 for others), arrays
 * 2-D block-cyclic:
 *   cholesky  dagger_linalg_potrf (lower)     vs LAPACKE dpotrf     N^3/3 flops
 *   lu        dagger_linalg_getrf             vs dgetrf             2N^3/3
 *   matmul    dagger_linalg_gemm C += A B     vs cblas_dgemm        2N^3
 *   matvec    dagger_linalg_gemv y = A x      vs cblas_dgemv        2N^2
 *   qr        dagger_linalg_geqrf             vs dgeqrf             4N^3/3
 *   solve     dagger_linalg_gesv (1 rhs)      vs dgesv              2N^3/3
 *   syrk      dagger_linalg_syrk C = A^T A    vs cblas_dsyrk        N^3
 * Each repetition runs every variant once, the order rotating (a pause
 * between variants lets OpenBLAS's pool threads go idle); medians over the
 * repetitions, the range of the per-repetition ratios, and the Dagger.jl
 * time from the seeds' PR table (their machine, for scale only) where it
 * has the row. The dagger time is the call (its own region) and includes
 * the copies getrf/gesv make; resetting the inputs is outside it. The first
 * (warm-up) repetition checks every result against the reference (R of QR
 * up to row signs): a wrong one is reported WRONG and the exit status is 1.
 * The Cholesky row also times one N x N x N dgemm with the reference's
 * threads among its variants and prints Cholesky's rate as a fraction of it
 * (the budget: at least 0.9, the tile kernels' limit). The matmul
 * and Cholesky rows also time the tile kernels' ceiling (linalg_ceiling.h:
 * the reference's threads as plain threads, each running one-thread dgemm
 * tile products on one A, B and C tile of its own, in cache, as many as the
 * row's flops; no runtime and no schedule can beat it) and
 * print it against the 2-thread dgemm and the routine against it: the
 * share of a gap to dgemm that is the kernels' and the share that is the
 * runtime's. */
#include <cblas.h>
#include <dagger.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>

#ifdef DG_HAVE_STARPU
#include "bench_linalg_starpu_fact.h"
#endif
#include "tools/bench/linalg_ceiling.h"

#define MAX_REPS 50
#define TOL 1e-8

/* V_GEMM: the Cholesky row's kernel limit, one N x N x N cblas_dgemm with
 * the reference's threads, alternated with the others (the budget:
 * Cholesky at 90 % of the dgemm rate of the same run). */
enum { V_REF, V_DAGGER, V_STARPU, V_GEMM, V_KERN, NVAR };
enum { P_CHOL, P_LU, P_MATMUL, P_MATVEC, P_QR, P_SOLVE, P_SYRK, NPROB };
static const char *prob_names[NPROB] = {"cholesky", "lu", "matmul", "matvec", "qr", "solve", "syrk"};
/* Dagger.jl in ms from the seeds' PR table (001), its "master" column as
 * run-suite's SEEDS_MS (the PR's "dirty" column is within its noise):
 * N=256 block 256, N=1024 block 512; their machine, for scale only. */
static const double jl_ms[NPROB][2] = {{3.08, 19.5}, {4.7, 47.8}, {2.26, 45.2}, {1.43, 3.26},
                                       {7.39, 367}, {8.94, 53.2}, {4.08, 37.0}};

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
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(s * 1e9)};
    nanosleep(&ts, NULL);
}

/* The peers' large buffers (the references' matrices, StarPU's tiles) in
 * transparent huge pages where the runtime's blocks are (DAGGER_HUGE_PAGES,
 * on by default), so that a ratio compares the runtimes and not how their
 * memory was mapped; BENCH_PEER_HUGE=0/1 overrides. Each 2 MiB-aligned and
 * advised as dg_alloc_block does. */
static int peer_huge(void)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("BENCH_PEER_HUGE");
        if (!e)
            e = getenv("DAGGER_HUGE_PAGES");
        /* off as the runtime reads it (core/base/config.c): 0, no, off, false */
        on = !e || !(!strcmp(e, "0") || !strcasecmp(e, "no") || !strcasecmp(e, "off") ||
                     !strcasecmp(e, "false"));
    }
    return on;
}

static void *xmalloc(size_t n)
{
    const size_t huge = (size_t)2 << 20;
    void *p;
    if (n >= huge && peer_huge()) {
        size_t whole = (n + huge - 1) / huge * huge;
        if ((p = aligned_alloc(huge, whole)))
            (void)madvise(p, whole, MADV_HUGEPAGE);
    } else {
        p = malloc(n ? n : 1);
    }
    if (!p) {
        fprintf(stderr, "bench_linalg_tiled: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

typedef struct bench {
    dagger_runtime_t *rt;
    int rank, nranks, threads, ref_threads, reps, back_to_back;
    dagger_index_fn_id_t spd;
    dagger_dist_t dist;
    FILE *out;
    int wrong;
} bench_t;

/* One row: the problem's arrays (a0 b0 c0 the inputs, a b c the worked
 * ones, t QR's factors) and rank 0's host copies (h_* inputs, ref the
 * reference result, got the collected one). */
typedef struct row {
    int prob, n, tile;
    dagger_array_t *a0, *a, *b0, *b, *c0, *c, *t;
    double *ha, *hb, *hc, *ref, *got, *tiles, *gemm_c;
    int64_t *ipiv;
    lapack_int *rpiv;
    double *qwork;
    lapack_int lqwork;
    double secs[NVAR][MAX_REPS];
    int have[NVAR];
    double err[NVAR];
} row_t;

/* ------------------------------------------------------------ inputs */

typedef struct spd_args {
    uint64_t n;
} spd_args_t;

/* Symmetric, diagonally dominant: U(min(i,j), max(i,j)) + n on the diagonal. */
static double spd_value(size_t i, size_t j, uint64_t n)
{
    size_t lo = i < j ? i : j, hi = i < j ? j : i;
    return dagger_rand_uniform(11, lo + hi * n) + (i == j ? (double)n : 0.0);
}

static double spd_fn(const size_t idx[], int nd, const void *args)
{
    (void)nd;
    spd_args_t a;
    memcpy(&a, args, sizeof(a));
    return spd_value(idx[0], idx[1], a.n);
}

static dagger_array_t *matrix(bench_t *b, size_t m, size_t n, size_t tile, int spd, uint64_t seed)
{
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = n ? 2 : 1, .dims = {m, n ? n : 1},
                             .block = {tile, n ? tile : 1}, .dist = n ? &b->dist : NULL};
    if (!n)
        d.dims[1] = d.block[1] = 0;
    dagger_array_t *a;
    spd_args_t args = {m};
    if (spd)
        check(dagger_array_from_fn(b->rt, &d, b->spd, &args, sizeof(args), &a), "spd matrix");
    else
        check(dagger_array_rand(b->rt, &d, seed, &a), "random matrix");
    return a;
}

static double *host_of(bench_t *b, dagger_array_t *a, size_t count)
{
    double *h = b->rank == 0 ? xmalloc(count * sizeof(double)) : NULL;
    check(dagger_array_collect_to(a, 0, h), "collect");
    return h;
}

/* The arrays a problem needs: A (n x n), B (matmul n x n, solve n x 1, matvec x), C. */
static void row_init(bench_t *b, row_t *w)
{
    size_t n = (size_t)w->n, ts = (size_t)w->tile, nn = n * n;
    int p = w->prob;
    w->a0 = matrix(b, n, n, ts, p == P_CHOL, 21);
    check(dagger_array_similar(w->a0, &w->a), "array");
    w->ha = host_of(b, w->a0, nn);
    if (p == P_MATMUL || p == P_SOLVE || p == P_MATVEC) {
        size_t cols = p == P_MATMUL ? n : p == P_SOLVE ? 1 : 0;
        w->b0 = matrix(b, n, cols, ts, 0, 22);
        check(dagger_array_similar(w->b0, &w->b), "array");
        w->hb = host_of(b, w->b0, n * (cols ? cols : 1));
    }
    if (p == P_MATMUL || p == P_SYRK || p == P_MATVEC) {
        w->c0 = matrix(b, n, p == P_MATVEC ? 0 : n, ts, 0, 23);
        check(dagger_array_similar(w->c0, &w->c), "array");
        w->hc = host_of(b, w->c0, p == P_MATVEC ? n : nn);
    }
    if (p == P_QR)
        check(dagger_linalg_qr_t_create(w->a, &w->t), "qr T");
    w->ipiv = xmalloc(n * sizeof(int64_t));
    if (b->rank == 0) {
        w->ref = xmalloc(nn * sizeof(double));
        w->got = xmalloc(nn * sizeof(double));
        w->rpiv = xmalloc(n * sizeof(lapack_int));
        if (p == P_QR) {
            double q;
            LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, (int)n, (int)n, w->ref, (int)n, w->got, &q, -1);
            w->lqwork = (lapack_int)q;
            w->qwork = xmalloc((size_t)w->lqwork * sizeof(double));
        }
        if (p == P_CHOL)
            w->gemm_c = xmalloc(nn * sizeof(double));
#ifdef DG_HAVE_STARPU
        if (b->nranks == 1 && n % ts == 0)
            w->tiles = xmalloc((p == P_MATMUL ? 3 : p == P_SYRK ? 2 : 1) * nn * sizeof(double));
#endif
    }
}

static void row_free(row_t *w)
{
    dagger_array_t *arrays[] = {w->a0, w->a, w->b0, w->b, w->c0, w->c, w->t};
    for (int i = 0; i < 7; i++)
        if (arrays[i])
            check(dagger_array_destroy(arrays[i]), "destroy");
    void *bufs[] = {w->ha, w->hb, w->hc, w->ref, w->got, w->tiles, w->ipiv, w->rpiv, w->qwork,
                    w->gemm_c};
    for (int i = 0; i < 10; i++)
        free(bufs[i]);
}

/* ------------------------------------------------------------ variants */

static double flops(int p, double n)
{
    static const double per_n3[NPROB] = {1.0 / 3, 2.0 / 3, 2.0, 0, 4.0 / 3, 2.0 / 3, 1.0};
    return per_n3[p] * n * n * n + (p == P_MATVEC ? 2 * n * n : p == P_SOLVE ? 2 * n * n : 0);
}

/* One LAPACK/BLAS call on rank 0 with ref_threads threads; the result in ref. */
static double ref_run(bench_t *b, row_t *w)
{
    int n = w->n;
    size_t nn = (size_t)n * (size_t)n;
    double *x = w->ref;
    int p = w->prob;
    memcpy(x, p == P_MATMUL || p == P_SYRK ? w->hc : p == P_MATVEC ? w->hc : w->ha,
           (p == P_MATVEC ? (size_t)n : nn) * sizeof(double));
    double *rhs = p == P_SOLVE ? w->got : NULL; /* dgesv's b, then x */
    if (rhs)
        memcpy(rhs, w->hb, (size_t)n * sizeof(double));
    openblas_set_num_threads(b->ref_threads);
    double t0 = now_s();
    lapack_int info = 0;
    switch (p) {
    case P_CHOL: info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, x, n); break;
    case P_LU: info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, x, n, w->rpiv); break;
    case P_MATMUL:
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, w->ha, n, w->hb, n,
                    1.0, x, n);
        break;
    case P_MATVEC:
        cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, w->ha, n, w->hb, 1, 0.0, x, 1);
        break;
    case P_QR:
        info = LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, n, n, x, n, w->got, w->qwork, w->lqwork);
        break;
    case P_SOLVE: info = LAPACKE_dgesv_work(LAPACK_COL_MAJOR, n, 1, x, n, w->rpiv, rhs, n); break;
    case P_SYRK:
        cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, n, n, 1.0, w->ha, n, 0.0, x, n);
        break;
    }
    double t = now_s() - t0;
    openblas_set_num_threads(1);
    if (info)
        fprintf(stderr, "bench_linalg_tiled: reference %s: info %d\n", prob_names[p], (int)info);
    if (p == P_SOLVE)
        memcpy(x, rhs, (size_t)n * sizeof(double));
    return t;
}

/* V_KERN: the tile kernels' ceiling (linalg_ceiling.h) on rank 0, as many
 * tile products as the row's flops, or as 2e10 flops if that is more (a
 * fifth of a second here: a run of small tiles long enough to time, this
 * machine's fast and slow spells lasting 0.1-1 s); the time is
 * that of the row's flops at the rate the products ran, so that the rate
 * compares like the other variants'. Negative when it could not run. */
static double kern_run(bench_t *b, row_t *w)
{
    double per = 2.0 * w->tile * (double)w->tile * w->tile, f = flops(w->prob, w->n);
    long products = (long)ceil((f > 2e10 ? f : 2e10) / per);
    if (products < b->ref_threads)
        products = b->ref_threads;
    dg_ceiling_t c = {.tile = w->tile, .threads = b->ref_threads, .ntiles = 1,
                      .products = products};
    double s = dg_ceiling_run(&c);
    openblas_set_num_threads(1);
    return s < 0 ? s : s * f / ((double)products * per);
}

/* The Cholesky row's dgemm (C = A A, the row's matrix), as ref_run times. */
static double gemm_run(bench_t *b, row_t *w)
{
    int n = w->n;
    openblas_set_num_threads(b->ref_threads);
    double t0 = now_s();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, w->ha, n, w->ha, n, 0.0,
                w->gemm_c, n);
    double t = now_s() - t0;
    openblas_set_num_threads(1);
    return t;
}

/* The library call; inputs reset first (outside the timing). */
static double dagger_run(bench_t *b, row_t *w)
{
    int p = w->prob;
    if (p == P_CHOL || p == P_LU || p == P_QR || p == P_SOLVE)
        check(dagger_array_copy(NULL, w->a, w->a0), "reset A");
    if (p == P_SOLVE)
        check(dagger_array_copy(NULL, w->b, w->b0), "reset b");
    if (p == P_MATMUL)
        check(dagger_array_copy(NULL, w->c, w->c0), "reset C");
    check(dagger_barrier(b->rt), "barrier");
    double t0 = now_s();
    dagger_status_t st = DAGGER_OK;
    switch (p) {
    case P_CHOL: st = dagger_linalg_potrf(NULL, DAGGER_LA_LOWER, w->a); break;
    case P_LU: st = dagger_linalg_getrf(NULL, w->a, w->ipiv); break;
    case P_MATMUL: st = dagger_linalg_gemm(NULL, 0, 0, 1.0, w->a0, w->b0, 1.0, w->c); break;
    case P_MATVEC: st = dagger_linalg_gemv(NULL, 0, 1.0, w->a0, w->b0, 0.0, w->c); break;
    case P_QR: st = dagger_linalg_geqrf(NULL, w->a, w->t); break;
    case P_SOLVE: st = dagger_linalg_gesv(NULL, w->a, w->ipiv, w->b); break;
    case P_SYRK: st = dagger_linalg_syrk(NULL, DAGGER_LA_LOWER, DAGGER_LA_TRANS, 1.0, w->a0, 0.0, w->c); break;
    }
    double t = now_s() - t0;
    check(st, prob_names[p]);
    return t;
}

/* The dagger result into got on rank 0. */
static void dagger_result(row_t *w)
{
    int p = w->prob;
    dagger_array_t *res = p == P_MATMUL || p == P_SYRK || p == P_MATVEC ? w->c
                          : p == P_SOLVE                                ? w->b
                                                                        : w->a;
    check(dagger_array_collect_to(res, 0, w->got), "collect result");
}

#ifdef DG_HAVE_STARPU
static double starpu_run(row_t *w)
{
    sp_shape_t s = {w->n, w->tile, w->n / w->tile};
    switch (w->prob) {
    case P_CHOL: return starpu_chol(&s, w->ha, w->tiles, w->got, now_s);
    case P_LU: return starpu_lu(&s, w->ha, w->got, w->rpiv, NULL, now_s);
    case P_MATVEC: return starpu_gemv(&s, w->ha, w->hb, w->tiles, w->got, now_s);
    case P_QR: return starpu_qr(&s, w->ha, w->tiles, w->got, now_s);
    case P_SOLVE: /* factors in tiles (n x n), x into got */
        memcpy(w->got, w->hb, (size_t)w->n * sizeof(double));
        return starpu_lu(&s, w->ha, w->tiles, w->rpiv, w->got, now_s);
    case P_SYRK: return starpu_syrk(&s, w->ha, w->tiles, w->got, now_s);
    default: return starpu_gemm(&s, w->ha, w->hb, w->hc, w->tiles, w->got, now_s);
    }
}
#endif

/* ------------------------------------------------------------ checks */

/* ||got - ref||_F / ||ref||_F over what the problem defines (lower for
 * cholesky and syrk, |upper| for qr, the vector for matvec and solve). */
static double rel_err(const row_t *w)
{
    size_t n = (size_t)w->n, rows = w->prob == P_MATVEC || w->prob == P_SOLVE ? 1 : n;
    double num = 0, den = 0;
    for (size_t j = 0; j < rows; j++)
        for (size_t i = 0; i < n; i++) {
            size_t k = rows == 1 ? i : i + j * n;
            double g = w->got[k], r = w->ref[k];
            if ((w->prob == P_CHOL || w->prob == P_SYRK) && i < j)
                continue;
            if (w->prob == P_QR) {
                if (i > j)
                    continue;
                g = fabs(g), r = fabs(r);
            }
            num += (g - r) * (g - r);
            den += r * r;
        }
    return sqrt(num / den);
}

/* ------------------------------------------------------------ driver */

/* The row's variants in their rotation order: StarPU where it was built,
 * on one rank, unless BENCH_STARPU=0; dgemm for Cholesky. */
static int variants(const row_t *w, int vars[NVAR])
{
    const char *e = getenv("BENCH_STARPU");
    int n = 0;
    vars[n++] = V_REF;
    vars[n++] = V_DAGGER;
    if (w->tiles && !(e && !strcmp(e, "0")))
        vars[n++] = V_STARPU;
    if (w->prob == P_CHOL)
        vars[n++] = V_GEMM;
    if (w->prob == P_CHOL || w->prob == P_MATMUL)
        vars[n++] = V_KERN;
    return n;
}

/* One run of variant v (rank 0's time; the others return 0). */
static double run_variant(bench_t *b, row_t *w, int v)
{
    int root = b->rank == 0;
    double t = 0;
    if (v == V_DAGGER)
        return dagger_run(b, w);
    if (v == V_REF && root)
        t = ref_run(b, w);
    else if (v == V_GEMM && root)
        t = gemm_run(b, w);
    else if (v == V_KERN && root)
        t = kern_run(b, w);
#ifdef DG_HAVE_STARPU
    else if (v == V_STARPU && root)
        t = starpu_run(w);
#endif
    check(dagger_barrier(b->rt), "barrier");
    return t;
}

static void run_row(bench_t *b, row_t *w)
{
    int root = b->rank == 0;
    int vars[NVAR] = {0}, nvar = variants(w, vars); /* all of it is broadcast */
    check(dagger_bcast(b->rt, vars, sizeof(vars), 0), "bcast");
    check(dagger_bcast(b->rt, &nvar, sizeof(nvar), 0), "bcast");
    for (int i = 0; i < nvar; i++)
        w->have[vars[i]] = 1;
    for (int rep = -1; rep < b->reps; rep++)
        for (int s = 0; s < nvar; s++) {
            int v = vars[(rep + 1 + s) % nvar]; /* the warm-up runs the reference first */
            double t = 0;
            pause_s(0.1);
            for (int k = 0; k < b->back_to_back; k++) /* the last one counts */
                t = run_variant(b, w, v);
            if (rep == -1 && v == V_DAGGER)
                dagger_result(w);
            if (rep == -1 && (v == V_DAGGER || v == V_STARPU) && root) {
                w->err[v] = rel_err(w);
                if (!(w->err[v] <= TOL))
                    b->wrong = 1;
            }
            if (rep >= 0)
                w->secs[v][rep] = t;
        }
}

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

/* The tile kernels' ceiling against the 2-thread dgemm of the same run (the
 * reference of matmul, the dgemm variant of Cholesky), and the routine
 * against the ceiling: medians, and the median of the per-repetition
 * ratios. */
static void report_ceiling(bench_t *b, const row_t *w, const double gf[NVAR])
{
    int reps = b->reps, dg = w->prob == P_MATMUL ? V_REF : V_GEMM;
    for (int i = 0; i < reps; i++)
        if (!(w->secs[V_KERN][i] > 0)) {
            printf("%-8s %5d %5d %dx%d   tile kernels: n/a (no memory or threads for them)\n", "",
                   w->n, w->tile, b->nranks, b->threads);
            return;
        }
    double pr[MAX_REPS]; /* per repetition: the routine's rate over the ceiling's */
    for (int i = 0; i < reps; i++)
        pr[i] = w->secs[V_KERN][i] / w->secs[V_DAGGER][i];
    double of_gemm = w->have[dg] ? gf[V_KERN] / gf[dg] : 0;
    printf("%-8s %5d %5d %dx%d   tile kernels %.2f GF/s (%d threads, one-thread dgemm tile "
           "products in cache, same run): %.3f of dgemm; %s at %.3f of them (pairs %.3f)\n",
           "", w->n, w->tile, b->nranks, b->threads, gf[V_KERN], b->ref_threads, of_gemm,
           prob_names[w->prob], gf[V_DAGGER] / gf[V_KERN], median(pr, reps));
    if (b->out)
        fprintf(b->out, "#kern %s n=%d tile=%d kern_gflops=%.3f kern_over_dgemm=%.4f "
                "dagger_over_kern=%.4f pairs=%.4f\n", prob_names[w->prob], w->n, w->tile,
                gf[V_KERN], of_gemm, gf[V_DAGGER] / gf[V_KERN], median(pr, reps));
}

static void report(bench_t *b, const row_t *w)
{
    int reps = b->reps;
    double med[NVAR] = {0}, gf[NVAR] = {0}, ratio[MAX_REPS], sp_ratio[MAX_REPS];
    for (int v = 0; v < NVAR; v++)
        if (w->have[v]) {
            med[v] = median(w->secs[v], reps);
            gf[v] = med[v] > 0 ? (v == V_GEMM ? flops(P_MATMUL, w->n) : flops(w->prob, w->n)) /
                                     med[v] * 1e-9
                               : 0;
        }
    double lo = 1e30, hi = 0;
    for (int i = 0; i < reps; i++) {
        ratio[i] = w->secs[V_REF][i] / w->secs[V_DAGGER][i];
        sp_ratio[i] = w->have[V_STARPU] ? w->secs[V_STARPU][i] / w->secs[V_DAGGER][i] : 0;
        lo = fmin(lo, ratio[i]);
        hi = fmax(hi, ratio[i]);
    }
    double r = med[V_REF] / med[V_DAGGER], rp = median(ratio, reps);
    int jl = w->n == 256 && w->tile == 256 ? 0 : w->n == 1024 && w->tile == 512 ? 1 : -1;
    char sp[48] = "n/a", jls[16] = "n/a";
    if (w->have[V_STARPU])
        snprintf(sp, sizeof(sp), "%.2f (x%.3f)", gf[V_STARPU], median(sp_ratio, reps));
    if (jl >= 0)
        snprintf(jls, sizeof(jls), "%.2f", jl_ms[w->prob][jl]);
    const char *ok = w->err[V_DAGGER] <= TOL && (!w->have[V_STARPU] || w->err[V_STARPU] <= TOL)
                         ? "ok" : "WRONG";
    printf("%-8s %5d %5d %dx%d %9.3f %9.3f %9.2f %9.2f  %6.3f %6.3f [%.3f-%.3f] %-18s %8s  %.0e %s\n",
           prob_names[w->prob], w->n, w->tile, b->nranks, b->threads, med[V_REF] * 1e3,
           med[V_DAGGER] * 1e3, gf[V_REF], gf[V_DAGGER], r, rp, lo, hi, sp, jls,
           w->err[V_DAGGER], ok);
    if (b->out)
        fprintf(b->out, "%s n=%d tile=%d ranks=%d threads=%d ref_threads=%d reps=%d ref_ms=%.4f "
                "dagger_ms=%.4f ref_gflops=%.3f dagger_gflops=%.3f ratio_medians=%.4f "
                "ratio_pairs=%.4f ratio_min=%.4f ratio_max=%.4f starpu_gflops=%.3f "
                "dagger_over_starpu=%.4f jl_ms=%s err=%.2e check=%s\n",
                prob_names[w->prob], w->n, w->tile, b->nranks, b->threads, b->ref_threads, reps,
                med[V_REF] * 1e3, med[V_DAGGER] * 1e3, gf[V_REF], gf[V_DAGGER], r, rp, lo, hi,
                gf[V_STARPU], w->have[V_STARPU] ? median(sp_ratio, reps) : 0, jls,
                w->err[V_DAGGER], ok);
    /* Per-repetition times: dagger's for tools/bench/run-suite, all three
     * for tools/bench/linalg-sweep. */
    if (w->have[V_GEMM]) {
        double gr[MAX_REPS]; /* per repetition: Cholesky's rate over dgemm's */
        for (int i = 0; i < reps; i++)
            gr[i] = flops(P_CHOL, w->n) / w->secs[V_DAGGER][i] /
                    (flops(P_MATMUL, w->n) / w->secs[V_GEMM][i]);
        printf("%-8s %5d %5d %dx%d   dgemm %.2f GF/s (%d threads, same run): cholesky at "
               "%.3f of it (pairs %.3f)\n", "", w->n, w->tile, b->nranks, b->threads, gf[V_GEMM],
               b->ref_threads, gf[V_DAGGER] / gf[V_GEMM], median(gr, reps));
        if (b->out)
            fprintf(b->out, "#gemm cholesky n=%d tile=%d gemm_gflops=%.3f dagger_over_gemm=%.4f "
                    "pairs=%.4f\n", w->n, w->tile, gf[V_GEMM], gf[V_DAGGER] / gf[V_GEMM],
                    median(gr, reps));
    }
    if (w->have[V_KERN])
        report_ceiling(b, w, gf);
    static const char *tags[NVAR] = {"#ref_samples", "#samples", "#starpu_samples",
                                     "#gemm_samples", "#kern_samples"};
    for (int v = 0; b->out && v < NVAR; v++) {
        if (!w->have[v])
            continue;
        fprintf(b->out, "%s %s n=%d tile=%d", tags[v], prob_names[w->prob], w->n, w->tile);
        for (int i = 0; i < reps; i++)
            fprintf(b->out, " %.9f", w->secs[v][i]);
        fprintf(b->out, "\n");
        fflush(b->out);
    }
}

/* BENCH_GRID=diag: tile (i, j) on rank (i + j) mod nranks. */
static int diag_owner(const size_t block[], int ndims, int nranks, void *ctx)
{
    (void)ctx;
    return (int)((block[0] + (ndims > 1 ? block[1] : 0)) % (size_t)nranks);
}

/* BENCH_GRID=fold: block column j on rank j mod 2R folded (0, 1, .., R-1,
 * R-1, .., 0, 0, 1, ..), every row of it there. */
static int fold_owner(const size_t block[], int ndims, int nranks, void *ctx)
{
    (void)ctx;
    size_t j = ndims > 1 ? block[1] : block[0], r = (size_t)nranks, p = j % (2 * r);
    return (int)(p < r ? p : 2 * r - 1 - p);
}

/* Tiles of the table for size n (two), or the TILES argument. */
static int tiles_for(int n, const char *arg, int out[2])
{
    if (arg && strcmp(arg, "issue"))
        return sscanf(arg, "%d,%d", &out[0], &out[1]);
    out[0] = n == 256 ? 256 : 512;
    out[1] = n == 256 ? 128 : n == 1024 ? 128 : 256;
    return 2;
}

static void setup(bench_t *b, int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* rows appear as they are measured */
    openblas_set_num_threads(1);
    check(dagger_init(&argc, &argv, NULL, &b->rt), "dagger_init");
    b->rank = dagger_rank(b->rt);
    b->nranks = dagger_nranks(b->rt);
    b->threads = dagger_num_threads(b->rt);
    int nprocs = dagger_procs(b->rt, NULL, 0);
    dagger_proc_info_t *procs = xmalloc((size_t)nprocs * sizeof(*procs));
    dagger_procs(b->rt, procs, nprocs);
    for (int i = 0; i < nprocs; i++)
        b->ref_threads += procs[i].kind == DAGGER_PROC_CPU;
    free(procs);
    const char *rt = getenv("BENCH_REF_THREADS"); /* the sweep's fixed 2 (the machine's cores) */
    if (rt && atoi(rt) > 0)
        b->ref_threads = atoi(rt);
    b->dist = (dagger_dist_t){.kind = DAGGER_DIST_CYCLIC_2D};
    const char *grid = getenv("BENCH_GRID"); /* PxQ rank grid; default the squarest */
    if (grid && !strcmp(grid, "diag"))
        b->dist = (dagger_dist_t){.kind = DAGGER_DIST_MAP, .map = diag_owner};
    else if (grid && !strcmp(grid, "fold"))
        b->dist = (dagger_dist_t){.kind = DAGGER_DIST_MAP, .map = fold_owner};
    else if (grid && sscanf(grid, "%dx%d", &b->dist.prows, &b->dist.pcols) != 2)
        b->dist.prows = b->dist.pcols = 0;
    check(dagger_index_fn_register(b->rt, "bench.linalg.spd", spd_fn, &b->spd), "index fn");
#ifdef DG_HAVE_STARPU
    char ncpu[16];
    snprintf(ncpu, sizeof(ncpu), "%d", b->threads);
    setenv("STARPU_NCPU", ncpu, 1);
    setenv("STARPU_NCUDA", "0", 1);
    setenv("STARPU_NOPENCL", "0", 1);
    setenv("STARPU_SILENT", "1", 1);
    setenv("STARPU_CALIBRATE", "0", 0);
    setenv("STARPU_SCHED", "lws", 0);
#endif
}

int main(int argc, char **argv)
{
    if (argc > 1 && argv[1][0] == '-') { /* --help, or an option taken for the output file */
        fprintf(stderr, "usage: bench_linalg_tiled [OUT] [SIZES=256,1024,4096] [REPS=5] "
                        "[WHAT=all] [TILES=issue] (the comment atop the source says more)\n");
        return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? 2 : 0;
    }
    bench_t b = {0};
    setup(&b, argc, argv);
    const char *out = argc > 1 ? argv[1] : "/tmp/bench_linalg_tiled.txt";
    const char *sizes = argc > 2 ? argv[2] : "256,1024,4096";
    b.reps = argc > 3 ? atoi(argv[3]) : 5;
    const char *what = argc > 4 ? argv[4] : "all";
    const char *tiles_arg = argc > 5 ? argv[5] : "issue";
    const char *btb = getenv("BENCH_BACK_TO_BACK");
    b.back_to_back = btb ? atoi(btb) : 1;
    if (b.reps < 1 || b.reps > MAX_REPS || b.back_to_back < 1 || b.back_to_back > 16) {
        if (b.rank == 0)
            fprintf(stderr, "usage: [BENCH_BACK_TO_BACK=1..16] bench_linalg_tiled [OUT] [SIZES] "
                    "[REPS 1..%d] [WHAT] [TILES]\n", MAX_REPS);
        dagger_finalize(b.rt);
        return 2;
    }
    if (b.rank == 0) {
        if (!(b.out = fopen(out, "w")))
            perror(out);
        printf("bench_linalg_tiled: %d rank(s) x %d worker thread(s); reference: one OpenBLAS/"
               "LAPACK call with %d thread(s) (%s); %d reps (+1 warm-up)%s; StarPU: %s\n",
               b.nranks, b.threads, b.ref_threads, openblas_get_config(), b.reps,
               b.back_to_back > 1 ? ", each the last of back-to-back runs" : "",
#ifdef DG_HAVE_STARPU
               b.nranks == 1 ? getenv("STARPU_SCHED") : "skipped (more than one rank)"
#else
               "not built"
#endif
        );
        printf("%-8s %5s %5s %3s %9s %9s %9s %9s  %6s %6s %-15s %-18s %8s  %s\n", "row", "N",
               "tile", "rxt", "ref ms", "dagger ms", "ref GF/s", "dag GF/s", "ref/dg", "pairs",
               "[range]", "starpu GF/s (x)", "jl ms", "err check");
    }
    for (const char *s = sizes; s && *s;) {
        int n = atoi(s), tl[2];
        int nt = tiles_for(n, tiles_arg, tl);
        for (int p = 0; p < NPROB; p++) {
            if (strcmp(what, "all") && !strstr(what, prob_names[p]))
                continue;
            for (int k = 0; k < nt; k++) {
                row_t w;
                memset(&w, 0, sizeof(w));
                w.prob = p, w.n = n, w.tile = tl[k];
                row_init(&b, &w);
                run_row(&b, &w);
                if (b.rank == 0)
                    report(&b, &w);
                row_free(&w);
            }
        }
        s = strchr(s, ',');
        s = s ? s + 1 : NULL;
    }
    if (b.out) {
        fclose(b.out);
        printf("results written to %s\n", out);
    }
    check(dagger_finalize(b.rt), "finalize");
    return b.wrong ? 1 : 0;
}
