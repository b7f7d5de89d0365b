/* Constructors and refills whose values come from the global index: full,
 * ones, rand, randn, from_fn. One task per block on its owner, so no data
 * moves. */
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/array/params.h"
#include "core/array/tiles.h"
#include "core/base/status_internal.h"

/* The tile's global offset goes into its copy of the parameters. */
static void patch_offset(void *value, const dg_arr_tile_t *tile)
{
    dg_arr_gen_t g;
    memcpy(&g, value, sizeof(g));
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        g.off[k] = tile->off[k];
    memcpy(value, &g, sizeof(g));
}

static dagger_status_t run_gen(dagger_region_t *r, dagger_array_t *out, dg_arr_gen_t g,
                               const void *args, size_t len, const char *fn)
{
    if (!dg_arr_get(out, fn))
        return DAGGER_ERR_BAD_HANDLE;
    DG_CHECK_ARG(args || !len, "%s: %zu argument bytes at NULL", fn, len);
    DG_CHECK_ARG(len <= 65536, "%s: %zu argument bytes; at most 65536", fn, len);
    if (g.kind == DG_GEN_RANDN && out->dtype != DAGGER_F32 && out->dtype != DAGGER_F64)
        return dg_error(DAGGER_ERR_DTYPE, "%s: normal numbers need an f32 or f64 array, not %s",
                        fn, dg_arr_dtype_name(out->dtype));
    g.ndims = (uint32_t)out->ndims;
    g.args_len = (uint32_t)len;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        g.dims[k] = out->dims[k];
    unsigned char *value = dg_malloc(sizeof(g) + len);
    if (!value)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn);
    memcpy(value, &g, sizeof(g));
    if (len)
        memcpy(value + sizeof(g), args, len);
    dg_arr_job_t job = {
        .codelet = DG_ARR_CL_GEN, .out = out, .out_mode = DAGGER_MODE_OUT, .value = value,
        .len = sizeof(g) + len, .patch = patch_offset,
    };
    dagger_status_t st = dg_arr_run_job(r, &job, fn);
    free(value);
    return st;
}

dagger_status_t dagger_array_fill_rand(dagger_region_t *r, dagger_array_t *out, uint64_t seed)
{
    dg_arr_gen_t g = {.kind = DG_GEN_RAND, .seed = seed};
    return run_gen(r, out, g, NULL, 0, "dagger_array_fill_rand");
}

dagger_status_t dagger_array_fill_randn(dagger_region_t *r, dagger_array_t *out, uint64_t seed)
{
    dg_arr_gen_t g = {.kind = DG_GEN_RANDN, .seed = seed};
    return run_gen(r, out, g, NULL, 0, "dagger_array_fill_randn");
}

dagger_status_t dagger_array_fill_fn(dagger_region_t *r, dagger_array_t *out,
                                     dagger_index_fn_id_t fn, const void *args, size_t len)
{
    if (!dg_arr_fn_find(DG_ARR_FN_INDEX, fn.id))
        return dg_error(DAGGER_ERR_NOT_FOUND, "dagger_array_fill_fn: index function %u is not "
                        "registered (dagger_index_fn_register)", fn.id);
    dg_arr_gen_t g = {.kind = DG_GEN_FN, .fn = fn.id};
    return run_gen(r, out, g, args, len, "dagger_array_fill_fn");
}

/* ------------------------------------------------------------ constructors */

/* Creates the array, then fills it in a region of its own; on failure the
 * array is destroyed again. */
typedef struct ctor {
    int kind;          /* 0: constant, else DG_GEN_* */
    double value;
    uint64_t seed;
    dagger_index_fn_id_t fn;
    const void *args;
    size_t len;
} ctor_t;

static dagger_status_t construct(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                 const ctor_t *c, dagger_array_t **out, const char *fn)
{
    if (desc && !c->kind) {
        dagger_status_t st = dg_arr_check_dtype(desc->dtype, fn);
        if (st == DAGGER_OK)
            st = dg_arr_check_scalar(desc->dtype, c->value, fn);
        if (st != DAGGER_OK)
            return st;
    }
    if (c->kind == DG_GEN_FN && !dg_arr_fn_find(DG_ARR_FN_INDEX, c->fn.id))
        return dg_error(DAGGER_ERR_NOT_FOUND, "%s: index function %u is not registered "
                        "(dagger_index_fn_register)", fn, c->fn.id);
    dagger_status_t st = dg_arr_create(rt, desc, out, fn);
    if (st != DAGGER_OK)
        return st;
    switch (c->kind) {
    case 0: st = c->value == 0 ? DAGGER_OK : dagger_array_fill(NULL, *out, c->value); break;
    case DG_GEN_RAND: st = dagger_array_fill_rand(NULL, *out, c->seed); break;
    case DG_GEN_RANDN: st = dagger_array_fill_randn(NULL, *out, c->seed); break;
    default: st = dagger_array_fill_fn(NULL, *out, c->fn, c->args, c->len); break;
    }
    if (st != DAGGER_OK) {
        dagger_array_destroy(*out);
        *out = NULL;
    }
    return st;
}

dagger_status_t dagger_array_full(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                  double value, dagger_array_t **out)
{
    ctor_t c = {.value = value};
    return construct(rt, desc, &c, out, "dagger_array_full");
}

dagger_status_t dagger_array_ones(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                  dagger_array_t **out)
{
    ctor_t c = {.value = 1};
    return construct(rt, desc, &c, out, "dagger_array_ones");
}

dagger_status_t dagger_array_rand(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                  uint64_t seed, dagger_array_t **out)
{
    ctor_t c = {.kind = DG_GEN_RAND, .seed = seed};
    return construct(rt, desc, &c, out, "dagger_array_rand");
}

dagger_status_t dagger_array_randn(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                   uint64_t seed, dagger_array_t **out)
{
    ctor_t c = {.kind = DG_GEN_RANDN, .seed = seed};
    if (desc && desc->dtype != DAGGER_F32 && desc->dtype != DAGGER_F64)
        return dg_error(DAGGER_ERR_DTYPE, "dagger_array_randn: normal numbers need an f32 or f64 "
                        "array, not %s", dg_arr_dtype_name(desc->dtype));
    return construct(rt, desc, &c, out, "dagger_array_randn");
}

dagger_status_t dagger_array_from_fn(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                     dagger_index_fn_id_t fn, const void *args, size_t len,
                                     dagger_array_t **out)
{
    ctor_t c = {.kind = DG_GEN_FN, .fn = fn, .args = args, .len = len};
    DG_CHECK_ARG(args || !len, "dagger_array_from_fn: %zu argument bytes at NULL", len);
    return construct(rt, desc, &c, out, "dagger_array_from_fn");
}
