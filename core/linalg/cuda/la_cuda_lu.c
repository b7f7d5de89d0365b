/* LU's CUDA tile codelets, queued on the task's stream: the panel's
 * factorisation (cuSOLVER getrf, its 32-bit pivots made the CPU codelet's
 * global 64-bit ones by a kernel of ours), the row interchanges (a kernel
 * of ours, pivots from the panel's pivot tile or by value), and a later
 * block column's whole update of one step (those interchanges, then cuBLAS
 * trsm and gemm). Scratch comes from the stream-ordered allocator;
 * getrf's info, and a laswp's verdict on its pivots, reach a pinned slot
 * that the task's completion check reads (la_cuda_ctx.c), so a singular
 * panel fails the task with the CPU kernel's message, on every rank. */
#include "core/linalg/cuda/la_cuda.h"
#include "core/linalg/cuda/la_cuda_kernels.h"

#define ALIGN16(x) (((x) + 15) & ~(size_t)15)

/* A slot for the task's verdict: routine and parameters set, info 0, the
 * completion check registered (it gives the slot back, failure or not). */
static dg_la_info_t *verdict(dagger_task_t *t, int routine, const dg_la_par_t *p)
{
    dg_la_info_t *slot = dg_la_info_get(t);
    if (!slot)
        return NULL;
    slot->info = 0;
    slot->routine = routine;
    slot->par = *p;
    dagger_task_after(t, dg_la_info_check, slot);
    return slot;
}

/* Queues getrf on the panel a (m x n) with pivots out (kb entries, global):
 * scratch = workspace, 32-bit pivots, devInfo, freed in stream order. */
static cusolverStatus_t queue_getrf(cusolverDnHandle_t h, cudaStream_t s, const dagger_slot_t *a,
                                    int64_t *out, int kb, int64_t row0, dg_la_info_t *slot,
                                    cudaError_t *ce)
{
    int m = (int)a->dims[0], n = (int)a->dims[1], ld = dg_la_ld(a), lwork = 0;
    int f64 = a->dtype == DAGGER_F64, mn = m < n ? m : n;
    cusolverStatus_t st = f64 ? cusolverDnDgetrf_bufferSize(h, m, n, a->data, ld, &lwork)
                              : cusolverDnSgetrf_bufferSize(h, m, n, a->data, ld, &lwork);
    if (st != CUSOLVER_STATUS_SUCCESS)
        return st;
    size_t wbytes = ALIGN16((size_t)lwork * (f64 ? sizeof(double) : sizeof(float)));
    size_t pbytes = ALIGN16((size_t)(mn > 0 ? mn : 1) * sizeof(int));
    char *work = NULL;
    *ce = cudaMallocAsync((void **)&work, wbytes + pbytes + sizeof(int), s);
    if (*ce != cudaSuccess)
        return CUSOLVER_STATUS_ALLOC_FAILED;
    int *ipiv = (int *)(work + wbytes), *dinfo = (int *)(work + wbytes + pbytes);
    st = f64 ? cusolverDnDgetrf(h, m, n, a->data, ld, (double *)work, ipiv, dinfo)
             : cusolverDnSgetrf(h, m, n, a->data, ld, (float *)work, ipiv, dinfo);
    if (st == CUSOLVER_STATUS_SUCCESS)
        *ce = dg_la_cuda_pivots(ipiv, out, kb < mn ? kb : mn, row0, s);
    if (st == CUSOLVER_STATUS_SUCCESS && *ce == cudaSuccess)
        *ce = cudaMemcpyAsync(&slot->info, dinfo, sizeof(int), cudaMemcpyDeviceToHost, s);
    cudaError_t fe = cudaFreeAsync(work, s);
    if (*ce == cudaSuccess)
        *ce = fe;
    return st;
}

/* LU of a panel (rows row0.. of one block column): args the panel, the
 * step's pivot block (I64, global and 1-based out). */
int dg_la_getrf_cuda(dagger_task_t *t)
{
    dagger_slot_t s[2];
    dg_la_par_t p;
    cublasHandle_t b;
    cusolverDnHandle_t h;
    if (dg_la_cuda_load(t, 2, s, &p) || dg_la_cuda_handles(t, &b, &h))
        return DAGGER_ERR_TASK_FAILED;
    dg_la_info_t *slot = verdict(t, DG_LA_CL_GETRF, &p);
    if (!slot)
        return DAGGER_ERR_TASK_FAILED;
    cudaError_t ce = cudaSuccess;
    cusolverStatus_t st = queue_getrf(h, (cudaStream_t)dagger_task_stream(t), &s[0], s[1].data,
                                      (int)s[1].dims[0], p.row0, slot, &ce);
    if (st != CUSOLVER_STATUS_SUCCESS)
        return dagger_task_fail(t, "getrf: cuSOLVER failed (cusolverStatus_t %d)", (int)st);
    if (ce != cudaSuccess)
        return dagger_task_fail(t, "getrf: %s", cudaGetErrorString(ce));
    return DAGGER_OK;
}

/* The interchanges of kb pivots (global by row0) on view a: pivots in
 * device memory (dpiv), or host bytes (hpiv) copied to device scratch
 * first (a copy from pageable memory is staged before the call returns, so
 * the value's bytes may go once the task returns). The kernel's verdict on
 * the pivots reaches the task's completion check through a pinned slot. */
static int swap_rows(dagger_task_t *t, const dagger_slot_t *a, const dg_la_par_t *p,
                     const int64_t *dpiv, const void *hpiv, int kb, int64_t row0)
{
    dg_la_info_t *slot = verdict(t, DG_LA_CL_LASWP, p);
    if (!slot)
        return DAGGER_ERR_TASK_FAILED;
    cudaStream_t st = (cudaStream_t)dagger_task_stream(t);
    size_t pbytes = hpiv ? ALIGN16((size_t)kb * sizeof(int64_t)) : 0;
    char *scratch = NULL;
    cudaError_t ce = cudaMallocAsync((void **)&scratch, pbytes + sizeof(int), st);
    if (ce == cudaSuccess) {
        int *dbad = (int *)(scratch + pbytes);
        const int64_t *piv = hpiv ? (const int64_t *)scratch : dpiv;
        if (hpiv)
            ce = cudaMemcpyAsync(scratch, hpiv, (size_t)kb * sizeof(int64_t),
                                 cudaMemcpyHostToDevice, st);
        if (ce == cudaSuccess)
            ce = cudaMemsetAsync(dbad, 0, sizeof(int), st);
        if (ce == cudaSuccess)
            ce = dg_la_cuda_laswp(a->dtype == DAGGER_F64, a->data, dg_la_ld(a),
                                  (int64_t)a->dims[0], a->ndims >= 2 ? (int64_t)a->dims[1] : 1,
                                  piv, kb, row0, dbad, st);
        if (ce == cudaSuccess)
            ce = cudaMemcpyAsync(&slot->info, dbad, sizeof(int), cudaMemcpyDeviceToHost, st);
        cudaError_t fe = cudaFreeAsync(scratch, st);
        ce = ce != cudaSuccess ? ce : fe;
    }
    if (ce != cudaSuccess)
        return dagger_task_fail(t, "laswp: %s", cudaGetErrorString(ce));
    return DAGGER_OK;
}

/* A panel's interchanges on rows row0.. of another block column: args that
 * view, the step's pivot block (I64, global, in device memory). */
int dg_la_laswp_cuda(dagger_task_t *t)
{
    dagger_slot_t s[2];
    dg_la_par_t p;
    if (dg_la_cuda_load(t, 2, s, &p))
        return DAGGER_ERR_TASK_FAILED;
    return swap_rows(t, &s[0], &p, s[1].data, NULL, (int)s[1].dims[0], p.row0);
}

/* Step row0's update of a block column right of the panel in one task (the
 * CPU kernel's arguments: the column's rows row0.., the step's pivot block,
 * the panel's rows row0.. down to the last row updated here): the
 * interchanges, then cuBLAS's unit-lower trsm of the top kb rows and gemm
 * of the rows below, all on the task's stream. */
int dg_la_lu_update_cuda(dagger_task_t *t)
{
    dagger_slot_t s[3];
    dg_la_par_t p;
    cublasHandle_t b;
    cusolverDnHandle_t h;
    if (dg_la_cuda_load(t, 3, s, &p) || dg_la_cuda_handles(t, &b, &h))
        return DAGGER_ERR_TASK_FAILED;
    if (dg_la_lu_update_check(t, s))
        return DAGGER_ERR_TASK_FAILED;
    int w = (int)s[0].dims[1], kb = (int)s[1].dims[0], lm = (int)s[2].dims[0];
    int ldc = dg_la_ld(&s[0]), ldl = dg_la_ld(&s[2]);
    int rc = swap_rows(t, &s[0], &p, s[1].data, NULL, kb, p.row0);
    if (rc)
        return rc;
    cublasStatus_t st;
    /* T the element type, P cuBLAS's letter for it */
#define LU_RIGHT(T, P)                                                                         \
    do {                                                                                       \
        const T one = 1, minus = -1, *l = s[2].data;                                           \
        T *c = s[0].data;                                                                      \
        st = cublas##P##trsm(b, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,         \
                             CUBLAS_DIAG_UNIT, kb, w, &one, l, ldl, c, ldc);                   \
        if (st == CUBLAS_STATUS_SUCCESS && lm > kb)                                            \
            st = cublas##P##gemm(b, CUBLAS_OP_N, CUBLAS_OP_N, lm - kb, w, kb, &minus, l + kb,  \
                                 ldl, c, ldc, &one, c + kb, ldc);                              \
    } while (0)
    if (s[0].dtype == DAGGER_F64)
        LU_RIGHT(double, D);
    else
        LU_RIGHT(float, S);
#undef LU_RIGHT
    return dg_la_cublas_ok(t, st, "lu_update");
}

/* Interchanges given by value (int64_t, 1-based relative to the view):
 * args the view, the pivots (host bytes). */
int dg_la_laswp_v_cuda(dagger_task_t *t)
{
    dagger_slot_t s[2];
    dg_la_par_t p;
    if (dg_la_cuda_load(t, 2, s, &p))
        return DAGGER_ERR_TASK_FAILED;
    if (dagger_task_nargs(t) != 3)
        return dagger_task_fail(t, "malformed laswp_value tile task");
    return swap_rows(t, &s[0], &p, NULL, s[1].data, (int)(s[1].bytes / sizeof(int64_t)), 0);
}
