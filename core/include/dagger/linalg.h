/* Tiled dense linear algebra on distributed arrays: gemm, gemv, syrk, trsm,
 * Cholesky (potrf, potrs), LU with partial pivoting (getrf, getrs, gesv) and
 * Householder QR (geqrf, applying Q).
 *
 * Matrices are 2-D f64 or f32 arrays (dagger/array.h), column-major like
 * BLAS; vectors are 1-D arrays; whole arrays, not views (copy a view into
 * an array of its own). Every routine submits one task per tile
 * operation, and each task calls one OpenBLAS (cblas) or LAPACKE routine on
 * its tiles with one BLAS thread: the runtime places the task where its
 * output tile lives and moves the tiles it reads. Any distribution works;
 * DAGGER_DIST_CYCLIC_2D is the layout factorisations are written for.
 * Sizes need not be multiples of the block sizes.
 *
 * Blocking: the operands of one call must have matching blocks where their
 * dimensions meet (for gemm, op(A)'s column blocks equal op(B)'s row blocks,
 * and so on); a mismatch is DAGGER_ERR_INVALID_ARG with a detail naming the
 * block size to use. Factorised and triangular matrices are cut into square
 * tiles: when their blocks are not square (mb != nb), or not the side the
 * other operand sets (B's block where B meets A in trsm, potrs, getrs), the
 * routine works on a re-blocked copy and copies the result back, which it
 * can only do in a region of its own (r = NULL; inside your region it is
 * DAGGER_ERR_INVALID_ARG).
 *
 * Regions: as in dagger/array.h, r = NULL runs the call in a region of its
 * own (it returns when the work is done, with the region's status), a
 * region of yours pipelines the call with your other tasks (and its scope
 * says where the tiles run: on GPUs, see below). LU moves rows across whole
 * block columns, so it works in column-panel layout: with r = NULL getrf,
 * getrs and gesv work on copies in that layout; in a region of yours the
 * arrays must have it already (below, "LU").
 *
 * Errors, the same on every rank: DAGGER_ERR_BAD_HANDLE (an array that is
 * NULL, destroyed or not an array), DAGGER_ERR_INVALID_ARG (a dtype other
 * than f32/f64 or operands of different dtypes, shapes, blocks, flags, a
 * view, one array for two operands where one is written, a NULL pivot or
 * output pointer, or a region where none is allowed),
 * DAGGER_ERR_TASK_FAILED (a matrix that is not positive definite
 * for potrf, exactly singular for getrf: the detail names the tile step and
 * the global index, as LAPACK's info would). docs/linalg.md has examples.
 *
 * GPUs: pass a region whose scope admits CUDA devices and the BLAS,
 * Cholesky and LU tiles run there (cuBLAS, cuSOLVER and kernels of ours;
 * LU through dagger_linalg_getrf_array / getrs_array or getrs with a
 * region); QR's tiles have CPU implementations only (a CUDA-only scope is
 * DAGGER_ERR_SCOPE for them; a union with the CPUs runs them there), and no
 * tile has a HIP one (Debian ships no rocBLAS/rocSOLVER). docs/linalg.md,
 * "GPUs". */
#ifndef DAGGER_LINALG_H
#define DAGGER_LINALG_H

#include <dagger/export.h>
#include <dagger/array.h>
#include <dagger/region.h>
#include <dagger/status.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dagger_la_trans {
    DAGGER_LA_NOTRANS = 0, /* op(X) = X */
    DAGGER_LA_TRANS = 1    /* op(X) = X^T */
} dagger_la_trans_t;

typedef enum dagger_la_uplo {
    DAGGER_LA_LOWER = 0,
    DAGGER_LA_UPPER = 1
} dagger_la_uplo_t;

typedef enum dagger_la_side {
    DAGGER_LA_LEFT = 0,    /* op(A) X = alpha B */
    DAGGER_LA_RIGHT = 1    /* X op(A) = alpha B */
} dagger_la_side_t;

typedef enum dagger_la_diag {
    DAGGER_LA_NONUNIT = 0,
    DAGGER_LA_UNIT = 1     /* the diagonal of A is taken as ones */
} dagger_la_diag_t;

/* ------------------------------------------------------------ BLAS */

/* C = alpha op(A) op(B) + beta C. C is M x N, op(A) M x K, op(B) K x N.
 * Blocks: op(A)'s rows as C's rows, op(B)'s columns as C's columns, op(A)'s
 * columns as op(B)'s rows. C may not be A or B. */
DAGGER_API
dagger_status_t dagger_linalg_gemm(dagger_region_t *r, dagger_la_trans_t ta, dagger_la_trans_t tb,
                                   double alpha, dagger_array_t *A, dagger_array_t *B,
                                   double beta, dagger_array_t *C);

/* y = alpha op(A) x + beta y, with x and y 1-D arrays whose blocks match
 * op(A)'s column and row blocks. */
DAGGER_API
dagger_status_t dagger_linalg_gemv(dagger_region_t *r, dagger_la_trans_t ta, double alpha,
                                   dagger_array_t *A, dagger_array_t *x, double beta,
                                   dagger_array_t *y);

/* C = alpha op(A) op(A)^T + beta C on the uplo triangle of C (N x N, square
 * blocks; the other triangle is not touched). op(A) is N x K; its row blocks
 * equal C's. */
DAGGER_API
dagger_status_t dagger_linalg_syrk(dagger_region_t *r, dagger_la_uplo_t uplo, dagger_la_trans_t ta,
                                   double alpha, dagger_array_t *A, double beta,
                                   dagger_array_t *C);

/* Solves op(A) X = alpha B (LEFT) or X op(A) = alpha B (RIGHT) for X, which
 * overwrites B. A is triangular (uplo, diag), square, with square tiles whose
 * side equals B's blocks along the dimension A meets. */
DAGGER_API
dagger_status_t dagger_linalg_trsm(dagger_region_t *r, dagger_la_side_t side, dagger_la_uplo_t uplo,
                                   dagger_la_trans_t ta, dagger_la_diag_t diag, double alpha,
                                   dagger_array_t *A, dagger_array_t *B);

/* ------------------------------------------------------------ Cholesky */

/* A = L L^T (LOWER) or U^T U (UPPER) in place, on the uplo triangle of the
 * symmetric positive definite A (the other triangle is not touched). A not
 * positive definite: DAGGER_ERR_TASK_FAILED on every rank, the detail naming
 * the tile step and the order of the leading minor that is not positive. */
DAGGER_API
dagger_status_t dagger_linalg_potrf(dagger_region_t *r, dagger_la_uplo_t uplo, dagger_array_t *A);

/* Solves A X = B with A factored by dagger_linalg_potrf (the same uplo); X
 * overwrites B (N x NRHS; its row block is the tile side). B may not be A. */
DAGGER_API
dagger_status_t dagger_linalg_potrs(dagger_region_t *r, dagger_la_uplo_t uplo, dagger_array_t *A,
                                    dagger_array_t *B);

/* ------------------------------------------------------------ LU */

/* Column-panel layout, which LU needs in a region of yours: a matrix whose
 * blocks are whole column panels, .block = {M, nb} for an M x N matrix (one
 * block row; nb, the column block, is the tile side of the factorisation),
 * any distribution of the panels (DAGGER_DIST_CYCLIC_2D deals them round
 * the ranks). An array of another layout is DAGGER_ERR_INVALID_ARG saying
 * so; re-block a copy with dagger_array_copy outside the region, or pass
 * r = NULL to getrf/getrs/gesv, which copy.
 *
 * The pivot array P of the _array forms: a 1-D DAGGER_I64 array of min(M, N)
 * entries in blocks of A's column block nb (dims {min(M, N)}, block {nb}),
 * holding the pivots in ipiv's form; dagger_array_collect it after the
 * region for a host ipiv. */

/* P A = L U with partial pivoting, in place (L unit lower below the diagonal,
 * U on and above), as LAPACK's getrf on the collected matrix. ipiv (min(M, N)
 * entries, a host buffer, written on every rank) gets the pivots in LAPACK's
 * form: row i was swapped with row ipiv[i], 1-based. An exactly singular A:
 * DAGGER_ERR_TASK_FAILED naming the tile step and the zero pivot U(j, j),
 * as LAPACK's info > 0. r must be NULL: the host pivots are written once the
 * work is done; in a region use dagger_linalg_getrf_array. */
DAGGER_API
dagger_status_t dagger_linalg_getrf(dagger_region_t *r, dagger_array_t *A, int64_t *ipiv);

/* Solves A X = B with A and ipiv from dagger_linalg_getrf (A N x N); X
 * overwrites B (N x NRHS). r = NULL: any blocks. In a region of yours A
 * and B must be in column-panel layout (B .block = {N, any}); the tile
 * side is A's column block. */
DAGGER_API
dagger_status_t dagger_linalg_getrs(dagger_region_t *r, dagger_array_t *A, const int64_t *ipiv,
                                    dagger_array_t *B);

/* getrf then getrs: solves A X = B through LU; A holds its factors and ipiv
 * its pivots afterwards. r must be NULL (in a region: getrf_array then
 * getrs_array). */
DAGGER_API
dagger_status_t dagger_linalg_gesv(dagger_region_t *r, dagger_array_t *A, int64_t *ipiv,
                                   dagger_array_t *B);

/* getrf in any region (r = NULL too) on A itself, which must be in
 * column-panel layout; the pivots go to the pivot array P (both above).
 * Errors as getrf's, and DAGGER_ERR_INVALID_ARG for another layout or a P
 * that does not fit A. */
DAGGER_API
dagger_status_t dagger_linalg_getrf_array(dagger_region_t *r, dagger_array_t *A,
                                          dagger_array_t *P);

/* getrs with the pivot array of dagger_linalg_getrf_array, in any region;
 * A (N x N) and B (N x NRHS) in column-panel layout. */
DAGGER_API
dagger_status_t dagger_linalg_getrs_array(dagger_region_t *r, dagger_array_t *A,
                                          dagger_array_t *P, dagger_array_t *B);

/* ------------------------------------------------------------ QR */

/* Creates the array that holds the triangular factors of A's block
 * reflectors (one small tile per tile of A), for geqrf and qr_apply.
 * Collective; not inside a region. */
DAGGER_API
dagger_status_t dagger_linalg_qr_t_create(const dagger_array_t *A, dagger_array_t **T);

/* A = Q R by tiled Householder QR (LAPACK geqrt, tpqrt, gemqrt, tpmqrt): R
 * in place on and above the diagonal, the reflectors below it and in T
 * (from dagger_linalg_qr_t_create(A); not A itself). A is M x N. */
DAGGER_API
dagger_status_t dagger_linalg_geqrf(dagger_region_t *r, dagger_array_t *A, dagger_array_t *T);

/* C = op(Q) C with Q from dagger_linalg_geqrf(A, T): Q^T with TRANS, Q with
 * NOTRANS. C is M x NRHS with row blocks equal to A's column block (a
 * re-blocked copy otherwise, with r = NULL); C may not be A or T. */
DAGGER_API
dagger_status_t dagger_linalg_qr_apply(dagger_region_t *r, dagger_la_trans_t trans,
                                       dagger_array_t *A, dagger_array_t *T, dagger_array_t *C);

#ifdef __cplusplus
}
#endif
#endif
