/* The codelets of the overflow-safe 2-norm (nrm2.h): a tile's three sums of
 * squares (24 bytes), two of them combined, and the norm from the last.
 * Ordinary squares go into four interleaved sums per line, in the order
 * the plain sum of squares used, so arrays without huge or tiny elements
 * keep their bits. */
#include <stdint.h>
#include <string.h>

#include "core/array/array_internal.h"
#include "core/array/nrm2.h"

#define NRM2_LINE(T, SUF)                                                         \
    static void nrm2_##SUF(size_t n, const T *x, dg_nrm2_t *a)                    \
    {                                                                             \
        double s[4] = {0, 0, 0, 0};                                               \
        size_t i = 0;                                                             \
        for (; i + 4 <= n; i += 4)                                                \
            for (int k = 0; k < 4; k++) {                                         \
                double v = (double)x[i + (size_t)k];                              \
                if (!dg_nrm2_rare(a, fabs(v)))                                    \
                    s[k] += v * v;                                                \
            }                                                                     \
        for (; i < n; i++) {                                                      \
            double v = (double)x[i];                                              \
            if (!dg_nrm2_rare(a, fabs(v)))                                        \
                s[0] += v * v;                                                    \
        }                                                                         \
        a->med += (s[0] + s[1]) + (s[2] + s[3]);                                  \
    }

NRM2_LINE(float, f32)
NRM2_LINE(double, f64)
NRM2_LINE(int32_t, i32)
NRM2_LINE(int64_t, i64)

typedef struct nrm2_ctx {
    dagger_dtype_t t;
    dg_nrm2_t a;
} nrm2_ctx_t;

static void nrm2_line(size_t n, const char *px, const char *py, void *ctx)
{
    nrm2_ctx_t *c = ctx;
    (void)py;
    switch (c->t) {
    case DAGGER_F32: nrm2_f32(n, (const float *)(const void *)px, &c->a); break;
    case DAGGER_F64: nrm2_f64(n, (const double *)(const void *)px, &c->a); break;
    case DAGGER_I32: nrm2_i32(n, (const int32_t *)(const void *)px, &c->a); break;
    default: nrm2_i64(n, (const int64_t *)(const void *)px, &c->a); break;
    }
}

int dg_arr_nrm2_partial_impl(dagger_task_t *t)
{
    if (dagger_task_nargs(t) != 1)
        return dagger_task_fail(t, "malformed norm parameters");
    dagger_slot_t x = dagger_task_arg(t, 0);
    nrm2_ctx_t c = {.t = x.dtype};
    dg_arr_for_lines(&x, &x, nrm2_line, &c);
    return dagger_task_return(t, &c.a, sizeof(c.a));
}

/* Argument i as a partial result; -1 when it is not one. */
static int get_partial(dagger_task_t *t, int i, dg_nrm2_t *a)
{
    dagger_slot_t s = dagger_task_arg(t, i);
    if (!s.data || s.bytes != sizeof(*a))
        return -1;
    memcpy(a, s.data, sizeof(*a));
    return 0;
}

int dg_arr_nrm2_combine_impl(dagger_task_t *t)
{
    dg_nrm2_t a, b;
    if (dagger_task_nargs(t) != 2 || get_partial(t, 0, &a) || get_partial(t, 1, &b))
        return dagger_task_fail(t, "a norm's partial result is not %zu bytes", sizeof(a));
    dg_nrm2_merge(&a, &b);
    return dagger_task_return(t, &a, sizeof(a));
}

int dg_arr_nrm2_finish_impl(dagger_task_t *t)
{
    dg_nrm2_t a;
    if (dagger_task_nargs(t) != 1 || get_partial(t, 0, &a))
        return dagger_task_fail(t, "a norm's partial result is not %zu bytes", sizeof(a));
    double v = dg_nrm2_finish(&a);
    return dagger_task_return(t, &v, sizeof(v));
}
