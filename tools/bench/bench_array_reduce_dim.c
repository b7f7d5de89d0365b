/* dagger_array_reduce_dim against one plain C loop: row sums (along
 * dimension 1) and column sums (along dimension 0) of an N x N f64 matrix in
 * b x b blocks, dealt as dagger_array_rand deals them, into outputs of one
 * block (N x 1 and 1 x N); b may be b0xb1 for b0 x b1 blocks (Nx512: column
 * blocks, so that the row sums are one output tile over N / 512 blocks).
 * The same-run reference is the serial loop over
 * the whole matrix on one thread of rank 0 (the matrix collected there
 * first), timed in turns with the runtime's call; the ratio is serial over
 * dagger (above 1: faster than one thread).
 *
 *   bench_array_reduce_dim [results-file] [N] [b | b0xb1] [reps]
 *   DAGGER_NUM_THREADS=2 bench_array_reduce_dim            (1 rank x 2 threads)
 *   DAGGER_NUM_THREADS=1 tools/dagger-run -n 2 bench_array_reduce_dim
 *
 * Defaults: /tmp/bench_array_reduce_dim.txt, N = 4096, b = 512, 9 reps
 * after one warm-up; medians and ranges. docs/arrays.md ("Along one
 * dimension") quotes it. */
#include <dagger.h>
#include <dagger/array.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void must(dagger_status_t st, const char *what)
{
    if (st != DAGGER_OK) {
        fprintf(stderr, "bench_array_reduce_dim: %s: %s: %s\n", what, dagger_strerror(st),
                dagger_error_detail());
        exit(1);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Column-major, as the arrays are: element (i, j) at x[i + n * j]. */
static void serial_sums(const double *x, size_t n, int dim, double *out)
{
    if (dim == 1) { /* row sums: walk the columns, add each into its row */
        memset(out, 0, n * sizeof(double));
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++)
                out[i] += x[i + n * j];
        return;
    }
    for (size_t j = 0; j < n; j++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += x[i + n * j];
        out[j] = s;
    }
}

int main(int argc, char **argv)
{
    dagger_runtime_t *rt;
    must(dagger_init(&argc, &argv, NULL, &rt), "dagger_init");
    const char *path = argc > 1 ? argv[1] : "/tmp/bench_array_reduce_dim.txt";
    size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 4096;
    char *end = NULL;
    size_t b0 = argc > 3 ? strtoul(argv[3], &end, 10) : 512, b1 = b0;
    if (end && *end == 'x')
        b1 = strtoul(end + 1, &end, 10);
    int reps = argc > 4 ? atoi(argv[4]) : 9;
    if (n == 0 || b0 == 0 || b1 == 0 || (end && *end) || reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: bench_array_reduce_dim [results-file] [N] [b | b0xb1] "
                "[reps 1..1000]\n");
        return 2;
    }
    int me = dagger_rank(rt);
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {n, n}, .block = {b0, b1}};
    dagger_array_t *x;
    must(dagger_array_rand(rt, &d, 11, &x), "dagger_array_rand");
    double *host = malloc(n * n * sizeof(double)), *ref = malloc(n * sizeof(double));
    double *got = malloc(n * sizeof(double));
    double *td = malloc((size_t)reps * sizeof(double)), *ts = malloc((size_t)reps * sizeof(double));
    if (!host || !ref || !got || !td || !ts) {
        fprintf(stderr, "bench_array_reduce_dim: out of memory\n");
        return 1;
    }
    must(dagger_array_collect(x, host), "dagger_array_collect");
    FILE *f = me == 0 ? fopen(path, "w") : NULL;
    if (me == 0)
        printf("%d ranks x %d threads; N = %zu, blocks %zu x %zu (%zu x %zu of them)\n"
               "%-22s %10s %18s %10s %8s\n", dagger_nranks(rt), dagger_num_threads(rt), n, b0, b1,
               (n + b0 - 1) / b0, (n + b1 - 1) / b1, "case", "dagger ms", "[range]", "serial ms",
               "ser/dg");
    for (int dim = 1; dim >= 0; dim--) {
        dagger_array_desc_t od = d;
        od.dims[dim] = 1;
        od.block[dim] = 1;
        od.block[1 - dim] = n; /* one block: every chain (or tree) ends in one tile */
        dagger_array_t *out;
        must(dagger_array_zeros(rt, &od, &out), "dagger_array_zeros");
        for (int r = -1; r < reps; r++) { /* r = -1: the warm-up */
            must(dagger_barrier(rt), "dagger_barrier");
            double t0 = now();
            must(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, x, dim, out), "reduce_dim");
            double t = now() - t0;
            must(dagger_allreduce(rt, &t, 1, DAGGER_F64, DAGGER_OP_MAX), "dagger_allreduce");
            double s = 0;
            if (me == 0) {
                t0 = now();
                serial_sums(host, n, dim, ref);
                s = now() - t0;
            }
            if (r >= 0) {
                td[r] = t * 1e3;
                ts[r] = s * 1e3;
            }
        }
        must(dagger_array_collect(out, got), "dagger_array_collect");
        double err = 0;
        for (size_t i = 0; me == 0 && i < n; i++) {
            double e = got[i] - ref[i];
            e = e < 0 ? -e : e;
            err = e > err ? e : err;
        }
        qsort(td, (size_t)reps, sizeof(double), cmp);
        qsort(ts, (size_t)reps, sizeof(double), cmp);
        double md = td[reps / 2], ms = ts[reps / 2];
        if (me == 0) {
            const char *name = dim == 1 ? "row sums (dim 1)" : "column sums (dim 0)";
            printf("%-22s %10.3f [%7.3f-%7.3f] %10.3f %8.2f   max |diff| %.1e\n", name, md, td[0],
                   td[reps - 1], ms, ms / md, err);
            if (f)
                fprintf(f, "reduce_dim dim=%d n=%zu b=%zux%zu ranks=%d threads=%d dagger_ms=%.4f "
                        "min=%.4f max=%.4f serial_ms=%.4f ratio=%.4f err=%.2e\n", dim, n, b0, b1,
                        dagger_nranks(rt), dagger_num_threads(rt), md, td[0], td[reps - 1], ms,
                        ms / md, err);
        }
        must(dagger_array_destroy(out), "dagger_array_destroy");
    }
    if (f) {
        fclose(f);
        printf("results written to %s\n", path);
    }
    must(dagger_array_destroy(x), "dagger_array_destroy");
    free(host);
    free(ref);
    free(got);
    free(td);
    free(ts);
    must(dagger_finalize(rt), "dagger_finalize");
    return 0;
}
