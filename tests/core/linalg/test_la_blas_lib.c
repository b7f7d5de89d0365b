/* OpenBLAS and LAPACKE are loaded on first use, not linked
 * (core/linalg/la_blas_lib.h): a process that links Dagger-C and runs a
 * runtime has neither mapped until a CPU tile needs them, and then the
 * loader finds every routine the tiles call, and calls through the table
 * reach the libraries. This test's executable is the one linalg unit test
 * not linked with them (tests/CMakeLists.txt). */
#include <criterion/criterion.h>
#include <dagger.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* The table's fields by name (the redirections would rename them). */
#define DG_LA_BLAS_LIB_NO_REDIRECT 1
#include "core/linalg/la_blas_lib.h"
#include "proc_maps.h"

Test(la_blas_lib, not_mapped_until_loaded_then_every_routine_found)
{
    dagger_runtime_t *rt = NULL;
    cr_assert_eq(dagger_init(NULL, NULL, NULL, &rt), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
    cr_assert(!proc_maps_has("libopenblas"), "OpenBLAS is mapped before any CPU tile asked for it");
    cr_assert(!proc_maps_has("liblapacke"), "LAPACKE is mapped before any CPU tile asked for it");

    char why[512] = "";
    cr_assert_eq(dg_la_blas_lib_load(why, sizeof(why)), 0, "%s", why);
    cr_assert(proc_maps_has("libopenblas") && proc_maps_has("liblapacke"));
#define DG_LA_CHECK(name) cr_assert_not_null(dg_la_blas.name, "%s not found", #name);
    DG_LA_OPENBLAS_SYMS(DG_LA_CHECK)
    DG_LA_LAPACKE_SYMS(DG_LA_CHECK)
#undef DG_LA_CHECK
    cr_assert_eq(dg_la_blas_lib_load(NULL, 0), 0, "a second call returns the first's result");

    /* OpenBLAS is in the global scope, where LAPACKE's calls to LAPACK look
     * first: dpotrf_ found there is OpenBLAS's, not a reference LAPACK's. */
    void *potrf = dlsym(RTLD_DEFAULT, "dpotrf_");
    Dl_info at;
    cr_assert(potrf && dladdr(potrf, &at) && at.dli_fname);
    cr_assert(strstr(at.dli_fname, "libopenblas"), "dpotrf_ resolves to %s", at.dli_fname);

    /* Calls through the table reach the libraries: C = A B, then the
     * Cholesky factor of A^T A = [[5, 11], [11, 25]] (column major). */
    double a[4] = {1, 3, 2, 4}, b[4] = {1, 0, 0, 1}, c[4] = {0};
    dg_la_blas.cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0, a, 2, b, 2,
                           0.0, c, 2);
    for (int i = 0; i < 4; i++)
        cr_assert_float_eq(c[i], a[i], 1e-15);
    double s[4] = {10, 14, 14, 20};
    cr_assert_eq(dg_la_blas.LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', 2, s, 2), 0);
    cr_assert_float_eq(s[0] * s[0], 10.0, 1e-12);
    cr_assert_float_eq(s[1] * s[0], 14.0, 1e-12);
    cr_assert_float_eq(s[1] * s[1] + s[3] * s[3], 20.0, 1e-12);
    dg_la_blas.openblas_set_num_threads(1);
    cr_assert_eq(dg_la_blas.openblas_get_num_threads(), 1);
}
