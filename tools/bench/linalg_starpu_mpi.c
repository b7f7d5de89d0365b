/* The StarPU-MPI peer of bench_linalg_tiled's multi-rank rows, all seven
 * (cholesky, lu, matmul, matvec, qr, solve, syrk): the same tile kernels
 * and DAGs as its one-process StarPU reference
 * (bench_linalg_starpu_kernels.h), over P processes. Tiles sit on the same
 * 2-D block-cyclic distribution as bench_linalg_tiled's arrays
 * (BENCH_GRID=PxQ, default the squarest with P <= Q; tile (i, j) on
 * rank i % P + P (j % Q)); QR's T tiles beside their A tiles; matvec's x and y in
 * pieces of a tile, piece i on rank i % R (Dagger-C's default for vectors
 * with one worker a rank). LU works on block columns of all rows, as
 * dagger_linalg_getrf and the one-process reference do: block column j and
 * step j's pivots on rank j % R; solve's b one piece, on rank 0, through
 * the factors as dagger_linalg_gesv (interchanges, then the unit-lower and
 * the upper substitution, a task per step and block column). Every rank
 * registers every tile, its own with memory and the others' without, tells
 * StarPU-MPI their owners, and inserts every task with
 * starpu_mpi_task_insert: the owner of the written tile runs it (for QR's
 * tpqrt, which writes two tiles, StarPU-MPI's node selection policy picks
 * one and sends the other back) and StarPU-MPI sends it the remote inputs.
 * Cholesky and LU carry dagger/linalg.h's priorities (its look-ahead) under
 * StarPU's prio scheduler (BENCH_STARPU_PRIO=0: no priorities and lws, as
 * the one-process reference); the others have none in either. Left out: QR
 * with tiles of 256 and more on grids of more than one process row
 * (StarPU-MPI hung there; BENCH_STARPU_QR_ANY_GRID=1 runs it anyway). Built
 * when StarPU's MPI layer and Open MPI's development files are found (the
 * runtime links no MPI). tools/bench/linalg-sweep runs it after
 * bench_linalg_tiled on each multi-rank configuration and puts it in the
 * table's StarPU column.
 *
 *   STARPU_NCPU=T mpirun -n R linalg_starpu_mpi OUT N REPS ROWS TILES
 *     ROWS   any of cholesky, lu, matmul, matvec, qr, solve, syrk (comma-separated)
 *     TILES  "issue" (bench_linalg_tiled's two tiles per N) or t1[,t2]; a
 *            tile that does not divide N is skipped (bench_linalg_tiled
 *            runs those; this peer does not)
 * STARPU_NCPU defaults to 1 (one worker per rank). Each repetition is timed
 * from a barrier to the end of the last rank's tasks and transfers
 * (starpu_mpi_wait_for_all; the slowest rank's time). Registering, setting
 * the inputs and unregistering are outside it. A warm-up repetition first
 * checks the result, collected on rank 0, against one LAPACKE/CBLAS call on
 * the whole matrix (dpotrf, dgetrf and its pivots, dgemm, dgemv, dgeqrf's
 * |R|, dgesv, dsyrk), as bench_linalg_tiled does (relative Frobenius error
 * at most 1e-8): a wrong result prints WRONG and the exit status is 1.
 * Rank 0 appends "#starpu_samples ROW n=N tile=T s1 s2 ..." (seconds,
 * bench_linalg_tiled's format) to OUT and prints one line a row. The inputs
 * are bench_linalg_tiled's generators' kind (a diagonally dominant SPD
 * matrix; uniform [0, 1) entries), not its exact values. */
#include <dagger/array.h>
#include <mpi.h>
#include <starpu_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_linalg_starpu_kernels.h"
#include "starpu_mpi_bind.h"

#define TOL 1e-8

enum { ROW_CHOL, ROW_LU, ROW_MATMUL, ROW_MATVEC, ROW_QR, ROW_SOLVE, ROW_SYRK, NROW };
static const char *row_names[NROW] = {"cholesky", "lu", "matmul", "matvec", "qr", "solve", "syrk"};

typedef struct job {
    int rank, nranks, prows, pcols;
    int n, ts, nt;
} job_t;

/* One matrix: mt x nt tiles of mb x nb (column-major, ld mb), on the
 * job's grid or, with cyc (a single block row or column: LU's block
 * columns, matvec's vectors), tile (i, j) on rank (i + j) % R; this rank's
 * tiles have memory. */
typedef struct mat {
    int mt, nt, mb, nb, cyc;
    double **tile;               /* [i + j mt]: NULL where another rank owns it */
    starpu_data_handle_t *h;     /* [i + j mt] */
} mat_t;

static void die(const char *what)
{
    fprintf(stderr, "linalg_starpu_mpi: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int owner(const job_t *j, int ti, int tj)
{
    return ti % j->prows + j->prows * (tj % j->pcols);
}

/* Element (gi, gj) of input `which`: 0 the SPD matrix, 1.. uniform ones. */
static double value(int which, size_t gi, size_t gj, size_t n)
{
    if (which == 0) {
        size_t lo = gi < gj ? gi : gj, hi = gi < gj ? gj : gi;
        return dagger_rand_uniform(11, lo + hi * n) + (gi == gj ? (double)n : 0.0);
    }
    return dagger_rand_uniform((uint64_t)which, gi + gj * n);
}

static int mat_owner(const job_t *j, const mat_t *m, int ti, int tj)
{
    return m->cyc ? (ti + tj) % j->nranks : owner(j, ti, tj);
}

/* A matrix of mt x nt tiles of mb x nb (zeros) with this rank's tiles. */
static void mat_alloc(const job_t *j, mat_t *m, int mt, int nt, int mb, int nb, int cyc)
{
    *m = (mat_t){.mt = mt, .nt = nt, .mb = mb, .nb = nb, .cyc = cyc};
    size_t count = (size_t)mt * (size_t)nt;
    m->tile = calloc(count, sizeof(*m->tile));
    m->h = calloc(count, sizeof(*m->h));
    if (!m->tile || !m->h)
        die("out of memory (tile table)");
    for (int tj = 0; tj < nt; tj++)
        for (int ti = 0; ti < mt; ti++)
            if (mat_owner(j, m, ti, tj) == j->rank &&
                !(m->tile[ti + tj * mt] = calloc((size_t)mb * (size_t)nb, sizeof(double))))
                die("out of memory (tiles)");
}

static void mat_free(mat_t *m)
{
    for (int k = 0; k < m->mt * m->nt; k++)
        free(m->tile[k]);
    free(m->tile);
    free(m->h);
}

/* This rank's tiles of input `which`. */
static void mat_fill(const job_t *j, mat_t *m, int which)
{
    for (int tj = 0; tj < m->nt; tj++)
        for (int ti = 0; ti < m->mt; ti++) {
            double *t = m->tile[ti + tj * m->mt];
            for (int y = 0; t && y < m->nb; y++)
                for (int x = 0; x < m->mb; x++)
                    t[x + (size_t)y * m->mb] = value(which, (size_t)ti * m->mb + x,
                                                     (size_t)tj * m->nb + y, (size_t)j->n);
        }
}

/* Registers every tile; tags are unique over the matrices of a row (index
 * 0.. and at most nt x nt tiles each). */
static void mat_register(const job_t *j, mat_t *m, int index)
{
    for (int tj = 0; tj < m->nt; tj++)
        for (int ti = 0; ti < m->mt; ti++) {
            int k = ti + tj * m->mt;
            starpu_matrix_data_register(&m->h[k], m->tile[k] ? STARPU_MAIN_RAM : -1,
                                        (uintptr_t)m->tile[k], (uint32_t)m->mb, (uint32_t)m->mb,
                                        (uint32_t)m->nb, sizeof(double));
            starpu_mpi_data_register(m->h[k], (int64_t)index * j->nt * j->nt + k,
                                     mat_owner(j, m, ti, tj));
        }
}

/* Unregisters every tile: an owned tile's latest value is home after it. */
static void mat_unregister(mat_t *m)
{
    for (int k = 0; k < m->mt * m->nt; k++)
        starpu_data_unregister(m->h[k]);
}

/* LU's pivots: step k's ts of them (global, 1-based) on block column k's
 * rank. */
typedef struct piv {
    lapack_int **p;
    starpu_data_handle_t *h;
} piv_t;

static void piv_alloc(const job_t *j, piv_t *v, int index)
{
    v->p = calloc((size_t)j->nt, sizeof(*v->p));
    v->h = calloc((size_t)j->nt, sizeof(*v->h));
    if (!v->p || !v->h)
        die("out of memory (pivots)");
    for (int k = 0; k < j->nt; k++) {
        int o = k % j->nranks;
        if (o == j->rank && !(v->p[k] = calloc((size_t)j->ts, sizeof(lapack_int))))
            die("out of memory (pivots)");
        starpu_vector_data_register(&v->h[k], v->p[k] ? STARPU_MAIN_RAM : -1, (uintptr_t)v->p[k],
                                    (uint32_t)j->ts, sizeof(lapack_int));
        starpu_mpi_data_register(v->h[k], (int64_t)index * j->nt * j->nt + k, o);
    }
}

static void piv_free(const job_t *j, piv_t *v)
{
    for (int k = 0; k < j->nt; k++) {
        starpu_data_unregister(v->h[k]);
        free(v->p[k]);
    }
    free(v->p);
    free(v->h);
}

/* Inserts cl on h0.. (cl's modes) with the tile's priority (0 when
 * BENCH_STARPU_PRIO=0) and, with par, the kernel's parameters. */
static int use_prio = 1;

static void insert(struct starpu_codelet *cl, const sp_par_t *par, int prio,
                   starpu_data_handle_t h0, starpu_data_handle_t h1, starpu_data_handle_t h2,
                   starpu_data_handle_t h3)
{
    starpu_data_handle_t h[4] = {h0, h1, h2, h3};
    struct starpu_data_descr d[4];
    for (int i = 0; i < cl->nbuffers; i++)
        d[i] = (struct starpu_data_descr){.handle = h[i], .mode = cl->modes[i]};
    int rc, p = use_prio ? prio : 0;
    if (par)
        rc = starpu_mpi_task_insert(MPI_COMM_WORLD, cl, STARPU_DATA_MODE_ARRAY, d, cl->nbuffers,
                                    STARPU_VALUE, par, sizeof(*par), STARPU_PRIORITY, p, 0);
    else
        rc = starpu_mpi_task_insert(MPI_COMM_WORLD, cl, STARPU_DATA_MODE_ARRAY, d, cl->nbuffers,
                                    STARPU_PRIORITY, p, 0);
    if (rc != 0)
        die("starpu_mpi_task_insert failed");
}

/* The kernels read their parameters as a sp_par_t; STARPU_VALUE packs them,
 * so these wrappers unpack before calling the shared kernels. */
#define UNPACKED(name, kernel)                                                                     \
    static void name(void *buf[], void *arg)                                                       \
    {                                                                                              \
        sp_par_t p;                                                                                \
        starpu_codelet_unpack_args(arg, &p);                                                       \
        kernel(buf, &p);                                                                           \
    }
UNPACKED(u_syrk, s_syrk)
UNPACKED(u_gemm, s_gemm)
UNPACKED(u_geqrt, s_geqrt)
UNPACKED(u_gemqrt, s_gemqrt)
UNPACKED(u_tpqrt, s_tpqrt)
UNPACKED(u_tpmqrt, s_tpmqrt)

/* y = alpha A x + beta y on tiles (x, y ts x 1), as bench_linalg_starpu.h's
 * s_gemv. */
static void u_gemv(void *buf[], void *arg)
{
    sp_par_t p;
    starpu_codelet_unpack_args(arg, &p);
    cblas_dgemv(CblasColMajor, CblasNoTrans, SP_NX(buf[0]), SP_NY(buf[0]), p.alpha, SP_PTR(buf[0]),
                SP_LD(buf[0]), SP_PTR(buf[1]), 1, p.beta, SP_PTR(buf[2]), 1);
}

static struct starpu_codelet cl_gemv_mpi = {.cpu_funcs = {u_gemv}, .nbuffers = 3,
                                            .modes = {STARPU_R, STARPU_R, STARPU_RW},
                                            .name = "gemv"};

/* LU's tiles, with the pivots in a buffer instead of the one-process
 * reference's shared array: the panel (rows r0.. of block column k) and
 * its pivots, made global. */
static void u_getrf(void *buf[], void *arg)
{
    sp_par_t p;
    starpu_codelet_unpack_args(arg, &p);
    lapack_int *piv = (lapack_int *)STARPU_VECTOR_GET_PTR(buf[1]);
    int ld = SP_LD(buf[0]), m = SP_NX(buf[0]) - p.r0, n = SP_NY(buf[0]);
    if (LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, SP_PTR(buf[0]) + p.r0, ld, piv))
        SP_PTR(buf[0])[0] = NAN; /* the check reports it */
    for (int i = 0; i < p.kb; i++)
        piv[i] += p.r0;
}

/* Step r0's interchanges (kb global 1-based pivots) on the w columns of c
 * (ld): LAPACK's dlaswp on rows r0.., with the pivots made relative. */
static void swap_rows(double *c, int ld, int w, const lapack_int *piv, int r0, int kb)
{
    lapack_int *loc = malloc((size_t)kb * sizeof(*loc));
    if (!loc)
        die("out of memory (pivots)");
    for (int i = 0; i < kb; i++)
        loc[i] = piv[i] - r0;
    LAPACKE_dlaswp_work(LAPACK_COL_MAJOR, w, c + r0, ld, 1, kb, loc, 1);
    free(loc);
}

/* Step r0's interchanges on block column c (buf[2]); right of the panel
 * (buf[0]) also its trsm and gemm update. */
static void u_lu_update(void *buf[], void *arg)
{
    sp_par_t p;
    starpu_codelet_unpack_args(arg, &p);
    int n = SP_NX(buf[2]), w = SP_NY(buf[2]), ld = SP_LD(buf[2]);
    double *c = SP_PTR(buf[2]);
    swap_rows(c, ld, w, (const lapack_int *)STARPU_VECTOR_GET_PTR(buf[1]), p.r0, p.kb);
    if (p.right)
        sp_lu_right(SP_PTR(buf[0]), SP_LD(buf[0]), c, ld, n, w, p.r0, p.kb);
}

static struct starpu_codelet cl_getrf_mpi = {.cpu_funcs = {u_getrf}, .nbuffers = 2,
                                             .modes = {STARPU_RW, STARPU_W}, .name = "getrf"};
static struct starpu_codelet cl_lu_update_mpi = {.cpu_funcs = {u_lu_update}, .nbuffers = 3,
                                                 .modes = {STARPU_R, STARPU_R, STARPU_RW},
                                                 .name = "lu_update"};

/* The solve through the factors, on b (n x 1, one handle), as
 * dagger_linalg_gesv: step r0's interchanges, then per step the forward
 * (unit lower) and, in reverse, the backward (upper) substitution with
 * block column k (buf[0]): the step's rows by its diagonal block, the
 * other rows updated by a gemv. */
static void u_laswp_b(void *buf[], void *arg)
{
    sp_par_t p;
    starpu_codelet_unpack_args(arg, &p);
    swap_rows(SP_PTR(buf[1]), SP_LD(buf[1]), 1, (const lapack_int *)STARPU_VECTOR_GET_PTR(buf[0]),
              p.r0, p.kb);
}

static void u_lsolve(void *buf[], void *arg)
{
    sp_par_t p;
    starpu_codelet_unpack_args(arg, &p);
    const double *a = SP_PTR(buf[0]);
    double *b = SP_PTR(buf[1]);
    int n = SP_NX(buf[0]), ld = SP_LD(buf[0]), below = n - p.r0 - p.kb;
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasUnit, p.kb, a + p.r0, ld, b + p.r0,
                1);
    if (below > 0)
        cblas_dgemv(CblasColMajor, CblasNoTrans, below, p.kb, -1.0, a + p.r0 + p.kb, ld,
                    b + p.r0, 1, 1.0, b + p.r0 + p.kb, 1);
}

static void u_usolve(void *buf[], void *arg)
{
    sp_par_t p;
    starpu_codelet_unpack_args(arg, &p);
    const double *a = SP_PTR(buf[0]);
    double *b = SP_PTR(buf[1]);
    int ld = SP_LD(buf[0]);
    cblas_dtrsv(CblasColMajor, CblasUpper, CblasNoTrans, CblasNonUnit, p.kb, a + p.r0, ld,
                b + p.r0, 1);
    if (p.r0 > 0)
        cblas_dgemv(CblasColMajor, CblasNoTrans, p.r0, p.kb, -1.0, a, ld, b + p.r0, 1, 1.0, b, 1);
}

static struct starpu_codelet cl_laswp_b = {.cpu_funcs = {u_laswp_b}, .nbuffers = 2,
                                           .modes = {STARPU_R, STARPU_RW}, .name = "laswp_b"};
static struct starpu_codelet cl_lsolve = {.cpu_funcs = {u_lsolve}, .nbuffers = 2,
                                          .modes = {STARPU_R, STARPU_RW}, .name = "lsolve"};
static struct starpu_codelet cl_usolve = {.cpu_funcs = {u_usolve}, .nbuffers = 2,
                                          .modes = {STARPU_R, STARPU_RW}, .name = "usolve"};

/* dagger_linalg_potrf's DAG and priorities (core/linalg/potrf.c): the next
 * panel's tasks first, so the factorisation looks ahead. */
static void submit_chol(const job_t *j, mat_t *a)
{
    int nt = j->nt;
#define H(i, k) a->h[(i) + (k) * nt]
    sp_par_t upd = {.ta = 0, .tb = 1, .alpha = -1.0, .beta = 1.0};
    for (int k = 0; k < nt; k++) {
        insert(&cl_potrf, NULL, 4, H(k, k), NULL, NULL, NULL);
        for (int i = k + 1; i < nt; i++)
            insert(&cl_trsm, NULL, 3, H(k, k), H(i, k), NULL, NULL);
        for (int i = k + 1; i < nt; i++) {
            insert(&cl_syrk, &upd, i == k + 1 ? 3 : 0, H(i, k), H(i, i), NULL, NULL);
            for (int l = k + 1; l < i; l++)
                insert(&cl_gemm, &upd, l == k + 1, H(i, k), H(l, k), H(i, l), NULL);
        }
    }
#undef H
}

/* The one-process reference's LU DAG (one update task per other block
 * column and step) with dagger_linalg_getrf's priorities (core/linalg/
 * getrf.c): the panel 10, the next block column 9, the others to the
 * right 5, the interchanges to the left 0. */
static void submit_lu(const job_t *j, mat_t *col, piv_t *piv)
{
    for (int k = 0; k < j->nt; k++) {
        sp_par_t p = {.r0 = k * j->ts, .kb = j->ts};
        insert(&cl_getrf_mpi, &p, 10, col->h[k], piv->h[k], NULL, NULL);
        for (int c = 0; c < j->nt; c++) {
            p.right = c > k;
            if (c != k)
                insert(&cl_lu_update_mpi, &p, c < k ? 0 : c == k + 1 ? 9 : 5, col->h[k],
                       piv->h[k], col->h[c], NULL);
        }
    }
}

/* A x = b: the LU DAG, then b's interchanges and the two substitutions. */
static void submit_solve(const job_t *j, mat_t *col, piv_t *piv, mat_t *b)
{
    submit_lu(j, col, piv);
    for (int k = 0; k < j->nt; k++) {
        sp_par_t p = {.r0 = k * j->ts, .kb = j->ts};
        insert(&cl_laswp_b, &p, 0, piv->h[k], b->h[0], NULL, NULL);
    }
    for (int k = 0; k < j->nt; k++) {
        sp_par_t p = {.r0 = k * j->ts, .kb = j->ts};
        insert(&cl_lsolve, &p, 0, col->h[k], b->h[0], NULL, NULL);
    }
    for (int k = j->nt - 1; k >= 0; k--) {
        sp_par_t p = {.r0 = k * j->ts, .kb = j->ts};
        insert(&cl_usolve, &p, 0, col->h[k], b->h[0], NULL, NULL);
    }
}

static void submit_matmul(const job_t *j, mat_t *a, mat_t *b, mat_t *c)
{
    int nt = j->nt;
    sp_par_t nn1 = {.alpha = 1.0, .beta = 1.0};
    for (int k = 0; k < nt; k++)
        for (int tj = 0; tj < nt; tj++)
            for (int ti = 0; ti < nt; ti++)
                insert(&cl_gemm, &nn1, 0, a->h[ti + k * nt], b->h[k + tj * nt],
                       c->h[ti + tj * nt], NULL);
}

/* y = A x as dagger_linalg_gemv and the one-process reference: one task
 * per (piece of y, tile of A), beta 0 on each piece's first. */
static void submit_matvec(const job_t *j, mat_t *a, mat_t *x, mat_t *y)
{
    for (int l = 0; l < j->nt; l++)
        for (int i = 0; i < j->nt; i++) {
            sp_par_t p = {.alpha = 1.0, .beta = l ? 1.0 : 0.0};
            insert(&cl_gemv_mpi, &p, 0, a->h[i + l * j->nt], x->h[l], y->h[i], NULL);
        }
}

/* The one-process reference's flat-tree QR (bench_linalg_starpu_fact.h),
 * no priorities (dagger_linalg_geqrf has none). */
static void submit_qr(const job_t *j, mat_t *a, mat_t *t)
{
    int nt = j->nt;
#define H(i, k) a->h[(i) + (k) * nt]
#define T(i, k) t->h[(i) + (k) * nt]
    sp_par_t p = {.ib = t->mb};
    for (int k = 0; k < nt; k++) {
        insert(&cl_geqrt, &p, 0, H(k, k), T(k, k), NULL, NULL);
        for (int n = k + 1; n < nt; n++)
            insert(&cl_gemqrt, &p, 0, H(k, k), T(k, k), H(k, n), NULL);
        for (int m = k + 1; m < nt; m++) {
            insert(&cl_tpqrt, &p, 0, H(k, k), H(m, k), T(m, k), NULL);
            for (int n = k + 1; n < nt; n++)
                insert(&cl_tpmqrt, &p, 0, H(m, k), T(m, k), H(k, n), H(m, n));
        }
    }
#undef H
#undef T
}

/* C (lower) = A^T A as dagger_linalg_syrk and the one-process reference:
 * syrk tasks on the diagonal, gemm (T, N) below, beta 0 on each tile's
 * first product. */
static void submit_syrk(const job_t *j, mat_t *a, mat_t *c)
{
    int nt = j->nt;
    for (int i = 0; i < nt; i++)
        for (int k = 0; k <= i; k++)
            for (int l = 0; l < nt; l++) {
                sp_par_t p = {.ta = 1, .tb = 0, .alpha = 1.0, .beta = l ? 1.0 : 0.0};
                if (i == k)
                    insert(&cl_syrk, &p, 0, a->h[l + i * nt], c->h[i + i * nt], NULL, NULL);
                else
                    insert(&cl_gemm, &p, 0, a->h[l + i * nt], a->h[l + k * nt],
                           c->h[i + k * nt], NULL);
            }
}

/* The whole matrix m on rank 0 (column-major, ld mt mb); NULL elsewhere. */
static double *collect(const job_t *j, const mat_t *m)
{
    size_t ld = (size_t)m->mt * m->mb, mb = (size_t)m->mb, tb = mb * (size_t)m->nb;
    double *full = j->rank == 0 ? malloc(ld * (size_t)m->nt * m->nb * sizeof(double)) : NULL;
    double *buf = malloc(tb * sizeof(double));
    if ((j->rank == 0 && !full) || !buf)
        die("out of memory (collect)");
    for (int tj = 0; tj < m->nt; tj++)
        for (int ti = 0; ti < m->mt; ti++) {
            int o = mat_owner(j, m, ti, tj), tag = ti + tj * m->mt;
            const double *t = m->tile[ti + tj * m->mt];
            if (j->rank == 0 && o != 0)
                MPI_Recv(buf, (int)tb, MPI_DOUBLE, o, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else if (j->rank == o && o != 0)
                MPI_Send(t, (int)tb, MPI_DOUBLE, 0, tag, MPI_COMM_WORLD);
            if (j->rank == 0)
                for (size_t y = 0; y < (size_t)m->nb; y++)
                    memcpy(full + (size_t)ti * mb + ((size_t)tj * m->nb + y) * ld,
                           (o == 0 ? t : buf) + y * mb, mb * sizeof(double));
        }
    free(buf);
    return full;
}

/* LU's pivots on rank 0 (n of them); NULL elsewhere. */
static lapack_int *collect_piv(const job_t *j, const piv_t *v)
{
    lapack_int *all = j->rank == 0 ? malloc((size_t)j->n * sizeof(lapack_int)) : NULL;
    if (j->rank == 0 && !all)
        die("out of memory (collect)");
    MPI_Datatype type = sizeof(lapack_int) == sizeof(int) ? MPI_INT : MPI_INT64_T;
    for (int k = 0; k < j->nt; k++) {
        int o = k % j->nranks;
        if (j->rank == 0 && o != 0)
            MPI_Recv(all + (size_t)k * j->ts, j->ts, type, o, k, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        else if (j->rank == o && o != 0)
            MPI_Send(v->p[k], j->ts, type, 0, k, MPI_COMM_WORLD);
        else if (j->rank == 0)
            memcpy(all + (size_t)k * j->ts, v->p[k], (size_t)j->ts * sizeof(lapack_int));
    }
    return all;
}

/* Relative Frobenius error of got against want over what the row defines
 * (the lower triangle for cholesky and syrk, |upper| for qr, the vector
 * for matvec and solve), on rank 0. */
static double rel_err(int row, size_t n, const double *got, const double *want)
{
    double d = 0, w = 0;
    for (size_t c = 0; c < (row == ROW_MATVEC || row == ROW_SOLVE ? 1 : n); c++)
        for (size_t r = 0; r < n; r++) {
            double g = got[r + c * n], x = want[r + c * n];
            if ((row == ROW_CHOL || row == ROW_SYRK) && r < c)
                continue;
            if (row == ROW_QR) {
                if (r > c)
                    continue;
                g = fabs(g), x = fabs(x);
            }
            d += (g - x) * (g - x);
            w += x * x;
        }
    return w > 0 ? sqrt(d / w) : sqrt(d);
}

/* The row's input `which` of the whole matrix. */
static double *whole(const job_t *j, int which)
{
    size_t n = (size_t)j->n;
    double *m = malloc(n * n * sizeof(double));
    if (!m)
        die("out of memory (reference)");
    for (size_t c = 0; c < n; c++)
        for (size_t i = 0; i < n; i++)
            m[i + c * n] = value(which, i, c, n);
    return m;
}

/* The reference result of the row on rank 0, from the generators; LU's
 * pivots into ipiv. */
static double *reference(const job_t *j, int row, lapack_int *ipiv)
{
    int n = j->n;
    /* syrk's C starts as anything: beta 0 overwrites its lower triangle. */
    double *r = whole(j, row == ROW_CHOL ? 0 : row == ROW_MATMUL ? 3 : 1);
    int info = 0;
    if (row == ROW_CHOL)
        info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, r, n);
    else if (row == ROW_LU)
        info = LAPACKE_dgetrf(LAPACK_COL_MAJOR, n, n, r, n, ipiv);
    else if (row == ROW_QR) {
        double *tau = malloc((size_t)n * sizeof(double));
        info = tau ? LAPACKE_dgeqrf(LAPACK_COL_MAJOR, n, n, r, n, tau) : -1;
        free(tau);
    } else if (row == ROW_SOLVE) {
        double *x = whole(j, 2); /* b: its first column; x into it */
        lapack_int *p = malloc((size_t)n * sizeof(*p));
        info = p ? LAPACKE_dgesv(LAPACK_COL_MAJOR, n, 1, r, n, p, x, n) : -1;
        memcpy(r, x, (size_t)n * sizeof(double));
        free(p);
        free(x);
    } else if (row == ROW_MATVEC) {
        double *a = whole(j, 1), *x = whole(j, 2); /* x: its first column */
        cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, a, n, x, 1, 0.0, r, 1);
        free(a);
        free(x);
    } else {
        double *a = whole(j, 1), *b = row == ROW_MATMUL ? whole(j, 2) : NULL;
        if (row == ROW_MATMUL)
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 1.0,
                        r, n);
        else
            cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, n, n, 1.0, a, n, 0.0, r, n);
        free(a);
        free(b);
    }
    if (info != 0)
        die("the reference LAPACK call failed");
    return r;
}

/* One run of the row: its time in seconds (the slowest rank's); with check,
 * the result's error against the reference (on rank 0, else 0; a pivot
 * that differs from dgetrf's counts as error 1). */
static double run(const job_t *j, int row, int check, double *err)
{
    mat_t m[3];
    piv_t piv = {0};
    int nm = row == ROW_MATMUL || row == ROW_MATVEC ? 3
             : row == ROW_QR || row == ROW_SYRK || row == ROW_SOLVE ? 2 : 1;
    int res = 0;
    int nt = j->nt, ts = j->ts;
    if (row == ROW_LU || row == ROW_SOLVE) {
        mat_alloc(j, &m[0], 1, nt, j->n, ts, 1);
        mat_fill(j, &m[0], 1);
        if (row == ROW_SOLVE) {
            mat_alloc(j, &m[1], 1, 1, j->n, 1, 1); /* b: the first column of input 2 */
            mat_fill(j, &m[1], 2);
            res = 1;
        }
        piv_alloc(j, &piv, 2);
    } else if (row == ROW_MATVEC) {
        mat_alloc(j, &m[0], nt, nt, ts, ts, 0);
        mat_fill(j, &m[0], 1);
        mat_alloc(j, &m[1], nt, 1, ts, 1, 1); /* x: the first column of input 2 */
        mat_fill(j, &m[1], 2);
        mat_alloc(j, &m[2], nt, 1, ts, 1, 1); /* y: zeros */
        res = 2;
    } else if (row == ROW_QR) {
        int ib = ts < SP_IB ? ts : SP_IB;
        mat_alloc(j, &m[0], nt, nt, ts, ts, 0);
        mat_fill(j, &m[0], 1);
        mat_alloc(j, &m[1], nt, nt, ib, ts, 0); /* T: ib x ts beside each tile */
    } else {
        for (int k = 0; k < nm; k++) {
            mat_alloc(j, &m[k], nt, nt, ts, ts, 0);
            if (!(row == ROW_SYRK && k == 1)) /* syrk's C: zeros */
                mat_fill(j, &m[k], row == ROW_CHOL ? 0 : k + 1);
        }
        res = nm - 1;
    }
    for (int k = 0; k < nm; k++)
        mat_register(j, &m[k], k);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    switch (row) {
    case ROW_CHOL: submit_chol(j, &m[0]); break;
    case ROW_LU: submit_lu(j, &m[0], &piv); break;
    case ROW_MATMUL: submit_matmul(j, &m[0], &m[1], &m[2]); break;
    case ROW_MATVEC: submit_matvec(j, &m[0], &m[1], &m[2]); break;
    case ROW_QR: submit_qr(j, &m[0], &m[1]); break;
    case ROW_SOLVE: submit_solve(j, &m[0], &piv, &m[1]); break;
    default: submit_syrk(j, &m[0], &m[1]); break;
    }
    starpu_task_wait_for_all();
    starpu_mpi_wait_for_all(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (int k = 0; k < nm; k++)
        mat_unregister(&m[k]);
    lapack_int *got_piv = NULL;
    if (row == ROW_LU || row == ROW_SOLVE) {
        if (check && row == ROW_LU)
            got_piv = collect_piv(j, &piv); /* before piv_free: unregistered there */
        piv_free(j, &piv);
    }
    *err = 0;
    if (check) {
        double *got = collect(j, &m[res]);
        if (j->rank == 0) {
            lapack_int *want_piv = row == ROW_LU ? malloc((size_t)j->n * sizeof(lapack_int)) : NULL;
            if (row == ROW_LU && !want_piv)
                die("out of memory (reference)");
            double *want = reference(j, row, want_piv);
            *err = rel_err(row, (size_t)j->n, got, want);
            for (int i = 0; row == ROW_LU && i < j->n; i++)
                if (got_piv[i] != want_piv[i])
                    *err = 1;
            free(want);
            free(got);
            free(want_piv);
        }
    }
    free(got_piv);
    for (int k = 0; k < nm; k++)
        mat_free(&m[k]);
    return t;
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* bench_linalg_tiled's tiles for size n (its tiles_for): the two,
 * or the TILES argument's one or two. */
static int tiles_for(int n, const char *arg, int out[2])
{
    if (strcmp(arg, "issue"))
        return sscanf(arg, "%d,%d", &out[0], &out[1]);
    out[0] = n == 256 ? 256 : 512;
    out[1] = n == 256 ? 128 : n == 1024 ? 128 : 256;
    return 2;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    job_t j = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &j.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &j.nranks);
    if (argc != 6) {
        if (j.rank == 0)
            fprintf(stderr, "usage: STARPU_NCPU=T mpirun -n R %s OUT N REPS "
                    "cholesky,lu,matmul,matvec,qr,solve,syrk "
                    "issue|t1,t2,...\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    if (provided < MPI_THREAD_MULTIPLE)
        die("this MPI does not give MPI_THREAD_MULTIPLE");
    const char *out = argv[1], *rows = argv[4];
    j.n = atoi(argv[2]);
    int reps = atoi(argv[3]), tiles[2], ntiles = tiles_for(j.n, argv[5], tiles);
    if (j.n <= 0 || reps <= 0 || reps > 1000)
        die("N and REPS must be positive (REPS at most 1000)");
    const char *grid = getenv("BENCH_GRID");
    if (!grid || sscanf(grid, "%dx%d", &j.prows, &j.pcols) != 2 || j.prows <= 0 || j.pcols <= 0 ||
        j.prows * j.pcols > j.nranks) {
        j.prows = 1;
        for (int q = 1; q * q <= j.nranks; q++)
            if (j.nranks % q == 0)
                j.prows = q;
        j.pcols = j.nranks / j.prows;
    }
    setenv("STARPU_NCPU", "1", 0);
    setenv("STARPU_NCUDA", "0", 1);
    setenv("STARPU_NOPENCL", "0", 1);
    setenv("STARPU_SILENT", "1", 1);
    setenv("STARPU_CALIBRATE", "0", 0);
    const char *prio = getenv("BENCH_STARPU_PRIO");
    use_prio = !prio || strcmp(prio, "0") != 0;
    setenv("STARPU_SCHED", use_prio ? "prio" : "lws", 0);
    char why[256];
    if (dg_la_blas_lib_load(why, sizeof(why))) /* dg_la_dtrsm_rec calls through it */
        die(why);
    openblas_set_num_threads(1); /* one BLAS thread inside each task */
    cl_syrk.cpu_funcs[0] = u_syrk;
    cl_gemm.cpu_funcs[0] = u_gemm;
    cl_geqrt.cpu_funcs[0] = u_geqrt;
    cl_gemqrt.cpu_funcs[0] = u_gemqrt;
    cl_tpqrt.cpu_funcs[0] = u_tpqrt;
    cl_tpmqrt.cpu_funcs[0] = u_tpmqrt;
    starpu_mpi_bind_spread();
    if (starpu_mpi_init_conf(&argc, &argv, 0, MPI_COMM_WORLD, NULL) != 0)
        die("starpu_mpi_init_conf failed");
    FILE *f = j.rank == 0 ? fopen(out, "a") : NULL;
    if (j.rank == 0 && !f)
        die("cannot open the results file");
    int wrong = 0;
    for (int r = 0; r < NROW; r++) {
        const char *name = row_names[r];
        if (!strstr(rows, name))
            continue;
        for (int t = 0; t < ntiles; t++) {
            j.ts = tiles[t];
            if (j.ts <= 0 || j.n % j.ts != 0) {
                if (j.rank == 0)
                    printf("%s N=%d tile %d: skipped (the tile must divide N)\n", name, j.n, j.ts);
                continue;
            }
            /* QR on a grid of more than one process row: tpqrt writes tiles
             * of two owners, and with tiles of 256 and more StarPU-MPI
             * hung in the timed runs (N = 1024 / 256 and 2048 / 512 on
             * 2 x 1 and 2 x 2 grids: one rank in starpu_mpi_wait_for_all,
             * its MPI thread in MPI_Wait, the other waiting for its tasks). */
            if (r == ROW_QR && j.prows > 1 && j.ts >= 256 && !getenv("BENCH_STARPU_QR_ANY_GRID")) {
                if (j.rank == 0)
                    printf("%s N=%d tile %d: skipped on a %dx%d grid (StarPU-MPI hung there; "
                           "BENCH_STARPU_QR_ANY_GRID=1 runs it)\n", name, j.n, j.ts, j.prows,
                           j.pcols);
                continue;
            }
            j.nt = j.n / j.ts;
            double err, secs[1000];
            run(&j, r, 1, &err); /* warm-up, and the check */
            for (int k = 0; k < reps; k++) {
                double e;
                secs[k] = run(&j, r, 0, &e);
            }
            if (j.rank != 0)
                continue;
            static const double per_n3[NROW] = {1.0 / 3, 2.0 / 3, 2.0, 0, 4.0 / 3, 2.0 / 3, 1.0};
            double flops = per_n3[r] * j.n * j.n * j.n +
                           (r == ROW_MATVEC || r == ROW_SOLVE ? 2.0 * j.n * j.n : 0);
            double sorted[1000];
            memcpy(sorted, secs, (size_t)reps * sizeof(double));
            qsort(sorted, (size_t)reps, sizeof(double), cmp);
            int ok = err <= TOL;
            wrong |= !ok;
            printf("%s N=%d tile %d, StarPU-MPI %d x %s (grid %dx%d): %.3f ms median "
                   "[%.3f-%.3f], %.2f GF/s, error %.1e %s\n", name, j.n, j.ts, j.nranks,
                   getenv("STARPU_NCPU"), j.prows, j.pcols, sorted[reps / 2] * 1e3,
                   sorted[0] * 1e3, sorted[reps - 1] * 1e3, flops / sorted[reps / 2] * 1e-9, err,
                   ok ? "ok" : "WRONG");
            fprintf(f, "#starpu_samples %s n=%d tile=%d", name, j.n, j.ts);
            for (int k = 0; k < reps; k++)
                fprintf(f, " %.6f", ok ? secs[k] : -1.0);
            fprintf(f, "\n");
        }
    }
    if (f)
        fclose(f);
    MPI_Bcast(&wrong, 1, MPI_INT, 0, MPI_COMM_WORLD);
    starpu_mpi_shutdown();
    MPI_Finalize();
    return wrong ? 1 : 0;
}
