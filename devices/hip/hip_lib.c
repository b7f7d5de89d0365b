/* Loading the HIP runtime on first use (hip_lib.h says why). The module's
 * file name and the two directories compiled in (DG_HIP_MODULE,
 * DG_HIP_MODULE_LIBDIR, DG_HIP_MODULE_BUILDDIR) come from
 * devices/hip/CMakeLists.txt. */
#define DG_HIP_LIB_NO_REDIRECT 1
#include "devices/hip/hip_lib.h"

#include "core/base/dl_table.h"

#include <dlfcn.h>
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

#define OLDER "the HIP runtime at run time is older than the one Dagger-C was built with"

/* The module in dir, when it exists there: 1 with its path, else 0. */
static int module_in(const char *dir, size_t dir_len, char *path, size_t cap)
{
    int n = snprintf(path, cap, "%.*s/%s", (int)dir_len, dir, DG_HIP_MODULE);
    return n > 0 && (size_t)n < cap && access(path, F_OK) == 0;
}

/* Next to the library or executable that holds this code (build/libdagger.so,
 * an installed copy), then the install libdir, then the build directory
 * (programs linking the static library in the build tree). */
static int find_module(char *path, size_t cap)
{
    Dl_info self;
    const char *slash = NULL;
    if (dladdr(&dg_hip_rt, &self) && self.dli_fname)
        slash = strrchr(self.dli_fname, '/');
    if (slash && module_in(self.dli_fname, (size_t)(slash - self.dli_fname), path, cap))
        return 1;
    return module_in(DG_HIP_MODULE_LIBDIR, strlen(DG_HIP_MODULE_LIBDIR), path, cap) ||
           module_in(DG_HIP_MODULE_BUILDDIR, strlen(DG_HIP_MODULE_BUILDDIR), path, cap);
}

int dg_hip_lib_open(dg_hip_lib_t *t, char *path, size_t path_cap, char *why, size_t cap)
{
    char at[4096];
    if (!find_module(at, sizeof(at))) {
        snprintf(why, cap, "no %s next to libdagger, in %s or in %s", DG_HIP_MODULE,
                 DG_HIP_MODULE_LIBDIR, DG_HIP_MODULE_BUILDDIR);
        return -1;
    }
    if (path && path_cap)
        snprintf(path, path_cap, "%s", at);
    /* Never closed: the runtime keeps threads of its own until exit. */
    void *h = dlopen(at, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, cap, "cannot load %s: %s", at, dlerror());
        return -1;
    }
#define DG_HIP_ROW(name) DG_DL_SYM(dg_hip_lib_t, name)
    static const dg_dl_sym_t syms[] = {DG_HIP_SYMS(DG_HIP_ROW)};
#undef DG_HIP_ROW
    return dg_dl_find_all(h, at, syms, DG_DL_NSYMS(syms), t, OLDER, why, cap);
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
