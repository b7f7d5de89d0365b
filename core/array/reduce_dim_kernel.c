/* The codelet of reductions along a dimension: one block of the input
 * (argument 1) reduced along dim into the output tile (argument 0, extent 1
 * along dim), which it sets (the first block) or combines with (the next
 * ones, in block order). Floats accumulate in double within the block,
 * integer sums wrap around; norms are overflow-safe (nrm2.h) and combine
 * with the output's value by hypot. MIN/MAX of floats propagate NaN. The
 * common cases are reduced by typed loops (reduce_dim_fast.c), the rest by
 * the general loop here. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/array/array_internal.h"
#include "core/array/params.h"
#include "core/array/reduce_dim.h"

static void acc_init(dg_racc_t *a, size_t n, uint32_t kind)
{
    double d = kind == DG_RED_MIN ? INFINITY : kind == DG_RED_MAX ? -INFINITY : 0;
    for (size_t i = 0; i < n; i++)
        a[i] = (dg_racc_t){.d = d, .lo = INT64_MAX, .hi = INT64_MIN};
}

static void acc_add(dg_racc_t *a, uint32_t kind, int fl, dagger_dtype_t t, const char *p)
{
    if (!fl) {
        int64_t v = (int64_t)dg_arr_load_u(t, p);
        a->u += (uint64_t)v;
        a->lo = v < a->lo ? v : a->lo;
        a->hi = v > a->hi ? v : a->hi;
        return;
    }
    double v = dg_arr_load(t, p);
    if (kind == DG_RED_NRM2)
        dg_nrm2_add(&a->n, v);
    else if (kind == DG_RED_SUM)
        a->d += v;
    else if (v != v)
        a->nan = 1;
    else if (kind == DG_RED_MIN)
        a->d = v < a->d ? v : a->d;
    else
        a->d = v > a->d ? v : a->d;
}

/* The block's value, combined with the output's current one unless first. */
static void acc_store(const dg_racc_t *a, uint32_t kind, int fl, int first, dagger_dtype_t t, char *p)
{
    if (!fl) {
        uint64_t v = kind == DG_RED_SUM ? a->u : (uint64_t)(kind == DG_RED_MIN ? a->lo : a->hi);
        if (!first) {
            int64_t cur = (int64_t)dg_arr_load_u(t, p), w = (int64_t)v;
            v = kind == DG_RED_SUM ? v + (uint64_t)cur
                : kind == DG_RED_MIN ? (uint64_t)(w < cur ? w : cur) : (uint64_t)(w > cur ? w : cur);
        }
        dg_arr_store_u(t, p, v);
        return;
    }
    double v = kind == DG_RED_NRM2 ? dg_nrm2_finish(&a->n) : a->nan ? NAN : a->d;
    if (!first) {
        double cur = dg_arr_load(t, p);
        if (kind == DG_RED_NRM2)
            v = hypot(cur, v);
        else if (kind == DG_RED_SUM)
            v = cur + v;
        else if (cur != cur || v != v)
            v = NAN;
        else
            v = kind == DG_RED_MIN ? fmin(cur, v) : fmax(cur, v);
    }
    dg_arr_store(t, p, v);
}

/* Position of element (i0..i3) of a slot, in elements. */
static size_t at(const dagger_slot_t *s, const size_t i[DAGGER_MAX_DIMS])
{
    return i[0] * s->strides[0] + i[1] * s->strides[1] + i[2] * s->strides[2] + i[3] * s->strides[3];
}

int dg_arr_reddim_impl(dagger_task_t *t)
{
    dg_arr_reddim_t p;
    if (dagger_task_nargs(t) != 3 || dg_arr_param(t, 2, &p, sizeof(p)) || p.dim >= DAGGER_MAX_DIMS)
        return dagger_task_fail(t, "malformed reduce_dim parameters");
    dagger_slot_t o = dagger_task_arg(t, 0), x = dagger_task_arg(t, 1);
    size_t ext[DAGGER_MAX_DIMS], oext[DAGGER_MAX_DIMS], nout = 1, es = dagger_dtype_size(x.dtype);
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        ext[k] = k < x.ndims ? x.dims[k] : 1;
        oext[k] = k == (int)p.dim ? 1 : ext[k];
        nout *= oext[k];
    }
    dg_racc_t *acc = dg_malloc(nout * sizeof(*acc));
    if (!acc)
        return dagger_task_fail(t, "out of memory for %zu accumulators", nout);
    acc_init(acc, nout, p.kind);
    int fl = x.dtype == DAGGER_F32 || x.dtype == DAGGER_F64;
    size_t i[DAGGER_MAX_DIMS];
    int fast = dg_arr_reddim_fast(&x, p.kind, p.dim, ext, oext, nout, acc);
    for (i[3] = 0; !fast && i[3] < ext[3]; i[3]++)
        for (i[2] = 0; i[2] < ext[2]; i[2]++)
            for (i[1] = 0; i[1] < ext[1]; i[1]++)
                for (i[0] = 0; i[0] < ext[0]; i[0]++) {
                    size_t q[DAGGER_MAX_DIMS] = {i[0], i[1], i[2], i[3]};
                    q[p.dim] = 0;
                    size_t c = q[0] + oext[0] * (q[1] + oext[1] * (q[2] + oext[2] * q[3]));
                    acc_add(&acc[c], p.kind, fl, x.dtype, (const char *)x.data + at(&x, i) * es);
                }
    size_t c = 0;
    for (i[3] = 0; i[3] < oext[3]; i[3]++)
        for (i[2] = 0; i[2] < oext[2]; i[2]++)
            for (i[1] = 0; i[1] < oext[1]; i[1]++)
                for (i[0] = 0; i[0] < oext[0]; i[0]++, c++)
                    acc_store(&acc[c], p.kind, fl, p.first, o.dtype, (char *)o.data + at(&o, i) * es);
    free(acc);
    return DAGGER_OK;
}
