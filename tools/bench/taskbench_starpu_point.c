/* The point task of the StarPU drivers (taskbench_starpu_point.h). */
#include "taskbench_starpu_point.h"

static int failed; /* set by a task whose inputs were wrong (atomic) */

int tb_starpu_access(starpu_data_handle_t *h, const tb_graph_t *g, long t, long i,
                     struct starpu_data_descr *descr)
{
    long deps[TB_MAX_DEPS];
    int nd = tb_deps(g, t, i, deps);
    descr[0] = (struct starpu_data_descr){.handle = h[i * 2 + (t & 1)], .mode = STARPU_W};
    for (int k = 0; k < nd; k++)
        descr[1 + k] = (struct starpu_data_descr){.handle = h[deps[k] * 2 + ((t - 1) & 1)],
                                                  .mode = STARPU_R};
    return nd + 1;
}

void tb_starpu_point(void *buffers[], const tb_point_arg_t *pa)
{
    int nb = STARPU_TASK_GET_NBUFFERS(starpu_task_get_current());
    const tb_out_t *in[TB_MAX_DEPS];
    for (int k = 1; k < nb; k++)
        in[k - 1] = (const tb_out_t *)STARPU_VECTOR_GET_PTR(buffers[k]);
    char err[256];
    if (tb_point(&pa->g, pa->t, pa->i, in, nb - 1, (tb_out_t *)STARPU_VECTOR_GET_PTR(buffers[0]),
                 err, sizeof(err)) != 0) {
        fprintf(stderr, "validation: %s\n", err);
        __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
    }
}

int tb_starpu_failed(void)
{
    return __atomic_load_n(&failed, __ATOMIC_RELAXED);
}
