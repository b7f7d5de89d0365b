/* The element-wise codelet: typed loops over the lines (dimension 0, which
 * is contiguous in every chunk) of one tile. Integer arithmetic goes through
 * the unsigned type so that overflow wraps instead of being undefined. */
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/array/array_internal.h"
#include "core/array/params.h"

static inline int32_t div_i32(int32_t a, int32_t b, int *bad)
{
    if (b == 0 || (b == -1 && a == INT32_MIN)) {
        *bad = 1;
        return 0;
    }
    return a / b;
}

static inline int64_t div_i64(int64_t a, int64_t b, int *bad)
{
    if (b == 0 || (b == -1 && a == INT64_MIN)) {
        *bad = 1;
        return 0;
    }
    return a / b;
}

#define div_f32(a, b, bad) ((a) / (b))
#define div_f64(a, b, bad) ((a) / (b))

/* One loop per form, so that each is a plain unit-stride loop. */
#define EW_FORMS(T, EXPR)                                                      \
    switch (p->form) {                                                         \
    case DG_EW_AB:                                                             \
        for (size_t i = 0; i < n; i++) {                                       \
            T a_ = x[i], b_ = y[i];                                            \
            o[i] = EXPR;                                                       \
        }                                                                      \
        break;                                                                 \
    case DG_EW_AS:                                                             \
        for (size_t i = 0; i < n; i++) {                                       \
            T a_ = x[i], b_ = s;                                               \
            o[i] = EXPR;                                                       \
        }                                                                      \
        break;                                                                 \
    default:                                                                   \
        for (size_t i = 0; i < n; i++) {                                       \
            T a_ = s, b_ = x[i];                                               \
            o[i] = EXPR;                                                       \
        }                                                                      \
        break;                                                                 \
    }

/* line_T: one line of n elements. Returns 1 on an integer division fault. */
#define EW_LINE(T, U, SUF)                                                                 \
    static int line_##SUF(const dg_arr_ew_t *p, size_t n, T *o, const T *x, const T *y, T s) \
    {                                                                                      \
        int bad = 0;                                                                       \
        switch (p->kind) {                                                                 \
        case DG_EW_FILL:                                                                   \
            for (size_t i = 0; i < n; i++)                                                 \
                o[i] = s;                                                                  \
            return 0;                                                                      \
        case DG_EW_COPY:                                                                   \
            if (o != x)                                                                    \
                memcpy(o, x, n * sizeof(T));                                               \
            return 0;                                                                      \
        default:                                                                           \
            break;                                                                         \
        }                                                                                  \
        switch (p->op) {                                                                   \
        case DAGGER_OP_ADD: EW_FORMS(T, (T)((U)a_ + (U)b_)) break;                          \
        case DAGGER_OP_SUB: EW_FORMS(T, (T)((U)a_ - (U)b_)) break;                          \
        case DAGGER_OP_MUL: EW_FORMS(T, (T)((U)a_ * (U)b_)) break;                          \
        default: EW_FORMS(T, div_##SUF(a_, b_, &bad)) break;                               \
        }                                                                                  \
        return bad;                                                                        \
    }

EW_LINE(float, float, f32)
EW_LINE(double, double, f64)
EW_LINE(int32_t, uint32_t, i32)
EW_LINE(int64_t, uint64_t, i64)

static int line(const dg_arr_ew_t *p, dagger_dtype_t t, size_t n, void *o, const void *x,
                const void *y)
{
    switch (t) {
    case DAGGER_F32: return line_f32(p, n, o, x, y, (float)p->s);
    case DAGGER_F64: return line_f64(p, n, o, x, y, p->s);
    case DAGGER_I32: return line_i32(p, n, o, x, y, (int32_t)p->s);
    case DAGGER_I64: return line_i64(p, n, o, x, y, (int64_t)p->s);
    default: return 1;
    }
}

/* Copies to dst with non-temporal stores where the alignment allows (the
 * caller fences before the task ends: such stores are weakly ordered). */
static void stream_copy(void *dst, const void *src, size_t bytes)
{
#if defined(__SSE2__)
    char *d = dst;
    const char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    head = head < bytes ? head : bytes;
    memcpy(d, s, head);
    d += head;
    s += head;
    bytes -= head;
    for (; bytes >= 16; bytes -= 16, d += 16, s += 16)
        _mm_stream_si128((__m128i *)(void *)d, _mm_loadu_si128((const __m128i *)(const void *)s));
    memcpy(d, s, bytes);
#else
    memcpy(dst, src, bytes);
#endif
}

static void stream_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/* A line computed in pieces into an L1-sized buffer, then streamed out. */
static int line_streamed(const dg_arr_ew_t *p, dagger_dtype_t t, size_t n, char *o, const char *x,
                         const char *y)
{
    double buf[512];
    size_t es = dagger_dtype_size(t), per = sizeof(buf) / es;
    for (size_t i = 0; i < n; i += per) {
        size_t m = n - i < per ? n - i : per;
        if (line(p, t, m, buf, x + i * es, y + i * es))
            return 1;
        stream_copy(o + i * es, buf, m * es);
    }
    return 0;
}

/* Element offset of line (i1, i2, i3) of a slot. */
static size_t line_off(const dagger_slot_t *s, size_t i1, size_t i2, size_t i3)
{
    return i1 * s->strides[1] + i2 * s->strides[2] + i3 * s->strides[3];
}

/* Transposes a 2-D tile in 32 x 32 squares (both sides stay in cache). */
#define TRANSPOSE(T)                                                                        \
    for (size_t jb = 0; jb < n1; jb += 32)                                                  \
        for (size_t ib = 0; ib < n0; ib += 32)                                              \
            for (size_t j = jb; j < n1 && j < jb + 32; j++)                                 \
                for (size_t i = ib; i < n0 && i < ib + 32; i++)                             \
                    ((T *)o.data)[i + j * o.strides[1]] = ((const T *)x.data)[j + i * x.strides[1]];

static void transpose(dagger_slot_t o, dagger_slot_t x)
{
    size_t n0 = o.dims[0], n1 = o.ndims > 1 ? o.dims[1] : 1;
    if (dagger_dtype_size(o.dtype) == 4) {
        TRANSPOSE(uint32_t)
    } else {
        TRANSPOSE(uint64_t)
    }
}

int dg_arr_ewise_impl(dagger_task_t *t)
{
    int nargs = dagger_task_nargs(t);
    dg_arr_ew_t p;
    if (nargs < 2 || dg_arr_param(t, nargs - 1, &p, sizeof(p)))
        return dagger_task_fail(t, "malformed element-wise parameters");
    dagger_slot_t o = dagger_task_arg(t, 0), in[2] = {o, o};
    for (uint32_t i = 0, next = 1; i < p.nin && i < 2; i++)
        in[i] = p.alias & (1u << i) ? o : dagger_task_arg(t, (int)next++);
    if (o.strides[0] != 1 || in[0].strides[0] != 1 || in[1].strides[0] != 1)
        return dagger_task_fail(t, "element-wise tiles must be contiguous along dimension 0");
    if (p.kind == DG_EW_TRANSPOSE) {
        transpose(o, in[0]);
        return DAGGER_OK;
    }
    size_t es = dagger_dtype_size(o.dtype), len = o.dims[0];
    size_t d1 = o.ndims > 1 ? o.dims[1] : 1, d2 = o.ndims > 2 ? o.dims[2] : 1;
    size_t d3 = o.ndims > 3 ? o.dims[3] : 1;
    if (dg_arr_slot_dense(&o) && dg_arr_slot_dense(&in[0]) && dg_arr_slot_dense(&in[1])) {
        len = o.count; /* whole blocks: one line, no per-column overhead */
        d1 = d2 = d3 = 1;
    }
    for (size_t i3 = 0; i3 < d3; i3++)
        for (size_t i2 = 0; i2 < d2; i2++)
            for (size_t i1 = 0; i1 < d1; i1++) {
                char *po = (char *)o.data + line_off(&o, i1, i2, i3) * es;
                const char *px = (const char *)in[0].data + line_off(&in[0], i1, i2, i3) * es;
                const char *py = (const char *)in[1].data + line_off(&in[1], i1, i2, i3) * es;
                int bad = p.stream ? line_streamed(&p, o.dtype, len, po, px, py)
                                   : line(&p, o.dtype, len, po, px, py);
                if (bad) {
                    stream_fence();
                    return dagger_task_fail(t, "integer division by zero (or of the smallest "
                                            "integer by -1) in an %s array",
                                            dg_arr_dtype_name(o.dtype));
                }
            }
    if (p.stream)
        stream_fence();
    return DAGGER_OK;
}
