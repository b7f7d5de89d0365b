/* The CPU tile kernels' first call: the libraries loaded, one BLAS thread
 * inside each task (tasks already keep every core busy, and OpenBLAS threads
 * inside them would oversubscribe the cores). */
#include "core/linalg/la_blas_lib.h"
#include "core/linalg/linalg_internal.h"

int dg_la_blas_ready(dagger_task_t *t)
{
    char why[512];
    if (dg_la_blas_lib_load(why, sizeof(why)))
        return dagger_task_fail(t, "%s", why);
    /* The count is global in OpenBLAS (not per thread), so a user call that
     * raised it between regions is undone here, once, by the first task. */
    if (openblas_get_num_threads() != 1)
        openblas_set_num_threads(1);
    return DAGGER_OK;
}
