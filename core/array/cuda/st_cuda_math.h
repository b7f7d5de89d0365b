/* The per-element arithmetic of the stencil's CUDA kernels, in plain C so
 * that the kernels (nvcc, __device__) and a host unit test
 * (tests/core/array/test_st_cuda_math.c) run the same code: an element of
 * a box copied into a padded buffer (forward, reversed, one element
 * repeated, or the pad value), an affine boundary's ghosts along one line,
 * and one element of an expression (built-in kernel, element-wise operand,
 * assignment). The results are the CPU codelets' to the bit: every value is
 * a double, sums are added in the CPU's order (stencil_kernels.c's
 * sum_rows), integers saturate on store as dg_arr_store does, and the
 * kernels are compiled without contracting a*b+c into one rounding
 * (--fmad=false, core/CMakeLists.txt). The structs are the kernels'
 * parameters, filled on the host from the task's slots; their pointers are
 * device pointers. */
#ifndef DG_ARRAY_CUDA_ST_CUDA_MATH_H
#define DG_ARRAY_CUDA_ST_CUDA_MATH_H

#include <stdint.h>

#include <dagger/types.h>

#ifdef __CUDACC__
#define DG_ST_HD __host__ __device__
#else
#define DG_ST_HD
#endif

#define DG_ST_NDIM 4   /* DAGGER_MAX_DIMS */
#define DG_ST_NIN 5    /* DAGGER_STENCIL_MAX_IN inputs, and the element-wise operand */

/* Built-in kernels (stencil_internal.h's DG_ST_CONST, _COPY, _SUM). */
enum { DG_ST_K_CONST = 1, DG_ST_K_COPY = 2, DG_ST_K_SUM = 3 };
/* The affine ghosts (dagger_boundary_kind_t's three affine kinds). */
enum { DG_ST_G_ANTI_SYM = 1, DG_ST_G_ANTI_MIRROR = 2, DG_ST_G_LINEAR = 3 };

/* ---------------------------------------------------------------- elements */

static inline DG_ST_HD double dg_st_load(uint32_t t, const char *p)
{
    switch (t) {
    case DAGGER_F32: return (double)*(const float *)(const void *)p;
    case DAGGER_F64: return *(const double *)(const void *)p;
    case DAGGER_I32: return (double)*(const int32_t *)(const void *)p;
    default: return (double)*(const int64_t *)(const void *)p;
    }
}

/* dg_arr_store's rule: NaN becomes 0, integers saturate. */
static inline DG_ST_HD int64_t dg_st_to_int(double v, int64_t lo, int64_t hi)
{
    if (v != v)
        return 0;
    if (v <= (double)lo)
        return lo;
    if (v >= (double)hi)
        return hi;
    return (int64_t)v;
}

static inline DG_ST_HD void dg_st_store(uint32_t t, char *p, double v)
{
    switch (t) {
    case DAGGER_F32: *(float *)(void *)p = (float)v; break;
    case DAGGER_F64: *(double *)(void *)p = v; break;
    case DAGGER_I32: *(int32_t *)(void *)p = (int32_t)dg_st_to_int(v, INT32_MIN, INT32_MAX); break;
    default: *(int64_t *)(void *)p = dg_st_to_int(v, INT64_MIN, INT64_MAX); break;
    }
}

/* cur op v (an assignment's or the element-wise operand's operation). */
static inline DG_ST_HD double dg_st_apply(uint32_t op, double cur, double v)
{
    switch (op) {
    case DAGGER_OP_ADD: return cur + v;
    case DAGGER_OP_SUB: return cur - v;
    case DAGGER_OP_MUL: return cur * v;
    case DAGGER_OP_DIV: return cur / v;
    default: return v;
    }
}

/* Element k (dimension 0 fastest) of a box of extents ext, as indices. */
static inline DG_ST_HD void dg_st_unravel(uint64_t k, const uint64_t ext[DG_ST_NDIM],
                                          uint64_t i[DG_ST_NDIM])
{
    for (int j = 0; j < DG_ST_NDIM; j++) {
        i[j] = k % ext[j];
        k /= ext[j];
    }
}

/* ---------------------------------------------------------------- boxes */

/* A box of a padded buffer filled from a source box of the same extents
 * (dir +1 forward, -1 reversed, 0 one element repeated along each
 * dimension) or, without a source, with the pad value's bits. */
typedef struct dg_st_box {
    char *dst;
    const char *src;                        /* NULL: fill */
    int64_t dstride[DG_ST_NDIM], sstride[DG_ST_NDIM]; /* elements */
    uint64_t ext[DG_ST_NDIM];
    uint64_t fill;                          /* the pad value as an element (low es bytes) */
    int32_t dir[DG_ST_NDIM];
    uint32_t es;                            /* element size: 4 or 8 */
} dg_st_box_t;

/* The source index of destination index i along a dimension of length len. */
static inline DG_ST_HD uint64_t dg_st_src_index(int32_t dir, uint64_t i, uint64_t len)
{
    return dir > 0 ? i : dir < 0 ? len - 1 - i : 0;
}

static inline DG_ST_HD uint64_t dg_st_box_count(const dg_st_box_t *b)
{
    return b->ext[0] * b->ext[1] * b->ext[2] * b->ext[3];
}

/* Copies (or fills) element k of box b. */
static inline DG_ST_HD void dg_st_box_elem(const dg_st_box_t *b, uint64_t k)
{
    uint64_t i[DG_ST_NDIM];
    dg_st_unravel(k, b->ext, i);
    int64_t d = 0, s = 0;
    for (int j = 0; j < DG_ST_NDIM; j++) {
        d += (int64_t)i[j] * b->dstride[j];
        s += (int64_t)dg_st_src_index(b->dir[j], i[j], b->ext[j]) * b->sstride[j];
    }
    char *o = b->dst + d * (int64_t)b->es;
    if (b->es == 4)
        *(uint32_t *)(void *)o = b->src ? *(const uint32_t *)(const void *)(b->src + s * 4)
                                        : (uint32_t)b->fill;
    else
        *(uint64_t *)(void *)o = b->src ? *(const uint64_t *)(const void *)(b->src + s * 8)
                                        : b->fill;
}

/* ---------------------------------------------------------------- affine ghosts */

/* The ghosts of one edge of one dimension inside a box of a padded buffer:
 * for every position of the other dimensions (ext[dim] is 1), the element
 * at edge along dim is the edge and ghost j (1..count) is j steps of side
 * past it (stencil_extend.c's parameters). */
typedef struct dg_st_ext {
    char *base;
    int64_t stride[DG_ST_NDIM];
    uint64_t ext[DG_ST_NDIM];
    uint64_t edge;
    uint32_t dim, ghost, count, dtype;       /* ghost: DG_ST_G_* */
    int32_t side;
} dg_st_ext_t;

static inline DG_ST_HD uint64_t dg_st_ext_count(const dg_st_ext_t *x)
{
    return x->ext[0] * x->ext[1] * x->ext[2] * x->ext[3];
}

/* Line k of x: its ghosts in order. Floats in double (LINEAR: the line
 * through the edge and its neighbour; ANTIREFLECT: 2 edge - the mirror
 * image, about the edge element for _MIRROR and past it for _SYM),
 * integers in wrapping 64-bit arithmetic stored as their low bits. */
static inline DG_ST_HD void dg_st_ext_line(const dg_st_ext_t *x, uint64_t k)
{
    uint64_t i[DG_ST_NDIM];
    dg_st_unravel(k, x->ext, i);
    int64_t at = (int64_t)x->edge * x->stride[x->dim];
    for (int j = 0; j < DG_ST_NDIM; j++)
        at += (int64_t)i[j] * x->stride[j];
    int64_t es = x->dtype == DAGGER_F32 || x->dtype == DAGGER_I32 ? 4 : 8;
    int64_t step = x->side * x->stride[x->dim] * es;
    char *e = x->base + at * es;
    int fl = x->dtype == DAGGER_F32 || x->dtype == DAGGER_F64;
    for (uint32_t j = 1; j <= x->count; j++) {
        /* the source: the edge's neighbour (LINEAR), else the mirror image */
        int64_t m = x->ghost == DG_ST_G_LINEAR ? 1 : x->ghost == DG_ST_G_ANTI_MIRROR ? j : j - 1;
        char *g = e + (int64_t)j * step;
        const char *src = e - m * step;
        if (fl) {
            double edge = dg_st_load(x->dtype, e), v;
            if (x->ghost == DG_ST_G_LINEAR)
                v = edge + (double)j * (edge - dg_st_load(x->dtype, src));
            else
                v = 2 * edge - dg_st_load(x->dtype, src);
            dg_st_store(x->dtype, g, v);
            continue;
        }
        const void *ev = e, *sv = src;
        uint64_t edge = x->dtype == DAGGER_I32 ? (uint64_t)(int64_t)*(const int32_t *)ev
                                               : *(const uint64_t *)ev;
        uint64_t s = x->dtype == DAGGER_I32 ? (uint64_t)(int64_t)*(const int32_t *)sv
                                            : *(const uint64_t *)sv;
        uint64_t v = x->ghost == DG_ST_G_LINEAR ? edge + (uint64_t)j * (edge - s) : 2 * edge - s;
        if (x->dtype == DAGGER_I32)
            *(uint32_t *)(void *)g = (uint32_t)v;
        else
            *(uint64_t *)(void *)g = v;
    }
}

/* ---------------------------------------------------------------- expressions */

/* One input of an expression: where the block's element (0, ..., 0) is (in
 * its padded buffer when it has a window), the strides, the window. */
typedef struct dg_st_in {
    const char *base;
    int64_t stride[DG_ST_NDIM];
    int64_t dist[DG_ST_NDIM];
    uint32_t dtype, pad_;
} dg_st_in_t;

/* One expression over one block: out[i] (assign)= [in[nin] lhs_op] kernel(...). */
typedef struct dg_st_expr {
    dg_st_in_t in[DG_ST_NIN];
    char *out;
    int64_t ostride[DG_ST_NDIM];
    uint64_t ext[DG_ST_NDIM];               /* the block's extents */
    double value;                           /* DG_ST_K_CONST */
    uint32_t kernel, assign, lhs_op, nin, odtype, pad_;
} dg_st_expr_t;

static inline DG_ST_HD uint64_t dg_st_expr_count(const dg_st_expr_t *x)
{
    return x->ext[0] * x->ext[1] * x->ext[2] * x->ext[3];
}

static inline DG_ST_HD int64_t dg_st_es(uint32_t t)
{
    return t == DAGGER_F32 || t == DAGGER_I32 ? 4 : 8;
}

static inline DG_ST_HD const char *dg_st_at(const dg_st_in_t *in, const uint64_t i[DG_ST_NDIM])
{
    int64_t at = 0;
    for (int j = 0; j < DG_ST_NDIM; j++)
        at += (int64_t)i[j] * in->stride[j];
    return in->base + at * dg_st_es(in->dtype);
}

/* The sum of the window around p, in the CPU's order: rows (offsets along
 * dimensions 1..3, dimension 3 outermost) one after the other, each from
 * offset -dist[0] to dist[0]. The CPU's 3-row, width-1 case starts from its
 * first element, every other from 0 (which turns an all -0.0 window into
 * +0.0): so does this. */
static inline DG_ST_HD double dg_st_window_sum(const dg_st_in_t *in, const char *p)
{
    const int64_t *d = in->dist;
    int64_t es = dg_st_es(in->dtype);
    int first = (2 * d[1] + 1) * (2 * d[2] + 1) * (2 * d[3] + 1) == 3 && d[0] == 1;
    double acc = 0;
    for (int64_t o3 = -d[3]; o3 <= d[3]; o3++)
        for (int64_t o2 = -d[2]; o2 <= d[2]; o2++)
            for (int64_t o1 = -d[1]; o1 <= d[1]; o1++) {
                const char *row =
                    p + (o1 * in->stride[1] + o2 * in->stride[2] + o3 * in->stride[3]) * es;
                for (int64_t o0 = -d[0]; o0 <= d[0]; o0++) {
                    double v = dg_st_load(in->dtype, row + o0 * in->stride[0] * es);
                    acc = first ? v : acc + v;
                    first = 0;
                }
            }
    return acc;
}

/* Element k of the block: the kernel's value, the element-wise operand's
 * operation, then the assignment into the output. */
static inline DG_ST_HD void dg_st_expr_elem(const dg_st_expr_t *x, uint64_t k)
{
    uint64_t i[DG_ST_NDIM];
    dg_st_unravel(k, x->ext, i);
    double v;
    if (x->kernel == DG_ST_K_CONST)
        v = x->value;
    else if (x->kernel == DG_ST_K_COPY)
        v = dg_st_load(x->in[0].dtype, dg_st_at(&x->in[0], i));
    else
        v = dg_st_window_sum(&x->in[0], dg_st_at(&x->in[0], i));
    if (x->lhs_op)
        v = dg_st_apply(x->lhs_op, dg_st_load(x->in[x->nin].dtype, dg_st_at(&x->in[x->nin], i)), v);
    int64_t at = 0;
    for (int j = 0; j < DG_ST_NDIM; j++)
        at += (int64_t)i[j] * x->ostride[j];
    char *o = x->out + at * dg_st_es(x->odtype);
    if (x->assign != DAGGER_OP_SET)
        v = dg_st_apply(x->assign, dg_st_load(x->odtype, o), v);
    dg_st_store(x->odtype, o, v);
}

#endif
