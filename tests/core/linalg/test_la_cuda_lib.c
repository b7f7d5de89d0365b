/* cuBLAS and cuSOLVER are loaded on first use, not linked
 * (core/linalg/cuda/la_cuda_lib.h): a process that links Dagger-C has
 * neither mapped until a CUDA tile needs them, and then the loader finds
 * every routine the tiles call. No GPU is needed: loading the libraries
 * and cublasGetStatusString do not touch a device. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#ifdef DAGGER_HAVE_CUDA_LINALG
/* The table's fields by name (the redirections would rename them). */
#define DG_LA_CUDA_LIB_NO_REDIRECT 1
#include "core/linalg/cuda/la_cuda_lib.h"
#include "proc_maps.h"

Test(la_cuda_lib, not_mapped_until_loaded_then_every_routine_found)
{
    cr_assert(!proc_maps_has("libcublas"), "cuBLAS is mapped before any CUDA tile asked for it");
    cr_assert(!proc_maps_has("libcusolver"),
              "cuSOLVER is mapped before any CUDA tile asked for it");
    char why[512] = "";
    cr_assert_eq(dg_la_cuda_lib_load(why, sizeof(why)), 0, "%s", why);
    cr_assert(proc_maps_has("libcublas") && proc_maps_has("libcusolver"));
#define DG_LA_CHECK(name) cr_assert_not_null(dg_la_cu.name, "%s not found", #name);
    DG_LA_CUBLAS_SYMS(DG_LA_CHECK)
    DG_LA_CUSOLVER_SYMS(DG_LA_CHECK)
#undef DG_LA_CHECK
    /* A call through the table reaches the library (no device needed). */
    cr_assert_str_eq(dg_la_cu.cublasGetStatusString(CUBLAS_STATUS_NOT_INITIALIZED),
                     "the library was not initialized");
    cr_assert_eq(dg_la_cuda_lib_load(NULL, 0), 0, "a second call returns the first's result");
}
#else
Test(la_cuda_lib, skipped)
{
    cr_skip_test("built without CUDA linear algebra (DAGGER_HAVE_CUDA_LINALG)");
}
#endif
