/* Loading cuBLAS and cuSOLVER on first use (la_cuda_lib.h says why). The
 * sonames are the ones the build found (DG_CUBLAS_SONAME, DG_CUSOLVER_SONAME,
 * from core/CMakeLists.txt), so the loaded library is the one compiled
 * against. */
#define DG_LA_CUDA_LIB_NO_REDIRECT 1
#include "core/linalg/cuda/la_cuda_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

dg_la_cuda_lib_t dg_la_cu;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

static void *open_lib(const char *soname)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        snprintf(load_error, sizeof(load_error), "cannot load %s (%s): the CUDA linear algebra "
                 "tiles need cuBLAS and cuSOLVER on the library path", soname, dlerror());
    return h;
}

/* dlsym's object pointer stored into a function pointer field (POSIX
 * guarantees the two have the same representation). */
static int find(void *h, const char *lib, const char *name, void *field)
{
    void *p = dlsym(h, name);
    if (!p) {
        snprintf(load_error, sizeof(load_error), "%s has no %s (%s): the CUDA toolkit at run "
                 "time is older than the one Dagger-C was built with", lib, name, dlerror());
        return -1;
    }
    memcpy(field, &p, sizeof(p));
    return 0;
}

static void load(void)
{
    void *blas = open_lib(DG_CUBLAS_SONAME);
    void *solver = blas ? open_lib(DG_CUSOLVER_SONAME) : NULL;
    if (!solver)
        return;
    int bad = 0;
#define DG_LA_FIND(name) bad = bad || find(blas, DG_CUBLAS_SONAME, #name, &dg_la_cu.name);
    DG_LA_CUBLAS_SYMS(DG_LA_FIND)
#undef DG_LA_FIND
#define DG_LA_FIND(name) bad = bad || find(solver, DG_CUSOLVER_SONAME, #name, &dg_la_cu.name);
    DG_LA_CUSOLVER_SYMS(DG_LA_FIND)
#undef DG_LA_FIND
    (void)bad; /* load_error says what failed */
}

int dg_la_cuda_lib_load(char *why, size_t cap)
{
    pthread_once(&once, load);
    if (!load_error[0])
        return 0;
    if (why && cap)
        snprintf(why, cap, "%s", load_error);
    return -1;
}
