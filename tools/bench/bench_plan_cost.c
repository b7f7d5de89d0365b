/* Planning cost per task on one rank (the planner of rank 0 of P simulated
 * ranks plans every task, emits only its own ops) for:
 *   (a) independent tasks (each InOut on its own chunk),
 *   (b) a chain on one chunk,
 *   (c) tiled Cholesky (potrf/trsm/syrk/gemm on tile chunks, 2-D block-cyclic),
 * each for P = 1, 4, 64, 1024; then memory over 10^6 tasks in one region that
 * creates and frees chunks as it goes, and over 10^6 re-reads of 1024 chunks.
 * Reference, measured in the same run: a floor that does per task what any
 * planner must (hash the inputs, one malloc/free of a task record, one emit
 * call). Budget (DESIGN.md section 11): <= 1 us per task, flat in P.
 * Times are CPU time of the planning thread.
 * Usage: bench_plan_cost [results-file [only]]   (default /tmp/bench_plan_cost.txt;
 *        only = a, b, c, flat or reread runs one case, for profiling) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/hash.h"
#include "core/plan/plan.h"

static uint64_t g_ops;

static void count_op(void *ctx, const dg_plan_op_t *op)
{
    (void)ctx;
    g_ops += op->seq != 0;
}

static double now(void)
{
    struct timespec ts;
    /* CPU time of this thread: the machine is shared, wall time is not ours */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The executor's promise the runtime passes (its default ring of ops). */
static uint64_t g_retire_window = 65536;

static dg_plan_t *make(int P, dg_plan_rank_desc_t **descs)
{
    dg_plan_rank_desc_t *d = calloc((size_t)P, sizeof(*d));
    for (int r = 0; r < P; r++)
        d[r].ncpus = 2;
    dg_plan_params_t prm = {.nranks = P, .my_rank = 0, .ranks = d, .emit = count_op,
                            .slot_cache_bytes = 1 << 26, .retire_window = g_retire_window};
    dg_plan_t *p;
    if (dg_plan_create(&prm, &p) != DAGGER_OK) {
        fprintf(stderr, "create: %s\n", dagger_error_detail());
        exit(1);
    }
    *descs = d;
    return p;
}

static void must(dagger_status_t st)
{
    if (st != DAGGER_OK) {
        fprintf(stderr, "bench_plan_cost: %s\n", dagger_error_detail());
        exit(1);
    }
}

static uint64_t chunk(dg_plan_t *p, int32_t owner, uint64_t m, uint64_t n)
{
    dg_plan_chunk_desc_t d = {.owner = owner, .geom = {.dtype = DAGGER_F64, .ndims = 2, .dims = {m, n}}};
    uint64_t id;
    must(dg_plan_chunk_create(p, &d, &id));
    return id;
}

static dg_plan_arg_t full(dg_plan_t *p, uint64_t c, dagger_access_t mode)
{
    dg_plan_arg_t a = {.kind = DG_PLAN_ARG_VIEW, .mode = mode};
    dg_plan_view_full(dg_plan_chunk_geom(p, c), c, &a.view);
    return a;
}

static uint32_t codelet(dg_plan_t *p, const char *name)
{
    dg_plan_codelet_desc_t d = {.name = name, .kinds = DG_PLAN_KIND_BIT(DG_PLAN_CPU)};
    uint32_t id;
    must(dg_plan_codelet_register(p, &d, &id));
    return id;
}

typedef struct result {
    double sec;
    uint64_t tasks;
    uint64_t sys_bytes; /* bytes the planner obtained from the system during the run */
} result_t;

static void submit(dg_plan_t *p, uint32_t cl, dg_plan_arg_t *a, uint32_t n)
{
    dg_plan_task_desc_t t = {.codelet = cl, .args = a, .nargs = n};
    must(dg_plan_submit(p, &t, NULL));
}

/* (a) 200k tasks in regions of 4096, each InOut on its own chunk. */
static result_t run_independent(int P)
{
    dg_plan_rank_desc_t *d;
    dg_plan_t *p = make(P, &d);
    uint32_t cl = codelet(p, "inc");
    enum { K = 4096, REGIONS = 50 };
    uint64_t *c = malloc(K * sizeof(*c));
    for (int i = 0; i < K; i++)
        c[i] = chunk(p, i % P, 64, 64);
    dg_plan_stats_t s0, s1;
    dg_plan_get_stats(p, &s0);
    double t0 = now();
    for (int r = 0; r < REGIONS; r++) {
        must(dg_plan_region_begin(p, NULL));
        for (int i = 0; i < K; i++) {
            dg_plan_arg_t a = full(p, c[i], DAGGER_MODE_INOUT);
            submit(p, cl, &a, 1);
        }
        must(dg_plan_region_end(p));
    }
    double t1 = now();
    dg_plan_get_stats(p, &s1);
    dg_plan_destroy(p);
    free(d);
    free(c);
    return (result_t){t1 - t0, (uint64_t)K * REGIONS, s1.mem_sys_bytes - s0.mem_sys_bytes};
}

/* (b) 200k InOut tasks on one chunk, in regions of 4096. */
static result_t run_chain(int P)
{
    dg_plan_rank_desc_t *d;
    dg_plan_t *p = make(P, &d);
    uint32_t cl = codelet(p, "inc");
    uint64_t c = chunk(p, 0, 64, 64);
    enum { K = 4096, REGIONS = 50 };
    dg_plan_stats_t s0, s1;
    dg_plan_get_stats(p, &s0);
    double t0 = now();
    for (int r = 0; r < REGIONS; r++) {
        must(dg_plan_region_begin(p, NULL));
        for (int i = 0; i < K; i++) {
            dg_plan_arg_t a = full(p, c, DAGGER_MODE_INOUT);
            submit(p, cl, &a, 1);
        }
        must(dg_plan_region_end(p));
    }
    double t1 = now();
    dg_plan_get_stats(p, &s1);
    dg_plan_destroy(p);
    free(d);
    return (result_t){t1 - t0, (uint64_t)K * REGIONS, s1.mem_sys_bytes - s0.mem_sys_bytes};
}

/* (c) right-looking tiled Cholesky (lower), nt x nt tiles of 256x256
 * doubles, tiles on a pr x pc block-cyclic grid. */
static result_t run_cholesky(int P, int nt, uint64_t *transfers)
{
    dg_plan_rank_desc_t *d;
    dg_plan_t *p = make(P, &d);
    uint32_t potrf = codelet(p, "potrf"), trsm = codelet(p, "trsm"), syrk = codelet(p, "syrk"),
             gemm = codelet(p, "gemm");
    int pr = 1;
    while (pr * pr < P)
        pr *= 2;
    int pc = P / pr;
    uint64_t *A = calloc((size_t)nt * nt, sizeof(*A));
    for (int i = 0; i < nt; i++)
        for (int j = 0; j <= i; j++)
            A[i * nt + j] = chunk(p, (i % pr) * pc + (j % pc), 256, 256);
    dg_plan_stats_t s0, s1;
    dg_plan_get_stats(p, &s0);
    uint64_t tasks = 0;
    double t0 = now();
    must(dg_plan_region_begin(p, NULL));
    for (int k = 0; k < nt; k++) {
        dg_plan_arg_t a[3] = {full(p, A[k * nt + k], DAGGER_MODE_INOUT)};
        submit(p, potrf, a, 1);
        tasks++;
        for (int i = k + 1; i < nt; i++) {
            dg_plan_arg_t b[2] = {full(p, A[k * nt + k], DAGGER_MODE_IN),
                                  full(p, A[i * nt + k], DAGGER_MODE_INOUT)};
            submit(p, trsm, b, 2);
            tasks++;
        }
        for (int i = k + 1; i < nt; i++) {
            dg_plan_arg_t b[2] = {full(p, A[i * nt + k], DAGGER_MODE_IN),
                                  full(p, A[i * nt + i], DAGGER_MODE_INOUT)};
            submit(p, syrk, b, 2);
            tasks++;
            for (int j = k + 1; j < i; j++) {
                dg_plan_arg_t g[3] = {full(p, A[i * nt + k], DAGGER_MODE_IN),
                                      full(p, A[j * nt + k], DAGGER_MODE_IN),
                                      full(p, A[i * nt + j], DAGGER_MODE_INOUT)};
                submit(p, gemm, g, 3);
                tasks++;
            }
        }
    }
    must(dg_plan_region_end(p));
    double t1 = now();
    dg_plan_get_stats(p, &s1);
    *transfers = s1.transfers - s0.transfers;
    dg_plan_destroy(p);
    free(d);
    free(A);
    return (result_t){t1 - t0, tasks, s1.mem_sys_bytes - s0.mem_sys_bytes};
}

/* The floor: per task, hash the inputs, allocate and free a task record,
 * and make one emit call. */
static double run_floor(uint64_t n)
{
    uint64_t h = DG_HASH_SEED;
    dg_plan_op_t op = {.kind = DG_PLAN_OP_LAUNCH};
    double t0 = now();
    for (uint64_t i = 0; i < n; i++) {
        dg_plan_arg_t a = {.kind = DG_PLAN_ARG_VIEW, .mode = DAGGER_MODE_INOUT,
                           .view = {.chunk = i & 4095, .ndims = 2, .ext = {64, 64}}};
        h = dg_hash_bytes(h, &a.view, sizeof(a.view));
        void *rec = malloc(128);
        memcpy(rec, &h, sizeof(h));
        op.seq = i + 1;
        op.u.launch.task = *(volatile uint64_t *)rec;
        count_op(NULL, &op);
        free(rec);
    }
    double t1 = now();
    if (h == 42)
        printf(" ");
    return (t1 - t0) / (double)n;
}

/* 10^6 tasks in one region; every task gets a fresh chunk (owner cycles over
 * 4 ranks), runs on the next rank (so a slot, a transfer and a copy-back
 * plan), returns a future that the next task reads, and the chunk and the
 * older future are freed right after. Prints memory at checkpoints. */
static void run_flat(FILE *out)
{
    dg_plan_rank_desc_t *d;
    dg_plan_t *p = make(4, &d);
    dg_plan_codelet_desc_t cd = {.name = "step", .kinds = 1, .ret_size = 8};
    uint32_t cl;
    must(dg_plan_codelet_register(p, &cd, &cl));
    must(dg_plan_region_begin(p, NULL));
    uint64_t prev_future = 0;
    const uint64_t N = 1000000;
    double t0 = now();
    for (uint64_t i = 1; i <= N; i++) {
        uint64_t c = chunk(p, (int32_t)(i % 4), 16, 16);
        int32_t r = (int32_t)((i + 1) % 4);
        dg_plan_scope_t s = {.ranks = &r, .nranks = 1};
        dg_plan_arg_t a[2] = {full(p, c, DAGGER_MODE_INOUT),
                              {.kind = DG_PLAN_ARG_FUTURE, .future = prev_future}};
        dg_plan_task_desc_t t = {.codelet = cl, .args = a, .nargs = prev_future ? 2 : 1,
                                 .scope = &s};
        dg_plan_submitted_t res;
        must(dg_plan_submit(p, &t, &res));
        must(dg_plan_chunk_free(p, c));
        if (prev_future)
            must(dg_plan_chunk_free(p, prev_future));
        prev_future = res.future;
        if (i == 1000 || i == 10000 || i == 100000 || i == N) {
            dg_plan_stats_t st;
            dg_plan_get_stats(p, &st);
            fprintf(out, "flat: after %7llu tasks: in use %8llu B, held from system %8llu B, "
                         "system allocations %llu, live chunks %llu, %.0f ns/task\n",
                    (unsigned long long)i, (unsigned long long)st.mem_in_use,
                    (unsigned long long)st.mem_reserved, (unsigned long long)st.mem_sys_calls,
                    (unsigned long long)st.live_chunks, (now() - t0) / (double)i * 1e9);
        }
    }
    must(dg_plan_region_end(p));
    dg_plan_destroy(p);
    free(d);
}

/* 10^6 tasks in one region, each reading one of 1024 chunks in turn (an
 * iterative solver re-reading its matrix): with the runtime's retire window
 * the access histories forget what the executor has surely finished; without
 * one (window 0) every read since the last write is kept. */
static void run_reread(FILE *out, uint64_t window)
{
    g_retire_window = window;
    dg_plan_rank_desc_t *d;
    dg_plan_t *p = make(1, &d);
    uint32_t cl = codelet(p, "read");
    enum { K = 1024 };
    uint64_t c[K];
    for (int i = 0; i < K; i++)
        c[i] = chunk(p, 0, 16, 16);
    must(dg_plan_region_begin(p, NULL));
    const uint64_t N = 1000000;
    double t0 = now(), tl = t0;
    for (uint64_t i = 1; i <= N; i++) {
        dg_plan_arg_t a = full(p, c[i % K], DAGGER_MODE_IN);
        submit(p, cl, &a, 1);
        if (i == 10000 || i == 100000 || i == N) {
            double t = now();
            dg_plan_stats_t st;
            dg_plan_get_stats(p, &st);
            fprintf(out, "reread window %6llu: after %7llu tasks: in use %9llu B, %6.0f ns/task "
                         "over the last stretch\n", (unsigned long long)window,
                    (unsigned long long)i, (unsigned long long)st.mem_in_use,
                    (t - tl) / (double)(i == 10000 ? i : i == 100000 ? 90000 : 900000) * 1e9);
            tl = t;
        }
    }
    must(dg_plan_region_end(p));
    dg_plan_destroy(p);
    free(d);
    g_retire_window = 65536;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "/tmp/bench_plan_cost.txt";
    const char *only = argc > 2 ? argv[2] : "";
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    FILE *outs[2] = {stdout, f};
    double floor_ns = run_floor(2000000) * 1e9;
    for (int o = 0; o < 2; o++)
        fprintf(outs[o], "reference floor (hash + malloc/free + emit call): %.1f ns/task\n"
                         "%-22s %6s %9s %10s %12s %9s %s\n",
                floor_ns, "case", "P", "tasks", "ns/task", "tasks/s", "x floor", "sys B/task");
    static const int Ps[] = {1, 4, 64, 1024};
    for (int pi = 0; pi < 4; pi++) {
        int P = Ps[pi];
        result_t r[2] = {{0, 0, 0}, {0, 0, 0}};
        if (!*only || !strcmp(only, "a"))
            r[0] = run_independent(P);
        if (!*only || !strcmp(only, "b"))
            r[1] = run_chain(P);
        const char *names[2] = {"(a) independent", "(b) chain"};
        for (int k = 0; k < 2; k++)
            if (r[k].tasks)
            for (int o = 0; o < 2; o++)
                fprintf(outs[o], "%-22s %6d %9llu %10.1f %12.0f %9.1f %.2f\n", names[k], P,
                        (unsigned long long)r[k].tasks, r[k].sec / r[k].tasks * 1e9,
                        r[k].tasks / r[k].sec, r[k].sec / r[k].tasks * 1e9 / floor_ns,
                        (double)r[k].sys_bytes / r[k].tasks);
        for (int nt = 8; nt <= 64 && (!*only || !strcmp(only, "c")); nt *= 2) {
            uint64_t xf;
            result_t c = run_cholesky(P, nt, &xf);
            char name[40];
            snprintf(name, sizeof(name), "(c) cholesky nt=%d", nt);
            for (int o = 0; o < 2; o++)
                fprintf(outs[o], "%-22s %6d %9llu %10.1f %12.0f %9.1f %.2f  (%llu transfers on rank 0)\n",
                        name, P, (unsigned long long)c.tasks, c.sec / c.tasks * 1e9,
                        c.tasks / c.sec, c.sec / c.tasks * 1e9 / floor_ns,
                        (double)c.sys_bytes / c.tasks, (unsigned long long)xf);
        }
    }
    if (!*only || !strcmp(only, "flat")) {
        run_flat(stdout);
        run_flat(f);
    }
    if (!*only || !strcmp(only, "reread"))
        for (int o = 0; o < 2; o++) {
            run_reread(outs[o], 65536);
            run_reread(outs[o], 0);
        }
    fclose(f);
    printf("results written to %s\n", path);
    return 0;
}
