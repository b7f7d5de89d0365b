/* Array operations submit into the caller's region, or open and end one of
 * their own: the same code serves both. */
#include <stdio.h>

#include "core/array/array_internal.h"
#include "core/base/spmd_caller.h"
#include "core/base/status_internal.h"
#include "core/runtime/region_query.h"

dagger_status_t dg_arr_open(dagger_runtime_t *rt, dagger_region_t *user, dg_arr_sub_t *s,
                            const char *fn)
{
    s->r = NULL;
    s->own = 0;
    s->pin = 1;
    dagger_status_t in = dg_spmd_allowed(fn);
    if (in != DAGGER_OK)
        return in;
    if (!user) {
        dagger_status_t st = dagger_region_begin(rt, NULL, &s->r);
        s->own = st == DAGGER_OK;
        if (st == DAGGER_ERR_STATE) {
            /* Under the caller's name: the user did not call region_begin.
             * The detail is copied first (dg_error writes its buffer). */
            char why[512];
            snprintf(why, sizeof(why), "%s", dagger_error_detail());
            return dg_error(st, "%s: opens a region of its own, and cannot: %s", fn, why);
        }
        return st;
    }
    /* The region must belong to the arrays' runtime, so chunks of one
     * runtime never reach another's planner. */
    dagger_runtime_t *owner;
    if (dagger_region_runtime(user, &owner) != DAGGER_OK)
        return dg_error(DAGGER_ERR_BAD_HANDLE, "%s: not an open region (NULL for a region of the "
                        "call's own)", fn);
    if (owner != rt)
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: the region belongs to another runtime than "
                        "the arrays", fn);
    s->r = user;
    s->pin = !dg_region_limits_ranks(user);
    return DAGGER_OK;
}

dagger_status_t dg_arr_close(dg_arr_sub_t *s, dagger_status_t st)
{
    if (!s->own)
        return st;
    /* Submission errors are the same on every rank (they come from uniform
     * inputs), so every rank ends the region here alike. */
    dagger_status_t end = dagger_region_end(s->r);
    s->own = 0;
    s->r = NULL;
    return st != DAGGER_OK ? st : end;
}
