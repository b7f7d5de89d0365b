/* Reproducer of a runtime issue the array benchmarks found (fixed in
 * c1f8005, kept as a regression benchmark): after an array of many blocks
 * was destroyed, small allocations of the executor became slow, because the
 * freed block buffers went into the executor's reuse pool
 * (core/exec/bufs.c), a list searched linearly for an exact size, and every
 * later small allocation (each reduction future is one) walked the whole
 * list, one cache miss per freed buffer.
 *
 * Measures a sum over 1024 blocks (1024 partial tasks, 1023 combines, 2047
 * futures) before and after creating and destroying an array of 1024 other
 * blocks; prints both and their ratio (about 1 when the pool is searched in
 * constant time). Usage: bench_array_pool [results-file] (default
 * /tmp/bench_array_pool.txt). */
#include <dagger.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void must(dagger_status_t st)
{
    if (st != DAGGER_OK) {
        fprintf(stderr, "bench_array_pool: %s: %s\n", dagger_strerror(st), dagger_error_detail());
        exit(1);
    }
}

/* Best of five sums, in ms. */
static double time_sum(dagger_runtime_t *rt, dagger_array_t *x)
{
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = now(), v;
        dagger_future_t f;
        must(dagger_array_reduce(NULL, DAGGER_OP_ADD, x, &f));
        must(dagger_fetch(rt, f, &v, sizeof(v), NULL));
        double dt = now() - t0;
        best = dt < best ? dt : best;
    }
    return best * 1e3;
}

int main(int argc, char **argv)
{
    dagger_runtime_t *rt;
    must(dagger_init(&argc, &argv, NULL, &rt));
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {4096, 4096},
                             .block = {128, 128}};
    dagger_array_t *x, *tmp;
    must(dagger_array_rand(rt, &d, 1, &x));
    double before = time_sum(rt, x);
    must(dagger_array_zeros(rt, &d, &tmp));
    must(dagger_array_fill(NULL, tmp, 1));
    must(dagger_array_destroy(tmp));
    double after = time_sum(rt, x);
    if (dagger_rank(rt) == 0) {
        const char *path = argc > 1 ? argv[1] : "/tmp/bench_array_pool.txt";
        FILE *f = fopen(path, "a");
        char line[200];
        snprintf(line, sizeof(line), "sum of 1024 blocks: %.2f ms before, %.2f ms after destroying "
                 "an array of 1024 blocks: ratio %.2f\n", before, after, after / before);
        fputs(line, stdout);
        if (f) {
            fputs(line, f);
            fclose(f);
        }
    }
    return dagger_finalize(rt) == DAGGER_OK ? 0 : 1;
}
