/* A tile's triangular solve by halving (trsm_rec.c): the arguments and the
 * result of cblas_?trsm in column-major order, most flops through gemm. */
#ifndef DG_LINALG_TRSM_REC_H
#define DG_LINALG_TRSM_REC_H

#include <cblas.h>

/* The widest triangle solved by one BLAS trsm call. */
#define DG_LA_TRSM_LEAF 64

void dg_la_dtrsm_rec(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE ta, CBLAS_DIAG diag, int m,
                     int n, double alpha, const double *a, int lda, double *b, int ldb);
void dg_la_strsm_rec(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE ta, CBLAS_DIAG diag, int m,
                     int n, float alpha, const float *a, int lda, float *b, int ldb);

#endif
