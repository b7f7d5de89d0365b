/* The StarPU-MPI peer of bench_linalg_tiled's multi-rank Cholesky and
 * matmul rows: the same tile kernels and DAGs as its one-process StarPU
 * reference (bench_linalg_starpu_kernels.h), over P processes, on the same
 * 2-D block-cyclic distribution as bench_linalg_tiled's arrays (BENCH_GRID=
 * PxQ, default the squarest with P <= Q; tile (i, j) on rank i % P +
 * P (j % Q)). Every rank registers every tile, its own with memory and the
 * others' without, tells StarPU-MPI their owners, and inserts every task
 * with starpu_mpi_task_insert: the owner of the written tile runs it and
 * StarPU-MPI sends it the remote inputs. No priorities, StarPU's lws
 * scheduler: as the one-process reference. Built when StarPU's MPI layer and
 * Open MPI's development files are found (the runtime links no MPI).
 * tools/bench/linalg-sweep runs it after bench_linalg_tiled on each
 * multi-rank configuration and puts it in the table's StarPU column.
 *
 *   STARPU_NCPU=T mpirun -n R linalg_starpu_mpi OUT N REPS ROWS TILES
 *     ROWS   cholesky, matmul or both (comma-separated)
 *     TILES  "issue" (bench_linalg_tiled's two tiles per N) or t1[,t2]; a
 *            tile that does not divide N is skipped (bench_linalg_tiled
 *            runs those; this peer does not)
 * STARPU_NCPU defaults to 1 (one worker per rank). Each repetition is timed
 * from a barrier to the end of the last rank's tasks and transfers
 * (starpu_mpi_wait_for_all; the slowest rank's time). Registering, setting
 * the inputs and unregistering are outside it. A warm-up repetition first
 * checks the result, collected on rank 0, against LAPACKE dpotrf /
 * cblas_dgemm of the whole matrix (relative Frobenius error at most 1e-8,
 * bench_linalg_tiled's bound): a wrong result prints WRONG and the exit
 * status is 1. Rank 0 appends "#starpu_samples ROW n=N tile=T s1 s2 ..."
 * (seconds, bench_linalg_tiled's format) to OUT and prints one line a row.
 * The inputs are bench_linalg_tiled's generators' kind (a diagonally
 * dominant SPD matrix; uniform [0, 1) entries), not its exact values. */
#include <dagger/array.h>
#include <mpi.h>
#include <starpu_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_linalg_starpu_kernels.h"
#include "starpu_mpi_bind.h"

#define TOL 1e-8

enum { ROW_CHOL, ROW_MATMUL };

typedef struct job {
    int rank, nranks, prows, pcols;
    int n, ts, nt;
} job_t;

/* One matrix: nt x nt tiles of ts x ts (column-major, ld ts); this rank's
 * tiles have memory. */
typedef struct mat {
    double **tile;               /* [i + j nt]: NULL where another rank owns it */
    starpu_data_handle_t *h;     /* [i + j nt] */
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

static void mat_alloc(const job_t *j, mat_t *m)
{
    size_t count = (size_t)j->nt * (size_t)j->nt;
    m->tile = calloc(count, sizeof(*m->tile));
    m->h = calloc(count, sizeof(*m->h));
    if (!m->tile || !m->h)
        die("out of memory (tile table)");
    for (int tj = 0; tj < j->nt; tj++)
        for (int ti = 0; ti < j->nt; ti++)
            if (owner(j, ti, tj) == j->rank &&
                !(m->tile[ti + tj * j->nt] = malloc((size_t)j->ts * (size_t)j->ts * sizeof(double))))
                die("out of memory (tiles)");
}

static void mat_free(const job_t *j, mat_t *m)
{
    for (int k = 0; k < j->nt * j->nt; k++)
        free(m->tile[k]);
    free(m->tile);
    free(m->h);
}

/* This rank's tiles of input `which`. */
static void mat_fill(const job_t *j, mat_t *m, int which)
{
    for (int tj = 0; tj < j->nt; tj++)
        for (int ti = 0; ti < j->nt; ti++) {
            double *t = m->tile[ti + tj * j->nt];
            for (int y = 0; t && y < j->ts; y++)
                for (int x = 0; x < j->ts; x++)
                    t[x + (size_t)y * j->ts] = value(which, (size_t)ti * j->ts + x,
                                                     (size_t)tj * j->ts + y, (size_t)j->n);
        }
}

/* Registers every tile; tags are unique over the matrices of a row. */
static void mat_register(const job_t *j, mat_t *m, int index)
{
    for (int tj = 0; tj < j->nt; tj++)
        for (int ti = 0; ti < j->nt; ti++) {
            int k = ti + tj * j->nt;
            if (m->tile[k])
                starpu_matrix_data_register(&m->h[k], STARPU_MAIN_RAM, (uintptr_t)m->tile[k],
                                            (uint32_t)j->ts, (uint32_t)j->ts, (uint32_t)j->ts,
                                            sizeof(double));
            else
                starpu_matrix_data_register(&m->h[k], -1, 0, (uint32_t)j->ts, (uint32_t)j->ts,
                                            (uint32_t)j->ts, sizeof(double));
            starpu_mpi_data_register(m->h[k], (int64_t)index * j->nt * j->nt + k, owner(j, ti, tj));
        }
}

/* Unregisters every tile: an owned tile's latest value is home after it. */
static void mat_unregister(const job_t *j, mat_t *m)
{
    for (int k = 0; k < j->nt * j->nt; k++)
        starpu_data_unregister(m->h[k]);
}

/* Inserts cl on h0.. with Dagger-C's priority for the tile (0 when
 * BENCH_STARPU_PRIO=0). */
static int use_prio = 1;

static void insert(struct starpu_codelet *cl, const sp_par_t *par, int prio,
                   starpu_data_handle_t h0, starpu_data_handle_t h1, starpu_data_handle_t h2)
{
    int rc, p = use_prio ? prio : 0;
    if (cl == &cl_potrf)
        rc = starpu_mpi_task_insert(MPI_COMM_WORLD, cl, STARPU_RW, h0, STARPU_PRIORITY, p, 0);
    else if (cl == &cl_trsm)
        rc = starpu_mpi_task_insert(MPI_COMM_WORLD, cl, STARPU_R, h0, STARPU_RW, h1,
                                    STARPU_PRIORITY, p, 0);
    else if (cl == &cl_syrk)
        rc = starpu_mpi_task_insert(MPI_COMM_WORLD, cl, STARPU_R, h0, STARPU_RW, h1, STARPU_VALUE,
                                    par, sizeof(*par), STARPU_PRIORITY, p, 0);
    else
        rc = starpu_mpi_task_insert(MPI_COMM_WORLD, cl, STARPU_R, h0, STARPU_R, h1, STARPU_RW, h2,
                                    STARPU_VALUE, par, sizeof(*par), STARPU_PRIORITY, p, 0);
    if (rc != 0)
        die("starpu_mpi_task_insert failed");
}

/* The kernels read their parameters as a sp_par_t; STARPU_VALUE packs them,
 * so these wrappers unpack before calling the shared kernels. */
static void u_syrk(void *buf[], void *arg)
{
    sp_par_t p;
    starpu_codelet_unpack_args(arg, &p);
    s_syrk(buf, &p);
}

static void u_gemm(void *buf[], void *arg)
{
    sp_par_t p;
    starpu_codelet_unpack_args(arg, &p);
    s_gemm(buf, &p);
}

/* dagger_linalg_potrf's DAG and priorities (core/linalg/potrf.c): the next
 * panel's tasks first, so the factorisation looks ahead. */
static void submit_chol(const job_t *j, mat_t *a)
{
    int nt = j->nt;
#define H(i, k) a->h[(i) + (k) * nt]
    sp_par_t upd = {.ta = 0, .tb = 1, .alpha = -1.0, .beta = 1.0};
    for (int k = 0; k < nt; k++) {
        insert(&cl_potrf, NULL, 4, H(k, k), NULL, NULL);
        for (int i = k + 1; i < nt; i++)
            insert(&cl_trsm, NULL, 3, H(k, k), H(i, k), NULL);
        for (int i = k + 1; i < nt; i++) {
            insert(&cl_syrk, &upd, i == k + 1 ? 3 : 0, H(i, k), H(i, i), NULL);
            for (int l = k + 1; l < i; l++)
                insert(&cl_gemm, &upd, l == k + 1, H(i, k), H(l, k), H(i, l));
        }
    }
#undef H
}

static void submit_matmul(const job_t *j, mat_t *a, mat_t *b, mat_t *c)
{
    int nt = j->nt;
    sp_par_t nn1 = {.alpha = 1.0, .beta = 1.0};
    for (int k = 0; k < nt; k++)
        for (int tj = 0; tj < nt; tj++)
            for (int ti = 0; ti < nt; ti++)
                insert(&cl_gemm, &nn1, 0, a->h[ti + k * nt], b->h[k + tj * nt],
                       c->h[ti + tj * nt]);
}

/* The whole matrix m on rank 0 (column-major, ld n); NULL elsewhere. */
static double *collect(const job_t *j, const mat_t *m)
{
    size_t n = (size_t)j->n, ts = (size_t)j->ts, tb = ts * ts;
    double *full = j->rank == 0 ? malloc(n * n * sizeof(double)) : NULL;
    double *buf = malloc(tb * sizeof(double));
    if ((j->rank == 0 && !full) || !buf)
        die("out of memory (collect)");
    for (int tj = 0; tj < j->nt; tj++)
        for (int ti = 0; ti < j->nt; ti++) {
            int o = owner(j, ti, tj), tag = ti + tj * j->nt;
            const double *t = m->tile[ti + tj * j->nt];
            if (j->rank == 0 && o != 0)
                MPI_Recv(buf, (int)tb, MPI_DOUBLE, o, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else if (j->rank == o && o != 0)
                MPI_Send(t, (int)tb, MPI_DOUBLE, 0, tag, MPI_COMM_WORLD);
            if (j->rank == 0)
                for (size_t y = 0; y < ts; y++)
                    memcpy(full + (size_t)ti * ts + ((size_t)tj * ts + y) * n,
                           (o == 0 ? t : buf) + y * ts, ts * sizeof(double));
        }
    free(buf);
    return full;
}

/* Relative Frobenius error of got against want (lower triangle only when
 * lower), on rank 0. */
static double rel_err(size_t n, const double *got, const double *want, int lower)
{
    double d = 0, w = 0;
    for (size_t c = 0; c < n; c++)
        for (size_t r = lower ? c : 0; r < n; r++) {
            double e = got[r + c * n] - want[r + c * n];
            d += e * e;
            w += want[r + c * n] * want[r + c * n];
        }
    return w > 0 ? sqrt(d / w) : sqrt(d);
}

/* The reference result of the row on rank 0, from the generators. */
static double *reference(const job_t *j, int row)
{
    size_t n = (size_t)j->n;
    double *r = malloc(n * n * sizeof(double));
    if (!r)
        die("out of memory (reference)");
    for (size_t c = 0; c < n; c++)
        for (size_t i = 0; i < n; i++)
            r[i + c * n] = value(row == ROW_CHOL ? 0 : 3, i, c, n);
    if (row == ROW_CHOL) {
        if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (int)n, r, (int)n) != 0)
            die("the reference dpotrf failed");
        return r;
    }
    double *a = malloc(n * n * sizeof(double)), *b = malloc(n * n * sizeof(double));
    if (!a || !b)
        die("out of memory (reference)");
    for (size_t c = 0; c < n; c++)
        for (size_t i = 0; i < n; i++) {
            a[i + c * n] = value(1, i, c, n);
            b[i + c * n] = value(2, i, c, n);
        }
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, a, (int)n,
                b, (int)n, 1.0, r, (int)n);
    free(a);
    free(b);
    return r;
}

/* One run of the row: its time in seconds (the slowest rank's); with check,
 * the result's error against the reference (on rank 0, else 0). */
static double run(const job_t *j, int row, int check, double *err)
{
    mat_t m[3];
    int nm = row == ROW_CHOL ? 1 : 3;
    for (int k = 0; k < nm; k++) {
        mat_alloc(j, &m[k]);
        mat_fill(j, &m[k], row == ROW_CHOL ? 0 : k + 1);
        mat_register(j, &m[k], k);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (row == ROW_CHOL)
        submit_chol(j, &m[0]);
    else
        submit_matmul(j, &m[0], &m[1], &m[2]);
    starpu_task_wait_for_all();
    starpu_mpi_wait_for_all(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (int k = 0; k < nm; k++)
        mat_unregister(j, &m[k]);
    *err = 0;
    if (check) {
        double *got = collect(j, &m[nm - 1]);
        if (j->rank == 0) {
            double *want = reference(j, row);
            *err = rel_err((size_t)j->n, got, want, row == ROW_CHOL);
            free(want);
            free(got);
        }
    }
    for (int k = 0; k < nm; k++)
        mat_free(j, &m[k]);
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
            fprintf(stderr, "usage: STARPU_NCPU=T mpirun -n R %s OUT N REPS cholesky,matmul "
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
    starpu_mpi_bind_spread();
    if (starpu_mpi_init_conf(&argc, &argv, 0, MPI_COMM_WORLD, NULL) != 0)
        die("starpu_mpi_init_conf failed");
    FILE *f = j.rank == 0 ? fopen(out, "a") : NULL;
    if (j.rank == 0 && !f)
        die("cannot open the results file");
    int wrong = 0;
    for (int r = ROW_CHOL; r <= ROW_MATMUL; r++) {
        const char *name = r == ROW_CHOL ? "cholesky" : "matmul";
        if (!strstr(rows, name))
            continue;
        for (int t = 0; t < ntiles; t++) {
            j.ts = tiles[t];
            if (j.ts <= 0 || j.n % j.ts != 0) {
                if (j.rank == 0)
                    printf("%s N=%d tile %d: skipped (the tile must divide N)\n", name, j.n, j.ts);
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
            double flops = r == ROW_CHOL ? (double)j.n * j.n * j.n / 3 : 2.0 * j.n * j.n * j.n;
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
