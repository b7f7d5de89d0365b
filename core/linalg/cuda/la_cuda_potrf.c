/* cuSOLVER Cholesky of a diagonal tile, queued on the task's stream. The
 * workspace and devInfo come from the stream-ordered allocator
 * (cudaMallocAsync: the device's memory pool, freed in stream order, so no
 * call waits for the device); info is copied to a pinned slot after the
 * routine and checked when the task's event passes (dagger_task_after), so a
 * matrix that is not positive definite fails the task with the CPU
 * kernel's message. */
#include "core/linalg/cuda/la_cuda.h"

/* Queues potrf on A with workspace lwork elements; frees it in order. */
static cusolverStatus_t queue(cusolverDnHandle_t h, cudaStream_t s, const dagger_slot_t *a,
                              cublasFillMode_t uplo, dg_la_info_t *slot, cudaError_t *ce)
{
    int n = (int)a->dims[0], ld = dg_la_ld(a), lwork = 0;
    int f64 = a->dtype == DAGGER_F64;
    cusolverStatus_t st = f64 ? cusolverDnDpotrf_bufferSize(h, uplo, n, a->data, ld, &lwork)
                              : cusolverDnSpotrf_bufferSize(h, uplo, n, a->data, ld, &lwork);
    if (st != CUSOLVER_STATUS_SUCCESS)
        return st;
    size_t el = f64 ? sizeof(double) : sizeof(float);
    size_t wbytes = ((size_t)lwork * el + 15) & ~(size_t)15;
    char *work = NULL;
    *ce = cudaMallocAsync((void **)&work, wbytes + sizeof(int), s);
    if (*ce != cudaSuccess)
        return CUSOLVER_STATUS_ALLOC_FAILED;
    int *dinfo = (int *)(work + wbytes);
    st = f64 ? cusolverDnDpotrf(h, uplo, n, a->data, ld, (double *)work, lwork, dinfo)
             : cusolverDnSpotrf(h, uplo, n, a->data, ld, (float *)work, lwork, dinfo);
    if (st == CUSOLVER_STATUS_SUCCESS)
        *ce = cudaMemcpyAsync(&slot->info, dinfo, sizeof(int), cudaMemcpyDeviceToHost, s);
    cudaError_t fe = cudaFreeAsync(work, s);
    if (*ce == cudaSuccess)
        *ce = fe;
    return st;
}

int dg_la_potrf_cuda(dagger_task_t *t)
{
    dagger_slot_t a;
    dg_la_par_t p;
    cublasHandle_t b;
    cusolverDnHandle_t h;
    if (dg_la_cuda_load(t, 1, &a, &p) || dg_la_cuda_handles(t, &b, &h))
        return DAGGER_ERR_TASK_FAILED;
    dg_la_info_t *slot = dg_la_info_get(t);
    if (!slot)
        return DAGGER_ERR_TASK_FAILED;
    slot->info = 0;
    slot->routine = DG_LA_CL_POTRF;
    slot->par = p;
    cudaError_t ce = cudaSuccess;
    cusolverStatus_t st = queue(h, (cudaStream_t)dagger_task_stream(t), &a,
                                p.uplo ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER, slot,
                                &ce);
    /* registered even on failure: the check gives the slot back */
    dagger_task_after(t, dg_la_info_check, slot);
    if (ce != cudaSuccess)
        return dagger_task_fail(t, "potrf: %s", cudaGetErrorString(ce));
    if (st != CUSOLVER_STATUS_SUCCESS)
        return dagger_task_fail(t, "potrf: cuSOLVER failed (cusolverStatus_t %d)", (int)st);
    return DAGGER_OK;
}
