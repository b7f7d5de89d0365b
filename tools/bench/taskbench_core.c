/* Task Bench's shared part: options, graph, kernels, validation, sweep
 * (see taskbench_core.h). */
#include "taskbench_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *pattern_names[TB_NPATTERNS] = {
    "trivial", "no_comm", "stencil_1d", "stencil_1d_periodic", "nearest", "spread", "tree", "fft"};
static const char *kernel_names[TB_NKERNELS] = {"compute_bound", "memory_bound"};

const char *tb_pattern_name(tb_pattern_t p)
{
    return p >= 0 && p < TB_NPATTERNS ? pattern_names[p] : "?";
}

const char *tb_kernel_name(tb_kernel_t k)
{
    return k >= 0 && k < TB_NKERNELS ? kernel_names[k] : "?";
}

double tb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- options ---- */

static int lookup(const char *const *names, int n, const char *s)
{
    for (int k = 0; k < n; k++)
        if (strcmp(names[k], s) == 0)
            return k;
    return -1;
}

static int parse_long(const char *s, long lo, long hi, long *v)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || x < lo || x > hi)
        return -1;
    *v = x;
    return 0;
}

/* Whether the options describe a graph every pattern can build. */
static int check_graph(const tb_graph_t *g, char *err, size_t n)
{
    if (g->type == TB_FFT && (g->width & (g->width - 1)) != 0) {
        snprintf(err, n, "-type fft needs a power-of-two -width (got %ld)", g->width);
        return -1;
    }
    return 0;
}

static int parse(int argc, char **argv, tb_opts_t *o, char *err, size_t n)
{
    *o = (tb_opts_t){.g = {.steps = 100, .width = 4, .type = TB_STENCIL_1D, .radix = 3,
                           .kernel = TB_COMPUTE_BOUND, .iter = 1 << 10},
                     .max_iter = 1 << 16, .reps = 1, .retries = 1, .label = "-"};
    for (int a = 1; a < argc; a++) {
        const char *k = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        long x = 0;
        int bad = v == NULL;
        if (strcmp(k, "-sweep") == 0) {
            o->sweep = 1;
            continue;
        } else if (strcmp(k, "-type") == 0 && v) {
            int p = lookup(pattern_names, TB_NPATTERNS, v);
            bad = p < 0;
            o->g.type = (tb_pattern_t)p;
        } else if (strcmp(k, "-kernel") == 0 && v) {
            int p = lookup(kernel_names, TB_NKERNELS, v);
            bad = p < 0;
            o->g.kernel = (tb_kernel_t)p;
        } else if (strcmp(k, "-label") == 0 && v) {
            o->label = v;
        } else if (strcmp(k, "-steps") == 0 && v) {
            bad = parse_long(v, 1, 1L << 30, &o->g.steps);
        } else if (strcmp(k, "-width") == 0 && v) {
            bad = parse_long(v, 1, 1L << 20, &o->g.width);
        } else if (strcmp(k, "-radix") == 0 && v) {
            bad = parse_long(v, 1, TB_MAX_DEPS, &x);
            o->g.radix = (int)x;
        } else if (strcmp(k, "-iter") == 0 && v) {
            bad = parse_long(v, 0, 1L << 40, &o->g.iter);
        } else if (strcmp(k, "-max-iter") == 0 && v) {
            bad = parse_long(v, 1, 1L << 40, &o->max_iter);
        } else if (strcmp(k, "-reps") == 0 && v) {
            bad = parse_long(v, 1, 100, &x);
            o->reps = (int)x;
        } else if (strcmp(k, "-retries") == 0 && v) {
            bad = parse_long(v, 0, 8, &x);
            o->retries = (int)x;
        } else if (strcmp(k, "-min-time") == 0 && v) {
            char *end = NULL;
            o->min_time = strtod(v, &end);
            bad = !end || *end || !(o->min_time >= 0 && o->min_time <= 60);
        } else if (strcmp(k, "-region-steps") == 0 && v) {
            bad = parse_long(v, 0, 1L << 30, &o->region_steps);
        } else if (v) {
            snprintf(err, n, "unknown option '%s' (options: -steps -width -type -radix -kernel "
                             "-iter -sweep -max-iter -reps -min-time -retries -region-steps "
                             "-label)", k);
            return -1;
        }
        if (bad) {
            snprintf(err, n, "option %s needs a valid value (got '%s'; -radix is 1..%d, "
                             "-type one of trivial no_comm stencil_1d stencil_1d_periodic nearest "
                             "spread tree fft, -kernel compute_bound or memory_bound, "
                             "-min-time 0..60 seconds, -retries 0..8)",
                     k, v ? v : "nothing", TB_MAX_DEPS);
            return -1;
        }
        a++;
    }
    return check_graph(&o->g, err, n);
}

int tb_parse(int argc, char **argv, tb_opts_t *o)
{
    char err[512];
    if (parse(argc, argv, o, err, sizeof(err)) == 0)
        return 0;
    fprintf(stderr, "%s: %s\n", argc > 0 ? argv[0] : "taskbench", err);
    return -1;
}

void tb_print_run(const tb_graph_t *g, double wall, int cores, const char *extra)
{
    double tasks = (double)tb_tasks(g);
    printf("%s width %ld steps %ld iter %ld: wall %.4f s, %.2f us/task x core, %.3g work/s%s; "
           "validation ok\n",
           tb_pattern_name(g->type), g->width, g->steps, g->iter, wall,
           wall * cores / tasks * 1e6, tasks * tb_task_work(g) / wall, extra);
}

void tb_print_metg(const char *runtime, const tb_opts_t *o, const tb_metg_t *m)
{
    printf("RESULT %s %s %s metg_us %s%.2f peak %.4g last_us %.2f\n", runtime,
           tb_pattern_name(o->g.type), o->label, m->bounded ? "<=" : "", m->metg_us, m->peak,
           m->min_task_us);
}

/* ---- graph ---- */

long tb_width_at(const tb_graph_t *g, long t)
{
    if (g->type != TB_TREE || t >= 62)
        return g->width;
    long w = 1L << t;
    return w < g->width ? w : g->width;
}

static int log2_floor(long w)
{
    int k = 0;
    while ((1L << (k + 1)) <= w)
        k++;
    return k;
}

/* Adds d to the ascending, distinct set deps[0..n). */
static int add_dep(long *deps, int n, long d)
{
    int k = 0;
    while (k < n && deps[k] < d)
        k++;
    if (k < n && deps[k] == d)
        return n;
    memmove(&deps[k + 1], &deps[k], sizeof(*deps) * (size_t)(n - k));
    deps[k] = d;
    return n + 1;
}

/* A window [lo, lo + len) of points at the previous step, clipped or wrapped. */
static int window(long *deps, long lo, long len, long w, int wrap)
{
    int n = 0;
    for (long d = lo; d < lo + len; d++) {
        if (wrap)
            n = add_dep(deps, n, ((d % w) + w) % w);
        else if (d >= 0 && d < w)
            n = add_dep(deps, n, d);
    }
    return n;
}

int tb_deps(const tb_graph_t *g, long t, long i, long deps[TB_MAX_DEPS])
{
    if (t <= 0)
        return 0;
    long w = tb_width_at(g, t - 1);
    int n = 0;
    switch (g->type) {
    case TB_TRIVIAL: return 0;
    case TB_NO_COMM: return window(deps, i, 1, w, 0);
    case TB_STENCIL_1D: return window(deps, i - 1, 3, w, 0);
    case TB_STENCIL_1D_PERIODIC: return window(deps, i - 1, 3, w, 1);
    case TB_NEAREST: return window(deps, i - (g->radix - 1) / 2, g->radix, w, 0);
    case TB_SPREAD: {
        long stride = w / g->radix > 0 ? w / g->radix : 1;
        for (int k = 0; k < g->radix; k++)
            n = add_dep(deps, n, (i + k * stride) % w);
        return n;
    }
    case TB_TREE: return window(deps, i / 2, 1, w, 0);
    case TB_FFT: {
        int lg = log2_floor(w);
        n = add_dep(deps, n, i);
        return lg > 0 ? add_dep(deps, n, i ^ (1L << ((t - 1) % lg))) : n;
    }
    default: return 0;
    }
}

long tb_consumers(const tb_graph_t *g, long t, long i, long *out)
{
    long n = 0, deps[TB_MAX_DEPS];
    if (t + 1 >= g->steps)
        return 0;
    for (long j = 0; j < tb_width_at(g, t + 1); j++) {
        int nd = tb_deps(g, t + 1, j, deps);
        for (int k = 0; k < nd; k++)
            if (deps[k] == i)
                out[n++] = j;
    }
    return n;
}

long tb_tasks(const tb_graph_t *g)
{
    long n = 0;
    for (long t = 0; t < g->steps; t++)
        n += tb_width_at(g, t);
    return n;
}

double tb_task_work(const tb_graph_t *g)
{
    if (g->kernel == TB_MEMORY_BOUND)
        return 2.0 * TB_MEM_BYTES * (double)g->iter;
    return 2.0 * TB_FMA_LANES * (double)g->iter;
}

/* ---- kernels ---- */

/* Independent multiply-adds: TB_FMA_LANES chains, so the loop runs at the
 * core's FMA throughput rather than its latency. Contracting to a converging
 * affine map keeps the values finite for any iter. */
static double compute_bound(long iter, double seed)
{
    double a[TB_FMA_LANES];
    for (int k = 0; k < TB_FMA_LANES; k++)
        a[k] = seed + k * 1e-3;
    for (long it = 0; it < iter; it++)
        for (int k = 0; k < TB_FMA_LANES; k++)
            a[k] = a[k] * 0.999999 + 1e-6;
    double s = 0;
    for (int k = 0; k < TB_FMA_LANES; k++)
        s += a[k];
    return s;
}

/* Streams over a per-thread buffer larger than L1 (read and write each pass). */
static double memory_bound(long iter, double seed)
{
    static _Thread_local double buf[TB_MEM_BYTES / sizeof(double)];
    size_t n = sizeof(buf) / sizeof(buf[0]);
    for (long it = 0; it < iter; it++)
        for (size_t k = 0; k < n; k++)
            buf[k] = buf[k] * 0.5 + seed;
    return buf[0];
}

/* ---- outputs and validation ---- */

int tb_point(const tb_graph_t *g, long t, long i, const tb_out_t *const *in, int nin,
             tb_out_t *out, char *err, size_t n)
{
    long deps[TB_MAX_DEPS];
    int nd = tb_deps(g, t, i, deps);
    if (nin != nd) {
        snprintf(err, n, "point (%ld, %ld) got %d inputs, its pattern has %d", t, i, nin, nd);
        return -1;
    }
    for (int k = 0; k < nd; k++)
        if (in[k]->t != (double)(t - 1) || in[k]->i != (double)deps[k]) {
            snprintf(err, n, "point (%ld, %ld) input %d carries (%.0f, %.0f), expected (%ld, %ld)",
                     t, i, k, in[k]->t, in[k]->i, t - 1, deps[k]);
            return -1;
        }
    double seed = (double)(t * 7 + i) * 1e-6;
    double v = g->kernel == TB_MEMORY_BOUND ? memory_bound(g->iter, seed)
                                            : compute_bound(g->iter, seed);
    *out = (tb_out_t){.t = (double)t, .i = (double)i, .value = v, .ndeps = nd};
    return 0;
}

int tb_check_final(const tb_graph_t *g, long i, const tb_out_t *o, char *err, size_t n)
{
    long t = g->steps - 1;
    if (i >= tb_width_at(g, t))
        return 0;
    if (o->t != (double)t || o->i != (double)i || !isfinite(o->value)) {
        snprintf(err, n, "final output of column %ld carries (%.0f, %.0f), expected (%ld, %ld)", i,
                 o->t, o->i, t, i);
        return -1;
    }
    return 0;
}

/* ---- METG(50%) sweep ---- */

/* The fastest of o->reps runs at g->iter, or of more while their walls add
 * up to less than o->min_time (at most TB_MAX_REPS). Every rank sees the
 * same walls (the driver's contract), so every rank runs as often. */
int tb_best_wall(const tb_opts_t *o, const tb_graph_t *g, tb_run_fn run, void *ctx, double *w)
{
    *w = INFINITY;
    double sum = 0;
    for (int r = 0; r < o->reps || (sum < o->min_time && r < TB_MAX_REPS); r++) {
        double x;
        if (run(ctx, g, &x) != 0)
            return -1;
        *w = x < *w ? x : *w;
        sum += x;
    }
    return 0;
}

/* Granularity where efficiency crosses 0.5 between two points, linear in
 * efficiency over log(granularity). */
static double interpolate(double g_hi, double e_hi, double g_lo, double e_lo)
{
    if (e_hi <= e_lo)
        return g_lo;
    double f = (e_hi - 0.5) / (e_hi - e_lo);
    return exp(log(g_hi) + f * (log(g_lo) - log(g_hi)));
}

int tb_sweep(const tb_opts_t *o, int cores, tb_run_fn run, void *ctx, FILE *log, tb_metg_t *res)
{
    tb_graph_t g = o->g;
    double tasks = (double)tb_tasks(&g), prev_g = 0, prev_e = 0, top[2] = {0, 0};
    *res = (tb_metg_t){.bounded = 1};
    g.iter = 1; /* warm-up: first-touch, connections, thread start */
    double w;
    if (run(ctx, &g, &w) != 0)
        return -1;
    for (g.iter = o->max_iter; g.iter >= 1; g.iter /= 2) {
        if (tb_best_wall(o, &g, run, ctx, &w) != 0)
            return -1;
        double rate, gran, eff;
        for (int again = 0;; again++) {
            rate = tasks * tb_task_work(&g) / w;
            gran = w * cores / tasks * 1e6;
            /* The peak is the second highest rate seen so far (the highest
             * while there is one): on a machine whose speed drifts, a
             * max-iter point measured in a slow spell would put later points
             * above 1 and move the crossing to smaller tasks, and one point
             * measured in a fast spell (this 2-vCPU VM runs some 100 ms twice
             * as fast) would put every later point below its true efficiency
             * and end the sweep early. The largest tasks run at the peak on
             * every runtime, so the first points agree but for such spells. */
            double t0 = top[0], t1 = top[1];
            if (rate > t0) {
                t1 = t0;
                t0 = rate;
            } else if (rate > t1) {
                t1 = rate;
            }
            double peak = t1 > 0 ? t1 : t0;
            eff = rate / peak;
            if (log)
                fprintf(log,
                        "  iter %8ld  wall %9.4f s  granularity %10.2f us  efficiency %.3f%s\n",
                        g.iter, w, gran, eff, again ? "  (timed again)" : "");
            /* A slow spell can outlast a point's runs (-min-time), and the
             * sweep would end one halving early: time it again first, the
             * fastest of all its runs counting, as the runtime did reach it. */
            if (eff >= 0.5 || again >= o->retries) {
                top[0] = t0;
                top[1] = t1;
                res->peak = peak;
                break;
            }
            double w2;
            if (tb_best_wall(o, &g, run, ctx, &w2) != 0)
                return -1;
            w = w2 < w ? w2 : w;
        }
        res->min_task_us = gran;
        if (eff < 0.5) {
            res->metg_us = prev_g > 0 ? interpolate(prev_g, prev_e, gran, eff) : gran;
            res->bounded = 0;
            return 0;
        }
        prev_g = gran;
        prev_e = eff;
        res->metg_us = gran;
    }
    return 0;
}
