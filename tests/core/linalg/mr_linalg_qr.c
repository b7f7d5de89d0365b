/* Tiled QR: Q^T Q = I, Q R = A, Q^T A = R, and |R| as LAPACK's dgeqrf's on
 * the collected matrix (R is unique up to the signs of its rows). */
#include "tests/core/linalg/la_util.h"

/* m, n, tile rows, tile columns. The last three have diagonal tiles of one
 * row with tiles on their right (a wide matrix whose last tile row has one
 * row, and tiles of one element), whose reflectors have no strictly lower
 * part: their submissions failed with DAGGER_ERR_BAD_VIEW before
 * 2026-12-06. */
static const size_t shapes[][4] = {{96, 96, 32, 32}, {100, 70, 32, 32}, {70, 100, 24, 24},
                                   {90, 60, 32, 24}, {25, 40, 8, 8},    {13, 20, 4, 4},
                                   {5, 7, 1, 1}};
enum { NSHAPES = sizeof(shapes) / sizeof(shapes[0]) };

/* The identity (m x m) with blocks b x b. */
static dagger_array_t *identity(dagger_runtime_t *rt, dagger_dtype_t t, size_t m, size_t b)
{
    dagger_array_t *q;
    dagger_array_desc_t d = la_desc(t, m, m, b, b);
    AR_OK(dagger_array_zeros(rt, &d, &q));
    double *h = calloc(m * m, sizeof(double));
    for (size_t i = 0; i < m; i++)
        h[i + i * m] = 1.0;
    void *raw = malloc(m * m * dagger_dtype_size(t));
    for (size_t i = 0; i < m * m; i++)
        t == DAGGER_F64 ? (void)(((double *)raw)[i] = h[i]) : (void)(((float *)raw)[i] = (float)h[i]);
    AR_OK(dagger_array_scatter(q, raw));
    free(raw);
    free(h);
    return q;
}

static void check_qr(dagger_runtime_t *rt, dagger_dtype_t t, const size_t *s)
{
    size_t m = s[0], n = s[1], k = m < n ? m : n;
    dagger_array_t *A = la_rand(rt, t, m, n, s[2], s[3], 21), *T, *A0;
    AR_OK(dagger_linalg_qr_t_create(A, &T));
    dagger_array_desc_t d = la_desc(t, m, n, s[3], s[3]);
    AR_OK(dagger_array_zeros(rt, &d, &A0));
    AR_OK(dagger_array_copy(NULL, A0, A));
    double *a = ar_collect(A);
    AR_OK(dagger_linalg_geqrf(NULL, A, T));
    double *rf = ar_collect(A), *r = calloc(m * n, sizeof(double));
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i <= j && i < m; i++)
            r[i + j * m] = rf[i + j * m];
    /* Q explicitly: Q I. */
    dagger_array_t *Q = identity(rt, t, m, s[3]);
    AR_OK(dagger_linalg_qr_apply(NULL, DAGGER_LA_NOTRANS, A, T, Q));
    double *q = ar_collect(Q), *qtq = calloc(m * m, sizeof(double)), *eye = calloc(m * m, sizeof(double));
    for (size_t i = 0; i < m; i++)
        eye[i + i * m] = 1.0;
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)m, (int)m, (int)m, 1.0, q, (int)m, q,
                (int)m, 0.0, qtq, (int)m);
    LA_CLOSE(qtq, eye, m, m, 0, t, "Q^T Q = I");
    double *qr = calloc(m * n, sizeof(double));
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)m, 1.0, q, (int)m,
                r, (int)m, 0.0, qr, (int)m);
    LA_CLOSE(qr, a, m, n, 0, t, "Q R = A");
    /* Q^T A = R, through qr_apply on a copy of A in other blocks. */
    AR_OK(dagger_linalg_qr_apply(NULL, DAGGER_LA_TRANS, A, T, A0));
    double *qta = ar_collect(A0);
    LA_CLOSE(qta, r, m, n, 0, t, "Q^T A = R");
    /* |R| = |LAPACK's R|. */
    double *tau = malloc(k * sizeof(double));
    cr_assert_eq(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, (int)m, (int)n, a, (int)m, tau), 0);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < m; i++) {
            a[i + j * m] = i <= j ? fabs(a[i + j * m]) : 0.0;
            r[i + j * m] = fabs(r[i + j * m]);
        }
    LA_CLOSE(r, a, m, n, 0, t, "|R| = |LAPACK's R|");
    free(a), free(rf), free(r), free(q), free(qtq), free(eye), free(qr), free(qta), free(tau);
    dagger_array_destroy(A), dagger_array_destroy(T), dagger_array_destroy(A0);
    dagger_array_destroy(Q);
}

/* Q^T and then Q on a vector gives it back, and each apply moves the
 * vector's pieces, not the reflectors: A 256 x 256 in 64 x 64 tiles (32
 * KiB), b 256 x 1 in pieces of 64 (512 bytes); at most two pieces for each
 * of the 10 tasks and 4 going home reach a rank, below one tile of A. */
Test(linalg_qr, apply_to_a_vector_moves_it_not_the_reflectors)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_t *A = la_rand(rt, DAGGER_F64, 256, 256, 64, 64, 23), *T;
    dagger_array_t *b = la_rand(rt, DAGGER_F64, 256, 1, 64, 1, 24);
    AR_OK(dagger_linalg_qr_t_create(A, &T));
    AR_OK(dagger_linalg_geqrf(NULL, A, T));
    double *b0 = ar_collect(b);
    for (int trans = 1; trans >= 0; trans--) {
        AR_OK(dagger_linalg_qr_apply(NULL, trans, A, T, b));
        dagger_region_stats_t s;
        AR_OK(dagger_region_stats(rt, &s));
        cr_assert_leq(s.bytes_received, 24 * 64 * sizeof(double), "%s: rank %d received %llu bytes",
                      trans ? "Q^T b" : "Q (Q^T b)", dagger_rank(rt),
                      (unsigned long long)s.bytes_received);
        cr_assert(dagger_nranks(rt) == 1 || s.transfers > 0, "no transfer: the test proves nothing");
    }
    double *b1 = ar_collect(b);
    LA_CLOSE(b1, b0, 256, 1, 0, DAGGER_F64, "Q Q^T b = b");
    free(b0), free(b1);
    dagger_array_destroy(A), dagger_array_destroy(T), dagger_array_destroy(b);
    AR_OK(dagger_finalize(rt));
}

Test(linalg_qr, geqrf_and_apply)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    for (int d = 0; d < 2; d++)
        for (int s = 0; s < NSHAPES; s++)
            check_qr(rt, types[d], shapes[s]);
    AR_OK(dagger_finalize(rt));
}

Test(linalg_qr, foreign_t)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_t *A = la_rand(rt, DAGGER_F64, 64, 64, 32, 32, 1), *B = la_rand(rt, DAGGER_F64, 64, 64, 16, 16, 1), *T;
    AR_OK(dagger_linalg_qr_t_create(B, &T));
    AR_FAILS(dagger_linalg_geqrf(NULL, A, T), DAGGER_ERR_INVALID_ARG,
             "create it with dagger_linalg_qr_t_create(A, &T)");
    dagger_array_destroy(A), dagger_array_destroy(B), dagger_array_destroy(T);
    AR_OK(dagger_finalize(rt));
}
