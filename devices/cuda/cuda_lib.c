/* Loading the CUDA runtime and our kernels on first use (cuda_lib.h says
 * why). The module's file name and the two directories compiled in
 * (DG_CUDA_MODULE, DG_CUDA_MODULE_LIBDIR, DG_CUDA_MODULE_BUILDDIR) come from
 * devices/cuda/CMakeLists.txt; devices/gpu/gpu_module.h finds and opens it. */
#define DG_CUDA_LIB_NO_REDIRECT 1
#include "devices/cuda/cuda_lib.h"

#include "core/base/dl_table.h"
#include "devices/gpu/gpu_module.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* What the NVIDIA kernel driver leaves when it is there: its control device,
 * its /proc folder (loaded, device files not made yet: libcuda makes them),
 * or WSL's GPU device. Without any of them the runtime finds no device, so
 * there is nothing to load it for. */
static const char *const driver_files[] = {"/dev/nvidiactl", "/proc/driver/nvidia/version",
                                           "/dev/dxg"};

dg_cuda_lib_t dg_cuda_rt;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];
static _Atomic(void *) module;

int dg_cuda_lib_open(dg_cuda_lib_t *t, void **handle, char *path, size_t path_cap, char *why,
                     size_t cap)
{
    static const dg_gpu_module_where_t where = {
        .file = DG_CUDA_MODULE,
        .libdir = DG_CUDA_MODULE_LIBDIR,
        .builddir = DG_CUDA_MODULE_BUILDDIR,
        .anchor = &dg_cuda_rt,
        .older = "the CUDA runtime at run time is older than the one Dagger-C was built with",
    };
#define DG_CUDA_ROW(name) DG_DL_SYM(dg_cuda_lib_t, name)
    static const dg_dl_sym_t syms[] = {DG_CUDA_SYMS(DG_CUDA_ROW)};
#undef DG_CUDA_ROW
    void *h = dg_gpu_module_open(&where, syms, DG_DL_NSYMS(syms), t, path, path_cap, why, cap);
    if (handle)
        *handle = h;
    return h ? 0 : -1;
}

static void load(void)
{
    int driver = 0;
    for (size_t i = 0; i < sizeof(driver_files) / sizeof(driver_files[0]) && !driver; i++)
        driver = access(driver_files[i], F_OK) == 0;
    if (!driver) {
        snprintf(load_error, sizeof(load_error), "no driver: %s: %s (the CUDA runtime was "
                 "not loaded)", driver_files[0], strerror(ENOENT));
        return;
    }
    dg_cuda_lib_t t;
    void *h = NULL;
    if (dg_cuda_lib_open(&t, &h, NULL, 0, load_error, sizeof(load_error)) == 0) {
        dg_cuda_rt = t;
        atomic_store(&module, h);
    }
}

int dg_cuda_lib_load(char *why, size_t cap)
{
    return dg_dl_once(&once, load, load_error, why, cap);
}

void *dg_cuda_lib_module(void)
{
    return atomic_load(&module);
}
