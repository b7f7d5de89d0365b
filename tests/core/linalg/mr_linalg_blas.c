/* gemm, gemv, syrk and trsm on distributed arrays against one BLAS call on
 * the collected matrices (1..4 ranks; blocks that divide the sizes and
 * blocks that do not, square and not). */
#include "tests/core/linalg/la_util.h"

/* gemm, all four op combinations: C (70 x 50) in 32 x 24 blocks, K = 60 in
 * blocks of 20, f64 and f32. */
Test(linalg_blas, gemm)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    size_t M = 70, N = 50, K = 60, mb = 32, nb = 24, kb = 20;
    for (int d = 0; d < 2; d++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                la_gemm_case_t g = la_gemm_case(rt, types[d], ta, tb, M, N, K, mb, nb, kb);
                AR_OK(dagger_linalg_gemm(NULL, ta, tb, 1.5, g.A, g.B, -0.5, g.C));
                la_gemm_check(&g, 1.5, -0.5, "gemm");
            }
    AR_OK(dagger_finalize(rt));
}

/* gemv both ways: A 90 x 70 in 32 x 24 blocks, inside a region of ours. */
Test(linalg_blas, gemv)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    size_t M = 90, N = 70;
    for (int d = 0; d < 2; d++)
        for (int ta = 0; ta < 2; ta++) {
            dagger_dtype_t t = types[d];
            dagger_array_t *A = la_rand(rt, t, M, N, 32, 24, 4);
            dagger_array_t *x = la_vec(rt, t, ta ? M : N, ta ? 32 : 24, 5);
            dagger_array_t *y = la_vec(rt, t, ta ? N : M, ta ? 24 : 32, 6);
            double *a = ar_collect(A), *vx = ar_collect(x), *vy = ar_collect(y);
            dagger_region_t *r;
            AR_OK(dagger_region_begin(rt, NULL, &r));
            AR_OK(dagger_linalg_gemv(r, ta, 2.0, A, x, 0.25, y));
            AR_OK(dagger_region_end(r));
            cblas_dgemv(CblasColMajor, ta ? CblasTrans : CblasNoTrans, (int)M, (int)N, 2.0, a,
                        (int)M, vx, 1, 0.25, vy, 1);
            double *got = ar_collect(y);
            LA_CLOSE(got, vy, ta ? N : M, 1, 0, t, "gemv");
            free(a), free(vx), free(vy), free(got);
            dagger_array_destroy(A), dagger_array_destroy(x), dagger_array_destroy(y);
        }
    AR_OK(dagger_finalize(rt));
}

/* gemm of a matrix and a few vectors moves the vectors, not the matrix: A
 * 256 x 256 in 64 x 64 tiles (32 KiB), B and C 256 x 2 in 64 x 2 blocks (1
 * KiB): the 16 tasks' tiles of B and C and C's 4 going home stay below one
 * tile of A on every rank (at most 28 KiB); checked against BLAS too. */
Test(linalg_blas, gemm_with_thin_operands_moves_them_not_the_matrix)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_t *A = la_rand(rt, DAGGER_F64, 256, 256, 64, 64, 11);
    dagger_array_t *B = la_rand(rt, DAGGER_F64, 256, 2, 64, 2, 12);
    dagger_array_t *C = la_rand(rt, DAGGER_F64, 256, 2, 64, 2, 13);
    double *a = ar_collect(A), *b = ar_collect(B), *c = ar_collect(C);
    AR_OK(dagger_linalg_gemm(NULL, DAGGER_LA_NOTRANS, DAGGER_LA_NOTRANS, 1.0, A, B, 0.5, C));
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    cr_assert_leq(s.bytes_received, 28 * 64 * 2 * sizeof(double), "rank %d received %llu bytes",
                  dagger_rank(rt), (unsigned long long)s.bytes_received);
    cr_assert(dagger_nranks(rt) == 1 || s.transfers > 0, "no transfer: the test proves nothing");
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 256, 2, 256, 1.0, a, 256, b, 256, 0.5,
                c, 256);
    double *got = ar_collect(C);
    cr_assert(la_rel(got, c, 256, 2, 0) < LA_TOL(DAGGER_F64), "thin gemm: residual %.3e",
              la_rel(got, c, 256, 2, 0));
    free(a), free(b), free(c), free(got);
    dagger_array_destroy(A), dagger_array_destroy(B), dagger_array_destroy(C);
    AR_OK(dagger_finalize(rt));
}

/* In a region scoped to rank 0 the routines that place tasks by tile
 * (gemv, gemm and trsm with thin operands) leave placement to the region:
 * everything runs on rank 0 and the results are right. */
Test(linalg_blas, placed_routines_in_a_region_scoped_to_one_rank)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_t *A = la_spd(rt, DAGGER_F64, 128, 32, 32);
    dagger_array_t *x = la_vec(rt, DAGGER_F64, 128, 32, 5), *y = la_vec(rt, DAGGER_F64, 128, 32, 6);
    dagger_array_t *B = la_rand(rt, DAGGER_F64, 128, 2, 32, 2, 7);
    double *a = ar_collect(A), *vx = ar_collect(x), *vy = ar_collect(y), *b = ar_collect(B);
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, &DAGGER_SCOPE_RANK(0), &r));
    AR_OK(dagger_linalg_gemv(r, DAGGER_LA_NOTRANS, 1.0, A, x, 0.5, y));
    AR_OK(dagger_linalg_trsm(r, DAGGER_LA_LEFT, DAGGER_LA_LOWER, DAGGER_LA_NOTRANS,
                             DAGGER_LA_NONUNIT, 1.0, A, B));
    AR_OK(dagger_region_end(r));
    cblas_dgemv(CblasColMajor, CblasNoTrans, 128, 128, 1.0, a, 128, vx, 1, 0.5, vy, 1);
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 128, 2, 1.0, a,
                128, b, 128);
    double *gy = ar_collect(y), *gb = ar_collect(B);
    LA_CLOSE(gy, vy, 128, 1, 0, DAGGER_F64, "gemv in a region of rank 0");
    LA_CLOSE(gb, b, 128, 2, 0, DAGGER_F64, "trsm in a region of rank 0");
    free(a), free(vx), free(vy), free(b), free(gy), free(gb);
    dagger_array_destroy(A), dagger_array_destroy(x), dagger_array_destroy(y);
    dagger_array_destroy(B);
    AR_OK(dagger_finalize(rt));
}

/* gemv moves the vectors' pieces, not A's tiles: each tile's task runs on
 * the tile's rank. A 256 x 256 in 64 x 64 tiles (32 KiB each), x and y in
 * pieces of 64 (512 bytes): at most 16 hops of y's pieces, 4 pieces of x
 * and 4 of y going home reach a rank, 12 KiB, below one tile of A. */
Test(linalg_blas, gemv_moves_the_vectors_not_the_matrix)
{
    dagger_runtime_t *rt = ar_init();
    for (int ta = 0; ta < 2; ta++) {
        dagger_array_t *A = la_rand(rt, DAGGER_F64, 256, 256, 64, 64, 7);
        dagger_array_t *x = la_vec(rt, DAGGER_F64, 256, 64, 8);
        dagger_array_t *y = la_vec(rt, DAGGER_F64, 256, 64, 9);
        AR_OK(dagger_linalg_gemv(NULL, ta, 1.0, A, x, 0.0, y));
        dagger_region_stats_t s;
        AR_OK(dagger_region_stats(rt, &s));
        cr_assert_leq(s.bytes_received, 24 * 64 * sizeof(double),
                      "op %d: rank %d received %llu bytes", ta, dagger_rank(rt),
                      (unsigned long long)s.bytes_received);
        cr_assert(dagger_nranks(rt) == 1 || s.transfers > 0, "no transfer: the test proves nothing");
        dagger_array_destroy(A), dagger_array_destroy(x), dagger_array_destroy(y);
    }
    AR_OK(dagger_finalize(rt));
}

/* syrk, both triangles and both ops: C 75 x 75 in 25 x 25 tiles, K = 40 in
 * blocks of 16; the other triangle must stay as it was. */
Test(linalg_blas, syrk)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    size_t N = 75, K = 40;
    for (int d = 0; d < 2; d++)
        for (int up = 0; up < 2; up++)
            for (int ta = 0; ta < 2; ta++) {
                dagger_dtype_t t = types[d];
                dagger_array_t *A = ta ? la_rand(rt, t, K, N, 16, 25, 7) : la_rand(rt, t, N, K, 25, 16, 7);
                dagger_array_t *C = la_rand(rt, t, N, N, 25, 25, 8);
                double *a = ar_collect(A), *c = ar_collect(C);
                AR_OK(dagger_linalg_syrk(NULL, up, ta, -1.0, A, 2.0, C));
                double *got = ar_collect(C);
                LA_CLOSE(got, c, N, N, up ? 'l' : 'u', t, "syrk: untouched triangle");
                cblas_dsyrk(CblasColMajor, up ? CblasUpper : CblasLower,
                            ta ? CblasTrans : CblasNoTrans, (int)N, (int)K, -1.0, a,
                            ta ? (int)K : (int)N, 2.0, c, (int)N);
                LA_CLOSE(got, c, N, N, up ? 'U' : 'L', t, "syrk");
                free(a), free(c), free(got);
                dagger_array_destroy(A), dagger_array_destroy(C);
            }
    AR_OK(dagger_finalize(rt));
}

/* trsm case c (bits: side, uplo, op, diag) of dtype t against BLAS: A 60 x 60
 * in 24 x 24 tiles, B 60 x o (LEFT) or o x 60 (RIGHT) in blocks ob wide. */
static void trsm_case(dagger_runtime_t *rt, dagger_dtype_t t, int c, size_t o, size_t ob)
{
    size_t n = 60;
    int side = c & 1, up = (c >> 1) & 1, ta = (c >> 2) & 1, unit = (c >> 3) & 1;
    dagger_array_t *A = la_spd(rt, t, n, 24, 24) /* well conditioned */;
    dagger_array_t *B = side ? la_rand(rt, t, o, n, ob, 24, 9) : la_rand(rt, t, n, o, 24, ob, 9);
    if (unit) /* off-diagonal entries below 1/n: well conditioned with a unit diagonal */
        AR_OK(dagger_array_scalar(NULL, DAGGER_OP_DIV, A, A, (double)n));
    double *a = ar_collect(A), *b = ar_collect(B);
    AR_OK(dagger_linalg_trsm(NULL, side, up, ta, unit, 0.5, A, B));
    size_t bm = side ? o : n, bn = side ? n : o;
    cblas_dtrsm(CblasColMajor, side ? CblasRight : CblasLeft, up ? CblasUpper : CblasLower,
                ta ? CblasTrans : CblasNoTrans, unit ? CblasUnit : CblasNonUnit, (int)bm, (int)bn,
                0.5, a, (int)n, b, (int)bm);
    double *got = ar_collect(B);
    cr_assert(la_rel(got, b, bm, bn, 0) < LA_TOL(t), "trsm case %d %s, B %zu wide: residual %.3e",
              c, t == DAGGER_F64 ? "f64" : "f32", o, la_rel(got, b, bm, bn, 0));
    free(a), free(b), free(got);
    dagger_array_destroy(A), dagger_array_destroy(B);
}

/* trsm, all 16 side/uplo/op/diag cases: B 45 wide in blocks of 20. */
Test(linalg_blas, trsm)
{
    dagger_runtime_t *rt = ar_init();
    dagger_dtype_t types[] = LA_DTYPES;
    for (int d = 0; d < 2; d++)
        for (int c = 0; c < 16; c++)
            trsm_case(rt, types[d], c, 45, 20);
    AR_OK(dagger_finalize(rt));
}

/* trsm with a thin B (3 right-hand sides, narrower than A's tiles): its
 * tasks run on A's tiles' ranks. All 16 cases against BLAS; then the bytes
 * a rank receives solving with A 256 x 256 in 64 x 64 tiles (32 KiB) and B
 * 256 x 2 in 64 x 2 blocks (1 KiB): at most two B tiles for each of the 10
 * tasks and 4 going home, below one tile of A. */
Test(linalg_blas, trsm_with_few_right_hand_sides_moves_b_not_a)
{
    dagger_runtime_t *rt = ar_init();
    for (int c = 0; c < 16; c++)
        trsm_case(rt, DAGGER_F64, c, 3, 3);
    dagger_array_t *A = la_spd(rt, DAGGER_F64, 256, 64, 64);
    dagger_array_t *B = la_rand(rt, DAGGER_F64, 256, 2, 64, 2, 3);
    AR_OK(dagger_linalg_trsm(NULL, DAGGER_LA_LEFT, DAGGER_LA_LOWER, DAGGER_LA_NOTRANS,
                             DAGGER_LA_NONUNIT, 1.0, A, B));
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    cr_assert_leq(s.bytes_received, 24 * 64 * 2 * sizeof(double), "rank %d received %llu bytes",
                  dagger_rank(rt), (unsigned long long)s.bytes_received);
    cr_assert(dagger_nranks(rt) == 1 || s.transfers > 0, "no transfer: the test proves nothing");
    dagger_array_destroy(A), dagger_array_destroy(B);
    AR_OK(dagger_finalize(rt));
}
