/* A prepared stencil sweep against a plain serial C loop on the same data
 * (issue 17, "stencil sweeps"): y = the 3 x 3 neighbour sum of x (Wrap), an
 * N x N f64 array, at the seeds' N = 256, 1024 and a larger N where threads
 * can pay off, with blocks 128 and 512. The serial loop is built twice
 * (stencil_serial.h): "plain" with the project's flags, "vec" with the flags
 * the runtime's stencil kernel gets (GCC then vectorizes both), so "vec" is
 * the like-for-like reference. A fourth variant, "par", is the vec loop with
 * its lines split evenly between as many plain threads as the runtime has
 * workers (the calling thread and helpers kept waiting at a barrier between
 * sweeps, unbound): what the loop itself gets from the threads, the ceiling
 * a runtime's sweep is up against on the same cores and memory. The four
 * variants rotate within each repetition (the machine is shared: only
 * same-run ratios count); the output gives the median and range of each and
 * of the per-repetition ratios serial / dagger (above 1: the sweep is faster
 * than the loop) and vec / par.
 *
 *   DAGGER_NUM_THREADS=2 bench_stencil_sweep [file] [sizes] [blocks]
 * file defaults to /tmp/bench_stencil_sweep.txt; sizes like 256,1024,4096;
 * blocks like 128,512; BENCH_REPS sets the repetitions (3..64, default 11).
 * BENCH_SWEEPS=k (1..64, default 1) times k sweeps of each variant back to
 * back and reports the time of one: with 1 every sweep starts after the
 * other variants' loops, its workers asleep (on this VM their wake-up is a
 * tenth of a 1024 x 1024 sweep); with more, most sweeps start with them
 * awake, as in a program that sweeps in a loop.
 * Run on one rank (the serial loop runs on rank 0 with the whole array). */
#include <dagger.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/bench/stencil_serial.h"

#define MAX_REPS 64

#define MAX_PAR 64

/* The "par" variant's threads: the caller is part 0, helper k part k + 1;
 * all wait at `start` for a sweep and at `done` after it. */
typedef struct par {
    pthread_barrier_t start, done;
    pthread_t helper[MAX_PAR];
    int nthreads, stop;
    const double *x;
    double *y;
    long n;
} par_t;

typedef struct par_part {
    par_t *p;
    int k;
} par_part_t;

static par_part_t par_parts[MAX_PAR];

static void par_sweep_part(par_t *p, int k)
{
    long j0 = p->n * k / p->nthreads, j1 = p->n * (k + 1) / p->nthreads;
    dg_bench_serial_sweep_rows_vec(p->x, p->y, p->n, j0, j1);
}

static void *par_helper(void *arg)
{
    par_part_t *pp = arg;
    for (;;) {
        pthread_barrier_wait(&pp->p->start);
        if (pp->p->stop)
            return NULL;
        par_sweep_part(pp->p, pp->k);
        pthread_barrier_wait(&pp->p->done);
    }
}

static void par_start(par_t *p, int nthreads)
{
    p->nthreads = nthreads < 1 ? 1 : nthreads > MAX_PAR ? MAX_PAR : nthreads;
    p->stop = 0;
    pthread_barrier_init(&p->start, NULL, (unsigned)p->nthreads);
    pthread_barrier_init(&p->done, NULL, (unsigned)p->nthreads);
    for (int k = 1; k < p->nthreads; k++) {
        par_parts[k] = (par_part_t){p, k};
        if (pthread_create(&p->helper[k], NULL, par_helper, &par_parts[k])) {
            fprintf(stderr, "bench_stencil_sweep: cannot start a thread of the par variant\n");
            exit(1);
        }
    }
}

static void par_run(par_t *p, const double *x, double *y, long n)
{
    p->x = x;
    p->y = y;
    p->n = n;
    pthread_barrier_wait(&p->start);
    par_sweep_part(p, 0);
    pthread_barrier_wait(&p->done);
}

static void par_stop(par_t *p)
{
    p->stop = 1;
    pthread_barrier_wait(&p->start);
    for (int k = 1; k < p->nthreads; k++)
        pthread_join(p->helper[k], NULL);
    pthread_barrier_destroy(&p->start);
    pthread_barrier_destroy(&p->done);
}

/* Exits with the runtime's detail when st is an error. */
static void must(dagger_status_t st, const char *what)
{
    if (st == DAGGER_OK)
        return;
    fprintf(stderr, "bench_stencil_sweep: %s: %s: %s\n", what, dagger_strerror(st),
            dagger_error_detail());
    exit(1);
}

/* Seconds on the monotonic clock. */
static double now(void)
{
    struct timespec ts;
    return clock_gettime(CLOCK_MONOTONIC, &ts) ? 0 : (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, min and max of v (sorted in place). */
static void stats(double *v, int n, double out[3])
{
    qsort(v, (size_t)n, sizeof(*v), cmp);
    out[0] = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    out[1] = v[0];
    out[2] = v[n - 1];
}

/* The sweep's result against the serial one: a wrong sweep times nothing. */
static void check(dagger_array_t *y, const double *want, size_t m)
{
    double *got = malloc(m * sizeof(double));
    must(dagger_array_collect(y, got), "collect");
    for (size_t i = 0; i < m; i++)
        if (got[i] != want[i]) {
            fprintf(stderr, "bench_stencil_sweep: element %zu is %g, the serial loop says %g\n", i,
                    got[i], want[i]);
            exit(1);
        }
    free(got);
}

static void run_case(dagger_runtime_t *rt, par_t *par, FILE *out, size_t n, size_t blk, int reps,
                     int sweeps)
{
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {n, n}, .block = {blk, blk}};
    dagger_array_t *x, *y;
    must(dagger_array_rand(rt, &d, 1, &x), "x");
    must(dagger_array_zeros(rt, &d, &y), "y");
    dagger_stencil_expr_t e = {.out = y, .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    e.in[0] = (dagger_stencil_input_t){.array = x, .dist = {1, 1},
                                       .bc = {{DAGGER_BC_WRAP, 0}, {DAGGER_BC_WRAP, 0}}};
    dagger_stencil_t *s;
    must(dagger_stencil_create(rt, 1, &e, &s), "stencil");
    size_t m = n * n;
    double *sx = malloc(m * sizeof(double)), *sy = malloc(m * sizeof(double));
    must(dagger_array_collect(x, sx), "collect");
    dg_bench_serial_sweep_vec(sx, sy, (long)n);     /* warm-up, and the reference */
    must(dagger_stencil_run(NULL, s), "sweep");     /* warm-up */
    check(y, sy, m);
    dg_bench_serial_sweep_plain(sx, sy, (long)n);
    check(y, sy, m);
    par_run(par, sx, sy, (long)n);
    check(y, sy, m);
    /* t[0]: the sweep, t[1]: the plain loop, t[2]: the vectorized loop,
     * t[3]: the vectorized loop on plain threads; r[0], r[1], r[2]: plain /
     * sweep, vec / sweep and vec / par. */
    double t[4][MAX_REPS], r[3][MAX_REPS];
    for (int k = 0; k < reps; k++) {
        /* Rotate which variant goes first, so none always runs warm. */
        for (int i = 0; i < 4; i++) {
            int v = (i + k) % 4;
            double t0 = now();
            for (int j = 0; j < sweeps; j++) {
                if (v == 0)
                    must(dagger_stencil_run(NULL, s), "sweep");
                else if (v == 1)
                    dg_bench_serial_sweep_plain(sx, sy, (long)n);
                else if (v == 2)
                    dg_bench_serial_sweep_vec(sx, sy, (long)n);
                else
                    par_run(par, sx, sy, (long)n);
            }
            t[v][k] = (now() - t0) / sweeps;
        }
        r[0][k] = t[1][k] / t[0][k];
        r[1][k] = t[2][k] / t[0][k];
        r[2][k] = t[2][k] / t[3][k];
    }
    double a[3], b[3], c[3], q[3], pr[3], vr[3], qr[3];
    stats(t[0], reps, a);
    stats(t[1], reps, b);
    stats(t[2], reps, c);
    stats(t[3], reps, q);
    stats(r[0], reps, pr);
    stats(r[1], reps, vr);
    stats(r[2], reps, qr);
    char line[520];
    snprintf(line, sizeof(line),
             "N=%-5zu block %-4zu dagger %8.3f ms (%.3f-%.3f)  serial plain %8.3f ms (%.3f-%.3f)  "
             "vec %8.3f ms (%.3f-%.3f)  par %8.3f ms (%.3f-%.3f)  plain/dagger %5.2f (%.2f-%.2f)  "
             "vec/dagger %5.2f (%.2f-%.2f)  vec/par %5.2f (%.2f-%.2f)  reps %d x %d",
             n, blk, a[0] * 1e3, a[1] * 1e3, a[2] * 1e3, b[0] * 1e3, b[1] * 1e3, b[2] * 1e3,
             c[0] * 1e3, c[1] * 1e3, c[2] * 1e3, q[0] * 1e3, q[1] * 1e3, q[2] * 1e3, pr[0], pr[1],
             pr[2], vr[0], vr[1], vr[2], qr[0], qr[1], qr[2], reps, sweeps);
    printf("%s\n", line);
    fprintf(out, "%s\n", line);
    fflush(stdout);
    fflush(out);
    free(sx);
    free(sy);
    must(dagger_stencil_destroy(s), "destroy");
    must(dagger_array_destroy(x), "destroy");
    must(dagger_array_destroy(y), "destroy");
}

static size_t parse_list(const char *s, size_t *v, size_t cap)
{
    size_t k = 0;
    for (char *p = (char *)s; *p && k < cap; p += *p == ',')
        v[k++] = strtoul(p, &p, 10);
    return k;
}

int main(int argc, char **argv)
{
    dagger_runtime_t *rt;
    must(dagger_init(&argc, &argv, NULL, &rt), "init");
    if (dagger_nranks(rt) != 1) {
        fprintf(stderr, "bench_stencil_sweep: run on one rank (the serial loop needs the array)\n");
        dagger_finalize(rt);
        return 2;
    }
    const char *path = argc > 1 ? argv[1] : "/tmp/bench_stencil_sweep.txt";
    size_t sizes[8] = {256, 1024, 4096}, nsizes = 3, blocks[8] = {128, 512}, nblocks = 2;
    if (argc > 2)
        nsizes = parse_list(argv[2], sizes, 8);
    if (argc > 3)
        nblocks = parse_list(argv[3], blocks, 8);
    const char *re = getenv("BENCH_REPS");
    int reps = re ? atoi(re) : 11;
    reps = reps < 3 ? 3 : reps > MAX_REPS ? MAX_REPS : reps;
    const char *sw = getenv("BENCH_SWEEPS");
    int sweeps = sw ? atoi(sw) : 1;
    sweeps = sweeps < 1 ? 1 : sweeps > 64 ? 64 : sweeps;
    FILE *out = fopen(path, "a");
    if (!out) {
        fprintf(stderr, "bench_stencil_sweep: cannot open %s\n", path);
        return 1;
    }
    par_t par;
    par_start(&par, dagger_num_threads(rt));
    fprintf(out, "# bench_stencil_sweep: 3x3 Wrap neighbour sum, f64, 1 rank x %d thread(s), "
            "%d sweep(s) back to back, par on %d plain thread(s)\n", dagger_num_threads(rt), sweeps,
            par.nthreads);
    printf("3x3 Wrap neighbour sum, f64, 1 rank x %d thread(s), %d sweep(s) back to back (time "
           "of one), par on %d plain thread(s); medians (min-max)\n", dagger_num_threads(rt),
           sweeps, par.nthreads);
    for (size_t i = 0; i < nsizes; i++)
        for (size_t j = 0; j < nblocks; j++)
            if (blocks[j] <= sizes[i])
                run_case(rt, &par, out, sizes[i], blocks[j], reps, sweeps);
    par_stop(&par);
    fclose(out);
    must(dagger_finalize(rt), "finalize");
    return 0;
}
