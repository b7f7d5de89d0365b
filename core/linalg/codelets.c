/* The tile codelets: registered by name on first use in each runtime
 * (registration is idempotent). Each has a CPU implementation (OpenBLAS,
 * LAPACKE); each also a CUDA one (cuBLAS, cuSOLVER, kernels of ours:
 * core/linalg/cuda) when the CUDA backend is built. None has a HIP
 * one: Debian ships no rocBLAS/rocSOLVER (docs/linalg.md, "GPUs"). */
#include <string.h>

#include "core/base/common.h"
#include "core/linalg/linalg_internal.h"

typedef struct cl_def {
    const char *name;
    dagger_impl_fn cpu;
    dagger_impl_fn cuda;       /* NULL: the codelet runs on CPUs (and test devices) only */
} cl_def_t;

#ifdef DAGGER_HAVE_CUDA_LINALG
#define CUDA_IMPL(fn) fn
#else
#define CUDA_IMPL(fn) NULL
#endif

static const cl_def_t defs[DG_LA_CL_COUNT] = {
    [DG_LA_CL_GEMM] = {"dagger.linalg.gemm", dg_la_gemm_impl, CUDA_IMPL(dg_la_gemm_cuda)},
    [DG_LA_CL_GEMV] = {"dagger.linalg.gemv", dg_la_gemv_impl, CUDA_IMPL(dg_la_gemv_cuda)},
    [DG_LA_CL_SYRK] = {"dagger.linalg.syrk", dg_la_syrk_impl, CUDA_IMPL(dg_la_syrk_cuda)},
    [DG_LA_CL_TRSM] = {"dagger.linalg.trsm", dg_la_trsm_impl, CUDA_IMPL(dg_la_trsm_cuda)},
    [DG_LA_CL_POTRF] = {"dagger.linalg.potrf", dg_la_potrf_impl, CUDA_IMPL(dg_la_potrf_cuda)},
    [DG_LA_CL_GETRF] = {"dagger.linalg.getrf_panel", dg_la_getrf_impl,
                       CUDA_IMPL(dg_la_getrf_cuda)},
    [DG_LA_CL_LASWP] = {"dagger.linalg.laswp", dg_la_laswp_impl, CUDA_IMPL(dg_la_laswp_cuda)},
    [DG_LA_CL_LASWP_V] = {"dagger.linalg.laswp_value", dg_la_laswp_v_impl,
                          CUDA_IMPL(dg_la_laswp_v_cuda)},
    [DG_LA_CL_LU_UPDATE] = {"dagger.linalg.lu_update", dg_la_lu_update_impl,
                            CUDA_IMPL(dg_la_lu_update_cuda)},
    [DG_LA_CL_GEQRT] = {"dagger.linalg.geqrt", dg_la_geqrt_impl,
                       CUDA_IMPL(dg_la_geqrt_cuda)},
    [DG_LA_CL_GEMQRT] = {"dagger.linalg.gemqrt", dg_la_gemqrt_impl,
                       CUDA_IMPL(dg_la_gemqrt_cuda)},
    [DG_LA_CL_TPQRT] = {"dagger.linalg.tpqrt", dg_la_tpqrt_impl,
                       CUDA_IMPL(dg_la_tpqrt_cuda)},
    [DG_LA_CL_TPMQRT] = {"dagger.linalg.tpmqrt", dg_la_tpmqrt_impl,
                       CUDA_IMPL(dg_la_tpmqrt_cuda)},
};

dagger_status_t dg_la_codelet(dagger_runtime_t *rt, dg_la_cl_t which, dagger_codelet_t *out)
{
    DG_ASSERT(which < DG_LA_CL_COUNT);
    dagger_codelet_desc_t d = {.name = defs[which].name, .cpu = defs[which].cpu,
                               .cuda = defs[which].cuda, .hip = NULL};
    return dagger_codelet_register(rt, &d, out);
}

int dg_la_par_get(dagger_task_t *t, dg_la_par_t *p)
{
    return dg_arr_param(t, dagger_task_nargs(t) - 1, p, sizeof(*p));
}

int dg_la_ld(const dagger_slot_t *s)
{
    size_t ld = s->ndims >= 2 ? s->strides[1] : s->dims[0];
    return ld ? (int)ld : 1;
}

int dg_la_lu_update_check(dagger_task_t *t, const dagger_slot_t s[3])
{
    int m = (int)s[0].dims[0], kb = (int)s[1].dims[0], lm = (int)s[2].dims[0];
    if (s[0].ndims == 2 && s[2].ndims == 2 && (int)s[2].dims[1] == kb && lm >= kb && lm <= m &&
        s[2].dtype == s[0].dtype)
        return 0;
    return dagger_task_fail(t, "lu_update: malformed task (column %d x %d, %d pivots, panel "
                            "%d x %d)", m, (int)s[0].dims[1], kb, lm, (int)s[2].dims[1]);
}
