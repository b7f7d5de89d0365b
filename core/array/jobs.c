/* Submitting one task per tile of an element-wise job. */
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/array/tiles.h"
#include "core/base/common.h"
#include "core/base/spmd_caller.h"
#include "core/base/status_internal.h"

static dagger_status_t submit_tiles(dagger_region_t *r, dagger_codelet_t cl, const dg_arr_job_t *job,
                                    const dg_arr_tiles_t *t, void *scratch)
{
    dagger_arg_t args[DAGGER_MAX_ARGS];
    int nargs = 1 + job->nin + (job->len > 0);
    for (size_t n = 0; n < t->count; n++) {
        dg_arr_tile_t tile;
        dg_arr_tile_get(t, n, &tile);
        args[0] = (dagger_arg_t){.kind = DAGGER_ARG_VIEW, .mode = job->out_mode,
                                 .view = dg_arr_tile_view(t, 0, &tile)};
        for (int i = 0; i < job->nin; i++)
            args[1 + i] = DAGGER_IN(dg_arr_tile_view(t, 1 + i, &tile));
        if (job->len) {
            memcpy(scratch, job->value, job->len);
            if (job->patch)
                job->patch(scratch, &tile);
            args[nargs - 1] = DAGGER_VALUE(scratch, job->len);
        }
        dagger_status_t st = dagger_submit(r, cl, nargs, args, NULL, NULL, NULL);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}

/* Each tile's task reads its inputs' elements and writes the output's: an
 * input whose box meets the output's without being the same box (views of
 * one array, shifted), or is read transposed, would have tasks read what
 * other tasks of the call already wrote (a shifted copy came out as neither
 * memmove's result nor the other way round). The same box is in place. */
static dagger_status_t check_apart(const dg_arr_job_t *job, const char *fn)
{
    for (int i = 0; i < job->nin; i++) {
        dg_arr_boxes_t b = dg_arr_boxes(job->out, job->in[i]);
        int permuted = 0;
        for (int k = 0; job->dim_of && k < DAGGER_MAX_DIMS; k++)
            permuted |= job->dim_of[1 + i][k] != k;
        if (b == DG_ARR_OVERLAP || (b == DG_ARR_SAME_BOX && permuted))
            return dg_error(DAGGER_ERR_INVALID_ARG, "%s: the output and input %d are views of one "
                            "array whose boxes overlap without being the same (or the input is "
                            "read transposed): copy that input into an array of its own first "
                            "(dagger_array_similar + dagger_array_copy)", fn, i + 1);
    }
    return DAGGER_OK;
}

dagger_status_t dg_arr_run_job(dagger_region_t *user, const dg_arr_job_t *job, const char *fn)
{
    DG_ASSERT(1 + job->nin + (job->len > 0) <= DAGGER_MAX_ARGS);
    /* From a codelet: refused before the codelet's registration would be. */
    dagger_status_t early = dg_spmd_allowed(fn);
    if (early == DAGGER_OK)
        early = check_apart(job, fn);
    if (early != DAGGER_OK)
        return early;
    dagger_runtime_t *rt = job->out->rt;
    dagger_codelet_t cl;
    dagger_status_t st = DAGGER_OK;
    if (job->user_cl)
        cl = *job->user_cl;
    else
        st = dg_arr_codelet(rt, job->codelet, &cl);
    if (st != DAGGER_OK)
        return st;
    const dagger_array_t *ops[DG_ARR_MAX_OPS];
    ops[0] = job->out;
    for (int i = 0; i < job->nin; i++)
        ops[1 + i] = job->in[i];
    dg_arr_tiles_t t;
    st = dg_arr_tiles_init(&t, 1 + job->nin, ops, job->dim_of, NULL, NULL);
    if (st != DAGGER_OK)
        return st;
    void *scratch = job->len ? dg_malloc(job->len) : NULL;
    dg_arr_sub_t sub;
    if (job->len && !scratch)
        st = dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn);
    else
        st = dg_arr_open(rt, user, &sub, fn);
    if (st == DAGGER_OK)
        st = dg_arr_close(&sub, submit_tiles(sub.r, cl, job, &t, scratch));
    free(scratch);
    dg_arr_tiles_cleanup(&t);
    return st;
}
