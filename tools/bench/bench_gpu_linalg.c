/* Tiled GPU Cholesky and GEMM through the public API beside one cuSOLVER
 * dpotrf / cuBLAS dgemm call on the same matrices, in the same run, the
 * variants alternated round by round (issue 13's benchmark; budget 85%):
 *
 *   dagger host arrays   dagger_linalg_potrf / dagger_linalg_gemm in a region
 *              whose scope is the CUDA devices, timed from region begin to
 *              end, on arrays homed in host memory: the tiles' trip to the GPU,
 *              the tile tasks, and the results' trip back
 *   dagger device arrays the same on arrays homed on the GPU
 *              (dagger_array_desc_t.home = DAGGER_PROC_CUDA): the tile tasks
 *              alone, what the budget compares with the kernel
 *   cuda h2h   the same trip for one library call: copies of the host
 *              matrices (pinned memory, as the arrays' large buffers are:
 *              DAGGER_GPU_PIN_HOST) to the device, the call, the result's
 *              copy back, in order on one stream
 *   kernel     the call alone on data already on the device (CUDA events):
 *              the library's limit, which no host-to-host variant reaches
 *
 * The first round's results of both Dagger-C variants are compared with the
 * library's (relative Frobenius difference; the lower triangle for
 * Cholesky).
 * Rates count 2 N^3 flops for gemm and N^3 / 3 for potrf. One process on
 * one GPU (the processor table's first CUDA device), f64.
 *
 *   bench_gpu_linalg [results-file [N:nb,...]]
 *     default /tmp/bench_gpu_linalg.txt and 16384:4096 (tools/gpu-check's run:
 *     the better of the tile sizes measured at N = 16384, docs/linalg.md;
 *     32768:4096 by argument: by our count 70-95 GB of pinned host memory)
 *     BENCH_ROUNDS (default 3; 2 for N > 16384)
 *     BENCH_DEVICE_ONLY=1: only the device arrays and the kernel are timed
 *     (no host arrays, no h2h rounds: a quarter of the host memory, for
 *     N = 32768); the library's reference is still computed once
 *     BENCH_ROUTINE=dpotrf or dgemm: that routine only (default both)
 *
 * Without a CUDA device it says so and exits 0. Not a test. */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dagger.h>

#define BENCH_NAME "bench_gpu_linalg"
#include "tools/bench/bench_gpu_common.h"

#define MAX_ROUNDS 9

#define BL(call) \
    do { if ((call) != CUBLAS_STATUS_SUCCESS) die(#call, "cuBLAS error"); } while (0)
#define SO(call) \
    do { if ((call) != CUSOLVER_STATUS_SUCCESS) die(#call, "cuSOLVER error"); } while (0)

/* The SPD matrix of the Cholesky rows: U(0, 1) symmetric, plus n on the
 * diagonal. */
static double spd_fn(const size_t idx[], int nd, const void *args)
{
    (void)nd;
    uint64_t n;
    memcpy(&n, args, sizeof n);
    size_t lo = idx[0] < idx[1] ? idx[0] : idx[1], hi = idx[0] < idx[1] ? idx[1] : idx[0];
    return dagger_rand_uniform(11, lo + hi * n) + (idx[0] == idx[1] ? (double)n : 0.0);
}

typedef struct lib {
    cublasHandle_t blas;
    cusolverDnHandle_t sol;
    cudaStream_t s;
    cudaEvent_t e0, e1;
} lib_t;

typedef struct bench {
    const char *tag;         /* "result" for the rows, "warm-up" before them */
    dagger_runtime_t *rt;
    dagger_index_fn_id_t spd;
    lib_t lib;
    FILE *out;
} bench_t;

/* home: 0 host memory, 1 the GPU's (dagger_array_desc_t.home). */
static dagger_array_t *matrix(bench_t *b, size_t n, size_t nb, int spd, uint64_t seed, int home)
{
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {n, n}, .block = {nb, nb},
                             .home = home ? DAGGER_PROC_CUDA : 0};
    dagger_array_t *a;
    uint64_t args = n;
    if (spd)
        OK(dagger_array_from_fn(b->rt, &d, b->spd, &args, sizeof args, &a));
    else
        OK(dagger_array_rand(b->rt, &d, seed, &a));
    return a;
}

/* The plain CUDA side's host matrices are pinned memory (cudaMallocHost), the
 * fastest a program can copy from, as the arrays' large buffers are
 * (DAGGER_GPU_PIN_HOST). */
static double *host_buffer(size_t n)
{
    double *h = NULL;
    CU(cudaMallocHost((void **)&h, n * n * sizeof *h));
    return h;
}

static double *host_copy(dagger_array_t *a, size_t n)
{
    double *h = host_buffer(n);
    OK(dagger_array_collect(a, h));
    return h;
}

/* ||x - ref||_F / ||ref||_F, on the lower triangle when lower. */
static double rel_diff(const double *x, const double *ref, size_t n, int lower)
{
    double num = 0, den = 0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = lower ? j : 0; i < n; i++) {
            double d = x[i + j * n] - ref[i + j * n];
            num += d * d;
            den += ref[i + j * n] * ref[i + j * n];
        }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* One region of the routine on the CUDA devices, timed. */
static double dagger_round(bench_t *b, int gemm, dagger_array_t *A, dagger_array_t *B,
                           dagger_array_t *C)
{
    dagger_scope_t gpus = {.kinds = DAGGER_PROC_CUDA};
    dagger_region_t *r;
    double t = mono();
    OK(dagger_region_begin(b->rt, &gpus, &r));
    if (gemm)
        OK(dagger_linalg_gemm(r, DAGGER_LA_NOTRANS, DAGGER_LA_NOTRANS, 1.0, A, B, 0.5, C));
    else
        OK(dagger_linalg_potrf(r, DAGGER_LA_LOWER, A));
    OK(dagger_region_end(r));
    return mono() - t;
}

/* Device buffers and the cuSOLVER workspace of one size. */
typedef struct gpu_bufs {
    double *a, *b, *c, *a0, *work;
    int *info;
    int lwork;
} gpu_bufs_t;

static void call(lib_t *l, gpu_bufs_t *d, int gemm, int n)
{
    const double one = 1.0, half = 0.5;
    if (gemm)
        BL(cublasDgemm(l->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, d->a, n, d->b, n, &half,
                       d->c, n));
    else
        SO(cusolverDnDpotrf(l->sol, CUBLAS_FILL_MODE_LOWER, n, d->a, n, d->work, d->lwork,
                            d->info));
}

/* The library call with its data's trip from and to host memory, all in
 * order on the library's stream; the result lands in res. */
static double h2h_round(lib_t *l, gpu_bufs_t *d, int gemm, size_t n, const double *hA,
                        const double *hB, const double *hC, double *res)
{
    size_t bytes = n * n * sizeof(double);
    double t = mono();
    CU(cudaMemcpyAsync(d->a, hA, bytes, cudaMemcpyHostToDevice, l->s));
    if (gemm) {
        CU(cudaMemcpyAsync(d->b, hB, bytes, cudaMemcpyHostToDevice, l->s));
        CU(cudaMemcpyAsync(d->c, hC, bytes, cudaMemcpyHostToDevice, l->s));
    }
    call(l, d, gemm, (int)n);
    CU(cudaMemcpyAsync(res, gemm ? d->c : d->a, bytes, cudaMemcpyDeviceToHost, l->s));
    CU(cudaStreamSynchronize(l->s));
    return mono() - t;
}

/* The call alone (events); potrf's input is restored first, untimed. */
static double kernel_round(lib_t *l, gpu_bufs_t *d, int gemm, size_t n)
{
    if (!gemm)
        CU(cudaMemcpyAsync(d->a, d->a0, n * n * sizeof(double), cudaMemcpyDeviceToDevice, l->s));
    CU(cudaEventRecord(l->e0, l->s));
    call(l, d, gemm, (int)n);
    CU(cudaEventRecord(l->e1, l->s));
    CU(cudaEventSynchronize(l->e1));
    float ms = 0;
    CU(cudaEventElapsedTime(&ms, l->e0, l->e1));
    return ms / 1e3;
}

enum { V_HOST, V_DEV, V_H2H, V_KERNEL, NV };

static void row(bench_t *b, int gemm, size_t n, size_t nb, double t[NV][MAX_ROUNDS], int rounds,
                const double diff[2])
{
    double flops = gemm ? 2.0 * (double)n * (double)n * (double)n
                        : (double)n * (double)n * (double)n / 3.0;
    double med[NV], lo[NV], hi[NV];
    for (int v = 0; v < NV; v++) {
        qsort(t[v], (size_t)rounds, sizeof(double), cmp_double);
        /* rates: the fastest time is the highest rate */
        med[v] = flops / t[v][rounds / 2] / 1e12;
        lo[v] = flops / t[v][rounds - 1] / 1e12;
        hi[v] = flops / t[v][0] / 1e12;
    }
    char line[640];
    snprintf(line, sizeof line,
             "%s: %s N=%zu nb=%zu: dagger host arrays %.2f TFLOP/s (%.2f-%.2f), device arrays "
             "%.2f (%.2f-%.2f), cuda h2h %.2f (%.2f-%.2f), kernel %.2f (%.2f-%.2f); host/h2h "
             "%.2f, device/kernel %.2f (budget 0.85)%s; diff %.1e, %.1e\n",
             b->tag, gemm ? "dgemm " : "dpotrf", n, nb, med[V_HOST], lo[V_HOST], hi[V_HOST],
             med[V_DEV], lo[V_DEV], hi[V_DEV], med[V_H2H], lo[V_H2H], hi[V_H2H], med[V_KERNEL],
             lo[V_KERNEL], hi[V_KERNEL], med[V_HOST] / med[V_H2H], med[V_DEV] / med[V_KERNEL],
             med[V_DEV] / med[V_KERNEL] < 0.85 ? " BELOW BUDGET" : "", diff[0], diff[1]);
    fputs(line, stdout);
    if (b->out && strcmp(b->tag, "result") == 0)
        fputs(line, b->out);
    fflush(stdout);
}

static void one_size(bench_t *b, int gemm, size_t n, size_t nb, int rounds, int dev_only)
{
    lib_t *l = &b->lib;
    size_t bytes = n * n * sizeof(double);
    int out = gemm ? 2 : 0; /* the matrix the routine overwrites */
    /* The same matrices homed in host memory (h = 0) and on the GPU (1). */
    dagger_array_t *M[2][3] = {{NULL}};
    for (int h = dev_only; h < 2; h++) {
        M[h][0] = matrix(b, n, nb, !gemm, 1, h);
        if (gemm) {
            M[h][1] = matrix(b, n, nb, 0, 2, h);
            M[h][2] = matrix(b, n, nb, 0, 3, h);
        }
    }
    int h0 = dev_only; /* the host copies come from either: the same values */
    double *hA = host_copy(M[h0][0], n), *hB = NULL, *hC = NULL, *res = host_buffer(n);
    if (gemm) {
        hB = host_copy(M[h0][1], n);
        hC = host_copy(M[h0][2], n);
    }
    gpu_bufs_t d = {0};
    CU(cudaMalloc((void **)&d.a, bytes));
    if (gemm) {
        CU(cudaMalloc((void **)&d.b, bytes));
        CU(cudaMalloc((void **)&d.c, bytes));
    } else {
        CU(cudaMalloc((void **)&d.a0, bytes));
        CU(cudaMemcpy(d.a0, hA, bytes, cudaMemcpyHostToDevice));
        SO(cusolverDnDpotrf_bufferSize(l->sol, CUBLAS_FILL_MODE_LOWER, (int)n, d.a0, (int)n,
                                       &d.lwork));
        CU(cudaMalloc((void **)&d.work, (size_t)d.lwork * sizeof(double)));
        CU(cudaMalloc((void **)&d.info, sizeof(int)));
    }
    /* the library's result, once: each Dagger-C variant's first round is
     * compared with it (every h2h round computes it again from the same
     * inputs) */
    (void)h2h_round(l, &d, gemm, n, hA, hB, hC, res);
    double t[NV][MAX_ROUNDS], diff[2] = {-1, -1};
    for (int r = 0; r < rounds; r++) {
        /* the order of the four rotates from round to round */
        for (int k = 0; k < NV; k++) {
            int v = (k + r) % NV;
            if (dev_only && (v == V_HOST || v == V_H2H)) {
                t[v][r] = 1e300; /* not run: printed as 0 */
            } else if (v == V_HOST || v == V_DEV) {
                if (r > 0) { /* the routine works in place: a fresh input */
                    OK(dagger_array_destroy(M[v][out]));
                    M[v][out] = matrix(b, n, nb, !gemm, gemm ? 3 : 1, v);
                }
                t[v][r] = dagger_round(b, gemm, M[v][0], M[v][1], M[v][2]);
                if (r == 0) {
                    double *got = host_copy(M[v][out], n);
                    diff[v] = rel_diff(got, res, n, !gemm);
                    CU(cudaFreeHost(got));
                }
            } else if (v == V_H2H) {
                t[v][r] = h2h_round(l, &d, gemm, n, hA, hB, hC, res);
            } else {
                t[v][r] = kernel_round(l, &d, gemm, n);
            }
        }
    }
    row(b, gemm, n, nb, t, rounds, diff);
    void *bufs[] = {d.a, d.b, d.c, d.a0, d.work, d.info};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i])
            CU(cudaFree(bufs[i]));
    double *hosts[] = {hA, hB, hC, res};
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++)
        if (hosts[i])
            CU(cudaFreeHost(hosts[i]));
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < 3; i++)
            if (M[h][i])
                OK(dagger_array_destroy(M[h][i]));
}

int main(int argc, char **argv)
{
    const char *outp = argc > 1 ? argv[1] : "/tmp/bench_gpu_linalg.txt";
    const char *sizes = argc > 2 ? argv[2] : "16384:4096";
    bench_t b = {0};
    OK(dagger_init(NULL, NULL, NULL, &b.rt));
    int cuda = 0, np = dagger_procs(b.rt, NULL, 0);
    dagger_proc_info_t *p = calloc((size_t)np, sizeof *p);
    np = dagger_procs(b.rt, p, np);
    for (int i = 0; i < np; i++)
        cuda += p[i].kind == DAGGER_PROC_CUDA;
    free(p);
    if (!cuda) {
        printf("result: skipped: no CUDA device\n");
        OK(dagger_finalize(b.rt));
        return 0;
    }
    struct cudaDeviceProp prop;
    CU(cudaGetDeviceProperties(&prop, 0));
    printf("bench_gpu_linalg on %s (%d SMs, %.0f GiB), f64, %s\n", prop.name,
           prop.multiProcessorCount, (double)prop.totalGlobalMem / (1u << 30), sizes);
    b.out = fopen(outp, "w");
    OK(dagger_index_fn_register(b.rt, "bench.gpu.spd", spd_fn, &b.spd));
    CU(cudaSetDevice(0));
    CU(cudaStreamCreateWithFlags(&b.lib.s, cudaStreamNonBlocking));
    CU(cudaEventCreate(&b.lib.e0));
    CU(cudaEventCreate(&b.lib.e1));
    BL(cublasCreate(&b.lib.blas));
    BL(cublasSetStream(b.lib.blas, b.lib.s));
    SO(cusolverDnCreate(&b.lib.sol));
    SO(cusolverDnSetStream(b.lib.sol, b.lib.s));
    const char *env = getenv("BENCH_ROUNDS");
    int rounds_env = env ? atoi(env) : 0;
    const char *only = getenv("BENCH_DEVICE_ONLY");
    int dev_only = only && strcmp(only, "1") == 0;
    const char *routine = getenv("BENCH_ROUTINE");
    int do_potrf = !routine || !strcmp(routine, "dpotrf");
    int do_gemm = !routine || !strcmp(routine, "dgemm");
    if (!do_potrf && !do_gemm)
        die("BENCH_ROUTINE", "use dpotrf or dgemm (or leave it unset for both)");
    /* warm-up: the libraries' loads and handles, on both sides */
    b.tag = "warm-up";
    one_size(&b, 1, 2048, 1024, 1, 0);
    one_size(&b, 0, 2048, 1024, 1, 0);
    b.tag = "result";
    for (const char *s = sizes; *s;) {
        size_t n = 0, nb = 0;
        int used = 0;
        if (sscanf(s, "%zu:%zu%n", &n, &nb, &used) != 2 || n == 0 || nb == 0)
            die("sizes", "expected N:nb[,N:nb...]");
        int rounds = rounds_env > 0 ? rounds_env : n > 16384 ? 2 : 3;
        rounds = rounds > MAX_ROUNDS ? MAX_ROUNDS : rounds;
        if (do_potrf)
            one_size(&b, 0, n, nb, rounds, dev_only);
        if (do_gemm)
            one_size(&b, 1, n, nb, rounds, dev_only);
        s += used;
        s += *s == ',';
    }
    cublasDestroy(b.lib.blas);
    cusolverDnDestroy(b.lib.sol);
    if (b.out)
        fclose(b.out);
    printf("results in %s\n", outp);
    OK(dagger_finalize(b.rt));
    return 0;
}
