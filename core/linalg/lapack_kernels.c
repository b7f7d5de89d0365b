/* LAPACK tile codelets for Cholesky and LU: potrf of a diagonal tile, the
 * LU of a block column's panel, its row interchanges on other block
 * columns, and a later block column's whole update of one step (the
 * interchanges, then BLAS trsm and gemm). LAPACK's info is translated to
 * global indices in the message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/linalg/la_blas_lib.h"
#include "core/linalg/linalg_internal.h"
#include "core/linalg/trsm_rec.h"

/* The slots and parameters of a task with nviews view arguments and
 * nvalues value arguments before the parameter block. */
static int load(dagger_task_t *t, int nviews, dagger_slot_t s[], dg_la_par_t *p)
{
    if (dagger_task_nargs(t) < nviews + 1 || dg_la_par_get(t, p))
        return dagger_task_fail(t, "malformed LAPACK tile task");
    for (int i = 0; i < nviews; i++)
        s[i] = dagger_task_arg(t, i);
    return dg_la_blas_ready(t);
}

void dg_la_info_msg(char *buf, size_t cap, int routine, const dg_la_par_t *p, int info,
                    const char *lib)
{
    long long at = (long long)(p->row0 + info);
    if (routine == DG_LA_CL_LASWP)
        snprintf(buf, cap, "laswp: no valid pivots from step %d", p->step);
    else if (routine == DG_LA_CL_POTRF)
        snprintf(buf, cap, "potrf: the matrix is not positive definite: its leading minor of "
                 "order %lld is not positive (tile step %d, diagonal tile (%d, %d), %s info %d)",
                 at, p->step, p->step, p->step, lib, info);
    else
        snprintf(buf, cap, "getrf: the matrix is singular: U(%lld, %lld) is exactly zero "
                 "(1-based, tile step %d, %s info %lld)", at, at, p->step, lib, at);
}

/* Cholesky of the diagonal tile of step p.step: args A_kk. */
int dg_la_potrf_impl(dagger_task_t *t)
{
    dagger_slot_t a;
    dg_la_par_t p;
    if (load(t, 1, &a, &p))
        return DAGGER_ERR_TASK_FAILED;
    char uplo = p.uplo ? 'U' : 'L';
    int n = (int)a.dims[0];
    lapack_int info = a.dtype == DAGGER_F64
                          ? LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo, n, a.data, dg_la_ld(&a))
                          : LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo, n, a.data, dg_la_ld(&a));
    if (info > 0) {
        char msg[300];
        dg_la_info_msg(msg, sizeof(msg), DG_LA_CL_POTRF, &p, (int)info, "LAPACK");
        return dagger_task_fail(t, "%s", msg);
    }
    if (info < 0)
        return dagger_task_fail(t, "potrf: LAPACK rejected argument %d", (int)-info);
    return DAGGER_OK;
}

/* LU with partial pivoting of a panel (rows row0.. of one block column):
 * args the panel, the step's pivot block (I64, global and 1-based out). */
int dg_la_getrf_impl(dagger_task_t *t)
{
    dagger_slot_t s[2];
    dg_la_par_t p;
    if (load(t, 2, s, &p))
        return DAGGER_ERR_TASK_FAILED;
    int m = (int)s[0].dims[0], n = (int)s[0].dims[1], kb = (int)s[1].dims[0];
    lapack_int *ipiv = dg_malloc((size_t)(m < n ? m : n) * sizeof(*ipiv));
    if (!ipiv)
        return dagger_task_fail(t, "getrf: out of memory for %d pivots", m < n ? m : n);
    lapack_int info = s[0].dtype == DAGGER_F64
        ? LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, s[0].data, dg_la_ld(&s[0]), ipiv)
        : LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, m, n, s[0].data, dg_la_ld(&s[0]), ipiv);
    int64_t *out = s[1].data;
    for (int i = 0; i < kb; i++)
        out[i] = (int64_t)ipiv[i] + p.row0;
    free(ipiv);
    if (info > 0) {
        char msg[300];
        dg_la_info_msg(msg, sizeof(msg), DG_LA_CL_GETRF, &p, (int)info, "LAPACK");
        return dagger_task_fail(t, "%s", msg);
    }
    if (info < 0)
        return dagger_task_fail(t, "getrf: LAPACK rejected argument %d", (int)-info);
    return DAGGER_OK;
}

/* Row interchanges ipiv[0..kb) (1-based, relative to the view's first row)
 * on the m x n view a. */
static void swap_rows(dagger_slot_t *a, const lapack_int *ipiv, int kb)
{
    int n = (int)a->dims[1];
    if (a->dtype == DAGGER_F64)
        LAPACKE_dlaswp_work(LAPACK_COL_MAJOR, n, a->data, dg_la_ld(a), 1, kb, ipiv, 1);
    else
        LAPACKE_slaswp_work(LAPACK_COL_MAJOR, n, a->data, dg_la_ld(a), 1, kb, ipiv, 1);
}

/* A panel's interchanges on rows row0.. of another block column: the view
 * a, the step's pivot block piv (I64, global). A failed panel leaves no
 * pivots (and its failure is reported first): never swap with a row
 * outside the view. */
static int apply_pivots(dagger_task_t *t, dagger_slot_t *a, const dagger_slot_t *piv,
                        const dg_la_par_t *p, const char *what)
{
    int kb = (int)piv->dims[0];
    lapack_int *ipiv = dg_malloc((size_t)kb * sizeof(*ipiv));
    if (!ipiv)
        return dagger_task_fail(t, "%s: out of memory for %d pivots", what, kb);
    const int64_t *g = piv->data;
    for (int i = 0; i < kb; i++) {
        ipiv[i] = (lapack_int)(g[i] - p->row0);
        if (ipiv[i] < i + 1 || ipiv[i] > (lapack_int)a->dims[0]) {
            free(ipiv);
            char msg[100];
            dg_la_info_msg(msg, sizeof(msg), DG_LA_CL_LASWP, p, i + 1, "LAPACK");
            return dagger_task_fail(t, "%s", msg);
        }
    }
    swap_rows(a, ipiv, kb);
    free(ipiv);
    return DAGGER_OK;
}

/* A panel's interchanges on rows row0.. of another block column: args that
 * view, the step's pivot block (I64, global). */
int dg_la_laswp_impl(dagger_task_t *t)
{
    dagger_slot_t s[2];
    dg_la_par_t p;
    if (load(t, 2, s, &p))
        return DAGGER_ERR_TASK_FAILED;
    return apply_pivots(t, &s[0], &s[1], &p, "laswp");
}

/* Interchanges given by value (int64_t, 1-based relative to the view, the
 * bytes the CUDA kernel reads too): args the view, the pivots. */
int dg_la_laswp_v_impl(dagger_task_t *t)
{
    dagger_slot_t s[2];
    dg_la_par_t p;
    if (load(t, 2, s, &p) || dagger_task_nargs(t) != 3)
        return DAGGER_ERR_TASK_FAILED;
    int kb = (int)(s[1].bytes / sizeof(int64_t));
    lapack_int *ipiv = dg_malloc((size_t)kb * sizeof(*ipiv) + 1);
    if (!ipiv)
        return dagger_task_fail(t, "laswp: out of memory for %d pivots", kb);
    for (int i = 0; i < kb; i++) {
        int64_t v;
        memcpy(&v, (const char *)s[1].data + (size_t)i * sizeof(v), sizeof(v)); /* may be unaligned */
        ipiv[i] = (lapack_int)v;
    }
    swap_rows(&s[0], ipiv, kb);
    free(ipiv);
    return DAGGER_OK;
}

/* Step row0's update of a block column right of the panel, in one task:
 * the interchanges, the unit-lower trsm of its top kb rows and the gemm
 * update of the rows the panel view covers below them. Args: the column's
 * rows row0.. (m x w, INOUT), the step's pivot block (kb, global), the
 * panel's rows row0.. (kb + g rows, kb columns; g <= m - kb). */
int dg_la_lu_update_impl(dagger_task_t *t)
{
    dagger_slot_t s[3];
    dg_la_par_t p;
    if (load(t, 3, s, &p))
        return DAGGER_ERR_TASK_FAILED;
    if (dg_la_lu_update_check(t, s) || apply_pivots(t, &s[0], &s[1], &p, "lu_update"))
        return DAGGER_ERR_TASK_FAILED;
    int w = (int)s[0].dims[1], kb = (int)s[1].dims[0], lm = (int)s[2].dims[0];
    int ldc = dg_la_ld(&s[0]), ldl = dg_la_ld(&s[2]);
    /* T the element type, P BLAS's letter for it */
#define LU_RIGHT(T, P)                                                                         \
    do {                                                                                       \
        const T *l = s[2].data;                                                                \
        T *c = s[0].data;                                                                      \
        dg_la_##P##trsm_rec(CblasLeft, CblasLower, CblasNoTrans, CblasUnit, kb, w, 1, l, ldl, \
                            c, ldc);                                                           \
        if (lm > kb)                                                                           \
            cblas_##P##gemm(CblasColMajor, CblasNoTrans, CblasNoTrans, lm - kb, w, kb, -1,     \
                            l + kb, ldl, c, ldc, 1, c + kb, ldc);                              \
    } while (0)
    if (s[0].dtype == DAGGER_F64)
        LU_RIGHT(double, d);
    else
        LU_RIGHT(float, s);
#undef LU_RIGHT
    return DAGGER_OK;
}
