/* Uniformity checking switches and the user-value check. */
#include <dagger/region.h>

#include "core/api/tasks.h"
#include "core/hash.h"
#include "core/status_internal.h"

dagger_status_t dagger_check_uniformity(dagger_runtime_t *rt, int on)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_check_uniformity");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    t->uniformity = on != 0;
    return DAGGER_OK;
}

dagger_status_t dagger_check_uniform(dagger_runtime_t *rt, const void *bytes, size_t len)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_check_uniform");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    DG_CHECK_ARG(bytes || !len, "dagger_check_uniform: NULL bytes");
    if (!t->uniformity)
        return DAGGER_OK;
    dg_check_point_t cp = {.kind = DG_CHECK_USER, .task = t->checks + 1};
    cp.hash = dg_hash_bytes(dg_hash_u64(DG_HASH_SEED, len), bytes, len);
    return dg_tasks_check(t, &cp);
}
