/* BLAS tile codelets: gemm, gemv, syrk, trsm on the tiles a task receives,
 * f64 or f32 by the tiles' dtype. Shapes come from the slots (edge tiles are
 * smaller); the flags from the parameter block. */
#include "core/linalg/la_blas_lib.h"
#include "core/linalg/linalg_internal.h"
#include "core/linalg/trsm_rec.h"

#define TR(x) ((x) ? CblasTrans : CblasNoTrans)
#define UPLO(x) ((x) ? CblasUpper : CblasLower)

/* The slots and parameters of a task with nviews tile arguments. */
static int load(dagger_task_t *t, int nviews, dagger_slot_t s[], dg_la_par_t *p)
{
    if (dagger_task_nargs(t) != nviews + 1 || dg_la_par_get(t, p))
        return dagger_task_fail(t, "malformed linear algebra tile task");
    for (int i = 0; i < nviews; i++)
        s[i] = dagger_task_arg(t, i);
    return dg_la_blas_ready(t);
}

int dg_la_gemm_impl(dagger_task_t *t)
{
    dagger_slot_t s[3];
    dg_la_par_t p;
    if (load(t, 3, s, &p))
        return DAGGER_ERR_TASK_FAILED;
    int m = (int)s[2].dims[0], n = (int)s[2].dims[1];
    int k = (int)(p.ta ? s[0].dims[0] : s[0].dims[1]);
    if (s[2].dtype == DAGGER_F64)
        cblas_dgemm(CblasColMajor, TR(p.ta), TR(p.tb), m, n, k, p.alpha, s[0].data,
                    dg_la_ld(&s[0]), s[1].data, dg_la_ld(&s[1]), p.beta, s[2].data,
                    dg_la_ld(&s[2]));
    else
        cblas_sgemm(CblasColMajor, TR(p.ta), TR(p.tb), m, n, k, (float)p.alpha, s[0].data,
                    dg_la_ld(&s[0]), s[1].data, dg_la_ld(&s[1]), (float)p.beta, s[2].data,
                    dg_la_ld(&s[2]));
    return DAGGER_OK;
}

/* y = alpha op(A) x + beta y: args A, x, y. */
int dg_la_gemv_impl(dagger_task_t *t)
{
    dagger_slot_t s[3];
    dg_la_par_t p;
    if (load(t, 3, s, &p))
        return DAGGER_ERR_TASK_FAILED;
    int m = (int)s[0].dims[0], n = (int)s[0].dims[1];
    if (s[2].dtype == DAGGER_F64)
        cblas_dgemv(CblasColMajor, TR(p.ta), m, n, p.alpha, s[0].data, dg_la_ld(&s[0]),
                    s[1].data, 1, p.beta, s[2].data, 1);
    else
        cblas_sgemv(CblasColMajor, TR(p.ta), m, n, (float)p.alpha, s[0].data, dg_la_ld(&s[0]),
                    s[1].data, 1, (float)p.beta, s[2].data, 1);
    return DAGGER_OK;
}

/* C = alpha op(A) op(A)^T + beta C: args A, C. */
int dg_la_syrk_impl(dagger_task_t *t)
{
    dagger_slot_t s[2];
    dg_la_par_t p;
    if (load(t, 2, s, &p))
        return DAGGER_ERR_TASK_FAILED;
    int n = (int)s[1].dims[0], k = (int)(p.ta ? s[0].dims[0] : s[0].dims[1]);
    if (s[1].dtype == DAGGER_F64)
        cblas_dsyrk(CblasColMajor, UPLO(p.uplo), TR(p.ta), n, k, p.alpha, s[0].data,
                    dg_la_ld(&s[0]), p.beta, s[1].data, dg_la_ld(&s[1]));
    else
        cblas_ssyrk(CblasColMajor, UPLO(p.uplo), TR(p.ta), n, k, (float)p.alpha, s[0].data,
                    dg_la_ld(&s[0]), (float)p.beta, s[1].data, dg_la_ld(&s[1]));
    return DAGGER_OK;
}

/* B = alpha op(A)^-1 B (left) or alpha B op(A)^-1 (right): args A, B; by halving
 * (trsm_rec.c), most of the flops through gemm. */
int dg_la_trsm_impl(dagger_task_t *t)
{
    dagger_slot_t s[2];
    dg_la_par_t p;
    if (load(t, 2, s, &p))
        return DAGGER_ERR_TASK_FAILED;
    int m = (int)s[1].dims[0], n = (int)s[1].dims[1];
    CBLAS_SIDE side = p.side ? CblasRight : CblasLeft;
    CBLAS_DIAG diag = p.diag ? CblasUnit : CblasNonUnit;
    if (s[1].dtype == DAGGER_F64)
        dg_la_dtrsm_rec(side, UPLO(p.uplo), TR(p.ta), diag, m, n, p.alpha, s[0].data,
                        dg_la_ld(&s[0]), s[1].data, dg_la_ld(&s[1]));
    else
        dg_la_strsm_rec(side, UPLO(p.uplo), TR(p.ta), diag, m, n, (float)p.alpha, s[0].data,
                        dg_la_ld(&s[0]), s[1].data, dg_la_ld(&s[1]));
    return DAGGER_OK;
}
