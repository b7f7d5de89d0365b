/* Loading OpenBLAS and LAPACKE on first use (la_blas_lib.h says why). The
 * sonames are the ones the build found (DG_OPENBLAS_SONAME,
 * DG_LAPACKE_SONAME, from core/CMakeLists.txt). OpenBLAS is opened into the
 * global scope before LAPACKE, as linking put it first on the link line:
 * LAPACKE's calls to LAPACK (dpotrf_, ...) then bind to OpenBLAS's own
 * routines, whose thread count dg_la_blas_single sets, and not to the
 * reference LAPACK that LAPACKE names as a dependency. */
#define DG_LA_BLAS_LIB_NO_REDIRECT 1
#include "core/linalg/la_blas_lib.h"

#include "core/base/dl_table.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

dg_la_blas_lib_t dg_la_blas;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

#define OTHER "the library at run time is not the one Dagger-C was built with"

static void *open_lib(const char *soname, int scope)
{
    void *h = dlopen(soname, RTLD_NOW | scope);
    if (!h)
        snprintf(load_error, sizeof(load_error), "cannot load %s (%s): the CPU linear algebra "
                 "tiles need OpenBLAS and LAPACKE on the library path (Debian: apt-get install "
                 "libopenblas0 liblapacke)", soname, dlerror());
    return h;
}

static void load(void)
{
    void *blas = open_lib(DG_OPENBLAS_SONAME, RTLD_GLOBAL);
    void *lapacke = blas ? open_lib(DG_LAPACKE_SONAME, RTLD_LOCAL) : NULL;
    if (!lapacke)
        return;
#define DG_LA_ROW(name) DG_DL_SYM(dg_la_blas_lib_t, name)
    static const dg_dl_sym_t blas_syms[] = {DG_LA_OPENBLAS_SYMS(DG_LA_ROW)};
    static const dg_dl_sym_t lapacke_syms[] = {DG_LA_LAPACKE_SYMS(DG_LA_ROW)};
#undef DG_LA_ROW
    /* load_error says what failed */
    (void)(dg_dl_find_all(blas, DG_OPENBLAS_SONAME, blas_syms, DG_DL_NSYMS(blas_syms), &dg_la_blas,
                          OTHER, load_error, sizeof(load_error)) ||
           dg_dl_find_all(lapacke, DG_LAPACKE_SONAME, lapacke_syms, DG_DL_NSYMS(lapacke_syms),
                          &dg_la_blas, OTHER, load_error, sizeof(load_error)));
}

int dg_la_blas_lib_load(char *why, size_t cap)
{
    return dg_dl_once(&once, load, load_error, why, cap);
}
