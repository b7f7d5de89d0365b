/* Loading PMIx on first use (pmix_lib.h says why). DG_PMIX_SONAME and
 * DG_PMIX_LIBDIR come from transport/CMakeLists.txt (the library the build
 * found). */
#define DG_PMIX_LIB_NO_REDIRECT 1
#include "transport/pmix_lib.h"

#include "core/base/dl_table.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

dg_pmix_lib_t dg_pmix;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[1024];

#define OLDER "the PMIx library at run time is older than the one Dagger-C was built with"

/* Global: PMIx's own plugins (pmix_mca_*.so) resolve its symbols. Never
 * closed: PMIx keeps a thread of its own until the process exits. */
static void *open_lib(char *tried, size_t cap)
{
    void *h = dlopen(DG_PMIX_SONAME, RTLD_NOW | RTLD_GLOBAL);
    if (h)
        return h;
    int n = snprintf(tried, cap, "%s: %s", DG_PMIX_SONAME, dlerror());
    h = dlopen(DG_PMIX_LIBDIR "/" DG_PMIX_SONAME, RTLD_NOW | RTLD_GLOBAL);
    if (!h && n >= 0 && (size_t)n < cap)
        snprintf(tried + n, cap - (size_t)n, "; %s", dlerror());
    return h;
}

static void load(void)
{
    char tried[768];
    void *h = open_lib(tried, sizeof(tried));
    if (!h) {
        snprintf(load_error, sizeof(load_error), "cannot load the PMIx library (%s); install "
                 "PMIx (libpmix2) or put its directory in LD_LIBRARY_PATH", tried);
        return;
    }
#define DG_PMIX_ROW(name) DG_DL_SYM(dg_pmix_lib_t, name)
    static const dg_dl_sym_t syms[] = {DG_PMIX_SYMS(DG_PMIX_ROW)};
#undef DG_PMIX_ROW
    dg_pmix_lib_t t;
    if (dg_dl_find_all(h, DG_PMIX_SONAME, syms, DG_DL_NSYMS(syms), &t, OLDER, load_error,
                       sizeof(load_error)) == 0)
        dg_pmix = t;
}

int dg_pmix_load(char *why, size_t cap)
{
    return dg_dl_once(&once, load, load_error, why, cap);
}
