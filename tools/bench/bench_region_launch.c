/* The launch-order cases of the seeds (Dagger.jl PR #773), run under a
 * launcher: a reduction tree of 127 tasks with compute-heavy leaves, the same
 * tree with tiny tasks, a tiled gather of a 512x512 array in 64x64 tiles, and
 * a buffer-only region (the same tree over chunks instead of values).
 *
 *   tools/dagger-run -n 2 bench_region_launch [results-file]   (2 threads per rank)
 *   DAGGER_NUM_THREADS=1 tools/dagger-run -n 4 bench_region_launch
 *
 * Each case: 10 warm-up rounds, then 7 timed rounds (the seeds' protocol;
 * BENCH_ROUNDS=n times n, up to 1000); the time of a round is the slowest
 * rank's (allreduce max); the median is reported. BENCH_CASES=tiny,gather
 * runs only the cases named (heavy, tiny, gather, buffers; default all), so
 * that one case can be looked at alone, e.g. under callgrind:
 *   BENCH_CASES=tiny BENCH_ROUNDS=300 valgrind --tool=callgrind bench_region_launch
 * Dagger.jl's own
 * figures on its machine (2 ranks x 2 threads) are printed beside ours for
 * orientation only; they are not a same-machine reference. The same-run
 * reference is the serial cost of the leaves measured first.
 *
 * Each case also gets its floor, measured in the same run, before and after
 * the case, the better figures counting (launch_floor.h):
 * a tree's is its depth (levels, each crossing ranks at most once) times the
 * 8 B one-way latency plus one region-end agreement (an empty region on all
 * ranks); the gather's is the most bytes one rank receives over the measured
 * bandwidth plus its depth (1) in latencies; the compute-heavy tree gets none
 * (its floor is its leaves' compute). The ratio is the case's median / floor.
 * docs/benchmarks.md describes the parts. */
#include <dagger.h>
#include <dagger/array.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch_floor.h"

#define LEAVES 64
#define ROUNDS_WARM 10
#define ROUNDS 7
#define ROUNDS_MAX 1000
#define HEAVY_ITERS 200000

static double heavy_work(uint64_t seed)
{
    double s = (double)seed;
    for (int i = 0; i < HEAVY_ITERS; i++)
        s = s * 0.999999 + sin((double)i * 1e-3);
    return s;
}

static int leaf_heavy(dagger_task_t *t)
{
    double v = heavy_work(dagger_task_seq(t));
    return dagger_task_return(t, &v, sizeof(v));
}

static int leaf_tiny(dagger_task_t *t)
{
    double v = (double)dagger_task_seq(t);
    return dagger_task_return(t, &v, sizeof(v));
}

static int node_sum(dagger_task_t *t)
{
    double v = *(double *)dagger_task_arg(t, 0).data + *(double *)dagger_task_arg(t, 1).data;
    return dagger_task_return(t, &v, sizeof(v));
}

/* Buffer-only: leaves write a chunk, nodes add two chunks into a third. */
static int buf_leaf(dagger_task_t *t)
{
    *(double *)dagger_task_arg(t, 0).data = (double)dagger_task_seq(t);
    return DAGGER_OK;
}

static int buf_node(dagger_task_t *t)
{
    *(double *)dagger_task_arg(t, 2).data =
        *(double *)dagger_task_arg(t, 0).data + *(double *)dagger_task_arg(t, 1).data;
    return DAGGER_OK;
}

typedef struct bench {
    dagger_runtime_t *rt;
    int n;
    dagger_codelet_t heavy, tiny, sum, bleaf, bnode;
    dagger_chunk_t bufs[2 * LEAVES - 1];
    dagger_array_t *grid;
    double *gathered;
} bench_t;

static dagger_codelet_t reg(bench_t *b, const char *name, dagger_impl_fn fn, size_t ret)
{
    dagger_codelet_t cl;
    dagger_codelet_desc_t d = {.name = name, .cpu = fn, .return_size = ret};
    if (dagger_codelet_register(b->rt, &d, &cl) != DAGGER_OK) {
        fprintf(stderr, "register %s: %s\n", name, dagger_error_detail());
        exit(1);
    }
    return cl;
}

/* A reduction tree over values: leaves spread over the ranks by scope,
 * inner nodes placed by owner-computes (next to their first input). */
static dagger_status_t value_tree(bench_t *b, dagger_codelet_t leaf)
{
    dagger_region_t *r;
    dagger_status_t st = dagger_region_begin(b->rt, NULL, &r);
    if (st != DAGGER_OK)
        return st;
    dagger_future_t level[LEAVES];
    for (int i = 0; i < LEAVES; i++) {
        dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(i % b->n)};
        dagger_submit(r, leaf, 0, NULL, &o, NULL, &level[i]);
    }
    for (int width = LEAVES; width > 1; width /= 2)
        for (int i = 0; i < width / 2; i++) {
            dagger_arg_t a[2] = {DAGGER_FUTURE(level[2 * i]), DAGGER_FUTURE(level[2 * i + 1])};
            dagger_submit(r, b->sum, 2, a, NULL, NULL, &level[i]);
            dagger_future_free(b->rt, a[0].future);
            dagger_future_free(b->rt, a[1].future);
        }
    st = dagger_region_end(r);
    double v;
    if (st == DAGGER_OK)
        st = dagger_fetch(b->rt, level[0], &v, sizeof(v), NULL);
    if (st == DAGGER_OK)
        st = dagger_future_free(b->rt, level[0]);
    return st;
}

static dagger_status_t buffer_tree(bench_t *b)
{
    dagger_region_t *r;
    dagger_status_t st = dagger_region_begin(b->rt, NULL, &r);
    if (st != DAGGER_OK)
        return st;
    for (int i = 0; i < LEAVES; i++)
        dagger_spawn(r, b->bleaf, DAGGER_OUT(dagger_view(b->rt, b->bufs[i])), DAGGER_END);
    int base = 0, next = LEAVES;
    for (int width = LEAVES; width > 1; width /= 2) {
        for (int i = 0; i < width / 2; i++)
            dagger_spawn(r, b->bnode, DAGGER_IN(dagger_view(b->rt, b->bufs[base + 2 * i])),
                         DAGGER_IN(dagger_view(b->rt, b->bufs[base + 2 * i + 1])),
                         DAGGER_OUT(dagger_view(b->rt, b->bufs[next + i])), DAGGER_END);
        base = next;
        next += width / 2;
    }
    return dagger_region_end(r);
}

static dagger_status_t gather(bench_t *b)
{
    return dagger_array_collect(b->grid, b->gathered);
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, c = *(const double *)y;
    return (a > c) - (a < c);
}

static dagger_status_t case_empty(bench_t *b, dagger_codelet_t u)
{
    (void)u;
    dagger_region_t *r;
    dagger_status_t st = dagger_region_begin(b->rt, NULL, &r);
    return st == DAGGER_OK ? dagger_region_end(r) : st;
}

/* One round: the slowest rank's time of fn, in ms. */
static double one_round(bench_t *b, dagger_status_t (*fn)(bench_t *, dagger_codelet_t),
                        dagger_codelet_t arg)
{
    dagger_barrier(b->rt);
    double t0 = launch_floor_now();
    dagger_status_t st = fn(b, arg);
    double dt = launch_floor_now() - t0;
    if (st != DAGGER_OK) {
        fprintf(stderr, "rank %d: %s: %s\n", dagger_rank(b->rt), dagger_strerror(st),
                dagger_error_detail());
        exit(1);
    }
    dagger_allreduce(b->rt, &dt, 1, DAGGER_F64, DAGGER_OP_MAX);
    return dt * 1e3;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof(double), cmp);
    return t[n / 2];
}

/* Median over `rounds` of the slowest rank's time, in ms. Each round is
 * followed by one of an empty region (the region-end agreement of the
 * floor), so both see the same machine; *agree_ms gets its median. */
static double measure(bench_t *b, dagger_status_t (*fn)(bench_t *, dagger_codelet_t),
                      dagger_codelet_t arg, int rounds, double *agree_ms)
{
    double t[ROUNDS_MAX], e[ROUNDS_MAX];
    for (int i = 0; i < ROUNDS_WARM + rounds; i++) {
        double dt = one_round(b, fn, arg), de = one_round(b, case_empty, arg);
        if (i >= ROUNDS_WARM) {
            t[i - ROUNDS_WARM] = dt;
            e[i - ROUNDS_WARM] = de;
        }
    }
    *agree_ms = median(e, rounds);
    return median(t, rounds);
}

/* BENCH_CASES: whether the case `key` is to run (a comma-separated list;
 * unset or empty: all). */
static int case_selected(const char *key)
{
    const char *sel = getenv("BENCH_CASES");
    if (!sel || !*sel)
        return 1;
    size_t n = strlen(key);
    for (const char *p = sel; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !strncmp(p, key, n))
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

static dagger_status_t case_heavy(bench_t *b, dagger_codelet_t u) { (void)u; return value_tree(b, b->heavy); }
static dagger_status_t case_tiny(bench_t *b, dagger_codelet_t u) { (void)u; return value_tree(b, b->tiny); }
static dagger_status_t case_gather(bench_t *b, dagger_codelet_t u) { (void)u; return gather(b); }
static dagger_status_t case_buffers(bench_t *b, dagger_codelet_t u) { (void)u; return buffer_tree(b); }

/* Levels of value_tree and buffer_tree: the leaves, then one per halving
 * (the same loop as theirs). */
static int tree_depth(void)
{
    int depth = 1;
    for (int width = LEAVES; width > 1; width /= 2)
        depth++;
    return depth;
}

/* FLOOR_NONE: the compute-heavy tree, whose floor is its leaves' compute
 * (the serial line is its reference; measured once at the start under a
 * drifting load it came out above the tree's own time, so it is no floor). */
enum floor_kind { FLOOR_NONE, FLOOR_TREE, FLOOR_GATHER };

/* A case's floor in ms (0: none, or not measured: one rank). */
static double case_floor(const bench_t *b, enum floor_kind kind, launch_floor_t fl,
                         double agree_ms)
{
    if (fl.lat_ms <= 0 || kind == FLOOR_NONE)
        return 0;
    if (kind == FLOOR_GATHER)
        return fl.bw_bps > 0 ? floor_gather_bytes(b->grid, b->n, sizeof(double)) / fl.bw_bps * 1e3 +
                                   fl.lat_ms : 0;
    return tree_depth() * fl.lat_ms + agree_ms;
}

int main(int argc, char **argv)
{
    bench_t b = {0};
    if (dagger_init(&argc, &argv, NULL, &b.rt) != DAGGER_OK) {
        fprintf(stderr, "dagger_init: %s\n", dagger_error_detail());
        return 1;
    }
    b.n = dagger_nranks(b.rt);
    b.heavy = reg(&b, "bench.leaf_heavy", leaf_heavy, sizeof(double));
    b.tiny = reg(&b, "bench.leaf_tiny", leaf_tiny, sizeof(double));
    b.sum = reg(&b, "bench.sum", node_sum, sizeof(double));
    b.bleaf = reg(&b, "bench.buf_leaf", buf_leaf, 0);
    b.bnode = reg(&b, "bench.buf_node", buf_node, 0);
    for (int i = 0; i < 2 * LEAVES - 1; i++) {
        dagger_chunk_desc_t d = {.dtype = DAGGER_F64, .ndims = 1, .dims = {1}, .owner = i % b.n};
        dagger_chunk_create(b.rt, &d, &b.bufs[i]);
    }
    dagger_array_desc_t ad = {.dtype = DAGGER_F64, .ndims = 2, .dims = {512, 512}, .block = {64, 64}};
    if (dagger_array_rand(b.rt, &ad, 7, &b.grid) != DAGGER_OK) {
        fprintf(stderr, "array: %s\n", dagger_error_detail());
        return 1;
    }
    b.gathered = malloc(512 * 512 * sizeof(double));

    const char *sel = getenv("BENCH_CASES");
    for (const char *p = sel ? sel : ""; *p;) { /* every name one of the cases' */
        size_t len = strcspn(p, ",");
        static const char *const keys[] = {"heavy", "tiny", "gather", "buffers"};
        int known = 0;
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
            known |= strlen(keys[k]) == len && !strncmp(p, keys[k], len);
        if (!known) {
            if (dagger_rank(b.rt) == 0)
                fprintf(stderr, "BENCH_CASES=%s: '%.*s' is none of heavy, tiny, gather, "
                        "buffers\n", sel, (int)len, p);
            dagger_finalize(b.rt);
            return 2;
        }
        p += len + (p[len] == ',');
    }
    const char *rounds_env = getenv("BENCH_ROUNDS");
    int rounds = rounds_env ? atoi(rounds_env) : ROUNDS;
    if (rounds < 1 || rounds > ROUNDS_MAX) {
        if (dagger_rank(b.rt) == 0)
            fprintf(stderr, "BENCH_ROUNDS=%s: give 1 to %d timed rounds\n", rounds_env,
                    ROUNDS_MAX);
        dagger_finalize(b.rt);
        return 2;
    }

    /* The same-run reference: the leaves' serial compute time (only when the
     * compute-heavy tree runs). */
    double serial_ms = 0;
    if (case_selected("heavy")) {
        double t0 = launch_floor_now();
        double sink = 0;
        for (int i = 0; i < LEAVES; i++)
            sink += heavy_work((uint64_t)i);
        serial_ms = (launch_floor_now() - t0) * 1e3;
        if (sink == 42.0) /* keeps the loop from being optimised away */
            printf(" ");
        dagger_allreduce(b.rt, &serial_ms, 1, DAGGER_F64, DAGGER_OP_MAX);
    }

    struct {
        const char *key, *name;
        dagger_status_t (*fn)(bench_t *, dagger_codelet_t);
        double julia_ms, budget_ms;
        enum floor_kind floor;
    } cases[] = {
        {"heavy", "compute-heavy reduction tree (127 tasks)", case_heavy, 163.09, 0, FLOOR_NONE},
        {"tiny", "tiny-task reduction tree (127 tasks)", case_tiny, 14.96, 1.0, FLOOR_TREE},
        {"gather", "512x512 tiled gather (64x64 tiles)", case_gather, 24.71, 2.0, FLOOR_GATHER},
        {"buffers", "buffer-only region (127 tasks)", case_buffers, 8.94, 0, FLOOR_TREE},
    };
    const char *out = argc > 1 ? argv[1] : "/tmp/bench_region_launch.txt";
    FILE *f = dagger_rank(b.rt) == 0 ? fopen(out, "a") : NULL;
    int threads = dagger_num_threads(b.rt);
    if (dagger_rank(b.rt) == 0) {
        printf("%d ranks x %d threads on %ld cores, medians of %d rounds", b.n, threads,
               sysconf(_SC_NPROCESSORS_ONLN), rounds);
        if (case_selected("heavy"))
            printf("; serial compute of the 64 heavy leaves (measured on every rank at once): "
                   "%.1f ms", serial_ms);
        printf("\n");
        printf("%-44s %10s %12s %10s\n", "case", "dagger ms", "Dagger.jl ms", "budget");
    }
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        if (!case_selected(cases[c].key))
            continue;
        /* The floor's parts are measured next to each case, before and
         * after it (the load drifts), the better of the two counting. */
        launch_floor_t fl = {0, 0};
        int floored = b.n > 1 && cases[c].floor != FLOOR_NONE;
        if (floored)
            fl = launch_floor_measure(b.rt, launch_floor_now);
        double agree_ms;
        double ms = measure(&b, cases[c].fn, b.sum, rounds, &agree_ms);
        if (floored)
            fl = launch_floor_best(fl, launch_floor_measure(b.rt, launch_floor_now));
        if (dagger_rank(b.rt) != 0)
            continue;
        char budget[32] = "-";
        if (cases[c].budget_ms > 0)
            snprintf(budget, sizeof(budget), "< %.0f ms %s", cases[c].budget_ms,
                     ms < cases[c].budget_ms ? "ok" : "MISSED");
        printf("%-44s %10.3f %12.2f %10s\n", cases[c].name, ms, cases[c].julia_ms, budget);
        if (f)
            fprintf(f, "%dx%d %s: %.3f ms (Dagger.jl %.2f ms)\n", b.n, threads, cases[c].name, ms,
                    cases[c].julia_ms);
        double floor_ms = case_floor(&b, cases[c].floor, fl, agree_ms);
        if (floor_ms <= 0)
            continue;
        printf("%-44s floor %.3f ms, ratio %.1f (one way %.4f ms, %.3g GB/s, agreement %.4f ms, "
               "depth %d)\n", "", floor_ms, ms / floor_ms, fl.lat_ms, fl.bw_bps * 1e-9, agree_ms,
               cases[c].floor == FLOOR_GATHER ? 1 : tree_depth());
        if (f)
            fprintf(f, "%dx%d %s: floor %.3f ms, ratio %.1f\n", b.n, threads, cases[c].name,
                    floor_ms, ms / floor_ms);
    }
    if (f)
        fclose(f);
    free(b.gathered);
    dagger_array_destroy(b.grid);
    return dagger_finalize(b.rt) == DAGGER_OK ? 0 : 1;
}
