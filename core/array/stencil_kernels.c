/* Stencil codelets: pack (a halo piece into a padded buffer) and sweep (a
 * phase's expressions over one block, windows read from the padded
 * buffers or, for width 0, from the block itself). */
#include <string.h>

#include "core/array/stencil_internal.h"

/* ------------------------------------------------------------ pack */

static size_t src_index(int dir, size_t i, size_t len)
{
    return dir > 0 ? i : dir < 0 ? len - 1 - i : 0;
}

int dg_arr_pack_impl(dagger_task_t *t)
{
    int nargs = dagger_task_nargs(t);
    dg_st_pack_param_t p;
    if (nargs < 2 || dg_arr_param(t, nargs - 1, &p, sizeof(p)))
        return dagger_task_fail(t, "malformed pack parameters");
    dagger_slot_t d = dagger_task_arg(t, 0), s = p.fill ? d : dagger_task_arg(t, 1);
    size_t es = dagger_dtype_size(d.dtype), ext[DAGGER_MAX_DIMS];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        ext[k] = k < d.ndims ? d.dims[k] : 1;
    unsigned char padv[8];
    dg_arr_store(d.dtype, padv, p.pad);
    for (size_t i3 = 0; i3 < ext[3]; i3++)
        for (size_t i2 = 0; i2 < ext[2]; i2++)
            for (size_t i1 = 0; i1 < ext[1]; i1++) {
                char *o = (char *)d.data + (i1 * d.strides[1] + i2 * d.strides[2] + i3 * d.strides[3]) * es;
                if (p.fill) {
                    for (size_t i0 = 0; i0 < ext[0]; i0++)
                        memcpy(o + i0 * es, padv, es);
                    continue;
                }
                size_t j1 = src_index(p.dir[1], i1, ext[1]), j2 = src_index(p.dir[2], i2, ext[2]);
                size_t j3 = src_index(p.dir[3], i3, ext[3]);
                const char *x = (const char *)s.data +
                                (j1 * s.strides[1] + j2 * s.strides[2] + j3 * s.strides[3]) * es;
                if (p.dir[0] > 0)
                    memcpy(o, x, ext[0] * es);
                else
                    for (size_t i0 = 0; i0 < ext[0]; i0++)
                        memcpy(o + i0 * es, x + src_index(p.dir[0], i0, ext[0]) * es, es);
            }
    return DAGGER_OK;
}

/* ------------------------------------------------------------ sweep */

typedef struct win_src {
    const char *base;        /* element (0,0,0,0) of the block as seen by this input */
    dagger_slot_t slot;
    size_t es;
} win_src_t;

static double apply(dagger_stencil_assign_t a, double cur, double v)
{
    switch (a) {
    case DAGGER_ST_ADD: return cur + v;
    case DAGGER_ST_SUB: return cur - v;
    case DAGGER_ST_MUL: return cur * v;
    case DAGGER_ST_DIV: return cur / v;
    default: return v;
    }
}

/* The sum of every element of a window. */
static double window_sum(const dagger_window_t *w)
{
    double s = 0;
    ptrdiff_t d[DAGGER_MAX_DIMS];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        d[k] = k < w->ndims ? (ptrdiff_t)w->dist[k] : 0;
    size_t es = dagger_dtype_size(w->dtype);
    for (ptrdiff_t o3 = -d[3]; o3 <= d[3]; o3++)
        for (ptrdiff_t o2 = -d[2]; o2 <= d[2]; o2++)
            for (ptrdiff_t o1 = -d[1]; o1 <= d[1]; o1++) {
                const char *p = (const char *)w->data +
                                (o1 * w->stride[1] + o2 * w->stride[2] + o3 * w->stride[3]) * (ptrdiff_t)es;
                for (ptrdiff_t o0 = -d[0]; o0 <= d[0]; o0++)
                    s += dg_arr_load(w->dtype, p + o0 * w->stride[0] * (ptrdiff_t)es);
            }
    return s;
}

static double eval(const dg_st_expr_param_t *e, dagger_stencil_fn fn, const dagger_window_t *w,
                   const size_t idx[DAGGER_MAX_DIMS], const void *args)
{
    switch (e->kernel) {
    case DG_ST_CONST: return e->value;
    case DG_ST_COPY: return dg_arr_load(w[0].dtype, w[0].data);
    case DG_ST_SUM: return window_sum(&w[0]);
    default: return fn(w, (int)e->nin, idx, args);
    }
}

/* Runs one expression over the block. */
static int run_expr(dagger_task_t *t, const dg_st_sweep_hdr_t *h, const dg_st_expr_param_t *e,
                    const unsigned char *blob)
{
    dagger_stencil_fn fn = NULL;
    if (e->kernel > DG_ST_SUM &&
        !(fn = (dagger_stencil_fn)dg_arr_fn_find(DG_ARR_FN_STENCIL, e->kernel)))
        return dagger_task_fail(t, "stencil kernel %u is not registered on this rank", e->kernel);
    dagger_slot_t o = dagger_task_arg(t, (int)e->out_arg);
    size_t oes = dagger_dtype_size(o.dtype), ext[DAGGER_MAX_DIMS];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        ext[k] = k < o.ndims ? o.dims[k] : 1;
    dagger_window_t w[DAGGER_STENCIL_MAX_IN];
    win_src_t src[DAGGER_STENCIL_MAX_IN];
    for (uint32_t i = 0; i < e->nin; i++) {
        const dg_st_in_param_t *in = &e->in[i];
        src[i].slot = dagger_task_arg(t, in->arg);
        src[i].es = dagger_dtype_size(src[i].slot.dtype);
        size_t c = 0;
        for (int k = 0; k < DAGGER_MAX_DIMS; k++)
            c += (in->padded ? in->halo[k] : 0) * src[i].slot.strides[k];
        src[i].base = (const char *)src[i].slot.data + c * src[i].es;
        memset(&w[i], 0, sizeof(w[i]));
        w[i].dtype = src[i].slot.dtype;
        w[i].ndims = (int)h->ndims;
        for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
            w[i].stride[k] = (ptrdiff_t)src[i].slot.strides[k];
            w[i].dist[k] = in->dist[k];
        }
    }
    const void *args = e->args_len ? blob + e->args_off : NULL;
    size_t idx[DAGGER_MAX_DIMS];
    for (size_t i3 = 0; i3 < ext[3]; i3++)
        for (size_t i2 = 0; i2 < ext[2]; i2++)
            for (size_t i1 = 0; i1 < ext[1]; i1++) {
                idx[1] = h->off[1] + i1;
                idx[2] = h->off[2] + i2;
                idx[3] = h->off[3] + i3;
                char *po = (char *)o.data + (i1 * o.strides[1] + i2 * o.strides[2] + i3 * o.strides[3]) * oes;
                const char *pi[DAGGER_STENCIL_MAX_IN];
                for (uint32_t i = 0; i < e->nin; i++)
                    pi[i] = src[i].base + (i1 * src[i].slot.strides[1] + i2 * src[i].slot.strides[2] +
                                           i3 * src[i].slot.strides[3]) * src[i].es;
                for (size_t i0 = 0; i0 < ext[0]; i0++) {
                    idx[0] = h->off[0] + i0;
                    for (uint32_t i = 0; i < e->nin; i++)
                        w[i].data = pi[i] + i0 * src[i].slot.strides[0] * src[i].es;
                    double v = eval(e, fn, w, idx, args);
                    char *p = po + i0 * oes;
                    if (e->assign != DAGGER_ST_SET)
                        v = apply((dagger_stencil_assign_t)e->assign, dg_arr_load(o.dtype, p), v);
                    dg_arr_store(o.dtype, p, v);
                }
            }
    return DAGGER_OK;
}

int dg_arr_sweep_impl(dagger_task_t *t)
{
    int nargs = dagger_task_nargs(t);
    dagger_slot_t v = dagger_task_arg(t, nargs - 1);
    dg_st_sweep_hdr_t h;
    if (nargs < 2 || !v.data || v.bytes < sizeof(h))
        return dagger_task_fail(t, "malformed stencil parameters");
    const unsigned char *blob = v.data;
    memcpy(&h, blob, sizeof(h));
    if (v.bytes < sizeof(h) + h.nexpr * sizeof(dg_st_expr_param_t))
        return dagger_task_fail(t, "malformed stencil parameters");
    for (uint32_t x = 0; x < h.nexpr; x++) {
        dg_st_expr_param_t e;
        memcpy(&e, blob + sizeof(h) + x * sizeof(e), sizeof(e));
        int rc = run_expr(t, &h, &e, blob);
        if (rc != DAGGER_OK)
            return rc;
    }
    return DAGGER_OK;
}
