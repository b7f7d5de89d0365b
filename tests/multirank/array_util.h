/* Helpers of the distributed-array tests: descriptions, collecting into
 * doubles, and serial references. Everything here is collective. */
#ifndef DG_TEST_ARRAY_UTIL_H
#define DG_TEST_ARRAY_UTIL_H

#include <criterion/criterion.h>
#include <dagger.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mr_tag.h"

#define AR_OK(call)                                                                   \
    do {                                                                              \
        dagger_status_t st_ = (call);                                                 \
        cr_assert_eq(st_, DAGGER_OK, "%s -> %s: %s", #call, dagger_strerror(st_),     \
                     dagger_error_detail());                                          \
    } while (0)

/* The call fails with status `code` and a detail message containing `text`. */
#define AR_FAILS(call, code, text)                                                    \
    do {                                                                              \
        dagger_status_t st_ = (call);                                                 \
        cr_assert_eq(st_, (code), "%s -> %s (%s), expected %s", #call,                \
                     dagger_strerror(st_), dagger_error_detail(), dagger_strerror(code)); \
        cr_assert(strstr(dagger_error_detail(), (text)), "%s: detail '%s' lacks '%s'",  \
                  #call, dagger_error_detail(), (text));                              \
    } while (0)

/* Destroys the arrays listed: AR_DESTROY(a, b, c). */
static inline void ar_destroy(size_t n, dagger_array_t *const *a)
{
    for (size_t i = 0; i < n; i++)
        AR_OK(dagger_array_destroy(a[i]));
}
#define AR_DESTROY(...)                                                               \
    ar_destroy(sizeof((dagger_array_t *[]){__VA_ARGS__}) / sizeof(dagger_array_t *),  \
               (dagger_array_t *[]){__VA_ARGS__})

static inline dagger_runtime_t *ar_init(void)
{
    dagger_runtime_t *rt = NULL;
    mr_tag_test();
    AR_OK(dagger_init(NULL, NULL, NULL, &rt));
    return rt;
}

static inline dagger_array_desc_t ar_desc(dagger_dtype_t t, int nd, const size_t *dims,
                                          const size_t *block)
{
    dagger_array_desc_t d;
    memset(&d, 0, sizeof(d));
    d.dtype = t;
    d.ndims = nd;
    for (int k = 0; k < nd; k++) {
        d.dims[k] = dims[k];
        d.block[k] = block[k];
    }
    return d;
}

#define AR_D1(t, n, b) ar_desc((t), 1, (size_t[]){(n)}, (size_t[]){(b)})
#define AR_D2(t, m, n, bm, bn) ar_desc((t), 2, (size_t[]){(m), (n)}, (size_t[]){(bm), (bn)})
#define AR_D3(t, m, n, p, bm, bn, bp) \
    ar_desc((t), 3, (size_t[]){(m), (n), (p)}, (size_t[]){(bm), (bn), (bp)})

static inline size_t ar_count(const dagger_array_desc_t *d)
{
    size_t n = 1;
    for (int k = 0; k < d->ndims; k++)
        n *= d->dims[k];
    return n;
}

static inline double ar_get(dagger_dtype_t t, const void *p, size_t i)
{
    switch (t) {
    case DAGGER_F32: return ((const float *)p)[i];
    case DAGGER_F64: return ((const double *)p)[i];
    case DAGGER_I32: return ((const int32_t *)p)[i];
    case DAGGER_I64: return (double)((const int64_t *)p)[i];
    default: return NAN;
    }
}

/* The whole array as doubles, identical on every rank (malloc'ed). */
static inline double *ar_collect(dagger_array_t *a)
{
    dagger_array_desc_t d;
    AR_OK(dagger_array_info(a, &d));
    size_t n = ar_count(&d);
    void *raw = malloc(n * dagger_dtype_size(d.dtype));
    double *out = malloc(n * sizeof(double));
    cr_assert(raw && out);
    AR_OK(dagger_array_collect(a, raw));
    for (size_t i = 0; i < n; i++)
        out[i] = ar_get(d.dtype, raw, i);
    free(raw);
    return out;
}

/* Every element of a equals want[i] (doubles compared with a tolerance
 * relative to the value; 0 = exact). */
static inline void ar_expect(dagger_array_t *a, const double *want, double tol, const char *what)
{
    dagger_array_desc_t d;
    AR_OK(dagger_array_info(a, &d));
    double *got = ar_collect(a);
    for (size_t i = 0; i < ar_count(&d); i++) {
        double err = fabs(got[i] - want[i]);
        cr_assert(got[i] == want[i] || err <= tol * fmax(1.0, fabs(want[i])) ||
                      (isnan(got[i]) && isnan(want[i])),
                  "%s: element %zu is %.17g, expected %.17g", what, i, got[i], want[i]);
    }
    free(got);
}

/* ---- reductions ---- */

/* Sum, min, max, norm of x and dot(x, y), computed by the runtime (r) and
 * serially from the collected values vx, vy (n elements) (s). */
static inline void ar_reduce5(dagger_runtime_t *rt, dagger_array_t *x, dagger_array_t *y,
                              const double *vx, const double *vy, size_t n, double r[5],
                              double s[5])
{
    const dagger_op_t ops[4] = {DAGGER_OP_ADD, DAGGER_OP_MIN, DAGGER_OP_MAX,
                                             DAGGER_OP_NORM2};
    dagger_future_t f[5];
    for (int k = 0; k < 4; k++)
        AR_OK(dagger_array_reduce(NULL, ops[k], x, &f[k]));
    AR_OK(dagger_array_dot(NULL, x, y, &f[4]));
    for (int k = 0; k < 5; k++) {
        size_t len = 0;
        AR_OK(dagger_fetch(rt, f[k], &r[k], sizeof(double), &len));
        cr_assert_eq(len, sizeof(double));
    }
    double ss = 0;
    s[0] = s[4] = 0;
    s[1] = INFINITY;
    s[2] = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        s[0] += vx[i];
        s[1] = fmin(s[1], vx[i]);
        s[2] = fmax(s[2], vx[i]);
        ss += vx[i] * vx[i];
        s[4] += vx[i] * vy[i];
    }
    s[3] = sqrt(ss);
}

/* ---- serial stencil reference ---- */

/* Resolves global position g (may be outside) along a dimension of n
 * elements; returns -1 for the pad value. */
static inline long ar_resolve(long g, long n, dagger_boundary_kind_t bc)
{
    if (g >= 0 && g < n)
        return g;
    switch (bc) {
    case DAGGER_BC_WRAP: return ((g % n) + n) % n;
    case DAGGER_BC_CLAMP: return g < 0 ? 0 : n - 1;
    case DAGGER_BC_PAD: return -1;
    case DAGGER_BC_REFLECT_SYMMETRIC: return g < 0 ? -g - 1 : 2 * n - 1 - g;
    case DAGGER_BC_REFLECT_MIRROR: return g < 0 ? -g : 2 * n - 2 - g;
    default: break; /* the affine kinds: ar_affine_value */
    }
    return -1;
}

static inline int ar_affine(dagger_boundary_kind_t k)
{
    return k == DAGGER_BC_ANTIREFLECT_SYMMETRIC || k == DAGGER_BC_ANTIREFLECT_MIRROR ||
           k == DAGGER_BC_LINEAR_EXTRAPOLATE;
}

static inline double ar_window_value(const double *x, int nd, const size_t *dims, const long *pos,
                                     const dagger_boundary_t *bc);

/* An affine ghost along dimension k (pos[k] outside): from the values at
 * the edge and at its mirror image (or the edge's neighbour), themselves
 * resolved along the lower dimensions: padding one dimension after the
 * other, the highest affine dimension outermost. */
static inline double ar_affine_value(const double *x, int nd, const size_t *dims, const long *pos,
                                     const dagger_boundary_t *bc, int k)
{
    long n = (long)dims[k], g = pos[k], lowside = g < 0;
    long j = lowside ? -g : g - n + 1, edge = lowside ? 0 : n - 1, in = lowside ? 1 : -1;
    long q[DAGGER_MAX_DIMS];
    memcpy(q, pos, (size_t)nd * sizeof(long));
    q[k] = edge;
    double e = ar_window_value(x, nd, dims, q, bc);
    if (bc[k].kind == DAGGER_BC_LINEAR_EXTRAPOLATE) {
        q[k] = edge + in;
        return e + (double)j * (e - ar_window_value(x, nd, dims, q, bc));
    }
    q[k] = edge + in * (bc[k].kind == DAGGER_BC_ANTIREFLECT_MIRROR ? j : j - 1);
    return 2 * e - ar_window_value(x, nd, dims, q, bc);
}

/* The value a window of x (dims[0..nd), column-major) sees at global
 * position pos[] with per-dimension boundaries (the lowest padded dimension
 * gives the pad value). */
static inline double ar_window_value(const double *x, int nd, const size_t *dims, const long *pos,
                                     const dagger_boundary_t *bc)
{
    for (int k = nd - 1; k >= 0; k--)
        if ((pos[k] < 0 || pos[k] >= (long)dims[k]) && ar_affine(bc[k].kind))
            return ar_affine_value(x, nd, dims, pos, bc, k);
    size_t lin = 0, stride = 1;
    for (int k = 0; k < nd; k++) {
        long r = ar_resolve(pos[k], (long)dims[k], bc[k].kind);
        if (r < 0)
            return bc[k].pad;
        lin += (size_t)r * stride;
        stride *= dims[k];
    }
    return x[lin];
}

/* Serial window sum of distance dist around every element (up to 3-D). */
static inline void ar_ref_sum(const double *x, double *y, int nd, const size_t *dims,
                              const size_t *dist, const dagger_boundary_t *bc)
{
    size_t d[3] = {1, 1, 1}, w[3] = {0, 0, 0};
    for (int k = 0; k < nd; k++) {
        d[k] = dims[k];
        w[k] = dist[k];
    }
    for (size_t i2 = 0; i2 < d[2]; i2++)
        for (size_t i1 = 0; i1 < d[1]; i1++)
            for (size_t i0 = 0; i0 < d[0]; i0++) {
                double s = 0;
                for (long o2 = -(long)w[2]; o2 <= (long)w[2]; o2++)
                    for (long o1 = -(long)w[1]; o1 <= (long)w[1]; o1++)
                        for (long o0 = -(long)w[0]; o0 <= (long)w[0]; o0++) {
                            long pos[3] = {(long)i0 + o0, (long)i1 + o1, (long)i2 + o2};
                            s += ar_window_value(x, nd, dims, pos, bc);
                        }
                y[i0 + d[0] * (i1 + d[1] * i2)] = s;
            }
}

/* The 40 x 36 f64 test array of the collect tests, in 4 x 3 blocks (120
 * tiles, 30-120 per owner), made from *host, which holds i + base; *got
 * holds 40 x 36 doubles (free both). */
static inline dagger_array_t *ar_40x36(dagger_runtime_t *rt, double base, double **host,
                                       double **got)
{
    dagger_array_desc_t d = ar_desc(DAGGER_F64, 2, (size_t[]){40, 36}, (size_t[]){4, 3});
    *host = malloc(40 * 36 * sizeof(double));
    *got = malloc(40 * 36 * sizeof(double));
    cr_assert(*host && *got);
    for (int i = 0; i < 40 * 36; i++)
        (*host)[i] = i + base;
    dagger_array_t *a;
    AR_OK(dagger_array_from_host(rt, &d, *host, &a));
    return a;
}

/* Collects all of a (ar_40x36's) into got on every rank and checks that it
 * holds host + add. */
static inline void ar_collect_40x36(dagger_array_t *a, double *got, const double *host, double add)
{
    memset(got, 0, 40 * 36 * sizeof(double));
    AR_OK(dagger_array_collect(a, got));
    for (int i = 0; i < 40 * 36; i++)
        cr_assert_eq(got[i], host[i] + add, "+%g: element %d", add, i);
}

/* Collects of the 40 x 36 f64 array a, which holds host + add: to every
 * root, of the box [3, 38) x [2, 35) (partial tiles on every edge), and
 * reps times of the view [5, 35) x [4, 34); got holds 40 x 36 doubles. */
static inline void ar_check_40x36_collects(dagger_runtime_t *rt, dagger_array_t *a,
                                           const double *host, double add, double *got, int reps)
{
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    for (int root = 0; root < n; root++) {
        memset(got, 0, 40 * 36 * sizeof(double));
        AR_OK(dagger_array_collect_to(a, root, me == root ? got : NULL));
        for (int i = 0; me == root && i < 40 * 36; i++)
            cr_assert_eq(got[i], host[i] + add, "root %d, element %d", root, i);
    }
    AR_OK(dagger_array_collect_box(a, (size_t[]){3, 2}, (size_t[]){35, 33}, DAGGER_ALL_RANKS, got));
    for (int j = 0; j < 33; j++)
        for (int i = 0; i < 35; i++)
            cr_assert_eq(got[i + 35 * j], host[(i + 3) + 40 * (j + 2)] + add, "box (%d,%d)", i, j);
    dagger_array_t *v;
    AR_OK(dagger_array_view(a, (size_t[]){5, 4}, (size_t[]){30, 30}, &v));
    for (int k = 0; k < reps; k++) {
        memset(got, 0, 30 * 30 * sizeof(double));
        AR_OK(dagger_array_collect(v, got));
        for (int j = 0; j < 30; j++)
            for (int i = 0; i < 30; i++)
                cr_assert_eq(got[i + 30 * j], host[(i + 5) + 40 * (j + 4)] + add, "view (%d,%d)",
                             i, j);
    }
    AR_DESTROY(v);
}

#endif
