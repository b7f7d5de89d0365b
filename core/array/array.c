/* The array object: checking a description, creating the block chunks,
 * destroying, and the queries (shape, blocks, views). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/array/array_internal.h"
#include "core/array/collect_bundle.h"
#include "core/array/collect_pull.h"
#include "core/base/spmd_caller.h"
#include "core/base/status_internal.h"

dagger_array_t *dg_arr_get(const dagger_array_t *a, const char *fn)
{
    if (!dg_arr_live(a) || a->magic != DG_ARR_MAGIC) {
        dg_error(DAGGER_ERR_BAD_HANDLE, "%s: not a live array (NULL, destroyed, or another kind "
                 "of handle)", fn);
        return NULL;
    }
    return (dagger_array_t *)a;
}

static dagger_status_t check_desc(dagger_runtime_t *rt, const dagger_array_desc_t *d,
                                  const char *fn)
{
    if (dagger_nranks(rt) < 1)
        return dg_error(DAGGER_ERR_BAD_HANDLE, "%s: not a live runtime handle", fn);
    DG_CHECK_ARG(d, "%s: NULL array description", fn);
    DG_CHECK_ARG(d->ndims >= 1 && d->ndims <= DAGGER_MAX_DIMS,
                 "%s: ndims is %d; it must be 1 to %d", fn, d->ndims, DAGGER_MAX_DIMS);
    dagger_status_t st = dg_arr_check_dtype(d->dtype, fn);
    if (st != DAGGER_OK)
        return st;
    size_t n = dagger_dtype_size(d->dtype);
    for (int k = 0; k < d->ndims; k++) {
        DG_CHECK_ARG(d->dims[k] > 0, "%s: dimension %d is 0; every dimension needs at least one "
                     "element", fn, k);
        DG_CHECK_ARG(d->block[k] > 0, "%s: the block size of dimension %d is 0; give a block "
                     "size from 1 up (larger than the dimension means one block)", fn, k);
        if (n > SIZE_MAX / d->dims[k])
            return dg_error(DAGGER_ERR_OVERFLOW, "%s: the array's size overflows size_t", fn);
        n *= d->dims[k];
    }
    return DAGGER_OK;
}

static void set_shape(dagger_array_t *a, const dagger_array_desc_t *d)
{
    a->dtype = d->dtype;
    a->home = d->home;
    a->ndims = d->ndims;
    a->elsize = dagger_dtype_size(d->dtype);
    a->nblocks = a->nelems = 1;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        int used = k < d->ndims;
        a->dims[k] = used ? d->dims[k] : 1;
        a->block[k] = used ? (d->block[k] < d->dims[k] ? d->block[k] : d->dims[k]) : 1;
        a->nb[k] = (a->dims[k] + a->block[k] - 1) / a->block[k];
        a->nblocks *= a->nb[k];
        a->nelems *= a->dims[k];
    }
}

static void free_array(dagger_array_t *a, size_t nchunks)
{
    for (size_t b = 0; b < nchunks; b++)
        dagger_chunk_free(a->rt, a->chunks[b]);
    free(a->chunks);
    free(a->owners);
    a->magic = 0;
    free(a);
}

/* The blocks' chunks, all or none (one agreement on their allocations:
 * an owner out of memory fails the call on every rank). */
static dagger_status_t make_chunks(dagger_array_t *a, size_t *made)
{
    *made = 0;
    dagger_chunk_desc_t *cd = dg_calloc(a->nblocks, sizeof(*cd));
    if (!cd)
        return dg_error(DAGGER_ERR_NO_MEMORY, "out of memory for %zu chunk descriptions",
                        a->nblocks);
    for (size_t b = 0; b < a->nblocks; b++) {
        size_t idx[DAGGER_MAX_DIMS], off[DAGGER_MAX_DIMS];
        cd[b] = (dagger_chunk_desc_t){.dtype = a->dtype, .ndims = a->ndims,
                                      .owner = a->owners[b], .home = a->home};
        dg_arr_block_box(a, b, idx, off, cd[b].dims);
    }
    dagger_status_t st = dagger_chunk_create_many(a->rt, a->nblocks, cd, a->chunks);
    free(cd);
    if (st == DAGGER_OK)
        *made = a->nblocks;
    return st;
}

dagger_status_t dg_arr_create(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                              dagger_array_t **out, const char *fn)
{
    DG_CHECK_ARG(out, "%s: NULL array output", fn);
    *out = NULL;
    dagger_status_t st = dg_spmd_allowed(fn);
    if (st == DAGGER_OK)
        st = check_desc(rt, desc, fn);
    if (st != DAGGER_OK)
        return st;
    dagger_array_t *a = dg_calloc(1, sizeof(*a));
    if (!a)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn);
    a->magic = DG_ARR_MAGIC;
    a->rt = rt;
    set_shape(a, desc);
    a->chunks = dg_calloc(a->nblocks, sizeof(*a->chunks));
    a->owners = dg_calloc(a->nblocks, sizeof(*a->owners));
    size_t made = 0;
    if (!a->chunks || !a->owners)
        st = dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory for %zu blocks", fn, a->nblocks);
    if (st == DAGGER_OK)
        st = dg_arr_owners(a, desc->dist, a->owners, fn);
    if (st == DAGGER_OK && (st = make_chunks(a, &made)) != DAGGER_OK) {
        /* Under the caller's name (dagger_chunk_create's detail copied
         * first: dg_error writes its buffer). */
        char why[512];
        snprintf(why, sizeof(why), "%s", dagger_error_detail());
        st = dg_error(st, "%s: cannot create the array's blocks: %s", fn, why);
    }
    if (st == DAGGER_OK && dg_arr_live_add(a))
        st = dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn);
    if (st != DAGGER_OK) {
        free_array(a, made);
        return st;
    }
    *out = a;
    return DAGGER_OK;
}

dagger_status_t dagger_array_zeros(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                   dagger_array_t **out)
{
    return dg_arr_create(rt, desc, out, "dagger_array_zeros");
}

dagger_status_t dagger_array_similar(const dagger_array_t *src, dagger_array_t **out)
{
    const dagger_array_t *a = dg_arr_get(src, "dagger_array_similar");
    if (!a)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_array_desc_t d;
    dagger_array_info(a, &d);
    dagger_dist_t dist = {.kind = DAGGER_DIST_TABLE, .table = a->owners, .ntable = a->nblocks};
    d.dist = a->parent ? NULL : &dist; /* a view's shape has no block table of its own */
    return dg_arr_create(a->rt, &d, out, "dagger_array_similar");
}

dagger_status_t dagger_array_destroy(dagger_array_t *arr)
{
    dagger_array_t *a = dg_arr_get(arr, "dagger_array_destroy");
    if (!a)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t in = dg_spmd_allowed("dagger_array_destroy");
    if (in != DAGGER_OK)
        return in;
    if (a->nviews)
        return dg_error(DAGGER_ERR_STATE, "dagger_array_destroy: the array has %zu live views; "
                        "destroy them first", a->nviews);
    dg_arr_live_remove(a);
    dg_arr_bundles_free(a);
    if (a->parent) { /* a view: its blocks are its parent's */
        a->parent->nviews--;
        a->magic = 0;
        free(a);
        return DAGGER_OK;
    }
    dg_arr_peers_free(a);
    free_array(a, a->nblocks);
    return DAGGER_OK;
}

/* ------------------------------------------------------------ geometry */

void dg_arr_block_box(const dagger_array_t *a, size_t b, size_t idx[DAGGER_MAX_DIMS],
                      size_t off[DAGGER_MAX_DIMS], size_t ext[DAGGER_MAX_DIMS])
{
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        idx[k] = b % a->nb[k];
        b /= a->nb[k];
        off[k] = idx[k] * a->block[k];
        ext[k] = off[k] + a->block[k] <= a->dims[k] ? a->block[k] : a->dims[k] - off[k];
    }
}

size_t dg_arr_block_at(const dagger_array_t *a, const size_t idx[DAGGER_MAX_DIMS])
{
    size_t b = 0;
    for (int k = DAGGER_MAX_DIMS - 1; k >= 0; k--)
        b = b * a->nb[k] + idx[k];
    return b;
}

dagger_view_t dg_arr_sub_view(const dagger_array_t *a, size_t b, const size_t off[DAGGER_MAX_DIMS],
                              const size_t ext[DAGGER_MAX_DIMS])
{
    dagger_view_t v;
    memset(&v, 0, sizeof(v));
    v.chunk = a->chunks[b];
    v.ndims = a->ndims;
    v.mod = DAGGER_FULL;
    for (int k = 0; k < a->ndims; k++) {
        v.off[k] = off[k];
        v.ext[k] = ext[k];
    }
    return v;
}

void dg_arr_shape_str(const dagger_array_t *a, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int k = 0; k < a->ndims && n < len; k++)
        n += (size_t)snprintf(buf + n, len - n, k ? "x%zu" : "%zu", a->dims[k]);
}

/* ------------------------------------------------------------ queries */

dagger_status_t dagger_array_info(const dagger_array_t *arr, dagger_array_desc_t *desc)
{
    const dagger_array_t *a = dg_arr_get(arr, "dagger_array_info");
    if (!a)
        return DAGGER_ERR_BAD_HANDLE;
    DG_CHECK_ARG(desc, "dagger_array_info: NULL output");
    memset(desc, 0, sizeof(*desc));
    desc->dtype = a->dtype;
    desc->home = dg_arr_root(a)->home;
    desc->ndims = a->ndims;
    for (int k = 0; k < a->ndims; k++) {
        desc->dims[k] = a->dims[k];
        desc->block[k] = a->block[k];
    }
    return DAGGER_OK;
}

size_t dagger_array_nblocks(const dagger_array_t *arr)
{
    const dagger_array_t *a = dg_arr_get(arr, "dagger_array_nblocks");
    return a ? a->nblocks : 0; /* a view's are its parent's */
}

dagger_status_t dagger_array_block_info(const dagger_array_t *arr, size_t b,
                                        dagger_array_block_t *info)
{
    const dagger_array_t *a = dg_arr_get(arr, "dagger_array_block_info");
    if (!a)
        return DAGGER_ERR_BAD_HANDLE;
    a = dg_arr_root(a); /* a view's blocks are its parent's */
    DG_CHECK_ARG(info, "dagger_array_block_info: NULL output");
    DG_CHECK_ARG(b < a->nblocks, "dagger_array_block_info: block %zu of an array of %zu blocks",
                 b, a->nblocks);
    memset(info, 0, sizeof(*info));
    size_t idx[DAGGER_MAX_DIMS], off[DAGGER_MAX_DIMS], ext[DAGGER_MAX_DIMS];
    dg_arr_block_box(a, b, idx, off, ext);
    info->chunk = a->chunks[b];
    info->owner = a->owners[b];
    for (int k = 0; k < a->ndims; k++) {
        info->index[k] = idx[k];
        info->offset[k] = off[k];
        info->extent[k] = ext[k];
    }
    return DAGGER_OK;
}

dagger_view_t dagger_array_block(const dagger_array_t *arr, size_t b)
{
    dagger_view_t v;
    memset(&v, 0, sizeof(v));
    const dagger_array_t *a = dg_arr_get(arr, "dagger_array_block");
    if (!a || b >= a->nblocks)
        return v;
    return dagger_view(a->rt, a->chunks[b]);
}
