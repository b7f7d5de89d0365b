/* Distributed arrays: the allocating stencil and a stencil's value inside
 * an element-wise expression (C = A op stencil(B)), fused and through the
 * internal temporary, against serial references. */
#include <stdio.h>

#include "array_util.h"

static int second_rank(const size_t block[], int nd, int nranks, void *ctx)
{
    (void)nd, (void)ctx;
    return (int)(block[0] + 2 * block[1] + 1) % nranks;
}

/* y[i] = sum of x's window of distance 1, Wrap along 0, AntiReflect along 1. */
static dagger_stencil_expr_t window_sum(dagger_array_t *x)
{
    dagger_stencil_expr_t e = {.kernel = DAGGER_STENCIL_SUM, .nin = 1};
    e.in[0] = (dagger_stencil_input_t){
        .array = x, .dist = {1, 1},
        .bc = {{DAGGER_BC_WRAP, 0}, {DAGGER_BC_ANTIREFLECT_MIRROR, 0}}};
    return e;
}

static void ref_window_sum(const double *x, double *y, const size_t dims[2])
{
    dagger_boundary_t bc[3] = {{DAGGER_BC_WRAP, 0}, {DAGGER_BC_ANTIREFLECT_MIRROR, 0}};
    ar_ref_sum(x, y, 2, dims, (size_t[]){1, 1}, bc);
}

/* The new array has the input's dims, blocks, owners and dtype. */
Test(array_stencil_ops, allocating_stencil)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dist_t dist = {.kind = DAGGER_DIST_MAP, .map = second_rank};
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 9, 7, 3, 4);
    d.dist = &dist;
    dagger_array_t *b, *y;
    AR_OK(dagger_array_rand(rt, &d, 6, &b));
    dagger_stencil_expr_t e = window_sum(b);
    AR_OK(dagger_stencil_apply_new(rt, &e, &y));
    dagger_array_desc_t got;
    AR_OK(dagger_array_info(y, &got));
    cr_assert(got.dtype == DAGGER_F64 && got.dims[0] == 9 && got.dims[1] == 7 &&
              got.block[0] == 3 && got.block[1] == 4, "shape and blocks");
    for (size_t k = 0; k < dagger_array_nblocks(b); k++) {
        dagger_array_block_t ib, iy;
        AR_OK(dagger_array_block_info(b, k, &ib));
        AR_OK(dagger_array_block_info(y, k, &iy));
        cr_assert_eq(ib.owner, iy.owner, "block %zu: owner %d, the input's %d", k, iy.owner, ib.owner);
    }
    double *x = ar_collect(b), want[63];
    ref_window_sum(x, want, (size_t[]){9, 7});
    ar_expect(y, want, 1e-14, "allocating stencil");
    e.nin = 0;
    dagger_array_t *z = b;
    AR_FAILS(dagger_stencil_apply_new(rt, &e, &z), DAGGER_ERR_INVALID_ARG, "takes its shape from "
             "input 0");
    cr_assert(z == NULL, "no array on failure");
    free(x);
    AR_DESTROY(b, y);
    AR_OK(dagger_finalize(rt));
}

static double op_of(dagger_op_t op, double a, double v)
{
    switch (op) {
    case DAGGER_OP_ADD: return a + v;
    case DAGGER_OP_SUB: return a - v;
    case DAGGER_OP_MUL: return a * v;
    default: return a / v;
    }
}

/* c = a op stencil(b) for the four ops, each fused into one sweep: the
 * region runs exactly the tasks of the stencil alone (no extra pass). */
Test(array_stencil_ops, fused_binop)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dist_t dist = {.kind = DAGGER_DIST_MAP, .map = second_rank};
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 10, 8, 4, 3), db = d;
    db.dist = &dist;
    dagger_array_t *a, *b, *c;
    AR_OK(dagger_array_rand(rt, &d, 1, &a));
    AR_OK(dagger_array_rand(rt, &db, 2, &b));
    AR_OK(dagger_array_zeros(rt, &d, &c));
    double *xa = ar_collect(a), *xb = ar_collect(b), v[80], want[80];
    ref_window_sum(xb, v, (size_t[]){10, 8});
    dagger_stencil_expr_t e = window_sum(b);
    e.out = c;
    AR_OK(dagger_stencil_apply(rt, 1, &e));
    dagger_region_stats_t alone, fused;
    AR_OK(dagger_region_stats(rt, &alone));
    const dagger_op_t ops[4] = {DAGGER_OP_ADD, DAGGER_OP_SUB, DAGGER_OP_MUL,
                                      DAGGER_OP_DIV};
    for (int o = 0; o < 4; o++) {
        AR_OK(dagger_stencil_apply_binop(rt, ops[o], c, a, &e));
        AR_OK(dagger_region_stats(rt, &fused));
        cr_assert_eq(fused.tasks, alone.tasks, "op %d: %llu tasks, the stencil alone has %llu", o,
                     (unsigned long long)fused.tasks, (unsigned long long)alone.tasks);
        for (int i = 0; i < 80; i++)
            want[i] = op_of(ops[o], xa[i], v[i]);
        ar_expect(c, want, 1e-14, "c = a op stencil(b)");
    }
    /* In place, reading itself: a = a + stencil(a) sees the old a. */
    e.in[0].array = a;
    AR_OK(dagger_stencil_apply_binop(rt, DAGGER_OP_ADD, a, a, &e));
    ref_window_sum(xa, v, (size_t[]){10, 8});
    for (int i = 0; i < 80; i++)
        want[i] = xa[i] + v[i];
    ar_expect(a, want, 1e-14, "a += stencil(a)");
    free(xa);
    free(xb);
    AR_DESTROY(a, b, c);
    AR_OK(dagger_finalize(rt));
}

/* Blocks that one sweep cannot take: a or out blocked differently, or a
 * view: the internal temporary gives the same values, and frees itself. */
Test(array_stencil_ops, binop_through_a_temporary)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 10, 8, 4, 3), o = AR_D2(DAGGER_F64, 10, 8, 5, 8);
    dagger_array_desc_t big = AR_D2(DAGGER_F64, 20, 8, 4, 3);
    dagger_array_t *a, *b, *c, *a2, *c2, *p, *pv;
    AR_OK(dagger_array_rand(rt, &d, 1, &a));
    AR_OK(dagger_array_rand(rt, &d, 2, &b));
    AR_OK(dagger_array_zeros(rt, &d, &c));
    AR_OK(dagger_array_rand(rt, &o, 1, &a2)); /* a's values, other blocks */
    AR_OK(dagger_array_zeros(rt, &o, &c2));
    AR_OK(dagger_array_zeros(rt, &big, &p));
    AR_OK(dagger_array_view(p, (size_t[]){5, 0}, (size_t[]){10, 8}, &pv));
    double *xa = ar_collect(a), *xb = ar_collect(b), v[80], want[80];
    ref_window_sum(xb, v, (size_t[]){10, 8});
    for (int i = 0; i < 80; i++)
        want[i] = xa[i] - v[i];
    dagger_stencil_expr_t e = window_sum(b);
    AR_OK(dagger_stencil_apply_binop(rt, DAGGER_OP_SUB, c, a2, &e));    /* a blocked otherwise */
    ar_expect(c, want, 1e-14, "a with other blocks");
    AR_OK(dagger_stencil_apply_binop(rt, DAGGER_OP_SUB, c2, a, &e));    /* out blocked otherwise */
    ar_expect(c2, want, 1e-14, "out with other blocks");
    AR_OK(dagger_stencil_apply_binop(rt, DAGGER_OP_SUB, pv, a, &e));    /* out a view */
    ar_expect(pv, want, 1e-14, "out a view");
    AR_FAILS(dagger_stencil_apply_binop(rt, DAGGER_OP_SUB, p, a, &e), DAGGER_ERR_INVALID_ARG,
             "shapes do not match: 20x8 and 10x8");
    AR_FAILS(dagger_stencil_apply_binop(rt, (dagger_op_t)0, c, a, &e), DAGGER_ERR_INVALID_ARG,
             "unknown operation");
    free(xa);
    free(xb);
    AR_DESTROY(pv, p, a, b, c, a2, c2);
    AR_OK(dagger_finalize(rt));
}
