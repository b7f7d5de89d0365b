/* The generator codelet: each element of the tile from its global linear
 * index (rand, randn) or its global index (a registered index function). */
#include <string.h>

#include "core/array/array_internal.h"
#include "core/array/params.h"

/* Element value for the generator, already in the slot's type. */
static void gen_one(const dg_arr_gen_t *g, dagger_index_fn ifn, const void *args, dagger_dtype_t t,
                    const size_t idx[DAGGER_MAX_DIMS], uint64_t lin, void *p)
{
    if (g->kind == DG_GEN_RAND && (t == DAGGER_I32 || t == DAGGER_I64)) {
        uint64_t bits = dagger_rand_bits(g->seed, lin);
        if (t == DAGGER_I32) {
            uint32_t v = (uint32_t)bits;
            memcpy(p, &v, sizeof(v));
        } else {
            memcpy(p, &bits, sizeof(bits));
        }
        return;
    }
    double v;
    if (g->kind == DG_GEN_RAND)
        v = t == DAGGER_F32 ? (double)(dagger_rand_bits(g->seed, lin) >> 40) * 0x1.0p-24
                            : dagger_rand_uniform(g->seed, lin);
    else if (g->kind == DG_GEN_RANDN)
        v = dagger_rand_normal(g->seed, lin);
    else
        v = ifn(idx, (int)g->ndims, args);
    dg_arr_store(t, p, v);
}

int dg_arr_gen_impl(dagger_task_t *t)
{
    dagger_slot_t o = dagger_task_arg(t, 0), v = dagger_task_arg(t, 1);
    dg_arr_gen_t g;
    if (!v.data || v.bytes < sizeof(g))
        return dagger_task_fail(t, "malformed generator parameters");
    memcpy(&g, v.data, sizeof(g));
    const void *args = (const char *)v.data + sizeof(g);
    dagger_index_fn ifn = NULL;
    if (g.kind == DG_GEN_FN && !(ifn = (dagger_index_fn)dg_arr_fn_find(DG_ARR_FN_INDEX, g.fn)))
        return dagger_task_fail(t, "index function %u is not registered on this rank", g.fn);
    size_t es = dagger_dtype_size(o.dtype), ext[DAGGER_MAX_DIMS], idx[DAGGER_MAX_DIMS];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        ext[k] = k < o.ndims ? o.dims[k] : 1;
    for (size_t i3 = 0; i3 < ext[3]; i3++)
        for (size_t i2 = 0; i2 < ext[2]; i2++)
            for (size_t i1 = 0; i1 < ext[1]; i1++) {
                idx[1] = g.off[1] + i1;
                idx[2] = g.off[2] + i2;
                idx[3] = g.off[3] + i3;
                uint64_t lin = g.off[0] + g.dims[0] * (idx[1] + g.dims[1] * (idx[2] + g.dims[2] * idx[3]));
                char *p = (char *)o.data + (i1 * o.strides[1] + i2 * o.strides[2] + i3 * o.strides[3]) * es;
                for (size_t i0 = 0; i0 < ext[0]; i0++) {
                    idx[0] = g.off[0] + i0;
                    gen_one(&g, ifn, args, o.dtype, idx, lin + i0, p + i0 * es);
                }
            }
    return DAGGER_OK;
}
