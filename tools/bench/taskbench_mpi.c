/* Task Bench on plain MPI with nonblocking point-to-point: the peer the
 * Dagger-C driver (bench_taskbench.c) is compared with. Same graphs, kernels,
 * validation and sweep (taskbench_core.c). A benchmark reference only: the
 * runtime itself links no MPI.
 *
 *   mpirun -n P taskbench_mpi [the options of bench_taskbench, less -region-steps]
 *
 * Column i lives on rank i*P/width (block, as in the Dagger-C driver). Each
 * timestep t: Irecv the remote dependency outputs of step t-1, Isend this
 * rank's step t-1 outputs to the remote points that read them (one message
 * per edge, as Task Bench's MPI version), Waitall, compute the local points. */
#include "taskbench_core.h"
#include "taskbench_mpi_agree.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

typedef struct tb_mpi {
    int rank, nranks;
    long width, lo, hi; /* this rank's columns [lo, hi) */
    tb_out_t *prev, *cur; /* [width]: outputs of the previous and current step */
    tb_out_t *recv;       /* [width * TB_MAX_DEPS]: remote inputs of the local points */
    long *cons;           /* [width]: scratch for tb_consumers */
    MPI_Request *req;     /* [width * TB_MAX_DEPS * 2] */
} tb_mpi_t;

static int owner(const tb_mpi_t *m, long i)
{
    return (int)(i * m->nranks / m->width);
}

/* Tags name the producing column: messages between two ranks on one tag are
 * non-overtaking, and every copy of a column's output is the same bytes. */
static int tag_of(long col)
{
    return (int)(col % 32768);
}

/* Posts step t's receives and step t-1's sends; returns the request count. */
static int post_step(tb_mpi_t *m, const tb_graph_t *g, long t)
{
    int nr = 0;
    long deps[TB_MAX_DEPS];
    for (long i = m->lo; i < m->hi && i < tb_width_at(g, t); i++) {
        int nd = tb_deps(g, t, i, deps);
        for (int k = 0; k < nd; k++)
            if (owner(m, deps[k]) != m->rank)
                MPI_Irecv(&m->recv[i * TB_MAX_DEPS + k], (int)sizeof(tb_out_t), MPI_BYTE,
                          owner(m, deps[k]), tag_of(deps[k]), MPI_COMM_WORLD, &m->req[nr++]);
    }
    for (long i = m->lo; t > 0 && i < m->hi && i < tb_width_at(g, t - 1); i++) {
        long nc = tb_consumers(g, t - 1, i, m->cons);
        for (long k = 0; k < nc; k++)
            if (owner(m, m->cons[k]) != m->rank)
                MPI_Isend(&m->prev[i], (int)sizeof(tb_out_t), MPI_BYTE, owner(m, m->cons[k]),
                          tag_of(i), MPI_COMM_WORLD, &m->req[nr++]);
    }
    return nr;
}

static int compute_step(tb_mpi_t *m, const tb_graph_t *g, long t)
{
    long deps[TB_MAX_DEPS];
    const tb_out_t *in[TB_MAX_DEPS];
    char err[256];
    for (long i = m->lo; i < m->hi && i < tb_width_at(g, t); i++) {
        int nd = tb_deps(g, t, i, deps);
        for (int k = 0; k < nd; k++)
            in[k] = owner(m, deps[k]) == m->rank ? &m->prev[deps[k]]
                                                 : &m->recv[i * TB_MAX_DEPS + k];
        if (tb_point(g, t, i, in, nd, &m->cur[i], err, sizeof(err)) != 0) {
            fprintf(stderr, "rank %d: validation: %s\n", m->rank, err);
            MPI_Abort(MPI_COMM_WORLD, 1); /* the other ranks wait on this one's sends */
        }
    }
    return 0;
}

static int run_graph(void *ctx, const tb_graph_t *g, double *wall)
{
    tb_mpi_t *m = ctx;
    int bad = 0;
    char err[256];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = tb_now();
    for (long t = 0; t < g->steps && !bad; t++) {
        int nr = post_step(m, g, t);
        MPI_Waitall(nr, m->req, MPI_STATUSES_IGNORE);
        bad = compute_step(m, g, t);
        tb_out_t *x = m->prev;
        m->prev = m->cur;
        m->cur = x;
    }
    *wall = tb_now() - t0;
    for (long i = m->lo; i < m->hi && !bad; i++)
        if (tb_check_final(g, i, &m->prev[i], err, sizeof(err)) != 0) {
            fprintf(stderr, "rank %d: validation: %s\n", m->rank, err);
            bad = 1;
        }
    return tb_mpi_agree(wall, bad);
}

static int setup(tb_mpi_t *m, long width)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->nranks);
    m->width = width;
    m->lo = (m->rank * width + m->nranks - 1) / m->nranks;
    m->hi = ((m->rank + 1) * width + m->nranks - 1) / m->nranks;
    m->prev = calloc((size_t)width, sizeof(tb_out_t));
    m->cur = calloc((size_t)width, sizeof(tb_out_t));
    m->recv = calloc((size_t)width * TB_MAX_DEPS, sizeof(tb_out_t));
    m->cons = calloc((size_t)width, sizeof(long));
    m->req = calloc((size_t)width * TB_MAX_DEPS * 2, sizeof(MPI_Request));
    return m->prev && m->cur && m->recv && m->cons && m->req ? 0 : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tb_opts_t o;
    tb_mpi_t m = {0};
    int rc = tb_parse(argc, argv, &o);
    if (rc == 0)
        rc = setup(&m, o.g.width);
    double wall;
    if (rc == 0 && !o.sweep) {
        rc = run_graph(&m, &o.g, &wall); /* warm-up, as the Dagger-C driver */
        if (rc == 0)
            rc = tb_best_wall(&o, &o.g, run_graph, &m, &wall);
        if (rc == 0 && m.rank == 0)
            tb_print_run(&o.g, wall, m.nranks, "");
    }
    if (rc == 0 && o.sweep) {
        tb_metg_t r;
        rc = tb_sweep(&o, m.nranks, run_graph, &m, m.rank == 0 ? stdout : NULL, &r);
        if (rc == 0 && m.rank == 0)
            tb_print_metg("mpi", &o, &r);
    }
    free(m.prev);
    free(m.cur);
    free(m.recv);
    free(m.cons);
    free(m.req);
    MPI_Finalize();
    return rc == 0 ? 0 : 1;
}
