/* The runtime's own collectives, what every region end and fetch pays: a
 * barrier, an 8-byte allreduce, and an empty region (dagger_region_begin +
 * dagger_region_end: its status agreement), each timed as the mean of a
 * batch of back-to-back calls, the batch's time the slowest rank's. Beside
 * them, in the same run, the 8 B one-way latency of the runtime's actor path
 * (launch_floor.h): a collective's floor is its depth in such latencies.
 *
 *   DAGGER_NUM_THREADS=1 tools/dagger-run -n 4 build/tools/bench/bench_coll [file] [rounds]
 *
 * Prints, per operation, the median and range over the rounds (default 15)
 * of the per-call time in microseconds, and its ratio to the one-way latency;
 * appends the same to file (default /tmp/bench_coll.txt) on rank 0. */
#include <dagger.h>
#include <stdio.h>
#include <stdlib.h>

#include "launch_floor.h"

#define BATCH 50
#define MAX_ROUNDS 101

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void must(dagger_status_t st, const char *what)
{
    if (st == DAGGER_OK)
        return;
    fprintf(stderr, "bench_coll: %s: %s: %s\n", what, dagger_strerror(st), dagger_error_detail());
    exit(1);
}

enum { OP_BARRIER, OP_ALLREDUCE, OP_REGION, NOPS };
static const char *const op_names[NOPS] = {"barrier", "allreduce 8 B (min)", "empty region"};

static void one(dagger_runtime_t *rt, int op)
{
    switch (op) {
    case OP_BARRIER: must(dagger_barrier(rt), "barrier"); break;
    case OP_ALLREDUCE: {
        uint64_t v = (uint64_t)dagger_rank(rt);
        must(dagger_allreduce(rt, &v, 1, DAGGER_U64, DAGGER_OP_MIN), "allreduce");
        if (v != 0) {
            fprintf(stderr, "bench_coll: allreduce min gave %llu, not 0\n", (unsigned long long)v);
            exit(1);
        }
        break;
    }
    default: {
        dagger_region_t *r;
        must(dagger_region_begin(rt, NULL, &r), "region begin");
        must(dagger_region_end(r), "region end");
    }
    }
}

/* Microseconds per call of a batch, the slowest rank's. */
static double batch_us(dagger_runtime_t *rt, int op)
{
    must(dagger_barrier(rt), "barrier");
    double t0 = launch_floor_now();
    for (int i = 0; i < BATCH; i++)
        one(rt, op);
    double us = (launch_floor_now() - t0) * 1e6 / BATCH;
    must(dagger_allreduce(rt, &us, 1, DAGGER_F64, DAGGER_OP_MAX), "allreduce max");
    return us;
}

int main(int argc, char **argv)
{
    dagger_runtime_t *rt;
    must(dagger_init(&argc, &argv, NULL, &rt), "init");
    const char *file = argc > 1 ? argv[1] : "/tmp/bench_coll.txt";
    int rounds = argc > 2 ? atoi(argv[2]) : 15;
    if (rounds < 3 || rounds > MAX_ROUNDS)
        rounds = 15;
    int n = dagger_nranks(rt);
    static double t[NOPS][MAX_ROUNDS], lat[MAX_ROUNDS];
    for (int op = 0; op < NOPS; op++)
        batch_us(rt, op); /* warm-up */
    for (int r = 0; r < rounds; r++) {
        lat[r] = n > 1 ? launch_floor_measure(rt, launch_floor_now).lat_ms * 1e3 : 0;
        for (int op = 0; op < NOPS; op++)
            t[op][r] = batch_us(rt, op);
    }
    if (dagger_rank(rt) == 0) {
        FILE *f = fopen(file, "a");
        qsort(lat, (size_t)rounds, sizeof(double), cmp);
        printf("%d ranks x %d threads, %d rounds of %d calls; one way (8 B) %.2f us [%.2f-%.2f]\n",
               n, dagger_num_threads(rt), rounds, BATCH, lat[rounds / 2], lat[0],
               lat[rounds - 1]);
        for (int op = 0; op < NOPS; op++) {
            qsort(t[op], (size_t)rounds, sizeof(double), cmp);
            double med = t[op][rounds / 2];
            char line[256];
            snprintf(line, sizeof(line), "%dx%d %-20s %8.2f us [%.2f-%.2f]  %.1f one-way latencies",
                     n, dagger_num_threads(rt), op_names[op], med, t[op][0], t[op][rounds - 1],
                     lat[rounds / 2] > 0 ? med / lat[rounds / 2] : 0.0);
            printf("%s\n", line);
            if (f)
                fprintf(f, "%s\n", line);
        }
        if (f)
            fclose(f);
    }
    must(dagger_finalize(rt), "finalize");
    return 0;
}
