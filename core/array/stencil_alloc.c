/* Stencils whose output the library makes: the allocating form (a new
 * array shaped like the first input), and out = a op stencil(e), fused into
 * the sweep where the blocks allow and through one internal temporary
 * otherwise. */
#include <string.h>

#include "core/array/stencil_internal.h"
#include "core/array/tiles.h"
#include "core/base/status_internal.h"

static const char fn_new[] = "dagger_stencil_apply_new";
static const char fn_bin[] = "dagger_stencil_apply_binop";

/* The array every array of e must match: its first input's. */
static dagger_status_t stencil_shape(dagger_runtime_t *rt, const dagger_stencil_expr_t *e,
                                     dagger_array_t **shape, const char *fn)
{
    if (dagger_nranks(rt) < 1)
        return dg_error(DAGGER_ERR_BAD_HANDLE, "%s: not a live runtime handle", fn);
    DG_CHECK_ARG(e, "%s: NULL expression", fn);
    DG_CHECK_ARG(e->nin >= 1 && e->nin <= DAGGER_STENCIL_MAX_IN, "%s: the expression has %d "
                 "inputs; the output takes its shape from input 0, so give 1 to %d", fn, e->nin,
                 DAGGER_STENCIL_MAX_IN);
    *shape = dg_arr_get(e->in[0].array, fn);
    return *shape ? DAGGER_OK : DAGGER_ERR_BAD_HANDLE;
}

/* Zeros with the dims, blocks and owners of `like`, in dtype t. */
static dagger_status_t make_like(const dagger_array_t *like, dagger_dtype_t t, dagger_array_t **out,
                                 const char *fn)
{
    dagger_array_desc_t d;
    dagger_status_t st = dagger_array_info(like, &d);
    dagger_dist_t dist = {.kind = DAGGER_DIST_TABLE, .table = like->owners, .ntable = like->nblocks};
    d.dtype = t;
    d.dist = like->parent ? NULL : &dist;
    return st == DAGGER_OK ? dg_arr_create(like->rt, &d, out, fn) : st;
}

/* Runs e into out, combined with a by op when op is not 0. */
static dagger_status_t run_into(dagger_runtime_t *rt, const dagger_stencil_expr_t *e,
                                dagger_array_t *out, uint32_t op, dagger_array_t *a)
{
    dagger_stencil_expr_t x = *e;
    x.out = out;
    x.assign = DAGGER_OP_SET;
    if (op) {
        memset(&x.in[x.nin], 0, sizeof(x.in[x.nin]));
        x.in[x.nin].array = a; /* the element-wise operand: no window */
    }
    dagger_stencil_t *s;
    dagger_status_t st = dg_st_create(rt, 1, &x, &op, &s);
    if (st != DAGGER_OK)
        return st;
    st = dagger_stencil_run(NULL, s);
    dagger_status_t st2 = dagger_stencil_destroy(s);
    return st != DAGGER_OK ? st : st2;
}

dagger_status_t dagger_stencil_apply_new(dagger_runtime_t *rt, const dagger_stencil_expr_t *e,
                                         dagger_array_t **out)
{
    DG_CHECK_ARG(out, "%s: NULL output", fn_new);
    *out = NULL;
    dagger_array_t *shape = NULL;
    dagger_status_t st = stencil_shape(rt, e, &shape, fn_new);
    if (st == DAGGER_OK)
        st = dg_arr_no_view(shape, fn_new);
    if (st == DAGGER_OK)
        st = make_like(shape, shape->dtype, out, fn_new);
    if (st != DAGGER_OK)
        return st;
    st = run_into(rt, e, *out, 0, NULL);
    if (st != DAGGER_OK) {
        dagger_array_destroy(*out);
        *out = NULL;
    }
    return st;
}

/* Same dims and block sizes, no view: the arrays one sweep can take. */
static int sweepable(const dagger_array_t *a, const dagger_array_t *shape)
{
    if (a->parent || a->ndims != shape->ndims)
        return 0;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        if (a->dims[k] != shape->dims[k] || a->block[k] != shape->block[k])
            return 0;
    return 1;
}

static dagger_status_t check_binop(dagger_op_t op, dagger_array_t *out, dagger_array_t *a,
                                   const dagger_array_t *shape)
{
    DG_CHECK_ARG(op >= DAGGER_OP_ADD && op <= DAGGER_OP_DIV, "%s: unknown operation %d "
                 "(use DAGGER_OP_ADD, _SUB, _MUL or _DIV)", fn_bin, (int)op);
    if (!dg_arr_get(out, fn_bin) || !dg_arr_get(a, fn_bin))
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t st = dg_arr_check_match(out, a, NULL, fn_bin);
    if (st != DAGGER_OK)
        return st;
    int same = shape->ndims == out->ndims;
    for (int k = 0; k < DAGGER_MAX_DIMS && same; k++)
        same = shape->dims[k] == out->dims[k];
    if (!same) {
        char so[96], ss[96];
        dg_arr_shape_str(out, so, sizeof(so));
        dg_arr_shape_str(shape, ss, sizeof(ss));
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: shapes do not match: the output is %s, the "
                        "stencil's input %s", fn_bin, so, ss);
    }
    return DAGGER_OK;
}

/* Not fusable into out: through a temporary t with the stencil's blocks,
 * t = a op stencil (fused) then out = t when a has those blocks, else
 * t = stencil then out = a op t. */
static dagger_status_t via_temporary(dagger_runtime_t *rt, uint32_t op, dagger_array_t *out,
                                     dagger_array_t *a, const dagger_stencil_expr_t *e,
                                     const dagger_array_t *shape)
{
    dagger_array_t *t;
    dagger_status_t st = make_like(shape, out->dtype, &t, fn_bin);
    if (st != DAGGER_OK)
        return st;
    int fuse = sweepable(a, shape) && e->nin < DAGGER_STENCIL_MAX_IN;
    st = run_into(rt, e, t, fuse ? op : 0, a);
    if (st == DAGGER_OK)
        st = fuse ? dagger_array_copy(NULL, out, t)
                  : dagger_array_binop(NULL, (dagger_op_t)op, out, a, t);
    dagger_status_t st2 = dagger_array_destroy(t);
    return st != DAGGER_OK ? st : st2;
}

dagger_status_t dagger_stencil_apply_binop(dagger_runtime_t *rt, dagger_op_t op,
                                           dagger_array_t *out, dagger_array_t *a,
                                           const dagger_stencil_expr_t *e)
{
    dagger_array_t *shape = NULL;
    dagger_status_t st = stencil_shape(rt, e, &shape, fn_bin);
    if (st == DAGGER_OK)
        st = check_binop(op, out, a, shape);
    if (st != DAGGER_OK)
        return st;
    if (sweepable(out, shape) && sweepable(a, shape) && e->nin < DAGGER_STENCIL_MAX_IN)
        return run_into(rt, e, out, (uint32_t)op, a); /* fused: one pass, no temporary */
    return via_temporary(rt, (uint32_t)op, out, a, e, shape);
}
