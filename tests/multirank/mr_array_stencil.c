/* Distributed arrays: stencils with every boundary condition (1-D, 2-D,
 * 3-D, mixed per dimension), in-place snapshot semantics, update forms,
 * several expressions in one sweep, the proof that only halos move, and
 * random sweeps against the serial reference. */
#include <stdio.h>

#include "array_util.h"

static dagger_boundary_t bc_of(dagger_boundary_kind_t k, double pad)
{
    return (dagger_boundary_t){.kind = k, .pad = pad};
}

/* out = sum of in's window of distance d (same d and boundary in every dim). */
static dagger_stencil_expr_t sum_expr(dagger_array_t *out, dagger_array_t *in, size_t d,
                                      dagger_boundary_t bc)
{
    dagger_stencil_expr_t e = {.out = out, .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    e.in[0].array = in;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        e.in[0].dist[k] = d;
        e.in[0].bc[k] = bc;
    }
    dagger_array_desc_t desc;
    AR_OK(dagger_array_info(in, &desc));
    for (int k = desc.ndims; k < DAGGER_MAX_DIMS; k++)
        e.in[0].dist[k] = 0;
    return e;
}

static dagger_array_t *from_doubles(dagger_runtime_t *rt, dagger_array_desc_t d, const double *v)
{
    dagger_array_t *a;
    AR_OK(dagger_array_from_host(rt, &d, v, &a));
    return a;
}

/* The classic case: a 4x4 array with a single 10, neighbour sums. */
Test(array_stencil, single_ten_wrap_pad_clamp)
{
    dagger_runtime_t *rt = ar_init();
    double x[16] = {10};
    const size_t blocks[] = {2, 1, 3, 4};
    for (int b = 0; b < 4; b++) {
        dagger_array_desc_t d = AR_D2(DAGGER_F64, 4, 4, blocks[b], blocks[b]);
        dagger_array_t *a = from_doubles(rt, d, x), *y;
        AR_OK(dagger_array_zeros(rt, &d, &y));
        double wrap[16], pad[16], clamp[16];
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 4; i++) {
                int ni = i == 3 || i <= 1, nj = j == 3 || j <= 1;
                wrap[i + 4 * j] = ni && nj ? 10 : 0;
                pad[i + 4 * j] = i <= 1 && j <= 1 ? 10 : 0;
                int ci = i == 0 ? 2 : i == 1, cj = j == 0 ? 2 : j == 1;
                clamp[i + 4 * j] = 10.0 * ci * cj;
            }
        dagger_stencil_expr_t e = sum_expr(y, a, 1, bc_of(DAGGER_BC_WRAP, 0));
        AR_OK(dagger_stencil_apply(rt, 1, &e));
        ar_expect(y, wrap, 0, "Wrap");
        e = sum_expr(y, a, 1, bc_of(DAGGER_BC_PAD, 0));
        AR_OK(dagger_stencil_apply(rt, 1, &e));
        ar_expect(y, pad, 0, "Pad");
        e = sum_expr(y, a, 1, bc_of(DAGGER_BC_CLAMP, 0));
        AR_OK(dagger_stencil_apply(rt, 1, &e));
        ar_expect(y, clamp, 0, "Clamp");
        AR_OK(dagger_array_destroy(a));
        AR_OK(dagger_array_destroy(y));
    }
    AR_OK(dagger_finalize(rt));
}

/* Reflect in 1-D, distance 2: symmetric (2 1 | 1 2 3 4 5 | 5 4) and mirror
 * (3 2 | 1 2 3 4 5 | 4 3). */
Test(array_stencil, reflect_symmetric_and_mirror_1d)
{
    dagger_runtime_t *rt = ar_init();
    const double x[5] = {1, 2, 3, 4, 5}, sym[5] = {9, 11, 15, 19, 21}, mir[5] = {11, 12, 15, 18, 19};
    for (size_t blk = 1; blk <= 5; blk++) {
        dagger_array_desc_t d = AR_D1(DAGGER_F64, 5, blk);
        dagger_array_t *a = from_doubles(rt, d, x), *y;
        AR_OK(dagger_array_zeros(rt, &d, &y));
        dagger_stencil_expr_t e = sum_expr(y, a, 2, bc_of(DAGGER_BC_REFLECT_SYMMETRIC, 0));
        AR_OK(dagger_stencil_apply(rt, 1, &e));
        ar_expect(y, sym, 0, "symmetric");
        e = sum_expr(y, a, 2, bc_of(DAGGER_BC_REFLECT_MIRROR, 0));
        AR_OK(dagger_stencil_apply(rt, 1, &e));
        ar_expect(y, mir, 0, "mirror");
        AR_OK(dagger_array_destroy(a));
        AR_OK(dagger_array_destroy(y));
    }
    AR_OK(dagger_finalize(rt));
}

/* The affine kinds in 1-D on the squares 1 4 9 16 25, distance 2:
 *   AntiReflect symmetric  -2 1 | 1 4 9 16 25 | 25 34
 *   AntiReflect mirror     -7 -2 | 1 4 9 16 25 | 34 41
 *   LinearExtrapolate      -5 -2 | 1 4 9 16 25 | 34 43
 * and on the ramp 1..5, which the mirror and the extrapolation continue
 * exactly (every window sum is 5x the element). */
Test(array_stencil, antireflect_and_linear_extrapolate_1d)
{
    dagger_runtime_t *rt = ar_init();
    const double sq[5] = {1, 4, 9, 16, 25}, ramp[5] = {1, 2, 3, 4, 5};
    const double want[3][5] = {{13, 31, 55, 79, 109}, {5, 28, 55, 88, 125}, {7, 28, 55, 88, 127}};
    const double ramp5[5] = {5, 10, 15, 20, 25};
    const dagger_boundary_kind_t kinds[3] = {DAGGER_BC_ANTIREFLECT_SYMMETRIC,
                                             DAGGER_BC_ANTIREFLECT_MIRROR,
                                             DAGGER_BC_LINEAR_EXTRAPOLATE};
    for (size_t blk = 1; blk <= 5; blk++) {
        dagger_array_desc_t d = AR_D1(DAGGER_F64, 5, blk);
        dagger_array_t *a = from_doubles(rt, d, sq), *r = from_doubles(rt, d, ramp), *y;
        AR_OK(dagger_array_zeros(rt, &d, &y));
        for (int k = 0; k < 3; k++) {
            char what[64];
            snprintf(what, sizeof(what), "squares, kind %d, blocks of %zu", kinds[k], blk);
            dagger_stencil_expr_t e = sum_expr(y, a, 2, bc_of(kinds[k], 0));
            AR_OK(dagger_stencil_apply(rt, 1, &e));
            ar_expect(y, want[k], 0, what);
            if (k == 0)
                continue;
            e = sum_expr(y, r, 2, bc_of(kinds[k], 0));
            AR_OK(dagger_stencil_apply(rt, 1, &e));
            ar_expect(y, ramp5, 0, "ramp");
        }
        AR_DESTROY(a, r, y);
    }
    AR_OK(dagger_finalize(rt));
}

/* Window sums of a random array with per-dimension widths and boundaries,
 * checked against the serial reference. */
static void check_mixed(dagger_runtime_t *rt, int nd, const size_t dims[3], const size_t blk[3],
                        const size_t dist[3], const dagger_boundary_t bc[3], uint64_t seed,
                        double tol, const char *what)
{
    dagger_array_desc_t d = ar_desc(DAGGER_F64, nd, dims, blk);
    dagger_array_t *a, *y;
    AR_OK(dagger_array_rand(rt, &d, seed, &a));
    AR_OK(dagger_array_zeros(rt, &d, &y));
    dagger_stencil_expr_t e = {.out = y, .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    e.in[0].array = a;
    for (int k = 0; k < nd; k++) {
        e.in[0].dist[k] = dist[k];
        e.in[0].bc[k] = bc[k];
    }
    AR_OK(dagger_stencil_apply(rt, 1, &e));
    double *x = ar_collect(a), *want = malloc(ar_count(&d) * sizeof(double));
    ar_ref_sum(x, want, nd, dims, dist, bc);
    ar_expect(y, want, tol, what);
    free(x);
    free(want);
    AR_DESTROY(a, y);
}

/* The affine kinds mixed per dimension with each other, with Wrap and the
 * other index kinds, 2-D and 3-D, corners included, against the serial
 * reference; block sizes smaller than the window too. */
Test(array_stencil, affine_boundaries_mixed_2d_3d)
{
    dagger_runtime_t *rt = ar_init();
    const dagger_boundary_t mix[5][3] = {
        {{DAGGER_BC_WRAP, 0}, {DAGGER_BC_ANTIREFLECT_SYMMETRIC, 0}, {DAGGER_BC_LINEAR_EXTRAPOLATE, 0}},
        {{DAGGER_BC_ANTIREFLECT_MIRROR, 0}, {DAGGER_BC_WRAP, 0}, {DAGGER_BC_CLAMP, 0}},
        {{DAGGER_BC_LINEAR_EXTRAPOLATE, 0}, {DAGGER_BC_ANTIREFLECT_MIRROR, 0}, {DAGGER_BC_WRAP, 0}},
        {{DAGGER_BC_PAD, -2}, {DAGGER_BC_LINEAR_EXTRAPOLATE, 0}, {DAGGER_BC_ANTIREFLECT_SYMMETRIC, 0}},
        {{DAGGER_BC_ANTIREFLECT_SYMMETRIC, 0}, {DAGGER_BC_REFLECT_MIRROR, 0}, {DAGGER_BC_PAD, 3}},
    };
    const size_t blocks[3][3] = {{4, 2, 3}, {1, 5, 2}, {9, 1, 4}};
    for (int nd = 2; nd <= 3; nd++)
        for (int m = 0; m < 5; m++)
            for (int b = 0; b < 3; b++) {
                char what[64];
                snprintf(what, sizeof(what), "%d-D, mix %d, blocks %d", nd, m, b);
                check_mixed(rt, nd, (size_t[]){9, 5, 4}, blocks[b], (size_t[]){2, 1, 2}, mix[m], 17,
                            1e-13, what);
            }
    AR_OK(dagger_finalize(rt));
}

/* Integers: the ghosts are computed in the type (exact), 2-D, with a user
 * kernel that reads the corner ghost itself. */
static double corner(const dagger_window_t *in, int nin, const size_t index[], const void *args)
{
    (void)nin, (void)index, (void)args;
    return DAGGER_WIN2(&in[0], int32_t, -1, -1) + 1000.0 * DAGGER_WIN2(&in[0], int32_t, 1, 1);
}

Test(array_stencil, affine_boundaries_integers)
{
    dagger_runtime_t *rt = ar_init();
    dagger_stencil_kernel_t k;
    AR_OK(dagger_stencil_kernel_register(rt, "test.corner", corner, &k));
    double x[20], want[20];
    int32_t xi[20];
    for (int i = 0; i < 20; i++)
        x[i] = xi[i] = (i * 7) % 11 - 5;
    dagger_array_desc_t d = AR_D2(DAGGER_I32, 5, 4, 2, 3);
    dagger_array_t *a, *y;
    AR_OK(dagger_array_from_host(rt, &d, xi, &a));
    AR_OK(dagger_array_zeros(rt, &d, &y));
    dagger_boundary_t bc[2] = {{DAGGER_BC_ANTIREFLECT_MIRROR, 0}, {DAGGER_BC_LINEAR_EXTRAPOLATE, 0}};
    dagger_stencil_expr_t e = {.out = y, .kernel = k, .nin = 1};
    e.in[0] = (dagger_stencil_input_t){.array = a, .dist = {1, 1}, .bc = {bc[0], bc[1]}};
    AR_OK(dagger_stencil_apply(rt, 1, &e));
    for (long j = 0; j < 4; j++)
        for (long i = 0; i < 5; i++) {
            long lo[2] = {i - 1, j - 1}, hi[2] = {i + 1, j + 1};
            size_t dims[2] = {5, 4};
            want[i + 5 * j] = ar_window_value(x, 2, dims, lo, bc) +
                              1000.0 * ar_window_value(x, 2, dims, hi, bc);
        }
    ar_expect(y, want, 0, "i32 corners");
    AR_DESTROY(a, y);
    AR_OK(dagger_finalize(rt));
}

/* In place, 2x2 ones in 1x1 blocks, Wrap: every element sees the old nine
 * ones (snapshot semantics), so every element becomes 9. */
Test(array_stencil, in_place_sees_old_values)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_I32, 2, 2, 1, 1);
    dagger_array_t *a;
    AR_OK(dagger_array_ones(rt, &d, &a));
    dagger_stencil_expr_t e = sum_expr(a, a, 1, bc_of(DAGGER_BC_WRAP, 0));
    AR_OK(dagger_stencil_apply(rt, 1, &e));
    const double nine[4] = {9, 9, 9, 9};
    ar_expect(a, nine, 0, "in place");
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_finalize(rt));
}

/* Every boundary condition, 1-D and 2-D, random data, several block sizes
 * (dividing, not dividing, smaller than the window). */
Test(array_stencil, every_boundary_against_serial)
{
    dagger_runtime_t *rt = ar_init();
    const dagger_boundary_kind_t kinds[] = {DAGGER_BC_WRAP, DAGGER_BC_CLAMP, DAGGER_BC_PAD,
                                            DAGGER_BC_REFLECT_SYMMETRIC, DAGGER_BC_REFLECT_MIRROR};
    const size_t blocks[] = {1, 3, 7}; /* 1: a window of width 2 spans two blocks */
    for (int nd = 1; nd <= 2; nd++)
        for (int b = 0; b < 3; b++) {
            size_t dims[2] = {9, 7}, blk[2] = {blocks[b], blocks[(b + 1) % 3]};
            dagger_array_desc_t d = ar_desc(DAGGER_F64, nd, dims, blk);
            dagger_array_t *a, *y;
            AR_OK(dagger_array_rand(rt, &d, 21, &a));
            AR_OK(dagger_array_zeros(rt, &d, &y));
            double *x = ar_collect(a), want[63];
            for (int k = 0; k < 5; k++) {
                dagger_boundary_t bc = bc_of(kinds[k], -0.5);
                dagger_stencil_expr_t e = sum_expr(y, a, 2, bc);
                AR_OK(dagger_stencil_apply(rt, 1, &e));
                dagger_boundary_t bcs[3] = {bc, bc, bc};
                ar_ref_sum(x, want, nd, dims, (size_t[]){2, 2, 2}, bcs);
                char what[64];
                snprintf(what, sizeof(what), "%d-D, blocks %zu, boundary %d", nd, blk[0], kinds[k]);
                ar_expect(y, want, 1e-14, what);
            }
            free(x);
            AR_OK(dagger_array_destroy(a));
            AR_OK(dagger_array_destroy(y));
        }
    AR_OK(dagger_finalize(rt));
}

/* Mixed boundaries per dimension, 2-D and 3-D, with different widths. */
Test(array_stencil, mixed_boundaries_2d_3d)
{
    dagger_runtime_t *rt = ar_init();
    const dagger_boundary_t mix[3][3] = {
        {{DAGGER_BC_WRAP, 0}, {DAGGER_BC_PAD, -1}, {DAGGER_BC_CLAMP, 0}},
        {{DAGGER_BC_REFLECT_MIRROR, 0}, {DAGGER_BC_CLAMP, 0}, {DAGGER_BC_PAD, 3}},
        {{DAGGER_BC_PAD, 2}, {DAGGER_BC_REFLECT_SYMMETRIC, 0}, {DAGGER_BC_WRAP, 0}},
    };
    for (int nd = 2; nd <= 3; nd++)
        for (int m = 0; m < 3; m++)
            check_mixed(rt, nd, (size_t[]){6, 5, 4}, (size_t[]){4, 2, 3}, (size_t[]){1, 2, 1},
                        mix[m], 8, 1e-14, nd == 2 ? "2-D mixed" : "3-D mixed");
    AR_OK(dagger_finalize(rt));
}

/* Window sums keep each element's order of additions (the reference's: row
 * by row, dimension 0 fastest) in the clone of the kernel the CPU gets
 * (core/base/simd.h; AVX2 on the project's machines): lines long enough for
 * the vector loops, random doubles, compared bit for bit. */
Test(array_stencil, window_sums_in_order_to_the_bit)
{
    dagger_runtime_t *rt = ar_init();
    const size_t dims[2] = {96, 40}, blk[2] = {48, 20}, dist[2][3] = {{1, 1, 0}, {2, 1, 0}};
    const dagger_boundary_t wrap[3] = {{DAGGER_BC_WRAP, 0}, {DAGGER_BC_WRAP, 0}, {DAGGER_BC_WRAP, 0}};
    dagger_array_desc_t d = ar_desc(DAGGER_F64, 2, dims, blk);
    dagger_array_t *a, *y;
    AR_OK(dagger_array_rand(rt, &d, 5, &a));
    AR_OK(dagger_array_zeros(rt, &d, &y));
    double *x = ar_collect(a), *want = malloc(sizeof(double) * dims[0] * dims[1]);
    cr_assert(want);
    for (int w = 0; w < 2; w++) {
        dagger_stencil_expr_t e = sum_expr(y, a, 1, wrap[0]);
        e.in[0].dist[0] = dist[w][0];
        AR_OK(dagger_stencil_apply(rt, 1, &e));
        ar_ref_sum(x, want, 2, dims, dist[w], wrap);
        ar_expect(y, want, 0, dist[w][0] == 1 ? "3 x 3 Wrap" : "5 x 3 Wrap");
    }
    free(want);
    free(x);
    AR_DESTROY(a, y);
    AR_OK(dagger_finalize(rt));
}

/* The 3-row 2-D window sum's own path (sum3_direct in
 * core/array/stencil_kernels.c): windows 1 x 3 (nothing read from the
 * padded buffer's row ends), 5 x 3 and 3 x 3, on 2-D arrays and on 3-D
 * arrays with a 2-D window, blocks that divide the array and blocks that do
 * not (and one thinner than the window), fused (Wrap) and not (Clamp in
 * dimension 0, which reads a neighbour's strip beyond its block); then an f32
 * array summed into an f64 one. */
Test(array_stencil, three_row_window_sums)
{
    dagger_runtime_t *rt = ar_init();
    const size_t dist[3][3] = {{0, 1, 0}, {2, 1, 0}, {1, 1, 0}};
    const size_t blk[3][3] = {{6, 5, 2}, {5, 4, 3}, {1, 3, 4}};
    const dagger_boundary_t bcs[2][3] = {
        {{DAGGER_BC_WRAP, 0}, {DAGGER_BC_WRAP, 0}, {DAGGER_BC_WRAP, 0}},
        {{DAGGER_BC_CLAMP, 0}, {DAGGER_BC_PAD, 1.5}, {DAGGER_BC_WRAP, 0}},
    };
    for (int nd = 2; nd <= 3; nd++)
        for (int w = 0; w < 3; w++)
            for (int b = 0; b < 3; b++)
                for (int c = 0; c < 2; c++) {
                    char what[80];
                    snprintf(what, sizeof(what), "%d-D, window %zu x 3, blocks %zu x %zu, bc %d", nd,
                             2 * dist[w][0] + 1, blk[b][0], blk[b][1], c);
                    check_mixed(rt, nd, (size_t[]){12, 10, 3}, blk[b], dist[w], bcs[c], 31 + (uint64_t)b,
                                1e-13, what);
                }
    dagger_array_desc_t df = AR_D2(DAGGER_F32, 12, 10, 5, 4), dd = AR_D2(DAGGER_F64, 12, 10, 5, 4);
    dagger_array_t *a, *y;
    AR_OK(dagger_array_rand(rt, &df, 7, &a));
    AR_OK(dagger_array_zeros(rt, &dd, &y));
    dagger_stencil_expr_t e = sum_expr(y, a, 1, bc_of(DAGGER_BC_WRAP, 0));
    AR_OK(dagger_stencil_apply(rt, 1, &e));
    double *x = ar_collect(a), want[120];
    ar_ref_sum(x, want, 2, (size_t[]){12, 10}, (size_t[]){1, 1, 0}, bcs[0]);
    ar_expect(y, want, 1e-13, "f32 into f64, 3 x 3 Wrap");
    free(x);
    AR_DESTROY(a, y);
    AR_OK(dagger_finalize(rt));
}

/* A user kernel with arguments: a 5-point Laplacian times a coefficient. */
static double laplace(const dagger_window_t *in, int nin, const size_t index[], const void *args)
{
    double c;
    memcpy(&c, args, sizeof(c));
    (void)nin;
    (void)index;
    const dagger_window_t *w = &in[0];
    return c * (DAGGER_WIN2(w, double, -1, 0) + DAGGER_WIN2(w, double, 1, 0) +
                DAGGER_WIN2(w, double, 0, -1) + DAGGER_WIN2(w, double, 0, 1) -
                4 * DAGGER_WIN2(w, double, 0, 0));
}

/* A kernel that reads two inputs and the index: in0 * index[0] + in1. */
static double axpy_index(const dagger_window_t *in, int nin, const size_t index[], const void *args)
{
    (void)args;
    cr_assert_eq(nin, 2);
    return DAGGER_WIN1(&in[0], double, 0) * (double)index[0] + DAGGER_WIN1(&in[1], double, 0);
}

Test(array_stencil, user_kernels_and_update_forms)
{
    dagger_runtime_t *rt = ar_init();
    dagger_stencil_kernel_t lap, axi;
    AR_OK(dagger_stencil_kernel_register(rt, "test.laplace", laplace, &lap));
    AR_OK(dagger_stencil_kernel_register(rt, "test.axpy_index", axpy_index, &axi));
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 8, 6, 3, 4);
    dagger_array_t *a, *b;
    AR_OK(dagger_array_rand(rt, &d, 4, &a));
    AR_OK(dagger_array_ones(rt, &d, &b));
    double *x = ar_collect(a), want[48];
    /* b += 0.5 * laplace(a) with Clamp; then b *= 2 (constant); then
     * b = a * i + b. */
    double c = 0.5;
    dagger_stencil_expr_t e[3] = {
        {.out = b, .assign = DAGGER_OP_ADD, .kernel = lap, .nin = 1, .args = &c, .args_len = 8},
        {.out = b, .assign = DAGGER_OP_MUL, .kernel = DAGGER_STENCIL_CONST, .value = 2},
        {.out = b, .kernel = axi, .nin = 2},
    };
    e[0].in[0] = (dagger_stencil_input_t){.array = a, .dist = {1, 1},
                                          .bc = {{DAGGER_BC_CLAMP, 0}, {DAGGER_BC_CLAMP, 0}}};
    e[2].in[0].array = a;
    e[2].in[1].array = b;
    AR_OK(dagger_stencil_apply(rt, 3, e));
    for (long j = 0; j < 6; j++)
        for (long i = 0; i < 8; i++) {
#define AT(p, q) x[(p < 0 ? 0 : p > 7 ? 7 : p) + 8 * (q < 0 ? 0 : q > 5 ? 5 : q)]
            double l = AT(i - 1, j) + AT(i + 1, j) + AT(i, j - 1) + AT(i, j + 1) - 4 * AT(i, j);
#undef AT
            double v = (1 + 0.5 * l) * 2;
            want[i + 8 * j] = x[i + 8 * j] * (double)i + v;
        }
    ar_expect(b, want, 1e-14, "kernels and updates");
    free(x);
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(b));
    AR_OK(dagger_finalize(rt));
}

/* Several expressions in one sweep, with sequential semantics: b = window(a);
 * c = window(b) (reads what the first wrote: a new phase); a += c; b =
 * window(a) (reads the new a). */
Test(array_stencil, several_expressions_sequential_semantics)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 7, 9, 3, 4);
    dagger_array_t *a, *b, *c;
    AR_OK(dagger_array_rand(rt, &d, 13, &a));
    AR_OK(dagger_array_zeros(rt, &d, &b));
    AR_OK(dagger_array_zeros(rt, &d, &c));
    dagger_boundary_t wrap = bc_of(DAGGER_BC_WRAP, 0), pad = bc_of(DAGGER_BC_PAD, 1);
    dagger_stencil_expr_t e[4] = {
        sum_expr(b, a, 1, wrap),
        sum_expr(c, b, 1, pad),
        {.out = a, .assign = DAGGER_OP_ADD, .kernel = DAGGER_STENCIL_COPY, .nin = 1},
        sum_expr(b, a, 2, wrap), /* in place of b is fine; reads the new a */
    };
    e[2].in[0].array = c;
    AR_OK(dagger_stencil_apply(rt, 4, e));
    size_t dims[2] = {7, 9};
    dagger_boundary_t w3[3] = {wrap, wrap, wrap}, p3[3] = {pad, pad, pad};
    double *x0 = malloc(63 * sizeof(double)), vb[63], vc[63], vb2[63];
    /* Reference from the initial a. */
    for (int i = 0; i < 63; i++)
        x0[i] = dagger_rand_uniform(13, (uint64_t)i);
    ar_ref_sum(x0, vb, 2, dims, (size_t[]){1, 1}, w3);
    ar_ref_sum(vb, vc, 2, dims, (size_t[]){1, 1}, p3);
    for (int i = 0; i < 63; i++)
        x0[i] += vc[i];
    ar_ref_sum(x0, vb2, 2, dims, (size_t[]){2, 2}, w3);
    ar_expect(a, x0, 1e-14, "a");
    ar_expect(c, vc, 1e-14, "c");
    ar_expect(b, vb2, 1e-14, "b");
    free(x0);
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(b));
    AR_OK(dagger_array_destroy(c));
    AR_OK(dagger_finalize(rt));
}

/* A prepared sweep run three times in one region of the caller's (a
 * ping-pong pair of sweeps, as an iterative solver would). */
Test(array_stencil, prepared_sweeps_in_a_user_region)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D1(DAGGER_F64, 30, 7);
    dagger_array_t *a, *b;
    AR_OK(dagger_array_rand(rt, &d, 2, &a));
    AR_OK(dagger_array_zeros(rt, &d, &b));
    dagger_boundary_t wrap = bc_of(DAGGER_BC_WRAP, 0);
    dagger_stencil_expr_t ab = sum_expr(b, a, 1, wrap), ba = sum_expr(a, b, 1, wrap);
    dagger_stencil_t *s1, *s2;
    AR_OK(dagger_stencil_create(rt, 1, &ab, &s1));
    AR_OK(dagger_stencil_create(rt, 1, &ba, &s2));
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, NULL, &r));
    for (int it = 0; it < 3; it++) {
        AR_OK(dagger_stencil_run(r, s1));
        AR_OK(dagger_stencil_run(r, s2));
    }
    AR_OK(dagger_region_end(r));
    double x[30], y[30];
    size_t dims[1] = {30};
    dagger_boundary_t w3[3] = {wrap, wrap, wrap};
    for (int i = 0; i < 30; i++)
        x[i] = dagger_rand_uniform(2, (uint64_t)i);
    for (int it = 0; it < 3; it++) {
        ar_ref_sum(x, y, 1, dims, (size_t[]){1}, w3);
        ar_ref_sum(y, x, 1, dims, (size_t[]){1}, w3);
    }
    ar_expect(a, x, 1e-13, "a after three iterations");
    AR_OK(dagger_stencil_destroy(s1));
    AR_OK(dagger_stencil_destroy(s2));
    AR_FAILS(dagger_stencil_run(NULL, s1), DAGGER_ERR_BAD_HANDLE, "not a live stencil");
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(b));
    AR_OK(dagger_finalize(rt));
}

/* The elements of other ranks' blocks that the windows of this rank's
 * blocks reach (width 1; Wrap, or with wrap 0 only those inside the array,
 * as for the affine kinds): each counted once, however many windows of this
 * rank read it. */
static uint64_t halo_elements(dagger_array_t *a, int me, size_t n, size_t bs, int wrap)
{
    static unsigned char need[64 * 64];
    memset(need, 0, sizeof(need));
    for (size_t b = 0; b < dagger_array_nblocks(a); b++) {
        dagger_array_block_t info;
        AR_OK(dagger_array_block_info(a, b, &info));
        if (info.owner != me)
            continue;
        for (long j = (long)info.offset[1] - 1; j <= (long)(info.offset[1] + bs); j++)
            for (long i = (long)info.offset[0] - 1; i <= (long)(info.offset[0] + bs); i++) {
                if (!wrap && (i < 0 || j < 0 || i >= (long)n || j >= (long)n))
                    continue;
                size_t gi = (size_t)((i + (long)n) % (long)n), gj = (size_t)((j + (long)n) % (long)n);
                dagger_array_block_t src;
                AR_OK(dagger_array_block_info(a, gi / bs + (n / bs) * (gj / bs), &src));
                if (src.owner != me)
                    need[gi + n * gj] = 1;
            }
    }
    uint64_t count = 0;
    for (size_t k = 0; k < n * n; k++)
        count += need[k];
    return count;
}

/* Only halo strips cross ranks: each rank receives exactly the elements of
 * other ranks' blocks its windows reach (the planner sends an element once
 * even where two windows of the rank need it), far less than whole blocks. */
static void check_halos_only(dagger_boundary_kind_t kind)
{
    dagger_runtime_t *rt = ar_init();
    int me = dagger_rank(rt);
    const size_t n = 64, bs = 16;
    dagger_array_desc_t d = AR_D2(DAGGER_F64, n, n, bs, bs);
    dagger_array_t *a, *y;
    AR_OK(dagger_array_rand(rt, &d, 1, &a));
    AR_OK(dagger_array_zeros(rt, &d, &y));
    dagger_stencil_expr_t e = sum_expr(y, a, 1, bc_of(kind, 0));
    AR_OK(dagger_stencil_apply(rt, 1, &e));
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    uint64_t expect = halo_elements(a, me, n, bs, kind == DAGGER_BC_WRAP) * sizeof(double);
    uint64_t mine = 0;
    for (size_t b = 0; b < dagger_array_nblocks(a); b++) {
        dagger_array_block_t info;
        AR_OK(dagger_array_block_info(a, b, &info));
        mine += info.owner == me;
    }
    cr_assert_eq(s.bytes_received, expect, "rank %d received %llu bytes, the halos are %llu", me,
                 (unsigned long long)s.bytes_received, (unsigned long long)expect);
    cr_assert(dagger_nranks(rt) == 1 || expect > 0, "rank %d needs no halo: the test proves nothing",
              me);
    cr_assert_leq(s.bytes_received, mine * 4 * (bs + 1) * sizeof(double),
                  "more than the halos of this rank's %llu blocks", (unsigned long long)mine);
    double *x = ar_collect(a), want[64 * 64];
    dagger_boundary_t w3[3] = {e.in[0].bc[0], e.in[0].bc[0], e.in[0].bc[0]};
    ar_ref_sum(x, want, 2, (size_t[]){n, n}, (size_t[]){1, 1}, w3);
    ar_expect(y, want, 1e-14, "64x64");
    free(x);
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(y));
    AR_OK(dagger_finalize(rt));
}

Test(array_stencil, moves_only_halos)
{
    check_halos_only(DAGGER_BC_WRAP);
}

/* The affine kinds need no element from beyond the opposite edge: only the
 * in-range strips move, the ghosts are computed where the window is. (One
 * runtime per test: a second init in one process leaks in the launcher's
 * PMIx plugins.) */
Test(array_stencil, antireflect_moves_only_in_range_halos)
{
    check_halos_only(DAGGER_BC_ANTIREFLECT_MIRROR);
}

Test(array_stencil, linear_extrapolate_moves_only_in_range_halos)
{
    check_halos_only(DAGGER_BC_LINEAR_EXTRAPOLATE);
}

/* Pad's ghosts are the pad value, not elements: like the affine kinds, only
 * the in-range strips move (the fused sweep fills the rest itself). */
Test(array_stencil, pad_moves_only_in_range_halos)
{
    check_halos_only(DAGGER_BC_PAD);
}

/* A sweep whose windowed input it does not write runs fused: one task per
 * block, which reads its own block in place and gets the strips (no pack
 * tasks); one that writes the array it reads through a window keeps the
 * padded copies (a pack task per piece) and still sees the old values. */
Test(array_stencil, fused_sweep_is_one_task_per_block)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 32, 32, 8, 8);
    dagger_array_t *a, *y;
    AR_OK(dagger_array_rand(rt, &d, 1, &a));
    AR_OK(dagger_array_zeros(rt, &d, &y));
    size_t nb = dagger_array_nblocks(a);
    dagger_stencil_expr_t e = sum_expr(y, a, 1, bc_of(DAGGER_BC_CLAMP, 0));
    AR_OK(dagger_stencil_apply(rt, 1, &e));
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    cr_assert_eq(s.tasks, nb, "a fused sweep of %zu blocks ran %llu tasks", nb,
                 (unsigned long long)s.tasks);
    double *x = ar_collect(a), want[32 * 32];
    dagger_boundary_t c3[3] = {e.in[0].bc[0], e.in[0].bc[0], e.in[0].bc[0]};
    ar_ref_sum(x, want, 2, (size_t[]){32, 32}, (size_t[]){1, 1}, c3);
    ar_expect(y, want, 1e-14, "fused Clamp 32x32");
    e = sum_expr(a, a, 1, bc_of(DAGGER_BC_CLAMP, 0));
    AR_OK(dagger_stencil_apply(rt, 1, &e));
    AR_OK(dagger_region_stats(rt, &s));
    cr_assert_gt(s.tasks, nb, "an in-place sweep needs its padded copies");
    ar_expect(a, want, 1e-14, "in-place Clamp 32x32");
    free(x);
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(y));
    AR_OK(dagger_finalize(rt));
}

Test(array_stencil, bad_input)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 4, 4, 2, 2), e2 = AR_D2(DAGGER_F64, 4, 4, 2, 1);
    dagger_array_desc_t e3 = AR_D2(DAGGER_F64, 4, 5, 2, 2);
    dagger_array_t *a, *b, *c;
    AR_OK(dagger_array_zeros(rt, &d, &a));
    AR_OK(dagger_array_zeros(rt, &e2, &b));
    AR_OK(dagger_array_zeros(rt, &e3, &c));
    dagger_stencil_t *s;
    dagger_stencil_expr_t e = sum_expr(a, b, 1, bc_of(DAGGER_BC_WRAP, 0));
    AR_FAILS(dagger_stencil_create(rt, 1, &e, &s), DAGGER_ERR_INVALID_ARG, "dims or block sizes");
    e = sum_expr(a, c, 1, bc_of(DAGGER_BC_WRAP, 0));
    AR_FAILS(dagger_stencil_create(rt, 1, &e, &s), DAGGER_ERR_INVALID_ARG, "dims or block sizes");
    e = sum_expr(a, a, 5, bc_of(DAGGER_BC_WRAP, 0));
    AR_FAILS(dagger_stencil_create(rt, 1, &e, &s), DAGGER_ERR_INVALID_ARG, "at most 4");
    e = sum_expr(a, a, 4, bc_of(DAGGER_BC_REFLECT_MIRROR, 0));
    AR_FAILS(dagger_stencil_create(rt, 1, &e, &s), DAGGER_ERR_INVALID_ARG, "at most 3");
    dagger_stencil_expr_t two[2] = {sum_expr(a, a, 1, bc_of(DAGGER_BC_WRAP, 0)), e};
    AR_FAILS(dagger_stencil_create(rt, 2, two, &s), DAGGER_ERR_INVALID_ARG,
             "expression 1, input 0: a window reaching 4 elements past the edge of dimension 0 "
             "(4 long) with DAGGER_BC_REFLECT_MIRROR");
    e = sum_expr(a, a, 4, bc_of(DAGGER_BC_ANTIREFLECT_MIRROR, 0));
    AR_FAILS(dagger_stencil_create(rt, 1, &e, &s), DAGGER_ERR_INVALID_ARG, "at most 3");
    e = sum_expr(a, a, 5, bc_of(DAGGER_BC_ANTIREFLECT_SYMMETRIC, 0));
    AR_FAILS(dagger_stencil_create(rt, 1, &e, &s), DAGGER_ERR_INVALID_ARG, "at most 4");
    e = sum_expr(a, a, 1, bc_of((dagger_boundary_kind_t)9, 0));
    AR_FAILS(dagger_stencil_create(rt, 1, &e, &s), DAGGER_ERR_INVALID_ARG, "unknown boundary");
    e = sum_expr(a, a, 1, bc_of(DAGGER_BC_WRAP, 0));
    e.kernel = (dagger_stencil_kernel_t){777};
    AR_FAILS(dagger_stencil_create(rt, 1, &e, &s), DAGGER_ERR_NOT_FOUND, "not registered");
    e.kernel = DAGGER_STENCIL_SUM;
    e.nin = 0;
    AR_FAILS(dagger_stencil_create(rt, 1, &e, &s), DAGGER_ERR_INVALID_ARG, "read input 0");
    e.nin = 1;
    e.assign = (dagger_op_t)8;
    AR_FAILS(dagger_stencil_create(rt, 1, &e, &s), DAGGER_ERR_INVALID_ARG, "unknown assignment");
    e.assign = DAGGER_OP_SET;
    e.in[0].dist[2] = 1;
    AR_FAILS(dagger_stencil_create(rt, 1, &e, &s), DAGGER_ERR_INVALID_ARG, "2-D array");
    e.in[0].dist[2] = 0;
    dagger_array_t *row;
    dagger_array_desc_t d1 = AR_D2(DAGGER_F64, 1, 4, 1, 2);
    AR_OK(dagger_array_zeros(rt, &d1, &row));
    dagger_stencil_expr_t lx = sum_expr(row, row, 1, bc_of(DAGGER_BC_LINEAR_EXTRAPOLATE, 0));
    AR_FAILS(dagger_stencil_create(rt, 1, &lx, &s), DAGGER_ERR_INVALID_ARG, "at least 2 elements");
    AR_OK(dagger_array_destroy(row));
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, NULL, &r));
    AR_FAILS(dagger_stencil_create(rt, 1, &e, &s), DAGGER_ERR_STATE, "region");
    AR_OK(dagger_region_end(r));
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(b));
    AR_OK(dagger_array_destroy(c));
    AR_OK(dagger_finalize(rt));
}

/* A window of 29 x 29 rows (more than the sweep lists on its stack) in 3-D,
 * Pad and Clamp beyond an edge shorter than the window. */
Test(array_stencil, wide_window_3d)
{
    dagger_runtime_t *rt = ar_init();
    size_t dims[3] = {3, 20, 20}, blk[3] = {2, 7, 6}, dist[3] = {1, 14, 14};
    dagger_array_desc_t d = ar_desc(DAGGER_F32, 3, dims, blk);
    dagger_array_t *a, *y;
    AR_OK(dagger_array_rand(rt, &d, 5, &a));
    AR_OK(dagger_array_zeros(rt, &d, &y));
    dagger_boundary_t bc[3] = {{DAGGER_BC_WRAP, 0}, {DAGGER_BC_PAD, 0.25}, {DAGGER_BC_CLAMP, 0}};
    dagger_stencil_expr_t e = {.out = y, .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    e.in[0].array = a;
    for (int k = 0; k < 3; k++) {
        e.in[0].dist[k] = dist[k];
        e.in[0].bc[k] = bc[k];
    }
    AR_OK(dagger_stencil_apply(rt, 1, &e));
    double *x = ar_collect(a), *want = malloc(1200 * sizeof(double));
    ar_ref_sum(x, want, 3, dims, dist, bc);
    ar_expect(y, want, 1e-6, "3-D 3x29x29 window");
    free(x);
    free(want);
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(y));
    AR_OK(dagger_finalize(rt));
}

/* ---- random sweeps against the serial reference ---- */

static uint64_t rnd_state;

static size_t rnd(size_t n)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return (size_t)(rnd_state % n);
}

/* An array of dtype t holding v (small integers: exact in every dtype). */
static dagger_array_t *from_values(dagger_runtime_t *rt, dagger_array_desc_t d, const double *v)
{
    size_t n = ar_count(&d);
    void *raw = malloc(n * 8);
    for (size_t i = 0; i < n; i++)
        switch (d.dtype) {
        case DAGGER_F64: ((double *)raw)[i] = v[i]; break;
        case DAGGER_F32: ((float *)raw)[i] = (float)v[i]; break;
        case DAGGER_I32: ((int32_t *)raw)[i] = (int32_t)v[i]; break;
        default: ((int64_t *)raw)[i] = (int64_t)v[i]; break;
        }
    dagger_array_t *a;
    AR_OK(dagger_array_from_host(rt, &d, raw, &a));
    free(raw);
    return a;
}

/* One random sweep of y op= sum(window of a), and in half the cases a
 * second expression a op= sum(window of y) (it reads the first one's
 * result), run once or twice: 1-3-D, dims 1-20, any block size, windows
 * of width 0-3 with every boundary kind per dimension (those create
 * refuses must be refused with DAGGER_ERR_INVALID_ARG), mixed dtypes and
 * distributions. Small integer values keep every sum exact, so the result
 * must equal the serial reference's exactly. */
static void random_sweep(dagger_runtime_t *rt, int it, int *table)
{
    static const dagger_dtype_t types[4] = {DAGGER_F64, DAGGER_F32, DAGGER_I32, DAGGER_I64};
    int nd = 1 + (int)rnd(3), nexpr = 1 + (int)rnd(2);
    size_t dims[3] = {1, 1, 1}, blk[3] = {1, 1, 1}, nb = 1;
    size_t dist[2][3] = {{0}};
    dagger_boundary_t bc[2][3] = {{{DAGGER_BC_WRAP, 0}}};
    for (int k = 0; k < nd; k++) {
        dims[k] = 1 + rnd(nd == 1 ? 20 : nd == 2 ? 9 : 6);
        blk[k] = 1 + rnd(dims[k] + 1);
        nb *= (dims[k] + blk[k] - 1) / blk[k];
        for (int q = 0; q < 2; q++) {
            dist[q][k] = rnd(q ? 3 : 4);
            bc[q][k] = (dagger_boundary_t){(dagger_boundary_kind_t)(1 + rnd(8)), (double)rnd(5) - 2};
        }
    }
    dagger_array_desc_t da = ar_desc(types[rnd(4)], nd, dims, blk), dy = da;
    dy.dtype = types[rnd(4)];
    dagger_dist_t dist2d = {.kind = DAGGER_DIST_CYCLIC_2D}, tab = {.kind = DAGGER_DIST_TABLE};
    size_t how = rnd(3);
    if (how == 1)
        da.dist = &dist2d;
    if (how == 2 && nb <= 1024) {
        for (size_t b = 0; b < nb; b++)
            table[b] = (int)rnd((size_t)dagger_nranks(rt));
        tab.table = table;
        tab.ntable = nb;
        da.dist = &tab;
    }
    size_t n = ar_count(&da);
    double *va = malloc(n * sizeof(double)), *vy = malloc(n * sizeof(double));
    double *sum = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        va[i] = (double)rnd(9) - 4;
        vy[i] = (double)rnd(5);
    }
    dagger_array_t *a = from_values(rt, da, va), *y = from_values(rt, dy, vy);
    static const dagger_op_t ops[3] = {DAGGER_OP_SET, DAGGER_OP_ADD, DAGGER_OP_SUB};
    dagger_stencil_expr_t ex[2];
    for (int q = 0; q < nexpr; q++) {
        ex[q] = (dagger_stencil_expr_t){.out = q ? a : y, .assign = ops[rnd(3)],
                                        .kernel = DAGGER_STENCIL_SUM, .nin = 1};
        ex[q].in[0].array = q ? y : a;
        memcpy(ex[q].in[0].dist, dist[q], sizeof(dist[q]));
        memcpy(ex[q].in[0].bc, bc[q], sizeof(bc[q]));
    }
    char what[200];
    snprintf(what, sizeof(what), "sweep %d: %d-D %zux%zux%zu, blocks %zux%zux%zu, %d expression(s)",
             it, nd, dims[0], dims[1], dims[2], blk[0], blk[1], blk[2], nexpr);
    dagger_stencil_t *s;
    dagger_status_t st = dagger_stencil_create(rt, nexpr, ex, &s);
    if (st != DAGGER_OK) {
        cr_assert_eq(st, DAGGER_ERR_INVALID_ARG, "%s: %s", what, dagger_error_detail());
        cr_assert(strstr(dagger_error_detail(), "past the edge") ||
                      strstr(dagger_error_detail(), "at least 2 elements"),
                  "%s: %s", what, dagger_error_detail());
    } else {
        int runs = 1 + (int)rnd(2);
        for (int r = 0; r < runs; r++) {
            AR_OK(dagger_stencil_run(NULL, s));
            for (int q = 0; q < nexpr; q++) { /* the serial sweep */
                double *out = q ? va : vy;
                dagger_dtype_t t = q ? da.dtype : dy.dtype;
                ar_ref_sum(q ? vy : va, sum, nd, dims, dist[q], bc[q]);
                for (size_t i = 0; i < n; i++) {
                    double v = ex[q].assign == DAGGER_OP_SET   ? sum[i]
                               : ex[q].assign == DAGGER_OP_ADD ? out[i] + sum[i]
                                                               : out[i] - sum[i];
                    out[i] = t == DAGGER_F32 ? (double)(float)v : v;
                }
            }
        }
        ar_expect(y, vy, 0, what);
        ar_expect(a, va, 0, what);
        AR_OK(dagger_stencil_destroy(s));
    }
    free(va);
    free(vy);
    free(sum);
    AR_DESTROY(a, y);
}

Test(array_stencil, random_sweeps_against_serial)
{
    dagger_runtime_t *rt = ar_init();
    rnd_state = 88172645463325252ull; /* the same sweeps on every rank */
    int table[1024];
    for (int it = 0; it < 120; it++)
        random_sweep(rt, it, table);
    AR_OK(dagger_finalize(rt));
}
