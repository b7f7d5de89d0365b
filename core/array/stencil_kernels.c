/* Stencil codelets: pack (a halo piece into a padded buffer) and sweep (a
 * phase's expressions over one block, windows read from the padded
 * buffers or, for width 0, from the block itself). */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
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

/* The sweep works a line (dimension 0) at a time: the expression's values
 * for the line go into a buffer of doubles, built from typed line loops for
 * the built-in kernels (a window sum reads all the window's rows in one
 * pass) or one kernel call per element, then meet the output line. */

#define TYPED(t, T, ...)                                                          \
    switch (t) {                                                                  \
    case DAGGER_F32: { typedef float T; __VA_ARGS__ } break;                      \
    case DAGGER_F64: { typedef double T; __VA_ARGS__ } break;                     \
    case DAGGER_I32: { typedef int32_t T; __VA_ARGS__ } break;                    \
    default: { typedef int64_t T; __VA_ARGS__ } break;                            \
    }

static void load_line(dagger_dtype_t t, const void *p, size_t n, double *v)
{
    TYPED(t, T, const T *x = p; for (size_t i = 0; i < n; i++) v[i] = (double)x[i];)
}

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

/* out (assign)= v over a line. Floating-point lines are plain loops;
 * integers go through dg_arr_store, which saturates. */
static void store_line(dagger_dtype_t t, dagger_stencil_assign_t a, void *p, size_t n, const double *v)
{
    if (t == DAGGER_F64 || t == DAGGER_F32) {
        TYPED(t, T, T *o = p;
              switch (a) {
              case DAGGER_ST_SET: for (size_t i = 0; i < n; i++) o[i] = (T)v[i]; break;
              case DAGGER_ST_ADD: for (size_t i = 0; i < n; i++) o[i] = (T)(o[i] + v[i]); break;
              case DAGGER_ST_SUB: for (size_t i = 0; i < n; i++) o[i] = (T)(o[i] - v[i]); break;
              case DAGGER_ST_MUL: for (size_t i = 0; i < n; i++) o[i] = (T)(o[i] * v[i]); break;
              default: for (size_t i = 0; i < n; i++) o[i] = (T)(o[i] / v[i]); break;
              })
        return;
    }
    size_t es = dagger_dtype_size(t);
    for (size_t i = 0; i < n; i++) {
        char *q = (char *)p + i * es;
        dg_arr_store(t, q, a == DAGGER_ST_SET ? v[i] : apply(a, dg_arr_load(t, q), v[i]));
    }
}

/* What one input contributes: its slot, and where the block's element 0 is. */
typedef struct win_src {
    const char *base;
    dagger_slot_t slot;
    size_t es;
} win_src_t;

typedef struct sweep_ctx {
    const dg_st_sweep_hdr_t *h;
    const dg_st_expr_param_t *e;
    dagger_stencil_fn fn;
    const void *args;
    dagger_window_t w[DAGGER_STENCIL_MAX_IN];
    win_src_t src[DAGGER_STENCIL_MAX_IN];
    size_t n;                                /* line length */
    double *v;                               /* the line's values */
    double *l;                               /* the element-wise operand's line (lhs_op) */
} sweep_ctx_t;

/* Input i's element (0, i1, i2, i3) of the block. */
static const char *line_start(const win_src_t *s, size_t i1, size_t i2, size_t i3)
{
    return s->base + (i1 * s->slot.strides[1] + i2 * s->slot.strides[2] + i3 * s->slot.strides[3]) * s->es;
}

/* v[i] = the sum over the rows r of x_r[i - d .. i + d]: all the window's
 * lines in one pass (the 3 x 3 case of 2-D unrolled, the common one). */
#define MAX_ROWS 729 /* window rows listed on the stack; wider windows allocate the list */

static void sum_rows(dagger_dtype_t t, const char *const *rows, size_t nrows, ptrdiff_t d, size_t n,
                     double *v)
{
    TYPED(t, T,
          if (nrows == 3 && d == 1) {
              const T *a = (const T *)(const void *)rows[0], *b = (const T *)(const void *)rows[1];
              const T *c = (const T *)(const void *)rows[2];
              for (ptrdiff_t i = 0; i < (ptrdiff_t)n; i++)
                  v[i] = (double)a[i - 1] + (double)a[i] + (double)a[i + 1] + (double)b[i - 1] +
                         (double)b[i] + (double)b[i + 1] + (double)c[i - 1] + (double)c[i] +
                         (double)c[i + 1];
          } else {
              for (ptrdiff_t i = 0; i < (ptrdiff_t)n; i++) {
                  double acc = 0;
                  for (size_t r = 0; r < nrows; r++) {
                      const T *x = (const T *)(const void *)rows[r];
                      for (ptrdiff_t o = -d; o <= d; o++)
                          acc += (double)x[i + o];
                  }
                  v[i] = acc;
              }
          })
}

/* The sum of input 0's window for every element of a line. */
static int window_sum_line(sweep_ctx_t *c, const char *centre)
{
    const dagger_window_t *w = &c->w[0];
    ptrdiff_t d[DAGGER_MAX_DIMS], es = (ptrdiff_t)c->src[0].es;
    size_t nrows = 1;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        d[k] = (ptrdiff_t)w->dist[k];
        nrows *= k ? (size_t)(2 * d[k] + 1) : 1;
    }
    const char *stack[MAX_ROWS], **rows = nrows <= MAX_ROWS ? stack : dg_malloc(nrows * sizeof(*rows));
    if (!rows)
        return -1;
    size_t r = 0;
    for (ptrdiff_t o3 = -d[3]; o3 <= d[3]; o3++)
        for (ptrdiff_t o2 = -d[2]; o2 <= d[2]; o2++)
            for (ptrdiff_t o1 = -d[1]; o1 <= d[1]; o1++)
                rows[r++] = centre + (o1 * w->stride[1] + o2 * w->stride[2] + o3 * w->stride[3]) * es;
    sum_rows(w->dtype, rows, nrows, d[0], c->n, c->v);
    if (rows != stack)
        free(rows);
    return 0;
}

/* The expression's values along the line (i1, i2, i3) into c->v; -1 when
 * out of memory. */
static int eval_line(sweep_ctx_t *c, size_t i1, size_t i2, size_t i3)
{
    const dg_st_expr_param_t *e = c->e;
    const char *pi[DAGGER_STENCIL_MAX_IN];
    for (uint32_t i = 0; i < e->nin; i++)
        pi[i] = line_start(&c->src[i], i1, i2, i3);
    switch (e->kernel) {
    case DG_ST_CONST:
        for (size_t i = 0; i < c->n; i++)
            c->v[i] = e->value;
        return 0;
    case DG_ST_COPY:
        load_line(c->w[0].dtype, pi[0], c->n, c->v);
        return 0;
    case DG_ST_SUM:
        return window_sum_line(c, pi[0]);
    default:
        break;
    }
    size_t idx[DAGGER_MAX_DIMS] = {0, c->h->off[1] + i1, c->h->off[2] + i2, c->h->off[3] + i3};
    for (size_t i0 = 0; i0 < c->n; i0++) {
        idx[0] = c->h->off[0] + i0;
        for (uint32_t i = 0; i < e->nin; i++)
            c->w[i].data = pi[i] + i0 * c->src[i].slot.strides[0] * c->src[i].es;
        c->v[i0] = c->fn(c->w, (int)e->nin, idx, c->args);
    }
    return 0;
}

/* v = lhs op v over the line: the fused element-wise operation. */
static void combine_lhs(sweep_ctx_t *c, size_t i1, size_t i2, size_t i3)
{
    const win_src_t *s = &c->src[c->e->nin];
    load_line(s->slot.dtype, line_start(s, i1, i2, i3), c->n, c->l);
    double *v = c->v, *l = c->l;
    switch (c->e->lhs_op) {
    case DAGGER_ARRAY_ADD: for (size_t i = 0; i < c->n; i++) v[i] = l[i] + v[i]; break;
    case DAGGER_ARRAY_SUB: for (size_t i = 0; i < c->n; i++) v[i] = l[i] - v[i]; break;
    case DAGGER_ARRAY_MUL: for (size_t i = 0; i < c->n; i++) v[i] = l[i] * v[i]; break;
    default: for (size_t i = 0; i < c->n; i++) v[i] = l[i] / v[i]; break;
    }
}

/* Sets up the windows of the expression's inputs. */
static void setup_inputs(dagger_task_t *t, sweep_ctx_t *c)
{
    const dg_st_expr_param_t *e = c->e;
    for (uint32_t i = 0; i < e->nin + (e->lhs_op != 0); i++) {
        const dg_st_in_param_t *in = &e->in[i];
        win_src_t *s = &c->src[i];
        s->slot = dagger_task_arg(t, in->arg);
        s->es = dagger_dtype_size(s->slot.dtype);
        size_t centre = 0;
        for (int k = 0; k < DAGGER_MAX_DIMS; k++)
            centre += (in->padded ? in->halo[k] : 0) * s->slot.strides[k];
        s->base = (const char *)s->slot.data + centre * s->es;
        memset(&c->w[i], 0, sizeof(c->w[i]));
        c->w[i].dtype = s->slot.dtype;
        c->w[i].ndims = (int)c->h->ndims;
        for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
            c->w[i].stride[k] = (ptrdiff_t)s->slot.strides[k];
            c->w[i].dist[k] = in->dist[k];
        }
    }
}

/* Runs one expression over the block. */
static int run_expr(dagger_task_t *t, const dg_st_sweep_hdr_t *h, const dg_st_expr_param_t *e,
                    const unsigned char *blob)
{
    sweep_ctx_t c = {.h = h, .e = e, .args = e->args_len ? blob + e->args_off : NULL};
    if (e->kernel > DG_ST_SUM &&
        !(c.fn = (dagger_stencil_fn)dg_arr_fn_find(DG_ARR_FN_STENCIL, e->kernel)))
        return dagger_task_fail(t, "stencil kernel %u is not registered on this rank", e->kernel);
    dagger_slot_t o = dagger_task_arg(t, (int)e->out_arg);
    size_t oes = dagger_dtype_size(o.dtype), ext[DAGGER_MAX_DIMS];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        ext[k] = k < o.ndims ? o.dims[k] : 1;
    c.n = ext[0];
    c.v = dg_malloc(2 * c.n * sizeof(double));
    if (!c.v)
        return dagger_task_fail(t, "out of memory for a line of %zu values", c.n);
    c.l = c.v + c.n;
    setup_inputs(t, &c);
    for (size_t i3 = 0; i3 < ext[3]; i3++)
        for (size_t i2 = 0; i2 < ext[2]; i2++)
            for (size_t i1 = 0; i1 < ext[1]; i1++) {
                if (eval_line(&c, i1, i2, i3)) {
                    free(c.v);
                    return dagger_task_fail(t, "out of memory for a window's rows");
                }
                if (e->lhs_op)
                    combine_lhs(&c, i1, i2, i3);
                char *po = (char *)o.data + (i1 * o.strides[1] + i2 * o.strides[2] + i3 * o.strides[3]) * oes;
                store_line(o.dtype, (dagger_stencil_assign_t)e->assign, po, c.n, c.v);
            }
    free(c.v);
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
