/* linalg: the tiled linear algebra library (dagger/linalg.h) in one SPMD
 * program, run alone or on N ranks (tools/dagger-run -n 4 ./linalg):
 * Cholesky and a solve with it in one region, then A x = b through LU, then
 * a QR factorisation and Q^T applied to A. Each step checks its residual on
 * the collected result; the program exits non-zero when one is too large. */
#include <dagger.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Every call returns a status, the same on every rank; the detail says what went wrong. */
static void check(dagger_status_t st, const char *call)
{
    if (st == DAGGER_OK)
        return;
    fprintf(stderr, "%s: %s: %s\n", call, dagger_strerror(st), dagger_error_detail());
    exit(1);
}
#define CHECK(call) check((call), #call)

enum { N = 300, TILE = 64, NRHS = 3 }; /* tiles need not divide N */

/* SPD: 1 / (1 + |i - j|) plus N on the diagonal. */
static double spd(const size_t idx[], int nd, const void *args)
{
    (void)nd, (void)args;
    double d = idx[0] > idx[1] ? (double)(idx[0] - idx[1]) : (double)(idx[1] - idx[0]);
    return 1.0 / (1.0 + d) + (idx[0] == idx[1] ? N : 0);
}

static dagger_array_t *matrix(dagger_runtime_t *rt, size_t m, size_t n, int kind)
{
    static const dagger_dist_t cyc = {.kind = DAGGER_DIST_CYCLIC_2D};
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {m, n},
                             .block = {TILE, TILE}, .dist = &cyc};
    dagger_array_t *a;
    dagger_index_fn_id_t fn;
    CHECK(dagger_index_fn_register(rt, "linalg_example.spd", spd, &fn));
    if (kind)
        CHECK(dagger_array_rand(rt, &d, (uint64_t)kind, &a));
    else
        CHECK(dagger_array_from_fn(rt, &d, fn, NULL, 0, &a));
    return a;
}

/* max |A X - B| / max |B| on the collected matrices (every rank alike). */
static double residual(dagger_array_t *A, dagger_array_t *X, dagger_array_t *B, size_t n,
                       size_t nrhs)
{
    double *a = malloc(n * n * sizeof(double)), *x = malloc(n * nrhs * sizeof(double)),
           *b = malloc(n * nrhs * sizeof(double));
    CHECK(dagger_array_collect(A, a));
    CHECK(dagger_array_collect(X, x));
    CHECK(dagger_array_collect(B, b));
    double worst = 0, scale = 0;
    for (size_t j = 0; j < nrhs; j++)
        for (size_t i = 0; i < n; i++) {
            double s = 0;
            for (size_t k = 0; k < n; k++)
                s += a[i + k * n] * x[k + j * n];
            worst = fmax(worst, fabs(s - b[i + j * n]));
            scale = fmax(scale, fabs(b[i + j * n]));
        }
    free(a), free(x), free(b);
    return worst / scale;
}

int main(int argc, char **argv)
{
    dagger_runtime_t *rt;
    CHECK(dagger_init(&argc, &argv, NULL, &rt));
    int ok = 1, root = dagger_rank(rt) == 0;

    /* 1. Cholesky and potrs pipelined in one region: A = L L^T, X = A^-1 B. */
    dagger_array_t *A = matrix(rt, N, N, 0), *L = matrix(rt, N, N, 0);
    dagger_array_t *B = matrix(rt, N, NRHS, 1), *X = matrix(rt, N, NRHS, 1);
    dagger_region_t *r;
    CHECK(dagger_region_begin(rt, NULL, &r));
    CHECK(dagger_linalg_potrf(r, DAGGER_LA_LOWER, L));
    CHECK(dagger_linalg_potrs(r, DAGGER_LA_LOWER, L, X));
    CHECK(dagger_region_end(r));
    double e1 = residual(A, X, B, N, NRHS);
    ok &= e1 < 1e-12;
    if (root)
        printf("1. potrf + potrs (%dx%d in %dx%d tiles): max |A X - B| / max |B| = %.1e\n", N, N,
               TILE, TILE, e1);

    /* 2. A x = b through LU with partial pivoting (a region of its own). */
    dagger_array_t *G = matrix(rt, N, N, 7), *LU = matrix(rt, N, N, 7);
    CHECK(dagger_array_copy(NULL, X, B));
    int64_t *ipiv = malloc(N * sizeof(int64_t));
    CHECK(dagger_linalg_gesv(NULL, LU, ipiv, X));
    double e2 = residual(G, X, B, N, NRHS);
    ok &= e2 < 1e-10;
    if (root)
        printf("2. gesv: first pivots %lld %lld %lld, max |A X - B| / max |B| = %.1e\n",
               (long long)ipiv[0], (long long)ipiv[1], (long long)ipiv[2], e2);

    /* 3. QR: R in place, then Q^T applied to a copy of the original. */
    dagger_array_t *QR = matrix(rt, N, N, 7), *T;
    CHECK(dagger_linalg_qr_t_create(QR, &T));
    CHECK(dagger_linalg_geqrf(NULL, QR, T));
    CHECK(dagger_linalg_qr_apply(NULL, DAGGER_LA_TRANS, QR, T, G)); /* G = Q^T A = R */
    double *r1 = malloc(N * N * sizeof(double)), *r2 = malloc(N * N * sizeof(double)), worst = 0;
    CHECK(dagger_array_collect(QR, r1));
    CHECK(dagger_array_collect(G, r2));
    for (size_t j = 0; j < N; j++)
        for (size_t i = 0; i < N; i++)
            worst = fmax(worst, fabs((i <= j ? r1[i + j * N] : 0.0) - r2[i + j * N]));
    ok &= worst < 1e-10;
    if (root)
        printf("3. geqrf + qr_apply: max |Q^T A - R| = %.1e\n", worst);

    dagger_array_t *all[] = {A, L, B, X, G, LU, QR, T};
    for (int i = 0; i < 8; i++)
        CHECK(dagger_array_destroy(all[i]));
    free(ipiv), free(r1), free(r2);
    CHECK(dagger_finalize(rt));
    return ok ? 0 : 1;
}
