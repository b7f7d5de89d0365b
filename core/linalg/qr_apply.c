/* C = Q^T C or Q C with the reflectors of dagger_linalg_geqrf: the same
 * gemqrt/tpmqrt tasks as the factorisation's trailing update, on C's tiles;
 * Q^T runs the steps forward, Q backward (and each step's eliminations in
 * reverse). When C is narrower than a tile of A (a few vectors), each task
 * runs on its reflectors' tile's rank, so that C's tiles travel instead of
 * A's and T's (as trsm.c does). */
#include "core/linalg/linalg_internal.h"

/* The rank for a task on A's tile (i, j): its owner when C is thin. */
static int on_a(const dg_la_mat_t *a, const dg_la_mat_t *c, size_t i, size_t j)
{
    return c->n < a->nb ? dg_la_tile_owner(a, i, j) : -1;
}

/* Step k's diagonal reflectors on row k of C. */
static dagger_status_t diag_step(dg_la_ctx_t *x, const dg_la_par_t *p, const dg_la_mat_t *a,
                                 const dg_la_mat_t *t, const dg_la_mat_t *c, size_t k)
{
    dagger_status_t st = DAGGER_OK;
    for (size_t n = 0; n < c->nt && !st; n++) {
        dagger_arg_t u[3] = {DAGGER_IN(dg_la_qr_v(a, k)), DAGGER_IN(dg_la_tile(t, k, k)),
                             DAGGER_INOUT(dg_la_tile(c, k, n))};
        st = dg_la_submit_on(x, DG_LA_CL_GEMQRT, 3, u, p, 0, on_a(a, c, k, k));
    }
    return st;
}

/* The reflectors that eliminated tile (m, k), on rows k and m of C. */
static dagger_status_t pair_step(dg_la_ctx_t *x, const dg_la_par_t *p, const dg_la_mat_t *a,
                                 const dg_la_mat_t *t, const dg_la_mat_t *c, size_t k, size_t m)
{
    dagger_status_t st = DAGGER_OK;
    for (size_t n = 0; n < c->nt && !st; n++) {
        dagger_arg_t u[4] = {DAGGER_IN(dg_la_tile(a, m, k)), DAGGER_IN(dg_la_tile(t, m, k)),
                             DAGGER_INOUT(dg_la_tile(c, k, n)), DAGGER_INOUT(dg_la_tile(c, m, n))};
        st = dg_la_submit_on(x, DG_LA_CL_TPMQRT, 4, u, p, 0, on_a(a, c, m, k));
    }
    return st;
}

static dagger_status_t apply_dag(dg_la_ctx_t *x, int trans, const dg_la_mat_t *a,
                                 const dg_la_mat_t *t, const dg_la_mat_t *c)
{
    dagger_status_t st = DAGGER_OK;
    size_t kt = a->mt < a->nt ? a->mt : a->nt;
    dg_la_par_t p = {.ib = (int32_t)t->mb, .ta = trans};
    for (size_t s = 0; s < kt && !st; s++) {
        size_t k = trans ? s : kt - 1 - s;
        if (trans && !(st = diag_step(x, &p, a, t, c, k)))
            for (size_t m = k + 1; m < a->mt && !st; m++)
                st = pair_step(x, &p, a, t, c, k, m);
        if (!trans) {
            for (size_t m = a->mt - 1; m > k && !st; m--)
                st = pair_step(x, &p, a, t, c, k, m);
            if (!st)
                st = diag_step(x, &p, a, t, c, k);
        }
    }
    return st;
}

dagger_status_t dagger_linalg_qr_apply(dagger_region_t *r, dagger_la_trans_t trans,
                                       dagger_array_t *A, dagger_array_t *T, dagger_array_t *C)
{
    const char *fn = "dagger_linalg_qr_apply";
    dg_la_mat_t a, t, c;
    dagger_status_t st;
    if ((st = dg_la_mat(A, 2, fn, "A", &a)) || (st = dg_la_mat(T, 2, fn, "T", &t)) ||
        (st = dg_la_mat(C, 2, fn, "C", &c)) || (st = dg_la_check_flag(trans, 1, fn, "trans")))
        return st;
    if ((st = dg_la_check_distinct(t.a, a.a, fn, "T", "A")) ||
        (st = dg_la_check_distinct(c.a, a.a, fn, "C", "A")) ||
        (st = dg_la_check_distinct(c.a, t.a, fn, "C", "T")) || (st = dg_la_check_t(&a, &t, fn)) ||
        (st = dg_la_same_kind(&a, &c, fn, "A", "C")) ||
        (st = dg_la_check_dim(c.m, a.m, fn, "the rows of C", "the rows of A")))
        return st;
    dg_la_work_t wa, wc;
    if ((st = dg_la_work_init(&wa, a.a, a.nb, a.nb, 1, 0, r, fn, "A needs square tiles")))
        return st;
    if ((st = dg_la_work_init(&wc, c.a, a.nb, c.nb, 1, 1, r, fn,
                              "C needs row blocks equal to A's column block"))) {
        dg_la_work_cleanup(&wa);
        return st;
    }
    dg_la_describe(wa.work, &a);
    dg_la_describe(wc.work, &c);
    dg_la_ctx_t x;
    if (!(st = dg_la_begin(&x, a.a->rt, r, fn))) {
        if (!(st = dg_la_work_in(&wa, x.sub.r)) && !(st = dg_la_work_in(&wc, x.sub.r)) &&
            !(st = apply_dag(&x, trans, &a, &t, &c)))
            st = dg_la_work_out(&wc, x.sub.r);
        st = dg_la_end(&x, st);
    }
    dg_la_work_cleanup(&wc);
    dg_la_work_cleanup(&wa);
    return st;
}
