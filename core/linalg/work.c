/* Work copies: a routine whose algorithm needs other blocks than the user's
 * array has (square tiles, whole block columns) works on a re-blocked copy.
 * Arrays cannot be created inside a region, so a copy is only possible when
 * the routine runs in a region of its own. */
#include <stdio.h>
#include <string.h>

#include "core/linalg/linalg_internal.h"
#include "core/base/status_internal.h"

static size_t eff(size_t block, size_t dim)
{
    return block < dim ? block : dim;
}

dagger_status_t dg_la_work_init(dg_la_work_t *w, dagger_array_t *a, size_t b0, size_t b1,
                                int copy_in, int copy_out, dagger_region_t *user_r,
                                const char *fn, const char *why)
{
    memset(w, 0, sizeof(*w));
    w->user = w->work = a;
    int vec = a->ndims == 1;
    if (vec)
        b1 = 1;
    if (eff(a->block[0], a->dims[0]) == eff(b0, a->dims[0]) &&
        eff(a->block[1], a->dims[1]) == eff(b1, a->dims[1]))
        return DAGGER_OK;
    if (user_r)
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: %s, but the array has blocks %zu x %zu: "
                        "create it with blocks %zu x %zu, or call with r = NULL to work on a "
                        "re-blocked copy", fn, why, a->block[0], vec ? (size_t)1 : a->block[1],
                        b0, b1);
    dagger_dist_t cyc = {.kind = DAGGER_DIST_CYCLIC_2D};
    dagger_array_desc_t d = {.dtype = a->dtype, .ndims = a->ndims, .dims = {a->dims[0], a->dims[1]},
                             .block = {b0, b1}, .dist = vec ? NULL : &cyc};
    dagger_status_t st = dagger_array_zeros(a->rt, &d, &w->work);
    if (st != DAGGER_OK) {
        char detail[512]; /* copied first: dg_error writes its buffer */
        snprintf(detail, sizeof(detail), "%s", dagger_error_detail());
        return dg_error(st, "%s: its re-blocked copy of the array: %s", fn, detail);
    }
    w->copy_in = copy_in;
    w->copy_out = copy_out;
    return DAGGER_OK;
}

dagger_status_t dg_la_work_in(dg_la_work_t *w, dagger_region_t *r)
{
    if (w->work == w->user || !w->copy_in)
        return DAGGER_OK;
    return dagger_array_copy(r, w->work, w->user);
}

dagger_status_t dg_la_work_out(dg_la_work_t *w, dagger_region_t *r)
{
    if (w->work == w->user || !w->copy_out)
        return DAGGER_OK;
    return dagger_array_copy(r, w->user, w->work);
}

void dg_la_work_cleanup(dg_la_work_t *w)
{
    if (w->work && w->work != w->user)
        dagger_array_destroy(w->work);
    w->work = NULL;
}
