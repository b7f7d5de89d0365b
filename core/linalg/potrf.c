/* Cholesky: right-looking tiled potrf (potrf of the diagonal tile, trsm of
 * the tiles below it, syrk/gemm of the trailing triangle), and potrs as two
 * triangular solves. The upper case is the lower one on transposed tile
 * coordinates. Tasks of the next panel get higher priorities, so the
 * factorisation looks ahead instead of finishing each trailing update first. */
#include "core/linalg/linalg_internal.h"
#include "core/base/status_internal.h"

/* Tile (i, j) of the lower triangle, or its mirror (j, i) for UPPER. */
static dagger_view_t tri(const dg_la_mat_t *a, int upper, size_t i, size_t j)
{
    return upper ? dg_la_tile(a, j, i) : dg_la_tile(a, i, j);
}

static dagger_status_t potrf_dag(dg_la_ctx_t *x, int up, const dg_la_mat_t *a)
{
    dagger_status_t st = DAGGER_OK;
    size_t nt = a->nt;
    /* Lower: A(i,k) = A(i,k) L(k,k)^-T; upper: A(k,i) = U(k,k)^-T A(k,i). */
    dg_la_par_t tp = {.side = up ? DAGGER_LA_LEFT : DAGGER_LA_RIGHT, .uplo = up,
                      .ta = DAGGER_LA_TRANS, .alpha = 1.0};
    for (size_t k = 0; k < nt && !st; k++) {
        dg_la_par_t pp = {.uplo = up, .step = (int32_t)k, .row0 = (int64_t)(k * a->nb)};
        dagger_modifier_t mod = up ? DAGGER_UPPER : DAGGER_LOWER;
        dagger_arg_t arg = DAGGER_INOUT(dagger_view_mod(dg_la_tile(a, k, k), mod));
        st = dg_la_submit(x, DG_LA_CL_POTRF, 1, &arg, &pp, 4);
        for (size_t i = k + 1; i < nt && !st; i++)
            st = dg_la_trsm_tile(x, &tp, dg_la_tile(a, k, k), tri(a, up, i, k), 3);
        for (size_t i = k + 1; i < nt && !st; i++) {
            st = dg_la_syrk_tile(x, up, up, -1.0, tri(a, up, i, k), 1.0, dg_la_tile(a, i, i),
                                 i == k + 1 ? 3 : 0);
            /* Lower: A(i,j) -= A(i,k) A(j,k)^T; upper: A(j,i) -= A(k,j)^T A(k,i). */
            for (size_t j = k + 1; j < i && !st; j++)
                st = up ? dg_la_gemm_tile(x, 1, 0, -1.0, tri(a, 1, j, k), tri(a, 1, i, k), 1.0,
                                          tri(a, 1, i, j), j == k + 1)
                        : dg_la_gemm_tile(x, 0, 1, -1.0, tri(a, 0, i, k), tri(a, 0, j, k), 1.0,
                                          tri(a, 0, i, j), j == k + 1);
        }
    }
    return st;
}

/* The matrix of a factorisation: square, with square tiles (a copy with
 * nb x nb tiles otherwise). */
static dagger_status_t factor_work(dagger_array_t *A, int uplo, size_t s, int write,
                                   dagger_region_t *r, const char *fn, dg_la_mat_t *a,
                                   dg_la_work_t *w)
{
    dagger_status_t st;
    if ((st = dg_la_mat(A, 2, fn, "A", a)) || (st = dg_la_check_flag(uplo, 1, fn, "uplo")) ||
        (st = dg_la_check_square(a, fn, "A")))
        return st;
    if ((st = dg_la_work_init(w, a->a, s ? s : a->nb, s ? s : a->nb, 1, write, r, fn,
                              "A needs square tiles")))
        return st;
    return dg_la_mat(w->work, 2, fn, "A", a);
}

dagger_status_t dagger_linalg_potrf(dagger_region_t *r, dagger_la_uplo_t uplo, dagger_array_t *A)
{
    const char *fn = "dagger_linalg_potrf";
    dg_la_mat_t a;
    dg_la_work_t w;
    dagger_status_t st = factor_work(A, uplo, 0, 1, r, fn, &a, &w);
    if (st)
        return st;
    dg_la_ctx_t x;
    if (!(st = dg_la_begin(&x, a.a->rt, r, fn))) {
        if (!(st = dg_la_work_in(&w, x.sub.r)) && !(st = potrf_dag(&x, uplo, &a)))
            st = dg_la_work_out(&w, x.sub.r);
        st = dg_la_end(&x, st);
    }
    dg_la_work_cleanup(&w);
    return st;
}

dagger_status_t dagger_linalg_potrs(dagger_region_t *r, dagger_la_uplo_t uplo, dagger_array_t *A,
                                    dagger_array_t *B)
{
    const char *fn = "dagger_linalg_potrs";
    dg_la_mat_t a, b;
    dg_la_work_t w;
    dagger_status_t st;
    if ((st = dg_la_mat(B, 2, fn, "B", &b)) || (st = dg_la_mat(A, 2, fn, "A", &a)) ||
        (st = dg_la_check_distinct(b.a, a.a, fn, "B", "A")) ||
        (st = factor_work(A, uplo, b.mb, 0, r, fn, &a, &w)))
        return st;
    if ((st = dg_la_same_kind(&a, &b, fn, "A", "B")) ||
        (st = dg_la_check_dim(b.m, a.m, fn, "the rows of B", "the order of A"))) {
        dg_la_work_cleanup(&w);
        return st;
    }
    dg_la_ctx_t x;
    if (!(st = dg_la_begin(&x, a.a->rt, r, fn))) {
        /* L L^T X = B: L Y = B, L^T X = Y (U^T U X = B: U^T Y = B, U X = Y). */
        dg_la_par_t p1 = {.side = DAGGER_LA_LEFT, .uplo = uplo, .ta = uplo, .alpha = 1.0};
        dg_la_par_t p2 = p1;
        p2.ta = !uplo;
        if (!(st = dg_la_work_in(&w, x.sub.r)) && !(st = dg_la_trsm_dag(&x, &p1, &a, &b)))
            st = dg_la_trsm_dag(&x, &p2, &a, &b);
        st = dg_la_end(&x, st);
    }
    dg_la_work_cleanup(&w);
    return st;
}
