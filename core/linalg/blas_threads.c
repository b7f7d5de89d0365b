/* One BLAS thread inside each task: tasks already keep every core busy, and
 * OpenBLAS threads inside them would oversubscribe the cores. */
#include <cblas.h>

#include "core/linalg/linalg_internal.h"

void dg_la_blas_single(void)
{
    /* The count is global in OpenBLAS (not per thread), so a user call that
     * raised it between regions is undone here, once, by the first task. */
    if (openblas_get_num_threads() != 1)
        openblas_set_num_threads(1);
}
