/* A tile's triangular solve, recursive: the triangle is halved until it is
 * at most DG_LA_TRSM_LEAF wide, each half solved by BLAS trsm and the
 * coupling block applied by BLAS gemm. OpenBLAS's one-thread dtrsm runs a
 * 512 x 512 tile at about two thirds of its dgemm's rate (30 against 45
 * GF/s here, the Cholesky panel's case), and trsm is a sixth of a tiled
 * Cholesky's time; halved down to 64-wide leaves, seven eighths of the
 * flops are gemm's and the tile runs at 37 GF/s (leaves of 32: 37, 128:
 * 36, 256: 30). Every case of side, uplo, op and diag; the same result as
 * one trsm call to rounding (tests/core/linalg/test_la_trsm_rec.c). */
#include "core/linalg/trsm_rec.h"

#include "core/linalg/la_blas_lib.h"

/* The coupling block T21 of an op(A) that is effectively lower, or T12 of
 * one that is effectively upper, for a split after k1 rows and columns:
 * the block of A below the first triangle (A21) or right of it (A12), and
 * whether gemm must transpose it. */
static size_t coupling(CBLAS_UPLO uplo, int eff_lower, int k1, int lda, CBLAS_TRANSPOSE *op)
{
    /* Lower A: op(A) lower iff not transposed; T21 = A21, T12 = A21^T.
     * Upper A: op(A) lower iff transposed; T21 = A12^T, T12 = A12. */
    int a21 = uplo == CblasLower;
    *op = (eff_lower == a21) ? CblasNoTrans : CblasTrans;
    return a21 ? (size_t)k1 : (size_t)k1 * (size_t)lda;
}

/* The halves are solved in order: the one op(A)'s zero block leaves alone
 * first (X1 for a lower op(A) on the left or an upper one on the right),
 * with alpha; then the other half's B loses that solution's product with
 * the coupling block T (B2 = alpha B2 - T21 X1 on the left, B1 = alpha B1 -
 * X2 T21 on the right, and so on); then the other half is solved. */
#define DG_TRSM_REC(NAME, T, TRSM, GEMM)                                                        \
    void NAME(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE ta, CBLAS_DIAG diag, int m,    \
              int n, T alpha, const T *a, int lda, T *b, int ldb)                              \
    {                                                                                          \
        int left = side == CblasLeft, k = left ? m : n;                                        \
        if (k <= DG_LA_TRSM_LEAF || m == 0 || n == 0) {                                        \
            TRSM(CblasColMajor, side, uplo, ta, diag, m, n, alpha, a, lda, b, ldb);            \
            return;                                                                            \
        }                                                                                      \
        int k1 = k / 2, k2 = k - k1;                                                           \
        int eff_lower = (uplo == CblasLower) == (ta == CblasNoTrans);                          \
        int one_first = left == eff_lower;                                                     \
        int kf = one_first ? k1 : k2, ks = one_first ? k2 : k1;                                \
        const T *a11 = a, *a22 = a + k1 + (size_t)k1 * lda;                                    \
        T *b1 = b, *b2 = b + (left ? (size_t)k1 : (size_t)k1 * ldb);                           \
        const T *af = one_first ? a11 : a22, *as = one_first ? a22 : a11;                      \
        T *bf = one_first ? b1 : b2, *bs = one_first ? b2 : b1;                                \
        CBLAS_TRANSPOSE op;                                                                    \
        const T *t = a + coupling(uplo, eff_lower, k1, lda, &op);                              \
        NAME(side, uplo, ta, diag, left ? kf : m, left ? n : kf, alpha, af, lda, bf, ldb);     \
        if (left)                                                                              \
            GEMM(CblasColMajor, op, CblasNoTrans, ks, n, kf, (T)-1, t, lda, bf, ldb, alpha,    \
                 bs, ldb);                                                                     \
        else                                                                                   \
            GEMM(CblasColMajor, CblasNoTrans, op, m, ks, kf, (T)-1, bf, ldb, t, lda, alpha,    \
                 bs, ldb);                                                                     \
        NAME(side, uplo, ta, diag, left ? ks : m, left ? n : ks, (T)1, as, lda, bs, ldb);      \
    }

DG_TRSM_REC(dg_la_dtrsm_rec, double, cblas_dtrsm, cblas_dgemm)
DG_TRSM_REC(dg_la_strsm_rec, float, cblas_strsm, cblas_sgemm)
