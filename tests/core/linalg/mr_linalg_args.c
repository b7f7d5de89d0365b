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
    AR_OK(dagger_region_end(r));
    dagger_array_t *all[] = {A, B, C, Bb, Cs, S, Sn, Ai};
    for (int i = 0; i < 8; i++)
        AR_OK(dagger_array_destroy(all[i]));
    AR_OK(dagger_finalize(rt));
}
