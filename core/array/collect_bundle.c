/* collect's bundles (collect_bundle.h): which tiles travel packed, in
 * which bundle, and the bundle chunks kept with the array. */
#include <stdlib.h>
#include <string.h>

#include "core/array/collect_bundle.h"
#include "core/base/alloc.h"
#include "core/base/status_internal.h"

/* Frees the chunks and the plan, keeping the collect's key. */
static void drop_chunks(dagger_runtime_t *rt, dg_arr_bundles_t *bs)
{
    for (size_t i = 0; i < bs->count; i++)
        if (bs->b[i].chunk.id)
            dagger_chunk_free(rt, bs->b[i].chunk);
    free(bs->b);
    free(bs->via);
    bs->b = NULL;
    bs->via = NULL;
    bs->count = 0;
}

static void release(dagger_runtime_t *rt, dg_arr_bundles_t *bs)
{
    if (!bs)
        return;
    drop_chunks(rt, bs);
    free(bs);
}

void dg_arr_bundles_free(dagger_array_t *a)
{
    release(a->rt, a->bundles);
    a->bundles = NULL;
}

void dg_arr_bundles_after(dagger_array_t *a)
{
    if (a->bundles && !a->bundles->keep)
        drop_chunks(a->rt, a->bundles);
}

static size_t tile_elems(const dg_arr_tile_t *tile)
{
    size_t n = 1;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        n *= tile->ext[k];
    return n;
}

/* Splits the m small tiles list[] of one owner (bytes in all) into
 * bundles: at least one per DG_ARR_PUT_TILES tiles and per
 * DG_ARR_BUNDLE_BYTES, the tiles shared out as evenly as possible (16
 * tiles: 8 and 8, not 15 and 1). */
static dagger_status_t split(dg_arr_bundles_t *bs, int owner, const size_t *list, size_t m,
                             size_t bytes, size_t *cap)
{
    size_t groups = (m + DG_ARR_PUT_TILES - 1) / DG_ARR_PUT_TILES;
    size_t by_bytes = (bytes + DG_ARR_BUNDLE_BYTES - 1) / DG_ARR_BUNDLE_BYTES;
    if (by_bytes > groups)
        groups = by_bytes < m ? by_bytes : m;
    for (size_t g = 0; g < groups; g++) {
        if (bs->count == *cap) {
            size_t ncap = *cap ? 2 * *cap : 16;
            dg_arr_bundle_t *nb = dg_realloc(bs->b, ncap * sizeof(*nb));
            if (!nb)
                return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_array_collect: out of memory");
            bs->b = nb;
            *cap = ncap;
        }
        dg_arr_bundle_t *b = &bs->b[bs->count++];
        memset(b, 0, sizeof(*b));
        b->owner = owner;
        for (size_t i = m * g / groups; i < m * (g + 1) / groups; i++) {
            b->tile[b->ntiles++] = list[i];
            bs->via[list[i]] = owner;
        }
    }
    return DAGGER_OK;
}

/* Which tiles travel bundled and in which bundle: per owner (in rank
 * order), its small tiles in tile order, when some other rank collects them
 * and there are at least two. */
static dagger_status_t plan(const dagger_array_t *a, const dg_arr_tiles_t *t, int root,
                            dg_arr_bundles_t *bs)
{
    int nranks = dagger_nranks(a->rt);
    size_t n = t->count, cap = 0;
    bs->ntiles = n;
    bs->via = dg_malloc(n * sizeof(*bs->via));
    size_t *start = dg_calloc((size_t)nranks + 1, sizeof(*start));
    size_t *bytes = dg_calloc((size_t)nranks, sizeof(*bytes));
    size_t *list = dg_malloc(n * sizeof(*list));
    int *owner = dg_malloc(n * sizeof(*owner));
    dagger_status_t st = DAGGER_OK;
    if (!bs->via || !start || !bytes || !list || !owner)
        st = dg_error(DAGGER_ERR_NO_MEMORY, "dagger_array_collect: out of memory for %zu tiles", n);
    for (size_t i = 0; st == DAGGER_OK && i < n; i++) {
        dg_arr_tile_t tile;
        dg_arr_tile_get(t, i, &tile);
        bs->via[i] = -1;
        owner[i] = -1;
        int o = dg_arr_tile_owner(t, 0, &tile);
        size_t b = tile_elems(&tile) * a->elsize;
        if (b <= DG_ARR_BUNDLE_TILE_MAX && o != root) {
            owner[i] = o;
            start[o + 1]++;
            bytes[o] += b;
        }
    }
    /* A counting sort by owner keeps each owner's tiles in tile order. */
    for (int o = 0; st == DAGGER_OK && o < nranks; o++)
        start[o + 1] += start[o];
    size_t *fill = st == DAGGER_OK ? dg_malloc((size_t)nranks * sizeof(*fill)) : NULL;
    if (st == DAGGER_OK && !fill)
        st = dg_error(DAGGER_ERR_NO_MEMORY, "dagger_array_collect: out of memory");
    if (st == DAGGER_OK) {
        memcpy(fill, start, (size_t)nranks * sizeof(*fill));
        for (size_t i = 0; i < n; i++)
            if (owner[i] >= 0)
                list[fill[owner[i]]++] = i;
        for (int o = 0; st == DAGGER_OK && o < nranks; o++)
            if (start[o + 1] - start[o] >= 2)
                st = split(bs, o, list + start[o], start[o + 1] - start[o], bytes[o], &cap);
    }
    free(fill);
    free(owner);
    free(list);
    free(bytes);
    free(start);
    return st;
}

static dagger_status_t make_chunks(const dagger_array_t *a, const dg_arr_tiles_t *t,
                                   dg_arr_bundles_t *bs)
{
    dagger_chunk_desc_t *d = dg_calloc(bs->count ? bs->count : 1, sizeof(*d));
    dagger_chunk_t *c = dg_calloc(bs->count ? bs->count : 1, sizeof(*c));
    dagger_status_t st = d && c ? DAGGER_OK : dg_error(DAGGER_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; st == DAGGER_OK && i < bs->count; i++) {
        const dg_arr_bundle_t *b = &bs->b[i];
        d[i] = (dagger_chunk_desc_t){.dtype = a->dtype, .ndims = 1, .owner = b->owner};
        for (uint32_t j = 0; j < b->ntiles; j++) {
            dg_arr_tile_t tile;
            dg_arr_tile_get(t, b->tile[j], &tile);
            d[i].dims[0] += tile_elems(&tile);
        }
    }
    /* All or none, with one agreement on the allocations. */
    if (st == DAGGER_OK && (st = dagger_chunk_create_many(a->rt, bs->count, d, c)) == DAGGER_OK)
        for (size_t i = 0; i < bs->count; i++)
            bs->b[i].chunk = c[i];
    free(d);
    free(c);
    return st;
}

static int same_collect(const dg_arr_bundles_t *bs, const size_t off[], const size_t ext[],
                        int root, int ndims)
{
    if (bs->root != root)
        return 0;
    for (int k = 0; k < ndims; k++)
        if (bs->off[k] != off[k] || bs->ext[k] != ext[k])
            return 0;
    return 1;
}

dagger_status_t dg_arr_bundles_get(dagger_array_t *a, const dg_arr_tiles_t *t, const size_t off[],
                                   const size_t ext[], int root, const dg_arr_bundles_t **out)
{
    *out = NULL;
    int repeat = a->bundles && same_collect(a->bundles, off, ext, root, a->ndims);
    if (repeat && a->bundles->count) { /* kept from the last one */
        *out = a->bundles;
        return DAGGER_OK;
    }
    dg_arr_bundles_free(a);
    if (dagger_nranks(a->rt) < 2)
        return DAGGER_OK;
    dg_arr_bundles_t *bs = dg_calloc(1, sizeof(*bs));
    if (!bs)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_array_collect: out of memory");
    bs->root = root;
    bs->keep = repeat;
    for (int k = 0; k < a->ndims; k++) {
        bs->off[k] = off[k];
        bs->ext[k] = ext[k];
    }
    dagger_status_t st = plan(a, t, root, bs);
    if (st == DAGGER_OK)
        st = make_chunks(a, t, bs);
    if (st != DAGGER_OK || bs->count == 0) {
        release(a->rt, bs);
        return st;
    }
    a->bundles = bs;
    *out = bs;
    return DAGGER_OK;
}
