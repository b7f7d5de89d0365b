/* LU with partial pivoting against LAPACK's getrf on the collected matrix
 * (the same pivots, the same factors to rounding, P A = L U), solves through
 * it, and a singular matrix failing alike on every rank. */
#include "tests/core/linalg/la_util.h"

/* m, n, tile rows, tile columns. The last has enough block columns that
 * the early steps update each later column in one task and the late steps
 * cut the updates into runs of row blocks (getrf.c, update_column) where
 * every rank has two CPU workers or more and the job at most 11. */
static const size_t shapes[][4] = {{96, 96, 32, 32},  {100, 100, 32, 32}, {90, 90, 32, 24},
                                   {100, 70, 24, 32}, {70, 100, 32, 24},  {160, 200, 24, 8}};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

/* ||P A - L U|| / ||A|| from the factors lu and pivots of an m x n matrix a. */
static double plu_residual(const double *a, const double *lu, const lapack_int *piv, size_t m,
                           size_t n)
{
    size_t k = m < n ? m : n;
    double *pa = malloc(m * n * sizeof(double)), *l = calloc(m * k, sizeof(double)),
           *u = calloc(k * n, sizeof(double));
    memcpy(pa, a, m * n * sizeof(double));
    LAPACKE_dlaswp(LAPACK_COL_MAJOR, (int)n, pa, (int)m, 1, (int)k, piv, 1);
    for (size_t j = 0; j < k; j++)
        for (size_t i = 0; i < m; i++)
            l[i + j * m] = i == j ? 1.0 : i > j ? lu[i + j * m] : 0.0;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < k && i <= j; i++)
            u[i + j * k] = lu[i + j * m];
    double *prod = calloc(m * n, sizeof(double));
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, l, (int)m,
                u, (int)k, 0.0, prod, (int)m);
    double e = la_rel(prod, pa, m, n, 0);
    free(pa), free(l), free(u), free(prod);
    return e;
}

/* getrf of a seeded m x n matrix in mb x nb blocks equals LAPACK's dgetrf
 * on the collected matrix: the same pivots, the same factors to rounding,
 * and P A = L U. */
static void check_getrf(dagger_runtime_t *rt, dagger_dtype_t t, const size_t *shape,
                        unsigned seed, const char *what)
{
    size_t m = shape[0], n = shape[1], k = m < n ? m : n;
    dagger_array_t *A = la_rand(rt, t, m, n, shape[2], shape[3], seed);
    double *a = ar_collect(A), *ref = ar_collect(A);
    int64_t *ipiv = malloc(k * sizeof(int64_t));
    lapack_int *rpiv = malloc(k * sizeof(lapack_int));
    AR_OK(dagger_linalg_getrf(NULL, A, ipiv));
    cr_assert_eq(LAPACKE_dgetrf(LAPACK_COL_MAJOR, (int)m, (int)n, ref, (int)m, rpiv), 0);
    for (size_t i = 0; i < k; i++)
        cr_assert_eq(ipiv[i], (int64_t)rpiv[i], "%s: ipiv[%zu] %lld, LAPACK %d", what, i,
                     (long long)ipiv[i], (int)rpiv[i]);
    double *got = ar_collect(A);
    LA_CLOSE(got, ref, m, n, 0, t, what);
    double e = plu_residual(a, got, rpiv, m, n);
    cr_assert(e < LA_TOL(t), "%s: ||P A - L U|| / ||A|| = %.3e", what, e);
    free(a), free(ref), free(got), free(ipiv), free(rpiv);
    dagger_array_destroy(A);
}

Test(linalg_lu, getrf_equals_lapack)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    for (int d = 0; d < 2; d++)
        for (size_t s = 0; s < NSHAPES; s++) {
            char what[64];
            snprintf(what, sizeof(what), "shape %zu, getrf against LAPACK", s);
            check_getrf(rt, types[d], shapes[s], 11, what);
        }
    AR_OK(dagger_finalize(rt));
}

/* With at least two CPU workers on every rank, the early steps update each
 * later block column on the panel's rank in one lu_update task and the
 * late steps in runs of row blocks (every column on one rank; the others
 * tile tasks on several); with one worker, every update is tile tasks
 * (getrf.c, row_groups). All equal LAPACK, on 25 block columns of 8 in
 * 24-row blocks. */
static void getrf_with_threads(int threads)
{
    mr_tag_test();
    dagger_params_t p = {.num_threads = threads};
    dagger_runtime_t *rt = NULL;
    AR_OK(dagger_init(NULL, NULL, &p, &rt));
    dagger_dtype_t types[] = LA_DTYPES;
    for (int d = 0; d < 2; d++)
        check_getrf(rt, types[d], shapes[NSHAPES - 1], 21, "getrf against LAPACK");
    AR_OK(dagger_finalize(rt));
}

Test(linalg_lu, later_columns_one_task_each)
{
    getrf_with_threads(3);
}

Test(linalg_lu, later_columns_as_tile_tasks)
{
    getrf_with_threads(1);
}

/* gesv (getrf + getrs): ||A x - b|| small, for n = 100 in 32 x 32 and 32 x 24 blocks. */
Test(linalg_lu, gesv)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    size_t n = 100, nrhs = 5;
    for (int d = 0; d < 2; d++)
        for (int s = 0; s < 2; s++) {
            dagger_dtype_t t = types[d];
            dagger_array_t *A = la_rand(rt, t, n, n, 32, s ? 24 : 32, 12);
            dagger_array_t *B = la_rand(rt, t, n, nrhs, 32, 2, 13);
            double *a = ar_collect(A), *b = ar_collect(B);
            int64_t ipiv[100];
            AR_OK(dagger_linalg_gesv(NULL, A, ipiv, B));
            double *x = ar_collect(B);
            double *zero = calloc(n * n, sizeof(double)); /* n >= nrhs */
            double an = la_rel(a, zero, n, n, 0), xn = la_rel(x, zero, n, nrhs, 0);
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)nrhs, (int)n, -1.0,
                        a, (int)n, x, (int)n, 1.0, b, (int)n);
            double res = la_rel(b, zero, n, nrhs, 0) / (an * xn);
            cr_assert(res < LA_TOL(t), "gesv: ||b - A x|| / (||A|| ||x||) = %.3e", res);
            free(a), free(b), free(x), free(zero);
            dagger_array_destroy(A), dagger_array_destroy(B);
        }
    AR_OK(dagger_finalize(rt));
}

/* Column 40 zero: U(41, 41) is exactly zero (LAPACK info 41), in tile
 * step 1 of 32-wide steps; the same status and detail on every rank. */
Test(linalg_lu, singular)
{
    dagger_runtime_t *rt = ar_init();
    size_t n = 100;
    dagger_array_t *A = la_rand(rt, DAGGER_F64, n, n, 32, 32, 14);
    double *host = ar_collect(A);
    for (size_t i = 0; i < n; i++)
        host[i + 40 * n] = 0.0;
    AR_OK(dagger_array_scatter(A, host));
    lapack_int rpiv[100];
    cr_assert_eq(LAPACKE_dgetrf(LAPACK_COL_MAJOR, (int)n, (int)n, host, (int)n, rpiv), 41);
    int64_t ipiv[100];
    AR_FAILS(dagger_linalg_getrf(NULL, A, ipiv), DAGGER_ERR_TASK_FAILED,
             "U(41, 41) is exactly zero (1-based, tile step 1");
    char detail[256] = {0}, root[256];
    snprintf(detail, sizeof(detail), "%s", dagger_error_detail());
    memcpy(root, detail, sizeof(root));
    AR_OK(dagger_bcast(rt, root, sizeof(root), 0));
    cr_assert_str_eq(detail, root);
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, NULL, &r));
    AR_FAILS(dagger_linalg_getrf(r, A, ipiv), DAGGER_ERR_INVALID_ARG, "pass r = NULL");
    AR_OK(dagger_region_end(r));
    free(host);
    dagger_array_destroy(A);
    AR_OK(dagger_finalize(rt));
}

/* getrs_array with one right-hand side moves B's rows, not A's panels: A
 * 256 x 256 in column panels of 64 (a 64-row step of a panel is 32 KiB), B
 * 256 x 1. The solve's region, alone, delivers at most 48 pieces of 64
 * values (512 bytes: B's rows, the pivots) to a rank, below one such step. */
Test(linalg_lu, solve_in_a_region_moves_b_not_a)
{
    dagger_runtime_t *rt = ar_init();
    size_t n = 256, nb = 64;
    dagger_array_t *A = la_rand(rt, DAGGER_F64, n, n, n, nb, 41);
    dagger_array_t *B = la_rand(rt, DAGGER_F64, n, 1, n, 1, 42), *P;
    dagger_array_desc_t dp = {.dtype = DAGGER_I64, .ndims = 1, .dims = {n}, .block = {nb}};
    AR_OK(dagger_array_zeros(rt, &dp, &P));
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, NULL, &r));
    AR_OK(dagger_linalg_getrf_array(r, A, P));
    AR_OK(dagger_region_end(r));
    AR_OK(dagger_region_begin(rt, NULL, &r));
    AR_OK(dagger_linalg_getrs_array(r, A, P, B));
    AR_OK(dagger_region_end(r));
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    cr_assert_leq(s.bytes_received, 48 * 64 * sizeof(double), "rank %d received %llu bytes",
                  dagger_rank(rt), (unsigned long long)s.bytes_received);
    cr_assert(dagger_nranks(rt) == 1 || s.transfers > 0, "no transfer: the test proves nothing");
    AR_DESTROY(A, B, P);
    AR_OK(dagger_finalize(rt));
}

/* The region forms on CPUs: getrf_array and getrs_array in one region of
 * the caller's on column-panel arrays equal getrf/getrs on copies (the same
 * pivots, the same factors, the same solution to rounding); getrs with the
 * host pivots in a region too; arrays of another layout are refused saying
 * which block to give. */
Test(linalg_lu, array_forms_in_a_region)
{
    dagger_runtime_t *rt = ar_init();
    size_t n = 90, nb = 24, nrhs = 3;
    dagger_array_t *A = la_rand(rt, DAGGER_F64, n, n, n, nb, 31);
    dagger_array_t *A2 = la_rand(rt, DAGGER_F64, n, n, 32, 32, 31);
    dagger_array_t *B = la_rand(rt, DAGGER_F64, n, nrhs, n, 2, 32);
    dagger_array_t *B2 = la_rand(rt, DAGGER_F64, n, nrhs, 32, 3, 32);
    dagger_array_t *B3 = la_rand(rt, DAGGER_F64, n, nrhs, n, 1, 32), *P;
    dagger_array_desc_t dp = {.dtype = DAGGER_I64, .ndims = 1, .dims = {n}, .block = {nb}};
    AR_OK(dagger_array_zeros(rt, &dp, &P));
    int64_t ipiv[90], ipiv2[90];
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, NULL, &r));
    AR_OK(dagger_linalg_getrf_array(r, A, P));
    AR_OK(dagger_linalg_getrs_array(r, A, P, B));
    AR_FAILS(dagger_linalg_getrf_array(r, A2, P), DAGGER_ERR_INVALID_ARG,
             "is not in column-panel layout");
    AR_FAILS(dagger_linalg_getrs(r, A, ipiv, B2), DAGGER_ERR_INVALID_ARG, ".block = {90, nb}");
    AR_OK(dagger_region_end(r));
    AR_OK(dagger_array_collect(P, ipiv));
    AR_OK(dagger_region_begin(rt, NULL, &r));
    AR_OK(dagger_linalg_getrs(r, A, ipiv, B3));
    AR_OK(dagger_region_end(r));
    AR_OK(dagger_linalg_getrf(NULL, A2, ipiv2));
    AR_OK(dagger_linalg_getrs(NULL, A2, ipiv2, B2));
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(ipiv[i], ipiv2[i], "ipiv[%zu]: %lld in the region, %lld on copies", i,
                     (long long)ipiv[i], (long long)ipiv2[i]);
    double *f = ar_collect(A), *f2 = ar_collect(A2);
    LA_CLOSE(f, f2, n, n, 0, DAGGER_F64, "getrf_array against getrf");
    double *x = ar_collect(B), *x2 = ar_collect(B2), *x3 = ar_collect(B3);
    LA_CLOSE(x, x2, n, nrhs, 0, DAGGER_F64, "getrs_array against getrs");
    LA_CLOSE(x3, x2, n, nrhs, 0, DAGGER_F64, "getrs in a region against getrs");
    free(f), free(f2), free(x), free(x2), free(x3);
    dagger_array_t *bad;
    dagger_array_desc_t dq = {.dtype = DAGGER_I64, .ndims = 1, .dims = {n}, .block = {32}};
    AR_OK(dagger_array_zeros(rt, &dq, &bad));
    AR_FAILS(dagger_linalg_getrf_array(NULL, A, bad), DAGGER_ERR_INVALID_ARG,
             "in blocks of A's column block (24)");
    dagger_array_destroy(bad);
    dagger_array_destroy(A), dagger_array_destroy(A2), dagger_array_destroy(P);
    dagger_array_destroy(B), dagger_array_destroy(B2), dagger_array_destroy(B3);
    AR_OK(dagger_finalize(rt));
}
