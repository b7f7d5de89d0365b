/* Reductions: one task per tile returns a partial result (a future); pairs
 * of futures are combined level by level in tile order, so the combination
 * order depends only on the block layout, never on the number of ranks. */
#include <stdlib.h>

#include "core/base/alloc.h"
#include "core/array/params.h"
#include "core/array/tiles.h"
#include "core/base/status_internal.h"

/* The codelets of one kind of reduction: NORM2 has its own, with 24-byte
 * partial results (nrm2.h) and a last task that makes them the norm. */
typedef struct red_cl {
    dagger_codelet_t part, comb, finish;
    int nrm2;
} red_cl_t;

/* The by-value parameters, which NORM2's codelets do not take. */
static int red_args(const red_cl_t *cl, const dg_arr_red_t *p, dagger_arg_t *args, int na)
{
    if (!cl->nrm2)
        args[na++] = DAGGER_VALUE(p, sizeof(*p));
    return na;
}

/* Combines futures f[0..n) pairwise, level by level, until one is left (an
 * odd one out waits for the next level). For NORM2 the last combination
 * (or, for one tile, a task of its own) is the finishing codelet, which
 * returns the norm. Partial results are released once their combining task
 * is submitted. */
static dagger_status_t combine_tree(dagger_runtime_t *rt, dagger_region_t *r, const red_cl_t *cl,
                                    const dg_arr_red_t *p, dagger_future_t *f, size_t n,
                                    dagger_future_t *out)
{
    for (int last = 0; !last && (n > 1 || cl->nrm2);) {
        size_t m = 0;
        last = cl->nrm2 && n <= 2;
        dagger_codelet_t c = last ? cl->finish : cl->comb;
        for (size_t i = 0; i < n; i += 2) {
            int pair = i + 1 < n;
            if (!pair && n > 1) {
                f[m++] = f[i];
                continue;
            }
            dagger_arg_t args[3] = {DAGGER_FUTURE(f[i]), DAGGER_FUTURE(f[i + pair])};
            int na = red_args(cl, p, args, 1 + pair);
            dagger_future_t in0 = f[i], in1 = f[i + pair];
            dagger_status_t st = dagger_submit(r, c, na, args, NULL, NULL, &f[m++]);
            if (st == DAGGER_OK)
                st = dagger_future_free(rt, in0);
            if (st == DAGGER_OK && pair)
                st = dagger_future_free(rt, in1);
            if (st != DAGGER_OK)
                return st;
        }
        n = m;
    }
    *out = f[0];
    return DAGGER_OK;
}

static dagger_status_t get_codelets(dagger_runtime_t *rt, int nrm2, red_cl_t *cl)
{
    cl->nrm2 = nrm2;
    dagger_status_t st = dg_arr_codelet(rt, nrm2 ? DG_ARR_CL_NRM2_PARTIAL : DG_ARR_CL_PARTIAL,
                                        &cl->part);
    if (st == DAGGER_OK)
        st = dg_arr_codelet(rt, nrm2 ? DG_ARR_CL_NRM2_COMBINE : DG_ARR_CL_COMBINE, &cl->comb);
    if (st == DAGGER_OK && nrm2)
        st = dg_arr_codelet(rt, DG_ARR_CL_NRM2_FINISH, &cl->finish);
    return st;
}

static dagger_status_t submit_reduction(dagger_region_t *r, const dg_arr_tiles_t *t, dg_arr_red_t p,
                                        dagger_future_t *out)
{
    red_cl_t cl;
    dagger_runtime_t *rt = t->ops[0]->rt;
    dagger_status_t st = get_codelets(rt, p.kind == DG_RED_NRM2, &cl);
    if (st != DAGGER_OK)
        return st;
    dagger_future_t *f = dg_malloc(t->count * sizeof(*f));
    if (!f)
        return dg_error(DAGGER_ERR_NO_MEMORY, "reduction: out of memory");
    for (size_t n = 0; n < t->count && st == DAGGER_OK; n++) {
        dg_arr_tile_t tile;
        dg_arr_tile_get(t, n, &tile);
        dagger_arg_t args[3];
        int na = 0;
        for (int i = 0; i < t->nops; i++)
            args[na++] = DAGGER_IN(dg_arr_tile_view(t, i, &tile));
        na = red_args(&cl, &p, args, na);
        st = dagger_submit(r, cl.part, na, args, NULL, NULL, &f[n]);
    }
    if (st == DAGGER_OK)
        st = combine_tree(rt, r, &cl, &p, f, t->count, out);
    free(f);
    return st;
}

static dagger_status_t reduce(dagger_region_t *user, dagger_array_t *a, dagger_array_t *b,
                              dg_arr_red_t p, dagger_future_t *out, const char *fn)
{
    DG_CHECK_ARG(out, "%s: NULL future output", fn);
    out->id = 0;
    if (!dg_arr_get(a, fn) || (b && !dg_arr_get(b, fn)))
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t st = b ? dg_arr_check_match(a, b, NULL, fn) : DAGGER_OK;
    if (st != DAGGER_OK)
        return st;
    p.is_int = a->dtype == DAGGER_I32 || a->dtype == DAGGER_I64;
    const dagger_array_t *ops[2] = {a, b};
    dg_arr_tiles_t t;
    st = dg_arr_tiles_init(&t, b ? 2 : 1, ops, NULL, NULL, NULL);
    if (st != DAGGER_OK)
        return st;
    dg_arr_sub_t sub;
    st = dg_arr_open(a->rt, user, &sub, fn);
    if (st == DAGGER_OK)
        st = dg_arr_close(&sub, submit_reduction(sub.r, &t, p, out));
    dg_arr_tiles_cleanup(&t);
    return st;
}

dagger_status_t dagger_array_reduce(dagger_region_t *r, dagger_op_t op,
                                    dagger_array_t *a, dagger_future_t *out)
{
    static const char fn[] = "dagger_array_reduce";
    dg_arr_red_t p = {0};
    switch (op) {
    case DAGGER_OP_ADD: p.kind = DG_RED_SUM; break;
    case DAGGER_OP_MIN: p.kind = DG_RED_MIN; break;
    case DAGGER_OP_MAX: p.kind = DG_RED_MAX; break;
    case DAGGER_OP_NORM2: p.kind = DG_RED_NRM2; break;
    default:
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: unknown reduction %d (use DAGGER_OP_ADD, "
                        "_MIN, _MAX or _NORM2)", fn, (int)op);
    }
    return reduce(r, a, NULL, p, out, fn);
}

dagger_status_t dagger_array_dot(dagger_region_t *r, dagger_array_t *a, dagger_array_t *b,
                                 dagger_future_t *out)
{
    dg_arr_red_t p = {.kind = DG_RED_DOT};
    if (!dg_arr_get(b, "dagger_array_dot"))
        return DAGGER_ERR_BAD_HANDLE;
    return reduce(r, a, b, p, out, "dagger_array_dot");
}
