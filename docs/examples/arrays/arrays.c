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

int main(int argc, char **argv)
{
    dagger_runtime_t *rt;
    CHECK(dagger_init(&argc, &argv, NULL, &rt));
    affine_boundaries(rt);
    if (dagger_rank(rt) == 0)
        printf("arrays example: %s\n", failures ? "FAILED" : "ok");
    CHECK(dagger_finalize(rt));
    return failures ? 1 : 0;
}
