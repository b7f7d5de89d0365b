/* The codelets of reductions along a dimension (reduce_dim.c submits them).
 * A block of the input reduced along dim gives one value per element of
 * the output tile (extent 1 along dim): reduce_dim stores it into the tile
 * (a block alone along dim), reddim_part returns the values (8 bytes each)
 * and reddim_comb stores a run of such results into the tile in order, the
 * first of a tile setting it and each next combining with it. Floats
 * accumulate in double within the block, integer sums wrap around; norms
 * are overflow-safe (nrm2.h) and combine by hypot. MIN/MAX of floats
 * propagate NaN. The common cases are reduced by typed loops
 * (reduce_dim_fast.c), the rest by the general loop here. */
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

/* A block's value for one element of the output, before it meets the
 * output: a double for floats, the 64-bit value for integers. */
typedef union rval {
    double d;
    uint64_t u;
} rval_t;

static rval_t acc_value(const dg_racc_t *a, uint32_t kind, int fl)
{
    rval_t r;
    if (!fl)
        r.u = kind == DG_RED_SUM ? a->u : (uint64_t)(kind == DG_RED_MIN ? a->lo : a->hi);
    else
        r.d = kind == DG_RED_NRM2 ? dg_nrm2_finish(&a->n) : a->nan ? NAN : a->d;
    return r;
}

/* r into the output element at p: as it is (first), or combined with the
 * element's current value. */
static void store_value(rval_t r, uint32_t kind, int fl, int first, dagger_dtype_t t, char *p)
{
    if (!fl) {
        uint64_t v = r.u;
        if (!first) {
            int64_t cur = (int64_t)dg_arr_load_u(t, p), w = (int64_t)v;
            v = kind == DG_RED_SUM ? v + (uint64_t)cur
                : kind == DG_RED_MIN ? (uint64_t)(w < cur ? w : cur) : (uint64_t)(w > cur ? w : cur);
        }
        dg_arr_store_u(t, p, v);
        return;
    }
    double v = r.d;
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

/* Block x reduced along p->dim: *nout accumulators (malloc'ed), in the
 * output tile's element order; NULL when out of memory. */
static dg_racc_t *reduce_block(const dg_arr_reddim_t *p, const dagger_slot_t *x, size_t *nout)
{
    size_t ext[DAGGER_MAX_DIMS], oext[DAGGER_MAX_DIMS], es = dagger_dtype_size(x->dtype);
    *nout = 1;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        ext[k] = k < x->ndims ? x->dims[k] : 1;
        oext[k] = k == (int)p->dim ? 1 : ext[k];
        *nout *= oext[k];
    }
    dg_racc_t *acc = dg_malloc(*nout * sizeof(*acc));
    if (!acc)
        return NULL;
    acc_init(acc, *nout, p->kind);
    if (dg_arr_reddim_fast(x, p->kind, p->dim, ext, oext, *nout, acc))
        return acc;
    int fl = x->dtype == DAGGER_F32 || x->dtype == DAGGER_F64;
    size_t i[DAGGER_MAX_DIMS];
    for (i[3] = 0; i[3] < ext[3]; i[3]++)
        for (i[2] = 0; i[2] < ext[2]; i[2]++)
            for (i[1] = 0; i[1] < ext[1]; i[1]++)
                for (i[0] = 0; i[0] < ext[0]; i[0]++) {
                    size_t q[DAGGER_MAX_DIMS] = {i[0], i[1], i[2], i[3]};
                    q[p->dim] = 0;
                    size_t c = q[0] + oext[0] * (q[1] + oext[1] * (q[2] + oext[2] * q[3]));
                    acc_add(&acc[c], p->kind, fl, x->dtype, (const char *)x->data + at(x, i) * es);
                }
    return acc;
}

/* Runs body for each element of the output tile o (elements of es bytes),
 * in the order of reduce_block's accumulators: c its index, pos its address. */
#define FOR_OUT(o, es, c, pos, body)                                                   \
    do {                                                                               \
        size_t i_[DAGGER_MAX_DIMS], e_[DAGGER_MAX_DIMS], c = 0;                        \
        for (int k_ = 0; k_ < DAGGER_MAX_DIMS; k_++)                                   \
            e_[k_] = k_ < (o).ndims ? (o).dims[k_] : 1;                                \
        for (i_[3] = 0; i_[3] < e_[3]; i_[3]++)                                        \
            for (i_[2] = 0; i_[2] < e_[2]; i_[2]++)                                    \
                for (i_[1] = 0; i_[1] < e_[1]; i_[1]++)                                \
                    for (i_[0] = 0; i_[0] < e_[0]; i_[0]++, c++) {                     \
                        char *pos = (char *)(o).data + at(&(o), i_) * (es);            \
                        body;                                                          \
                    }                                                                  \
    } while (0)

static int params(dagger_task_t *t, int nargs_min, dg_arr_reddim_t *p)
{
    int n = dagger_task_nargs(t);
    return n < nargs_min || n > DAGGER_MAX_ARGS || dg_arr_param(t, n - 1, p, sizeof(*p)) ||
                   p->dim >= DAGGER_MAX_DIMS
               ? -1
               : n;
}

/* (output tile, block, parameters): the block's values into the tile. */
int dg_arr_reddim_impl(dagger_task_t *t)
{
    dg_arr_reddim_t p;
    if (params(t, 3, &p) != 3)
        return dagger_task_fail(t, "malformed reduce_dim parameters");
    dagger_slot_t o = dagger_task_arg(t, 0), x = dagger_task_arg(t, 1);
    size_t nout, es = dagger_dtype_size(o.dtype);
    dg_racc_t *acc = reduce_block(&p, &x, &nout);
    if (!acc)
        return dagger_task_fail(t, "out of memory for %zu accumulators", nout);
    int fl = x.dtype == DAGGER_F32 || x.dtype == DAGGER_F64;
    FOR_OUT(o, es, c, pos, store_value(acc_value(&acc[c], p.kind, fl), p.kind, fl, p.first, o.dtype, pos));
    free(acc);
    return DAGGER_OK;
}

/* (block, parameters): the block's values, returned (8 bytes each). */
int dg_arr_reddim_part_impl(dagger_task_t *t)
{
    dg_arr_reddim_t p;
    if (params(t, 2, &p) != 2)
        return dagger_task_fail(t, "malformed reduce_dim parameters");
    dagger_slot_t x = dagger_task_arg(t, 0);
    size_t nout, size;
    rval_t *out = dagger_task_result(t, &size);
    dg_racc_t *acc = reduce_block(&p, &x, &nout);
    if (!acc)
        return dagger_task_fail(t, "out of memory for %zu accumulators", nout);
    if (!out || size != nout * sizeof(*out)) {
        free(acc);
        return dagger_task_fail(t, "reduce_dim: a partial result of %zu bytes for %zu values",
                                size, nout);
    }
    int fl = x.dtype == DAGGER_F32 || x.dtype == DAGGER_F64;
    for (size_t c = 0; c < nout; c++)
        out[c] = acc_value(&acc[c], p.kind, fl);
    free(acc);
    return DAGGER_OK;
}

/* (output tile, partial results..., parameters): the results into the tile
 * in argument order, the first setting it when p.first. */
int dg_arr_reddim_comb_impl(dagger_task_t *t)
{
    dg_arr_reddim_t p;
    int n = params(t, 3, &p);
    if (n < 0)
        return dagger_task_fail(t, "malformed reduce_dim parameters");
    dagger_slot_t o = dagger_task_arg(t, 0);
    size_t es = dagger_dtype_size(o.dtype);
    int fl = o.dtype == DAGGER_F32 || o.dtype == DAGGER_F64;
    for (int k = 1; k < n - 1; k++) {
        dagger_slot_t f = dagger_task_arg(t, k);
        if (f.bytes != o.count * sizeof(rval_t))
            return dagger_task_fail(t, "reduce_dim: a partial result of %zu bytes for %zu values",
                                    f.bytes, o.count);
        const unsigned char *v = f.data;
        int first = p.first && k == 1;
        FOR_OUT(o, es, c, pos, {
            rval_t r;
            memcpy(&r, v + c * sizeof(r), sizeof(r)); /* future bytes need not be aligned */
            store_value(r, p.kind, fl, first, o.dtype, pos);
        });
    }
    return DAGGER_OK;
}
