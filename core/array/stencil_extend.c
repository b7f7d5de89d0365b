/* Affine boundary conditions (AntiReflect, LinearExtrapolate): their ghosts
 * are combinations of the array's values near the edge, not copies of
 * elements. The pack tasks leave those ghost zones empty; then, per padded
 * buffer, one extend task per affine dimension and edge computes them from
 * the buffer itself, which already holds every source they need (the
 * mirror images lie within `dist` of the edge, inside the padded range).
 * So these kinds move no bytes beyond the in-range halo strips.
 *
 * Corners: dimensions are extended in increasing order, each over the full
 * padded range of the dimensions extended before it and over the in-range
 * part of the affine dimensions still to come (their ghosts do not exist
 * yet). That is padding one dimension after the other; the index kinds
 * (Wrap, Clamp, Reflect, Pad) are already in the buffer from the packs. */
#include <string.h>

#include "core/array/stencil_internal.h"

/* ------------------------------------------------------------ submission */

typedef struct ext_box {
    size_t off[DAGGER_MAX_DIMS], ext[DAGGER_MAX_DIMS];
} ext_box_t;

/* The part of the padded range of dimension j (a block at [lo, lo + n))
 * that lies inside the array. */
static void in_range(const dagger_array_t *a, const dg_st_pack_t *p, int j, size_t lo, size_t pd,
                     size_t *off, size_t *ext)
{
    size_t d = p->dist[j], n = a->dims[j];
    size_t first = lo < d ? d - lo : 0;
    size_t last = n + d - lo < pd ? n + d - lo : pd;
    *off = first;
    *ext = last - first;
}

static dagger_status_t submit_edge(dagger_region_t *r, dagger_codelet_t cl, const dagger_stencil_t *s,
                                   const dg_st_pack_t *p, size_t b, ext_box_t box,
                                   dg_st_extend_param_t ep)
{
    dagger_view_t v = dagger_view_sub(dagger_view(s->rt, p->pad[b]), box.off, box.ext);
    dagger_arg_t args[2] = {DAGGER_INOUT(v), DAGGER_VALUE(&ep, sizeof(ep))};
    return dagger_submit(r, cl, 2, args, NULL, NULL, NULL);
}

/* The extend tasks of dimension k for block b (at off[], ext[]). */
static dagger_status_t submit_dim(dagger_region_t *r, dagger_codelet_t cl, const dagger_stencil_t *s,
                                  const dg_st_pack_t *p, size_t b, int k, const size_t off[],
                                  const size_t ext[])
{
    const dagger_array_t *a = p->src;
    ext_box_t box;
    size_t pd[DAGGER_MAX_DIMS];
    for (int j = 0; j < DAGGER_MAX_DIMS; j++) {
        pd[j] = ext[j] + 2 * p->dist[j];
        box.off[j] = 0;
        box.ext[j] = pd[j];
        if (j > k && p->dist[j] && dg_st_bc_affine(p->bc[j].kind))
            in_range(a, p, j, off[j], pd[j], &box.off[j], &box.ext[j]);
    }
    size_t d = p->dist[k], lo = off[k], hi = off[k] + ext[k], n = a->dims[k];
    dg_st_extend_param_t ep = {.kind = (uint32_t)p->bc[k].kind, .dim = (uint32_t)k};
    dagger_status_t st = DAGGER_OK;
    if (lo < d) { /* the low edge: element 0 at position d - lo */
        ep.side = -1;
        ep.count = (uint32_t)(d - lo);
        ep.edge = d - lo;
        box.off[k] = 0;
        box.ext[k] = 2 * (d - lo) + 1;
        st = submit_edge(r, cl, s, p, b, box, ep);
    }
    if (st == DAGGER_OK && hi + d > n) { /* the high edge: element n-1 at q */
        size_t q = n - 1 - lo + d, c = pd[k] - q - 1;
        ep.side = 1;
        ep.count = (uint32_t)c;
        ep.edge = c;
        box.off[k] = q - c;
        box.ext[k] = 2 * c + 1;
        st = submit_edge(r, cl, s, p, b, box, ep);
    }
    return st;
}

dagger_status_t dg_st_submit_extends(dagger_region_t *r, dagger_codelet_t cl,
                                     const dagger_stencil_t *s, const dg_st_pack_t *p)
{
    const dagger_array_t *a = p->src;
    for (size_t b = 0; b < a->nblocks; b++) {
        size_t idx[DAGGER_MAX_DIMS], off[DAGGER_MAX_DIMS], ext[DAGGER_MAX_DIMS];
        dg_arr_block_box(a, b, idx, off, ext);
        for (int k = 0; k < a->ndims; k++) {
            if (!p->dist[k] || !dg_st_bc_affine(p->bc[k].kind))
                continue;
            dagger_status_t st = submit_dim(r, cl, s, p, b, k, off, ext);
            if (st != DAGGER_OK)
                return st;
        }
    }
    return DAGGER_OK;
}

/* ------------------------------------------------------------ codelet */

/* The ghost j steps past the edge, from the line's elements at `stride`
 * (element apart) around the edge. Floats in double, integers wrapping. */
static void ghost_f(dagger_dtype_t t, char *e, ptrdiff_t step, uint32_t kind, uint32_t j)
{
    size_t es = dagger_dtype_size(t);
    double edge = dg_arr_load(t, e), v;
    if (kind == DAGGER_BC_LINEAR_EXTRAPOLATE)
        v = edge + (double)j * (edge - dg_arr_load(t, e - step * (ptrdiff_t)es));
    else {
        ptrdiff_t m = kind == DAGGER_BC_ANTIREFLECT_MIRROR ? (ptrdiff_t)j : (ptrdiff_t)j - 1;
        v = 2 * edge - dg_arr_load(t, e - m * step * (ptrdiff_t)es);
    }
    dg_arr_store(t, e + (ptrdiff_t)j * step * (ptrdiff_t)es, v);
}

static void ghost_i(dagger_dtype_t t, char *e, ptrdiff_t step, uint32_t kind, uint32_t j)
{
    ptrdiff_t es = (ptrdiff_t)dagger_dtype_size(t);
    uint64_t edge = dg_arr_load_u(t, e), v;
    if (kind == DAGGER_BC_LINEAR_EXTRAPOLATE)
        v = edge + (uint64_t)j * (edge - dg_arr_load_u(t, e - step * es));
    else {
        ptrdiff_t m = kind == DAGGER_BC_ANTIREFLECT_MIRROR ? (ptrdiff_t)j : (ptrdiff_t)j - 1;
        v = 2 * edge - dg_arr_load_u(t, e - m * step * es);
    }
    dg_arr_store_u(t, e + (ptrdiff_t)j * step * es, v);
}

int dg_arr_extend_impl(dagger_task_t *t)
{
    dg_st_extend_param_t p;
    if (dagger_task_nargs(t) != 2 || dg_arr_param(t, 1, &p, sizeof(p)) || p.dim >= DAGGER_MAX_DIMS)
        return dagger_task_fail(t, "malformed extend parameters");
    dagger_slot_t x = dagger_task_arg(t, 0);
    size_t ext[DAGGER_MAX_DIMS];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        ext[k] = k < x.ndims ? x.dims[k] : 1;
    ext[p.dim] = 1; /* one line along dim per position of the others */
    int fl = x.dtype == DAGGER_F32 || x.dtype == DAGGER_F64;
    size_t es = dagger_dtype_size(x.dtype);
    ptrdiff_t step = p.side * (ptrdiff_t)x.strides[p.dim];
    for (size_t i3 = 0; i3 < ext[3]; i3++)
        for (size_t i2 = 0; i2 < ext[2]; i2++)
            for (size_t i1 = 0; i1 < ext[1]; i1++)
                for (size_t i0 = 0; i0 < ext[0]; i0++) {
                    size_t at = i0 * x.strides[0] + i1 * x.strides[1] + i2 * x.strides[2] +
                                i3 * x.strides[3] + p.edge * x.strides[p.dim];
                    char *e = (char *)x.data + at * es;
                    for (uint32_t j = 1; j <= p.count; j++) {
                        if (fl)
                            ghost_f(x.dtype, e, step, p.kind, j);
                        else
                            ghost_i(x.dtype, e, step, p.kind, j);
                    }
                }
    return DAGGER_OK;
}
