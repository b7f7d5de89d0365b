/* Cholesky (potrf, potrs) against LAPACK on the collected matrix, and a
 * matrix that is not positive definite failing alike on every rank. */
#include "tests/core/linalg/la_util.h"

/* n, tile rows, tile columns: dividing, not dividing, non-square tiles. */
static const size_t shapes[][3] = {{96, 32, 32}, {100, 32, 32}, {90, 32, 24}};

static void check_potrf(dagger_runtime_t *rt, dagger_dtype_t t, int up, const size_t *s)
{
    size_t n = s[0];
    dagger_array_t *A = la_spd(rt, t, n, s[1], s[2]);
    double *ref = ar_collect(A);
    AR_OK(dagger_linalg_potrf(NULL, up, A));
    cr_assert_eq(LAPACKE_dpotrf(LAPACK_COL_MAJOR, up ? 'U' : 'L', (int)n, ref, (int)n), 0);
    double *got = ar_collect(A);
    LA_CLOSE(got, ref, n, n, up ? 'U' : 'L', t, "potrf");
    free(ref), free(got);
    dagger_array_destroy(A);
}

Test(linalg_chol, potrf)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    for (int d = 0; d < 2; d++)
        for (int up = 0; up < 2; up++)
            for (int s = 0; s < 3; s++)
                check_potrf(rt, types[d], up, shapes[s]);
    AR_OK(dagger_finalize(rt));
}

/* potrf then potrs in one region of ours: A X = B with small ||A X - B||. */
Test(linalg_chol, potrs_in_one_region)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    size_t n = 100, nrhs = 7;
    for (int d = 0; d < 2; d++)
        for (int up = 0; up < 2; up++) {
            dagger_dtype_t t = types[d];
            dagger_array_t *A = la_spd(rt, t, n, 32, 32), *B = la_rand(rt, t, n, nrhs, 32, 4, 3);
            double *a = ar_collect(A), *b = ar_collect(B);
            dagger_region_t *r;
            AR_OK(dagger_region_begin(rt, NULL, &r));
            AR_OK(dagger_linalg_potrf(r, up, A));
            AR_OK(dagger_linalg_potrs(r, up, A, B));
            AR_OK(dagger_region_end(r));
            double *x = ar_collect(B);
            /* b - A x, with A's full symmetric matrix */
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)nrhs, (int)n, -1.0,
                        a, (int)n, x, (int)n, 1.0, b, (int)n);
            double *zero = calloc(n * nrhs, sizeof(double)), *b0 = ar_collect(B);
            double res = la_rel(b, zero, n, nrhs, 0), xn = la_rel(b0, zero, n, nrhs, 0);
            cr_assert(res / (xn * (double)n) < LA_TOL(t), "potrs: ||b - A x|| = %.3e", res);
            free(a), free(b), free(x), free(zero), free(b0);
            dagger_array_destroy(A), dagger_array_destroy(B);
        }
    AR_OK(dagger_finalize(rt));
}

/* A(70, 70) = -1000: the leading minor of order 71 is not positive, found
 * in tile step 2 (tiles of 32); every rank gets the same status and detail. */
Test(linalg_chol, not_positive_definite)
{
    dagger_runtime_t *rt = ar_init();
    size_t n = 100;
    dagger_array_t *A = la_spd(rt, DAGGER_F64, n, 32, 32);
    double *host = ar_collect(A);
    host[70 + 70 * n] = -1000.0;
    AR_OK(dagger_array_scatter(A, host));
    cr_assert_eq(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (int)n, host, (int)n), 71);
    AR_FAILS(dagger_linalg_potrf(NULL, DAGGER_LA_LOWER, A), DAGGER_ERR_TASK_FAILED,
             "leading minor of order 71 is not positive (tile step 2");
    /* The same detail on every rank: compare it across ranks. */
    char detail[256] = {0};
    snprintf(detail, sizeof(detail), "%s", dagger_error_detail());
    char root[256];
    memcpy(root, detail, sizeof(root));
    AR_OK(dagger_bcast(rt, root, sizeof(root), 0));
    cr_assert_str_eq(detail, root);
    free(host);
    dagger_array_destroy(A);
    AR_OK(dagger_finalize(rt));
}
