/* The typed loops of reductions along one dimension (reduce_dim.h). A block
 * is walked line by line along dimension 0, where its elements are
 * contiguous: reducing along dimension 0, each line becomes one value;
 * along any other dimension, each line is added element by element into a
 * row of accumulators, which the compiler vectorizes. The accumulators are
 * plain arrays of doubles or 64-bit integers while the block is walked, and
 * go into the caller's dg_racc_t at the end. */
#include <math.h>
#include <stdlib.h>

#include "core/array/params.h"
#include "core/array/reduce_dim.h"
#include "core/base/alloc.h"

typedef struct lanes {
    double *d;          /* floats: SUM, MIN or MAX; NRM2's ordinary squares */
    double *sml, *big;  /* NRM2: the scaled squares of tiny and huge values (nrm2.h) */
    unsigned char *nan; /* floats, MIN and MAX: a NaN was seen */
    uint64_t *u;        /* integers: SUM (wraps) */
    int64_t *m;         /* integers: MIN or MAX */
} lanes_t;

/* Floats. A whole line's sum in four interleaved partial sums, as
 * dagger_array_reduce sums a line; MIN and MAX skip NaN (v < d is false)
 * and remember it; NRM2 adds each square as nrm2.h does, in index order. */
#define FLOAT_LINES(T, SUF)                                                                  \
    static void whole_##SUF(uint32_t kind, const T *p, size_t n, lanes_t *l, size_t c)      \
    {                                                                                        \
        if (kind == DG_RED_NRM2) {                                                           \
            dg_nrm2_t a = {l->sml[c], l->d[c], l->big[c]};                                   \
            for (size_t i = 0; i < n; i++)                                                   \
                dg_nrm2_add(&a, (double)p[i]);                                               \
            l->sml[c] = a.sml, l->d[c] = a.med, l->big[c] = a.big;                           \
            return;                                                                          \
        }                                                                                    \
        if (kind == DG_RED_SUM) {                                                            \
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                           \
            size_t i = 0;                                                                    \
            for (; i + 4 <= n; i += 4) {                                                     \
                s0 += (double)p[i];                                                          \
                s1 += (double)p[i + 1];                                                      \
                s2 += (double)p[i + 2];                                                      \
                s3 += (double)p[i + 3];                                                      \
            }                                                                                \
            for (; i < n; i++)                                                               \
                s0 += (double)p[i];                                                          \
            l->d[c] += (s0 + s1) + (s2 + s3);                                                \
            return;                                                                          \
        }                                                                                    \
        double d = l->d[c];                                                                  \
        int nan = 0;                                                                         \
        for (size_t i = 0; i < n; i++) {                                                     \
            double v = (double)p[i];                                                         \
            nan |= v != v;                                                                   \
            d = kind == DG_RED_MIN ? (v < d ? v : d) : (v > d ? v : d);                      \
        }                                                                                    \
        l->d[c] = d;                                                                         \
        l->nan[c] |= (unsigned char)nan;                                                     \
    }                                                                                        \
    static void row_##SUF(uint32_t kind, const T *restrict p, size_t n, lanes_t *l,        \
                          size_t c0)                                                         \
    {                                                                                        \
        double *restrict d = l->d + c0;                                                      \
        if (kind == DG_RED_SUM) {                                                            \
            for (size_t i = 0; i < n; i++)                                                   \
                d[i] += (double)p[i];                                                        \
            return;                                                                          \
        }                                                                                    \
        if (kind == DG_RED_NRM2) { /* dg_nrm2_add, element by element */                     \
            double *restrict sml = l->sml + c0, *restrict big = l->big + c0;                 \
            for (size_t i = 0; i < n; i++) {                                                 \
                double x = (double)p[i], ax = fabs(x);                                       \
                if (ax > DG_NRM2_TBIG)                                                       \
                    big[i] += (ax * DG_NRM2_SBIG) * (ax * DG_NRM2_SBIG);                     \
                else if (ax < DG_NRM2_TSML)                                                  \
                    sml[i] += (ax * DG_NRM2_SSML) * (ax * DG_NRM2_SSML);                     \
                else                                                                         \
                    d[i] += x * x;                                                           \
            }                                                                                \
            return;                                                                          \
        }                                                                                    \
        unsigned char *restrict nan = l->nan + c0;                                           \
        for (size_t i = 0; i < n; i++) {                                                     \
            double v = (double)p[i];                                                         \
            nan[i] |= (unsigned char)(v != v);                                               \
            if (kind == DG_RED_MIN)                                                          \
                d[i] = v < d[i] ? v : d[i];                                                  \
            else                                                                             \
                d[i] = v > d[i] ? v : d[i];                                                  \
        }                                                                                    \
    }

/* Integers: sums wrap around (computed unsigned), MIN and MAX exact. */
#define INT_LINES(T, SUF)                                                                    \
    static void whole_##SUF(uint32_t kind, const T *p, size_t n, lanes_t *l, size_t c)      \
    {                                                                                        \
        if (kind == DG_RED_SUM) {                                                            \
            uint64_t s = l->u[c];                                                            \
            for (size_t i = 0; i < n; i++)                                                   \
                s += (uint64_t)(int64_t)p[i];                                                \
            l->u[c] = s;                                                                     \
            return;                                                                          \
        }                                                                                    \
        int64_t m = l->m[c];                                                                 \
        for (size_t i = 0; i < n; i++) {                                                     \
            int64_t v = (int64_t)p[i];                                                       \
            m = kind == DG_RED_MIN ? (v < m ? v : m) : (v > m ? v : m);                      \
        }                                                                                    \
        l->m[c] = m;                                                                         \
    }                                                                                        \
    static void row_##SUF(uint32_t kind, const T *restrict p, size_t n, lanes_t *l,        \
                          size_t c0)                                                         \
    {                                                                                        \
        if (kind == DG_RED_SUM) {                                                            \
            uint64_t *restrict u = l->u + c0;                                                \
            for (size_t i = 0; i < n; i++)                                                   \
                u[i] += (uint64_t)(int64_t)p[i];                                             \
            return;                                                                          \
        }                                                                                    \
        int64_t *restrict m = l->m + c0;                                                     \
        for (size_t i = 0; i < n; i++) {                                                     \
            int64_t v = (int64_t)p[i];                                                       \
            if (kind == DG_RED_MIN)                                                          \
                m[i] = v < m[i] ? v : m[i];                                                  \
            else                                                                             \
                m[i] = v > m[i] ? v : m[i];                                                  \
        }                                                                                    \
    }

FLOAT_LINES(float, f32)
FLOAT_LINES(double, f64)
INT_LINES(int32_t, i32)
INT_LINES(int64_t, i64)

/* One line of n elements at p into the lanes: reduced to element c (whole),
 * or added into the row of elements from c. */
static void line(dagger_dtype_t t, uint32_t kind, int whole, const void *p, size_t n,
                 lanes_t *l, size_t c)
{
    switch (t) {
    case DAGGER_F32: (whole ? whole_f32 : row_f32)(kind, p, n, l, c); break;
    case DAGGER_F64: (whole ? whole_f64 : row_f64)(kind, p, n, l, c); break;
    case DAGGER_I32: (whole ? whole_i32 : row_i32)(kind, p, n, l, c); break;
    default: (whole ? whole_i64 : row_i64)(kind, p, n, l, c); break;
    }
}

/* The lanes for nout elements, set to the kind's start; 0 when out of memory. */
static int lanes_init(lanes_t *l, int fl, uint32_t kind, size_t nout)
{
    *l = (lanes_t){0};
    if (fl && kind == DG_RED_NRM2) {
        l->d = dg_calloc(nout, sizeof(*l->d));
        l->sml = dg_calloc(nout, sizeof(*l->sml));
        l->big = dg_calloc(nout, sizeof(*l->big));
        return l->d && l->sml && l->big;
    }
    if (fl) {
        l->d = dg_malloc(nout * sizeof(*l->d));
        l->nan = kind == DG_RED_SUM ? NULL : dg_calloc(nout, 1);
        if (!l->d || (kind != DG_RED_SUM && !l->nan))
            return 0;
        double d0 = kind == DG_RED_MIN ? INFINITY : kind == DG_RED_MAX ? -INFINITY : 0;
        for (size_t c = 0; c < nout; c++)
            l->d[c] = d0;
    } else if (kind == DG_RED_SUM) {
        l->u = dg_calloc(nout, sizeof(*l->u));
        if (!l->u)
            return 0;
    } else {
        l->m = dg_malloc(nout * sizeof(*l->m));
        if (!l->m)
            return 0;
        for (size_t c = 0; c < nout; c++)
            l->m[c] = kind == DG_RED_MIN ? INT64_MAX : INT64_MIN;
    }
    return 1;
}

static void lanes_free(lanes_t *l)
{
    free(l->d);
    free(l->sml);
    free(l->big);
    free(l->nan);
    free(l->u);
    free(l->m);
}

int dg_arr_reddim_fast(const dagger_slot_t *x, uint32_t kind, uint32_t dim,
                       const size_t ext[DAGGER_MAX_DIMS], const size_t oext[DAGGER_MAX_DIMS],
                       size_t nout, dg_racc_t *acc)
{
    int fl = x->dtype == DAGGER_F32 || x->dtype == DAGGER_F64;
    int in = x->dtype == DAGGER_I32 || x->dtype == DAGGER_I64;
    if ((kind != DG_RED_SUM && kind != DG_RED_MIN && kind != DG_RED_MAX &&
         !(kind == DG_RED_NRM2 && fl)) || (!fl && !in) || dim >= DAGGER_MAX_DIMS ||
        (ext[0] > 1 && x->strides[0] != 1))
        return 0;
    lanes_t l;
    if (!lanes_init(&l, fl, kind, nout)) {
        lanes_free(&l);
        return 0;
    }
    size_t es = dagger_dtype_size(x->dtype), i[DAGGER_MAX_DIMS];
    for (i[3] = 0; i[3] < ext[3]; i[3]++)
        for (i[2] = 0; i[2] < ext[2]; i[2]++)
            for (i[1] = 0; i[1] < ext[1]; i[1]++) {
                const char *p = (const char *)x->data +
                                (i[1] * x->strides[1] + i[2] * x->strides[2] +
                                 i[3] * x->strides[3]) * es;
                size_t q[DAGGER_MAX_DIMS] = {0, i[1], i[2], i[3]};
                q[dim] = 0;
                size_t c = q[0] + oext[0] * (q[1] + oext[1] * (q[2] + oext[2] * q[3]));
                line(x->dtype, kind, dim == 0, p, ext[0], &l, c);
            }
    for (size_t c = 0; c < nout; c++) {
        if (kind == DG_RED_NRM2) {
            acc[c].n = (dg_nrm2_t){l.sml[c], l.d[c], l.big[c]};
        } else if (fl) {
            acc[c].d = l.d[c];
            acc[c].nan = l.nan ? l.nan[c] : 0;
        } else if (kind == DG_RED_SUM) {
            acc[c].u = l.u[c];
        } else if (kind == DG_RED_MIN) {
            acc[c].lo = l.m[c];
        } else {
            acc[c].hi = l.m[c];
        }
    }
    lanes_free(&l);
    return 1;
}
