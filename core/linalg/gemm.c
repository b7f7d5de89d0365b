/* gemm and gemv: one task per (output tile, inner tile), the inner index
 * outermost so that every output tile's first product is ready at once;
 * beta is applied by the first product of each output tile. A gemv task
 * runs on its tile of A's rank, so that the pieces of x and y travel (a
 * tile's height or width) instead of A's tiles; a gemm task likewise when
 * a tile it reads is larger than its tile of C (gemm_rank). */
#include "core/linalg/linalg_internal.h"
#include "core/base/status_internal.h"

/* op(X)'s dims and blocks. */
typedef struct op_shape {
    size_t m, n, mb, nb, mt, nt;
} op_shape_t;

static op_shape_t op_shape(const dg_la_mat_t *x, int trans)
{
    if (!trans)
        return (op_shape_t){x->m, x->n, x->mb, x->nb, x->mt, x->nt};
    return (op_shape_t){x->n, x->m, x->nb, x->mb, x->nt, x->mt};
}

/* Tile (i, j) of op(X). */
static dagger_view_t op_tile(const dg_la_mat_t *x, int trans, size_t i, size_t j)
{
    return trans ? dg_la_tile(x, j, i) : dg_la_tile(x, i, j);
}

static dagger_status_t gemm_check(int ta, int tb, const dg_la_mat_t *a, const dg_la_mat_t *b,
                                  const dg_la_mat_t *c, const char *fn)
{
    dagger_status_t st;
    if ((st = dg_la_check_flag(ta, 1, fn, "ta")) || (st = dg_la_check_flag(tb, 1, fn, "tb")) ||
        (st = dg_la_same_kind(a, c, fn, "A", "C")) || (st = dg_la_same_kind(b, c, fn, "B", "C")))
        return st;
    if ((st = dg_la_check_distinct(c->a, a->a, fn, "C", "A")) ||
        (st = dg_la_check_distinct(c->a, b->a, fn, "C", "B")))
        return st;
    op_shape_t oa = op_shape(a, ta), ob = op_shape(b, tb);
    if ((st = dg_la_check_dim(oa.m, c->m, fn, "the rows of op(A)", "the rows of C")) ||
        (st = dg_la_check_dim(ob.n, c->n, fn, "the columns of op(B)", "the columns of C")) ||
        (st = dg_la_check_dim(ob.m, oa.n, fn, "the rows of op(B)", "the columns of op(A)")) ||
        (st = dg_la_check_block(oa.mb, c->mb, fn, "the row block of op(A)", "C's row block")) ||
        (st = dg_la_check_block(ob.nb, c->nb, fn, "the column block of op(B)",
                                "C's column block")) ||
        (st = dg_la_check_block(ob.mb, oa.nb, fn, "the row block of op(B)",
                                "the column block of op(A)")))
        return st;
    return DAGGER_OK;
}

/* Where the task C(i, j) += op(A)(i, l) op(B)(l, j) runs: with its tile of
 * C (owner-computes, -1) unless a tile it only reads is larger (C thinner
 * than A or B: a matrix times a few vectors), then on that tile's rank, so
 * that the small tiles travel instead. */
static int gemm_rank(const dg_la_mat_t *a, int ta, const dg_la_mat_t *b, int tb,
                     const dg_la_mat_t *c, size_t i, size_t j, size_t l)
{
    size_t cm = dg_la_tile_m(c, i), cn = dg_la_tile_n(c, j);
    size_t k = ta ? dg_la_tile_m(a, l) : dg_la_tile_n(a, l);
    size_t sc = cm * cn, sa = cm * k, sb = k * cn;
    if (sc >= sa && sc >= sb)
        return -1;
    if (sa >= sb)
        return ta ? dg_la_tile_owner(a, l, i) : dg_la_tile_owner(a, i, l);
    return tb ? dg_la_tile_owner(b, j, l) : dg_la_tile_owner(b, l, j);
}

dagger_status_t dagger_linalg_gemm(dagger_region_t *r, dagger_la_trans_t ta, dagger_la_trans_t tb,
                                   double alpha, dagger_array_t *A, dagger_array_t *B,
                                   double beta, dagger_array_t *C)
{
    const char *fn = "dagger_linalg_gemm";
    dg_la_mat_t a, b, c;
    dagger_status_t st;
    if ((st = dg_la_mat(A, 2, fn, "A", &a)) || (st = dg_la_mat(B, 2, fn, "B", &b)) ||
        (st = dg_la_mat(C, 2, fn, "C", &c)) || (st = gemm_check(ta, tb, &a, &b, &c, fn)))
        return st;
    dg_la_ctx_t x;
    if ((st = dg_la_begin(&x, c.a->rt, r, fn)))
        return st;
    op_shape_t oa = op_shape(&a, ta);
    for (size_t l = 0; l < oa.nt && !st; l++)
        for (size_t j = 0; j < c.nt && !st; j++)
            for (size_t i = 0; i < c.mt && !st; i++)
                st = dg_la_gemm_tile_on(&x, ta, tb, alpha, op_tile(&a, ta, i, l),
                                        op_tile(&b, tb, l, j), l ? 1.0 : beta, dg_la_tile(&c, i, j),
                                        0, gemm_rank(&a, ta, &b, tb, &c, i, j, l));
    return dg_la_end(&x, st);
}

static dagger_status_t gemv_check(int ta, const dg_la_mat_t *a, const dg_la_mat_t *x,
                                  const dg_la_mat_t *y, const char *fn)
{
    dagger_status_t st;
    if ((st = dg_la_check_flag(ta, 1, fn, "ta")) || (st = dg_la_same_kind(a, x, fn, "A", "x")) ||
        (st = dg_la_same_kind(a, y, fn, "A", "y")))
        return st;
    if ((st = dg_la_check_distinct(y->a, x->a, fn, "y", "x")))
        return st;
    op_shape_t oa = op_shape(a, ta);
    if ((st = dg_la_check_dim(x->m, oa.n, fn, "the length of x", "the columns of op(A)")) ||
        (st = dg_la_check_dim(y->m, oa.m, fn, "the length of y", "the rows of op(A)")) ||
        (st = dg_la_check_block(x->mb, oa.nb, fn, "x's block", "the column block of op(A)")) ||
        (st = dg_la_check_block(y->mb, oa.mb, fn, "y's block", "the row block of op(A)")))
        return st;
    return DAGGER_OK;
}

dagger_status_t dagger_linalg_gemv(dagger_region_t *r, dagger_la_trans_t ta, double alpha,
                                   dagger_array_t *A, dagger_array_t *x, double beta,
                                   dagger_array_t *y)
{
    const char *fn = "dagger_linalg_gemv";
    dg_la_mat_t a, vx, vy;
    dagger_status_t st;
    if ((st = dg_la_mat(A, 2, fn, "A", &a)) || (st = dg_la_mat(x, 1, fn, "x", &vx)) ||
        (st = dg_la_mat(y, 1, fn, "y", &vy)) || (st = gemv_check(ta, &a, &vx, &vy, fn)))
        return st;
    dg_la_ctx_t c;
    if ((st = dg_la_begin(&c, a.a->rt, r, fn)))
        return st;
    for (size_t l = 0; l < vx.mt && !st; l++)
        for (size_t i = 0; i < vy.mt && !st; i++) {
            dg_la_par_t p = {.ta = ta, .alpha = alpha, .beta = l ? 1.0 : beta};
            dagger_arg_t args[3] = {DAGGER_IN(op_tile(&a, ta, i, l)),
                                    DAGGER_IN(dg_la_tile(&vx, l, 0)),
                                    DAGGER_INOUT(dg_la_tile(&vy, i, 0))};
            st = dg_la_submit_on(&c, DG_LA_CL_GEMV, 3, args, &p, 0,
                                 ta ? dg_la_tile_owner(&a, l, i) : dg_la_tile_owner(&a, i, l));
        }
    return dg_la_end(&c, st);
}
