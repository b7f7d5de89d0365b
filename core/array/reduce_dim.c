/* Reductions along one dimension: out (a's dims with extent 1 along dim)
 * gets op over dim of a. Per tile of out (the common refinement of out's
 * blocks and a's blocks in the other dimensions): a tile that meets one
 * block of a along dim gets one task, which stores the block's reduction
 * into it. Otherwise every block along dim gets a task that returns its
 * reduction (a future, 8 bytes a value), all at once, and a task on the
 * tile's owner stores them into the tile in block order, up to
 * DAGGER_MAX_ARGS - 2 a task (the first setting the tile, each next
 * combining with it). Each block's task runs on the rank that owns the
 * block (unless the caller's region limits the ranks: then placement
 * decides), so only values of the tile's size travel, never a block of a;
 * and the order of combination is the block order, whatever the number of
 * ranks. */
#include <string.h>

#include "core/array/params.h"
#include "core/array/tiles.h"
#include "core/base/status_internal.h"

static const char fn_rd[] = "dagger_array_reduce_dim";

/* The view of a's block j along dim (a block of a's parent for a view)
 * under the out tile, clipped to a's range along dim. */
static dagger_view_t block_under(const dagger_array_t *a, int dim, size_t j,
                                 const dg_arr_tile_t *tile, size_t *blk)
{
    size_t idx[DAGGER_MAX_DIMS], off[DAGGER_MAX_DIMS], ext[DAGGER_MAX_DIMS];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        size_t g = tile->off[k] + a->origin[k];
        idx[k] = k == dim ? j : g / a->block[k];
        off[k] = g - idx[k] * a->block[k];
        ext[k] = tile->ext[k];
    }
    size_t lo = a->origin[dim], hi = lo + a->dims[dim], b0 = j * a->block[dim];
    size_t from = lo > b0 ? lo : b0, to = hi < b0 + a->block[dim] ? hi : b0 + a->block[dim];
    off[dim] = from - b0;
    ext[dim] = to - from;
    const dagger_array_t *root = dg_arr_root(a);
    *blk = dg_arr_block_at(root, idx);
    return dg_arr_sub_view(root, *blk, off, ext);
}

/* The three codelets (reduce_dim_kernel.c). */
typedef struct reddim_cls {
    dagger_codelet_t one, part, comb;
} reddim_cls_t;

/* Out tile o (nout values) from a's blocks first..last along dim. */
static dagger_status_t submit_tile(const dg_arr_sub_t *sub, const reddim_cls_t *cl,
                                   const dg_arr_tile_t *tile, dagger_view_t o, const dagger_array_t *a,
                                   int dim, uint32_t kind, size_t first, size_t last, size_t nout)
{
    dagger_runtime_t *rt = a->rt;
    dagger_region_t *r = sub->r;
    dg_arr_reddim_t p = {.kind = kind, .dim = (uint32_t)dim, .first = 1};
    size_t blk;
    if (first == last || nout > DAGGER_MAX_RETURN / sizeof(double)) {
        /* One block along dim; or results too large to return, which then
         * go into the tile one block after the other (a chain). */
        dagger_status_t st = DAGGER_OK;
        for (size_t j = first; j <= last && st == DAGGER_OK; j++, p.first = 0) {
            dagger_arg_t args[3] = {
                {.kind = DAGGER_ARG_VIEW, .mode = p.first ? DAGGER_MODE_OUT : DAGGER_MODE_INOUT,
                 .view = o},
                DAGGER_IN(block_under(a, dim, j, tile, &blk)), DAGGER_VALUE(&p, sizeof(p))};
            dagger_task_opts_t opts = {
                .scope = sub->pin ? &DAGGER_SCOPE_RANK(a->owners[blk]) : NULL};
            st = dagger_submit(r, cl->one, 3, args, &opts, NULL, NULL);
        }
        return st;
    }
    enum { RUN = DAGGER_MAX_ARGS - 2 };
    dagger_arg_t args[DAGGER_MAX_ARGS];
    dagger_future_t f[RUN];
    dagger_status_t st = DAGGER_OK;
    for (size_t j = first; j <= last && st == DAGGER_OK;) {
        int n = 0;
        for (; j <= last && n < RUN && st == DAGGER_OK; j++) {
            dagger_arg_t in[2] = {DAGGER_IN(block_under(a, dim, j, tile, &blk)),
                                  DAGGER_VALUE(&p, sizeof(p))};
            dagger_task_opts_t opts = {
                .scope = sub->pin ? &DAGGER_SCOPE_RANK(a->owners[blk]) : NULL,
                .return_size = nout * sizeof(double)};
            st = dagger_submit(r, cl->part, 2, in, &opts, NULL, &f[n]);
            n += st == DAGGER_OK;
        }
        if (st == DAGGER_OK) {
            args[0] = (dagger_arg_t){.kind = DAGGER_ARG_VIEW,
                                     .mode = p.first ? DAGGER_MODE_OUT : DAGGER_MODE_INOUT,
                                     .view = o};
            for (int k = 0; k < n; k++)
                args[1 + k] = DAGGER_FUTURE(f[k]);
            args[1 + n] = DAGGER_VALUE(&p, sizeof(p));
            st = dagger_submit(r, cl->comb, n + 2, args, NULL, NULL, NULL); /* on o's owner */
        }
        for (int k = 0; k < n; k++) { /* the results go once read, or on an error */
            dagger_status_t fs = dagger_future_free(rt, f[k]);
            st = st == DAGGER_OK ? fs : st;
        }
        p.first = 0;
    }
    return st;
}

static dagger_status_t submit_tiles(const dg_arr_sub_t *sub, const reddim_cls_t *cl,
                                    const dg_arr_tiles_t *t, const dagger_array_t *a, int dim,
                                    uint32_t kind)
{
    size_t first = a->origin[dim] / a->block[dim];
    size_t last = (a->origin[dim] + a->dims[dim] - 1) / a->block[dim];
    for (size_t n = 0; n < t->count; n++) {
        dg_arr_tile_t tile;
        dg_arr_tile_get(t, n, &tile);
        size_t nout = 1;
        for (int k = 0; k < DAGGER_MAX_DIMS; k++)
            nout *= k == dim ? 1 : tile.ext[k];
        dagger_status_t st = submit_tile(sub, cl, &tile, dg_arr_tile_view(t, 0, &tile), a, dim,
                                         kind, first, last, nout);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}

/* out must be a's shape with extent 1 along dim, and a's dtype. */
static dagger_status_t check_out(const dagger_array_t *a, int dim, const dagger_array_t *out)
{
    DG_CHECK_ARG(a->rt == out->rt, "%s: the arrays belong to different runtimes", fn_rd);
    int same = a->ndims == out->ndims;
    for (int k = 0; k < DAGGER_MAX_DIMS && same; k++)
        same = out->dims[k] == (k == dim ? 1 : a->dims[k]);
    if (!same) {
        char sa[96], so[96];
        dg_arr_shape_str(a, sa, sizeof(sa));
        dg_arr_shape_str(out, so, sizeof(so));
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: the output is %s; reducing %s along "
                        "dimension %d needs the same dims with extent 1 along %d", fn_rd, so, sa,
                        dim, dim);
    }
    if (a->dtype != out->dtype)
        return dg_error(DAGGER_ERR_DTYPE, "%s: the output is %s, the array %s; they must match",
                        fn_rd, dg_arr_dtype_name(out->dtype), dg_arr_dtype_name(a->dtype));
    return DAGGER_OK;
}

static dagger_status_t check_args(dagger_op_t op, const dagger_array_t *a, int dim,
                                  const dagger_array_t *out, uint32_t *kind)
{
    switch (op) {
    case DAGGER_OP_ADD: *kind = DG_RED_SUM; break;
    case DAGGER_OP_MIN: *kind = DG_RED_MIN; break;
    case DAGGER_OP_MAX: *kind = DG_RED_MAX; break;
    case DAGGER_OP_NORM2: *kind = DG_RED_NRM2; break;
    default:
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: unknown reduction %d (use DAGGER_OP_ADD, "
                        "_MIN, _MAX or _NORM2)", fn_rd, (int)op);
    }
    DG_CHECK_ARG(dim >= 0 && dim < a->ndims, "%s: dimension %d of a %d-D array; use 0 .. %d",
                 fn_rd, dim, a->ndims, a->ndims - 1);
    if (op == DAGGER_OP_NORM2 && a->dtype != DAGGER_F32 && a->dtype != DAGGER_F64)
        return dg_error(DAGGER_ERR_DTYPE, "%s: DAGGER_OP_NORM2 along a dimension needs an f32 "
                        "or f64 array (the norms go into an array of its type); this one is %s",
                        fn_rd, dg_arr_dtype_name(a->dtype));
    return check_out(a, dim, out);
}

dagger_status_t dagger_array_reduce_dim(dagger_region_t *r, dagger_op_t op,
                                        dagger_array_t *a, int dim, dagger_array_t *out)
{
    if (!dg_arr_get(a, fn_rd) || !dg_arr_get(out, fn_rd))
        return DAGGER_ERR_BAD_HANDLE;
    uint32_t kind = 0;
    dagger_status_t st = check_args(op, a, dim, out, &kind);
    if (st != DAGGER_OK)
        return st;
    reddim_cls_t cl;
    st = dg_arr_codelet(a->rt, DG_ARR_CL_REDDIM, &cl.one);
    if (st == DAGGER_OK)
        st = dg_arr_codelet(a->rt, DG_ARR_CL_REDDIM_PART, &cl.part);
    if (st == DAGGER_OK)
        st = dg_arr_codelet(a->rt, DG_ARR_CL_REDDIM_COMB, &cl.comb);
    if (st != DAGGER_OK)
        return st;
    const dagger_array_t *ops[2] = {out, a};
    dg_arr_tiles_t t;
    st = dg_arr_tiles_init(&t, 2, ops, NULL, NULL, NULL);
    if (st != DAGGER_OK)
        return st;
    dg_arr_sub_t sub;
    st = dg_arr_open(a->rt, r, &sub, fn_rd);
    if (st == DAGGER_OK)
        st = dg_arr_close(&sub, submit_tiles(&sub, &cl, &t, a, dim, kind));
    dg_arr_tiles_cleanup(&t);
    return st;
}
