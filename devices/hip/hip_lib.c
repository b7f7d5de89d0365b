/* Loading the HIP runtime on first use (hip_lib.h says why). The module's
 * file name and the two directories compiled in (DG_HIP_MODULE,
 * DG_HIP_MODULE_LIBDIR, DG_HIP_MODULE_BUILDDIR) come from
 * devices/hip/CMakeLists.txt; devices/gpu/gpu_module.h finds and opens it. */
#define DG_HIP_LIB_NO_REDIRECT 1
#include "devices/hip/hip_lib.h"

#include "core/base/dl_table.h"
#include "devices/gpu/gpu_module.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The kernel driver's device file: without it the runtime finds no device,
 * so there is nothing to load it for. */
#define DG_HIP_KFD "/dev/kfd"

dg_hip_lib_t dg_hip_rt;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

int dg_hip_lib_open(dg_hip_lib_t *t, char *path, size_t path_cap, char *why, size_t cap)
{
    static const dg_gpu_module_where_t where = {
        .file = DG_HIP_MODULE,
        .libdir = DG_HIP_MODULE_LIBDIR,
        .builddir = DG_HIP_MODULE_BUILDDIR,
        .anchor = &dg_hip_rt,
        .older = "the HIP runtime at run time is older than the one Dagger-C was built with",
    };
#define DG_HIP_ROW(name) DG_DL_SYM(dg_hip_lib_t, name)
    static const dg_dl_sym_t syms[] = {DG_HIP_SYMS(DG_HIP_ROW)};
#undef DG_HIP_ROW
    void *h = dg_gpu_module_open(&where, syms, DG_DL_NSYMS(syms), t, path, path_cap, why, cap);
    return h ? 0 : -1;
}

static void load(void)
{
    if (access(DG_HIP_KFD, F_OK) != 0) {
        snprintf(load_error, sizeof(load_error), "no driver: %s: %s (the HIP runtime was "
                 "not loaded)", DG_HIP_KFD, strerror(errno));
        return;
    }
    dg_hip_lib_t t;
    if (dg_hip_lib_open(&t, NULL, 0, load_error, sizeof(load_error)) == 0)
        dg_hip_rt = t;
}

int dg_hip_lib_load(char *why, size_t cap)
{
    return dg_dl_once(&once, load, load_error, why, cap);
}
