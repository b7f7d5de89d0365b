/* The stencil kernels' launchers, found in the CUDA backend's module
 * (st_cuda.h). */
#define DG_ST_CUDA_NO_REDIRECT 1
#include "core/array/cuda/st_cuda.h"

#include <pthread.h>
#include <stdio.h>

#include "core/base/dl_table.h"

dg_st_cuda_lib_t dg_st_cu;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

static void load(void)
{
    void *h = dg_cuda_lib_module();
    if (!h) {
        snprintf(load_error, sizeof(load_error), "the CUDA backend's module is not loaded");
        return;
    }
#define DG_ST_CUDA_ROW(name) DG_DL_SYM(dg_st_cuda_lib_t, name)
    static const dg_dl_sym_t syms[] = {DG_ST_CUDA_SYMS(DG_ST_CUDA_ROW)};
#undef DG_ST_CUDA_ROW
    (void)dg_dl_find_all(h, "the CUDA kernels' module", syms, DG_DL_NSYMS(syms), &dg_st_cu,
                         "the module is not the one built with this libdagger", load_error,
                         sizeof(load_error));
}

int dg_st_cuda_load(dagger_task_t *t)
{
    char why[512];
    if (dg_dl_once(&once, load, load_error, why, sizeof(why)) == 0)
        return 0;
    return dagger_task_fail(t, "stencil on a CUDA device: %s", why);
}
