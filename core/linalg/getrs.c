/* getrs and gesv: A X = B through the LU factors of dagger_linalg_getrf.
 * With r = NULL the row interchanges run on a column-panel copy of B (one
 * laswp task per block column of B, all pivots by value), then two tiled
 * triangular solves on square tiles: L (unit lower) and U. In a region of
 * the caller's, A and B are in column-panel layout already (what getrf left
 * and what the interchanges need), so the solves run on rows of the panels:
 * per block column of B and step k, a trsm on the step's rows and gemm
 * updates of the other rows, in row blocks of the tile side. */
#include <stdlib.h>

#include "core/base/alloc.h"
#include "core/linalg/linalg_internal.h"
#include "core/base/status_internal.h"

/* Checks the pivots of getrf (1-based, row i swapped with ipiv[i] >= i + 1)
 * and copies them for the laswp_value tasks (int64_t: the CPU and CUDA
 * kernels read the same bytes). */
static dagger_status_t check_pivots(const int64_t *ipiv, size_t n, int64_t **out, const char *fn)
{
    for (size_t i = 0; i < n; i++)
        if (ipiv[i] < (int64_t)i + 1 || ipiv[i] > (int64_t)n)
            return dg_error(DAGGER_ERR_INVALID_ARG, "%s: ipiv[%zu] = %lld is not a pivot of "
                            "row %zu (1-based, %zu .. %zu); pass the ipiv dagger_linalg_getrf "
                            "wrote", fn, i, (long long)ipiv[i], i + 1, i + 1, n);
    int64_t *p = dg_malloc(n * sizeof(*p) + 1);
    if (!p)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory for %zu pivots", fn, n);
    for (size_t i = 0; i < n; i++)
        p[i] = ipiv[i];
    *out = p;
    return DAGGER_OK;
}

/* B = P B, pivots by value, one task per block column of w (column panels). */
static dagger_status_t permute_value(dg_la_ctx_t *x, const dg_la_mat_t *w, const int64_t *piv,
                                     size_t n)
{
    dagger_status_t st = DAGGER_OK;
    dg_la_par_t p = {0};
    for (size_t j = 0; j < w->nt && !st; j++) {
        dagger_arg_t args[2] = {DAGGER_INOUT(dg_la_tile(w, 0, j)),
                                DAGGER_VALUE(piv, n * sizeof(*piv))};
        st = dg_la_submit(x, DG_LA_CL_LASWP_V, 2, args, &p, 0);
    }
    return st;
}

/* B = P B, pivots from getrf's array P: step by step on each block column. */
static dagger_status_t permute_array(dg_la_ctx_t *x, const dg_la_mat_t *b, const dg_la_mat_t *a,
                                     const dg_la_mat_t *piv)
{
    dagger_status_t st = DAGGER_OK;
    for (size_t j = 0; j < b->nt && !st; j++)
        for (size_t k = 0; k < piv->mt && !st; k++) {
            size_t r0 = k * a->nb;
            dg_la_par_t sp = {.step = (int32_t)k, .row0 = (int64_t)r0};
            dagger_arg_t sw[2] = {
                DAGGER_INOUT(dg_la_panel_rows(b, j, r0, b->m - r0, dg_la_tile_n(b, j))),
                DAGGER_IN(dg_la_tile(piv, k, 0))};
            st = dg_la_submit(x, DG_LA_CL_LASWP, 2, sw, &sp, 0);
        }
    return st;
}

/* Step k of one triangular solve on block column j of b (column panels):
 * the step's rows by the diagonal block, then the rows [lo, hi) updated.
 * With fewer right-hand sides than a panel's width, the tasks run on A's
 * panel's rank, so that b's rows travel instead of A's (as in trsm.c). */
static dagger_status_t panel_step(dg_la_ctx_t *x, const dg_la_par_t *tp, const dg_la_mat_t *a,
                                  const dg_la_mat_t *b, size_t j, size_t k, size_t lo, size_t hi)
{
    size_t r0 = k * a->nb, kb = dg_la_tile_n(a, k), wj = dg_la_tile_n(b, j);
    int on = b->n < a->nb ? dg_la_tile_owner(a, 0, k) : -1;
    dagger_view_t top = dg_la_panel_rows(b, j, r0, kb, wj);
    dagger_status_t st = dg_la_trsm_tile_on(x, tp, dg_la_panel_rows(a, k, r0, kb, kb), top, 1, on);
    for (size_t rs = lo; rs < hi && !st; rs += a->nb) {
        size_t h = rs + a->nb < hi ? a->nb : hi - rs;
        st = dg_la_gemm_tile_on(x, 0, 0, -1.0, dg_la_panel_rows(a, k, rs, h, kb), top, 1.0,
                                dg_la_panel_rows(b, j, rs, h, wj), 0, on);
    }
    return st;
}

/* L then U on column panels: forward over the steps, then backward. */
static dagger_status_t panel_solve(dg_la_ctx_t *x, const dg_la_mat_t *a, const dg_la_mat_t *b)
{
    dg_la_par_t pl = {.side = DAGGER_LA_LEFT, .uplo = DAGGER_LA_LOWER, .diag = DAGGER_LA_UNIT,
                      .alpha = 1.0};
    dg_la_par_t pu = {.side = DAGGER_LA_LEFT, .uplo = DAGGER_LA_UPPER, .alpha = 1.0};
    dagger_status_t st = DAGGER_OK;
    for (size_t j = 0; j < b->nt && !st; j++) {
        for (size_t k = 0; k < a->nt && !st; k++)
            st = panel_step(x, &pl, a, b, j, k, (k + 1) * a->nb, a->m);
        for (size_t k = a->nt; k-- > 0 && !st;)
            st = panel_step(x, &pu, a, b, j, k, 0, k * a->nb);
    }
    return st;
}

/* The checks every getrs form makes on A and B. */
static dagger_status_t check_ab(dagger_array_t *A, dagger_array_t *B, const char *fn,
                                dg_la_mat_t *a, dg_la_mat_t *b)
{
    dagger_status_t st;
    if ((st = dg_la_mat(A, 2, fn, "A", a)) || (st = dg_la_mat(B, 2, fn, "B", b)) ||
        (st = dg_la_same_kind(a, b, fn, "A", "B")) || (st = dg_la_check_square(a, fn, "A")) ||
        (st = dg_la_check_dim(b->m, a->m, fn, "the rows of B", "the order of A")))
        return st;
    return dg_la_check_distinct(b->a, a->a, fn, "B", "A");
}

/* r = NULL: B permuted on a column-panel copy, the solves on square tiles. */
static dagger_status_t solve_copies(dg_la_mat_t *a, dg_la_mat_t *b, const int64_t *piv,
                                    const char *fn)
{
    dg_la_work_t aw;
    dagger_array_t *W = NULL;
    dagger_array_desc_t dw = {.dtype = b->a->dtype, .ndims = 2, .dims = {b->m, b->n},
                              .block = {b->m, b->nb}};
    dagger_status_t st;
    if (!(st = dg_la_work_init(&aw, a->a, b->mb, b->mb, 1, 0, NULL, fn, "")) &&
        !(st = dagger_array_zeros(b->a->rt, &dw, &W))) {
        dg_la_mat_t at, w;
        dg_la_describe(aw.work, &at);
        dg_la_describe(W, &w);
        dg_la_ctx_t x;
        if (!(st = dg_la_begin(&x, a->a->rt, NULL, fn))) {
            dg_la_par_t pl = {.side = DAGGER_LA_LEFT, .uplo = DAGGER_LA_LOWER,
                              .diag = DAGGER_LA_UNIT, .alpha = 1.0};
            dg_la_par_t pu = {.side = DAGGER_LA_LEFT, .uplo = DAGGER_LA_UPPER, .alpha = 1.0};
            dagger_region_t *r = x.sub.r;
            if (!(st = dg_la_work_in(&aw, r)) && !(st = dagger_array_copy(r, W, b->a)) &&
                !(st = permute_value(&x, &w, piv, b->m)) &&
                !(st = dagger_array_copy(r, b->a, W)) && !(st = dg_la_trsm_dag(&x, &pl, &at, b)))
                st = dg_la_trsm_dag(&x, &pu, &at, b);
            st = dg_la_end(&x, st);
        }
        dagger_array_destroy(W);
    }
    dg_la_work_cleanup(&aw);
    return st;
}

dagger_status_t dagger_linalg_getrs(dagger_region_t *r, dagger_array_t *A, const int64_t *ipiv,
                                    dagger_array_t *B)
{
    const char *fn = "dagger_linalg_getrs";
    dg_la_mat_t a, b;
    dagger_status_t st;
    if ((st = check_ab(A, B, fn, &a, &b)))
        return st;
    if (r && ((st = dg_la_check_panels(&a, fn, "A")) || (st = dg_la_check_panels(&b, fn, "B"))))
        return st;
    DG_CHECK_ARG(ipiv, "%s: ipiv is NULL; pass the pivots dagger_linalg_getrf wrote", fn);
    int64_t *piv = NULL;
    if ((st = check_pivots(ipiv, a.m, &piv, fn)))
        return st;
    if (!r) {
        st = solve_copies(&a, &b, piv, fn);
    } else {
        dg_la_ctx_t x;
        if (!(st = dg_la_begin(&x, a.a->rt, r, fn))) {
            if (!(st = permute_value(&x, &b, piv, b.m)))
                st = panel_solve(&x, &a, &b);
            st = dg_la_end(&x, st);
        }
    }
    free(piv);
    return st;
}

dagger_status_t dagger_linalg_getrs_array(dagger_region_t *r, dagger_array_t *A,
                                          dagger_array_t *P, dagger_array_t *B)
{
    const char *fn = "dagger_linalg_getrs_array";
    dg_la_mat_t a, b, piv;
    dagger_status_t st;
    if ((st = check_ab(A, B, fn, &a, &b)) || (st = dg_la_check_panels(&a, fn, "A")) ||
        (st = dg_la_check_panels(&b, fn, "B")) || (st = dg_la_check_pivots(P, &a, fn, &piv)))
        return st;
    dg_la_ctx_t x;
    if (!(st = dg_la_begin(&x, a.a->rt, r, fn))) {
        if (!(st = permute_array(&x, &b, &a, &piv)))
            st = panel_solve(&x, &a, &b);
        st = dg_la_end(&x, st);
    }
    return st;
}

dagger_status_t dagger_linalg_gesv(dagger_region_t *r, dagger_array_t *A, int64_t *ipiv,
                                   dagger_array_t *B)
{
    const char *fn = "dagger_linalg_gesv";
    dg_la_mat_t a, b;
    /* getrs's checks before A is factorised: a call that getrs would refuse
     * (a bad B, B = A, a non-square A) leaves A untouched. */
    dagger_status_t st = dg_la_no_region(r, fn, "dagger_linalg_getrf_array then "
                                         "dagger_linalg_getrs_array");
    if (!st)
        st = check_ab(A, B, fn, &a, &b);
    if (!st)
        st = dagger_linalg_getrf(NULL, A, ipiv);
    return st ? st : dagger_linalg_getrs(NULL, A, ipiv, B);
}
