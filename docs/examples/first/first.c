/* first: the main Dagger-C demo. One SPMD program, run alone or on N ranks:
 *
 *   ./first                          (a singleton)
 *   tools/dagger-run -n 4 ./first    (prterun, srun --mpi=pmix or mpirun)
 *
 * 1. A 12x12 array in 4x4 blocks, spread over the ranks; one task per block
 *    increments it in place; collect gives A+1 on every rank.
 * 2. A tiled Cholesky factorisation with the linear algebra library
 *    (dagger/linalg.h: potrf/trsm/syrk/gemm tasks with OpenBLAS kernels on
 *    64x64 tiles of a 256x256 SPD matrix): the runtime places each task
 *    where its output tile lives and moves the tiles it reads; the residual
 *    checks it.
 * 3. A heat-diffusion stencil with Wrap boundaries on the array, then a
 *    reduction: the total heat is conserved.
 * Exits 0 only when every check holds. */
#include <dagger.h>
#include <dagger/array.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                     \
    do {                                                                                \
        dagger_status_t st_ = (call);                                                   \
        if (st_ != DAGGER_OK) {                                                         \
            fprintf(stderr, "%s failed: %s: %s\n", #call, dagger_strerror(st_),         \
                    dagger_error_detail());                                             \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* ---- step 1: increment every block ---- */

static int inc(dagger_task_t *t)
{
    dagger_slot_t x = dagger_task_arg(t, 0);
    double *p = x.data;
    for (size_t j = 0; j < x.dims[1]; j++)
        for (size_t i = 0; i < x.dims[0]; i++)
            p[i * x.strides[0] + j * x.strides[1]] += 1.0;
    return DAGGER_OK;
}

static int increment_blocks(dagger_runtime_t *rt)
{
    dagger_codelet_t cl;
    CHECK(dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "first.inc", .cpu = inc}, &cl));
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {12, 12}, .block = {4, 4}};
    dagger_array_t *a;
    CHECK(dagger_array_rand(rt, &d, 42, &a));
    double before[144], after[144];
    CHECK(dagger_array_collect(a, before));
    dagger_region_t *r;
    CHECK(dagger_region_begin(rt, NULL, &r));
    for (size_t b = 0; b < dagger_array_nblocks(a); b++)
        CHECK(dagger_spawn(r, cl, DAGGER_INOUT(dagger_array_block(a, b)), DAGGER_END));
    CHECK(dagger_region_end(r));
    CHECK(dagger_array_collect(a, after));
    int ok = 1;
    for (int i = 0; i < 144; i++)
        ok &= after[i] == before[i] + 1.0;
    if (dagger_rank(rt) == 0)
        printf("1. 12x12 array in 4x4 blocks over %d ranks, each block incremented by a task: "
               "A[0] %.4f -> %.4f, all 144 elements +1: %s\n", dagger_nranks(rt), before[0],
               after[0], ok ? "yes" : "NO");
    dagger_array_destroy(a);
    return ok;
}

/* ---- step 2: tiled Cholesky ---- */

#define N 256
#define T 64

/* A symmetric positive definite matrix, as a function of the global index
 * (registered by name, so every rank names the same function). */
static double spd(const size_t idx[], int ndims, const void *args)
{
    (void)ndims, (void)args;
    size_t i = idx[0], j = idx[1];
    return (i == j ? (double)N : 0.0) + 1.0 / (1.0 + (double)(i > j ? i - j : j - i));
}

static int cholesky(dagger_runtime_t *rt)
{
    dagger_index_fn_id_t fn;
    CHECK(dagger_index_fn_register(rt, "first.spd", spd, &fn));
    dagger_dist_t cyc = {.kind = DAGGER_DIST_CYCLIC_2D};
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {N, N}, .block = {T, T},
                             .dist = &cyc};
    dagger_array_t *a;
    CHECK(dagger_array_from_fn(rt, &d, fn, NULL, 0, &a));
    /* potrf, trsm, syrk and gemm tasks on the 4x4 tiles (OpenBLAS/LAPACKE
     * kernels): each runs where its output tile lives. */
    CHECK(dagger_linalg_potrf(NULL, DAGGER_LA_LOWER, a));
    dagger_region_stats_t st;
    CHECK(dagger_region_stats(rt, &st));
    /* Residual max |L L^T - A| over the lower triangle, on every rank. */
    static double l[N * N];
    CHECK(dagger_array_collect(a, l));
    double worst = 0;
    for (size_t j = 0; j < N; j++)
        for (size_t i = j; i < N; i++) {
            double s = 0;
            for (size_t k = 0; k <= j; k++)
                s += l[i + k * N] * l[j + k * N];
            worst = fmax(worst, fabs(s - spd((size_t[]){i, j}, 2, NULL)));
        }
    int ok = worst < 1e-9;
    if (dagger_rank(rt) == 0)
        printf("2. tiled Cholesky (dagger_linalg_potrf) of a %dx%d matrix in %dx%d tiles: %llu "
               "tasks, %llu transfers between ranks, max |L L^T - A| = %.2e: %s\n", N, N, T, T,
               (unsigned long long)st.tasks, (unsigned long long)st.transfers, worst,
               ok ? "correct" : "WRONG");
    dagger_array_destroy(a);
    return ok;
}

/* ---- step 3: heat diffusion with Wrap boundaries ---- */

static int heat(dagger_runtime_t *rt)
{
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {32, 32}, .block = {8, 8}};
    dagger_array_t *u;
    CHECK(dagger_array_rand(rt, &d, 7, &u));
    dagger_future_t f0, f1;
    CHECK(dagger_array_reduce(NULL, DAGGER_OP_ADD, u, &f0));
    double before, after;
    CHECK(dagger_fetch(rt, f0, &before, sizeof(before), NULL));
    /* One sweep, two expressions: u = sum of its 3x3 window (Wrap in both
     * dimensions, old values), then u *= 1/9. Prepared once, run 20 times. */
    dagger_stencil_expr_t e[2] = {
        {.out = u, .assign = DAGGER_OP_SET, .kernel = DAGGER_STENCIL_SUM, .nin = 1,
         .in = {{.array = u, .dist = {1, 1},
                 .bc = {{.kind = DAGGER_BC_WRAP}, {.kind = DAGGER_BC_WRAP}}}}},
        {.out = u, .assign = DAGGER_OP_MUL, .kernel = DAGGER_STENCIL_CONST, .value = 1.0 / 9.0},
    };
    dagger_stencil_t *sweep;
    CHECK(dagger_stencil_create(rt, 2, e, &sweep));
    for (int s = 0; s < 20; s++)
        CHECK(dagger_stencil_run(NULL, sweep));
    CHECK(dagger_stencil_destroy(sweep));
    CHECK(dagger_array_reduce(NULL, DAGGER_OP_ADD, u, &f1));
    CHECK(dagger_fetch(rt, f1, &after, sizeof(after), NULL));
    int ok = fabs(after - before) < 1e-9 * fabs(before);
    if (dagger_rank(rt) == 0)
        printf("3. 20 heat-diffusion sweeps (3x3 average, Wrap) on a 32x32 array: total heat "
               "%.6f -> %.6f: %s\n", before, after, ok ? "conserved" : "NOT conserved");
    CHECK(dagger_future_free(rt, f0));
    CHECK(dagger_future_free(rt, f1));
    dagger_array_destroy(u);
    return ok;
}

int main(int argc, char **argv)
{
    dagger_runtime_t *rt;
    CHECK(dagger_init(&argc, &argv, NULL, &rt));
    if (dagger_rank(rt) == 0)
        printf("Dagger-C first demo: %d rank(s), %d worker thread(s) per rank\n",
               dagger_nranks(rt), dagger_num_threads(rt));
    int ok = increment_blocks(rt);
    ok &= cholesky(rt);
    ok &= heat(rt);
    CHECK(dagger_finalize(rt));
    return ok ? 0 : 1;
}
