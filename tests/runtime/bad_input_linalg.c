/* Bad-input probes of dagger/linalg.h: bad handles, dtypes, flags and
 * shapes for every routine. BI.a and BI.b are 4x4 f64 in 2x2 blocks, BI.ai
 * 4x4 i32, BI.v a 1-D f64 of 4. */
#include <dagger/linalg.h>

#include "runtime/bad_input.h"

/* Array handles that are not live arrays (as in bad_input_array.c). */
#define LA_BAD {NULL, BI.a_gone, (dagger_array_t *)BI.s, (dagger_array_t *)BI.foreign}
#define LA_NBAD 4

static const dagger_la_trans_t NT = DAGGER_LA_NOTRANS;
static const dagger_la_trans_t BAD_T = (dagger_la_trans_t)7;
static const dagger_la_uplo_t LO = DAGGER_LA_LOWER;
static const dagger_la_uplo_t BAD_U = (dagger_la_uplo_t)9;

void bi_probe_dagger_linalg_gemm(void)
{
    dagger_array_t *bad[] = LA_BAD;
    dagger_array_t *c = NULL;
    cr_assert_eq(dagger_array_similar(BI.a, &c), DAGGER_OK);
    for (int i = 0; i < LA_NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_gemm(NULL, NT, NT, 1, bad[i], BI.b, 0, c));
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_gemm(NULL, NT, NT, 1, BI.a, bad[i], 0, c));
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_gemm(NULL, NT, NT, 1, BI.a, BI.b, 0, bad[i]));
    }
    E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_gemm(BI.r_gone, NT, NT, 1, BI.a, BI.b, 0, c));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_gemm(NULL, BAD_T, NT, 1, BI.a, BI.b, 0, c));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_gemm(NULL, NT, BAD_T, 1, BI.a, BI.b, 0, c));
    E(DAGGER_ERR_DTYPE, dagger_linalg_gemm(NULL, NT, NT, 1, BI.ai, BI.b, 0, c));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_gemm(NULL, NT, NT, 1, BI.v, BI.b, 0, c));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_gemm(NULL, NT, NT, 1, BI.a, BI.b, 0, BI.a));
    E(DAGGER_OK, dagger_linalg_gemm(NULL, NT, NT, 1, BI.a, BI.b, 0, c));
}

void bi_probe_dagger_linalg_gemv(void)
{
    dagger_array_t *bad[] = LA_BAD, *y = NULL;
    cr_assert_eq(dagger_array_similar(BI.v, &y), DAGGER_OK);
    for (int i = 0; i < LA_NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_gemv(NULL, NT, 1, bad[i], BI.v, 0, y));
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_gemv(NULL, NT, 1, BI.a, bad[i], 0, y));
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_gemv(NULL, NT, 1, BI.a, BI.v, 0, bad[i]));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_gemv(NULL, BAD_T, 1, BI.a, BI.v, 0, y));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_gemv(NULL, NT, 1, BI.a, BI.b, 0, y));
    E(DAGGER_ERR_DTYPE, dagger_linalg_gemv(NULL, NT, 1, BI.ai, BI.v, 0, y));
    E(DAGGER_OK, dagger_linalg_gemv(NULL, NT, 1, BI.a, BI.v, 0, y));
}

void bi_probe_dagger_linalg_syrk(void)
{
    dagger_array_t *bad[] = LA_BAD;
    for (int i = 0; i < LA_NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_syrk(NULL, LO, NT, 1, bad[i], 0, BI.b));
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_syrk(NULL, LO, NT, 1, BI.a, 0, bad[i]));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_syrk(NULL, BAD_U, NT, 1, BI.a, 0, BI.b));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_syrk(NULL, LO, BAD_T, 1, BI.a, 0, BI.b));
    E(DAGGER_ERR_DTYPE, dagger_linalg_syrk(NULL, LO, NT, 1, BI.a, 0, BI.ai));
    E(DAGGER_OK, dagger_linalg_syrk(NULL, LO, NT, 1, BI.a, 0, BI.b));
}

void bi_probe_dagger_linalg_trsm(void)
{
    dagger_array_t *bad[] = LA_BAD;
    const dagger_la_side_t L = DAGGER_LA_LEFT;
    const dagger_la_diag_t U = DAGGER_LA_UNIT;
    for (int i = 0; i < LA_NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_trsm(NULL, L, LO, NT, U, 1, bad[i], BI.b));
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_trsm(NULL, L, LO, NT, U, 1, BI.a, bad[i]));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_trsm(NULL, (dagger_la_side_t)5, LO, NT, U, 1, BI.a, BI.b));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_trsm(NULL, L, BAD_U, NT, U, 1, BI.a, BI.b));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_trsm(NULL, L, LO, BAD_T, U, 1, BI.a, BI.b));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_trsm(NULL, L, LO, NT, (dagger_la_diag_t)3, 1, BI.a, BI.b));
    E(DAGGER_ERR_DTYPE, dagger_linalg_trsm(NULL, L, LO, NT, U, 1, BI.a, BI.ai));
    E(DAGGER_OK, dagger_linalg_trsm(NULL, L, LO, NT, U, 1, BI.a, BI.b));
}

void bi_probe_dagger_linalg_potrf(void)
{
    dagger_array_t *bad[] = LA_BAD;
    for (int i = 0; i < LA_NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_potrf(NULL, LO, bad[i]));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_potrf(NULL, BAD_U, BI.a));
    E(DAGGER_ERR_DTYPE, dagger_linalg_potrf(NULL, LO, BI.ai));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_potrf(NULL, LO, BI.v));
    E(DAGGER_ERR_TASK_FAILED, dagger_linalg_potrf(NULL, LO, BI.a)); /* zeros: not positive */
}

void bi_probe_dagger_linalg_potrs(void)
{
    dagger_array_t *bad[] = LA_BAD;
    for (int i = 0; i < LA_NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_potrs(NULL, LO, bad[i], BI.b));
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_potrs(NULL, LO, BI.a, bad[i]));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_potrs(NULL, BAD_U, BI.a, BI.b));
    E(DAGGER_ERR_DTYPE, dagger_linalg_potrs(NULL, LO, BI.a, BI.ai));
}

static int64_t ipiv[8];

void bi_probe_dagger_linalg_getrf(void)
{
    dagger_array_t *bad[] = LA_BAD;
    for (int i = 0; i < LA_NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_getrf(NULL, bad[i], ipiv));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_getrf(NULL, BI.a, NULL));
    E(DAGGER_ERR_DTYPE, dagger_linalg_getrf(NULL, BI.ai, ipiv));
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_getrf(r, BI.a, ipiv)); /* r must be NULL */
    bi_close(r);
    E(DAGGER_ERR_TASK_FAILED, dagger_linalg_getrf(NULL, BI.a, ipiv)); /* zeros: singular */
}

void bi_probe_dagger_linalg_getrs(void)
{
    dagger_array_t *bad[] = LA_BAD;
    for (int i = 0; i < LA_NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_getrs(NULL, bad[i], ipiv, BI.b));
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_getrs(NULL, BI.a, ipiv, bad[i]));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_getrs(NULL, BI.a, NULL, BI.b));
    E(DAGGER_ERR_DTYPE, dagger_linalg_getrs(NULL, BI.a, ipiv, BI.ai));
}

void bi_probe_dagger_linalg_gesv(void)
{
    dagger_array_t *bad[] = LA_BAD;
    for (int i = 0; i < LA_NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_gesv(NULL, bad[i], ipiv, BI.b));
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_gesv(NULL, BI.a, ipiv, bad[i]));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_gesv(NULL, BI.a, NULL, BI.b));
    E(DAGGER_ERR_DTYPE, dagger_linalg_gesv(NULL, BI.ai, ipiv, BI.b));
}

void bi_probe_dagger_linalg_qr_t_create(void)
{
    dagger_array_t *bad[] = LA_BAD, *t = NULL;
    for (int i = 0; i < LA_NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_qr_t_create(bad[i], &t));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_qr_t_create(BI.a, NULL));
    E(DAGGER_ERR_DTYPE, dagger_linalg_qr_t_create(BI.ai, &t));
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_STATE, dagger_linalg_qr_t_create(BI.a, &t));
    bi_close(r);
    E(DAGGER_OK, dagger_linalg_qr_t_create(BI.a, &t));
}

void bi_probe_dagger_linalg_geqrf(void)
{
    dagger_array_t *bad[] = LA_BAD, *t = NULL;
    cr_assert_eq(dagger_linalg_qr_t_create(BI.a, &t), DAGGER_OK);
    for (int i = 0; i < LA_NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_geqrf(NULL, bad[i], t));
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_geqrf(NULL, BI.a, bad[i]));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_geqrf(NULL, BI.a, BI.v)); /* not its T */
    E(DAGGER_OK, dagger_linalg_geqrf(NULL, BI.a, t));
}

void bi_probe_dagger_linalg_qr_apply(void)
{
    dagger_array_t *bad[] = LA_BAD, *t = NULL;
    cr_assert_eq(dagger_linalg_qr_t_create(BI.a, &t), DAGGER_OK);
    for (int i = 0; i < LA_NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_qr_apply(NULL, NT, bad[i], t, BI.b));
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_qr_apply(NULL, NT, BI.a, bad[i], BI.b));
        E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_qr_apply(NULL, NT, BI.a, t, bad[i]));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_qr_apply(NULL, BAD_T, BI.a, t, BI.b));
    E(DAGGER_ERR_DTYPE, dagger_linalg_qr_apply(NULL, NT, BI.a, t, BI.ai));
}
