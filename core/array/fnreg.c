/* Named user functions (index functions, stencil kernels). Tasks carry the
 * id, a hash of the name, because function pointers differ between
 * processes; each process maps the id back to its own pointer here. The
 * table is process-wide: tasks run on worker threads that see no runtime. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/array/array_internal.h"
#include "core/base/hash.h"
#include "core/base/spmd_caller.h"
#include "core/base/status_internal.h"

#define MAX_FNS 512

typedef struct fn_entry {
    uint32_t id;
    int kind;
    dg_arr_anyfn fn;
    char name[64];
} fn_entry_t;

static pthread_mutex_t fn_lock = PTHREAD_MUTEX_INITIALIZER;
static fn_entry_t fns[MAX_FNS];
static int nfns;

/* Ids 1..15 are the built-in stencil kernels. */
#define FIRST_USER_ID 16u

static dagger_status_t add_locked(int kind, const char *name, dg_arr_anyfn fn, uint32_t id,
                                  const char *api)
{
    for (int i = 0; i < nfns; i++) {
        fn_entry_t *e = &fns[i];
        if (e->id != id)
            continue;
        if (strcmp(e->name, name) != 0)
            return dg_error(DAGGER_ERR_TYPE_CONFLICT, "%s: '%s' and '%s' hash to the same id; "
                            "rename one", api, name, e->name);
        if (e->kind != kind || e->fn != fn)
            return dg_error(DAGGER_ERR_EXISTS, "%s: '%s' is already registered with another "
                            "function", api, name);
        return DAGGER_OK;
    }
    if (nfns == MAX_FNS)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: more than %d named functions", api, MAX_FNS);
    fn_entry_t *e = &fns[nfns++];
    e->id = id;
    e->kind = kind;
    e->fn = fn;
    snprintf(e->name, sizeof(e->name), "%s", name);
    return DAGGER_OK;
}

dagger_status_t dg_arr_fn_register(int kind, const char *name, dg_arr_anyfn fn, uint32_t *id,
                                   const char *api)
{
    DG_CHECK_ARG(name && name[0] && fn && id, "%s: NULL name, function or output", api);
    dagger_status_t in = dg_spmd_allowed(api);
    if (in != DAGGER_OK)
        return in;
    DG_CHECK_ARG(strlen(name) < 64, "%s: name '%s' is longer than 63 characters", api, name);
    uint32_t h = dg_name_id(name);
    if (h < FIRST_USER_ID)
        h += FIRST_USER_ID; /* keep clear of the built-in ids */
    pthread_mutex_lock(&fn_lock);
    dagger_status_t st = add_locked(kind, name, fn, h, api);
    pthread_mutex_unlock(&fn_lock);
    if (st == DAGGER_OK)
        *id = h;
    return st;
}

dg_arr_anyfn dg_arr_fn_find(int kind, uint32_t id)
{
    dg_arr_anyfn fn = NULL;
    pthread_mutex_lock(&fn_lock);
    for (int i = 0; i < nfns && !fn; i++)
        if (fns[i].id == id && fns[i].kind == kind)
            fn = fns[i].fn;
    pthread_mutex_unlock(&fn_lock);
    return fn;
}

dagger_status_t dagger_index_fn_register(dagger_runtime_t *rt, const char *name,
                                         dagger_index_fn fn, dagger_index_fn_id_t *out)
{
    if (dagger_nranks(rt) < 1)
        return dg_error(DAGGER_ERR_BAD_HANDLE, "dagger_index_fn_register: not a live runtime");
    DG_CHECK_ARG(out, "dagger_index_fn_register: NULL output");
    return dg_arr_fn_register(DG_ARR_FN_INDEX, name, (dg_arr_anyfn)fn, &out->id,
                              "dagger_index_fn_register");
}

dagger_status_t dagger_stencil_kernel_register(dagger_runtime_t *rt, const char *name,
                                               dagger_stencil_fn fn, dagger_stencil_kernel_t *out)
{
    if (dagger_nranks(rt) < 1)
        return dg_error(DAGGER_ERR_BAD_HANDLE, "dagger_stencil_kernel_register: not a live runtime");
    DG_CHECK_ARG(out, "dagger_stencil_kernel_register: NULL output");
    return dg_arr_fn_register(DG_ARR_FN_STENCIL, name, (dg_arr_anyfn)fn, &out->id,
                              "dagger_stencil_kernel_register");
}
