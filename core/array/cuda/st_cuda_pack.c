/* The padded buffers on CUDA: the pack codelet (one halo piece, or the pad
 * value, into a box of a padded buffer) and the extend codelet (an affine
 * boundary's ghosts, computed inside the buffer), each one kernel launch on
 * the task's stream. */
#include <string.h>

#include "core/array/cuda/st_cuda.h"

int dg_st_cuda_ok(dagger_task_t *t, cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    return dagger_task_fail(t, "stencil %s on a CUDA device: %s (cudaError_t %d)", what,
                            cudaGetErrorString(e), (int)e);
}

void dg_st_cuda_box(dg_st_box_t *b, const dagger_slot_t *d, const dagger_slot_t *src,
                    const dg_st_pack_param_t *p)
{
    memset(b, 0, sizeof(*b));
    b->dst = d->data;
    b->src = src ? src->data : NULL;
    b->es = (uint32_t)dagger_dtype_size(d->dtype);
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        int in = k < d->ndims;
        b->ext[k] = in ? d->dims[k] : 1;
        b->dstride[k] = in ? (int64_t)d->strides[k] : 0;
        b->sstride[k] = in && src ? (int64_t)src->strides[k] : 0;
        b->dir[k] = p->dir[k];
    }
    if (!src) {
        unsigned char v[8] = {0};
        dg_arr_store(d->dtype, v, p->pad); /* the CPU pack's conversion */
        memcpy(&b->fill, v, sizeof(v));
    }
}

int dg_arr_pack_cuda(dagger_task_t *t)
{
    int nargs = dagger_task_nargs(t);
    dg_st_pack_param_t p;
    if (dg_st_cuda_load(t))
        return DAGGER_ERR_TASK_FAILED;
    if (nargs < 2 || dg_arr_param(t, nargs - 1, &p, sizeof(p)) || (!p.fill && nargs < 3))
        return dagger_task_fail(t, "malformed pack parameters");
    dagger_slot_t d = dagger_task_arg(t, 0), s = dagger_task_arg(t, 1);
    dg_st_box_t b;
    dg_st_cuda_box(&b, &d, p.fill ? NULL : &s, &p);
    return dg_st_cuda_ok(t, dg_st_cuda_boxes(&b, 1, dg_st_cuda_stream(t)), "pack");
}

static uint32_t ghost_of(uint32_t kind)
{
    switch (kind) {
    case DAGGER_BC_ANTIREFLECT_SYMMETRIC: return DG_ST_G_ANTI_SYM;
    case DAGGER_BC_ANTIREFLECT_MIRROR: return DG_ST_G_ANTI_MIRROR;
    case DAGGER_BC_LINEAR_EXTRAPOLATE: return DG_ST_G_LINEAR;
    default: return 0;
    }
}

int dg_arr_extend_cuda(dagger_task_t *t)
{
    dg_st_extend_param_t p;
    if (dg_st_cuda_load(t))
        return DAGGER_ERR_TASK_FAILED;
    if (dagger_task_nargs(t) != 2 || dg_arr_param(t, 1, &p, sizeof(p)) ||
        p.dim >= DAGGER_MAX_DIMS || !ghost_of(p.kind))
        return dagger_task_fail(t, "malformed extend parameters");
    dagger_slot_t x = dagger_task_arg(t, 0);
    dg_st_ext_t e = {.base = x.data, .edge = p.edge, .dim = p.dim, .ghost = ghost_of(p.kind),
                     .count = p.count, .dtype = (uint32_t)x.dtype, .side = p.side};
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        e.ext[k] = k < x.ndims && k != (int)p.dim ? x.dims[k] : 1; /* a line per position */
        e.stride[k] = k < x.ndims ? (int64_t)x.strides[k] : 0;
    }
    return dg_st_cuda_ok(t, dg_st_cuda_extend(&e, dg_st_cuda_stream(t)), "extend");
}
