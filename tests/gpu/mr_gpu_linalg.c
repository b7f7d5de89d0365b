/* The linear algebra routines on a device scope: a region whose scope names
 * the device kind under test (test devices here, CUDA devices under
 * DG_GPU_SUITE=cuda) places the tile tasks on the devices' processor actors
 * (counted by each device: the test fails if they ran on CPUs) and gives
 * LAPACK's results to the same bounds as on CPUs: Cholesky, gemm, LU (in
 * column-panel layout, the CUDA tiles' cuSOLVER getrf and kernels of ours)
 * and QR (the CUDA tiles' panel kernels of ours and cuBLAS). A HIP scope fails on every
 * rank: no linalg codelet has a HIP implementation (Debian ships no
 * rocBLAS/rocSOLVER). */
#include "core/runtime/tasks.h"
#include "core/runtime/runtime.h"
#include "devices/dev.h"
#include "gpu/gpu_kind.h"
#include "tests/core/linalg/la_util.h"

/* Tasks this rank's devices of the kind under test have run so far (all,
 * or those on urgent streams: DAGGER_GPU_PRIORITY). */
static uint64_t launches_of(dagger_runtime_t *rt, int urgent)
{
    const char *be = gpu_kind() == DAGGER_PROC_CUDA ? "cuda" : "testdev";
    const dg_devs_t *ds = dg_devs_of(rt->tasks->exec);
    uint64_t n = 0;
    for (int d = 0; d < ds->n; d++)
        if (strcmp(ds->dev[d].be->name, be) == 0)
            n += atomic_load(urgent ? &ds->dev[d].launched_urgent : &ds->dev[d].launched);
    return n;
}

static uint64_t device_launches(dagger_runtime_t *rt)
{
    return launches_of(rt, 0);
}

/* Tasks this rank's devices queued behind a dependency that had not
 * finished (DAGGER_GPU_CHAIN=1; the _chain variants set it). */
static uint64_t chained_launches(dagger_runtime_t *rt)
{
    const dg_devs_t *ds = dg_devs_of(rt->tasks->exec);
    uint64_t n = 0;
    for (int d = 0; d < ds->n; d++)
        n += atomic_load(&ds->dev[d].chained);
    return n;
}

/* Every tile task of the region ran on this rank's device: the region's
 * local task count equals the device's launches (test devices and CUDA
 * devices alike). Rank 0 owns tile (0, 0), so it ran some; on 3 ranks a
 * small matrix may leave a rank none. */
static void expect_on_device(dagger_runtime_t *rt, uint64_t before, const char *what)
{
    dagger_region_stats_t st;
    AR_OK(dagger_region_stats(rt, &st));
    uint64_t ran = device_launches(rt) - before;
    cr_assert(st.tasks_local > 0 || dagger_rank(rt) != 0, "%s: rank %d ran no tile task", what,
              dagger_rank(rt));
    cr_assert_eq(ran, st.tasks_local, "%s: rank %d ran %llu of its %llu tile tasks on its %s",
                 what, dagger_rank(rt), (unsigned long long)ran,
                 (unsigned long long)st.tasks_local, gpu_kind_name());
}

/* Runs one routine in a region of the device kind. */
#define ON_DEVICE(rt, what, call)                                                           \
    do {                                                                                    \
        dagger_scope_t dev_scope = {.kinds = gpu_kind()};                                   \
        dagger_region_t *r;                                                                 \
        uint64_t before = device_launches(rt);                                              \
        AR_OK(dagger_region_begin(rt, &dev_scope, &r));                                     \
        AR_OK(call);                                                                        \
        AR_OK(dagger_region_end(r));                                                        \
        expect_on_device(rt, before, what);                                                 \
    } while (0)

Test(gpu_linalg, cholesky_on_the_device_scope_equals_lapack)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    for (int d = 0; d < 2; d++)
        for (int up = 0; up < 2; up++) {
            size_t n = 100; /* tiles that do not divide n */
            dagger_array_t *A = la_spd(rt, types[d], n, 32, 32);
            double *ref = ar_collect(A);
            uint64_t urgent = launches_of(rt, 1);
            ON_DEVICE(rt, "potrf", dagger_linalg_potrf(r, up, A));
            /* rank 0 owns tile (0, 0): its potrf, a task of priority 4 */
            cr_assert(dagger_rank(rt) != 0 || launches_of(rt, 1) > urgent,
                      "the next panel's tasks ran on no urgent stream");
            cr_assert_eq(LAPACKE_dpotrf(LAPACK_COL_MAJOR, up ? 'U' : 'L', (int)n, ref, (int)n), 0);
            double *got = ar_collect(A);
            LA_CLOSE(got, ref, n, n, up ? 'U' : 'L', types[d], "potrf on the device scope");
            free(ref), free(got);
            dagger_array_destroy(A);
        }
    /* rank 0's potrf of tile (0, 0) and the trsm of a tile below it that
     * it owns: with DAGGER_GPU_CHAIN=1 the trsm goes behind the potrf's
     * event (in one of the eight factorisations at least) */
    const char *chain = getenv("DAGGER_GPU_CHAIN");
    if (chain && !strcmp(chain, "1"))
        cr_assert(dagger_rank(rt) != 0 || chained_launches(rt) > 0,
                  "DAGGER_GPU_CHAIN=1: no tile task was queued behind another");
    AR_OK(dagger_finalize(rt));
}

Test(gpu_linalg, gemm_on_the_device_scope_equals_blas)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    for (int d = 0; d < 2; d++) {
        la_gemm_case_t g = la_gemm_case(rt, types[d], 0, 1, 70, 50, 60, 32, 32, 24);
        ON_DEVICE(rt, "gemm", dagger_linalg_gemm(r, 0, 1, 1.5, g.A, g.B, 0.5, g.C));
        la_gemm_check(&g, 1.5, 0.5, "gemm on the device scope");
    }
    AR_OK(dagger_finalize(rt));
}

/* A matrix that is not positive definite fails on every rank naming the
 * step and the minor, as on CPUs (on CUDA devices through cuSOLVER's info,
 * checked when the task's work is done). */
Test(gpu_linalg, not_positive_definite_fails_on_every_rank)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    for (int d = 0; d < 2; d++) {
        size_t n = 96;
        dagger_array_t *A = la_spd(rt, types[d], n, 32, 32);
        AR_OK(dagger_array_fill(NULL, A, -1.0)); /* minor of order 1 is -1 */
        dagger_scope_t dev_scope = {.kinds = gpu_kind()};
        dagger_region_t *r;
        AR_OK(dagger_region_begin(rt, &dev_scope, &r));
        AR_OK(dagger_linalg_potrf(r, DAGGER_LA_LOWER, A));
        dagger_status_t st = dagger_region_end(r);
        cr_assert_eq(st, DAGGER_ERR_TASK_FAILED, "rank %d: %s", dagger_rank(rt),
                     dagger_error_detail());
        const char *msg = dagger_error_detail();
        cr_assert(strstr(msg, "not positive definite") && strstr(msg, "order 1 ") &&
                      strstr(msg, "tile step 0"), "rank %d: %s", dagger_rank(rt), msg);
        dagger_array_destroy(A);
    }
    AR_OK(dagger_finalize(rt));
}

/* The pivot array of an n x n LU in nb-wide steps (dagger/linalg.h). */
static dagger_array_t *lu_pivots(dagger_runtime_t *rt, size_t n, size_t nb)
{
    dagger_array_desc_t d = {.dtype = DAGGER_I64, .ndims = 1, .dims = {n}, .block = {nb}};
    dagger_array_t *p;
    AR_OK(dagger_array_zeros(rt, &d, &p));
    return p;
}

/* getrf then getrs with the pivot array, pipelined in one region. */
static dagger_status_t lu_solve(dagger_region_t *r, dagger_array_t *A, dagger_array_t *P,
                                dagger_array_t *B)
{
    dagger_status_t st = dagger_linalg_getrf_array(r, A, P);
    return st ? st : dagger_linalg_getrs_array(r, A, P, B);
}

/* ||b - A x|| / (||A|| ||x||) for an n x n A and n x nrhs x, b. */
static double solve_residual(const double *a, const double *x, double *b, size_t n, size_t nrhs)
{
    double *zero = calloc(n * n, sizeof(double));
    double an = la_rel(a, zero, n, n, 0), xn = la_rel(x, zero, n, nrhs, 0);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)nrhs, (int)n, -1.0, a,
                (int)n, x, (int)n, 1.0, b, (int)n);
    double res = la_rel(b, zero, n, nrhs, 0) / (an * xn);
    free(zero);
    return res;
}

/* LU in column-panel layout (blocks {N, nb}) under the device scope, every
 * tile on the device: getrf_array's factors and pivots equal LAPACK's getrf
 * on the collected matrix, getrs_array (in the same region) and getrs with
 * the host pivots (a region of its own) solve A X = B. f64 and f32, steps
 * that do not divide N. */
Test(gpu_linalg, lu_on_the_device_scope_equals_lapack)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    size_t n = 100, nb = 32, nrhs = 5;
    for (int d = 0; d < 2; d++) {
        dagger_dtype_t t = types[d];
        dagger_array_t *A = la_rand(rt, t, n, n, n, nb, 21), *P = lu_pivots(rt, n, nb);
        dagger_array_t *B = la_rand(rt, t, n, nrhs, n, 2, 22);
        dagger_array_t *B2 = la_rand(rt, t, n, nrhs, n, 3, 24);
        double *a = ar_collect(A), *ref = ar_collect(A), *b = ar_collect(B);
        ON_DEVICE(rt, "getrf_array + getrs_array", lu_solve(r, A, P, B));
        int64_t ipiv[100];
        lapack_int rpiv[100];
        AR_OK(dagger_array_collect(P, ipiv));
        cr_assert_eq(LAPACKE_dgetrf(LAPACK_COL_MAJOR, (int)n, (int)n, ref, (int)n, rpiv), 0);
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(ipiv[i], (int64_t)rpiv[i], "ipiv[%zu] %lld, LAPACK %d", i,
                         (long long)ipiv[i], (int)rpiv[i]);
        double *got = ar_collect(A);
        LA_CLOSE(got, ref, n, n, 0, t, "getrf_array on the device scope against LAPACK");
        double *x = ar_collect(B), *b2 = ar_collect(B2);
        double res = solve_residual(a, x, b, n, nrhs);
        cr_assert(res < LA_TOL(t), "getrs_array: ||b - A x|| / (||A|| ||x||) = %.3e", res);
        free(x);
        ON_DEVICE(rt, "getrs", dagger_linalg_getrs(r, A, ipiv, B2));
        x = ar_collect(B2);
        res = solve_residual(a, x, b2, n, nrhs);
        cr_assert(res < LA_TOL(t), "getrs: ||b - A x|| / (||A|| ||x||) = %.3e", res);
        free(a), free(ref), free(b), free(got), free(x), free(b2);
        dagger_array_destroy(A), dagger_array_destroy(P), dagger_array_destroy(B);
        dagger_array_destroy(B2);
    }
    AR_OK(dagger_finalize(rt));
}

/* Column 40 zero: U(41, 41) is exactly zero, found by the panel of step 1
 * (on CUDA devices through cuSOLVER's info, checked when the task's work is
 * done); the same status and detail on every rank, as on CPUs. */
Test(gpu_linalg, singular_lu_fails_on_every_rank)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    size_t n = 100, nb = 32;
    for (int d = 0; d < 2; d++) {
        dagger_array_t *A = la_rand(rt, types[d], n, n, n, nb, 23), *P = lu_pivots(rt, n, nb);
        double *host = ar_collect(A);
        for (size_t i = 0; i < n; i++)
            host[i + 40 * n] = 0.0;
        if (types[d] == DAGGER_F32) {
            float *f = malloc(n * n * sizeof(float));
            for (size_t i = 0; i < n * n; i++)
                f[i] = (float)host[i];
            AR_OK(dagger_array_scatter(A, f));
            free(f);
        } else {
            AR_OK(dagger_array_scatter(A, host));
        }
        dagger_scope_t dev_scope = {.kinds = gpu_kind()};
        dagger_region_t *r;
        AR_OK(dagger_region_begin(rt, &dev_scope, &r));
        AR_OK(dagger_linalg_getrf_array(r, A, P));
        dagger_status_t st = dagger_region_end(r);
        cr_assert_eq(st, DAGGER_ERR_TASK_FAILED, "rank %d: %s", dagger_rank(rt),
                     dagger_error_detail());
        char detail[256] = {0}, root[256];
        snprintf(detail, sizeof(detail), "%s", dagger_error_detail());
        cr_assert(strstr(detail, "U(41, 41) is exactly zero (1-based, tile step 1"), "rank %d: %s",
                  dagger_rank(rt), detail);
        memcpy(root, detail, sizeof(root));
        AR_OK(dagger_bcast(rt, root, sizeof(root), 0));
        cr_assert_str_eq(detail, root);
        free(host);
        dagger_array_destroy(A), dagger_array_destroy(P);
    }
    AR_OK(dagger_finalize(rt));
}

/* The path cuSOLVER's info takes: a device task's completion check
 * (dagger_task_after) runs once its work is done and its failure is the task's,
 * on every rank, with dagger_task_fail's message form. */
static int late_check(void *arg, int ok, char *detail, size_t cap)
{
    (void)arg;
    if (ok)
        snprintf(detail, cap, "the device work reported info 7");
    return ok;
}

static int with_late_check(dagger_task_t *t)
{
    dagger_task_after(t, late_check, NULL);
    return DAGGER_OK;
}

Test(gpu_linalg, a_completion_check_fails_the_task_on_every_rank)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_t *A = la_rand(rt, DAGGER_F64, 8, 8, 8, 8, 1);
    /* The same host function as the CUDA implementation: it queues nothing
     * on the task's stream, and the check runs once the stream passes it. */
    dagger_codelet_desc_t cd = {.name = "test.late_check", .cpu = with_late_check,
                                .cuda = with_late_check};
    dagger_codelet_t cl;
    AR_OK(dagger_codelet_register(rt, &cd, &cl));
    dagger_scope_t dev_scope = {.kinds = gpu_kind()};
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, &dev_scope, &r));
    dagger_arg_t a[1] = {DAGGER_INOUT(dagger_array_block(A, 0))};
    AR_OK(dagger_submit(r, cl, 1, a, NULL, NULL, NULL));
    cr_assert_eq(dagger_region_end(r), DAGGER_ERR_TASK_FAILED, "rank %d", dagger_rank(rt));
    cr_assert(strstr(dagger_error_detail(), "(test.late_check) failed on rank 0: the device "
                                            "work reported info 7"), "%s", dagger_error_detail());
    dagger_array_destroy(A);
    AR_OK(dagger_finalize(rt));
}

/* QR under the device scope, every tile on the device (on CUDA devices
 * the panel kernels of ours and cuBLAS's block reflectors): R matches
 * LAPACK's geqrf up to the signs of its rows, and applying Q^T to a copy of
 * A with the factors gives R itself (zeros below the diagonal). f64 and
 * f32, tiles that do not divide the matrix. */
Test(gpu_linalg, qr_on_the_device_scope)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    size_t m = 100, n = 70;
    for (int d = 0; d < 2; d++) {
        dagger_dtype_t t = types[d];
        dagger_array_t *A = la_rand(rt, t, m, n, 32, 32, 7), *C = la_rand(rt, t, m, n, 32, 32, 7);
        dagger_array_t *T;
        AR_OK(dagger_linalg_qr_t_create(A, &T));
        double *ref = ar_collect(A);
        ON_DEVICE(rt, "geqrf", dagger_linalg_geqrf(r, A, T));
        ON_DEVICE(rt, "qr_apply", dagger_linalg_qr_apply(r, DAGGER_LA_TRANS, A, T, C));
        double tau[70];
        cr_assert_eq(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, (int)m, (int)n, ref, (int)m, tau), 0);
        double *got = ar_collect(A), *qc = ar_collect(C);
        double *r = calloc(m * n, sizeof(double));
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i <= j; i++)
                r[i + j * m] = got[i + j * m];
        LA_CLOSE(qc, r, m, n, 0, t, "Q^T A against geqrf's R on the device scope");
        /* R is unique up to the signs of its rows: compare |R| */
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i <= j; i++) {
                got[i + j * m] = fabs(got[i + j * m]);
                ref[i + j * m] = fabs(ref[i + j * m]);
            }
        LA_CLOSE(got, ref, m, n, 'U', t, "geqrf's R on the device scope");
        free(got), free(ref), free(qc), free(r);
        dagger_array_destroy(A), dagger_array_destroy(C), dagger_array_destroy(T);
    }
    AR_OK(dagger_finalize(rt));
}

/* No linalg codelet has a HIP implementation, and Debian's HIP has no
 * rocBLAS/rocSOLVER to give them one: a HIP-scoped routine is a scope error
 * on every rank (at the region when no rank has a HIP device, at the tile
 * tasks when one has: the codelet implements no HIP). */
Test(gpu_linalg, a_hip_scope_is_a_scope_error_everywhere)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_t *A = la_spd(rt, DAGGER_F64, 64, 32, 32);
    dagger_scope_t hip = {.kinds = DAGGER_PROC_HIP};
    dagger_region_t *r;
    dagger_status_t st = dagger_region_begin(rt, &hip, &r);
    if (st == DAGGER_OK) {
        st = dagger_linalg_potrf(r, DAGGER_LA_LOWER, A);
        dagger_status_t end = dagger_region_end(r);
        st = st != DAGGER_OK ? st : end;
    }
    cr_assert_eq(st, DAGGER_ERR_SCOPE, "rank %d: %s", dagger_rank(rt), dagger_error_detail());
    cr_assert(strstr(dagger_error_detail(), "HIP"), "%s", dagger_error_detail());
    dagger_array_destroy(A);
    AR_OK(dagger_finalize(rt));
}

/* A random matrix whose blocks live on their owners' devices of the kind
 * under test (dagger_array_desc_t.home). */
static dagger_array_t *on_device(dagger_runtime_t *rt, size_t m, size_t n, size_t b,
                                 uint64_t seed)
{
    dagger_array_desc_t d = la_desc(DAGGER_F64, m, n, b, b);
    d.home = gpu_kind();
    dagger_array_t *a;
    AR_OK(dagger_array_rand(rt, &d, seed, &a));
    return a;
}

/* Arrays homed on the devices: gemm in two regions on the device scope
 * copies nothing between a rank's memory spaces (every tile is already in
 * its owner's device memory; tiles of other ranks come by transfers), and
 * gives BLAS's result; the same arrays homed in host memory copy tiles in
 * and back. Reading them between regions (collect) brings the data to the
 * host without moving the home. */
Test(gpu_linalg, arrays_homed_on_the_devices_stay_there)
{
    dagger_runtime_t *rt = ar_init();
    size_t n = 96, b = 32;
    dagger_array_t *A = on_device(rt, n, n, b, 1), *B = on_device(rt, n, n, b, 2),
                   *C = on_device(rt, n, n, b, 3);
    dagger_array_desc_t info;
    AR_OK(dagger_array_info(C, &info));
    cr_assert_eq(info.home, gpu_kind());
    double *a = ar_collect(A), *bb = ar_collect(B), *c = ar_collect(C);
    for (int round = 0; round < 2; round++) {
        ON_DEVICE(rt, "gemm on device-homed arrays",
                  dagger_linalg_gemm(r, 0, 0, 1.0, A, B, 0.5, C));
        dagger_region_stats_t st;
        AR_OK(dagger_region_stats(rt, &st));
        cr_assert_eq(st.copies, 0u, "round %d: %llu copies between memory spaces", round,
                     (unsigned long long)st.copies);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, a,
                    (int)n, bb, (int)n, 0.5, c, (int)n);
        double *got = ar_collect(C);
        LA_CLOSE(got, c, n, n, 0, DAGGER_F64, "gemm on device-homed arrays");
        free(got);
    }
    /* the same in host memory: tiles go to the devices and back */
    dagger_array_t *H = la_rand(rt, DAGGER_F64, n, n, b, b, 3);
    ON_DEVICE(rt, "gemm on host arrays", dagger_linalg_gemm(r, 0, 0, 1.0, A, B, 0.5, H));
    dagger_region_stats_t st;
    AR_OK(dagger_region_stats(rt, &st));
    cr_assert_gt(st.copies, 0u, "host-homed C: its tiles are copied to the devices and back");
    /* a block's data pointer is the host's only */
    dagger_array_block_t blk;
    AR_OK(dagger_array_block_info(C, 0, &blk));
    void *data = (void *)1;
    AR_OK(dagger_chunk_data(rt, blk.chunk, &data, NULL));
    cr_assert_null(data, "rank %d: a device-homed block has no host data", dagger_rank(rt));
    free(a), free(bb), free(c);
    dagger_array_destroy(A), dagger_array_destroy(B), dagger_array_destroy(C);
    dagger_array_destroy(H);
    AR_OK(dagger_finalize(rt));
}

/* A home of a kind the ranks do not have is a scope error on every rank,
 * naming the kind. */
Test(gpu_linalg, a_home_on_a_missing_device_kind_fails_everywhere)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = la_desc(DAGGER_F64, 64, 64, 32, 32);
    d.home = DAGGER_PROC_HIP;
    dagger_array_t *a = NULL;
    cr_assert_eq(dagger_array_zeros(rt, &d, &a), DAGGER_ERR_SCOPE, "%s", dagger_error_detail());
    cr_assert(strstr(dagger_error_detail(), "no HIP device"), "%s", dagger_error_detail());
    cr_assert_null(a);
    d.home = (dagger_proc_kind_t)(DAGGER_PROC_CUDA | DAGGER_PROC_HIP);
    cr_assert_eq(dagger_array_zeros(rt, &d, &a), DAGGER_ERR_INVALID_ARG);
    AR_OK(dagger_finalize(rt));
}
