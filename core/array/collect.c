/* collect (gather to one rank or to all) and scatter (from rank 0's host
 * buffer). Both are regions of tasks: a task on the receiving rank reads a
 * tile (In) and copies it into the bound host buffer, so the planner moves
 * exactly the tiles' bytes; scatter's tasks run on rank 0 and write the
 * blocks (Out), which the region's end copies home to their owners. */
#include <string.h>

#include "core/array/params.h"
#include "core/array/tiles.h"
#include "core/base/status_internal.h"

static dagger_status_t check_box(const dagger_array_t *a, const size_t off[], const size_t ext[],
                                 const char *fn)
{
    DG_CHECK_ARG(off && ext, "%s: NULL box offset or extent", fn);
    for (int k = 0; k < a->ndims; k++)
        if (ext[k] == 0 || off[k] > a->dims[k] || ext[k] > a->dims[k] - off[k])
            return dg_error(DAGGER_ERR_BAD_VIEW, "%s: the box [%zu, %zu) of dimension %d lies "
                            "outside the array's %zu elements (or is empty)", fn, off[k],
                            off[k] + ext[k], k, a->dims[k]);
    return DAGGER_OK;
}

/* Submits, for every tile of the box and every receiving rank, a put task
 * there. */
static dagger_status_t submit_puts(dagger_region_t *r, dagger_codelet_t cl, const dg_arr_tiles_t *t,
                                   const size_t off[], const size_t ext[], int root, int nranks,
                                   uint64_t key)
{
    dg_arr_xfer_t x = {.key = key};
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        x.box[k] = k < t->ops[0]->ndims ? ext[k] : 1;
    for (int q = root < 0 ? 0 : root; q < (root < 0 ? nranks : root + 1); q++) {
        dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(q)};
        for (size_t n = 0; n < t->count; n++) {
            dg_arr_tile_t tile;
            dg_arr_tile_get(t, n, &tile);
            for (int k = 0; k < DAGGER_MAX_DIMS; k++)
                x.off[k] = tile.off[k] - (k < t->ops[0]->ndims ? off[k] : 0);
            dagger_arg_t args[2] = {DAGGER_IN(dg_arr_tile_view(t, 0, &tile)),
                                    DAGGER_VALUE(&x, sizeof(x))};
            dagger_status_t st = dagger_submit(r, cl, 2, args, &o, NULL, NULL);
            if (st != DAGGER_OK)
                return st;
        }
    }
    return DAGGER_OK;
}

dagger_status_t dagger_array_collect_box(dagger_array_t *arr, const size_t off[], const size_t ext[],
                                         int root, void *out)
{
    static const char fn[] = "dagger_array_collect";
    dagger_array_t *a = dg_arr_get(arr, fn);
    if (!a)
        return DAGGER_ERR_BAD_HANDLE;
    int nranks = dagger_nranks(a->rt);
    DG_CHECK_ARG(root == DAGGER_ALL_RANKS || (root >= 0 && root < nranks),
                 "%s: root rank %d; use 0 to %d or DAGGER_ALL_RANKS", fn, root, nranks - 1);
    dagger_status_t st = check_box(a, off, ext, fn);
    dagger_codelet_t cl;
    if (st == DAGGER_OK)
        st = dg_arr_codelet(a->rt, DG_ARR_CL_PUT, &cl);
    if (st != DAGGER_OK)
        return st;
    const dagger_array_t *ops[1] = {a};
    dg_arr_tiles_t t;
    st = dg_arr_tiles_init(&t, 1, ops, NULL, off, ext);
    if (st != DAGGER_OK)
        return st;
    /* A NULL buffer where one is written is found by the task there, which
     * fails the region on every rank alike (a local check would leave the
     * other ranks waiting in the collective). */
    uint64_t key;
    st = dg_arr_bind(a, out, &key);
    dg_arr_sub_t sub;
    if (st == DAGGER_OK)
        st = dg_arr_open(a->rt, NULL, &sub, fn);
    if (st == DAGGER_OK)
        st = dg_arr_close(&sub, submit_puts(sub.r, cl, &t, off, ext, root, nranks, key));
    dg_arr_unbind(key);
    dg_arr_tiles_cleanup(&t);
    return st;
}

dagger_status_t dagger_array_collect_to(dagger_array_t *a, int root, void *out)
{
    static const size_t zero[DAGGER_MAX_DIMS];
    const dagger_array_t *x = dg_arr_get(a, "dagger_array_collect");
    if (!x)
        return DAGGER_ERR_BAD_HANDLE;
    return dagger_array_collect_box(a, zero, x->dims, root, out);
}

dagger_status_t dagger_array_collect(dagger_array_t *a, void *out)
{
    return dagger_array_collect_to(a, DAGGER_ALL_RANKS, out);
}

/* ------------------------------------------------------------ scatter */

static void patch_offset(void *value, const dg_arr_tile_t *tile)
{
    dg_arr_xfer_t x;
    memcpy(&x, value, sizeof(x));
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        x.off[k] = tile->off[k];
    memcpy(value, &x, sizeof(x));
}

static dagger_status_t scatter_tasks(dagger_region_t *r, dagger_array_t *a, uint64_t key)
{
    dagger_codelet_t cl;
    dagger_status_t st = dg_arr_codelet(a->rt, DG_ARR_CL_TAKE, &cl);
    dg_arr_xfer_t x = {.key = key};
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        x.box[k] = a->dims[k];
    dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(0)};
    for (size_t b = 0; b < a->nblocks && st == DAGGER_OK; b++) {
        dg_arr_tile_t tile;
        size_t idx[DAGGER_MAX_DIMS];
        dg_arr_block_box(a, b, idx, tile.off, tile.ext);
        patch_offset(&x, &tile);
        dagger_arg_t args[2] = {DAGGER_OUT(dagger_view(a->rt, a->chunks[b])),
                                DAGGER_VALUE(&x, sizeof(x))};
        st = dagger_submit(r, cl, 2, args, &o, NULL, NULL);
    }
    return st;
}

dagger_status_t dagger_array_scatter(dagger_array_t *arr, const void *host)
{
    static const char fn[] = "dagger_array_scatter";
    dagger_array_t *a = dg_arr_get(arr, fn);
    if (!a)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t st = dg_arr_no_view(a, fn);
    if (st != DAGGER_OK)
        return st;
    uint64_t key;
    /* Only rank 0 runs the tasks; the binding elsewhere is never read. */
    st = dg_arr_bind(a, (void *)(uintptr_t)host, &key);
    dg_arr_sub_t sub;
    if (st == DAGGER_OK)
        st = dg_arr_open(a->rt, NULL, &sub, fn);
    if (st == DAGGER_OK)
        st = dg_arr_close(&sub, scatter_tasks(sub.r, a, key));
    dg_arr_unbind(key);
    return st;
}

dagger_status_t dagger_array_from_host(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                       const void *host, dagger_array_t **out)
{
    dagger_status_t st = dg_arr_create(rt, desc, out, "dagger_array_from_host");
    if (st != DAGGER_OK)
        return st;
    st = dagger_array_scatter(*out, host);
    if (st != DAGGER_OK) {
        dagger_array_destroy(*out);
        *out = NULL;
    }
    return st;
}
