/* Shared by the public actor API files: from a runtime handle to its actor
 * system, with the handle checked first. */
#ifndef DG_ACT_API_H
#define DG_ACT_API_H

#include "actors/system.h"
#include "core/runtime/runtime.h"
#include "core/base/status_internal.h"

static inline dagger_status_t dg_api_system(const dagger_runtime_t *rt, const char *what,
                                            dg_act_system_t **sys)
{
    if (DG_UNLIKELY(!dg_runtime_ok(rt)))
        return dg_error(DAGGER_ERR_BAD_HANDLE,
                        "%s: not a live runtime handle (NULL, finalized, or not from dagger_init)",
                        what);
    if (DG_UNLIKELY(!rt->actors))
        return dg_error(DAGGER_ERR_STATE, "%s: this runtime has no actor system", what);
    *sys = rt->actors;
    return DAGGER_OK;
}

#define DG_API_SYSTEM(rt, what, sys)                                   \
    dg_act_system_t *sys = NULL;                                       \
    do {                                                               \
        dagger_status_t st_ = dg_api_system((rt), (what), &sys);       \
        if (st_ != DAGGER_OK)                                          \
            return st_;                                                \
    } while (0)

#endif
