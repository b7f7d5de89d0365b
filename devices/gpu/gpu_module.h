/* Finding and opening a GPU backend's module (libdagger-cuda.so,
 * libdagger-hip.so), which holds the backend's kernels and links its
 * runtime, so that libdagger links neither (devices/cuda/cuda_lib.h,
 * devices/hip/hip_lib.h say why). Shared by both loaders. */
#ifndef DG_DEV_GPU_MODULE_H
#define DG_DEV_GPU_MODULE_H

#include <stddef.h>

#include "core/base/dl_table.h"

typedef struct dg_gpu_module_where {
    const char *file;     /* the module's file name */
    const char *libdir;   /* the install libdir */
    const char *builddir; /* the build directory */
    const void *anchor;   /* an object of libdagger's code (dladdr: where it was loaded from) */
    const char *older;    /* the hint when a routine is missing (dg_dl_find_all) */
} dg_gpu_module_where_t;

/* Looks for the module next to the library or executable that holds anchor
 * (build/libdagger.so, an installed copy), then in the install libdir, then
 * in the build directory (programs linking the static library in the build
 * tree), opens it (never closed: the runtimes keep threads of their own
 * until exit) and fills table with its n routines syms (dg_dl_find_all:
 * the module's own and its runtime's). The handle, or NULL with why ("no
 * <file> next to libdagger, in ... or in ...", "cannot load <path>:
 * <dlerror>", or the routine missing). Writes the path it found to path
 * (may be NULL). */
void *dg_gpu_module_open(const dg_gpu_module_where_t *w, const dg_dl_sym_t *syms, size_t n,
                         void *table, char *path, size_t path_cap, char *why, size_t cap);

#endif
