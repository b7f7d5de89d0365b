/* LU with partial pivoting, as LAPACK's getrf. A pivot search runs down a
 * whole block column, so the factorisation works in column-panel layout
 * (one chunk per block column, all rows): on a copy (dagger_linalg_getrf),
 * or on the caller's array when it has that layout already
 * (dagger_linalg_getrf_array, in any region). Step k is one getrf
 * task on the panel (rows k*nb.. of block column k), which writes the
 * step's pivots; a laswp task per other block column applies them (to the
 * left too, so L ends up as LAPACK's); then each block column to the right
 * gets a unit-lower trsm of its panel rows and gemm updates of the rows
 * below, split into row blocks of A's height for parallelism. The next
 * block column's tasks get higher priorities (look-ahead). */
#include "core/linalg/linalg_internal.h"
#include "core/base/status_internal.h"

dagger_view_t dg_la_panel_rows(const dg_la_mat_t *w, size_t j, size_t r0, size_t m, size_t n)
{
    return dagger_view_sub(dg_la_tile(w, 0, j), (size_t[]){r0, 0}, (size_t[]){m, n});
}

/* Block column j after step k's panel: swaps, trsm, gemm updates. */
static dagger_status_t update_column(dg_la_ctx_t *x, const dg_la_mat_t *w, const dg_la_mat_t *piv,
                                     size_t k, size_t j, size_t mb)
{
    size_t r0 = k * w->nb, kb = dg_la_tile_m(piv, k), wj = dg_la_tile_n(w, j), M = w->m;
    int next = j == k + 1;
    dg_la_par_t sp = {.step = (int32_t)k, .row0 = (int64_t)r0};
    dagger_arg_t sw[2] = {DAGGER_INOUT(dg_la_panel_rows(w, j, r0, M - r0, wj)),
                          DAGGER_IN(dg_la_tile(piv, k, 0))};
    dagger_status_t st = dg_la_submit(x, DG_LA_CL_LASWP, 2, sw, &sp, j < k ? 0 : next ? 9 : 5);
    if (st || j < k)
        return st;
    dg_la_par_t tp = {.side = DAGGER_LA_LEFT, .uplo = DAGGER_LA_LOWER, .diag = DAGGER_LA_UNIT,
                      .alpha = 1.0};
    dagger_view_t top = dg_la_panel_rows(w, j, r0, kb, wj);
    st = dg_la_trsm_tile(x, &tp, dg_la_panel_rows(w, k, r0, kb, kb), top, next ? 8 : 4);
    for (size_t rs = r0 + kb; rs < M && !st; rs += mb) {
        size_t h = rs + mb < M ? mb : M - rs;
        st = dg_la_gemm_tile(x, 0, 0, -1.0, dg_la_panel_rows(w, k, rs, h, kb), top, 1.0,
                             dg_la_panel_rows(w, j, rs, h, wj), next ? 7 : 3);
    }
    return st;
}

/* The DAG on w (column-panel layout) with pivots into piv (blocks w->nb);
 * mb is the height of the gemm updates' row blocks. */
static dagger_status_t lu_dag(dg_la_ctx_t *x, const dg_la_mat_t *w, const dg_la_mat_t *piv,
                              size_t mb)
{
    dagger_status_t st = DAGGER_OK;
    for (size_t k = 0; k < piv->mt && !st; k++) {
        size_t r0 = k * w->nb;
        dg_la_par_t pp = {.step = (int32_t)k, .row0 = (int64_t)r0};
        size_t wk = dg_la_tile_n(w, k);
        dagger_arg_t args[2] = {DAGGER_INOUT(dg_la_panel_rows(w, k, r0, w->m - r0, wk)),
                                DAGGER_OUT(dg_la_tile(piv, k, 0))};
        st = dg_la_submit(x, DG_LA_CL_GETRF, 2, args, &pp, 10);
        for (size_t j = 0; j < w->nt && !st; j++)
            if (j != k)
                st = update_column(x, w, piv, k, j, mb);
    }
    return st;
}

/* The column-panel copy of a (blocks m x nb) and the pivot array (blocks nb). */
static dagger_status_t lu_arrays(const dg_la_mat_t *a, dagger_array_t **w, dagger_array_t **piv)
{
    size_t mn = a->m < a->n ? a->m : a->n;
    dagger_array_desc_t dw = {.dtype = a->a->dtype, .ndims = 2, .dims = {a->m, a->n},
                              .block = {a->m, a->nb}};
    dagger_array_desc_t dp = {.dtype = DAGGER_I64, .ndims = 1, .dims = {mn}, .block = {a->nb}};
    dagger_status_t st = dagger_array_zeros(a->a->rt, &dw, w);
    if (st)
        return st;
    if ((st = dagger_array_zeros(a->a->rt, &dp, piv)))
        dagger_array_destroy(*w);
    return st;
}

dagger_status_t dg_la_no_region(dagger_region_t *r, const char *fn, const char *instead)
{
    if (!r)
        return DAGGER_OK;
    return dg_error(DAGGER_ERR_INVALID_ARG, "%s: writes its pivots to a host buffer, which it "
                    "can do only once the work is done, in a region of its own: pass r = NULL, "
                    "or in your region call %s with A in column-panel layout and the pivots in "
                    "an array (dagger/linalg.h)", fn, instead);
}

dagger_status_t dg_la_check_panels(const dg_la_mat_t *a, const char *fn, const char *name)
{
    if (a->mt == 1)
        return DAGGER_OK;
    return dg_error(DAGGER_ERR_INVALID_ARG, "%s: %s (%zu x %zu in %zu x %zu blocks) is not in "
                    "column-panel layout: in a region of yours LU works on the array itself, "
                    "so give %s one block row (.block = {%zu, nb}: each block a whole column "
                    "panel, nb the tile side), or pass r = NULL to dagger_linalg_getrf / "
                    "dagger_linalg_getrs, which work on copies", fn, name, a->m, a->n, a->mb,
                    a->nb, name, a->m);
}

dagger_status_t dg_la_check_pivots(dagger_array_t *P, const dg_la_mat_t *a, const char *fn,
                                   dg_la_mat_t *out)
{
    dagger_array_t *p = dg_arr_get(P, fn);
    if (!p)
        return DAGGER_ERR_BAD_HANDLE;
    size_t mn = a->m < a->n ? a->m : a->n, pb = p->block[0] < mn ? p->block[0] : mn;
    size_t want = a->nb < mn ? a->nb : mn;
    if (p->rt != a->a->rt || p->dtype != DAGGER_I64 || p->ndims != 1 || p->dims[0] != mn ||
        pb != want)
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: P must be a 1-D i64 array of min(M, N) = "
                        "%zu pivots in blocks of A's column block (%zu), of A's runtime; P is "
                        "%s, %d-D, %zu long, block %zu", fn, mn, want,
                        dg_arr_dtype_name(p->dtype), p->ndims, p->dims[0], p->block[0]);
    dg_la_describe(p, out);
    return DAGGER_OK;
}

dagger_status_t dagger_linalg_getrf_array(dagger_region_t *r, dagger_array_t *A, dagger_array_t *P)
{
    const char *fn = "dagger_linalg_getrf_array";
    dg_la_mat_t a, piv;
    dagger_status_t st;
    if ((st = dg_la_mat(A, 2, fn, "A", &a)) || (st = dg_la_check_panels(&a, fn, "A")) ||
        (st = dg_la_check_pivots(P, &a, fn, &piv)))
        return st;
    dg_la_ctx_t x;
    if (!(st = dg_la_begin(&x, a.a->rt, r, fn)))
        st = dg_la_end(&x, lu_dag(&x, &a, &piv, a.nb));
    return st;
}

dagger_status_t dagger_linalg_getrf(dagger_region_t *r, dagger_array_t *A, int64_t *ipiv)
{
    const char *fn = "dagger_linalg_getrf";
    dg_la_mat_t a, w, piv;
    dagger_status_t st;
    if ((st = dg_la_no_region(r, fn, "dagger_linalg_getrf_array(r, A, P)")) ||
        (st = dg_la_mat(A, 2, fn, "A", &a)))
        return st;
    DG_CHECK_ARG(ipiv, "%s: ipiv is NULL; give a buffer of min(M, N) int64_t", fn);
    dagger_array_t *W, *P;
    if ((st = lu_arrays(&a, &W, &P)))
        return st;
    dg_la_describe(W, &w);
    dg_la_describe(P, &piv);
    dg_la_ctx_t x;
    if (!(st = dg_la_begin(&x, a.a->rt, NULL, fn))) {
        if (!(st = dagger_array_copy(x.sub.r, W, A)) && !(st = lu_dag(&x, &w, &piv, a.mb)))
            st = dagger_array_copy(x.sub.r, A, W);
        st = dg_la_end(&x, st);
    }
    if (!st)
        st = dagger_array_collect(P, ipiv);
    dagger_array_destroy(W);
    dagger_array_destroy(P);
    return st;
}
