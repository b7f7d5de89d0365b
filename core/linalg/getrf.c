/* LU with partial pivoting, as LAPACK's getrf. A pivot search runs down a
 * whole block column, so the factorisation works in column-panel layout
 * (one chunk per block column, all rows): on a copy (dagger_linalg_getrf),
 * or on the caller's array when it has that layout already
 * (dagger_linalg_getrf_array, in any region). Step k is one getrf
 * task on the panel (rows k*nb.. of block column k), which writes the
 * step's pivots; a laswp task per other block column applies them (to the
 * left too, so L ends up as LAPACK's); then each block column to the right
 * gets a unit-lower trsm of its panel rows and gemm updates of the rows
 * below. The next block column's are tile tasks with higher priorities
 * (look-ahead). Where every rank has two CPU workers or more, each later
 * column on the panel's rank gets one task (swaps, trsm and gemm together)
 * while a step has enough of them for the job's CPU workers, cut into runs
 * of row blocks as they run out (update_column, row_groups); otherwise
 * tile tasks at lower priorities. */
#include <stdlib.h>

#include "core/base/alloc.h"
#include "core/base/status_internal.h"
#include "core/linalg/linalg_internal.h"

dagger_view_t dg_la_panel_rows(const dg_la_mat_t *w, size_t j, size_t r0, size_t m, size_t n)
{
    return dagger_view_sub(dg_la_tile(w, 0, j), (size_t[]){r0, 0}, (size_t[]){m, n});
}

/* Block column j after step k's panel: swaps, trsm, gemm updates. The next
 * block column's (the look-ahead) are tile tasks: its swaps, its trsm and a
 * gemm per row block, with priorities that put the next panel's inputs
 * first. A later column j > k + 1 gets the same at lower priorities where
 * groups is 0, else its update is cut into `groups` runs of row blocks: the
 * first task swaps the rows, solves the top and updates the first run
 * (dagger.linalg.lu_update), each other run is a gemm task. */
static dagger_status_t update_column(dg_la_ctx_t *x, const dg_la_mat_t *w, const dg_la_mat_t *piv,
                                     size_t k, size_t j, size_t mb, size_t groups)
{
    size_t r0 = k * w->nb, kb = dg_la_tile_m(piv, k), wj = dg_la_tile_n(w, j), M = w->m;
    dg_la_par_t sp = {.step = (int32_t)k, .row0 = (int64_t)r0};
    dagger_view_t top = dg_la_panel_rows(w, j, r0, kb, wj);
    size_t rs = r0 + kb;
    dagger_status_t st;
    if (j > k + 1 && groups) {
        size_t blocks = (M - rs + mb - 1) / mb, run = (blocks + groups - 1) / groups;
        size_t first = run * mb < M - rs ? run * mb : M - rs;
        dagger_arg_t fa[3] = {DAGGER_INOUT(dg_la_panel_rows(w, j, r0, M - r0, wj)),
                              DAGGER_IN(dg_la_tile(piv, k, 0)),
                              DAGGER_IN(dg_la_panel_rows(w, k, r0, kb + first, kb))};
        st = dg_la_submit(x, DG_LA_CL_LU_UPDATE, 3, fa, &sp, 5);
        for (rs += first; rs < M && !st; rs += run * mb) {
            size_t h = rs + run * mb < M ? run * mb : M - rs;
            st = dg_la_gemm_tile(x, 0, 0, -1.0, dg_la_panel_rows(w, k, rs, h, kb), top, 1.0,
                                 dg_la_panel_rows(w, j, rs, h, wj), 3);
        }
        return st;
    }
    int next = j == k + 1;
    dagger_arg_t sw[2] = {DAGGER_INOUT(dg_la_panel_rows(w, j, r0, M - r0, wj)),
                          DAGGER_IN(dg_la_tile(piv, k, 0))};
    st = dg_la_submit(x, DG_LA_CL_LASWP, 2, sw, &sp, j < k ? 0 : next ? 9 : 5);
    if (st || j < k)
        return st;
    dg_la_par_t tp = {.side = DAGGER_LA_LEFT, .uplo = DAGGER_LA_LOWER, .diag = DAGGER_LA_UNIT,
                      .alpha = 1.0};
    st = dg_la_trsm_tile(x, &tp, dg_la_panel_rows(w, k, r0, kb, kb), top, next ? 8 : 4);
    for (; rs < M && !st; rs += mb) {
        size_t h = rs + mb < M ? mb : M - rs;
        st = dg_la_gemm_tile(x, 0, 0, -1.0, dg_la_panel_rows(w, k, rs, h, kb), top, 1.0,
                             dg_la_panel_rows(w, j, rs, h, wj), next ? 7 : 3);
    }
    return st;
}

/* The rank that holds block column j. */
static int owner(const dg_la_mat_t *w, size_t j)
{
    dagger_array_block_t b;
    return dagger_array_block_info(w->a, j, &b) ? -1 : b.owner;
}

/* The fewest CPU processors any rank has (dagger_procs: the same table on
 * every rank). */
static int cpu_workers_per_rank(dagger_runtime_t *rt, int *total)
{
    int n = dagger_procs(rt, NULL, 0), least = 0;
    dagger_proc_info_t *p = n > 0 ? dg_malloc((size_t)n * sizeof(*p)) : NULL;
    *total = 0;
    if (p) {
        n = dagger_procs(rt, p, n);
        int ranks = n > 0 ? p[n - 1].rank + 1 : 0; /* sorted by rank */
        for (int r = 0; r < ranks; r++) {
            int c = 0;
            for (int i = 0; i < n; i++)
                c += p[i].rank == r && p[i].kind == DAGGER_PROC_CPU;
            least = r == 0 || c < least ? c : least;
            *total += c;
        }
        free(p);
    }
    return least;
}

/* How many runs of row blocks step k cuts each later column's update into:
 * one task per column (its swaps, trsm and whole gemm: one BLAS call on
 * the column runs faster than the same work as tile tasks, and the rows
 * are swapped and updated while in cache) as long as the step has at
 * least two such tasks per CPU worker of the job; more as the columns run
 * out (at most one run per row block). 0: tile tasks (a run per row block,
 * the swaps and the trsm tasks of their own), where a rank has one CPU
 * worker: a long task there holds back the look-ahead column's tasks that
 * the next panel waits for (measured: LU N = 1024 in 128 tiles on 2 ranks
 * x 1 thread took 7 % longer with one task per column). lu_dag also gives
 * tile tasks to a column on another rank than the panel: there the panel
 * arrives by transfers, which gemm tasks of single row blocks start on one
 * by one. */
static size_t row_groups(size_t cols, size_t blocks, int per_rank, int workers)
{
    if (per_rank < 2)
        return 0;
    if (!cols || !blocks)
        return 1;
    size_t g = (2 * (size_t)workers + cols - 1) / cols;
    return g > blocks ? blocks : g;
}

/* The DAG on w (column-panel layout) with pivots into piv (blocks w->nb);
 * mb is the height of the gemm updates' row blocks. */
static dagger_status_t lu_dag(dg_la_ctx_t *x, const dg_la_mat_t *w, const dg_la_mat_t *piv,
                              size_t mb)
{
    dagger_status_t st = DAGGER_OK;
    int workers, per_rank = cpu_workers_per_rank(w->a->rt, &workers);
    for (size_t k = 0; k < piv->mt && !st; k++) {
        size_t r0 = k * w->nb;
        dg_la_par_t pp = {.step = (int32_t)k, .row0 = (int64_t)r0};
        size_t wk = dg_la_tile_n(w, k);
        dagger_arg_t args[2] = {DAGGER_INOUT(dg_la_panel_rows(w, k, r0, w->m - r0, wk)),
                                DAGGER_OUT(dg_la_tile(piv, k, 0))};
        st = dg_la_submit(x, DG_LA_CL_GETRF, 2, args, &pp, 10);
        size_t later = w->nt > k + 2 ? w->nt - k - 2 : 0, rs = r0 + dg_la_tile_m(piv, k);
        size_t groups = row_groups(later, rs < w->m ? (w->m - rs + mb - 1) / mb : 0, per_rank,
                                   workers);
        for (size_t j = 0; j < w->nt && !st; j++)
            if (j != k)
                st = update_column(x, w, piv, k, j, mb, owner(w, j) == owner(w, k) ? groups : 0);
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
