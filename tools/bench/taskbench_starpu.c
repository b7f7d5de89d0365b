/* Task Bench on StarPU (one process, STARPU_NCPU workers): the task-runtime
 * peer of the Dagger-C driver (bench_taskbench.c), with the same graphs,
 * kernels, validation and sweep (taskbench_core.c). Built only when StarPU is
 * found (DAGGER_HAVE_STARPU).
 *
 *   STARPU_NCPU=2 taskbench_starpu [the options of bench_taskbench, less -region-steps]
 *
 * The same data as the Dagger-C driver: two registered vectors of one output
 * per column (one per step parity); point (t, i) is a task with STARPU_W on
 * (i, t%2) and STARPU_R on (d, (t-1)%2) for each dependency d. The whole run
 * is submitted, then starpu_task_wait_for_all. */
#include "taskbench_core.h"
#include "taskbench_starpu_point.h"

#include <starpu.h>
#include <stdlib.h>
#include <string.h>

static void point_cpu(void *buffers[], void *cl_arg)
{
    tb_point_arg_t pa;
    memcpy(&pa, cl_arg, sizeof(pa));
    tb_starpu_point(buffers, &pa);
}

static struct starpu_codelet point_cl = {.cpu_funcs = {point_cpu},
                                         .nbuffers = STARPU_VARIABLE_NBUFFERS};

typedef struct tb_starpu {
    starpu_data_handle_t *h; /* [i * 2 + parity] */
    tb_out_t *mem;
} tb_starpu_t;

static int submit_point(tb_starpu_t *s, const tb_graph_t *g, long t, long i)
{
    struct starpu_data_descr descr[TB_MAX_DEPS + 1];
    int n = tb_starpu_access(s->h, g, t, i, descr);
    tb_point_arg_t pa = {.g = *g, .t = t, .i = i};
    /* STARPU_CL_ARGS copies nothing: the task frees the malloc'ed copy. */
    tb_point_arg_t *arg = malloc(sizeof(*arg));
    if (!arg)
        return -1;
    *arg = pa;
    return starpu_task_insert(&point_cl, STARPU_DATA_MODE_ARRAY, descr, n, STARPU_CL_ARGS,
                              arg, sizeof(*arg), 0) == 0 ? 0 : -1;
}

static int check_final(tb_starpu_t *s, const tb_graph_t *g)
{
    int bad = 0;
    char err[256];
    for (long i = 0; i < g->width && !bad; i++) {
        starpu_data_handle_t h = s->h[i * 2 + ((g->steps - 1) & 1)];
        starpu_data_acquire(h, STARPU_R);
        bad = tb_check_final(g, i, &s->mem[i * 2 + ((g->steps - 1) & 1)], err, sizeof(err));
        starpu_data_release(h);
    }
    if (bad)
        fprintf(stderr, "validation: %s\n", err);
    return bad || tb_starpu_failed() ? -1 : 0;
}

static int run_graph(void *ctx, const tb_graph_t *g, double *wall)
{
    tb_starpu_t *s = ctx;
    double t0 = tb_now();
    for (long t = 0; t < g->steps; t++)
        for (long i = 0; i < tb_width_at(g, t); i++)
            if (submit_point(s, g, t, i) != 0) {
                fprintf(stderr, "starpu_task_insert failed\n");
                return -1;
            }
    starpu_task_wait_for_all();
    *wall = tb_now() - t0;
    return check_final(s, g);
}

int main(int argc, char **argv)
{
    tb_opts_t o;
    if (tb_parse(argc, argv, &o) != 0)
        return 2;
    setenv("STARPU_NCUDA", "0", 0);
    setenv("STARPU_NOPENCL", "0", 0);
    setenv("STARPU_SILENT", "1", 0);
    if (starpu_init(NULL) != 0) {
        fprintf(stderr, "starpu_init failed\n");
        return 1;
    }
    int cores = (int)starpu_cpu_worker_get_count(), rc = 0;
    tb_starpu_t s = {.h = calloc((size_t)o.g.width * 2, sizeof(*s.h)),
                     .mem = calloc((size_t)o.g.width * 2, sizeof(*s.mem))};
    for (long k = 0; s.h && s.mem && k < o.g.width * 2; k++)
        starpu_vector_data_register(&s.h[k], STARPU_MAIN_RAM, (uintptr_t)&s.mem[k],
                                    TB_OUT_DOUBLES, sizeof(double));
    double wall;
    if (!s.h || !s.mem)
        rc = -1;
    if (rc == 0 && !o.sweep) {
        rc = run_graph(&s, &o.g, &wall); /* warm-up, as the other drivers */
        if (rc == 0)
            rc = tb_best_wall(&o, &o.g, run_graph, &s, &wall);
        if (rc == 0)
            tb_print_run(&o.g, wall, cores, "");
    }
    if (rc == 0 && o.sweep) {
        tb_metg_t r;
        rc = tb_sweep(&o, cores, run_graph, &s, stdout, &r);
        if (rc == 0)
            tb_print_metg("starpu", &o, &r);
    }
    for (long k = 0; s.h && s.mem && k < o.g.width * 2; k++)
        starpu_data_unregister(s.h[k]);
    free(s.h);
    free(s.mem);
    starpu_shutdown();
    return rc == 0 ? 0 : 1;
}
