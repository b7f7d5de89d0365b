/* Distributed arrays: the overflow-safe 2-norm (values near DBL_MAX and
 * DBL_MIN, where a plain sum of squares overflows or underflows) and
 * reductions along one dimension, against serial references computed here
 * (long double for the norms: its exponent range holds every square). */
#include <float.h>
#include <stdio.h>

#include "array_util.h"
#include "core/array/nrm2.h"

static double fetch_norm(dagger_runtime_t *rt, dagger_array_t *a)
{
    dagger_future_t f;
    double v = 0;
    AR_OK(dagger_array_reduce(NULL, DAGGER_OP_NORM2, a, &f));
    AR_OK(dagger_fetch(rt, f, &v, sizeof(v), NULL));
    AR_OK(dagger_future_free(rt, f));
    return v;
}

static double ref_norm(const double *x, size_t n)
{
    long double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (long double)x[i] * (long double)x[i];
    return (double)sqrtl(s);
}

static double naive_norm(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i] * x[i];
    return sqrt(s);
}

/* x[i] = scale * (a value in [0.5, 1.5)), every third one negative. */
static void scaled(double *x, size_t n, double scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = scale * (0.5 + dagger_rand_uniform(3, i)) * (i % 3 ? 1 : -1);
}

Test(array_reduce_dim, norm2_near_dbl_max_and_dbl_min)
{
    dagger_runtime_t *rt = ar_init();
    enum { N = 200 };
    const double scales[] = {DBL_MAX / 64, 1e200, 1e-300, DBL_MIN, 4 * DBL_TRUE_MIN, 1.0};
    const size_t blocks[] = {200, 7, 64};
    double x[N];
    for (int s = 0; s < 6; s++) {
        scaled(x, N, scales[s]);
        double want = ref_norm(x, N), naive = naive_norm(x, N);
        if (s < 5) /* the plain sum of squares fails here: the test means something */
            cr_assert(isinf(naive) || naive == 0 || fabs(naive - want) > 1e-6 * want,
                      "scale %g: the naive norm %g is fine", scales[s], naive);
        for (int b = 0; b < 3; b++) {
            dagger_array_desc_t d = AR_D1(DAGGER_F64, N, blocks[b]);
            dagger_array_t *a;
            AR_OK(dagger_array_from_host(rt, &d, x, &a));
            double got = fetch_norm(rt, a);
            cr_assert(fabs(got - want) <= 1e-14 * want, "scale %g, blocks %zu: %.17g, expected %.17g",
                      scales[s], blocks[b], got, want);
            AR_DESTROY(a);
        }
    }
    /* Huge, ordinary and tiny together; one infinity gives infinity. */
    scaled(x, N, 1.0);
    x[5] = DBL_MAX / 2;
    x[77] = 1e-310;
    x[150] = -DBL_MAX / 3;
    dagger_array_desc_t d = AR_D1(DAGGER_F64, N, 16);
    dagger_array_t *a;
    AR_OK(dagger_array_from_host(rt, &d, x, &a));
    double want = ref_norm(x, N), got = fetch_norm(rt, a);
    cr_assert(fabs(got - want) <= 1e-14 * want, "mixed: %.17g, expected %.17g", got, want);
    AR_DESTROY(a);
    x[9] = -INFINITY;
    AR_OK(dagger_array_from_host(rt, &d, x, &a));
    cr_assert(isinf(fetch_norm(rt, a)), "an infinite element");
    AR_DESTROY(a);
    AR_OK(dagger_finalize(rt));
}

/* Serial reference: op over dimension dim of x (dims[0..3), column-major). */
static double ref_dim(const double *x, const size_t dims[3], int dim, size_t lin_out,
                      dagger_op_t op)
{
    size_t od[3] = {dims[0], dims[1], dims[2]};
    od[dim] = 1;
    size_t q[3] = {lin_out % od[0], (lin_out / od[0]) % od[1], lin_out / (od[0] * od[1])};
    long double s = 0;
    double m = op == DAGGER_OP_MIN ? INFINITY : -INFINITY;
    for (size_t j = 0; j < dims[dim]; j++) {
        size_t p[3] = {q[0], q[1], q[2]};
        p[dim] = j;
        double v = x[p[0] + dims[0] * (p[1] + dims[1] * p[2])];
        s += op == DAGGER_OP_NORM2 ? (long double)v * v : v;
        m = op == DAGGER_OP_MIN ? fmin(m, v) : fmax(m, v);
    }
    if (op == DAGGER_OP_NORM2)
        return (double)sqrtl(s);
    return op == DAGGER_OP_ADD ? (double)s : m;
}

/* Sum, min, max and norm along each dimension of 2-D and 3-D arrays, the
 * output blocked differently from the input, against the serial values. */
Test(array_reduce_dim, along_each_dimension_matches_serial)
{
    dagger_runtime_t *rt = ar_init();
    const dagger_op_t ops[4] = {DAGGER_OP_ADD, DAGGER_OP_MIN, DAGGER_OP_MAX,
                                             DAGGER_OP_NORM2};
    const size_t blocks[2][3] = {{4, 3, 2}, {9, 10, 5}};
    for (int nd = 2; nd <= 3; nd++)
        for (int b = 0; b < 2; b++)
            for (int dim = 0; dim < nd; dim++) {
                size_t dims[3] = {9, 10, nd == 3 ? 5 : 1};
                dagger_array_desc_t d = ar_desc(DAGGER_F64, nd, dims, blocks[b]);
                dagger_array_t *a, *out;
                AR_OK(dagger_array_randn(rt, &d, 5, &a));
                dagger_array_desc_t od = d;
                od.dims[dim] = 1;
                od.block[0] = 2; /* other blocks than a's */
                AR_OK(dagger_array_zeros(rt, &od, &out));
                double *x = ar_collect(a);
                size_t nout = ar_count(&od);
                double *want = malloc(nout * sizeof(double));
                for (int o = 0; o < 4; o++) {
                    AR_OK(dagger_array_reduce_dim(NULL, ops[o], a, dim, out));
                    for (size_t i = 0; i < nout; i++)
                        want[i] = ref_dim(x, dims, dim, i, ops[o]);
                    char what[64];
                    snprintf(what, sizeof(what), "%d-D, blocks %d, dim %d, op %d", nd, b, dim, ops[o]);
                    ar_expect(out, want, 1e-13, what);
                }
                free(x);
                free(want);
                AR_DESTROY(a, out);
            }
    AR_OK(dagger_finalize(rt));
}

/* reduce_dim's float sums as docs/arrays.md says they are computed: per
 * output element, each block of a along dim (the parent's blocks, clipped
 * to the view starting at org) gives a partial sum in double, along
 * dimension 0 in four interleaved sums per line ((s0 + s1) + (s2 + s3)),
 * along the others in index order; the partials are combined in block
 * order, the running value stored in the output's type (f32 rounds). */
static double doc_sum(const double *x, const size_t dims[3], size_t blk, size_t org, int dim,
                      size_t lin_out, int f32)
{
    size_t od[3] = {dims[0], dims[1], dims[2]};
    od[dim] = 1;
    size_t q[3] = {lin_out % od[0], (lin_out / od[0]) % od[1], lin_out / (od[0] * od[1])};
    double out = 0;
    for (size_t j0 = 0; j0 < dims[dim];) {
        size_t j1 = ((org + j0) / blk + 1) * blk - org; /* the next block's start */
        j1 = j1 < dims[dim] ? j1 : dims[dim];
        double s[4] = {0, 0, 0, 0};
        for (size_t j = j0; j < j1; j++) {
            size_t p[3] = {q[0], q[1], q[2]};
            p[dim] = j;
            double v = x[p[0] + dims[0] * (p[1] + dims[1] * p[2])];
            size_t lane = dim == 0 && (j - j0) < (j1 - j0) / 4 * 4 ? (j - j0) % 4 : 0;
            s[lane] += v;
        }
        double part = 0 + ((s[0] + s[1]) + (s[2] + s[3]));
        out = j0 == 0 ? part : out + part;
        out = f32 ? (double)(float)out : out;
        j0 = j1;
    }
    return out;
}

/* reduce_dim's norms as documented: per block along dim an overflow-safe
 * sum of squares in index order (nrm2.h), its root combined with the
 * running value by hypot in block order, stored in the output's type. */
static double doc_norm(const double *x, const size_t dims[3], size_t blk, int dim, size_t lin_out,
                       int f32)
{
    size_t od[3] = {dims[0], dims[1], dims[2]};
    od[dim] = 1;
    size_t q[3] = {lin_out % od[0], (lin_out / od[0]) % od[1], lin_out / (od[0] * od[1])};
    double out = 0;
    for (size_t j0 = 0; j0 < dims[dim]; j0 += blk) {
        dg_nrm2_t a = {0, 0, 0};
        for (size_t j = j0; j < j0 + blk && j < dims[dim]; j++) {
            size_t p[3] = {q[0], q[1], q[2]};
            p[dim] = j;
            dg_nrm2_add(&a, x[p[0] + dims[0] * (p[1] + dims[1] * p[2])]);
        }
        double part = dg_nrm2_finish(&a);
        out = j0 == 0 ? part : hypot(out, part);
        out = f32 ? (double)(float)out : out;
    }
    return out;
}

/* Float sums and norms exactly as documented, along each dimension of a
 * 3-D array with ragged blocks, f64 and f32; sums of a view that starts
 * inside blocks; MIN and MAX exact, a NaN making its element NaN and no
 * other. */
Test(array_reduce_dim, float_sums_in_the_documented_order)
{
    dagger_runtime_t *rt = ar_init();
    size_t dims[3] = {37, 11, 6}, blk[3] = {8, 4, 4};
    for (int f32 = 0; f32 < 2; f32++)
        for (int dim = 0; dim < 3; dim++) {
            dagger_array_desc_t d = ar_desc(f32 ? DAGGER_F32 : DAGGER_F64, 3, dims, blk);
            dagger_array_t *a, *out;
            AR_OK(dagger_array_randn(rt, &d, 9, &a));
            dagger_array_desc_t od = d;
            od.dims[dim] = 1;
            od.block[0] = 5;
            AR_OK(dagger_array_zeros(rt, &od, &out));
            AR_OK(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, a, dim, out));
            double *x = ar_collect(a), want[37 * 11 * 6];
            for (size_t i = 0; i < ar_count(&od); i++)
                want[i] = doc_sum(x, dims, blk[dim], 0, dim, i, f32);
            char what[48];
            snprintf(what, sizeof(what), "%s, dim %d", f32 ? "f32" : "f64", dim);
            ar_expect(out, want, 0, what);
            AR_OK(dagger_array_reduce_dim(NULL, DAGGER_OP_NORM2, a, dim, out));
            for (size_t i = 0; i < ar_count(&od); i++)
                want[i] = doc_norm(x, dims, blk[dim], dim, i, f32);
            snprintf(what, sizeof(what), "%s norms, dim %d", f32 ? "f32" : "f64", dim);
            ar_expect(out, want, 0, what);
            free(x);
            AR_DESTROY(a, out);
        }
    /* A view of rows 3..33 and columns 2..10: blocks clipped at both ends. */
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 37, 11, 8, 4);
    dagger_array_t *a, *v, *out;
    AR_OK(dagger_array_randn(rt, &d, 4, &a));
    size_t off[2] = {3, 2}, ext[2] = {31, 9}, vd[3] = {31, 9, 1};
    AR_OK(dagger_array_view(a, off, ext, &v));
    double *x = ar_collect(v), want[31];
    for (int dim = 0; dim < 2; dim++) {
        dagger_array_desc_t od = AR_D2(DAGGER_F64, dim ? 31 : 1, dim ? 1 : 9, 4, 1);
        AR_OK(dagger_array_zeros(rt, &od, &out));
        AR_OK(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, v, dim, out));
        for (size_t i = 0; i < ar_count(&od); i++)
            want[i] = doc_sum(x, vd, dim ? 4 : 8, off[dim], dim, i, 0);
        ar_expect(out, want, 0, dim ? "view, row sums" : "view, column sums");
        AR_DESTROY(out);
    }
    /* MIN and MAX along each dimension; x[5 + 37 * 7] is NaN. */
    double h[37 * 11];
    for (size_t i = 0; i < 37 * 11; i++)
        h[i] = x[i % 31] * (double)(i % 7) - 3.0 * (double)(i % 5);
    h[5 + 37 * 7] = NAN;
    AR_DESTROY(v, a);
    AR_OK(dagger_array_from_host(rt, &d, h, &a));
    for (int dim = 0; dim < 2; dim++)
        for (int mx = 0; mx < 2; mx++) {
            dagger_array_desc_t od = AR_D2(DAGGER_F64, dim ? 37 : 1, dim ? 1 : 11, 4, 1);
            AR_OK(dagger_array_zeros(rt, &od, &out));
            AR_OK(dagger_array_reduce_dim(NULL, mx ? DAGGER_OP_MAX : DAGGER_OP_MIN, a, dim, out));
            double w[37];
            for (size_t i = 0; i < ar_count(&od); i++) {
                w[i] = mx ? -INFINITY : INFINITY;
                for (size_t j = 0; j < (dim ? 11u : 37u); j++) {
                    double e = dim ? h[i + 37 * j] : h[j + 37 * i];
                    w[i] = isnan(e) || isnan(w[i]) ? NAN : mx ? fmax(w[i], e) : fmin(w[i], e);
                }
            }
            cr_assert(isnan(w[dim ? 5 : 7]), "the NaN is in the reference");
            ar_expect(out, w, 0, mx ? "max" : "min");
            AR_DESTROY(out);
        }
    free(x);
    AR_DESTROY(a);
    AR_OK(dagger_finalize(rt));
}

/* a: random with description d (seed), out: zeros with description od. */
static void rand_and_zeros(dagger_runtime_t *rt, dagger_array_desc_t d, dagger_array_desc_t od,
                           uint64_t seed, dagger_array_t **a, dagger_array_t **out)
{
    AR_OK(dagger_array_rand(rt, &d, seed, a));
    AR_OK(dagger_array_zeros(rt, &od, out));
}

/* In a region scoped to rank 0 the blocks' tasks are not given ranks of
 * their own (which the region would not admit): the sums come out right. */
Test(array_reduce_dim, in_a_region_scoped_to_one_rank)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_t *a, *out;
    rand_and_zeros(rt, AR_D2(DAGGER_F64, 16, 24, 8, 4), AR_D2(DAGGER_F64, 16, 1, 8, 1), 6, &a, &out);
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, &DAGGER_SCOPE_RANK(0), &r));
    AR_OK(dagger_array_reduce_dim(r, DAGGER_OP_ADD, a, 1, out));
    AR_OK(dagger_region_end(r));
    double *x = ar_collect(a), want[16];
    size_t dims[3] = {16, 24, 1};
    for (size_t i = 0; i < 16; i++)
        want[i] = doc_sum(x, dims, 4, 0, 1, i, 0);
    ar_expect(out, want, 0, "row sums in a region of rank 0");
    free(x);
    AR_DESTROY(a, out);
    AR_OK(dagger_finalize(rt));
}

/* Integers: sums wrap around in the type, min and max exact; f32 too. */
Test(array_reduce_dim, integer_and_f32_arrays)
{
    dagger_runtime_t *rt = ar_init();
    int32_t xi[24];
    for (int i = 0; i < 24; i++)
        xi[i] = i % 5 == 0 ? INT32_MAX - i : i * 3 - 20;
    dagger_array_desc_t d = AR_D2(DAGGER_I32, 4, 6, 3, 2), od = AR_D2(DAGGER_I32, 4, 1, 4, 1);
    dagger_array_t *a, *out;
    AR_OK(dagger_array_from_host(rt, &d, xi, &a));
    AR_OK(dagger_array_zeros(rt, &od, &out));
    double want[4];
    AR_OK(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, a, 1, out));
    for (int i = 0; i < 4; i++) {
        uint32_t s = 0;
        for (int j = 0; j < 6; j++)
            s += (uint32_t)xi[i + 4 * j];
        want[i] = (int32_t)s;
    }
    ar_expect(out, want, 0, "i32 sums wrap");
    AR_OK(dagger_array_reduce_dim(NULL, DAGGER_OP_MIN, a, 1, out));
    for (int i = 0; i < 4; i++) {
        want[i] = INT32_MAX;
        for (int j = 0; j < 6; j++)
            want[i] = fmin(want[i], xi[i + 4 * j]);
    }
    ar_expect(out, want, 0, "i32 min");
    AR_FAILS(dagger_array_reduce_dim(NULL, DAGGER_OP_NORM2, a, 1, out), DAGGER_ERR_DTYPE, "f32");
    AR_DESTROY(a, out);
    dagger_array_desc_t df = AR_D2(DAGGER_F32, 30, 3, 7, 2), of = AR_D2(DAGGER_F32, 1, 3, 1, 3);
    AR_OK(dagger_array_rand(rt, &df, 8, &a));
    AR_OK(dagger_array_zeros(rt, &of, &out));
    AR_OK(dagger_array_reduce_dim(NULL, DAGGER_OP_NORM2, a, 0, out));
    double *x = ar_collect(a);
    for (int j = 0; j < 3; j++)
        want[j] = ref_norm(x + 30 * j, 30);
    ar_expect(out, want, 1e-6, "f32 norms");
    free(x);
    AR_DESTROY(a, out);
    AR_OK(dagger_finalize(rt));
}

/* Norms along a dimension near DBL_MAX: per block safe, combined by hypot. */
Test(array_reduce_dim, norm2_along_a_dimension_near_dbl_max)
{
    dagger_runtime_t *rt = ar_init();
    double x[60], want[3];
    scaled(x, 60, DBL_MAX / 32);
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 3, 20, 2, 6), od = AR_D2(DAGGER_F64, 3, 1, 3, 1);
    dagger_array_t *a, *out;
    AR_OK(dagger_array_from_host(rt, &d, x, &a));
    AR_OK(dagger_array_zeros(rt, &od, &out));
    AR_OK(dagger_array_reduce_dim(NULL, DAGGER_OP_NORM2, a, 1, out));
    for (int i = 0; i < 3; i++) {
        long double s = 0;
        for (int j = 0; j < 20; j++)
            s += (long double)x[i + 3 * j] * x[i + 3 * j];
        want[i] = (double)sqrtl(s);
    }
    ar_expect(out, want, 1e-14, "norms near DBL_MAX");
    AR_DESTROY(a, out);
    AR_OK(dagger_finalize(rt));
}

/* Every rank fails alike, with a message saying what to change. */
Test(array_reduce_dim, bad_input)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 4, 6, 2, 2);
    dagger_array_desc_t good = AR_D2(DAGGER_F64, 4, 1, 2, 1), bad = AR_D2(DAGGER_F64, 4, 2, 2, 1);
    dagger_array_desc_t other = AR_D2(DAGGER_F32, 4, 1, 2, 1);
    dagger_array_t *a, *o, *b, *f;
    AR_OK(dagger_array_zeros(rt, &d, &a));
    AR_OK(dagger_array_zeros(rt, &good, &o));
    AR_OK(dagger_array_zeros(rt, &bad, &b));
    AR_OK(dagger_array_zeros(rt, &other, &f));
    AR_FAILS(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, a, 2, o), DAGGER_ERR_INVALID_ARG,
             "dimension 2 of a 2-D array; use 0 .. 1");
    AR_FAILS(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, a, -1, o), DAGGER_ERR_INVALID_ARG,
             "use 0 .. 1");
    AR_FAILS(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, a, 1, b), DAGGER_ERR_INVALID_ARG,
             "the output is 4x2; reducing 4x6 along dimension 1 needs the same dims with extent 1");
    AR_FAILS(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, a, 0, o), DAGGER_ERR_INVALID_ARG,
             "extent 1 along 0");
    AR_FAILS(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, a, 1, f), DAGGER_ERR_DTYPE, "must match");
    AR_FAILS(dagger_array_reduce_dim(NULL, (dagger_op_t)9, a, 1, o),
             DAGGER_ERR_INVALID_ARG, "unknown reduction");
    AR_OK(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, a, 1, o));
    AR_DESTROY(a, o, b, f);
    AR_FAILS(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, a, 1, o), DAGGER_ERR_BAD_HANDLE, "");
    AR_OK(dagger_finalize(rt));
}

/* Only values of the output's size travel: each rank receives at most one
 * tile's worth a block (16 values here: the blocks' results, and the tiles
 * going home), never a block of the input (256 elements). */
Test(array_reduce_dim, moves_only_the_output)
{
    dagger_runtime_t *rt = ar_init();
    /* 5 x 4 blocks dealt cyclically: each row of blocks spans ranks. */
    dagger_array_t *a, *out;
    rand_and_zeros(rt, AR_D2(DAGGER_F64, 80, 64, 16, 16), AR_D2(DAGGER_F64, 80, 1, 16, 1), 2, &a,
                   &out);
    AR_OK(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, a, 1, out));
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    uint64_t slab = 16 * sizeof(double), steps = 20 + 5; /* 20 block results, 5 tiles home */
    cr_assert_leq(s.bytes_received, steps * slab, "rank %d received %llu bytes", dagger_rank(rt),
                  (unsigned long long)s.bytes_received);
    cr_assert(dagger_nranks(rt) == 1 || s.transfers > 0, "no transfer: the test proves nothing");
    double *x = ar_collect(a), want[80];
    for (int i = 0; i < 80; i++) {
        want[i] = 0;
        for (int j = 0; j < 64; j++)
            want[i] += x[i + 80 * j];
    }
    ar_expect(out, want, 1e-13, "row sums");
    free(x);
    AR_DESTROY(a, out);
    AR_OK(dagger_finalize(rt));
}
