/* QR's CUDA tile codelets (geqrt, gemqrt, tpqrt, tpmqrt), queued on the
 * task's stream, with the CPU kernels' arguments, blocking and conventions
 * (core/linalg/qr_kernels.c: LAPACK's V, T and R), so CPU and GPU tiles mix
 * in one factorisation. Per inner block of ib columns: the panel by a
 * kernel of ours (la_cuda_qr.cu; cuSOLVER makes no T), the block reflector
 * on the columns to its right, or on another tile, by cuBLAS as LAPACK's
 * larfb / tprfb do: W = V^T C, W = op(T) W (trmm), C -= V W (gemm), with
 * an explicit unit-lower V. Scratch (V, W) comes from the stream-ordered
 * allocator, freed in stream order. */
#include "core/linalg/cuda/la_cuda.h"
#include "core/linalg/cuda/la_cuda_kernels.h"
#include "core/linalg/cuda/la_cuda_math.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* One task's device state: handle, stream, dtype and scratch. */
typedef struct qr_gpu {
    dagger_task_t *t;
    cublasHandle_t h;
    cudaStream_t s;
    int f64;
    size_t el;
    char *v, *w;              /* explicit V (rows x ib), W (ib x cols) */
    cudaError_t ce;
    cublasStatus_t bs;
    const char *what;
} qr_gpu_t;

/* Element (i, j) of a column-major matrix at p with leading dimension ld. */
static void *at(const qr_gpu_t *g, const void *p, int64_t ld, int64_t i, int64_t j)
{
    return (char *)p + (size_t)(i + j * ld) * g->el;
}

/* Loads the task, binds the handle and allocates scratch of vrows x ib
 * (V) and ib x wcols (W) elements. */
static int begin(qr_gpu_t *g, dagger_task_t *t, int nviews, dagger_slot_t s[], dg_la_par_t *p,
                 int64_t vrows, int64_t wcols, const char *what)
{
    cusolverDnHandle_t unused;
    *g = (qr_gpu_t){.t = t, .what = what};
    if (dg_la_cuda_load(t, nviews, s, p) || dg_la_cuda_handles(t, &g->h, &unused))
        return DAGGER_ERR_TASK_FAILED;
    if (p->ib < 1 || p->ib > DG_LA_IB_MAX)
        return dagger_task_fail(t, "%s: inner blocking %d is outside 1 .. %d", what, p->ib,
                                DG_LA_IB_MAX);
    g->s = (cudaStream_t)dagger_task_stream(t);
    g->f64 = s[nviews - 1].dtype == DAGGER_F64;
    g->el = g->f64 ? sizeof(double) : sizeof(float);
    size_t vbytes = ((size_t)(vrows > 0 ? vrows : 1) * DG_LA_IB_MAX * g->el + 255) & ~(size_t)255;
    size_t wbytes = (size_t)DG_LA_IB_MAX * (size_t)(wcols > 0 ? wcols : 1) * g->el;
    g->ce = cudaMallocAsync((void **)&g->v, vbytes + wbytes, g->s);
    if (g->ce != cudaSuccess)
        return dagger_task_fail(t, "%s: no device scratch: %s", what, cudaGetErrorString(g->ce));
    g->w = g->v + vbytes;
    return DAGGER_OK;
}

/* Frees the scratch in stream order and reports the first failure. */
static int end(qr_gpu_t *g)
{
    cudaError_t fe = g->v ? cudaFreeAsync(g->v, g->s) : cudaSuccess;
    if (g->bs != CUBLAS_STATUS_SUCCESS)
        return dg_la_cublas_ok(g->t, g->bs, g->what);
    if (g->ce == cudaSuccess)
        g->ce = fe;
    if (g->ce != cudaSuccess)
        return dagger_task_fail(g->t, "%s: %s", g->what, cudaGetErrorString(g->ce));
    return DAGGER_OK;
}

/* Whether every call so far succeeded (later calls are skipped otherwise). */
static int ok(const qr_gpu_t *g)
{
    return g->ce == cudaSuccess && g->bs == CUBLAS_STATUS_SUCCESS;
}

/* C = alpha op(A) op(B) + beta C. */
static void gemm(qr_gpu_t *g, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                 const void *a, int64_t lda, const void *b, int64_t ldb, double beta, void *c,
                 int64_t ldc)
{
    if (!ok(g) || m <= 0 || n <= 0)
        return;
    cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    float fa = (float)alpha, fb = (float)beta;
    g->bs = g->f64 ? cublasDgemm(g->h, oa, ob, (int)m, (int)n, (int)k, &alpha, a, (int)lda, b,
                                 (int)ldb, &beta, c, (int)ldc)
                   : cublasSgemm(g->h, oa, ob, (int)m, (int)n, (int)k, &fa, a, (int)lda, b,
                                 (int)ldb, &fb, c, (int)ldc);
}

/* W = op(T) W in place, T (k x k, upper, ldt), W (k x n, ld k). */
static void trmm(qr_gpu_t *g, int trans, int64_t k, int64_t n, const void *t, int64_t ldt)
{
    if (!ok(g) || n <= 0)
        return;
    double one = 1.0;
    float fone = 1.0f;
    cublasOperation_t op = trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    g->bs = g->f64 ? cublasDtrmm(g->h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, op,
                                 CUBLAS_DIAG_NON_UNIT, (int)k, (int)n, &one, t, (int)ldt,
                                 (const double *)g->w, (int)k, (double *)g->w, (int)k)
                   : cublasStrmm(g->h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, op,
                                 CUBLAS_DIAG_NON_UNIT, (int)k, (int)n, &fone, t, (int)ldt,
                                 (const float *)g->w, (int)k, (float *)g->w, (int)k);
}

/* C (rows x n) = op(H) C for the block reflector H = I - V T V^T of k
 * columns, V the unit lower part of v (ldv, rows x k), as larfb('L', op,
 * 'F', 'C'): W = V^T C, W = op(T) W, C -= V W. */
static void larfb(qr_gpu_t *g, int trans, const void *v, int64_t ldv, int64_t rows, int k,
                  const void *t, int64_t ldt, void *c, int64_t ldc, int64_t n)
{
    if (ok(g))
        g->ce = dg_la_cuda_unit_lower(g->f64, v, ldv, g->v, rows, rows, k, g->s);
    gemm(g, 1, 0, k, n, rows, 1.0, g->v, rows, c, ldc, 0.0, g->w, k);
    trmm(g, trans, k, n, t, ldt);
    gemm(g, 0, 0, rows, n, k, -1.0, g->v, rows, g->w, k, 1.0, c, ldc);
}

/* The pair (A rows k x n on top, B m x n) = op(H) (A; B) for H = I - V T V^T,
 * V = [I; vb] (vb m x k, l = 0), as tprfb('L', op, 'F', 'C'):
 * W = A + vb^T B, W = op(T) W, A -= W, B -= vb W. */
static void tprfb(qr_gpu_t *g, int trans, const void *vb, int64_t ldv, int64_t m, int k,
                  const void *t, int64_t ldt, void *a, int64_t lda, void *b, int64_t ldb,
                  int64_t n)
{
    if (ok(g) && n > 0)
        g->ce = cudaMemcpy2DAsync(g->w, (size_t)k * g->el, a, (size_t)lda * g->el,
                                  (size_t)k * g->el, (size_t)n, cudaMemcpyDeviceToDevice, g->s);
    gemm(g, 1, 0, k, n, m, 1.0, vb, ldv, b, ldb, 1.0, g->w, k);
    trmm(g, trans, k, n, t, ldt);
    if (ok(g) && n > 0) {
        double one = 1.0, mone = -1.0;
        float fone = 1.0f, fmone = -1.0f;
        g->bs = g->f64 ? cublasDgeam(g->h, CUBLAS_OP_N, CUBLAS_OP_N, k, (int)n, &one, a,
                                     (int)lda, &mone, (const double *)g->w, k, a, (int)lda)
                       : cublasSgeam(g->h, CUBLAS_OP_N, CUBLAS_OP_N, k, (int)n, &fone, a,
                                     (int)lda, &fmone, (const float *)g->w, k, a, (int)lda);
    }
    gemm(g, 0, 0, m, n, k, -1.0, vb, ldv, g->w, k, 1.0, b, ldb);
}

/* One panel by the kernel. */
static void panel(qr_gpu_t *g, int kind, int m, int n, void *a, int64_t lda, void *b,
                  int64_t ldb, void *t, int64_t ldt)
{
    if (ok(g))
        g->ce = dg_la_cuda_qr_panel(g->f64, kind, m, n, a, lda, b, ldb, t, ldt, g->s);
}

/* args: A_kk (INOUT), T_kk (OUT). As LAPACK geqrt: per ib block, the
 * panel, then its reflectors on the tile's columns to the right. */
int dg_la_geqrt_cuda(dagger_task_t *t)
{
    dagger_slot_t s[2];
    dg_la_par_t p;
    qr_gpu_t g;
    dagger_slot_t a0 = dagger_task_arg(t, 0);
    if (begin(&g, t, 2, s, &p, (int64_t)a0.dims[0], (int64_t)a0.dims[1], "geqrt"))
        return g.v ? end(&g) : DAGGER_ERR_TASK_FAILED;
    int m = (int)s[0].dims[0], n = (int)s[0].dims[1], k = MIN(m, n), ib = MIN(p.ib, k);
    int64_t lda = dg_la_ld(&s[0]), ldt = dg_la_ld(&s[1]);
    for (int i = 0; i < k && ok(&g); i += ib) {
        int bw = MIN(ib, k - i);
        void *aii = at(&g, s[0].data, lda, i, i), *ti = at(&g, s[1].data, ldt, 0, i);
        panel(&g, DG_LA_QR_GEQRT, m - i, bw, aii, lda, NULL, 0, ti, ldt);
        if (i + bw < n)
            larfb(&g, 1, aii, lda, m - i, bw, ti, ldt, at(&g, s[0].data, lda, i, i + bw), lda,
                  n - i - bw);
    }
    return end(&g);
}

/* args: V = A_kk (IN, unit lower), T_kk (IN), C (INOUT): C = op(Q) C, as
 * LAPACK gemqrt('L'): Q^T forward over the ib blocks, Q backward. */
int dg_la_gemqrt_cuda(dagger_task_t *t)
{
    dagger_slot_t s[3];
    dg_la_par_t p;
    qr_gpu_t g;
    dagger_slot_t c0 = dagger_task_arg(t, 2);
    if (begin(&g, t, 3, s, &p, (int64_t)c0.dims[0], (int64_t)c0.dims[1], "gemqrt"))
        return g.v ? end(&g) : DAGGER_ERR_TASK_FAILED;
    int vm = (int)s[0].dims[0], vn = (int)s[0].dims[1], k = MIN(vm, vn), ib = MIN(p.ib, k);
    int m = (int)s[2].dims[0], n = (int)s[2].dims[1];
    int64_t ldv = dg_la_ld(&s[0]), ldt = dg_la_ld(&s[1]), ldc = dg_la_ld(&s[2]);
    int nblk = k > 0 ? (k + ib - 1) / ib : 0;
    for (int q = 0; q < nblk && ok(&g); q++) {
        int i = (p.ta ? q : nblk - 1 - q) * ib, bw = MIN(ib, k - i);
        larfb(&g, p.ta, at(&g, s[0].data, ldv, i, i), ldv, m - i, bw,
              at(&g, s[1].data, ldt, 0, i), ldt, at(&g, s[2].data, ldc, i, 0), ldc, n);
    }
    return end(&g);
}

/* args: A_kk (INOUT, upper: R), A_mk (INOUT), T_mk (OUT). As LAPACK tpqrt
 * with l = 0: per ib block, the panel, then its reflectors on the pair's
 * columns to the right. */
int dg_la_tpqrt_cuda(dagger_task_t *t)
{
    dagger_slot_t s[3];
    dg_la_par_t p;
    qr_gpu_t g;
    dagger_slot_t b0 = dagger_task_arg(t, 1);
    if (begin(&g, t, 3, s, &p, 0, (int64_t)b0.dims[1], "tpqrt"))
        return g.v ? end(&g) : DAGGER_ERR_TASK_FAILED;
    int m = (int)s[1].dims[0], n = (int)s[1].dims[1], ib = MIN(p.ib, n);
    int64_t lda = dg_la_ld(&s[0]), ldb = dg_la_ld(&s[1]), ldt = dg_la_ld(&s[2]);
    for (int i = 0; i < n && ok(&g); i += ib) {
        int bw = MIN(ib, n - i);
        void *aii = at(&g, s[0].data, lda, i, i), *bi = at(&g, s[1].data, ldb, 0, i);
        void *ti = at(&g, s[2].data, ldt, 0, i);
        panel(&g, DG_LA_QR_TPQRT, m, bw, aii, lda, bi, ldb, ti, ldt);
        if (i + bw < n)
            tprfb(&g, 1, bi, ldb, m, bw, ti, ldt, at(&g, s[0].data, lda, i, i + bw), lda,
                  at(&g, s[1].data, ldb, 0, i + bw), ldb, n - i - bw);
    }
    return end(&g);
}

/* args: V = A_mk (IN), T_mk (IN), C_kn (INOUT), C_mn (INOUT): the pair =
 * op(Q) pair, as LAPACK tpmqrt('L', l = 0): Q^T forward, Q backward. */
int dg_la_tpmqrt_cuda(dagger_task_t *t)
{
    dagger_slot_t s[4];
    dg_la_par_t p;
    qr_gpu_t g;
    dagger_slot_t b0 = dagger_task_arg(t, 3);
    if (begin(&g, t, 4, s, &p, 0, (int64_t)b0.dims[1], "tpmqrt"))
        return g.v ? end(&g) : DAGGER_ERR_TASK_FAILED;
    int k = (int)s[0].dims[1], ib = MIN(p.ib, k), m = (int)s[3].dims[0], n = (int)s[3].dims[1];
    int64_t ldv = dg_la_ld(&s[0]), ldt = dg_la_ld(&s[1]), lda = dg_la_ld(&s[2]);
    int64_t ldb = dg_la_ld(&s[3]);
    int nblk = k > 0 ? (k + ib - 1) / ib : 0;
    for (int q = 0; q < nblk && ok(&g); q++) {
        int i = (p.ta ? q : nblk - 1 - q) * ib, bw = MIN(ib, k - i);
        tprfb(&g, p.ta, at(&g, s[0].data, ldv, 0, i), ldv, m, bw, at(&g, s[1].data, ldt, 0, i),
              ldt, at(&g, s[2].data, lda, i, 0), lda, s[3].data, ldb, n);
    }
    return end(&g);
}
