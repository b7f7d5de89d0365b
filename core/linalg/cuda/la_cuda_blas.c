/* cuBLAS tile codelets: gemm, gemv, syrk, trsm on device tiles, queued on
 * the task's stream (the handles are bound to it); f64 or f32 by the
 * tiles' dtype. The arguments are those of the CPU kernels
 * (core/linalg/blas_kernels.c). */
#include "core/linalg/cuda/la_cuda.h"

#define TR(x) ((x) ? CUBLAS_OP_T : CUBLAS_OP_N)
#define UPLO(x) ((x) ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER)

/* One tile task's operands: its slots, parameters, the cuBLAS handle of its
 * stream, alpha and beta in f32 (cuBLAS reads scalars from host memory). */
typedef struct la_op {
    dagger_slot_t s[3];
    dg_la_par_t p;
    cublasHandle_t h;
    float fa, fb;
    int f64;                   /* the output tile (the last view) is f64 */
} la_op_t;

typedef cublasStatus_t (*la_queue_fn)(const la_op_t *o);

/* Loads a task with nviews tiles and queues body on its stream. */
static int run(dagger_task_t *t, int nviews, la_queue_fn body, const char *what)
{
    la_op_t o;
    cusolverDnHandle_t unused;
    if (dg_la_cuda_load(t, nviews, o.s, &o.p) || dg_la_cuda_handles(t, &o.h, &unused))
        return DAGGER_ERR_TASK_FAILED;
    o.fa = (float)o.p.alpha;
    o.fb = (float)o.p.beta;
    o.f64 = o.s[nviews - 1].dtype == DAGGER_F64;
    return dg_la_cublas_ok(t, body(&o), what);
}

/* C = alpha op(A) op(B) + beta C: args A, B, C. */
static cublasStatus_t gemm(const la_op_t *o)
{
    const dagger_slot_t *s = o->s;
    int m = (int)s[2].dims[0], n = (int)s[2].dims[1];
    int k = (int)(o->p.ta ? s[0].dims[0] : s[0].dims[1]);
    int la = dg_la_ld(&s[0]), lb = dg_la_ld(&s[1]), lc = dg_la_ld(&s[2]);
    cublasOperation_t ta = TR(o->p.ta), tb = TR(o->p.tb);
    return o->f64 ? cublasDgemm(o->h, ta, tb, m, n, k, &o->p.alpha, s[0].data, la,
                                s[1].data, lb, &o->p.beta, s[2].data, lc)
                  : cublasSgemm(o->h, ta, tb, m, n, k, &o->fa, s[0].data, la,
                                s[1].data, lb, &o->fb, s[2].data, lc);
}

/* y = alpha op(A) x + beta y: args A, x, y. */
static cublasStatus_t gemv(const la_op_t *o)
{
    const dagger_slot_t *s = o->s;
    int m = (int)s[0].dims[0], n = (int)s[0].dims[1], la = dg_la_ld(&s[0]);
    return o->f64 ? cublasDgemv(o->h, TR(o->p.ta), m, n, &o->p.alpha, s[0].data, la, s[1].data, 1,
                                &o->p.beta, s[2].data, 1)
                  : cublasSgemv(o->h, TR(o->p.ta), m, n, &o->fa, s[0].data, la, s[1].data, 1,
                                &o->fb, s[2].data, 1);
}

/* C = alpha op(A) op(A)^T + beta C (one triangle): args A, C. */
static cublasStatus_t syrk(const la_op_t *o)
{
    const dagger_slot_t *s = o->s;
    int n = (int)s[1].dims[0], k = (int)(o->p.ta ? s[0].dims[0] : s[0].dims[1]);
    int la = dg_la_ld(&s[0]), lc = dg_la_ld(&s[1]);
    cublasFillMode_t up = UPLO(o->p.uplo);
    return o->f64 ? cublasDsyrk(o->h, up, TR(o->p.ta), n, k, &o->p.alpha, s[0].data,
                                la, &o->p.beta, s[1].data, lc)
                  : cublasSsyrk(o->h, up, TR(o->p.ta), n, k, &o->fa, s[0].data, la,
                                &o->fb, s[1].data, lc);
}

/* B = alpha op(A)^-1 B (left) or alpha B op(A)^-1 (right): args A, B. */
static cublasStatus_t trsm(const la_op_t *o)
{
    const dagger_slot_t *s = o->s;
    int m = (int)s[1].dims[0], n = (int)s[1].dims[1];
    int la = dg_la_ld(&s[0]), lb = dg_la_ld(&s[1]);
    cublasSideMode_t side = o->p.side ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT;
    cublasDiagType_t diag = o->p.diag ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
    cublasFillMode_t up = UPLO(o->p.uplo);
    return o->f64 ? cublasDtrsm(o->h, side, up, TR(o->p.ta), diag, m, n, &o->p.alpha,
                                s[0].data, la, s[1].data, lb)
                  : cublasStrsm(o->h, side, up, TR(o->p.ta), diag, m, n, &o->fa,
                                s[0].data, la, s[1].data, lb);
}

int dg_la_gemm_cuda(dagger_task_t *t)
{
    return run(t, 3, gemm, "gemm");
}

int dg_la_gemv_cuda(dagger_task_t *t)
{
    return run(t, 3, gemv, "gemv");
}

int dg_la_syrk_cuda(dagger_task_t *t)
{
    return run(t, 2, syrk, "syrk");
}

int dg_la_trsm_cuda(dagger_task_t *t)
{
    return run(t, 2, trsm, "trsm");
}
