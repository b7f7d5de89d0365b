/* Task Bench on Dagger-C (graph, kernels, validation and sweep in
 * taskbench_core.c).
 *
 *   dagger-run -n P bench_taskbench [-steps N -width W -type P -radix R
 *       -kernel K -iter I] [-sweep -max-iter I -reps N -min-time S -retries N -label S]
 *       [-region-steps S]
 *
 * Data: each column i has two chunks of one tb_out_t, one per step parity,
 * owned by rank i*P/width (block placement). Point (t, i) is a task with Out
 * on chunk (i, t%2) and In on chunk (d, (t-1)%2) of each dependency d, so the
 * runtime sees exactly the pattern's edges (plus the write-after-read edge
 * that reusing a parity chunk two steps later implies) and owner-computes
 * puts the task on its column's rank: edges between blocks are transfers.
 * Tasks are submitted in regions of -region-steps timesteps (0: one region
 * for the whole run). */
#include "taskbench_core.h"

#include <dagger.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tb_dagger {
    dagger_runtime_t *rt;
    dagger_codelet_t cl;
    dagger_chunk_t *chunks; /* [i * 2 + parity] */
    long region_steps;
} tb_dagger_t;

static int point_task(dagger_task_t *task)
{
    int na = dagger_task_nargs(task);
    tb_point_arg_t pa;
    memcpy(&pa, dagger_task_data(task, na - 1), sizeof(pa));
    const tb_out_t *in[TB_MAX_DEPS];
    for (int k = 1; k < na - 1; k++)
        in[k - 1] = dagger_task_data(task, k);
    char err[256];
    if (tb_point(&pa.g, pa.t, pa.i, in, na - 2, dagger_task_data(task, 0), err, sizeof(err)))
        return dagger_task_fail(task, "%s", err);
    return DAGGER_OK;
}

/* Point i's output buffer of timestep t (two per point, alternating). */
static dagger_chunk_t out_chunk(tb_dagger_t *d, long i, long t)
{
    return d->chunks[i * 2 + (t & 1)];
}

static dagger_status_t submit_point(tb_dagger_t *d, dagger_region_t *r, const tb_graph_t *g,
                                    long t, long i)
{
    long deps[TB_MAX_DEPS];
    int nd = tb_deps(g, t, i, deps);
    tb_point_arg_t pa = {.g = *g, .t = t, .i = i};
    dagger_arg_t args[TB_MAX_DEPS + 2];
    args[0] = DAGGER_OUT_CHUNK(out_chunk(d, i, t));
    for (int k = 0; k < nd; k++)
        args[1 + k] = DAGGER_IN_CHUNK(out_chunk(d, deps[k], t - 1));
    args[1 + nd] = DAGGER_VALUE(&pa, sizeof(pa));
    return dagger_submit(r, d->cl, nd + 2, args, NULL, NULL, NULL);
}

/* Steps [t0, t1) in one region. */
static dagger_status_t run_steps(tb_dagger_t *d, const tb_graph_t *g, long t0, long t1)
{
    dagger_region_t *r;
    dagger_status_t st = dagger_region_begin(d->rt, NULL, &r);
    for (long t = t0; st == DAGGER_OK && t < t1; t++)
        for (long i = 0; st == DAGGER_OK && i < tb_width_at(g, t); i++)
            st = submit_point(d, r, g, t, i);
    dagger_status_t e = r ? dagger_region_end(r) : st;
    return st != DAGGER_OK ? st : e;
}

/* The last step's outputs, fetched to every rank and checked. */
static int check_final(tb_dagger_t *d, const tb_graph_t *g)
{
    for (long i = 0; i < g->width; i++) {
        tb_out_t o;
        size_t len;
        char err[256];
        if (dagger_fetch_chunk(d->rt, d->chunks[i * 2 + ((g->steps - 1) & 1)], &o, sizeof(o),
                               &len) != DAGGER_OK ||
            tb_check_final(g, i, &o, err, sizeof(err)) != 0) {
            if (dagger_rank(d->rt) == 0)
                fprintf(stderr, "validation: %s\n", err);
            return -1;
        }
    }
    return 0;
}

static int run_graph(void *ctx, const tb_graph_t *g, double *wall)
{
    tb_dagger_t *d = ctx;
    long per = d->region_steps > 0 ? d->region_steps : g->steps;
    dagger_barrier(d->rt);
    double t0 = tb_now();
    for (long s = 0; s < g->steps; s += per) {
        dagger_status_t st = run_steps(d, g, s, s + per < g->steps ? s + per : g->steps);
        if (st != DAGGER_OK) {
            fprintf(stderr, "rank %d: region failed: %s\n", dagger_rank(d->rt),
                    dagger_error_detail());
            return -1;
        }
    }
    *wall = tb_now() - t0;
    dagger_allreduce(d->rt, wall, 1, DAGGER_F64, DAGGER_OP_MAX);
    return check_final(d, g);
}

static int setup(tb_dagger_t *d, const tb_graph_t *g)
{
    int P = dagger_nranks(d->rt);
    dagger_codelet_register(d->rt, &(dagger_codelet_desc_t){.name = "taskbench_point",
                                                            .cpu = point_task},
                            &d->cl);
    d->chunks = calloc((size_t)g->width * 2, sizeof(*d->chunks));
    for (long i = 0; d->chunks && i < g->width * 2; i++) {
        dagger_chunk_desc_t cd = {.dtype = DAGGER_F64, .ndims = 1, .dims = {TB_OUT_DOUBLES},
                                  .owner = (int)(i / 2 * P / g->width)};
        if (dagger_chunk_create(d->rt, &cd, &d->chunks[i]) != DAGGER_OK) {
            fprintf(stderr, "chunk: %s\n", dagger_error_detail());
            return -1;
        }
    }
    return d->chunks ? 0 : -1;
}

static int one_run(tb_dagger_t *d, const tb_opts_t *o, int cores)
{
    double wall;
    if (run_graph(d, &o->g, &wall) != 0 || tb_best_wall(o, &o->g, run_graph, d, &wall) != 0)
        return -1; /* a warm-up run first: connections, first touch, thread start */
    dagger_region_stats_t rs = {0};
    dagger_region_stats(d->rt, &rs);
    char extra[96];
    snprintf(extra, sizeof(extra), ", last region %llu transfers, %llu of %llu tasks replayed",
             (unsigned long long)rs.transfers, (unsigned long long)rs.tasks_replayed,
             (unsigned long long)rs.tasks);
    if (dagger_rank(d->rt) == 0)
        tb_print_run(&o->g, wall, cores, extra);
    return 0;
}

int main(int argc, char **argv)
{
    tb_opts_t o;
    if (tb_parse(argc, argv, &o) != 0)
        return 2;
    tb_dagger_t d = {.region_steps = o.region_steps};
    if (dagger_init(&argc, &argv, NULL, &d.rt) != DAGGER_OK) {
        fprintf(stderr, "dagger_init: %s\n", dagger_error_detail());
        return 1;
    }
    int cores = dagger_nranks(d.rt) * dagger_num_threads(d.rt), rc = setup(&d, &o.g);
    if (rc == 0 && !o.sweep)
        rc = one_run(&d, &o, cores);
    if (rc == 0 && o.sweep) {
        tb_metg_t m;
        FILE *log = dagger_rank(d.rt) == 0 ? stdout : NULL;
        rc = tb_sweep(&o, cores, run_graph, &d, log, &m);
        if (rc == 0 && log)
            tb_print_metg("dagger", &o, &m);
    }
    free(d.chunks);
    dagger_finalize(d.rt);
    return rc == 0 ? 0 : 1;
}
