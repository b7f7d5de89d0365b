/* Tiled Householder QR (flat tree, as PLASMA's): step k factors the
 * diagonal tile (geqrt), applies its reflectors to the tiles on its right
 * (gemqrt), then eliminates each tile below against the diagonal tile's R
 * (tpqrt) and applies those reflectors to the pairs of rows on the right
 * (tpmqrt). The reflectors stay in A below the diagonal (V) and their
 * triangular factors in T. View modifiers let gemqrt (reading V, strictly
 * lower) and tpqrt (rewriting R, upper) of one diagonal tile run at once. */
#include "core/linalg/linalg_internal.h"
#include "core/base/status_internal.h"

/* T of A: one ib x nb tile per tile of A's square-tile grid (nb = A's
 * column block). */
dagger_status_t dagger_linalg_qr_t_create(const dagger_array_t *A, dagger_array_t **T)
{
    const char *fn = "dagger_linalg_qr_t_create";
    DG_CHECK_ARG(T, "%s: T is NULL", fn);
    *T = NULL;
    dg_la_mat_t a;
    dagger_status_t st = dg_la_mat((dagger_array_t *)A, 2, fn, "A", &a);
    if (st)
        return st;
    size_t s = a.nb, ib = s < DG_LA_IB ? s : DG_LA_IB, mt = (a.m + s - 1) / s;
    dagger_dist_t cyc = {.kind = DAGGER_DIST_CYCLIC_2D};
    dagger_array_desc_t d = {.dtype = a.a->dtype, .ndims = 2, .dims = {mt * ib, a.n},
                             .block = {ib, s}, .dist = &cyc};
    return dagger_array_zeros(a.a->rt, &d, T);
}

/* Checks T was made by dagger_linalg_qr_t_create for A (square tiles s). */
dagger_status_t dg_la_check_t(const dg_la_mat_t *a, const dg_la_mat_t *t, const char *fn)
{
    dagger_status_t st;
    size_t s = a->nb, ib = s < DG_LA_IB ? s : DG_LA_IB, mt = (a->m + s - 1) / s;
    if ((st = dg_la_same_kind(a, t, fn, "A", "T")))
        return st;
    if (t->m != mt * ib || t->n != a->n || t->mb != ib || t->nb != s)
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: T (%zu x %zu in %zu x %zu blocks) does not "
                        "belong to A (%zu x %zu, column block %zu): create it with "
                        "dagger_linalg_qr_t_create(A, &T)", fn, t->m, t->n, t->mb, t->nb, a->m,
                        a->n, s);
    return DAGGER_OK;
}

static dagger_status_t qr_dag(dg_la_ctx_t *x, const dg_la_mat_t *a, const dg_la_mat_t *t)
{
    dagger_status_t st = DAGGER_OK;
    size_t kt = a->mt < a->nt ? a->mt : a->nt;
    dg_la_par_t p = {.ib = (int32_t)t->mb, .ta = DAGGER_LA_TRANS};
    for (size_t k = 0; k < kt && !st; k++) {
        dagger_view_t akk = dg_la_tile(a, k, k);
        dagger_arg_t g[2] = {DAGGER_INOUT(akk), DAGGER_OUT(dg_la_tile(t, k, k))};
        st = dg_la_submit(x, DG_LA_CL_GEQRT, 2, g, &p, 4);
        for (size_t n = k + 1; n < a->nt && !st; n++) {
            dagger_arg_t u[3] = {DAGGER_IN(dg_la_qr_v(a, k)), DAGGER_IN(dg_la_tile(t, k, k)),
                                 DAGGER_INOUT(dg_la_tile(a, k, n))};
            st = dg_la_submit(x, DG_LA_CL_GEMQRT, 3, u, &p, n == k + 1 ? 2 : 0);
        }
        for (size_t m = k + 1; m < a->mt && !st; m++) {
            dagger_arg_t e[3] = {DAGGER_INOUT(dagger_view_mod(akk, DAGGER_UPPER)),
                                 DAGGER_INOUT(dg_la_tile(a, m, k)), DAGGER_OUT(dg_la_tile(t, m, k))};
            st = dg_la_submit(x, DG_LA_CL_TPQRT, 3, e, &p, 3);
            for (size_t n = k + 1; n < a->nt && !st; n++) {
                dagger_arg_t u[4] = {DAGGER_IN(dg_la_tile(a, m, k)), DAGGER_IN(dg_la_tile(t, m, k)),
                                     DAGGER_INOUT(dg_la_tile(a, k, n)),
                                     DAGGER_INOUT(dg_la_tile(a, m, n))};
                st = dg_la_submit(x, DG_LA_CL_TPMQRT, 4, u, &p, n == k + 1 ? 2 : 0);
            }
        }
    }
    return st;
}

dagger_status_t dagger_linalg_geqrf(dagger_region_t *r, dagger_array_t *A, dagger_array_t *T)
{
    const char *fn = "dagger_linalg_geqrf";
    dg_la_mat_t a, t;
    dagger_status_t st;
    if ((st = dg_la_mat(A, 2, fn, "A", &a)) || (st = dg_la_mat(T, 2, fn, "T", &t)))
        return st;
    if ((st = dg_la_check_distinct(t.a, a.a, fn, "T", "A")) || (st = dg_la_check_t(&a, &t, fn)))
        return st;
    dg_la_work_t w;
    if ((st = dg_la_work_init(&w, a.a, a.nb, a.nb, 1, 1, r, fn, "A needs square tiles")))
        return st;
    dg_la_describe(w.work, &a);
    dg_la_ctx_t x;
    if (!(st = dg_la_begin(&x, a.a->rt, r, fn))) {
        if (!(st = dg_la_work_in(&w, x.sub.r)) && !(st = qr_dag(&x, &a, &t)))
            st = dg_la_work_out(&w, x.sub.r);
        st = dg_la_end(&x, st);
    }
    dg_la_work_cleanup(&w);
    return st;
}
