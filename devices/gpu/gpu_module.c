/* Finding and opening a GPU backend's module (gpu_module.h). */
#include "devices/gpu/gpu_module.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The module in dir, when it exists there: 1 with its path, else 0. */
static int module_in(const char *file, const char *dir, size_t dir_len, char *path, size_t cap)
{
    int n = snprintf(path, cap, "%.*s/%s", (int)dir_len, dir, file);
    return n > 0 && (size_t)n < cap && access(path, F_OK) == 0;
}

static int find_module(const dg_gpu_module_where_t *w, char *path, size_t cap)
{
    Dl_info self;
    const char *slash = NULL;
    if (dladdr(w->anchor, &self) && self.dli_fname)
        slash = strrchr(self.dli_fname, '/');
    if (slash && module_in(w->file, self.dli_fname, (size_t)(slash - self.dli_fname), path, cap))
        return 1;
    return module_in(w->file, w->libdir, strlen(w->libdir), path, cap) ||
           module_in(w->file, w->builddir, strlen(w->builddir), path, cap);
}

void *dg_gpu_module_open(const dg_gpu_module_where_t *w, const dg_dl_sym_t *syms, size_t n,
                         void *table, char *path, size_t path_cap, char *why, size_t cap)
{
    char at[4096];
    if (!find_module(w, at, sizeof(at))) {
        snprintf(why, cap, "no %s next to libdagger, in %s or in %s", w->file, w->libdir,
                 w->builddir);
        return NULL;
    }
    if (path && path_cap)
        snprintf(path, path_cap, "%s", at);
    void *h = dlopen(at, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, cap, "cannot load %s: %s", at, dlerror());
        return NULL;
    }
    return dg_dl_find_all(h, at, syms, n, table, w->older, why, cap) == 0 ? h : NULL;
}
