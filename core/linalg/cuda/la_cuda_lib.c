/* Loading cuBLAS and cuSOLVER on first use (la_cuda_lib.h says why). The
 * sonames are the ones the build found (DG_CUBLAS_SONAME, DG_CUSOLVER_SONAME,
 * from core/CMakeLists.txt), so the loaded library is the one compiled
 * against. */
#define DG_LA_CUDA_LIB_NO_REDIRECT 1
#include "core/linalg/cuda/la_cuda_lib.h"

#include "core/base/dl_table.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

dg_la_cuda_lib_t dg_la_cu;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

#define OLDER "the CUDA toolkit at run time is older than the one Dagger-C was built with"

static void *open_lib(const char *soname)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        snprintf(load_error, sizeof(load_error), "cannot load %s (%s): the CUDA linear algebra "
                 "tiles need cuBLAS and cuSOLVER on the library path", soname, dlerror());
    return h;
}

static void load(void)
{
    void *blas = open_lib(DG_CUBLAS_SONAME);
    void *solver = blas ? open_lib(DG_CUSOLVER_SONAME) : NULL;
    if (!solver)
        return;
#define DG_LA_ROW(name) DG_DL_SYM(dg_la_cuda_lib_t, name)
    static const dg_dl_sym_t blas_syms[] = {DG_LA_CUBLAS_SYMS(DG_LA_ROW)};
    static const dg_dl_sym_t solver_syms[] = {DG_LA_CUSOLVER_SYMS(DG_LA_ROW)};
    static const dg_dl_sym_t kernel_syms[] = {DG_LA_CUDA_KERNEL_SYMS(DG_LA_ROW)};
#undef DG_LA_ROW
    void *kernels = dg_cuda_lib_module();
    /* load_error says what failed */
    (void)(dg_dl_find_all(blas, DG_CUBLAS_SONAME, blas_syms, DG_DL_NSYMS(blas_syms), &dg_la_cu,
                          OLDER, load_error, sizeof(load_error)) ||
           dg_dl_find_all(solver, DG_CUSOLVER_SONAME, solver_syms, DG_DL_NSYMS(solver_syms),
                          &dg_la_cu, OLDER, load_error, sizeof(load_error)) ||
           (kernels && dg_dl_find_all(kernels, "the CUDA kernels' module", kernel_syms,
                                      DG_DL_NSYMS(kernel_syms), &dg_la_cu,
                                      "the module is not the one built with this libdagger",
                                      load_error, sizeof(load_error))));
}

int dg_la_cuda_lib_load(char *why, size_t cap)
{
    return dg_dl_once(&once, load, load_error, why, cap);
}
