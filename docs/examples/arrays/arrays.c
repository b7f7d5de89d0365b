/* arrays: the examples of docs/arrays.md for boundary conditions,
 * reductions along a dimension, views and allocating stencils, checked.
 *
 *   ./example_arrays                          (a singleton)
 *   tools/dagger-run -n 2 ./example_arrays    (any launcher)
 *
 * Exits 0 only when every check holds. */
#include <dagger.h>
#include <dagger/array.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* A failed call ends the program with the runtime's explanation. */
static void check(dagger_status_t st, const char *call)
{
    if (st == DAGGER_OK)
        return;
    fprintf(stderr, "%s failed: %s: %s\n", call, dagger_strerror(st), dagger_error_detail());
    exit(1);
}
#define CHECK(call) check((call), #call)

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "wrong: %s\n", what);
        failures++;
    }
}

/* A ramp continued past both edges: with LinearExtrapolate (or the odd
 * mirror) the window sums of a linear function are exact. */
static void affine_boundaries(dagger_runtime_t *rt)
{
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 1, .dims = {10}, .block = {4}};
    double ramp[10], sum[10];
    for (int i = 0; i < 10; i++)
        ramp[i] = 3.0 * i + 1;
    dagger_array_t *x, *y;
    CHECK(dagger_array_from_host(rt, &d, ramp, &x));
    CHECK(dagger_array_zeros(rt, &d, &y));
    dagger_stencil_expr_t e = {.out = y, .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    e.in[0] = (dagger_stencil_input_t){.array = x, .dist = {2},
                                       .bc = {{DAGGER_BC_LINEAR_EXTRAPOLATE, 0}}};
    CHECK(dagger_stencil_apply(rt, 1, &e));
    CHECK(dagger_array_collect(y, sum));
    for (int i = 0; i < 10; i++)
        expect(sum[i] == 5 * ramp[i], "LinearExtrapolate continues a ramp");
    CHECK(dagger_array_destroy(x));
    CHECK(dagger_array_destroy(y));
}

/* Row sums and column norms of a matrix with one huge column: the norm
 * of values near DBL_MAX does not overflow. */
static void reduce_along_dims(dagger_runtime_t *rt)
{
    enum { M = 6, N = 5 };
    double v[M * N], rows[M], cols[N];
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++)
            v[i + M * j] = j == 4 ? 1e300 : i + 10.0 * j;
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {M, N}, .block = {4, 2}};
    dagger_array_desc_t rd = d, cd = d;
    rd.dims[1] = 1;
    cd.dims[0] = 1;
    dagger_array_t *x, *r, *c;
    CHECK(dagger_array_from_host(rt, &d, v, &x));
    CHECK(dagger_array_zeros(rt, &rd, &r));
    CHECK(dagger_array_zeros(rt, &cd, &c));
    CHECK(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, x, 1, r));
    CHECK(dagger_array_reduce_dim(NULL, DAGGER_OP_NORM2, x, 0, c));
    CHECK(dagger_array_collect(r, rows));
    CHECK(dagger_array_collect(c, cols));
    for (int i = 0; i < M; i++)
        expect(fabs(rows[i] - (4 * i + 60.0 + 1e300)) <= 1e-15 * 1e300, "row sum");
    expect(fabs(cols[4] - 1e300 * sqrt(6.0)) <= 1e-15 * cols[4], "norm near DBL_MAX");
    expect(cols[0] == sqrt(0.0 + 1 + 4 + 9 + 16 + 25), "ordinary norm");
    CHECK(dagger_array_destroy(x));
    CHECK(dagger_array_destroy(r));
    CHECK(dagger_array_destroy(c));
}

/* Rows 10..20 of a 30 x 20 matrix of ones: doubled in place, summed. */
static void views(dagger_runtime_t *rt)
{
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {30, 20}, .block = {8, 8}};
    dagger_array_t *x, *rows;
    CHECK(dagger_array_ones(rt, &d, &x));
    CHECK(dagger_array_view(x, (size_t[]){10, 0}, (size_t[]){11, 20}, &rows));
    CHECK(dagger_array_scalar(NULL, DAGGER_OP_MUL, rows, rows, 2.0));
    dagger_future_t f;
    double in_rows, all;
    CHECK(dagger_array_reduce(NULL, DAGGER_OP_ADD, rows, &f));
    CHECK(dagger_fetch(rt, f, &in_rows, sizeof(in_rows), NULL));
    CHECK(dagger_array_reduce(NULL, DAGGER_OP_ADD, x, &f));
    CHECK(dagger_fetch(rt, f, &all, sizeof(all), NULL));
    expect(in_rows == 2 * 11 * 20, "the sum of the doubled rows");
    expect(all == 600 + 11 * 20, "only the rows changed");
    CHECK(dagger_array_destroy(rows));
    CHECK(dagger_array_destroy(x));
}

/* y = window sums of x (allocated), then c = x + stencil(x), fused. */
static void allocating_and_fused(dagger_runtime_t *rt)
{
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {8, 6}, .block = {4, 3}};
    dagger_array_t *x, *y, *c;
    CHECK(dagger_array_ones(rt, &d, &x));
    CHECK(dagger_array_zeros(rt, &d, &c));
    dagger_stencil_expr_t e = {.kernel = DAGGER_STENCIL_SUM, .nin = 1};
    e.in[0] = (dagger_stencil_input_t){.array = x, .dist = {1, 1},
                                       .bc = {{DAGGER_BC_WRAP, 0}, {DAGGER_BC_WRAP, 0}}};
    CHECK(dagger_stencil_apply_new(rt, &e, &y));
    CHECK(dagger_stencil_apply_binop(rt, DAGGER_OP_ADD, c, x, &e));
    double vy[48], vc[48];
    CHECK(dagger_array_collect(y, vy));
    CHECK(dagger_array_collect(c, vc));
    for (int i = 0; i < 48; i++)
        expect(vy[i] == 9 && vc[i] == 10, "y = 9 and c = 1 + 9 everywhere");
    CHECK(dagger_array_destroy(x));
    CHECK(dagger_array_destroy(y));
    CHECK(dagger_array_destroy(c));
}

int main(int argc, char **argv)
{
    dagger_runtime_t *rt;
    CHECK(dagger_init(&argc, &argv, NULL, &rt));
    affine_boundaries(rt);
    reduce_along_dims(rt);
    views(rt);
    allocating_and_fused(rt);
    if (dagger_rank(rt) == 0)
        printf("arrays example: %s\n", failures ? "FAILED" : "ok");
    CHECK(dagger_finalize(rt));
    return failures ? 1 : 0;
}
