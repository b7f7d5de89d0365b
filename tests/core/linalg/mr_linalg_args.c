/* Bad arguments: every routine returns DAGGER_ERR_INVALID_ARG (or
 * BAD_HANDLE) with a detail saying what to change, on every rank, and runs
 * nothing. */
#include "tests/core/linalg/la_util.h"

Test(linalg_args, mismatches)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_t *A = la_rand(rt, DAGGER_F64, 40, 30, 10, 10, 1);
    dagger_array_t *B = la_rand(rt, DAGGER_F64, 30, 20, 10, 10, 2);
    dagger_array_t *C = la_rand(rt, DAGGER_F64, 40, 20, 10, 10, 3);
    dagger_array_t *Bb = la_rand(rt, DAGGER_F64, 30, 20, 15, 10, 4);
    dagger_array_t *Cs = la_rand(rt, DAGGER_F32, 40, 20, 10, 10, 5);
    dagger_array_t *S = la_spd(rt, DAGGER_F64, 40, 10, 10);
    dagger_array_t *Sn = la_spd(rt, DAGGER_F64, 40, 10, 8);
    dagger_array_desc_t di = AR_D2(DAGGER_I32, 40, 40, 10, 10);
    dagger_array_t *Ai;
    AR_OK(dagger_array_zeros(rt, &di, &Ai));
    AR_FAILS(dagger_linalg_gemm(NULL, 0, 0, 1, A, C, 0, B), DAGGER_ERR_INVALID_ARG,
             "the rows of op(A) is 40 but must equal the rows of C (30)");
    AR_FAILS(dagger_linalg_gemm(NULL, 0, 0, 1, A, Bb, 0, C), DAGGER_ERR_INVALID_ARG,
             "the row block of op(B) is 15 but must equal the column block of op(A) (10)");
    AR_FAILS(dagger_linalg_gemm(NULL, 0, 0, 1, A, B, 0, Cs), DAGGER_ERR_INVALID_ARG,
             "give both the same dtype");
    AR_FAILS(dagger_linalg_gemm(NULL, 2, 0, 1, A, B, 0, C), DAGGER_ERR_INVALID_ARG, "ta 2");
    AR_FAILS(dagger_linalg_gemm(NULL, 0, 0, 1, A, B, 0, NULL), DAGGER_ERR_BAD_HANDLE,
             "not a live array");
    AR_FAILS(dagger_linalg_potrf(NULL, DAGGER_LA_LOWER, A), DAGGER_ERR_INVALID_ARG,
             "A is 40 x 30; it must be square");
    AR_FAILS(dagger_linalg_potrf(NULL, DAGGER_LA_LOWER, Ai), DAGGER_ERR_INVALID_ARG,
             "linear algebra takes f64 or f32 arrays");
    AR_FAILS(dagger_linalg_potrs(NULL, DAGGER_LA_LOWER, S, B), DAGGER_ERR_INVALID_ARG,
             "the rows of B is 30 but must equal the order of A (40)");
    AR_FAILS(dagger_linalg_syrk(NULL, 0, 0, 1, A, 0, C), DAGGER_ERR_INVALID_ARG,
             "C is 40 x 20; it must be square");
    /* Non-square tiles inside a region of ours: no copy possible there. */
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, NULL, &r));
    AR_FAILS(dagger_linalg_potrf(r, DAGGER_LA_LOWER, Sn), DAGGER_ERR_INVALID_ARG,
             "create it with blocks 8 x 8, or call with r = NULL");
    /* r = NULL while a region is open: the call's own region, or its
     * re-blocked copy, cannot be made then; the detail names the call. */
    AR_FAILS(dagger_linalg_potrf(NULL, DAGGER_LA_LOWER, Sn), DAGGER_ERR_STATE,
             "dagger_linalg_potrf: its re-blocked copy of the array: dagger_array_zeros: ");
    AR_FAILS(dagger_linalg_potrf(NULL, DAGGER_LA_LOWER, S), DAGGER_ERR_STATE,
             "dagger_linalg_potrf: opens a region of its own, and cannot");
    AR_OK(dagger_region_end(r));
    dagger_array_t *all[] = {A, B, C, Bb, Cs, S, Sn, Ai};
    for (int i = 0; i < 8; i++)
        AR_OK(dagger_array_destroy(all[i]));
    AR_OK(dagger_finalize(rt));
}

/* One array passed twice where one of the two is written: every routine
 * refuses it, naming the pair, on every rank. */
Test(linalg_args, aliases)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_t *S = la_spd(rt, DAGGER_F64, 40, 10, 10);
    dagger_array_t *B = la_rand(rt, DAGGER_F64, 40, 40, 10, 10, 2);
    dagger_array_t *C = la_rand(rt, DAGGER_F64, 40, 40, 10, 10, 3);
    dagger_array_t *x = la_vec(rt, DAGGER_F64, 40, 10, 4);
    dagger_array_t *T;
    AR_OK(dagger_linalg_qr_t_create(B, &T));
    int64_t ipiv[40];
    AR_FAILS(dagger_linalg_gemm(NULL, 0, 0, 1, B, C, 0, B), DAGGER_ERR_INVALID_ARG,
             "C must not be A");
    AR_FAILS(dagger_linalg_gemm(NULL, 0, 0, 1, C, B, 0, B), DAGGER_ERR_INVALID_ARG,
             "C must not be B");
    /* Views are refused, whichever operand (a gemm into a view ran BLAS
     * with a wrong leading dimension and returned success). */
    dagger_array_t *Bv, *xv;
    AR_OK(dagger_array_view(B, (size_t[]){0, 0}, (size_t[]){40, 40}, &Bv));
    AR_OK(dagger_array_view(x, (size_t[]){0}, (size_t[]){40}, &xv));
    AR_FAILS(dagger_linalg_gemm(NULL, 0, 0, 1, B, C, 0, Bv), DAGGER_ERR_INVALID_ARG,
             "C is a view of an array; linear algebra works on whole arrays");
    AR_FAILS(dagger_linalg_gemm(NULL, 0, 0, 1, Bv, C, 0, S), DAGGER_ERR_INVALID_ARG,
             "A is a view of an array");
    AR_FAILS(dagger_linalg_gemv(NULL, 0, 1, C, xv, 0, x), DAGGER_ERR_INVALID_ARG,
             "x is a view of an array");
    AR_FAILS(dagger_linalg_potrf(NULL, DAGGER_LA_LOWER, Bv), DAGGER_ERR_INVALID_ARG,
             "A is a view of an array");
    AR_OK(dagger_array_destroy(Bv));
    AR_OK(dagger_array_destroy(xv));
    AR_FAILS(dagger_linalg_gemv(NULL, 0, 1, B, x, 0, x), DAGGER_ERR_INVALID_ARG,
             "y must not be x");
    AR_FAILS(dagger_linalg_syrk(NULL, 0, 0, 1, C, 0, C), DAGGER_ERR_INVALID_ARG,
             "C must not be A");
    AR_FAILS(dagger_linalg_trsm(NULL, 0, 0, 0, 0, 1, S, S), DAGGER_ERR_INVALID_ARG,
             "B must not be A");
    AR_FAILS(dagger_linalg_potrs(NULL, DAGGER_LA_LOWER, S, S), DAGGER_ERR_INVALID_ARG,
             "B must not be A");
    AR_FAILS(dagger_linalg_getrs(NULL, S, ipiv, S), DAGGER_ERR_INVALID_ARG, "B must not be A");
    /* gesv refuses before it factorises: A is left as it was. */
    double before[40 * 40], after[40 * 40];
    AR_OK(dagger_array_collect(S, before));
    AR_FAILS(dagger_linalg_gesv(NULL, S, ipiv, S), DAGGER_ERR_INVALID_ARG, "B must not be A");
    dagger_array_t *W = la_rand(rt, DAGGER_F64, 40, 30, 10, 10, 5);
    dagger_array_t *Wb = la_rand(rt, DAGGER_F64, 40, 2, 10, 10, 6);
    double wbefore[40 * 30], wafter[40 * 30];
    AR_OK(dagger_array_collect(W, wbefore));
    AR_FAILS(dagger_linalg_gesv(NULL, W, ipiv, Wb), DAGGER_ERR_INVALID_ARG,
             "A is 40 x 30; it must be square");
    AR_OK(dagger_array_collect(S, after));
    AR_OK(dagger_array_collect(W, wafter));
    cr_assert(!memcmp(before, after, sizeof(before)), "gesv changed A before refusing B");
    cr_assert(!memcmp(wbefore, wafter, sizeof(wbefore)), "gesv factorised a non-square A");
    AR_FAILS(dagger_linalg_geqrf(NULL, B, B), DAGGER_ERR_INVALID_ARG, "T must not be A");
    AR_FAILS(dagger_linalg_qr_apply(NULL, 1, B, B, C), DAGGER_ERR_INVALID_ARG,
             "T must not be A");
    AR_FAILS(dagger_linalg_qr_apply(NULL, 1, B, T, B), DAGGER_ERR_INVALID_ARG,
             "C must not be A");
    AR_FAILS(dagger_linalg_qr_apply(NULL, 1, B, T, T), DAGGER_ERR_INVALID_ARG,
             "C must not be T");
    dagger_array_t *all[] = {S, B, C, x, T, W, Wb};
    for (int i = 0; i < 7; i++)
        AR_OK(dagger_array_destroy(all[i]));
    AR_OK(dagger_finalize(rt));
}
