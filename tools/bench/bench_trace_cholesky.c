/* Tracing overhead on a tiled Cholesky: the same factorisation with
 * DAGGER_TRACE unset (the reference) and set, alternating in one run so
 * that drift of a shared machine hits both alike. Prints the medians of
 * wall and CPU time and their ratios, and writes them to a file. Then the
 * cost of the hooks themselves, which noise cannot hide: a task's two
 * hooks (start, end) recorded a million times, against the same loop with
 * tracing off (one branch each).
 *
 *   bench_trace_cholesky [OUT=/tmp/bench_trace_cholesky.txt] [N=1024] [TILE=64] [REPS=7]
 *
 * The tile kernels are the naive ones of the multi-rank tests: the point is
 * the runtime's share of the time with tracing on, not BLAS speed. */
#ifndef DG_TRACE_ENABLED
#define DG_TRACE_ENABLED 1 /* the hooks as the library uses them */
#endif
#include <dagger.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/exec/exec_trace.h"
#include "core/exec/xop.h"
#include "core/trace/trace.h"
#include "tests/multirank/mr_codelets.h"

#define MAX_NT 64

static void check(dagger_status_t st, const char *what)
{
    if (st != DAGGER_OK) {
        fprintf(stderr, "bench_trace_cholesky: %s: %s: %s\n", what, dagger_strerror(st),
                dagger_error_detail());
        exit(1);
    }
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

static dagger_codelet_t reg(dagger_runtime_t *rt, const char *name, dagger_impl_fn fn)
{
    dagger_codelet_desc_t d = {.name = name, .cpu = fn};
    dagger_codelet_t cl;
    check(dagger_codelet_register(rt, &d, &cl), "register");
    return cl;
}

/* One factorisation in a fresh runtime; returns the seconds of its region
 * (wall), in *cpu the CPU seconds of the process meanwhile and in *submit
 * the seconds the submitting thread spent submitting (planning). */
static double cholesky(int n, int tile, uint64_t *ntasks, double *cpu, double *submit)
{
    dagger_runtime_t *rt;
    check(dagger_init(NULL, NULL, NULL, &rt), "dagger_init");
    dagger_codelet_t potrf = reg(rt, "potrf", mr_potrf), trsm = reg(rt, "trsm", mr_trsm),
                     syrk = reg(rt, "syrk", mr_syrk), gemm = reg(rt, "gemm", mr_gemm);
    int nt = n / tile;
    static dagger_chunk_t a[MAX_NT][MAX_NT];
    for (int j = 0; j < nt; j++)
        for (int i = j; i < nt; i++) {
            dagger_chunk_desc_t d = {.dtype = DAGGER_F64, .ndims = 2,
                                     .dims = {(size_t)tile, (size_t)tile}, .owner = -1};
            check(dagger_chunk_create(rt, &d, &a[i][j]), "chunk");
            double *p;
            check(dagger_chunk_data(rt, a[i][j], (void **)&p, NULL), "chunk data");
            for (int y = 0; p && y < tile; y++)
                for (int x = 0; x < tile; x++)
                    p[x + y * tile] = i == j && x == y ? 2.0 * n : 1.0 / (1.0 + abs(x - y) + i + j);
        }
#define V(i, j) dagger_view(rt, a[i][j])
    double t0 = now_s(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    dagger_region_t *r;
    check(dagger_region_begin(rt, NULL, &r), "region");
    for (int k = 0; k < nt; k++) {
        check(dagger_spawn(r, potrf, DAGGER_INOUT(V(k, k)), DAGGER_END), "potrf");
        for (int i = k + 1; i < nt; i++)
            check(dagger_spawn(r, trsm, DAGGER_IN(V(k, k)), DAGGER_INOUT(V(i, k)), DAGGER_END),
                  "trsm");
        for (int i = k + 1; i < nt; i++) {
            check(dagger_spawn(r, syrk, DAGGER_IN(V(i, k)), DAGGER_INOUT(V(i, i)), DAGGER_END),
                  "syrk");
            for (int j = k + 1; j < i; j++)
                check(dagger_spawn(r, gemm, DAGGER_IN(V(i, k)), DAGGER_IN(V(j, k)),
                                   DAGGER_INOUT(V(i, j)), DAGGER_END), "gemm");
        }
    }
    *submit = now_s() - t0;
    check(dagger_region_end(r), "region end");
    double t = now_s() - t0;
    *cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
#undef V
    dagger_region_stats_t s;
    check(dagger_region_stats(rt, &s), "stats");
    *ntasks = s.tasks;
    check(dagger_finalize(rt), "finalize");
    return t;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ns per task for the hooks of one task run, tracing on (into dir) or off. */
static double hook_ns(const char *dir)
{
#ifndef DG_TRACE_ENABLED
    (void)dir;
    return 0; /* a library built with -DDAGGER_TRACE=OFF */
#else
    if (dir)
        setenv("DAGGER_TRACE", dir, 1);
    else
        unsetenv("DAGGER_TRACE");
    dagger_runtime_t *rt;
    check(dagger_init(NULL, NULL, NULL, &rt), "dagger_init");
    static dg_xop_t op;
    op.kind = DG_PLAN_OP_LAUNCH;
    const long n = 1000000;
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        op.u.launch.task = (uint64_t)i + 1;
        uint64_t tr0 = DG_TRACE_ON() ? dg_trace_run_begin(&op, 0) : 0;
        __asm__ __volatile__("" ::: "memory"); /* the task would run here */
        if (DG_TRACE_ON())
            dg_trace_run_end(NULL, &op, 0, tr0);
    }
    double t = now_s() - t0;
    check(dagger_finalize(rt), "finalize");
    return t / (double)n * 1e9;
#endif
}

/* The runs of one configuration, tracing off and on (seconds). */
typedef struct run_set {
    int n, tile, reps;
    uint64_t ntasks;
    double *off, *on, *coff, *con, *soff, *son;
} run_set_t;

static int report(run_set_t *r, double h_on, double h_off, const char *out)
{
    /* Neighbouring runs see the same machine: their ratio is the steadiest. */
    double ratio[100];
    for (int i = 0; i < r->reps; i++)
        ratio[i] = r->on[i] / r->off[i];
    double m_ratio = median(ratio, r->reps);
    double m_off = median(r->off, r->reps), m_on = median(r->on, r->reps);
    double c_off = median(r->coff, r->reps), c_on = median(r->con, r->reps);
    double s_off = median(r->soff, r->reps), s_on = median(r->son, r->reps);
    double per_task_us = m_off / (double)r->ntasks * 1e6;
    printf("tiled Cholesky N=%d tile=%d: %llu tasks, %d repetitions each (%.1f us per task)\n",
           r->n, r->tile, (unsigned long long)r->ntasks, r->reps, per_task_us);
    printf("  tracing off (reference): median %.4f s wall, %.4f s CPU; best %.4f s wall\n", m_off,
           c_off, r->off[0]);
    printf("  tracing on:              median %.4f s wall, %.4f s CPU; best %.4f s wall\n", m_on,
           c_on, r->on[0]);
    printf("  overhead: %+.2f%% wall (median of neighbouring pairs), %+.2f%% wall (medians), "
           "%+.2f%% CPU (medians), %+.2f%% wall (best); budget +5%%\n", (m_ratio - 1) * 100,
           (m_on / m_off - 1) * 100, (c_on / c_off - 1) * 100, (r->on[0] / r->off[0] - 1) * 100);
    printf("  submitting (planning) per task: %.2f us off, %.2f us on\n",
           s_off / (double)r->ntasks * 1e6, s_on / (double)r->ntasks * 1e6);
    printf("  hooks of one task run: %.1f ns traced, %.2f ns off (%.3f%% of a %.1f us task)\n",
           h_on, h_off, h_on / (per_task_us * 1e3) * 100, per_task_us);
    FILE *f = fopen(out, "w");
    if (!f) {
        perror(out);
        return 1;
    }
    fprintf(f, "bench_trace_cholesky n=%d tile=%d tasks=%llu reps=%d overhead_pairs_pct=%.3f "
            "off_median_s=%.6f on_median_s=%.6f overhead_wall_pct=%.3f off_cpu_s=%.6f on_cpu_s=%.6f "
            "overhead_cpu_pct=%.3f off_best_s=%.6f on_best_s=%.6f submit_off_us=%.3f "
            "submit_on_us=%.3f hook_on_ns=%.2f hook_off_ns=%.3f\n", r->n, r->tile,
            (unsigned long long)r->ntasks, r->reps, (m_ratio - 1) * 100, m_off, m_on,
            (m_on / m_off - 1) * 100, c_off, c_on, (c_on / c_off - 1) * 100, r->off[0], r->on[0],
            s_off / (double)r->ntasks * 1e6, s_on / (double)r->ntasks * 1e6, h_on, h_off);
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1] : "/tmp/bench_trace_cholesky.txt";
    int n = argc > 2 ? atoi(argv[2]) : 1024, tile = argc > 3 ? atoi(argv[3]) : 64;
    int reps = argc > 4 ? atoi(argv[4]) : 7;
    if (tile <= 0 || n % tile || n / tile > MAX_NT || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: bench_trace_cholesky [OUT] [N] [TILE] [REPS]: N a multiple of "
                "TILE, at most %d tiles per side, 1 to 100 repetitions\n", MAX_NT);
        return 2;
    }
    char dir[64];
    snprintf(dir, sizeof(dir), "/tmp/dg-bench-trace-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    double off[100], on[100], coff[100], con[100], soff[100], son[100], cpu, sub;
    uint64_t ntasks = 0;
    unsetenv("DAGGER_TRACE");
    cholesky(n, tile, &ntasks, &cpu, &sub); /* warm-up: page faults, code, thread start */
    for (int i = 0; i < reps; i++) {
        /* ABBA order: neither mode always runs first. */
        for (int k = 0; k < 2; k++) {
            int traced = (i + k) % 2;
            if (traced)
                setenv("DAGGER_TRACE", dir, 1);
            else
                unsetenv("DAGGER_TRACE");
            double t = cholesky(n, tile, &ntasks, &cpu, &sub);
            (traced ? on : off)[i] = t;
            (traced ? con : coff)[i] = cpu;
            (traced ? son : soff)[i] = sub;
        }
    }
    unsetenv("DAGGER_TRACE");
    char hooks_dir[96];
    snprintf(hooks_dir, sizeof(hooks_dir), "%s/hooks", dir);
    double h_on = hook_ns(hooks_dir), h_off = hook_ns(NULL);
    run_set_t set = {n, tile, reps, ntasks, off, on, coff, con, soff, son};
    int rc = report(&set, h_on, h_off, out);
    printf("  last Cholesky trace kept in %s (dagger-trace summary %s)\n", dir, dir);
    return rc;
}
