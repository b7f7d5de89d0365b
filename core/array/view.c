/* Views: a sub-box of an array as an array handle of its own. A view shares
 * its parent's blocks (chunks, owners, block sizes); only its dims (the
 * box's extents) and its origin (the box's offset) are its own. The tiles
 * (tiles.c) shift by the origin, so every operation built on them (element-
 * wise, fill, reductions, collect) cuts its tasks at the box's edges and
 * submits sub-views of exactly the touched parts of the blocks: the
 * planner's exact overlaps then give exact dependencies and moves. */
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/array/array_internal.h"
#include "core/base/spmd_caller.h"
#include "core/base/status_internal.h"

static const char fn_view[] = "dagger_array_view";

static dagger_status_t check_view_box(const dagger_array_t *a, const size_t off[],
                                      const size_t ext[])
{
    DG_CHECK_ARG(off && ext, "%s: NULL offset or extent", fn_view);
    for (int k = 0; k < a->ndims; k++) {
        DG_CHECK_ARG(ext[k] > 0, "%s: extent 0 along dimension %d; a view has at least one "
                     "element along each dimension", fn_view, k);
        DG_CHECK_ARG(off[k] < a->dims[k] && ext[k] <= a->dims[k] - off[k],
                     "%s: the box [%zu, %zu) along dimension %d is outside the array, which has "
                     "%zu elements there; use an offset + extent of at most %zu", fn_view, off[k],
                     off[k] + ext[k], k, a->dims[k], a->dims[k]);
    }
    return DAGGER_OK;
}

dagger_status_t dagger_array_view(dagger_array_t *arr, const size_t off[], const size_t ext[],
                                  dagger_array_t **out)
{
    DG_CHECK_ARG(out, "%s: NULL output", fn_view);
    *out = NULL;
    dagger_status_t in = dg_spmd_allowed(fn_view);
    if (in != DAGGER_OK)
        return in;
    dagger_array_t *a = dg_arr_get(arr, fn_view);
    if (!a)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t st = check_view_box(a, off, ext);
    if (st != DAGGER_OK)
        return st;
    dagger_array_t *v = dg_malloc(sizeof(*v));
    if (!v)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn_view);
    *v = *a; /* the parent's blocks, chunks and owners */
    v->parent = a->parent ? a->parent : a;
    v->nviews = 0;
    v->bundles = NULL; /* its own collects' */
    v->nelems = 1;
    for (int k = 0; k < a->ndims; k++) {
        v->origin[k] = a->origin[k] + off[k]; /* a view of a view: offsets add up */
        v->dims[k] = ext[k];
        v->nelems *= ext[k];
    }
    if (dg_arr_live_add(v)) {
        free(v);
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn_view);
    }
    v->parent->nviews++;
    *out = v;
    return DAGGER_OK;
}

dg_arr_boxes_t dg_arr_boxes(const dagger_array_t *a, const dagger_array_t *b)
{
    if (dg_arr_root(a) != dg_arr_root(b))
        return DG_ARR_APART;
    int same = 1;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) { /* past ndims: 1 element at 0 in both */
        size_t a0 = a->parent ? a->origin[k] : 0, b0 = b->parent ? b->origin[k] : 0;
        if (a0 + a->dims[k] <= b0 || b0 + b->dims[k] <= a0)
            return DG_ARR_APART;
        same = same && a0 == b0 && a->dims[k] == b->dims[k];
    }
    return same ? DG_ARR_SAME_BOX : DG_ARR_OVERLAP;
}

dagger_status_t dg_arr_no_view(const dagger_array_t *a, const char *fn)
{
    DG_CHECK_ARG(!a->parent, "%s: a view of an array is not accepted here (this operation works "
                 "on whole blocks); copy the view into an array of its own first "
                 "(dagger_array_similar + dagger_array_copy)", fn);
    return DAGGER_OK;
}
