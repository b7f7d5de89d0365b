/* The tile grid: per dimension, the sorted union of every operand's block
 * boundaries inside the box. */
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/array/tiles.h"
#include "core/base/common.h"
#include "core/base/status_internal.h"

static int cmp_size(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

/* Boundaries of dimension k over [lo, hi): lo, hi and every block edge of
 * every operand strictly inside. */
static dagger_status_t cut_dim(dg_arr_tiles_t *t, int k, size_t lo, size_t hi)
{
    size_t n = 2;
    for (int i = 0; i < t->nops; i++)
        n += (hi - lo) / t->ops[i]->block[t->dim_of[i][k]] + 1;
    size_t *c = dg_malloc(n * sizeof(*c));
    if (!c)
        return dg_error(DAGGER_ERR_NO_MEMORY, "array tiles: out of memory");
    size_t m = 0;
    c[m++] = lo;
    c[m++] = hi;
    for (int i = 0; i < t->nops; i++) {
        /* A view's block edges sit at multiples of the block size in its
         * parent, o before that in the view's own indices. */
        int j = t->dim_of[i][k];
        size_t b = t->ops[i]->block[j], o = t->ops[i]->origin[j];
        for (size_t e = ((lo + o) / b + 1) * b - o; e < hi; e += b)
            c[m++] = e;
    }
    qsort(c, m, sizeof(*c), cmp_size);
    size_t u = 0;
    for (size_t j = 0; j < m; j++)
        if (!u || c[u - 1] != c[j])
            c[u++] = c[j];
    t->cuts[k] = c;
    t->nseg[k] = u - 1;
    return DAGGER_OK;
}

dagger_status_t dg_arr_tiles_init(dg_arr_tiles_t *t, int nops, const dagger_array_t *const ops[],
                                  const int (*dim_of)[DAGGER_MAX_DIMS], const size_t *box_off,
                                  const size_t *box_ext)
{
    memset(t, 0, sizeof(*t));
    DG_ASSERT(nops >= 1 && nops <= DG_ARR_MAX_OPS);
    t->nops = nops;
    for (int i = 0; i < nops; i++) {
        t->ops[i] = ops[i];
        for (int k = 0; k < DAGGER_MAX_DIMS; k++)
            t->dim_of[i][k] = dim_of ? dim_of[i][k] : k;
    }
    t->count = 1;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        size_t lo = box_off && k < ops[0]->ndims ? box_off[k] : 0;
        size_t hi = box_ext && k < ops[0]->ndims ? lo + box_ext[k] : ops[0]->dims[k];
        dagger_status_t st = cut_dim(t, k, lo, hi);
        if (st != DAGGER_OK) {
            dg_arr_tiles_cleanup(t);
            return st;
        }
        t->count *= t->nseg[k];
    }
    return DAGGER_OK;
}

void dg_arr_tiles_cleanup(dg_arr_tiles_t *t)
{
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        free(t->cuts[k]);
        t->cuts[k] = NULL;
    }
}

void dg_arr_tile_get(const dg_arr_tiles_t *t, size_t n, dg_arr_tile_t *tile)
{
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        size_t s = n % t->nseg[k];
        n /= t->nseg[k];
        tile->off[k] = t->cuts[k][s];
        tile->ext[k] = t->cuts[k][s + 1] - t->cuts[k][s];
    }
}

/* Operand i's block grid position and block-local box of the tile. */
static void locate(const dg_arr_tiles_t *t, int i, const dg_arr_tile_t *tile,
                   size_t idx[DAGGER_MAX_DIMS], size_t off[DAGGER_MAX_DIMS],
                   size_t ext[DAGGER_MAX_DIMS])
{
    const dagger_array_t *a = t->ops[i];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        int j = t->dim_of[i][k];
        size_t g = tile->off[k] + a->origin[j]; /* the index in the parent for a view */
        idx[j] = g / a->block[j];
        off[j] = g - idx[j] * a->block[j];
        ext[j] = tile->ext[k];
    }
}

dagger_view_t dg_arr_tile_view(const dg_arr_tiles_t *t, int i, const dg_arr_tile_t *tile)
{
    size_t idx[DAGGER_MAX_DIMS], off[DAGGER_MAX_DIMS], ext[DAGGER_MAX_DIMS];
    locate(t, i, tile, idx, off, ext);
    const dagger_array_t *root = dg_arr_root(t->ops[i]);
    return dg_arr_sub_view(root, dg_arr_block_at(root, idx), off, ext);
}

size_t dg_arr_tile_block(const dg_arr_tiles_t *t, int i, const dg_arr_tile_t *tile,
                         size_t off[DAGGER_MAX_DIMS])
{
    size_t idx[DAGGER_MAX_DIMS], ext[DAGGER_MAX_DIMS];
    locate(t, i, tile, idx, off, ext);
    return dg_arr_block_at(dg_arr_root(t->ops[i]), idx);
}

int dg_arr_tile_owner(const dg_arr_tiles_t *t, int i, const dg_arr_tile_t *tile)
{
    size_t idx[DAGGER_MAX_DIMS], off[DAGGER_MAX_DIMS], ext[DAGGER_MAX_DIMS];
    locate(t, i, tile, idx, off, ext);
    const dagger_array_t *root = dg_arr_root(t->ops[i]);
    return root->owners[dg_arr_block_at(root, idx)];
}

dagger_status_t dg_arr_check_match(const dagger_array_t *a, const dagger_array_t *b,
                                   const int *dim_of, const char *fn)
{
    if (a->rt != b->rt)
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: the arrays belong to different runtimes", fn);
    if (a->dtype != b->dtype)
        return dg_error(DAGGER_ERR_DTYPE, "%s: element types differ (%s and %s); convert with "
                        "dagger_array_map first", fn, dg_arr_dtype_name(a->dtype),
                        dg_arr_dtype_name(b->dtype));
    int same = a->ndims == b->ndims;
    for (int k = 0; k < DAGGER_MAX_DIMS && same; k++)
        same = a->dims[k] == b->dims[dim_of ? dim_of[k] : k];
    if (!same) {
        char sa[96], sb[96];
        dg_arr_shape_str(a, sa, sizeof(sa));
        dg_arr_shape_str(b, sb, sizeof(sb));
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: shapes do not match: %s and %s%s", fn, sa, sb,
                        dim_of ? " (the second is read transposed)" : "");
    }
    return DAGGER_OK;
}
