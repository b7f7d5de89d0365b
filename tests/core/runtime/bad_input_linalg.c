/* Bad-input probes of dagger/linalg.h: every routine refuses bad, destroyed
 * and foreign arrays, arrays of another dtype or rank, unknown flags and
 * (for getrf/getrs/gesv) a region of the caller's, with the documented code
 * and a detail. Numerical failures (not SPD, singular) are tested in
 * tests/core/linalg. */
#include <stdint.h>

#include "tests/core/runtime/bad_input.h"

#define BAD_FLAG 7

/* The handles every matrix argument must refuse, and the code for each. */
typedef struct {
    dagger_array_t *a;
    dagger_status_t want;
} bad_arr_t;

static int bad_arrays(bad_arr_t out[5])
{
    out[0] = (bad_arr_t){NULL, DAGGER_ERR_BAD_HANDLE};
    out[1] = (bad_arr_t){BI.a_gone, DAGGER_ERR_BAD_HANDLE};
    out[2] = (bad_arr_t){(dagger_array_t *)BI.foreign, DAGGER_ERR_BAD_HANDLE};
    out[3] = (bad_arr_t){BI.ai, DAGGER_ERR_INVALID_ARG}; /* i32 */
    out[4] = (bad_arr_t){BI.v, DAGGER_ERR_INVALID_ARG};  /* 1-D where a matrix is due */
    return 5;
}

#define EACH_BAD(x) \
    bad_arr_t bad_[5]; \
    for (int k_ = 0, n_ = bad_arrays(bad_); k_ < n_ && ((x) = bad_[k_].a, 1); k_++)
#define WANT bad_[k_].want

void bi_probe_dagger_linalg_gemm(void)
{
    dagger_array_t *x;
    EACH_BAD(x) {
        E(WANT, dagger_linalg_gemm(NULL, 0, 0, 1, x, BI.b, 0, BI.a));
        E(WANT, dagger_linalg_gemm(NULL, 0, 0, 1, BI.a, x, 0, BI.b));
        E(WANT, dagger_linalg_gemm(NULL, 0, 0, 1, BI.a, BI.b, 0, x));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_gemm(NULL, BAD_FLAG, 0, 1, BI.a, BI.b, 0, BI.a));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_gemm(NULL, 0, BAD_FLAG, 1, BI.a, BI.b, 0, BI.a));
}

void bi_probe_dagger_linalg_gemv(void)
{
    E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_gemv(NULL, 0, 1, NULL, BI.v, 0, BI.v));
    E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_gemv(NULL, 0, 1, BI.a, BI.a_gone, 0, BI.v));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_gemv(NULL, 0, 1, BI.v, BI.v, 0, BI.v));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_gemv(NULL, 0, 1, BI.a, BI.a, 0, BI.v));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_gemv(NULL, BAD_FLAG, 1, BI.a, BI.v, 0, BI.v));
}

void bi_probe_dagger_linalg_syrk(void)
{
    dagger_array_t *x;
    EACH_BAD(x) {
        E(WANT, dagger_linalg_syrk(NULL, 0, 0, 1, x, 0, BI.b));
        E(WANT, dagger_linalg_syrk(NULL, 0, 0, 1, BI.a, 0, x));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_syrk(NULL, BAD_FLAG, 0, 1, BI.a, 0, BI.b));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_syrk(NULL, 0, BAD_FLAG, 1, BI.a, 0, BI.b));
}

void bi_probe_dagger_linalg_trsm(void)
{
    dagger_array_t *x;
    EACH_BAD(x) {
        E(WANT, dagger_linalg_trsm(NULL, 0, 0, 0, 0, 1, x, BI.b));
        E(WANT, dagger_linalg_trsm(NULL, 0, 0, 0, 0, 1, BI.a, x));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_trsm(NULL, BAD_FLAG, 0, 0, 0, 1, BI.a, BI.b));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_trsm(NULL, 0, BAD_FLAG, 0, 0, 1, BI.a, BI.b));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_trsm(NULL, 0, 0, BAD_FLAG, 0, 1, BI.a, BI.b));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_trsm(NULL, 0, 0, 0, BAD_FLAG, 1, BI.a, BI.b));
}

void bi_probe_dagger_linalg_potrf(void)
{
    dagger_array_t *x;
    EACH_BAD(x) E(WANT, dagger_linalg_potrf(NULL, DAGGER_LA_LOWER, x));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_potrf(NULL, BAD_FLAG, BI.a));
}

void bi_probe_dagger_linalg_potrs(void)
{
    dagger_array_t *x;
    EACH_BAD(x) {
        E(WANT, dagger_linalg_potrs(NULL, DAGGER_LA_LOWER, x, BI.b));
        E(WANT, dagger_linalg_potrs(NULL, DAGGER_LA_LOWER, BI.a, x));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_potrs(NULL, BAD_FLAG, BI.a, BI.b));
}

void bi_probe_dagger_linalg_getrf(void)
{
    int64_t piv[4];
    dagger_array_t *x;
    EACH_BAD(x) E(WANT, dagger_linalg_getrf(NULL, x, piv));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_getrf(NULL, BI.a, NULL));
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_getrf(r, BI.a, piv));
    bi_close(r);
}

void bi_probe_dagger_linalg_getrs(void)
{
    int64_t piv[4] = {0, 1, 2, 3};
    dagger_array_t *x;
    EACH_BAD(x) {
        E(WANT, dagger_linalg_getrs(NULL, x, piv, BI.b));
        E(WANT, dagger_linalg_getrs(NULL, BI.a, piv, x));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_getrs(NULL, BI.a, NULL, BI.b));
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_getrs(r, BI.a, piv, BI.b));
    bi_close(r);
}

void bi_probe_dagger_linalg_gesv(void)
{
    int64_t piv[4];
    dagger_array_t *x;
    EACH_BAD(x) {
        E(WANT, dagger_linalg_gesv(NULL, x, piv, BI.b));
        E(WANT, dagger_linalg_gesv(NULL, BI.a, piv, x)); /* before A is factorised */
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_gesv(NULL, BI.a, NULL, BI.b));
}

/* The pivot-array forms: bad handles, A not in column-panel layout (BI.a
 * has 2 x 2 blocks), and a P that is no pivot array (NULL, f64, 2-D). */
void bi_probe_dagger_linalg_getrf_array(void)
{
    dagger_array_t *x;
    EACH_BAD(x) E(WANT, dagger_linalg_getrf_array(NULL, x, BI.v));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_getrf_array(NULL, BI.a, BI.v));
}

void bi_probe_dagger_linalg_getrs_array(void)
{
    dagger_array_t *x;
    EACH_BAD(x) {
        E(WANT, dagger_linalg_getrs_array(NULL, x, BI.v, BI.b));
        E(WANT, dagger_linalg_getrs_array(NULL, BI.a, BI.v, x));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_getrs_array(NULL, BI.a, BI.v, BI.b));
}

void bi_probe_dagger_linalg_qr_t_create(void)
{
    dagger_array_t *T = (dagger_array_t *)BI.foreign;
    dagger_array_t *x;
    EACH_BAD(x) {
        E(WANT, dagger_linalg_qr_t_create(x, &T));
        cr_expect_null(T, "a failed create leaves *T NULL");
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_qr_t_create(BI.a, NULL));
}

void bi_probe_dagger_linalg_geqrf(void)
{
    dagger_array_t *T = NULL;
    cr_assert_eq(dagger_linalg_qr_t_create(BI.a, &T), DAGGER_OK, "%s", dagger_error_detail());
    dagger_array_t *x;
    EACH_BAD(x) E(WANT, dagger_linalg_geqrf(NULL, x, T));
    E(DAGGER_ERR_BAD_HANDLE, dagger_linalg_geqrf(NULL, BI.a, NULL));
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_geqrf(NULL, BI.a, BI.v)); /* not A's T */
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_geqrf(NULL, BI.a, BI.ai));
    cr_expect_eq(dagger_array_destroy(T), DAGGER_OK);
}

void bi_probe_dagger_linalg_qr_apply(void)
{
    dagger_array_t *T = NULL;
    cr_assert_eq(dagger_linalg_qr_t_create(BI.a, &T), DAGGER_OK, "%s", dagger_error_detail());
    dagger_array_t *x;
    EACH_BAD(x) {
        E(WANT, dagger_linalg_qr_apply(NULL, 0, x, T, BI.b));
        E(WANT, dagger_linalg_qr_apply(NULL, 0, BI.a, T, x));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_linalg_qr_apply(NULL, BAD_FLAG, BI.a, T, BI.b));
    cr_expect_eq(dagger_array_destroy(T), DAGGER_OK);
}
