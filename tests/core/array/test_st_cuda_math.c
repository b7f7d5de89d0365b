/* The stencil's CUDA arithmetic (core/array/cuda/st_cuda_math.h, the code
 * the kernels run) on the host, no GPU needed: its stores against the CPU's
 * dg_arr_store, and whole sweeps of one block against the CPU codelets'
 * results through the public API, byte for byte. A sweep here builds the
 * padded buffer from boxes (the block, and per index boundary kind the
 * ghost zones as forward, reversed or repeated source boxes or the pad
 * value, derived here from the boundary table of docs/arrays.md rather
 * than from the pack planner), fills the affine ghosts line by line, and
 * evaluates `y += sum(window)` element by element: every boundary kind, for
 * f64, f32, i32 and i64. */
#include <criterion/criterion.h>
#include <dagger.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/array/array_internal.h"
#include "core/array/cuda/st_cuda_math.h"

static const dagger_dtype_t types[] = {DAGGER_F64, DAGGER_F32, DAGGER_I32, DAGGER_I64};

Test(st_cuda_math, stores_convert_as_the_cpu_does)
{
    const double v[] = {0.0, -0.0, 1.5, -1.5, 2147483647.0, 2147483648.0, -2147483649.0,
                        9.3e18, -9.3e18, 9223372036854775807.0, INFINITY, -INFINITY, NAN,
                        1e-310, 3.5e38, 1e39};
    for (size_t t = 0; t < 4; t++)
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
            unsigned char a[8] = {0}, b[8] = {0};
            dg_arr_store(types[t], a, v[i]);
            dg_st_store((uint32_t)types[t], (char *)b, v[i]);
            cr_assert(memcmp(a, b, 8) == 0, "dtype %d, %g: %02x%02x.. vs the CPU's %02x%02x..",
                      (int)types[t], v[i], b[0], b[1], a[0], a[1]);
        }
}

/* A window of -0.0 sums to -0.0 in the CPU's 3-row width-1 case (it starts
 * from the first element) and to +0.0 otherwise (it starts from 0). */
Test(st_cuda_math, window_sums_start_as_the_cpu_does)
{
    double z[5 * 5];
    for (int i = 0; i < 25; i++)
        z[i] = -0.0;
    dg_st_in_t in = {.base = (const char *)&z[12], .stride = {1, 5}, .dtype = DAGGER_F64};
    in.dist[0] = 1, in.dist[1] = 1;
    cr_assert(signbit(dg_st_window_sum(&in, in.base)), "3 x 3: -0.0");
    in.dist[1] = 0;
    cr_assert(!signbit(dg_st_window_sum(&in, in.base)), "1-D: +0.0");
}

/* ------------------------------------------------------------ one block, padded by boxes */

#define N0 7
#define N1 6

typedef struct zone {
    size_t dst, len, src;
    int dir, fill;
} zone_t;

static int affine(dagger_boundary_kind_t k)
{
    return k == DAGGER_BC_ANTIREFLECT_SYMMETRIC || k == DAGGER_BC_ANTIREFLECT_MIRROR ||
           k == DAGGER_BC_LINEAR_EXTRAPOLATE;
}

/* The zones of a padded dimension of length n + 2d: the block, and for an
 * index kind its two ghost zones (an affine kind's are computed later). */
static int zones(dagger_boundary_kind_t bc, size_t n, size_t d, zone_t z[3])
{
    z[0] = (zone_t){d, n, 0, 1, 0};
    if (!d || affine(bc))
        return 1;
    zone_t lo = {0, d, 0, 0, 0}, hi = {d + n, d, 0, 0, 0};
    switch (bc) {
    case DAGGER_BC_WRAP: lo = (zone_t){0, d, n - d, 1, 0}, hi.dir = 1; break;
    case DAGGER_BC_CLAMP: hi.src = n - 1; break;
    case DAGGER_BC_PAD: lo.fill = hi.fill = 1; break;
    case DAGGER_BC_REFLECT_SYMMETRIC: lo.dir = -1, hi = (zone_t){d + n, d, n - d, -1, 0}; break;
    default: lo = (zone_t){0, d, 1, -1, 0}, hi = (zone_t){d + n, d, n - d - 1, -1, 0}; break;
    }
    z[1] = lo;
    z[2] = hi;
    return 3;
}

typedef struct sweep_case {
    dagger_dtype_t t;
    dagger_boundary_t bc[2];
    size_t d[2];
} sweep_case_t;

/* x's padded buffer p (dims pd) from boxes, as the CUDA codelets build it. */
static void pad_boxes(const sweep_case_t *c, const char *x, char *p, const size_t pd[2])
{
    size_t es = dagger_dtype_size(c->t);
    zone_t z0[3], z1[3];
    int n0 = zones(c->bc[0].kind, N0, c->d[0], z0), n1 = zones(c->bc[1].kind, N1, c->d[1], z1);
    for (int a = 0; a < n0; a++)
        for (int b = 0; b < n1; b++) {
            dg_st_box_t box = {.dst = p + (z0[a].dst + z1[b].dst * pd[0]) * es,
                               .src = x + (z0[a].src + z1[b].src * N0) * es,
                               .dstride = {1, (int64_t)pd[0]}, .sstride = {1, N0},
                               .ext = {z0[a].len, z1[b].len, 1, 1},
                               .dir = {z0[a].dir, z1[b].dir, 1, 1}, .es = (uint32_t)es};
            if (z0[a].fill || z1[b].fill) { /* the lowest padded dimension's value */
                unsigned char v[8] = {0};
                dg_arr_store(c->t, v, z0[a].fill ? c->bc[0].pad : c->bc[1].pad);
                memcpy(&box.fill, v, 8);
                box.src = NULL;
            }
            for (uint64_t k = 0; k < dg_st_box_count(&box); k++)
                dg_st_box_elem(&box, k);
        }
}

/* The affine ghosts, dimension 0 first: along 0 over the rows of dimension
 * 1 in range when 1 is affine too (its ghosts come after), else all rows. */
static void pad_affine(const sweep_case_t *c, char *p, const size_t pd[2])
{
    size_t es = dagger_dtype_size(c->t), n[2] = {N0, N1};
    for (uint32_t k = 0; k < 2; k++) {
        if (!c->d[k] || !affine(c->bc[k].kind))
            continue;
        dagger_boundary_kind_t b = c->bc[k].kind;
        dg_st_ext_t x = {.base = p, .stride = {1, (int64_t)pd[0]}, .ext = {pd[0], pd[1], 1, 1},
                         .dim = k, .count = (uint32_t)c->d[k], .dtype = (uint32_t)c->t,
                         .ghost = b == DAGGER_BC_LINEAR_EXTRAPOLATE ? DG_ST_G_LINEAR
                                  : b == DAGGER_BC_ANTIREFLECT_MIRROR ? DG_ST_G_ANTI_MIRROR
                                                                      : DG_ST_G_ANTI_SYM};
        x.ext[k] = 1;
        if (k == 0 && c->d[1] && affine(c->bc[1].kind)) {
            x.base = p + c->d[1] * pd[0] * es;
            x.ext[1] = N1;
        }
        for (int side = -1; side <= 1; side += 2) {
            x.side = side;
            x.edge = side < 0 ? c->d[k] : c->d[k] + n[k] - 1;
            for (uint64_t l = 0; l < dg_st_ext_count(&x); l++)
                dg_st_ext_line(&x, l);
        }
    }
}

/* Deterministic values: fractions that do not add exactly, spread integers
 * (i64 near 2^62, where the affine ghosts wrap). */
static void fill(dagger_dtype_t t, void *h, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        uint32_t u = (uint32_t)((k + 1) * 2654435761u);
        double f = (double)(u % 2000u) / 7.0 - 140.3;
        int64_t i = (int64_t)(u % 201u) - 100;
        switch (t) {
        case DAGGER_F32: ((float *)h)[k] = (float)f; break;
        case DAGGER_F64: ((double *)h)[k] = f; break;
        case DAGGER_I32: ((int32_t *)h)[k] = (int32_t)i; break;
        default: ((int64_t *)h)[k] = (int64_t)u * 1000000007 + ((int64_t)1 << 62); break;
        }
    }
}

/* y = 3; y += sum(window of x) on the CPU (the runtime) and here. */
static void same_as_cpu(dagger_runtime_t *rt, const sweep_case_t *c)
{
    size_t es = dagger_dtype_size(c->t), pd[2] = {N0 + 2 * c->d[0], N1 + 2 * c->d[1]};
    char *x = calloc(N0 * N1, es), *cpu = calloc(N0 * N1, es), *y = calloc(N0 * N1, es);
    char *p = calloc(pd[0] * pd[1], es);
    cr_assert(x && cpu && y && p);
    fill(c->t, x, N0 * N1);
    dagger_array_desc_t d = {.dtype = c->t, .ndims = 2, .dims = {N0, N1}, .block = {N0, N1}};
    dagger_array_t *ax, *ay;
    cr_assert_eq(dagger_array_from_host(rt, &d, x, &ax), DAGGER_OK);
    cr_assert_eq(dagger_array_full(rt, &d, 3.0, &ay), DAGGER_OK);
    dagger_stencil_expr_t e = {.out = ay, .assign = DAGGER_OP_ADD, .kernel = DAGGER_STENCIL_SUM,
                               .nin = 1};
    e.in[0] = (dagger_stencil_input_t){.array = ax, .dist = {c->d[0], c->d[1]},
                                       .bc = {c->bc[0], c->bc[1]}};
    cr_assert_eq(dagger_stencil_apply(rt, 1, &e), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dagger_array_collect(ay, cpu), DAGGER_OK);
    cr_assert_eq(dagger_array_destroy(ax), DAGGER_OK);
    cr_assert_eq(dagger_array_destroy(ay), DAGGER_OK);

    pad_boxes(c, x, p, pd);
    pad_affine(c, p, pd);
    for (size_t k = 0; k < N0 * N1; k++)
        dg_arr_store(c->t, y + k * es, 3.0);
    dg_st_expr_t ex = {.out = y, .ostride = {1, N0}, .ext = {N0, N1, 1, 1},
                       .kernel = DG_ST_K_SUM, .assign = DAGGER_OP_ADD, .nin = 1,
                       .odtype = (uint32_t)c->t};
    ex.in[0] = (dg_st_in_t){.base = p + (c->d[0] + c->d[1] * pd[0]) * es,
                            .stride = {1, (int64_t)pd[0]},
                            .dist = {(int64_t)c->d[0], (int64_t)c->d[1]}, .dtype = (uint32_t)c->t};
    for (uint64_t k = 0; k < dg_st_expr_count(&ex); k++)
        dg_st_expr_elem(&ex, k);
    for (size_t k = 0; k < N0 * N1; k++)
        cr_assert(memcmp(y + k * es, cpu + k * es, es) == 0,
                  "dtype %d, kinds %d/%d: element %zu differs from the CPU's", (int)c->t,
                  (int)c->bc[0].kind, (int)c->bc[1].kind, k);
    free(x), free(cpu), free(y), free(p);
}

Test(st_cuda_math, one_block_sweeps_equal_the_cpu_codelets_for_every_kind_and_dtype)
{
    static const dagger_boundary_kind_t kinds[] = {
        DAGGER_BC_WRAP, DAGGER_BC_CLAMP, DAGGER_BC_PAD, DAGGER_BC_REFLECT_SYMMETRIC,
        DAGGER_BC_REFLECT_MIRROR, DAGGER_BC_ANTIREFLECT_SYMMETRIC, DAGGER_BC_ANTIREFLECT_MIRROR,
        DAGGER_BC_LINEAR_EXTRAPOLATE};
    dagger_runtime_t *rt;
    cr_assert_eq(dagger_init(NULL, NULL, NULL, &rt), DAGGER_OK);
    for (size_t t = 0; t < 4; t++)
        for (size_t i = 0; i < 8; i++)
            for (size_t j = 0; j < 8; j += 3) {
                sweep_case_t c = {.t = types[t], .d = {2, 1},
                                  .bc = {{kinds[i], 1.5}, {kinds[(i + j) % 8], -2.25}}};
                same_as_cpu(rt, &c);
            }
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}
