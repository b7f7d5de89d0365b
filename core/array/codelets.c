/* The array layer's codelets: registered by name on first use in each
 * runtime (registration is idempotent), implemented in one file each. The
 * stencil's pack, sweep and extend also have CUDA implementations
 * (core/array/cuda) when the CUDA backend is built. */
#include "core/array/stencil_internal.h"
#include "core/base/common.h"
#include "core/base/status_internal.h"

typedef struct cl_def {
    const char *name;
    dagger_impl_fn fn;
    size_t ret;
    dagger_impl_fn cuda;       /* NULL: CPUs (and test devices) only */
} cl_def_t;

#ifdef DAGGER_HAVE_CUDA
#define CUDA_IMPL(fn) fn
#else
#define CUDA_IMPL(fn) NULL
#endif

static const cl_def_t defs[DG_ARR_CL_COUNT] = {
    [DG_ARR_CL_EWISE] = {"dagger.array.ewise", dg_arr_ewise_impl, 0, NULL},
    [DG_ARR_CL_GEN] = {"dagger.array.generate", dg_arr_gen_impl, 0, NULL},
    [DG_ARR_CL_PUT] = {"dagger.array.put", dg_arr_put_impl, 0, NULL},
    [DG_ARR_CL_TAKE] = {"dagger.array.take", dg_arr_take_impl, 0, NULL},
    [DG_ARR_CL_PARTIAL] = {"dagger.array.partial", dg_arr_partial_impl, 8, NULL},
    [DG_ARR_CL_COMBINE] = {"dagger.array.combine", dg_arr_combine_impl, 8, NULL},
    [DG_ARR_CL_PACK] = {"dagger.array.pack", dg_arr_pack_impl, 0, CUDA_IMPL(dg_arr_pack_cuda)},
    [DG_ARR_CL_SWEEP] = {"dagger.array.sweep", dg_arr_sweep_impl, 0,
                          CUDA_IMPL(dg_arr_sweep_cuda)},
    [DG_ARR_CL_EXTEND] = {"dagger.array.extend", dg_arr_extend_impl, 0,
                           CUDA_IMPL(dg_arr_extend_cuda)},
    [DG_ARR_CL_NRM2_PARTIAL] = {"dagger.array.nrm2_partial", dg_arr_nrm2_partial_impl, 24, NULL},
    [DG_ARR_CL_NRM2_COMBINE] = {"dagger.array.nrm2_combine", dg_arr_nrm2_combine_impl, 24, NULL},
    [DG_ARR_CL_NRM2_FINISH] = {"dagger.array.nrm2_finish", dg_arr_nrm2_finish_impl, 8, NULL},
    [DG_ARR_CL_REDDIM] = {"dagger.array.reduce_dim", dg_arr_reddim_impl, 0, NULL},
    /* its results are 8 bytes a value; each task returns its tile's (return_size) */
    [DG_ARR_CL_REDDIM_PART] = {"dagger.array.reduce_dim_part", dg_arr_reddim_part_impl, 8, NULL},
    [DG_ARR_CL_REDDIM_COMB] = {"dagger.array.reduce_dim_comb", dg_arr_reddim_comb_impl, 0, NULL},
    [DG_ARR_CL_BUNDLE] = {"dagger.array.bundle", dg_arr_bundle_impl, 0, NULL},
    [DG_ARR_CL_UNBUNDLE] = {"dagger.array.unbundle", dg_arr_unbundle_impl, 0, NULL},
    [DG_ARR_CL_PULL] = {"dagger.array.pull", dg_arr_pull_impl, 0, NULL},
    [DG_ARR_CL_PUSH] = {"dagger.array.push", dg_arr_push_impl, 0, NULL},
};

dagger_status_t dg_arr_codelet(dagger_runtime_t *rt, dg_arr_cl_t which, dagger_codelet_t *out)
{
    DG_ASSERT(which < DG_ARR_CL_COUNT);
    dagger_codelet_desc_t d = {.name = defs[which].name, .cpu = defs[which].fn,
                               .return_size = defs[which].ret, .cuda = defs[which].cuda};
    return dagger_codelet_register(rt, &d, out);
}
