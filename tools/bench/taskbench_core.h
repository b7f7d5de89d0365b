/* Task Bench (Slaughter et al., SC'20), written from the paper's definition:
 * the part every driver shares. One concern per section: the options, the
 * dependence graph, the kernels, the validation of task outputs, and the
 * METG(50%) sweep. A driver (Dagger-C, MPI, ...) only maps points onto its
 * runtime and times one run of the graph.
 *
 * The graph is a 2-D iteration space of `steps` timesteps x `width` points.
 * Point (t, i) is a task that reads the outputs of its dependencies at t - 1
 * (given by the pattern) and writes one output; every output carries its
 * (t, i) tags, which each consumer checks. */
#ifndef TASKBENCH_CORE_H
#define TASKBENCH_CORE_H

#include <stddef.h>
#include <stdio.h>

typedef enum tb_pattern {
    TB_TRIVIAL,             /* no dependencies */
    TB_NO_COMM,             /* (t-1, i) */
    TB_STENCIL_1D,          /* i-1, i, i+1, clipped to the width */
    TB_STENCIL_1D_PERIODIC, /* i-1, i, i+1, wrapped around */
    TB_NEAREST,             /* the radix points centred on i, clipped */
    TB_SPREAD,              /* radix points spread over the width: i + k*ceil(width/radix) mod width */
    TB_TREE,                /* width doubles each step up to `width`; i reads its parent i/2 */
    TB_FFT,                 /* butterfly: i and i xor 2^((t-1) mod log2 width); width a power of 2 */
    TB_NPATTERNS
} tb_pattern_t;

typedef enum tb_kernel {
    TB_COMPUTE_BOUND, /* iter x TB_FMA_LANES independent FMAs (2 FLOP each) */
    TB_MEMORY_BOUND,  /* iter passes over a TB_MEM_BYTES scratch buffer (work = bytes) */
    TB_NKERNELS
} tb_kernel_t;

/* At most this many dependencies per point (radix is capped to it). */
#define TB_MAX_DEPS 12
#define TB_FMA_LANES 32
#define TB_MEM_BYTES (32 * 1024)

typedef struct tb_graph {
    long steps;
    long width;
    tb_pattern_t type;
    int radix;
    tb_kernel_t kernel;
    long iter;
} tb_graph_t;

/* ---- options ---- */

typedef struct tb_opts {
    tb_graph_t g;
    int sweep;         /* -sweep: run the METG(50%) sweep instead of one run */
    long max_iter;     /* -max-iter: the sweep's largest tasks (peak) */
    int reps;          /* -reps: timed runs per point, after one warm-up run in a
                          single run (the fastest counts) */
    double min_time;   /* -min-time: seconds; more runs per point (up to
                          TB_MAX_REPS) until their walls add up to this: short
                          runs are at the mercy of one descheduling */
    int retries;       /* -retries: a sweep point below 50 % efficiency is timed again
                          this many times (default 1) before the sweep ends there;
                          the fastest wall of all its runs counts */
    long region_steps; /* -region-steps: timesteps per region (Dagger-C; 0 = whole run) */
    const char *label; /* -label: the config name printed in the sweep's line */
} tb_opts_t;

#define TB_MAX_REPS 64

/* Parses -steps -width -type -radix -kernel -iter -sweep -max-iter -reps
 * -min-time -retries -region-steps -label. Returns 0, or -1 after printing
 * to stderr, prefixed with argv[0], what to change. */
int tb_parse(int argc, char **argv, tb_opts_t *o);
const char *tb_pattern_name(tb_pattern_t p);
const char *tb_kernel_name(tb_kernel_t k);

/* ---- graph ---- */

/* Points active at timestep t (the tree grows; others: width). */
long tb_width_at(const tb_graph_t *g, long t);
/* The dependencies of (t, i), ascending and distinct, into deps[TB_MAX_DEPS];
 * returns their count (0 at t = 0). */
int tb_deps(const tb_graph_t *g, long t, long i, long deps[TB_MAX_DEPS]);
/* Whether (t+1, j) for some j reads (t, i): the points that read (t, i), into
 * out (room for width entries); returns their count. */
long tb_consumers(const tb_graph_t *g, long t, long i, long *out);
/* Total tasks of the graph. */
long tb_tasks(const tb_graph_t *g);
/* Work units (FLOP or bytes) of one task at g->iter. */
double tb_task_work(const tb_graph_t *g);

/* ---- outputs and validation ---- */

/* What a point writes: its tags and the kernel's result. 32 bytes. */
typedef struct tb_out {
    double t, i, value, ndeps;
} tb_out_t;
#define TB_OUT_DOUBLES 4

/* A point as a task-based driver passes it by value to its task. */
typedef struct tb_point_arg {
    tb_graph_t g;
    long t, i;
} tb_point_arg_t;

/* Runs point (t, i): checks that in[k] (k < nin) is exactly the output of
 * its k-th dependency at t - 1 (tags and count), runs the kernel, writes out.
 * Returns 0, or -1 with a message naming the point and what it saw. */
int tb_point(const tb_graph_t *g, long t, long i, const tb_out_t *const *in, int nin,
             tb_out_t *out, char *err, size_t errlen);
/* Checks a last-step output (the graph's final tags). 0 or -1 with err. */
int tb_check_final(const tb_graph_t *g, long i, const tb_out_t *o, char *err, size_t errlen);

/* ---- METG(50%) sweep ---- */

/* Times one run of the graph at g->iter; returns 0 and the wall time (every
 * rank the same value: the driver agrees on the maximum), or -1. */
typedef int (*tb_run_fn)(void *ctx, const tb_graph_t *g, double *wall);

/* The fastest of o->reps runs of g, or of more while they add up to less
 * than o->min_time seconds (every rank the same value). 0 or -1. */
int tb_best_wall(const tb_opts_t *o, const tb_graph_t *g, tb_run_fn run, void *ctx,
                 double *wall);

typedef struct tb_metg {
    double metg_us;     /* METG(50%) in microseconds, interpolated */
    int bounded;        /* 1: efficiency never fell below 50%: METG <= metg_us */
    double peak;        /* work units per second: the sweep's second highest rate */
    double min_task_us; /* wall x cores / tasks at iter = 1... or the last point */
} tb_metg_t;

/* Runs the sweep: iter = max_iter, then halved until efficiency (work/s over
 * the peak, the second highest rate so far, so that neither one point in a
 * slow spell nor one in a fast spell sets it) falls below 50% (or iter
 * reaches 1); a point below 50% is timed again o->retries times first, and
 * the sweep ends there only if none of its runs reached 50%. Prints one line
 * per point to log (NULL: none). Returns 0 or -1 (a run failed). */
int tb_sweep(const tb_opts_t *o, int cores, tb_run_fn run, void *ctx, FILE *log, tb_metg_t *res);

/* The line of a single run and the RESULT line of a sweep (the script's
 * input), printed by rank 0 of every driver in the same format. `extra` is
 * appended to the run line (may be ""). */
void tb_print_run(const tb_graph_t *g, double wall, int cores, const char *extra);
void tb_print_metg(const char *runtime, const tb_opts_t *o, const tb_metg_t *m);

double tb_now(void);

#endif
