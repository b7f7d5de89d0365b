/* Stencils on device data: a sweep run in a region whose scope admits only
 * the suite's devices (test devices, or CUDA devices with DG_GPU_SUITE=cuda)
 * runs its pack, extend and sweep tasks there (the halo strips are sub-views
 * that move packed between devices and ranks) and gives what the CPU run
 * gives. The cases below compare every array of a sweep after a device run
 * with the same sweep run on CPUs from the same starting values, element by
 * element and EXACTLY (the same bytes: the device kernels add in the CPU's
 * order and round alike): every boundary kind, fused sweeps and sweeps with
 * pack tasks, f64, f32, i32 (saturating) and i64 (wrapping ghosts), 3-D,
 * several expressions in phases, the update operators, the element-wise
 * operand of dagger_stencil_apply_binop's fused form; and a kernel of the
 * user's, which a CUDA device cannot run (the sweep fails on every rank,
 * saying to use a CPU scope). */
#include "core/array/stencil_internal.h"
#include "gpu/gpu_kind.h"
#include "multirank/array_util.h"

static void sweep(dagger_runtime_t *rt, dagger_stencil_t *s, const dagger_scope_t *scope,
                  dagger_region_stats_t *st)
{
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, scope, &r));
    AR_OK(dagger_stencil_run(r, s));
    AR_OK(dagger_region_end(r));
    AR_OK(dagger_region_stats(rt, st));
}

Test(gpu_stencil, a_wrapped_window_sum_on_devices_equals_the_cpu_one)
{
    dagger_runtime_t *rt = ar_init();
    double x[64];
    for (int k = 0; k < 64; k++)
        x[k] = (double)((k * 7) % 11);
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 8, 8, 4, 4);
    dagger_array_t *a, *on_cpu, *on_dev;
    AR_OK(dagger_array_from_host(rt, &d, x, &a));
    AR_OK(dagger_array_zeros(rt, &d, &on_cpu));
    AR_OK(dagger_array_zeros(rt, &d, &on_dev));
    dagger_stencil_expr_t e = {.kernel = DAGGER_STENCIL_SUM, .nin = 1};
    e.in[0].array = a;
    for (int k = 0; k < 2; k++) {
        e.in[0].dist[k] = 1;
        e.in[0].bc[k] = (dagger_boundary_t){.kind = DAGGER_BC_WRAP};
    }
    dagger_stencil_t *sc, *sd;
    e.out = on_cpu;
    AR_OK(dagger_stencil_create(rt, 1, &e, &sc));
    e.out = on_dev;
    AR_OK(dagger_stencil_create(rt, 1, &e, &sd));
    dagger_region_stats_t cpu_st, dev_st;
    sweep(rt, sc, NULL, &cpu_st);
    dagger_scope_t devs = {.kinds = gpu_kind()};
    sweep(rt, sd, &devs, &dev_st);
    cr_assert_eq(cpu_st.copies, 0, "the CPU sweep stays in host memory");
    cr_assert_gt(dev_st.copies, 0, "the device sweep copies to and from device memory");
    double want[64];
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < 8; i++) {
            double sum = 0;
            for (int dj = -1; dj <= 1; dj++)
                for (int di = -1; di <= 1; di++)
                    sum += x[(i + di + 8) % 8 + 8 * ((j + dj + 8) % 8)];
            want[i + 8 * j] = sum;
        }
    ar_expect(on_cpu, want, 0, "CPU");
    ar_expect(on_dev, want, 0, gpu_kind_name());
    AR_OK(dagger_stencil_destroy(sc));
    AR_OK(dagger_stencil_destroy(sd));
    AR_DESTROY(a, on_cpu, on_dev);
    AR_OK(dagger_finalize(rt));
}

/* ------------------------------------------------------------ device run == CPU run */

#define MAX_ARR 6

/* A sweep and every array it touches, made afresh for each run. */
typedef struct st_case {
    int nexpr;
    dagger_stencil_expr_t e[4];
    uint32_t lhs[4];                    /* dg_st_create's element-wise operations (0: none) */
    int narr;
    dagger_array_t *arr[MAX_ARR];
} st_case_t;

/* A deterministic array: values with fractions that do not add exactly
 * (floats), or spread integers; `big` moves integers near INT32_MAX. */
static dagger_array_t *make(dagger_runtime_t *rt, st_case_t *c, dagger_dtype_t t,
                            const dagger_array_desc_t *shape, unsigned seed, int big)
{
    dagger_array_desc_t d = *shape;
    d.dtype = t;
    size_t n = ar_count(&d);
    void *h = malloc(n * 8);
    cr_assert(h);
    for (size_t k = 0; k < n; k++) {
        uint32_t u = (uint32_t)((k + 1) * 2654435761u + seed * 40503u);
        double f = (double)(u % 2000u) / 7.0 - 140.3; /* never 0: z /= x below */
        int64_t i = (int64_t)(u % 201u) - 100 + (big ? INT32_MAX - 300 : 0);
        switch (t) {
        case DAGGER_F32: ((float *)h)[k] = (float)f; break;
        case DAGGER_F64: ((double *)h)[k] = f; break;
        case DAGGER_I32: ((int32_t *)h)[k] = (int32_t)i; break;
        default: ((int64_t *)h)[k] = i * 1000003; break;
        }
    }
    dagger_array_t *a;
    AR_OK(dagger_array_from_host(rt, &d, h, &a));
    free(h);
    cr_assert_lt(c->narr, MAX_ARR);
    c->arr[c->narr++] = a;
    return a;
}

static void window(dagger_stencil_input_t *in, dagger_array_t *a, int nd, const size_t dist[],
                   const dagger_boundary_t bc[])
{
    in->array = a;
    for (int k = 0; k < nd; k++) {
        in->dist[k] = dist[k];
        in->bc[k] = bc[k];
    }
}

typedef void (*setup_fn)(dagger_runtime_t *rt, st_case_t *c, const void *arg);

/* Every array of the case after one run of its sweep, raw. */
static void run_once(dagger_runtime_t *rt, setup_fn setup, const void *arg,
                     const dagger_scope_t *scope, void *out[MAX_ARR], size_t len[MAX_ARR],
                     dagger_dtype_t type[MAX_ARR], int *narr, dagger_region_stats_t *st)
{
    st_case_t c;
    memset(&c, 0, sizeof(c));
    setup(rt, &c, arg);
    dagger_stencil_t *s;
    AR_OK(dg_st_create(rt, c.nexpr, c.e, c.lhs, &s));
    sweep(rt, s, scope, st);
    AR_OK(dagger_stencil_destroy(s));
    for (int i = 0; i < c.narr; i++) {
        dagger_array_desc_t d;
        AR_OK(dagger_array_info(c.arr[i], &d));
        type[i] = d.dtype;
        len[i] = ar_count(&d);
        out[i] = malloc(len[i] * dagger_dtype_size(d.dtype));
        cr_assert(out[i]);
        AR_OK(dagger_array_collect(c.arr[i], out[i]));
        AR_OK(dagger_array_destroy(c.arr[i]));
    }
    *narr = c.narr;
}

/* The case run on CPUs and on the suite's devices: every array the same,
 * byte for byte. */
static void same_on_device(dagger_runtime_t *rt, setup_fn setup, const void *arg,
                           const char *what)
{
    void *cpu[MAX_ARR], *dev[MAX_ARR];
    size_t len[MAX_ARR], len2[MAX_ARR];
    dagger_dtype_t type[MAX_ARR], type2[MAX_ARR];
    int n, n2;
    dagger_region_stats_t cst, dst;
    run_once(rt, setup, arg, NULL, cpu, len, type, &n, &cst);
    dagger_scope_t devs = {.kinds = gpu_kind()};
    run_once(rt, setup, arg, &devs, dev, len2, type2, &n2, &dst);
    cr_assert_eq(cst.copies, 0, "%s: the CPU sweep stays in host memory", what);
    cr_assert_gt(dst.copies, 0, "%s: the device sweep copies to and from device memory", what);
    cr_assert_eq(n, n2);
    for (int i = 0; i < n; i++) {
        size_t es = dagger_dtype_size(type[i]);
        for (size_t k = 0; k < len[i]; k++)
            cr_assert(memcmp((char *)cpu[i] + k * es, (char *)dev[i] + k * es, es) == 0,
                      "%s on %ss: array %d element %zu is %.17g, on CPUs %.17g", what,
                      gpu_kind_name(), i, k, ar_get(type[i], dev[i], k),
                      ar_get(type[i], cpu[i], k));
        free(cpu[i]);
        free(dev[i]);
    }
}

/* ---- every boundary kind ---- */

typedef struct bc_arg {
    dagger_dtype_t t;
    dagger_boundary_kind_t k0, k1;
    int in_place;                      /* x = sum(window x): pack tasks, not fused */
} bc_arg_t;

/* y (or x itself) = the window sum of x, 9 x 7 in blocks 4 x 3 (edge
 * blocks shorter), window 2 x 1, one kind per dimension. */
static void bc_setup(dagger_runtime_t *rt, st_case_t *c, const void *arg)
{
    const bc_arg_t *b = arg;
    dagger_array_desc_t d = AR_D2(b->t, 9, 7, 4, 3);
    dagger_array_t *x = make(rt, c, b->t, &d, 1, 0);
    dagger_array_t *y = b->in_place ? x : make(rt, c, b->t, &d, 2, 0);
    c->nexpr = 1;
    c->e[0] = (dagger_stencil_expr_t){.out = y, .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    window(&c->e[0].in[0], x, 2, (size_t[]){2, 1},
           (dagger_boundary_t[]){{b->k0, 1.5}, {b->k1, -2.25}});
}

static const dagger_boundary_kind_t all_kinds[] = {
    DAGGER_BC_WRAP, DAGGER_BC_CLAMP, DAGGER_BC_PAD, DAGGER_BC_REFLECT_SYMMETRIC,
    DAGGER_BC_REFLECT_MIRROR, DAGGER_BC_ANTIREFLECT_SYMMETRIC, DAGGER_BC_ANTIREFLECT_MIRROR,
    DAGGER_BC_LINEAR_EXTRAPOLATE};
#define NKINDS (sizeof(all_kinds) / sizeof(all_kinds[0]))

Test(gpu_stencil, every_boundary_kind_in_f64_equals_the_cpu_run_exactly)
{
    dagger_runtime_t *rt = ar_init();
    for (size_t i = 0; i < NKINDS; i++) {
        bc_arg_t b = {DAGGER_F64, all_kinds[i], all_kinds[(i + 3) % NKINDS], 0};
        char what[64];
        snprintf(what, sizeof(what), "f64, kinds %d and %d", (int)b.k0, (int)b.k1);
        same_on_device(rt, bc_setup, &b, what);
    }
    AR_OK(dagger_finalize(rt));
}

/* In place, the index kinds go through pack tasks too (the fused sweep
 * cannot read a block that a neighbour's sweep may overwrite). */
Test(gpu_stencil, in_place_sweeps_with_pack_tasks_equal_the_cpu_run_exactly)
{
    dagger_runtime_t *rt = ar_init();
    for (size_t i = 0; i < NKINDS; i++) {
        bc_arg_t b = {DAGGER_F64, all_kinds[i], all_kinds[NKINDS - 1 - i], 1};
        char what[64];
        snprintf(what, sizeof(what), "in place, kinds %d and %d", (int)b.k0, (int)b.k1);
        same_on_device(rt, bc_setup, &b, what);
    }
    AR_OK(dagger_finalize(rt));
}

Test(gpu_stencil, f32_i32_and_i64_sweeps_equal_the_cpu_run_exactly)
{
    dagger_runtime_t *rt = ar_init();
    const dagger_dtype_t types[] = {DAGGER_F32, DAGGER_I32, DAGGER_I64};
    for (size_t t = 0; t < 3; t++)
        for (size_t i = 0; i < NKINDS; i++) {
            bc_arg_t b = {types[t], all_kinds[i], all_kinds[(i + 5) % NKINDS], (int)(i & 1)};
            char what[64];
            snprintf(what, sizeof(what), "dtype %d, kinds %d and %d", (int)b.t, (int)b.k0,
                     (int)b.k1);
            same_on_device(rt, bc_setup, &b, what);
        }
    AR_OK(dagger_finalize(rt));
}

/* ---- dtypes meeting, saturation, 3-D ---- */

/* An f64 sum of an f32 input, and an i32 sum near INT32_MAX that saturates
 * (padded with a value past it: the pad itself saturates). */
static void mixed_setup(dagger_runtime_t *rt, st_case_t *c, const void *arg)
{
    (void)arg;
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 10, 6, 3, 4);
    dagger_array_t *x = make(rt, c, DAGGER_F32, &d, 3, 0);
    dagger_array_t *y = make(rt, c, DAGGER_F64, &d, 4, 0);
    dagger_array_t *n = make(rt, c, DAGGER_I32, &d, 5, 1);
    dagger_array_t *m = make(rt, c, DAGGER_I32, &d, 6, 0);
    c->nexpr = 2;
    c->e[0] = (dagger_stencil_expr_t){.out = y, .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    window(&c->e[0].in[0], x, 2, (size_t[]){1, 2},
           (dagger_boundary_t[]){{DAGGER_BC_REFLECT_MIRROR, 0}, {DAGGER_BC_CLAMP, 0}});
    c->e[1] = (dagger_stencil_expr_t){.out = m, .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    window(&c->e[1].in[0], n, 2, (size_t[]){1, 1},
           (dagger_boundary_t[]){{DAGGER_BC_PAD, 3e9}, {DAGGER_BC_WRAP, 0}});
}

/* 3-D, a window along every dimension, index and affine kinds mixed (the
 * corners are affine rules of ghosts). */
static void cube_setup(dagger_runtime_t *rt, st_case_t *c, const void *arg)
{
    const dagger_dtype_t *t = arg;
    dagger_array_desc_t d = AR_D3(*t, 5, 4, 6, 2, 3, 4);
    dagger_array_t *x = make(rt, c, *t, &d, 7, 0);
    dagger_array_t *y = make(rt, c, *t, &d, 8, 0);
    c->nexpr = 1;
    c->e[0] = (dagger_stencil_expr_t){.out = y, .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    window(&c->e[0].in[0], x, 3, (size_t[]){1, 2, 1},
           (dagger_boundary_t[]){{DAGGER_BC_ANTIREFLECT_MIRROR, 0}, {DAGGER_BC_WRAP, 0},
                                 {DAGGER_BC_LINEAR_EXTRAPOLATE, 0}});
}

Test(gpu_stencil, mixed_dtypes_saturation_and_3d_equal_the_cpu_run_exactly)
{
    dagger_runtime_t *rt = ar_init();
    same_on_device(rt, mixed_setup, NULL, "f32 into f64, saturating i32");
    const dagger_dtype_t f64 = DAGGER_F64, i64 = DAGGER_I64;
    same_on_device(rt, cube_setup, &f64, "3-D f64");
    same_on_device(rt, cube_setup, &i64, "3-D i64");
    AR_OK(dagger_finalize(rt));
}

/* ---- several expressions, the update operators ---- */

/* y = sum(x) (Wrap); z += y (width 0: the y just written); y *= 0.5;
 * then, a phase of its own (a window of y, written above), w -= sum(y)
 * (Clamp) and z /= x. */
static void multi_setup(dagger_runtime_t *rt, st_case_t *c, const void *arg)
{
    (void)arg;
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 8, 9, 3, 4);
    dagger_array_t *x = make(rt, c, DAGGER_F64, &d, 9, 0);
    dagger_array_t *y = make(rt, c, DAGGER_F64, &d, 10, 0);
    dagger_array_t *z = make(rt, c, DAGGER_F64, &d, 11, 0);
    dagger_array_t *w = make(rt, c, DAGGER_F32, &d, 12, 0);
    dagger_boundary_t wrap[2] = {{DAGGER_BC_WRAP, 0}, {DAGGER_BC_WRAP, 0}};
    dagger_boundary_t clamp[2] = {{DAGGER_BC_CLAMP, 0}, {DAGGER_BC_CLAMP, 0}};
    c->nexpr = 4;
    c->e[0] = (dagger_stencil_expr_t){.out = y, .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    window(&c->e[0].in[0], x, 2, (size_t[]){1, 1}, wrap);
    c->e[1] = (dagger_stencil_expr_t){.out = z, .assign = DAGGER_OP_ADD,
                                      .kernel = DAGGER_STENCIL_COPY, .nin = 1};
    c->e[1].in[0].array = y;
    c->e[2] = (dagger_stencil_expr_t){.out = y, .assign = DAGGER_OP_MUL,
                                      .kernel = DAGGER_STENCIL_CONST, .value = 0.5};
    c->e[3] = (dagger_stencil_expr_t){.out = w, .assign = DAGGER_OP_SUB,
                                      .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    window(&c->e[3].in[0], y, 2, (size_t[]){2, 1}, clamp);
}

/* z /= x, then x += sum(x) in place (Reflect), as two phases. */
static void update_setup(dagger_runtime_t *rt, st_case_t *c, const void *arg)
{
    (void)arg;
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 7, 7, 4, 4);
    dagger_array_t *x = make(rt, c, DAGGER_F64, &d, 13, 0);
    dagger_array_t *z = make(rt, c, DAGGER_F64, &d, 14, 0);
    dagger_boundary_t refl[2] = {{DAGGER_BC_REFLECT_SYMMETRIC, 0},
                                 {DAGGER_BC_REFLECT_SYMMETRIC, 0}};
    c->nexpr = 2;
    c->e[0] = (dagger_stencil_expr_t){.out = z, .assign = DAGGER_OP_DIV,
                                      .kernel = DAGGER_STENCIL_COPY, .nin = 1};
    c->e[0].in[0].array = x;
    c->e[1] = (dagger_stencil_expr_t){.out = x, .assign = DAGGER_OP_ADD,
                                      .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    window(&c->e[1].in[0], x, 2, (size_t[]){1, 1}, refl);
}

/* dagger_stencil_apply_binop's fused form: c = a - sum(x), a an element-wise
 * operand of the sweep (lhs). */
static void lhs_setup(dagger_runtime_t *rt, st_case_t *c, const void *arg)
{
    (void)arg;
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 9, 5, 4, 5);
    dagger_array_t *x = make(rt, c, DAGGER_F64, &d, 15, 0);
    dagger_array_t *a = make(rt, c, DAGGER_F32, &d, 16, 0);
    dagger_array_t *o = make(rt, c, DAGGER_F64, &d, 17, 0);
    c->nexpr = 1;
    c->lhs[0] = DAGGER_OP_SUB;
    c->e[0] = (dagger_stencil_expr_t){.out = o, .kernel = DAGGER_STENCIL_SUM, .nin = 1};
    window(&c->e[0].in[0], x, 2, (size_t[]){1, 1},
           (dagger_boundary_t[]){{DAGGER_BC_PAD, 0.25}, {DAGGER_BC_WRAP, 0}});
    c->e[0].in[1].array = a;
}

Test(gpu_stencil, several_expressions_and_update_operators_equal_the_cpu_run_exactly)
{
    dagger_runtime_t *rt = ar_init();
    same_on_device(rt, multi_setup, NULL, "=, +=, *=, -= in two phases");
    same_on_device(rt, update_setup, NULL, "/=, then += in place");
    same_on_device(rt, lhs_setup, NULL, "a - sum(x), fused");
    AR_OK(dagger_finalize(rt));
}

/* ---- a kernel of the user's ---- */

static double laplace(const dagger_window_t *in, int nin, const size_t idx[], const void *args)
{
    (void)nin, (void)idx, (void)args;
    const dagger_window_t *w = &in[0];
    return DAGGER_WIN2(w, double, -1, 0) + DAGGER_WIN2(w, double, 1, 0) +
           DAGGER_WIN2(w, double, 0, -1) + DAGGER_WIN2(w, double, 0, 1) -
           4 * DAGGER_WIN2(w, double, 0, 0);
}

static dagger_stencil_kernel_t user_kernel;

static void user_setup(dagger_runtime_t *rt, st_case_t *c, const void *arg)
{
    (void)arg;
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 6, 6, 3, 3);
    dagger_array_t *x = make(rt, c, DAGGER_F64, &d, 18, 0);
    dagger_array_t *y = make(rt, c, DAGGER_F64, &d, 19, 0);
    c->nexpr = 1;
    c->e[0] = (dagger_stencil_expr_t){.out = y, .kernel = user_kernel, .nin = 1};
    window(&c->e[0].in[0], x, 2, (size_t[]){1, 1},
           (dagger_boundary_t[]){{DAGGER_BC_WRAP, 0}, {DAGGER_BC_WRAP, 0}});
}

/* A test device runs the CPU implementation, so the user's kernel runs
 * there; a CUDA device cannot call a host function: the sweep fails on every
 * rank with a message that says what to change, and nothing crashes. */
Test(gpu_stencil, a_user_kernel_runs_on_test_devices_and_fails_clearly_on_cuda)
{
    dagger_runtime_t *rt = ar_init();
    AR_OK(dagger_stencil_kernel_register(rt, "gpu_stencil_laplace", laplace, &user_kernel));
    if (gpu_kind() != DAGGER_PROC_CUDA) {
        same_on_device(rt, user_setup, NULL, "a user kernel");
        AR_OK(dagger_finalize(rt));
        return;
    }
    st_case_t c;
    memset(&c, 0, sizeof(c));
    user_setup(rt, &c, NULL);
    dagger_stencil_t *s;
    AR_OK(dagger_stencil_create(rt, c.nexpr, c.e, &s));
    dagger_scope_t devs = {.kinds = gpu_kind()};
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, &devs, &r));
    AR_OK(dagger_stencil_run(r, s));
    AR_FAILS(dagger_region_end(r), DAGGER_ERR_TASK_FAILED, "cannot run on a CUDA device");
    cr_assert(strstr(dagger_error_detail(), "scope admits CPUs"), "%s", dagger_error_detail());
    /* the same stencil on CPUs still runs */
    sweep(rt, s, NULL, &(dagger_region_stats_t){0});
    AR_OK(dagger_stencil_destroy(s));
    AR_DESTROY(c.arr[0], c.arr[1]);
    AR_OK(dagger_finalize(rt));
}
