/* getrs and gesv: A X = B through the LU factors of dagger_linalg_getrf.
 * The row interchanges run on a column-panel copy of B (one laswp task per
 * block column of B, all pivots by value), then two tiled triangular
 * solves: L (unit lower) and U. */
#include <lapacke.h>
#include <stdlib.h>

#include "core/base/alloc.h"
#include "core/linalg/linalg_internal.h"
#include "core/base/status_internal.h"

/* The pivots as LAPACK's 1-based lapack_int, for the laswp tasks. */
static dagger_status_t local_pivots(const int64_t *ipiv, size_t n, lapack_int **out,
                                    const char *fn)
{
    lapack_int *p = dg_malloc(n * sizeof(*p));
    if (!p)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory for %zu pivots", fn, n);
    for (size_t i = 0; i < n; i++) {
        if (ipiv[i] < (int64_t)i + 1 || ipiv[i] > (int64_t)n) {
            free(p);
            return dg_error(DAGGER_ERR_INVALID_ARG, "%s: ipiv[%zu] = %lld is not a pivot of "
                            "row %zu (1-based, %zu .. %zu); pass the ipiv dagger_linalg_getrf "
                            "wrote", fn, i, (long long)ipiv[i], i + 1, i + 1, n);
        }
        p[i] = (lapack_int)ipiv[i];
    }
    *out = p;
    return DAGGER_OK;
}

/* B = P B on a column-panel copy: copy in, one laswp per block column, copy back. */
static dagger_status_t permute(dg_la_ctx_t *x, dagger_array_t *B, dagger_array_t *W,
                               const lapack_int *piv, size_t n)
{
    dg_la_mat_t w;
    dg_la_describe(W, &w);
    dagger_status_t st = dagger_array_copy(x->sub.r, W, B);
    dg_la_par_t p = {0};
    for (size_t j = 0; j < w.nt && !st; j++) {
        dagger_arg_t args[2] = {DAGGER_INOUT(dg_la_tile(&w, 0, j)),
                                DAGGER_VALUE(piv, n * sizeof(*piv))};
        st = dg_la_submit(x, DG_LA_CL_LASWP_V, 2, args, &p, 0);
    }
    return st ? st : dagger_array_copy(x->sub.r, B, W);
}

static dagger_status_t solve(dg_la_ctx_t *x, dagger_array_t *B, dagger_array_t *W,
                             const lapack_int *piv, const dg_la_mat_t *a, const dg_la_mat_t *b,
                             dg_la_work_t *aw)
{
    dagger_status_t st;
    if ((st = dg_la_work_in(aw, x->sub.r)) || (st = permute(x, B, W, piv, b->m)))
        return st;
    dg_la_par_t pl = {.side = DAGGER_LA_LEFT, .uplo = DAGGER_LA_LOWER, .diag = DAGGER_LA_UNIT,
                      .alpha = 1.0};
    dg_la_par_t pu = {.side = DAGGER_LA_LEFT, .uplo = DAGGER_LA_UPPER, .alpha = 1.0};
    if ((st = dg_la_trsm_dag(x, &pl, a, b)))
        return st;
    return dg_la_trsm_dag(x, &pu, a, b);
}

dagger_status_t dagger_linalg_getrs(dagger_region_t *r, dagger_array_t *A, const int64_t *ipiv,
                                    dagger_array_t *B)
{
    const char *fn = "dagger_linalg_getrs";
    dg_la_mat_t a, b;
    dagger_status_t st;
    if ((st = dg_la_no_region(r, fn)) || (st = dg_la_mat(A, 2, fn, "A", &a)) ||
        (st = dg_la_mat(B, 2, fn, "B", &b)) || (st = dg_la_same_kind(&a, &b, fn, "A", "B")) ||
        (st = dg_la_check_square(&a, fn, "A")) ||
        (st = dg_la_check_dim(b.m, a.m, fn, "the rows of B", "the order of A")))
        return st;
    DG_CHECK_ARG(ipiv, "%s: ipiv is NULL; pass the pivots dagger_linalg_getrf wrote", fn);
    DG_CHECK_ARG(a.a != b.a, "%s: B must not be A (give B its own array)", fn);
    lapack_int *piv = NULL;
    if ((st = local_pivots(ipiv, a.m, &piv, fn)))
        return st;
    dg_la_work_t aw;
    dagger_array_t *W = NULL;
    dagger_array_desc_t dw = {.dtype = b.a->dtype, .ndims = 2, .dims = {b.m, b.n},
                              .block = {b.m, b.nb}};
    if (!(st = dg_la_work_init(&aw, a.a, b.mb, b.mb, 1, 0, NULL, fn, "")) &&
        !(st = dagger_array_zeros(b.a->rt, &dw, &W))) {
        dg_la_mat_t at;
        dg_la_describe(aw.work, &at);
        dg_la_ctx_t x;
        if (!(st = dg_la_begin(&x, a.a->rt, NULL, fn)))
            st = dg_la_end(&x, solve(&x, B, W, piv, &at, &b, &aw));
        dagger_array_destroy(W);
    }
    dg_la_work_cleanup(&aw);
    free(piv);
    return st;
}

dagger_status_t dagger_linalg_gesv(dagger_region_t *r, dagger_array_t *A, int64_t *ipiv,
                                   dagger_array_t *B)
{
    const char *fn = "dagger_linalg_gesv";
    dg_la_mat_t a, b;
    /* B is checked before A is factorised: a bad B must leave A untouched. */
    dagger_status_t st = dg_la_no_region(r, fn);
    if (!st && !(st = dg_la_mat(A, 2, fn, "A", &a)) && !(st = dg_la_mat(B, 2, fn, "B", &b)) &&
        !(st = dg_la_same_kind(&a, &b, fn, "A", "B")))
        st = dg_la_check_dim(b.m, a.m, fn, "the rows of B", "the rows of A");
    if (!st)
        st = dagger_linalg_getrf(NULL, A, ipiv);
    return st ? st : dagger_linalg_getrs(NULL, A, ipiv, B);
}
