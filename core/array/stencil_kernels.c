/* Stencil codelets: pack (a halo piece into a padded buffer) and sweep (a
 * phase's expressions over one block, windows read from the padded
 * buffers near the block's edges and, in a fused sweep, from the block
 * itself elsewhere; width 0 always from the block itself). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/simd.h"
#include "core/array/stencil_internal.h"

/* ------------------------------------------------------------ pack */

/* A copy of a few elements inline: the halo columns and the frame are
 * copied one or two elements a row, where a memcpy call costs more than
 * the copy. */
static inline __attribute__((always_inline)) void copy_elems(char *o, const char *x, size_t n,
                                                             size_t es)
{
    if (es == 8 && n <= 2) { /* a column or two of doubles: fixed-size moves */
        if (n == 2)
            memcpy(o, x, 16);
        else if (n)
            memcpy(o, x, 8);
        return;
    }
    if (es != 8 || n > 4) {
        memcpy(o, x, n * es);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t w;
        memcpy(&w, x + 8 * i, 8);
        memcpy(o + 8 * i, &w, 8);
    }
}

static size_t src_index(int dir, size_t i, size_t len)
{
    return dir > 0 ? i : dir < 0 ? len - 1 - i : 0;
}

/* Copies the piece s (or the pad value) into d, the piece's box of a padded
 * buffer. Rows (dimension 0) are walked by pointer steps: a halo column is
 * one element a row, where per-row index arithmetic cost more than the copy. */
static void pack_copy(const dagger_slot_t *d, const dagger_slot_t *s, const dg_st_pack_param_t *p)
{
    size_t es = dagger_dtype_size(d->dtype), ext[DAGGER_MAX_DIMS];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        ext[k] = k < d->ndims ? d->dims[k] : 1;
    unsigned char padv[8];
    dg_arr_store(d->dtype, padv, p->pad);
    ptrdiff_t ostep = (ptrdiff_t)(d->strides[1] * es);
    ptrdiff_t xstep = p->dir[1] > 0 ? (ptrdiff_t)(s->strides[1] * es)
                      : p->dir[1] < 0 ? -(ptrdiff_t)(s->strides[1] * es) : 0;
    for (size_t i3 = 0; i3 < ext[3]; i3++)
        for (size_t i2 = 0; i2 < ext[2]; i2++) {
            char *o = (char *)d->data + (i2 * d->strides[2] + i3 * d->strides[3]) * es;
            if (p->fill) {
                for (size_t i1 = 0; i1 < ext[1]; i1++, o += ostep)
                    for (size_t i0 = 0; i0 < ext[0]; i0++)
                        memcpy(o + i0 * es, padv, es);
                continue;
            }
            size_t j1 = src_index(p->dir[1], 0, ext[1]), j2 = src_index(p->dir[2], i2, ext[2]);
            size_t j3 = src_index(p->dir[3], i3, ext[3]);
            const char *x = (const char *)s->data +
                            (j1 * s->strides[1] + j2 * s->strides[2] + j3 * s->strides[3]) * es;
            if (ext[0] == 1 && es == 8) {
                /* A column of doubles (a strip beside a 2-D block): one
                 * move a row, whichever way the piece runs. */
                for (size_t i1 = 0; i1 < ext[1]; i1++, o += ostep, x += xstep) {
                    uint64_t w;
                    memcpy(&w, x, 8);
                    memcpy(o, &w, 8);
                }
                continue;
            }
            for (size_t i1 = 0; i1 < ext[1]; i1++, o += ostep, x += xstep) {
                if (p->dir[0] > 0)
                    copy_elems(o, x, ext[0], es);
                else
                    for (size_t i0 = 0; i0 < ext[0]; i0++)
                        memcpy(o + i0 * es, x + src_index(p->dir[0], i0, ext[0]) * es, es);
            }
        }
}

int dg_arr_pack_impl(dagger_task_t *t)
{
    int nargs = dagger_task_nargs(t);
    dg_st_pack_param_t p;
    if (nargs < 2 || dg_arr_param(t, nargs - 1, &p, sizeof(p)))
        return dagger_task_fail(t, "malformed pack parameters");
    dagger_slot_t d = dagger_task_arg(t, 0), s = p.fill ? d : dagger_task_arg(t, 1);
    pack_copy(&d, &s, &p);
    return DAGGER_OK;
}

/* ------------------------------------------------------------ fused padded buffers */

/* A fused sweep builds each padded input's buffer itself, but only its
 * frame: the block's own elements within 2 halo widths of its edges (the
 * windows of the outputs near the edge reach that far) and the halo strips
 * it got as arguments. The rest of the block is read in place. */
typedef struct pads {
    dagger_slot_t slot[DAGGER_MAX_ARGS];    /* per argument: its padded buffer (data NULL: none) */
    uint8_t owned[DAGGER_MAX_ARGS];         /* 1: slot[a].data is allocated for this task */
    int nkept;                              /* the thread's scratch buffers in use */
} pads_t;

/* The own block's frame (width 2h) into the padded buffer d: whole rows
 * within 2h of an edge along dimensions 1..3 (or when the row is that thin),
 * otherwise the 2h elements at each end of the row, unless ends is 0 (the
 * sweep reads those in place: sum3_f64_plane). */
static void copy_ring(const dagger_slot_t *d, const dagger_slot_t *own, const uint64_t h[], int ends)
{
    size_t es = dagger_dtype_size(own->dtype), ext[DAGGER_MAX_DIMS];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        ext[k] = k < own->ndims ? own->dims[k] : 1;
    size_t w0 = 2 * h[0], centre = 0, row = ext[0] * es, tail = (ext[0] - w0) * es;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        centre += h[k] * d->strides[k];
    int thin = ext[0] <= 2 * w0;
    ptrdiff_t ostep = (ptrdiff_t)(d->strides[1] * es), xstep = (ptrdiff_t)(own->strides[1] * es);
    for (size_t i3 = 0; i3 < ext[3]; i3++)
        for (size_t i2 = 0; i2 < ext[2]; i2++) {
            int edge23 = thin || i2 < 2 * h[2] || i2 + 2 * h[2] >= ext[2] || i3 < 2 * h[3] ||
                         i3 + 2 * h[3] >= ext[3];
            char *o = (char *)d->data + (centre + i2 * d->strides[2] + i3 * d->strides[3]) * es;
            const char *x = (const char *)own->data + (i2 * own->strides[2] + i3 * own->strides[3]) * es;
            /* Rows [0, lo) and [hi, ext[1]) whole, the ends of the others. */
            size_t lo = edge23 ? ext[1] : 2 * h[1] < ext[1] ? 2 * h[1] : ext[1];
            size_t hi = ext[1] > 2 * h[1] ? ext[1] - 2 * h[1] : 0;
            if (hi < lo)
                hi = lo;
            size_t i1 = 0;
            for (; i1 < lo; i1++, o += ostep, x += xstep)
                memcpy(o, x, row);
            if (ends)
                for (; i1 < hi; i1++, o += ostep, x += xstep) {
                    copy_elems(o, x, w0, es);
                    copy_elems(o + tail, x + tail, w0, es);
                }
            else {
                o += (ptrdiff_t)(hi - i1) * ostep;
                x += (ptrdiff_t)(hi - i1) * xstep;
                i1 = hi;
            }
            for (; i1 < ext[1]; i1++, o += ostep, x += xstep)
                memcpy(o, x, row);
        }
}

/* Padded frames live in scratch memory kept per thread between tasks (a
 * fresh allocation of a block's size faulted its pages in on every task,
 * and reused memory stays in cache): DG_ST_SCRATCH buffers, grown as needed,
 * freed when the thread exits. A task with more padded inputs allocates the
 * rest. */
#define DG_ST_SCRATCH 4
typedef struct st_scratch {
    void *p[DG_ST_SCRATCH];
    size_t cap[DG_ST_SCRATCH];
} st_scratch_t;

static _Thread_local st_scratch_t *tl_scratch;
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_drop(void *v)
{
    st_scratch_t *s = v;
    for (int i = 0; i < DG_ST_SCRATCH; i++)
        free(s->p[i]);
    free(s);
}

static void scratch_init(void)
{
    if (pthread_key_create(&scratch_key, scratch_drop))
        scratch_key = (pthread_key_t)-1;
}

/* Scratch buffer i of this thread, at least n bytes; NULL when out of memory
 * or i is past the kept ones. */
static void *scratch_get(int i, size_t n)
{
    if (i >= DG_ST_SCRATCH)
        return NULL;
    if (!tl_scratch) {
        pthread_once(&scratch_once, scratch_init);
        if (scratch_key == (pthread_key_t)-1 || !(tl_scratch = dg_calloc(1, sizeof(*tl_scratch))))
            return NULL;
        if (pthread_setspecific(scratch_key, tl_scratch)) {
            free(tl_scratch);
            tl_scratch = NULL;
            return NULL;
        }
    }
    if (tl_scratch->cap[i] < n) {
        void *q = dg_malloc(n);
        if (!q)
            return NULL;
        free(tl_scratch->p[i]);
        tl_scratch->p[i] = q;
        tl_scratch->cap[i] = n;
    }
    return tl_scratch->p[i];
}

/* The padded buffer of argument a, a fused input's own block with halo h:
 * scratch memory of the block's shape plus the halo, of which only the
 * frame is written (and read; the ends of its inner rows only if ends).
 * -1 when out of memory. */
static int build_pad(dagger_task_t *t, pads_t *pads, int a, const uint64_t h[],
                     const dg_st_piece_param_t *pc, uint32_t npieces, int ends)
{
    dagger_slot_t own = dagger_task_arg(t, a), *d = &pads->slot[a];
    size_t es = dagger_dtype_size(own.dtype), n = 1;
    *d = own;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        d->dims[k] = k < own.ndims ? own.dims[k] + 2 * h[k] : 1;
        d->strides[k] = n;
        n *= d->dims[k];
    }
    d->bytes = n * es;
    d->data = scratch_get(pads->nkept, d->bytes);
    if (d->data)
        pads->nkept++;
    else if ((d->data = dg_malloc(d->bytes)))
        pads->owned[a] = 1;
    else
        return -1;
    copy_ring(d, &own, h, ends);
    for (uint32_t i = 0; i < npieces; i++) {
        dg_st_piece_param_t q;
        memcpy(&q, &pc[i], sizeof(q));
        if (q.op != a)
            continue;
        dagger_slot_t box = *d, src = q.arg >= 0 ? dagger_task_arg(t, q.arg) : box;
        size_t at = 0;
        for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
            at += q.doff[k] * d->strides[k];
            box.dims[k] = q.dext[k];
        }
        box.data = (char *)d->data + at * es;
        pack_copy(&box, &src, &q.pp);
    }
    return 0;
}

static void free_pads(pads_t *pads)
{
    for (int a = 0; a < DAGGER_MAX_ARGS; a++)
        if (pads->owned[a])
            free(pads->slot[a].data);
}

/* The halo strips of a fused sweep, asked for a few rows at a time while
 * the block's interior is summed: a strip across the block's rows (a column
 * of a neighbour block) is one cache line per row, far apart, and each was
 * a miss of its own when the frame was built first. */
typedef struct strip_prefetch {
    dagger_task_t *t;
    const dg_st_piece_param_t *pc;
    uint32_t npieces, piece;                /* the piece the cursor is in */
    size_t row, rows;                       /* its next row, and its rows */
    dagger_slot_t src;
    const char *next;                       /* 2-D piece: its next row's first byte */
    size_t rstep, len;                      /* its row stride and row length in bytes */
    size_t step;                            /* rows per call */
} strip_prefetch_t;

static size_t piece_rows(const dagger_slot_t *s)
{
    size_t r = 1;
    for (int k = 1; k < s->ndims && k < DAGGER_MAX_DIMS; k++)
        r *= s->dims[k];
    return r;
}

/* Moves the cursor to a piece with rows left; 0 when none is left. */
static int prefetch_seek(strip_prefetch_t *f)
{
    while (f->row >= f->rows) {
        if (++f->piece >= f->npieces)
            return 0;
        dg_st_piece_param_t q;
        memcpy(&q, &f->pc[f->piece], sizeof(q));
        f->row = 0;
        f->rows = 0;
        if (q.arg >= 0) {
            f->src = dagger_task_arg(f->t, q.arg);
            f->rows = f->src.data ? piece_rows(&f->src) : 0;
            size_t es = dagger_dtype_size(f->src.dtype);
            f->next = (const char *)f->src.data;
            f->rstep = f->src.ndims > 1 ? f->src.strides[1] * es : 0;
            f->len = f->src.dims[0] * es;
        }
    }
    return 1;
}

/* Spreads the strips' rows over calls calls of prefetch_rows (one per
 * SUM3_CHUNK lines of sum3_f64_plane; the other sweeps call it once a line,
 * and so ask for all of them in the block's first lines). */
static void prefetch_init(strip_prefetch_t *f, dagger_task_t *t, const dg_st_piece_param_t *pc,
                          uint32_t npieces, size_t calls)
{
    *f = (strip_prefetch_t){.t = t, .pc = pc, .npieces = npieces, .piece = (uint32_t)-1};
    size_t total = 0;
    for (uint32_t i = 0; i < npieces; i++) {
        dg_st_piece_param_t q;
        memcpy(&q, &pc[i], sizeof(q));
        if (q.arg < 0)
            continue;
        dagger_slot_t src = dagger_task_arg(t, q.arg);
        total += src.data ? piece_rows(&src) : 0;
    }
    f->step = calls ? (total + calls - 1) / calls : total;
}

/* A 2-D piece's rows are walked by pointer steps, a run of rows of one
 * piece at a time (at block 128 a strip column is 128 rows of one element,
 * where the index arithmetic of the general case cost more than the
 * prefetches). */
static void prefetch_rows(strip_prefetch_t *f)
{
    size_t n = f->step;
    while (n && prefetch_seek(f)) {
        const dagger_slot_t *s = &f->src;
        size_t k = f->rows - f->row < n ? f->rows - f->row : n;
        n -= k;
        if (s->ndims <= 2 && f->len <= 8) { /* one element a row: one line */
            const char *x = f->next;
            for (size_t i = 0; i < k; i++, x += f->rstep)
                __builtin_prefetch(x);
            f->next = x;
            f->row += k;
            continue;
        }
        for (size_t i = 0; i < k; i++, f->row++) {
            const char *x = f->next;
            if (s->ndims <= 2) {
                f->next += f->rstep; /* 1-D: one row, rstep 0 */
            } else {
                size_t r = f->row, off = 0;
                for (int d = 1; d < s->ndims && d < DAGGER_MAX_DIMS; d++) {
                    off += (r % s->dims[d]) * s->strides[d];
                    r /= s->dims[d];
                }
                x = (const char *)s->data + off * dagger_dtype_size(s->dtype);
            }
            for (size_t b = 64; b < f->len; b += 64)
                __builtin_prefetch(x + b);
            __builtin_prefetch(x);
            __builtin_prefetch(x + f->len - 1);
        }
    }
}

/* The padded buffers of every windowed input of the sweep; ends 0: without
 * the own block's elements at the ends of its inner rows (see copy_ring). */
static int setup_pads(dagger_task_t *t, const dg_st_sweep_hdr_t *h, const unsigned char *blob,
                      size_t bytes, pads_t *pads, int ends)
{
    memset(pads, 0, sizeof(*pads));
    const dg_st_piece_param_t *pc = (const void *)(blob + h->pieces_off);
    if (h->fused && h->pieces_off + h->npieces * sizeof(*pc) > bytes)
        return -2;
    for (uint32_t x = 0; x < h->nexpr; x++) {
        dg_st_expr_param_t e;
        memcpy(&e, blob + sizeof(*h) + x * sizeof(e), sizeof(e));
        for (uint32_t i = 0; i < e.nin; i++) {
            int a = e.in[i].arg;
            if (!e.in[i].padded || a < 0 || a >= DAGGER_MAX_ARGS || pads->slot[a].data)
                continue;
            int rc = 0;
            if (!h->fused)
                pads->slot[a] = dagger_task_arg(t, a);
            else
                rc = build_pad(t, pads, a, e.in[i].halo, pc, h->npieces, ends);
            if (rc)
                return rc;
        }
    }
    return 0;
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

static double apply(dagger_op_t a, double cur, double v)
{
    switch (a) {
    case DAGGER_OP_ADD: return cur + v;
    case DAGGER_OP_SUB: return cur - v;
    case DAGGER_OP_MUL: return cur * v;
    case DAGGER_OP_DIV: return cur / v;
    default: return v;
    }
}

/* out (assign)= v over a line. Floating-point lines are plain loops;
 * integers go through dg_arr_store, which saturates. */
static void store_line(dagger_dtype_t t, dagger_op_t a, void *p, size_t n, const double *v)
{
    if (t == DAGGER_F64 || t == DAGGER_F32) {
        TYPED(t, T, T *o = p;
              switch (a) {
              case DAGGER_OP_SET: for (size_t i = 0; i < n; i++) o[i] = (T)v[i]; break;
              case DAGGER_OP_ADD: for (size_t i = 0; i < n; i++) o[i] = (T)(o[i] + v[i]); break;
              case DAGGER_OP_SUB: for (size_t i = 0; i < n; i++) o[i] = (T)(o[i] - v[i]); break;
              case DAGGER_OP_MUL: for (size_t i = 0; i < n; i++) o[i] = (T)(o[i] * v[i]); break;
              default: for (size_t i = 0; i < n; i++) o[i] = (T)(o[i] / v[i]); break;
              })
        return;
    }
    size_t es = dagger_dtype_size(t);
    for (size_t i = 0; i < n; i++) {
        char *q = (char *)p + i * es;
        dg_arr_store(t, q, a == DAGGER_OP_SET ? v[i] : apply(a, dg_arr_load(t, q), v[i]));
    }
}

/* What one input contributes: where the block's element 0 is in its padded
 * buffer (or, without a window, in the block) and in the block itself, read
 * in place by a fused sweep away from the block's edges. */
typedef struct win_src {
    const char *pad, *own;
    size_t ps[DAGGER_MAX_DIMS], os[DAGGER_MAX_DIMS];   /* their strides */
    dagger_dtype_t dtype;
    size_t es;
} win_src_t;

typedef struct sweep_ctx {
    const dg_st_sweep_hdr_t *h;
    const dg_st_expr_param_t *e;
    dagger_stencil_fn fn;
    const void *args;
    dagger_window_t w[DAGGER_STENCIL_MAX_IN];
    win_src_t src[DAGGER_STENCIL_MAX_IN];
    size_t m[DAGGER_MAX_DIMS];               /* the widest window: lines this far from the
                                                edges read the block in place (fused) */
    double *v;                               /* a line's values (unless written directly) */
    double *l;                               /* the element-wise operand's line (lhs_op) */
} sweep_ctx_t;

/* Input i's element (i0, i1, i2, i3) of the block, in place or padded; the
 * window's strides follow. */
static const char *elem(sweep_ctx_t *c, int i, int own, const size_t i_[DAGGER_MAX_DIMS])
{
    const win_src_t *s = &c->src[i];
    const size_t *st = own ? s->os : s->ps;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        c->w[i].stride[k] = (ptrdiff_t)st[k];
    return (own ? s->own : s->pad) +
           (i_[0] * st[0] + i_[1] * st[1] + i_[2] * st[2] + i_[3] * st[3]) * s->es;
}

/* v[i] = the sum over the rows r of x_r[i - d .. i + d]: all the window's
 * lines in one pass (the 3 x 3 case of 2-D unrolled, the common one). */
#define MAX_ROWS 81 /* window rows listed on the stack; wider windows allocate the list */

DG_SIMD_CLONES static void sum_rows(dagger_dtype_t t, const char *const *rows, size_t nrows,
                                    ptrdiff_t d, size_t n, double *v)
{
    TYPED(t, T,
          if (nrows == 3 && d == 1) {
              /* restrict: the output line is never an input row (a window
               * over an array the sweep writes reads a padded copy). */
              const T *restrict a = (const T *)(const void *)rows[0];
              const T *restrict b = (const T *)(const void *)rows[1];
              const T *restrict c = (const T *)(const void *)rows[2];
              double *restrict o = v;
              for (ptrdiff_t i = 0; i < (ptrdiff_t)n; i++)
                  o[i] = (double)a[i - 1] + (double)a[i] + (double)a[i + 1] + (double)b[i - 1] +
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

/* Four doubles at any alignment (GCC's and clang's vector extension; two
 * SSE2 halves in the default clone). Each lane adds in the scalar order,
 * so its sums have the scalar sums' bits. */
typedef double v4d_t __attribute__((vector_size(32)));

/* (No function takes or returns a v4d_t: outside the AVX2 clone that would
 * be an ABI of its own.) */
static inline __attribute__((always_inline)) void sum3_f64_4(const double *a, const double *b,
                                                              const double *c, double *o)
{
#define LOAD4(v, p) memcpy(&(v), (p), sizeof(v))
    v4d_t a0, a1, a2, b0, b1, b2, c0, c1, c2;
    LOAD4(a0, a - 1), LOAD4(a1, a), LOAD4(a2, a + 1);
    LOAD4(b0, b - 1), LOAD4(b1, b), LOAD4(b2, b + 1);
    LOAD4(c0, c - 1), LOAD4(c1, c), LOAD4(c2, c + 1);
#undef LOAD4
    v4d_t s = a0 + a1 + a2 + b0 + b1 + b2 + c0 + c1 + c2;
    memcpy(o, &s, sizeof(s));
}

/* The 3 x 3 window over doubles for n elements of each of nlines lines:
 * line l's centre row at in + l is, its output at out + l os (strides in
 * elements). The same sums in the same order as sum_rows' 3 x 3 case (the
 * same bits), with the line loop inside the clone: at block 128 a sum_rows
 * call per line cost about a sixth of the line's sums in call, dispatch and
 * loop set-up.
 * Written with vectors rather than left to the vectorizer, whose per-line
 * overlap checks and scalar tail cost about a ninth of a 126-sum line:
 * the line's last four sums are one more vector, overlapping the one
 * before (the output is never an input row, so a sum written twice is
 * the same bits). */
DG_SIMD_CLONES static void sum3_f64_lines(const double *in, ptrdiff_t is, double *out, ptrdiff_t os,
                                          size_t nlines, size_t n)
{
    for (size_t l = 0; l < nlines; l++, in += is, out += os) {
        const double *a = in - is, *b = in, *c = in + is;
        if (n < 4) {
            for (ptrdiff_t i = 0; i < (ptrdiff_t)n; i++)
                out[i] = a[i - 1] + a[i] + a[i + 1] + b[i - 1] + b[i] + b[i + 1] + c[i - 1] + c[i] +
                         c[i + 1];
            continue;
        }
        size_t i = 0;
        for (; i + 4 <= n; i += 4)
            sum3_f64_4(a + i, b + i, c + i, out + i);
        if (i < n)
            sum3_f64_4(a + n - 4, b + n - 4, c + n - 4, out + n - 4);
    }
}

/* The 2-D window of 3 rows (the common case, and called per line segment):
 * the rows without the general listing. */
static void window_sum3(const sweep_ctx_t *c, const char *centre, size_t n, double *v)
{
    const dagger_window_t *w = &c->w[0];
    ptrdiff_t step = w->stride[1] * (ptrdiff_t)c->src[0].es;
    const char *r3[3] = {centre - step, centre, centre + step};
    sum_rows(w->dtype, r3, 3, (ptrdiff_t)w->dist[0], n, v);
}

/* The sum of input 0's window for every element of a line. */
static int window_sum_line(sweep_ctx_t *c, const char *centre, size_t n, double *v)
{
    const dagger_window_t *w = &c->w[0];
    ptrdiff_t d[DAGGER_MAX_DIMS], es = (ptrdiff_t)c->src[0].es;
    size_t nrows = 1;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        d[k] = (ptrdiff_t)w->dist[k];
        nrows *= k ? (size_t)(2 * d[k] + 1) : 1;
    }
    const char *stack[MAX_ROWS] = {0}, **rows = nrows <= MAX_ROWS ? stack : dg_calloc(nrows, sizeof(*rows));
    if (!rows)
        return -1;
    size_t r = 0;
    for (ptrdiff_t o3 = -d[3]; o3 <= d[3]; o3++)
        for (ptrdiff_t o2 = -d[2]; o2 <= d[2]; o2++)
            for (ptrdiff_t o1 = -d[1]; o1 <= d[1]; o1++)
                rows[r++] = centre + (o1 * w->stride[1] + o2 * w->stride[2] + o3 * w->stride[3]) * es;
    sum_rows(w->dtype, rows, nrows, d[0], n, v);
    if (rows != stack)
        free(rows);
    return 0;
}

/* The expression's values for n elements of a line from i_ on into v,
 * reading the inputs in place (own) or from their padded buffers; -1 when
 * out of memory. */
static int eval_seg(sweep_ctx_t *c, const size_t i_[DAGGER_MAX_DIMS], size_t n, int own, double *v)
{
    const dg_st_expr_param_t *e = c->e;
    const char *pi[DAGGER_STENCIL_MAX_IN];
    for (uint32_t i = 0; i < e->nin; i++)
        pi[i] = elem(c, (int)i, own, i_);
    switch (e->kernel) {
    case DG_ST_CONST:
        for (size_t i = 0; i < n; i++)
            v[i] = e->value;
        return 0;
    case DG_ST_COPY:
        load_line(c->w[0].dtype, pi[0], n, v);
        return 0;
    case DG_ST_SUM:
        if (c->w[0].dist[1] == 1 && !c->w[0].dist[2] && !c->w[0].dist[3]) {
            window_sum3(c, pi[0], n, v);
            return 0;
        }
        return window_sum_line(c, pi[0], n, v);
    default:
        break;
    }
    size_t idx[DAGGER_MAX_DIMS];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        idx[k] = c->h->off[k] + i_[k];
    for (size_t i0 = 0; i0 < n; i0++, idx[0]++) {
        for (uint32_t i = 0; i < e->nin; i++)
            c->w[i].data = pi[i] + i0 * (size_t)c->w[i].stride[0] * c->src[i].es;
        v[i0] = c->fn(c->w, (int)e->nin, idx, c->args);
    }
    return 0;
}

/* 1 when every window of the line (i1, i2, i3) stays inside the block along
 * dimensions 1..3 (a fused sweep then reads its middle in place). */
static int inner_line(const sweep_ctx_t *c, const size_t i_[], const size_t ext[])
{
    if (!c->h->fused)
        return 0;
    for (int k = 1; k < DAGGER_MAX_DIMS; k++)
        if (i_[k] < c->m[k] || i_[k] + c->m[k] >= ext[k])
            return 0;
    return 1;
}

/* The line's values into v: the edges from the padded buffers, the middle
 * in place where the line allows. */
static int eval_line(sweep_ctx_t *c, size_t i_[DAGGER_MAX_DIMS], const size_t ext[], double *v)
{
    size_t n = ext[0], m0 = c->m[0];
    i_[0] = 0;
    if (!inner_line(c, i_, ext) || n <= 2 * m0)
        return eval_seg(c, i_, n, 0, v);
    int rc = m0 ? eval_seg(c, i_, m0, 0, v) : 0;
    i_[0] = m0;
    rc |= eval_seg(c, i_, n - 2 * m0, 1, v + m0);
    i_[0] = n - m0;
    rc |= m0 ? eval_seg(c, i_, m0, 0, v + n - m0) : 0;
    i_[0] = 0;
    return rc;
}

/* 1 when the expression is a window sum of one input over 3 rows of a 2-D
 * window (the common stencil) whose double output it sets alone: sum3_direct
 * runs it. */
static int sum3_case(const sweep_ctx_t *c, int direct)
{
    const dg_st_expr_param_t *e = c->e;
    const dagger_window_t *w = &c->w[0];
    return direct && e->kernel == DG_ST_SUM && e->nin == 1 && !e->lhs_op && w->dist[1] == 1 &&
           !w->dist[2] && !w->dist[3];
}

/* Which part of the block a sweep of sum3_case covers: all of it, only the
 * middles of the inner lines (read in place: no padded buffer needed yet),
 * or the rest (the edge lines and the line ends, from the padded buffer). */
enum { SWEEP_ALL, SWEEP_INNER, SWEEP_EDGES };

/* Lines of sum3_f64_lines a call (the halo strips' prefetches are spread
 * over the calls). 8 saved 8 % of a 128 x 128 task's instructions, but
 * the prefetches, bunched, made bench_stencil_sweep's block-128 sweeps
 * 10-20 % slower (2026-12-07); 1 ran as fast as 2. */
#define SUM3_CHUNK 2

/* The inner lines lo1 .. hi1 - 1 of one plane (i_[2], i_[3]) of a fused
 * 3 x 3 sum over doubles (window distance 1 along dimension 0), written
 * straight into the output: their middles by sum3_f64_lines, in place
 * (part != SWEEP_EDGES), and their two ends (part != SWEEP_INNER), each end
 * reading the column beyond the block from the padded buffer and the
 * block's own two columns in place, in sum_rows' order (the same bits).
 * So the padded buffer needs no copy of the inner rows' ends (copy_ring's
 * ends 0). */
static void sum3_f64_plane(const sweep_ctx_t *c, const dagger_slot_t *o, const size_t i_[],
                           size_t lo1, size_t hi1, size_t n, int part, strip_prefetch_t *pf)
{
    const win_src_t *s = &c->src[0];
    size_t lines = hi1 - lo1;
    ptrdiff_t ostep = (ptrdiff_t)o->strides[1], wstep = (ptrdiff_t)s->os[1];
    double *po = (double *)o->data + lo1 * o->strides[1] + i_[2] * o->strides[2] +
                 i_[3] * o->strides[3];
    const double *w = (const double *)(const void *)s->own + lo1 * s->os[1] + i_[2] * s->os[2] +
                      i_[3] * s->os[3];
    if (part != SWEEP_EDGES)
        for (size_t l = 0; l < lines; l += SUM3_CHUNK) {
            size_t k = lines - l < SUM3_CHUNK ? lines - l : SUM3_CHUNK;
            sum3_f64_lines(w + (ptrdiff_t)l * wstep + 1, wstep, po + (ptrdiff_t)l * ostep + 1, ostep, k,
                           n - 2);
            if (pf)
                prefetch_rows(pf);
        }
    if (part == SWEEP_INNER)
        return;
    ptrdiff_t pstep = (ptrdiff_t)s->ps[1];
    const double *p = (const double *)(const void *)s->pad + lo1 * s->ps[1] + i_[2] * s->ps[2] +
                      i_[3] * s->ps[3];
    size_t z = n - 1;
    for (size_t l = 0; l < lines; l++, po += ostep, w += wstep, p += pstep) {
        const double *a = w - wstep, *b = w, *e = w + wstep;
        const double *pa = p - pstep, *pb = p, *pe = p + pstep;
        po[0] = pa[-1] + a[0] + a[1] + pb[-1] + b[0] + b[1] + pe[-1] + e[0] + e[1];
        po[z] = a[z - 1] + a[z] + pa[z + 1] + b[z - 1] + b[z] + pb[z + 1] + e[z - 1] + e[z] + pe[z + 1];
    }
}

/* 1 when sum3_direct runs a fused sweep's inner lines by sum3_f64_plane
 * (doubles in, window distance 1 along dimension 0): their ends are read
 * in place, and the padded buffer needs no copy of them. */
static int sum3_f64_case(const sweep_ctx_t *c)
{
    return c->h->fused && c->src[0].dtype == DAGGER_F64 && c->w[0].dist[0] == 1 && c->m[0] == 1;
}

/* eval_line's work for sum3_case, written straight into the output: each
 * line's rows found by arithmetic, the middle of an inner line read in
 * place and the m0 elements at either end from the padded buffer, without
 * eval_seg's per-segment set-up (at block 128 that set-up cost a quarter of
 * the sum itself: two edge segments per line); a plane's inner lines over
 * doubles by sum3_f64_plane. pf (SWEEP_INNER): the halo strips to ask for,
 * a few rows at a time. */
static void sum3_direct(const sweep_ctx_t *c, const dagger_slot_t *o, const size_t ext[], int part,
                        strip_prefetch_t *pf)
{
    const win_src_t *s = &c->src[0];
    size_t n = ext[0], m0 = c->m[0], i_[DAGGER_MAX_DIMS] = {0};
    ptrdiff_t d = (ptrdiff_t)c->w[0].dist[0], es = (ptrdiff_t)s->es;
    ptrdiff_t pstep = (ptrdiff_t)s->ps[1] * es, ostep = (ptrdiff_t)s->os[1] * es;
    int f64 = sum3_f64_case(c);
    /* inner_line's test, its dimensions 2 and 3 hoisted out of the lines. */
    size_t lo1 = c->m[1], hi1 = ext[1] > c->m[1] ? ext[1] - c->m[1] : 0;
    for (i_[3] = 0; i_[3] < ext[3]; i_[3]++)
        for (i_[2] = 0; i_[2] < ext[2]; i_[2]++) {
            i_[1] = lo1;
            int inner23 = lo1 < hi1 && inner_line(c, i_, ext) && n > 2 * m0;
            if (inner23 && f64)
                sum3_f64_plane(c, o, i_, lo1, hi1, n, part, pf);
            for (i_[1] = 0; i_[1] < ext[1]; i_[1]++) {
                int inner = inner23 && i_[1] >= lo1 && i_[1] < hi1;
                if (inner && f64) {
                    i_[1] = hi1 - 1; /* done by sum3_f64_plane */
                    continue;
                }
                double *po = (double *)(void *)((char *)o->data +
                                                (i_[1] * o->strides[1] + i_[2] * o->strides[2] +
                                                 i_[3] * o->strides[3]) * sizeof(double));
                if (inner && part != SWEEP_EDGES) {
                    const char *q = s->own + (m0 * s->os[0] + i_[1] * s->os[1] +
                                              i_[2] * s->os[2] + i_[3] * s->os[3]) * s->es;
                    const char *qr[3] = {q - ostep, q, q + ostep};
                    sum_rows(s->dtype, qr, 3, d, n - 2 * m0, po + m0);
                    if (pf)
                        prefetch_rows(pf);
                }
                if (part == SWEEP_INNER || (inner && !m0))
                    continue;
                const char *p = s->pad + (i_[1] * s->ps[1] + i_[2] * s->ps[2] + i_[3] * s->ps[3]) * s->es;
                const char *pr[3] = {p - pstep, p, p + pstep};
                if (!inner) {
                    sum_rows(s->dtype, pr, 3, d, n, po);
                    continue;
                }
                ptrdiff_t back = (ptrdiff_t)(n - m0) * es;
                sum_rows(s->dtype, pr, 3, d, m0, po);
                const char *pe[3] = {pr[0] + back, pr[1] + back, pr[2] + back};
                sum_rows(s->dtype, pe, 3, d, m0, po + n - m0);
            }
        }
}

/* v = lhs op v over the line: the fused element-wise operation. */
static void combine_lhs(sweep_ctx_t *c, const size_t i_[], size_t n, double *v)
{
    int i = (int)c->e->nin;
    load_line(c->src[i].dtype, elem(c, i, 1, i_), n, c->l);
    double *l = c->l;
    switch (c->e->lhs_op) {
    case DAGGER_OP_ADD: for (size_t j = 0; j < n; j++) v[j] = l[j] + v[j]; break;
    case DAGGER_OP_SUB: for (size_t j = 0; j < n; j++) v[j] = l[j] - v[j]; break;
    case DAGGER_OP_MUL: for (size_t j = 0; j < n; j++) v[j] = l[j] * v[j]; break;
    default: for (size_t j = 0; j < n; j++) v[j] = l[j] / v[j]; break;
    }
}

/* Sets up the windows of the expression's inputs and the in-place margin. */
static void setup_inputs(dagger_task_t *t, sweep_ctx_t *c, const pads_t *pads)
{
    const dg_st_expr_param_t *e = c->e;
    memset(c->m, 0, sizeof(c->m));
    for (uint32_t i = 0; i < e->nin + (e->lhs_op != 0); i++) {
        const dg_st_in_param_t *in = &e->in[i];
        win_src_t *s = &c->src[i];
        dagger_slot_t a = dagger_task_arg(t, in->arg);
        dagger_slot_t p = in->padded && in->arg >= 0 && in->arg < DAGGER_MAX_ARGS ? pads->slot[in->arg] : a;
        int unbuilt = !p.data; /* a padded buffer not built yet (SWEEP_INNER) */
        if (unbuilt)
            p = a;
        if (!c->h->fused)
            a = p; /* the padded chunk is the argument: no in-place reads */
        s->dtype = a.dtype;
        s->es = dagger_dtype_size(a.dtype);
        size_t centre = 0;
        for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
            centre += (in->padded ? in->halo[k] : 0) * p.strides[k];
            s->ps[k] = p.strides[k];
            s->os[k] = a.strides[k];
            if (in->padded && i < e->nin && in->dist[k] > c->m[k])
                c->m[k] = in->dist[k];
        }
        s->pad = unbuilt || !p.data ? NULL : (const char *)p.data + centre * s->es;
        s->own = c->h->fused ? (const char *)a.data : s->pad;
        memset(&c->w[i], 0, sizeof(c->w[i]));
        c->w[i].dtype = a.dtype;
        c->w[i].ndims = (int)c->h->ndims;
        for (int k = 0; k < DAGGER_MAX_DIMS; k++)
            c->w[i].dist[k] = in->dist[k];
    }
}

/* Runs one expression over the block, or the part of it part names (a
 * split runs only for sum3_case: otherwise SWEEP_INNER returns 1 having done
 * nothing; own_ends, when not NULL, is set to 1 when the inner lines' ends
 * are read in place, sum3_f64_case). A double output set by the expression
 * alone is written directly, without the line buffer. */
static int run_expr(dagger_task_t *t, const dg_st_sweep_hdr_t *h, const dg_st_expr_param_t *e,
                    const unsigned char *blob, const pads_t *pads, int part, strip_prefetch_t *pf,
                    int *own_ends)
{
    sweep_ctx_t c = {.h = h, .e = e, .args = e->args_len ? blob + e->args_off : NULL};
    if (e->kernel > DG_ST_SUM &&
        !(c.fn = (dagger_stencil_fn)dg_arr_fn_find(DG_ARR_FN_STENCIL, e->kernel)))
        return dagger_task_fail(t, "stencil kernel %u is not registered on this rank", e->kernel);
    dagger_slot_t o = dagger_task_arg(t, (int)e->out_arg);
    size_t oes = dagger_dtype_size(o.dtype), ext[DAGGER_MAX_DIMS];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        ext[k] = k < o.ndims ? o.dims[k] : 1;
    int direct = o.dtype == DAGGER_F64 && e->assign == DAGGER_OP_SET && !e->lhs_op &&
                 o.strides[0] == 1;
    setup_inputs(t, &c, pads);
    if (sum3_case(&c, direct)) {
        if (own_ends)
            *own_ends = sum3_f64_case(&c);
        sum3_direct(&c, &o, ext, part, pf);
        return DAGGER_OK;
    }
    if (part == SWEEP_INNER)
        return 1;
    c.v = dg_malloc(2 * ext[0] * sizeof(double));
    if (!c.v)
        return dagger_task_fail(t, "out of memory for a line of %zu values", ext[0]);
    c.l = c.v + ext[0];
    size_t i_[DAGGER_MAX_DIMS] = {0};
    for (i_[3] = 0; i_[3] < ext[3]; i_[3]++)
        for (i_[2] = 0; i_[2] < ext[2]; i_[2]++)
            for (i_[1] = 0; i_[1] < ext[1]; i_[1]++) {
                char *po = (char *)o.data +
                           (i_[1] * o.strides[1] + i_[2] * o.strides[2] + i_[3] * o.strides[3]) * oes;
                double *v = direct ? (double *)(void *)po : c.v;
                if (eval_line(&c, i_, ext, v)) {
                    free(c.v);
                    return dagger_task_fail(t, "out of memory for a window's rows");
                }
                if (e->lhs_op)
                    combine_lhs(&c, i_, ext[0], v);
                if (!direct)
                    store_line(o.dtype, (dagger_op_t)e->assign, po, ext[0], v);
            }
    free(c.v);
    return DAGGER_OK;
}

const unsigned char *dg_st_sweep_params(dagger_task_t *t, dg_st_sweep_hdr_t *h, size_t *bytes)
{
    int nargs = dagger_task_nargs(t);
    dagger_slot_t v = dagger_task_arg(t, nargs - 1);
    const unsigned char *blob = v.data;
    if (nargs >= 2 && blob && v.bytes >= sizeof(*h)) {
        memcpy(h, blob, sizeof(*h));
        *bytes = v.bytes;
        if (h->nexpr <= (v.bytes - sizeof(*h)) / sizeof(dg_st_expr_param_t) &&
            (!h->fused || (h->pieces_off <= v.bytes &&
                           h->npieces <= (v.bytes - h->pieces_off) / sizeof(dg_st_piece_param_t))))
            return blob;
    }
    dagger_task_fail(t, "malformed stencil parameters");
    return NULL;
}

int dg_arr_sweep_impl(dagger_task_t *t)
{
    dg_st_sweep_hdr_t h;
    size_t bytes;
    const unsigned char *blob = dg_st_sweep_params(t, &h, &bytes);
    if (!blob)
        return DAGGER_ERR_TASK_FAILED;
    const dg_st_piece_param_t *pc = (const void *)(blob + h.pieces_off);
    pads_t pads;
    memset(&pads, 0, sizeof(pads));
    int rc = DAGGER_OK, part = SWEEP_ALL, own_ends = 0;
    if (h.fused && h.nexpr == 1) {
        /* One expression, fused: its block's interior first, asking for the
         * halo strips meanwhile; then the frame, from memory now in cache. */
        dg_st_expr_param_t e;
        memcpy(&e, blob + sizeof(h), sizeof(e));
        dagger_slot_t o = dagger_task_arg(t, (int)e.out_arg);
        strip_prefetch_t pf;
        size_t lines = o.ndims > 1 ? o.dims[1] : 1;
        prefetch_init(&pf, t, pc, h.npieces, (lines + SUM3_CHUNK - 1) / SUM3_CHUNK);
        rc = run_expr(t, &h, &e, blob, &pads, SWEEP_INNER, &pf, &own_ends);
        if (rc == DAGGER_OK)
            part = SWEEP_EDGES;
        else if (rc != 1)
            return rc;
    }
    /* The inner rows' ends go into the padded buffer unless the edges'
     * pass reads them in place. */
    rc = setup_pads(t, &h, blob, bytes, &pads, !(part == SWEEP_EDGES && own_ends));
    if (rc) {
        free_pads(&pads);
        return rc == -1 ? dagger_task_fail(t, "out of memory for a block's padded frame")
                        : dagger_task_fail(t, "malformed stencil parameters");
    }
    for (uint32_t x = 0; x < h.nexpr && rc == DAGGER_OK; x++) {
        dg_st_expr_param_t e;
        memcpy(&e, blob + sizeof(h) + x * sizeof(e), sizeof(e));
        rc = run_expr(t, &h, &e, blob, &pads, part, NULL, NULL);
    }
    free_pads(&pads);
    return rc;
}
