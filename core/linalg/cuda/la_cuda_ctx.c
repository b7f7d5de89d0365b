/* The CUDA tile codelets' shared state: cuBLAS/cuSOLVER handles per
 * (device, stream), and the pool of pinned info slots. Tile tasks run in
 * turns of the devices' processor actors, several devices at once, so both
 * are guarded by one lock (held for a table look-up, not for device work). */
#include <pthread.h>
#include <stdio.h>

#include "core/linalg/cuda/la_cuda.h"

/* Streams seen: each runtime makes a few per device, and a process may
 * start several runtimes; past the table's size the oldest entry's handles
 * are rebound to the new stream (cublasSetStream), never destroyed (that
 * would wait for the device on a worker). */
#define HANDLES_MAX 256

typedef struct la_handles {
    int dev;
    cudaStream_t stream;
    cublasHandle_t blas;
    cusolverDnHandle_t solver;
} la_handles_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static la_handles_t table[HANDLES_MAX];
static int nhandles, next_reuse;

/* Slots for factorisations whose info is not yet checked (in flight). */
#define INFO_SLOTS 4096
static dg_la_info_t *info_pool, *info_free;

int dg_la_cuda_load(dagger_task_t *t, int nviews, dagger_slot_t s[], dg_la_par_t *p)
{
    char why[512];
    if (dg_la_cuda_lib_load(why, sizeof(why)) != 0)
        return dagger_task_fail(t, "%s", why);
    if (dagger_task_nargs(t) < nviews + 1 || dg_la_par_get(t, p))
        return dagger_task_fail(t, "malformed linear algebra tile task");
    for (int i = 0; i < nviews; i++)
        s[i] = dagger_task_arg(t, i);
    return DAGGER_OK;
}

int dg_la_cublas_ok(dagger_task_t *t, cublasStatus_t st, const char *what)
{
    if (st == CUBLAS_STATUS_SUCCESS)
        return 0;
    return dagger_task_fail(t, "%s: cuBLAS failed: %s (cublasStatus_t %d)", what,
                            cublasGetStatusString(st), (int)st);
}

/* Binds a (new or reused) entry's handles to stream s of device dev. */
static int bind(dagger_task_t *t, la_handles_t *h, int dev, cudaStream_t s, int fresh)
{
    if (fresh) {
        cublasStatus_t bs = cublasCreate(&h->blas);
        if (bs != CUBLAS_STATUS_SUCCESS)
            return dg_la_cublas_ok(t, bs, "cublasCreate");
        cusolverStatus_t ss = cusolverDnCreate(&h->solver);
        if (ss != CUSOLVER_STATUS_SUCCESS) {
            cublasDestroy(h->blas);
            return dagger_task_fail(t, "cusolverDnCreate failed (cusolverStatus_t %d): "
                                    "out of device memory?", (int)ss);
        }
    }
    cublasStatus_t bs = cublasSetStream(h->blas, s);
    if (bs != CUBLAS_STATUS_SUCCESS)
        return dg_la_cublas_ok(t, bs, "cublasSetStream");
    if (cusolverDnSetStream(h->solver, s) != CUSOLVER_STATUS_SUCCESS)
        return dagger_task_fail(t, "cusolverDnSetStream failed");
    h->dev = dev;
    h->stream = s;
    return 0;
}

int dg_la_cuda_handles(dagger_task_t *t, cublasHandle_t *blas, cusolverDnHandle_t *solver)
{
    char why[512];
    if (dg_la_cuda_lib_load(why, sizeof(why)) != 0)
        return dagger_task_fail(t, "%s", why);
    cudaStream_t s = (cudaStream_t)dagger_task_stream(t);
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess)
        return dagger_task_fail(t, "cudaGetDevice failed: %s",
                                cudaGetErrorString(cudaGetLastError()));
    int rc = 0;
    pthread_mutex_lock(&lock);
    la_handles_t *h = NULL;
    for (int i = 0; i < nhandles && !h; i++)
        if (table[i].dev == dev && table[i].stream == s)
            h = &table[i];
    if (!h && nhandles < HANDLES_MAX) {
        h = &table[nhandles];
        rc = bind(t, h, dev, s, 1);
        nhandles += rc == 0;
    } else if (!h) {
        h = &table[next_reuse];
        next_reuse = (next_reuse + 1) % HANDLES_MAX;
        rc = bind(t, h, dev, s, 0);
    }
    if (rc == 0) {
        *blas = h->blas;
        *solver = h->solver;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

dg_la_info_t *dg_la_info_get(dagger_task_t *t)
{
    pthread_mutex_lock(&lock);
    if (!info_pool) {
        /* once per process: cudaHostAlloc is slow and synchronising */
        void *p = NULL;
        if (cudaHostAlloc(&p, INFO_SLOTS * sizeof(dg_la_info_t), cudaHostAllocPortable) ==
            cudaSuccess) {
            info_pool = p;
            for (int i = 0; i < INFO_SLOTS; i++) {
                info_pool[i].next = info_free;
                info_free = &info_pool[i];
            }
        }
    }
    dg_la_info_t *slot = info_free;
    if (slot)
        info_free = slot->next;
    pthread_mutex_unlock(&lock);
    if (!slot)
        dagger_task_fail(t, "%s", info_pool ? "more than 4096 CUDA factorisation tiles in flight "
                                              "(their info slots are all in use)"
                                            : "no page-locked host memory for cuSOLVER's info");
    return slot;
}

int dg_la_info_check(void *arg, int ok, char *detail, size_t cap)
{
    dg_la_info_t *slot = arg;
    int info = slot->info, routine = slot->routine;
    dg_la_par_t par = slot->par;
    pthread_mutex_lock(&lock);
    slot->next = info_free;
    info_free = slot;
    pthread_mutex_unlock(&lock);
    if (!ok || info == 0)
        return 0;
    if (info < 0)
        snprintf(detail, cap, "cuSOLVER rejected argument %d", -info);
    else
        dg_la_info_msg(detail, cap, routine, &par, info, "cuSOLVER");
    return 1;
}
