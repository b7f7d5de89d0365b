/* Reduction codelets: the partial result of one tile (elements in
 * column-major order, four interleaved sums per line for speed; the order
 * is fixed, so results are reproducible), and the combination of two. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/array/array_internal.h"
#include "core/array/params.h"

typedef struct acc {
    double d;
    uint64_t i;     /* integer sums wrap: they run unsigned */
    int64_t imin, imax;
    int nan;
} acc_t;

/* Float sums over a line: four interleaved partial sums. */
#define FSUM(EXPR)                                                            \
    do {                                                                      \
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                \
        size_t i = 0;                                                         \
        for (; i + 4 <= n; i += 4) {                                          \
            s0 += EXPR(i);                                                    \
            s1 += EXPR(i + 1);                                                \
            s2 += EXPR(i + 2);                                                \
            s3 += EXPR(i + 3);                                                \
        }                                                                     \
        for (; i < n; i++)                                                    \
            s0 += EXPR(i);                                                    \
        a->d += (s0 + s1) + (s2 + s3);                                        \
    } while (0)

#define X_(i) ((double)x[i])
#define XY_(i) ((double)x[i] * (double)y[i])

#define RED_LINE(T, SUF, ISINT)                                                            \
    static void line_##SUF(int kind, size_t n, const T *x, const T *y, acc_t *a)           \
    {                                                                                      \
        switch (kind) {                                                                    \
        case DG_RED_SUM:                                                                   \
            if (ISINT)                                                                     \
                for (size_t i = 0; i < n; i++)                                             \
                    a->i += (uint64_t)(int64_t)x[i];                                       \
            else                                                                           \
                FSUM(X_);                                                                  \
            break;                                                                         \
        case DG_RED_DOT:                                                                   \
            if (ISINT)                                                                     \
                for (size_t i = 0; i < n; i++)                                             \
                    a->i += (uint64_t)(int64_t)x[i] * (uint64_t)(int64_t)y[i];             \
            else                                                                           \
                FSUM(XY_);                                                                 \
            break;                                                                         \
        default: /* MIN, MAX */                                                            \
            for (size_t i = 0; i < n; i++) {                                               \
                if (ISINT) {                                                               \
                    int64_t v = (int64_t)x[i];                                             \
                    a->imin = v < a->imin ? v : a->imin;                                   \
                    a->imax = v > a->imax ? v : a->imax;                                   \
                } else if (x[i] != x[i]) {                                                 \
                    a->nan = 1;                                                            \
                } else {                                                                   \
                    double v = (double)x[i];                                               \
                    a->d = kind == DG_RED_MIN ? (v < a->d ? v : a->d) : (v > a->d ? v : a->d); \
                }                                                                          \
            }                                                                              \
            break;                                                                         \
        }                                                                                  \
    }

RED_LINE(float, f32, 0)
RED_LINE(double, f64, 0)
RED_LINE(int32_t, i32, 1)
RED_LINE(int64_t, i64, 1)

static void line(dagger_dtype_t t, int kind, size_t n, const void *x, const void *y, acc_t *a)
{
    switch (t) {
    case DAGGER_F32: line_f32(kind, n, x, y, a); break;
    case DAGGER_F64: line_f64(kind, n, x, y, a); break;
    case DAGGER_I32: line_i32(kind, n, x, y, a); break;
    default: line_i64(kind, n, x, y, a); break;
    }
}

void dg_arr_for_lines(const dagger_slot_t *x, const dagger_slot_t *y, dg_arr_line_fn fn, void *ctx)
{
    size_t es = dagger_dtype_size(x->dtype), ext[DAGGER_MAX_DIMS];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        ext[k] = k < x->ndims ? x->dims[k] : 1;
    if (dg_arr_slot_dense(x) && dg_arr_slot_dense(y)) {
        ext[0] = x->count; /* one line: the order of the elements is unchanged */
        ext[1] = ext[2] = ext[3] = 1;
    }
    for (size_t i3 = 0; i3 < ext[3]; i3++)
        for (size_t i2 = 0; i2 < ext[2]; i2++)
            for (size_t i1 = 0; i1 < ext[1]; i1++) {
                const char *px = (const char *)x->data +
                                 (i1 * x->strides[1] + i2 * x->strides[2] + i3 * x->strides[3]) * es;
                const char *py = (const char *)y->data +
                                 (i1 * y->strides[1] + i2 * y->strides[2] + i3 * y->strides[3]) * es;
                fn(ext[0], px, py, ctx);
            }
}

typedef struct partial_ctx {
    dagger_dtype_t t;
    int kind;
    acc_t a;
} partial_ctx_t;

static void partial_line(size_t n, const char *px, const char *py, void *ctx)
{
    partial_ctx_t *c = ctx;
    line(c->t, c->kind, n, px, py, &c->a);
}

/* The parameters (the last argument) in p, and the one or two operands
 * before them (y = x when there is one); -1 when malformed, else the
 * number of operands. */
static int red_args(dagger_task_t *t, dg_arr_red_t *p, dagger_slot_t *x, dagger_slot_t *y)
{
    int nargs = dagger_task_nargs(t);
    if (nargs < 2 || dg_arr_param(t, nargs - 1, p, sizeof(*p)))
        return -1;
    *x = dagger_task_arg(t, 0);
    *y = nargs > 2 ? dagger_task_arg(t, 1) : *x;
    return nargs - 1;
}

int dg_arr_partial_impl(dagger_task_t *t)
{
    dg_arr_red_t p;
    dagger_slot_t x, y;
    if (red_args(t, &p, &x, &y) < 0)
        return dagger_task_fail(t, "malformed reduction parameters");
    int is_int = x.dtype == DAGGER_I32 || x.dtype == DAGGER_I64;
    partial_ctx_t c = {.t = x.dtype, .kind = (int)p.kind,
                       .a = {.d = p.kind == DG_RED_MIN ? INFINITY : p.kind == DG_RED_MAX ? -INFINITY : 0,
                             .imin = INT64_MAX, .imax = INT64_MIN}};
    dg_arr_for_lines(&x, &y, partial_line, &c);
    acc_t a = c.a;
    unsigned char out[8];
    if (is_int) {
        int64_t v = p.kind == DG_RED_MIN ? a.imin : p.kind == DG_RED_MAX ? a.imax : (int64_t)a.i;
        memcpy(out, &v, 8);
    } else {
        double v = a.nan ? NAN : a.d;
        memcpy(out, &v, 8);
    }
    return dagger_task_return(t, out, sizeof(out));
}

static double combine_f(int kind, double x, double y)
{
    if (kind != DG_RED_MIN && kind != DG_RED_MAX)
        return x + y;
    if (x != x || y != y)
        return NAN;
    return kind == DG_RED_MIN ? (y < x ? y : x) : (y > x ? y : x);
}

static int64_t combine_i(int kind, int64_t x, int64_t y)
{
    if (kind == DG_RED_MIN)
        return y < x ? y : x;
    if (kind == DG_RED_MAX)
        return y > x ? y : x;
    return (int64_t)((uint64_t)x + (uint64_t)y);
}

int dg_arr_combine_impl(dagger_task_t *t)
{
    dg_arr_red_t p;
    dagger_slot_t a, b;
    int nops = red_args(t, &p, &a, &b);
    if (nops < 0)
        return dagger_task_fail(t, "malformed reduction parameters");
    if (!a.data || !b.data || a.bytes != 8 || b.bytes != 8)
        return dagger_task_fail(t, "a partial result is not 8 bytes");
    unsigned char out[8];
    if (p.is_int) {
        int64_t x, y;
        memcpy(&x, a.data, 8);
        memcpy(&y, b.data, 8);
        int64_t v = nops > 1 ? combine_i((int)p.kind, x, y) : x;
        memcpy(out, &v, 8);
    } else {
        double x, y;
        memcpy(&x, a.data, 8);
        memcpy(&y, b.data, 8);
        double v = nops > 1 ? combine_f((int)p.kind, x, y) : x;
        memcpy(out, &v, 8);
    }
    return dagger_task_return(t, out, sizeof(out));
}
