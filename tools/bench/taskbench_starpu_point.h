/* The point task of both StarPU drivers (taskbench_starpu.c, one process;
 * taskbench_starpu_mpi.c, several): buffer 0 is the point's output, the
 * others its dependencies' outputs in tb_deps order. */
#ifndef TASKBENCH_STARPU_POINT_H
#define TASKBENCH_STARPU_POINT_H
#include "taskbench_core.h"

#include <starpu.h>

/* Point (t, i)'s accesses into descr (room for TB_MAX_DEPS + 1): its output
 * written, its dependencies' outputs of step t - 1 read; h holds two handles
 * per column, [i * 2 + step parity]. Returns their count. */
int tb_starpu_access(starpu_data_handle_t *h, const tb_graph_t *g, long t, long i,
                     struct starpu_data_descr *descr);
/* Runs point pa with the task's buffers; a wrong input is printed and
 * remembered (tb_starpu_failed). */
void tb_starpu_point(void *buffers[], const tb_point_arg_t *pa);
/* 1 once a point saw a wrong input. */
int tb_starpu_failed(void);
#endif
