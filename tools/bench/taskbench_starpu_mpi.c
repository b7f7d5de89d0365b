/* Task Bench on StarPU-MPI (P processes, STARPU_NCPU workers each): the
 * distributed task-runtime peer of the Dagger-C driver on several ranks
 * (bench_taskbench.c), with the same graphs, kernels, validation and sweep
 * (taskbench_core.c). Built only when StarPU's MPI layer and Open MPI's
 * development files are found.
 *
 *   STARPU_NCPU=1 mpirun -n P taskbench_starpu_mpi [the options of bench_taskbench,
 *                                                   less -region-steps]
 *
 * The data are taskbench_starpu.c's: two vectors of one output per column
 * (one per step parity). Column i belongs to rank i*P/width (block, as in the
 * Dagger-C and MPI drivers); every rank registers every column's two handles,
 * its own with memory and the others' without, and tells StarPU-MPI their
 * owners. Every rank submits every point with starpu_mpi_task_insert, as
 * StarPU-MPI's model requires: the owner of the written column runs it, and
 * StarPU-MPI sends each remote input to it (and caches it there until its
 * owner writes it again). MPI is initialised here with MPI_THREAD_MULTIPLE,
 * so the driver's own collectives may run beside StarPU-MPI's progress
 * thread. */
#include "taskbench_core.h"
#include "taskbench_mpi_agree.h"
#include "taskbench_starpu_point.h"
#include "starpu_mpi_bind.h"

#include <mpi.h>
#include <starpu.h>
#include <starpu_mpi.h>
#include <stdlib.h>

static void point_cpu(void *buffers[], void *cl_arg)
{
    tb_point_arg_t pa;
    starpu_codelet_unpack_args(cl_arg, &pa);
    tb_starpu_point(buffers, &pa);
}

static struct starpu_codelet point_cl = {.cpu_funcs = {point_cpu},
                                         .nbuffers = STARPU_VARIABLE_NBUFFERS};

typedef struct tb_smpi {
    int rank, nranks;
    long width;
    starpu_data_handle_t *h; /* [i * 2 + parity] */
    tb_out_t *mem;           /* [i * 2 + parity]; only the owned columns are used */
} tb_smpi_t;

static int owner(const tb_smpi_t *s, long i)
{
    return (int)(i * s->nranks / s->width);
}

static int submit_point(tb_smpi_t *s, const tb_graph_t *g, long t, long i)
{
    struct starpu_data_descr descr[TB_MAX_DEPS + 1];
    int n = tb_starpu_access(s->h, g, t, i, descr);
    tb_point_arg_t pa = {.g = *g, .t = t, .i = i};
    /* STARPU_VALUE: a rank that does not run the point makes no task and so
     * keeps no copy of the argument. */
    return starpu_mpi_task_insert(MPI_COMM_WORLD, &point_cl, STARPU_DATA_MODE_ARRAY, descr, n,
                                  STARPU_VALUE, &pa, sizeof(pa), 0) == 0 ? 0 : -1;
}

/* The last step's outputs of this rank's columns; 1 when one is wrong. */
static int check_final(tb_smpi_t *s, const tb_graph_t *g)
{
    int bad = 0;
    char err[256];
    for (long i = 0; i < g->width && !bad; i++) {
        if (owner(s, i) != s->rank)
            continue;
        long k = i * 2 + ((g->steps - 1) & 1);
        starpu_data_acquire(s->h[k], STARPU_R);
        bad = tb_check_final(g, i, &s->mem[k], err, sizeof(err));
        starpu_data_release(s->h[k]);
    }
    if (bad)
        fprintf(stderr, "rank %d: validation: %s\n", s->rank, err);
    return bad || tb_starpu_failed();
}

static int run_graph(void *ctx, const tb_graph_t *g, double *wall)
{
    tb_smpi_t *s = ctx;
    int bad = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = tb_now();
    for (long t = 0; t < g->steps && !bad; t++)
        for (long i = 0; i < tb_width_at(g, t) && !bad; i++)
            if (submit_point(s, g, t, i) != 0) {
                fprintf(stderr, "rank %d: starpu_mpi_task_insert failed\n", s->rank);
                bad = 1;
            }
    starpu_task_wait_for_all();
    starpu_mpi_wait_for_all(MPI_COMM_WORLD);
    *wall = tb_now() - t0;
    bad |= check_final(s, g);
    /* The next run writes the columns again: drop the cached copies of
     * remote ones now rather than inside the next timing. */
    starpu_mpi_cache_flush_all_data(MPI_COMM_WORLD);
    return tb_mpi_agree(wall, bad);
}

static int setup(tb_smpi_t *s, long width)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s->nranks);
    s->width = width;
    s->h = calloc((size_t)width * 2, sizeof(*s->h));
    s->mem = calloc((size_t)width * 2, sizeof(*s->mem));
    if (!s->h || !s->mem)
        return -1;
    for (long k = 0; k < width * 2; k++) {
        int own = owner(s, k / 2);
        if (own == s->rank)
            starpu_vector_data_register(&s->h[k], STARPU_MAIN_RAM, (uintptr_t)&s->mem[k],
                                        TB_OUT_DOUBLES, sizeof(double));
        else
            starpu_vector_data_register(&s->h[k], -1, 0, TB_OUT_DOUBLES, sizeof(double));
        starpu_mpi_data_register(s->h[k], k, own);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    tb_opts_t o;
    tb_smpi_t s = {0};
    int rc = tb_parse(argc, argv, &o);
    if (rc == 0 && provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "%s: this MPI gives thread level %d, not MPI_THREAD_MULTIPLE\n", argv[0],
                provided);
        rc = -1;
    }
    setenv("STARPU_NCUDA", "0", 0);
    setenv("STARPU_NOPENCL", "0", 0);
    setenv("STARPU_SILENT", "1", 0);
    /* StarPU binds each process's MPI progress thread to its worker's core,
     * where both busy-wait: with a core per process a message then waits for
     * a scheduler slice, 4.5-4.8 ms a timestep at any task size here (2 x 1,
     * stencil_1d, 5 runs); unbound (unless the user set it), 2.1 ms in 2 runs
     * of 5 and 4.6-4.9 ms in the others (docs/benchmarks.md). */
    setenv("STARPU_MPI_NOBIND", "1", 0);
    starpu_mpi_bind_spread();
    if (rc == 0 && starpu_mpi_init_conf(&argc, &argv, 0, MPI_COMM_WORLD, NULL) != 0) {
        fprintf(stderr, "%s: starpu_mpi_init_conf failed\n", argv[0]);
        rc = -1;
    }
    int started = rc == 0;
    if (rc == 0)
        rc = setup(&s, o.g.width);
    int cores = 0;
    if (rc == 0) {
        cores = (int)starpu_cpu_worker_get_count();
        MPI_Allreduce(MPI_IN_PLACE, &cores, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    double wall;
    if (rc == 0 && !o.sweep) {
        rc = run_graph(&s, &o.g, &wall); /* warm-up, as the other drivers */
        if (rc == 0)
            rc = tb_best_wall(&o, &o.g, run_graph, &s, &wall);
        if (rc == 0 && s.rank == 0)
            tb_print_run(&o.g, wall, cores, "");
    }
    if (rc == 0 && o.sweep) {
        tb_metg_t r;
        rc = tb_sweep(&o, cores, run_graph, &s, s.rank == 0 ? stdout : NULL, &r);
        if (rc == 0 && s.rank == 0)
            tb_print_metg("starpu_mpi", &o, &r);
    }
    for (long k = 0; s.h && k < o.g.width * 2; k++)
        if (s.h[k])
            starpu_data_unregister(s.h[k]);
    free(s.h);
    free(s.mem);
    if (started)
        starpu_mpi_shutdown();
    MPI_Finalize();
    return rc == 0 ? 0 : 1;
}
