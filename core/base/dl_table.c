/* Tables of routines from libraries loaded at run time (dl_table.h). */
#include "core/base/dl_table.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int find_one(void *h, const char *lib, const char *name, void *field, const char *hint,
                    char *why, size_t cap)
{
    void *p = dlsym(h, name);
    if (!p) {
        snprintf(why, cap, "%s has no %s (%s): %s", lib, name, dlerror(), hint);
        return -1;
    }
    memcpy(field, &p, sizeof(p));
    return 0;
}

int dg_dl_find_all(void *h, const char *lib, const dg_dl_sym_t *syms, size_t n, void *table,
                   const char *hint, char *why, size_t cap)
{
    for (size_t i = 0; i < n; i++)
        if (find_one(h, lib, syms[i].name, (char *)table + syms[i].field, hint, why, cap))
            return -1;
    return 0;
}

int dg_dl_once(pthread_once_t *once, void (*load)(void), const char *error, char *why,
               size_t cap)
{
    pthread_once(once, load);
    if (!error[0])
        return 0;
    if (why && cap)
        snprintf(why, cap, "%s", error);
    return -1;
}
