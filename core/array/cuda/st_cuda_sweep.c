/* The sweep codelet on CUDA: a phase's expressions over one block, one
 * kernel launch per expression on the task's stream, in order (expression
 * k + 1 starts after k is done, as on the CPU). Windows read padded
 * buffers: a phase with pack tasks gets them as arguments; a fused phase
 * gets its own blocks and the halo strips, and this task builds each padded
 * buffer whole (the block, then every strip or pad piece) in stream-ordered
 * device scratch, freed in stream order after the last expression. The
 * built-in kernels run here; a kernel registered by the user is a host C
 * function, and such a sweep fails before it queues anything. */
#include <string.h>

#include "core/array/cuda/st_cuda.h"

/* Per argument: its padded buffer (data NULL: none), and whether this task
 * allocated it. */
typedef struct cu_pads {
    dagger_slot_t slot[DAGGER_MAX_ARGS];
    uint8_t owned[DAGGER_MAX_ARGS];
} cu_pads_t;

typedef struct cu_boxes {
    dg_st_box_t b[DG_ST_CUDA_BOXES];
    int n;
} cu_boxes_t;

/* Adds a box, queuing the full batch first. */
static cudaError_t box_add(cu_boxes_t *q, const dg_st_box_t *b, cudaStream_t s)
{
    cudaError_t e = cudaSuccess;
    if (q->n == DG_ST_CUDA_BOXES) {
        e = dg_st_cuda_boxes(q->b, q->n, s);
        q->n = 0;
    }
    q->b[q->n++] = *b;
    return e;
}

/* The sub-box [off, off + ext) of the padded buffer d, as a slot. */
static dagger_slot_t sub_box(const dagger_slot_t *d, const uint64_t off[], const size_t ext[])
{
    dagger_slot_t box = *d;
    size_t at = 0;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        at += off[k] * d->strides[k];
        box.dims[k] = ext[k];
    }
    box.data = (char *)d->data + at * dagger_dtype_size(d->dtype);
    return box;
}

/* The padded buffer of argument a, a fused input's own block with halo h:
 * the block at offset h, then the pieces of this input (strips, pad). */
static int build_pad(dagger_task_t *t, cu_pads_t *pads, int a, const uint64_t h[],
                     const dg_st_piece_param_t *pc, uint32_t npieces)
{
    cudaStream_t s = dg_st_cuda_stream(t);
    int nargs = dagger_task_nargs(t);
    dagger_slot_t own = dagger_task_arg(t, a), *d = &pads->slot[a];
    size_t n = 1, ext[DAGGER_MAX_DIMS];
    *d = own;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        ext[k] = k < own.ndims ? own.dims[k] : 1;
        d->dims[k] = k < own.ndims ? own.dims[k] + 2 * h[k] : 1;
        d->strides[k] = n;
        n *= d->dims[k];
    }
    d->bytes = n * dagger_dtype_size(own.dtype);
    void *mem = NULL;
    if (dg_st_cuda_ok(t, cudaMallocAsync(&mem, d->bytes, s), "scratch for a padded block"))
        return -1;
    d->data = mem;
    pads->owned[a] = 1;
    cu_boxes_t q = {.n = 0};
    dg_st_pack_param_t fwd = {.dir = {1, 1, 1, 1}};
    dagger_slot_t centre = sub_box(d, h, ext);
    dg_st_box_t b;
    dg_st_cuda_box(&b, &centre, &own, &fwd);
    cudaError_t e = box_add(&q, &b, s);
    for (uint32_t i = 0; i < npieces && e == cudaSuccess; i++) {
        dg_st_piece_param_t p;
        memcpy(&p, &pc[i], sizeof(p));
        if (p.op != a)
            continue;
        if (p.arg >= nargs - 1 || (p.arg < 0 && !p.pp.fill))
            return dagger_task_fail(t, "malformed stencil parameters");
        size_t dext[DAGGER_MAX_DIMS];
        for (int k = 0; k < DAGGER_MAX_DIMS; k++)
            dext[k] = p.dext[k];
        dagger_slot_t box = sub_box(d, p.doff, dext), src;
        if (!p.pp.fill)
            src = dagger_task_arg(t, p.arg);
        dg_st_cuda_box(&b, &box, p.pp.fill ? NULL : &src, &p.pp);
        e = box_add(&q, &b, s);
    }
    if (e == cudaSuccess)
        e = dg_st_cuda_boxes(q.b, q.n, s);
    return dg_st_cuda_ok(t, e, "padded block") ? -1 : 0;
}

/* The padded buffers of every windowed input of the sweep. */
static int setup_pads(dagger_task_t *t, const dg_st_sweep_hdr_t *h, const unsigned char *blob,
                      cu_pads_t *pads)
{
    const dg_st_piece_param_t *pc = (const void *)(blob + h->pieces_off);
    for (uint32_t x = 0; x < h->nexpr; x++) {
        dg_st_expr_param_t e;
        memcpy(&e, blob + sizeof(*h) + x * sizeof(e), sizeof(e));
        for (uint32_t i = 0; i < e.nin; i++) {
            int a = e.in[i].arg;
            if (!e.in[i].padded || pads->slot[a].data)
                continue;
            if (!h->fused)
                pads->slot[a] = dagger_task_arg(t, a);
            else if (build_pad(t, pads, a, e.in[i].halo, pc, h->npieces))
                return -1;
        }
    }
    return 0;
}

static void free_pads(dagger_task_t *t, cu_pads_t *pads)
{
    for (int a = 0; a < DAGGER_MAX_ARGS; a++)
        if (pads->owned[a])
            cudaFreeAsync(pads->slot[a].data, dg_st_cuda_stream(t));
}

/* The kernel's parameters for expression e: the output, then each input's
 * element (0, ..., 0) in its padded buffer (windowed) or its block. */
static void expr_params(dagger_task_t *t, const dg_st_expr_param_t *e, const cu_pads_t *pads,
                        dg_st_expr_t *x)
{
    dagger_slot_t o = dagger_task_arg(t, (int)e->out_arg);
    memset(x, 0, sizeof(*x));
    x->out = o.data;
    x->odtype = (uint32_t)o.dtype;
    x->kernel = e->kernel;
    x->assign = e->assign;
    x->lhs_op = e->lhs_op;
    x->nin = e->nin;
    x->value = e->value;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        x->ext[k] = k < o.ndims ? o.dims[k] : 1;
        x->ostride[k] = (int64_t)o.strides[k];
    }
    for (uint32_t i = 0; i < e->nin + (e->lhs_op != 0); i++) {
        const dg_st_in_param_t *in = &e->in[i];
        dagger_slot_t p = in->padded ? pads->slot[in->arg] : dagger_task_arg(t, in->arg);
        size_t centre = 0;
        for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
            centre += (in->padded ? in->halo[k] : 0) * p.strides[k];
            x->in[i].stride[k] = (int64_t)p.strides[k];
            x->in[i].dist[k] = (int64_t)in->dist[k];
        }
        x->in[i].base = (const char *)p.data + centre * dagger_dtype_size(p.dtype);
        x->in[i].dtype = (uint32_t)p.dtype;
    }
}

/* The parameters' own checks: what the kernels index with must be in range,
 * and every kernel one that runs on a device. */
static int check_exprs(dagger_task_t *t, const dg_st_sweep_hdr_t *h, const unsigned char *blob)
{
    int nargs = dagger_task_nargs(t);
    for (uint32_t x = 0; x < h->nexpr; x++) {
        dg_st_expr_param_t e;
        memcpy(&e, blob + sizeof(*h) + x * sizeof(e), sizeof(e));
        if (e.kernel > DG_ST_SUM)
            return dagger_task_fail(
                t, "stencil expression %u uses kernel %u, a C function of the host "
                "(dagger_stencil_kernel_register), which cannot run on a CUDA device: run this "
                "stencil in a region whose scope admits CPUs (only DAGGER_STENCIL_CONST, _COPY "
                "and _SUM run on CUDA devices)", x, e.kernel);
        int bad = e.kernel == 0 || e.nin > DAGGER_STENCIL_MAX_IN ||
                  (e.kernel != DG_ST_CONST && e.nin < 1) || e.out_arg >= (uint32_t)nargs - 1;
        for (uint32_t i = 0; !bad && i < e.nin + (e.lhs_op != 0); i++)
            bad = e.in[i].arg < 0 || e.in[i].arg >= nargs - 1;
        if (bad)
            return dagger_task_fail(t, "malformed stencil parameters");
    }
    return DAGGER_OK;
}

int dg_arr_sweep_cuda(dagger_task_t *t)
{
    dg_st_sweep_hdr_t h;
    size_t bytes;
    if (dg_st_cuda_load(t))
        return DAGGER_ERR_TASK_FAILED;
    const unsigned char *blob = dg_st_sweep_params(t, &h, &bytes);
    if (!blob)
        return DAGGER_ERR_TASK_FAILED;
    int rc = check_exprs(t, &h, blob);
    if (rc != DAGGER_OK)
        return rc;
    cu_pads_t pads;
    memset(&pads, 0, sizeof(pads));
    rc = setup_pads(t, &h, blob, &pads) ? DAGGER_ERR_TASK_FAILED : DAGGER_OK;
    for (uint32_t x = 0; x < h.nexpr && rc == DAGGER_OK; x++) {
        dg_st_expr_param_t e;
        memcpy(&e, blob + sizeof(h) + x * sizeof(e), sizeof(e));
        dg_st_expr_t k;
        expr_params(t, &e, &pads, &k);
        if (dg_st_cuda_ok(t, dg_st_cuda_expr(&k, dg_st_cuda_stream(t)), "sweep"))
            rc = DAGGER_ERR_TASK_FAILED;
    }
    free_pads(t, &pads);
    return rc;
}
