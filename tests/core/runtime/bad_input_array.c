/* Bad-input probes of dagger/array.h: constructors, queries, collect,
 * element-wise operations, reductions and stencils. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tests/core/runtime/bad_input.h"

static dagger_array_desc_t desc(void)
{
    return (dagger_array_desc_t){.dtype = DAGGER_F64, .ndims = 2, .dims = {4, 4}, .block = {2, 2}};
}

static double idx_fn(const size_t index[], int ndims, const void *args)
{
    (void)ndims, (void)args;
    return (double)index[0];
}

static int map_to_seven(const size_t block[], int ndims, int nranks, void *ctx)
{
    (void)block, (void)ndims, (void)nranks, (void)ctx;
    return 7;
}

/* ------------------------------------------------------------ constructors */

typedef dagger_status_t (*ctor_fn)(dagger_runtime_t *rt, const dagger_array_desc_t *d,
                                   dagger_array_t **out);

/* What every constructor must refuse: bad runtime, description, output,
 * distribution, and a call inside a region. */
static void bad_descs(ctor_fn make)
{
    dagger_array_desc_t d = desc();
    dagger_array_t *a = (dagger_array_t *)BI.foreign;
    E(DAGGER_ERR_BAD_HANDLE, make(NULL, &d, &a));
    cr_expect_null(a, "a failed constructor leaves *out NULL");
    E(DAGGER_ERR_BAD_HANDLE, make(BI.dead, &d, &a));
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, NULL, &a));
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, &d, NULL));
    int ndims[] = {0, -2, DAGGER_MAX_DIMS + 1};
    for (int i = 0; i < 3; i++) {
        d = desc();
        d.ndims = ndims[i];
        E(DAGGER_ERR_INVALID_ARG, make(BI.rt, &d, &a));
    }
    d = desc();
    d.dims[1] = 0;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, &d, &a));
    d = desc();
    d.block[0] = 0;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, &d, &a));
    d = desc();
    d.dtype = DAGGER_U8;
    E(DAGGER_ERR_DTYPE, make(BI.rt, &d, &a));
    d.dtype = (dagger_dtype_t)42;
    E(DAGGER_ERR_DTYPE, make(BI.rt, &d, &a));
    d = desc();
    d.dims[0] = d.dims[1] = SIZE_MAX / 4;
    d.block[0] = d.block[1] = SIZE_MAX / 4;
    E(DAGGER_ERR_OVERFLOW, make(BI.rt, &d, &a));
    d = desc();
    int table[3] = {0, 0, 0}; /* 4 blocks */
    dagger_dist_t short_table = {.kind = DAGGER_DIST_TABLE, .table = table, .ntable = 3};
    d.dist = &short_table;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, &d, &a));
    dagger_dist_t null_table = {.kind = DAGGER_DIST_TABLE, .ntable = 4};
    d.dist = &null_table;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, &d, &a));
    int far[4] = {0, 3, 0, 0};
    dagger_dist_t far_table = {.kind = DAGGER_DIST_TABLE, .table = far, .ntable = 4};
    d.dist = &far_table;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, &d, &a));
    dagger_dist_t map = {.kind = DAGGER_DIST_MAP, .map = map_to_seven};
    d.dist = &map;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, &d, &a));
    dagger_dist_t nomap = {.kind = DAGGER_DIST_MAP};
    d.dist = &nomap;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, &d, &a));
    dagger_dist_t grid = {.kind = DAGGER_DIST_CYCLIC_2D, .prows = 2, .pcols = 3};
    d.dist = &grid;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, &d, &a));
    dagger_dist_t kind = {.kind = (dagger_dist_kind_t)99};
    d.dist = &kind;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, &d, &a));
    d = desc();
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_STATE, make(BI.rt, &d, &a));
    bi_close(r);
    E(DAGGER_OK, make(BI.rt, &d, &a));
    E(DAGGER_OK, dagger_array_destroy(a));
}

static dagger_index_fn_id_t idx_id(void)
{
    dagger_index_fn_id_t id;
    cr_assert_eq(dagger_index_fn_register(BI.rt, "bi.idx", idx_fn, &id), DAGGER_OK);
    return id;
}

static dagger_status_t full_half(dagger_runtime_t *rt, const dagger_array_desc_t *d,
                                 dagger_array_t **out)
{
    return dagger_array_full(rt, d, 0.5, out);
}
static dagger_status_t rand_7(dagger_runtime_t *rt, const dagger_array_desc_t *d,
                              dagger_array_t **out)
{
    return dagger_array_rand(rt, d, 7, out);
}
static dagger_status_t randn_7(dagger_runtime_t *rt, const dagger_array_desc_t *d,
                               dagger_array_t **out)
{
    return dagger_array_randn(rt, d, 7, out);
}
static dagger_status_t from_idx(dagger_runtime_t *rt, const dagger_array_desc_t *d,
                                dagger_array_t **out)
{
    return dagger_array_from_fn(rt, d, idx_id(), NULL, 0, out);
}
static double host16[16];
static dagger_status_t from_host16(dagger_runtime_t *rt, const dagger_array_desc_t *d,
                                   dagger_array_t **out)
{
    return dagger_array_from_host(rt, d, host16, out);
}

void bi_probe_dagger_array_zeros(void)
{
    bad_descs(dagger_array_zeros);
}

void bi_probe_dagger_array_ones(void)
{
    bad_descs(dagger_array_ones);
}

void bi_probe_dagger_array_full(void)
{
    bad_descs(full_half);
    dagger_array_desc_t d = desc();
    d.dtype = DAGGER_I32;
    dagger_array_t *a;
    E(DAGGER_ERR_INVALID_ARG, dagger_array_full(BI.rt, &d, 0.5, &a));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_full(BI.rt, &d, 1e30, &a));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_full(BI.rt, &d, NAN, &a));
}

void bi_probe_dagger_array_rand(void)
{
    bad_descs(rand_7);
}

void bi_probe_dagger_array_randn(void)
{
    bad_descs(randn_7);
    dagger_array_desc_t d = desc();
    d.dtype = DAGGER_I64;
    dagger_array_t *a;
    E(DAGGER_ERR_DTYPE, dagger_array_randn(BI.rt, &d, 1, &a));
}

void bi_probe_dagger_array_from_fn(void)
{
    bad_descs(from_idx);
    dagger_array_desc_t d = desc();
    dagger_array_t *a;
    E(DAGGER_ERR_NOT_FOUND, dagger_array_from_fn(BI.rt, &d, (dagger_index_fn_id_t){12345}, NULL, 0, &a));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_from_fn(BI.rt, &d, idx_id(), NULL, 8, &a));
}

void bi_probe_dagger_array_from_host(void)
{
    bad_descs(from_host16);
    dagger_array_desc_t d = desc();
    dagger_array_t *a;
    E(DAGGER_ERR_TASK_FAILED, dagger_array_from_host(BI.rt, &d, NULL, &a)); /* rank 0 */
}

void bi_probe_dagger_rand_bits(void)
{
    cr_expect_eq(dagger_rand_bits(UINT64_MAX, UINT64_MAX), dagger_rand_bits(UINT64_MAX, UINT64_MAX));
}

void bi_probe_dagger_rand_uniform(void)
{
    double u = dagger_rand_uniform(UINT64_MAX, UINT64_MAX);
    cr_expect(u >= 0 && u < 1);
}

void bi_probe_dagger_rand_normal(void)
{
    cr_expect(isfinite(dagger_rand_normal(0, 0)));
    cr_expect(isfinite(dagger_rand_normal(UINT64_MAX, UINT64_MAX)));
}

static double other_fn(const size_t index[], int ndims, const void *args)
{
    (void)index, (void)ndims, (void)args;
    return 1;
}

void bi_probe_dagger_index_fn_register(void)
{
    dagger_index_fn_id_t id;
    E(DAGGER_ERR_BAD_HANDLE, dagger_index_fn_register(NULL, "bi.i", idx_fn, &id));
    E(DAGGER_ERR_BAD_HANDLE, dagger_index_fn_register(BI.dead, "bi.i", idx_fn, &id));
    E(DAGGER_ERR_INVALID_ARG, dagger_index_fn_register(BI.rt, NULL, idx_fn, &id));
    E(DAGGER_ERR_INVALID_ARG, dagger_index_fn_register(BI.rt, "", idx_fn, &id));
    E(DAGGER_ERR_INVALID_ARG, dagger_index_fn_register(BI.rt, "bi.i", NULL, &id));
    E(DAGGER_ERR_INVALID_ARG, dagger_index_fn_register(BI.rt, "bi.i", idx_fn, NULL));
    E(DAGGER_ERR_INVALID_ARG, dagger_index_fn_register(BI.rt, bi_long_name(), idx_fn, &id));
    E(DAGGER_OK, dagger_index_fn_register(BI.rt, "bi.i", idx_fn, &id));
    E(DAGGER_ERR_EXISTS, dagger_index_fn_register(BI.rt, "bi.i", other_fn, &id));
}

/* ------------------------------------------------------------ handles and queries */

/* Array handles that are not live arrays. */
#define BAD_ARRAYS                                                                           \
    {NULL, BI.a_gone, (dagger_array_t *)BI.s, (dagger_array_t *)BI.rt,                      \
     (dagger_array_t *)BI.foreign}
#define NBAD 5

void bi_probe_dagger_array_similar(void)
{
    dagger_array_t *bad[] = BAD_ARRAYS, *out;
    for (int i = 0; i < NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_similar(bad[i], &out));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_similar(BI.a, NULL));
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_STATE, dagger_array_similar(BI.a, &out));
    bi_close(r);
    E(DAGGER_OK, dagger_array_similar(BI.a, &out));
}

void bi_probe_dagger_array_destroy(void)
{
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_destroy(bad[i]));
    E(DAGGER_OK, dagger_array_destroy(BI.a));
    E(DAGGER_ERR_BAD_HANDLE, dagger_array_destroy(BI.a));
}

void bi_probe_dagger_array_info(void)
{
    dagger_array_t *bad[] = BAD_ARRAYS;
    dagger_array_desc_t d;
    for (int i = 0; i < NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_info(bad[i], &d));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_info(BI.a, NULL));
    E(DAGGER_OK, dagger_array_info(BI.a, &d));
}

void bi_probe_dagger_array_nblocks(void)
{
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++)
        cr_expect_eq(dagger_array_nblocks(bad[i]), 0);
    cr_expect_eq(dagger_array_nblocks(BI.a), 4);
}

void bi_probe_dagger_array_block_info(void)
{
    dagger_array_t *bad[] = BAD_ARRAYS;
    dagger_array_block_t info;
    for (int i = 0; i < NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_block_info(bad[i], 0, &info));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_block_info(BI.a, 4, &info));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_block_info(BI.a, SIZE_MAX, &info));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_block_info(BI.a, 0, NULL));
    E(DAGGER_OK, dagger_array_block_info(BI.a, 3, &info));
}

void bi_probe_dagger_array_block(void)
{
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++)
        cr_expect_eq(dagger_array_block(bad[i], 0).ndims, 0);
    cr_expect_eq(dagger_array_block(BI.a, 4).ndims, 0);
    cr_expect_eq(dagger_array_block(BI.a, SIZE_MAX).ndims, 0);
    cr_expect_eq(dagger_array_block(BI.a, 0).ndims, 2);
}

/* ------------------------------------------------------------ collect and scatter */

static double out16[16];

void bi_probe_dagger_array_collect(void)
{
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_collect(bad[i], out16));
    E(DAGGER_ERR_TASK_FAILED, dagger_array_collect(BI.a, NULL));
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_STATE, dagger_array_collect(BI.a, out16));
    bi_close(r);
    E(DAGGER_OK, dagger_array_collect(BI.a, out16));
}

void bi_probe_dagger_array_collect_to(void)
{
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_collect_to(bad[i], 0, out16));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_collect_to(BI.a, 1, out16));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_collect_to(BI.a, -2, out16));
    E(DAGGER_ERR_TASK_FAILED, dagger_array_collect_to(BI.a, 0, NULL));
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_STATE, dagger_array_collect_to(BI.a, 0, out16));
    bi_close(r);
    E(DAGGER_OK, dagger_array_collect_to(BI.a, 0, out16));
}

void bi_probe_dagger_array_collect_box(void)
{
    size_t off[] = {1, 1}, ext[] = {2, 2}, past[] = {4, 1}, huge[] = {SIZE_MAX, 2};
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_collect_box(bad[i], off, ext, 0, out16));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_collect_box(BI.a, NULL, ext, 0, out16));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_collect_box(BI.a, off, NULL, 0, out16));
    E(DAGGER_ERR_BAD_VIEW, dagger_array_collect_box(BI.a, off, past, 0, out16));
    E(DAGGER_ERR_BAD_VIEW, dagger_array_collect_box(BI.a, huge, ext, 0, out16));
    E(DAGGER_ERR_BAD_VIEW, dagger_array_collect_box(BI.a, off, huge, 0, out16));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_collect_box(BI.a, off, ext, 3, out16));
    E(DAGGER_ERR_TASK_FAILED, dagger_array_collect_box(BI.a, off, ext, DAGGER_ALL_RANKS, NULL));
    E(DAGGER_OK, dagger_array_collect_box(BI.a, off, ext, DAGGER_ALL_RANKS, out16));
}

void bi_probe_dagger_array_scatter(void)
{
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_scatter(bad[i], host16));
    E(DAGGER_ERR_TASK_FAILED, dagger_array_scatter(BI.a, NULL));
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_STATE, dagger_array_scatter(BI.a, host16));
    bi_close(r);
    E(DAGGER_OK, dagger_array_scatter(BI.a, host16));
}

/* ------------------------------------------------------------ element-wise */

/* r: NULL or an open region; checks the bad regions first. */
typedef dagger_status_t (*unary_fn)(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in);

/* What every operation on (out, in) refuses: ended and foreign regions, bad
 * arrays on either side, a shape or dtype mismatch. */
static void bad_operands(unary_fn op)
{
    E(DAGGER_ERR_BAD_HANDLE, op(BI.r_gone, BI.a, BI.b));
    E(DAGGER_ERR_BAD_HANDLE, op((dagger_region_t *)BI.rt, BI.a, BI.b));
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, op(NULL, bad[i], BI.b));
        E(DAGGER_ERR_BAD_HANDLE, op(NULL, BI.a, bad[i]));
    }
    E(DAGGER_ERR_INVALID_ARG, op(NULL, BI.a, BI.v));
    E(DAGGER_ERR_DTYPE, op(NULL, BI.a, BI.ai));
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_BAD_HANDLE, op(r, BI.a_gone, BI.b));
    E(DAGGER_OK, op(r, BI.a, BI.b));
    bi_close(r);
    E(DAGGER_OK, op(NULL, BI.a, BI.b));
}

static dagger_status_t binop_add(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in)
{
    return dagger_array_binop(r, DAGGER_OP_ADD, out, out, in);
}
static dagger_status_t binop_add_b(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in)
{
    return dagger_array_binop(r, DAGGER_OP_ADD, out, in, in);
}
static dagger_status_t scalar_mul(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in)
{
    return dagger_array_scalar(r, DAGGER_OP_MUL, out, in, 2);
}
static dagger_status_t rscalar_sub(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in)
{
    return dagger_array_rscalar(r, DAGGER_OP_SUB, out, 1, in);
}
static dagger_status_t add_inline(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in)
{
    return dagger_array_add(r, out, in, in);
}
static dagger_status_t sub_inline(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in)
{
    return dagger_array_sub(r, out, in, in);
}
static dagger_status_t mul_inline(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in)
{
    return dagger_array_mul(r, out, in, in);
}
static dagger_status_t div_inline(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in)
{
    return dagger_array_div(r, out, out, in);
}

static void bad_ops(void)
{
    /* also operators of the shared enum that are not element-wise */
    int ops[] = {DAGGER_OP_SET, -1, DAGGER_OP_MIN, DAGGER_OP_BOR, DAGGER_OP_NORM2, 99};
    for (int i = 0; i < (int)(sizeof(ops) / sizeof(ops[0])); i++) {
        dagger_op_t op = (dagger_op_t)ops[i];
        E(DAGGER_ERR_INVALID_ARG, dagger_array_binop(NULL, op, BI.a, BI.a, BI.b));
        E(DAGGER_ERR_INVALID_ARG, dagger_array_scalar(NULL, op, BI.a, BI.b, 1));
        E(DAGGER_ERR_INVALID_ARG, dagger_array_rscalar(NULL, op, BI.a, 1, BI.b));
    }
}

void bi_probe_dagger_array_binop(void)
{
    bad_operands(binop_add);
    bad_operands(binop_add_b);
    bad_ops();
}

void bi_probe_dagger_array_scalar(void)
{
    bad_operands(scalar_mul);
    bad_ops();
    E(DAGGER_ERR_INVALID_ARG, dagger_array_scalar(NULL, DAGGER_OP_ADD, BI.ai, BI.ai, 0.25));
}

void bi_probe_dagger_array_rscalar(void)
{
    bad_operands(rscalar_sub);
    E(DAGGER_ERR_INVALID_ARG, dagger_array_rscalar(NULL, DAGGER_OP_ADD, BI.ai, NAN, BI.ai));
}

void bi_probe_dagger_array_add(void)
{
    bad_operands(add_inline);
}

void bi_probe_dagger_array_sub(void)
{
    bad_operands(sub_inline);
}

void bi_probe_dagger_array_mul(void)
{
    bad_operands(mul_inline);
}

void bi_probe_dagger_array_div(void)
{
    bad_operands(div_inline);
}

void bi_probe_dagger_array_copy(void)
{
    bad_operands(dagger_array_copy);
}

static dagger_status_t transpose_checked(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in)
{
    return dagger_array_transpose(r, out, in);
}

void bi_probe_dagger_array_transpose(void)
{
    bad_operands(transpose_checked);
    E(DAGGER_ERR_INVALID_ARG, dagger_array_transpose(NULL, BI.a, BI.a));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_transpose(NULL, BI.v, BI.v));
}

/* Operations on out alone: bad regions, bad arrays. */
typedef dagger_status_t (*fill_fn)(dagger_region_t *r, dagger_array_t *out);

static void bad_outputs(fill_fn fill)
{
    E(DAGGER_ERR_BAD_HANDLE, fill(BI.r_gone, BI.a));
    E(DAGGER_ERR_BAD_HANDLE, fill((dagger_region_t *)BI.foreign, BI.a));
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, fill(NULL, bad[i]));
    dagger_region_t *r = bi_open();
    E(DAGGER_OK, fill(r, BI.a));
    bi_close(r);
    E(DAGGER_OK, fill(NULL, BI.a));
}

static dagger_status_t fill_two(dagger_region_t *r, dagger_array_t *out)
{
    return dagger_array_fill(r, out, 2);
}
static dagger_status_t fill_rand(dagger_region_t *r, dagger_array_t *out)
{
    return dagger_array_fill_rand(r, out, 3);
}
static dagger_status_t fill_randn(dagger_region_t *r, dagger_array_t *out)
{
    return dagger_array_fill_randn(r, out, 3);
}
static dagger_status_t fill_idx(dagger_region_t *r, dagger_array_t *out)
{
    return dagger_array_fill_fn(r, out, idx_id(), NULL, 0);
}

void bi_probe_dagger_array_fill(void)
{
    bad_outputs(fill_two);
    E(DAGGER_ERR_INVALID_ARG, dagger_array_fill(NULL, BI.ai, 1.5));
}

void bi_probe_dagger_array_fill_rand(void)
{
    bad_outputs(fill_rand);
}

void bi_probe_dagger_array_fill_randn(void)
{
    bad_outputs(fill_randn);
    E(DAGGER_ERR_DTYPE, dagger_array_fill_randn(NULL, BI.ai, 1));
}

void bi_probe_dagger_array_fill_fn(void)
{
    bad_outputs(fill_idx);
    E(DAGGER_ERR_NOT_FOUND, dagger_array_fill_fn(NULL, BI.a, (dagger_index_fn_id_t){999}, NULL, 0));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_fill_fn(NULL, BI.a, idx_id(), NULL, 4));
}

void bi_probe_dagger_array_map(void)
{
    dagger_codelet_desc_t d = {.name = "bi.map", .cpu = bi_noop};
    dagger_codelet_t cl;
    cr_assert_eq(dagger_codelet_register(BI.rt, &d, &cl), DAGGER_OK);
    dagger_array_t *in[DAGGER_MAX_ARGS] = {BI.b};
    E(DAGGER_ERR_BAD_HANDLE, dagger_array_map(BI.r_gone, cl, BI.a, 1, in, NULL, 0));
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_map(NULL, cl, bad[i], 1, in, NULL, 0));
        dagger_array_t *bin[1] = {bad[i]};
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_map(NULL, cl, BI.a, 1, bin, NULL, 0));
    }
    E(DAGGER_ERR_NOT_FOUND, dagger_array_map(NULL, BI.cl_never, BI.a, 1, in, NULL, 0));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_map(NULL, cl, BI.a, -1, in, NULL, 0));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_map(NULL, cl, BI.a, DAGGER_MAX_ARGS - 1, in, NULL, 0));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_map(NULL, cl, BI.a, 1, NULL, NULL, 0));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_map(NULL, cl, BI.a, 1, in, NULL, 8));
    dagger_array_t *v[1] = {BI.v};
    E(DAGGER_ERR_INVALID_ARG, dagger_array_map(NULL, cl, BI.a, 1, v, NULL, 0));
    E(DAGGER_OK, dagger_array_map(NULL, cl, BI.a, 1, in, NULL, 0));
}

/* ------------------------------------------------------------ reductions */

void bi_probe_dagger_array_reduce(void)
{
    dagger_future_t f;
    E(DAGGER_ERR_BAD_HANDLE, dagger_array_reduce(BI.r_gone, DAGGER_OP_ADD, BI.a, &f));
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_reduce(NULL, DAGGER_OP_ADD, bad[i], &f));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_reduce(NULL, (dagger_op_t)0, BI.a, &f));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_reduce(NULL, (dagger_op_t)9, BI.a, &f));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_reduce(NULL, DAGGER_OP_SUB, BI.a, &f));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_reduce(NULL, DAGGER_OP_BOR, BI.a, &f));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_reduce(NULL, DAGGER_OP_ADD, BI.a, NULL));
    E(DAGGER_OK, dagger_array_reduce(NULL, DAGGER_OP_MAX, BI.a, &f));
}

void bi_probe_dagger_array_reduce_dim(void)
{
    dagger_array_t *out = NULL;
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {4, 1}, .block = {2, 1}};
    E(DAGGER_OK, dagger_array_zeros(BI.rt, &d, &out));
    E(DAGGER_ERR_BAD_HANDLE, dagger_array_reduce_dim(BI.r_gone, DAGGER_OP_ADD, BI.a, 1, out));
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, bad[i], 1, out));
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, BI.a, 1, bad[i]));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_array_reduce_dim(NULL, (dagger_op_t)0, BI.a, 1, out));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_reduce_dim(NULL, DAGGER_OP_MUL, BI.a, 1, out));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, BI.a, -1, out));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, BI.a, 2, out));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, BI.a, 0, out));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, BI.a, 1, BI.b));
    E(DAGGER_ERR_DTYPE, dagger_array_reduce_dim(NULL, DAGGER_OP_NORM2, BI.ai, 1, out));
    E(DAGGER_OK, dagger_array_reduce_dim(NULL, DAGGER_OP_MAX, BI.a, 1, out));
    E(DAGGER_OK, dagger_array_destroy(out));
}

void bi_probe_dagger_array_view(void)
{
    const size_t off[2] = {1, 1}, ext[2] = {2, 3}, past[2] = {4, 1}, huge[2] = {SIZE_MAX, 1};
    const size_t zero[2] = {0, 0};
    dagger_array_t *v = (dagger_array_t *)BI.foreign;
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_view(bad[i], off, ext, &v));
    cr_expect_null(v, "a failed view leaves *out NULL");
    E(DAGGER_ERR_INVALID_ARG, dagger_array_view(BI.a, NULL, ext, &v));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_view(BI.a, off, NULL, &v));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_view(BI.a, off, ext, NULL));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_view(BI.a, off, past, &v));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_view(BI.a, huge, ext, &v));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_view(BI.a, off, huge, &v));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_view(BI.a, off, zero, &v));
    dagger_region_t *r = bi_open();
    E(DAGGER_OK, dagger_array_view(BI.a, off, ext, &v)); /* no tasks: fine inside a region */
    bi_close(r);
    E(DAGGER_ERR_STATE, dagger_array_destroy(BI.a));
    E(DAGGER_OK, dagger_array_destroy(v));
}

void bi_probe_dagger_array_dot(void)
{
    dagger_future_t f;
    E(DAGGER_ERR_BAD_HANDLE, dagger_array_dot(BI.r_gone, BI.a, BI.b, &f));
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_dot(NULL, bad[i], BI.b, &f));
        E(DAGGER_ERR_BAD_HANDLE, dagger_array_dot(NULL, BI.a, bad[i], &f));
    }
    E(DAGGER_ERR_INVALID_ARG, dagger_array_dot(NULL, BI.a, BI.v, &f));
    E(DAGGER_ERR_DTYPE, dagger_array_dot(NULL, BI.a, BI.ai, &f));
    E(DAGGER_ERR_INVALID_ARG, dagger_array_dot(NULL, BI.a, BI.b, NULL));
    E(DAGGER_OK, dagger_array_dot(NULL, BI.a, BI.b, &f));
}

/* ------------------------------------------------------------ stencils */

static double st_fn(const dagger_window_t *in, int nin, const size_t index[], const void *args)
{
    (void)in, (void)nin, (void)index, (void)args;
    return 0;
}

void bi_probe_dagger_stencil_kernel_register(void)
{
    dagger_stencil_kernel_t k;
    E(DAGGER_ERR_BAD_HANDLE, dagger_stencil_kernel_register(NULL, "bi.k", st_fn, &k));
    E(DAGGER_ERR_BAD_HANDLE, dagger_stencil_kernel_register(BI.dead, "bi.k", st_fn, &k));
    E(DAGGER_ERR_INVALID_ARG, dagger_stencil_kernel_register(BI.rt, NULL, st_fn, &k));
    E(DAGGER_ERR_INVALID_ARG, dagger_stencil_kernel_register(BI.rt, "", st_fn, &k));
    E(DAGGER_ERR_INVALID_ARG, dagger_stencil_kernel_register(BI.rt, "bi.k", NULL, &k));
    E(DAGGER_ERR_INVALID_ARG, dagger_stencil_kernel_register(BI.rt, "bi.k", st_fn, NULL));
    E(DAGGER_OK, dagger_stencil_kernel_register(BI.rt, "bi.k", st_fn, &k));
}

static dagger_stencil_expr_t copy_expr(void)
{
    return (dagger_stencil_expr_t){.out = BI.b, .kernel = DAGGER_STENCIL_COPY, .nin = 1,
                                   .in = {{.array = BI.a}}};
}

/* What stencil_create and stencil_apply refuse. */
typedef dagger_status_t (*st_make_fn)(dagger_runtime_t *rt, int n, const dagger_stencil_expr_t *e);

static void bad_exprs(st_make_fn make)
{
    dagger_stencil_expr_t e = copy_expr();
    E(DAGGER_ERR_BAD_HANDLE, make(NULL, 1, &e));
    E(DAGGER_ERR_BAD_HANDLE, make(BI.dead, 1, &e));
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, 0, &e));
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, -1, &e));
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, 1, NULL));
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++) {
        e = copy_expr();
        e.out = bad[i];
        E(DAGGER_ERR_BAD_HANDLE, make(BI.rt, 1, &e));
        e = copy_expr();
        e.in[0].array = bad[i];
        E(DAGGER_ERR_BAD_HANDLE, make(BI.rt, 1, &e));
    }
    e = copy_expr();
    e.nin = DAGGER_STENCIL_MAX_IN + 1;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, 1, &e));
    e.nin = -1;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, 1, &e));
    e = copy_expr();
    e.in[0].array = BI.v;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, 1, &e));
    e = copy_expr();
    e.kernel = (dagger_stencil_kernel_t){4242};
    E(DAGGER_ERR_NOT_FOUND, make(BI.rt, 1, &e));
    e = copy_expr();
    e.assign = (dagger_op_t)17;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, 1, &e));
    e = copy_expr();
    e.assign = DAGGER_OP_MIN; /* a reduction operator: not an assignment */
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, 1, &e));
    e = copy_expr();
    e.in[0].dist[0] = 1;
    e.in[0].bc[0].kind = (dagger_boundary_kind_t)66;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, 1, &e));
    e = copy_expr();
    e.in[0].dist[0] = 5; /* wraps around a 4-long dimension more than once */
    e.in[0].bc[0].kind = DAGGER_BC_WRAP;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, 1, &e));
    e = copy_expr();
    e.in[0].dist[0] = SIZE_MAX;
    e.in[0].bc[0].kind = DAGGER_BC_CLAMP;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, 1, &e));
    e = copy_expr();
    e.args_len = 16;
    E(DAGGER_ERR_INVALID_ARG, make(BI.rt, 1, &e));
    e = copy_expr();
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_STATE, make(BI.rt, 1, &e));
    bi_close(r);
    E(DAGGER_OK, make(BI.rt, 1, &e));
}

static dagger_status_t create_destroy(dagger_runtime_t *rt, int n, const dagger_stencil_expr_t *e)
{
    dagger_stencil_t *s = (dagger_stencil_t *)BI.foreign;
    dagger_status_t st = dagger_stencil_create(rt, n, e, &s);
    if (st == DAGGER_OK)
        return dagger_stencil_destroy(s);
    cr_expect_null(s, "a failed dagger_stencil_create leaves *out NULL");
    return st;
}

void bi_probe_dagger_stencil_create(void)
{
    dagger_stencil_expr_t e = copy_expr();
    E(DAGGER_ERR_INVALID_ARG, dagger_stencil_create(BI.rt, 1, &e, NULL));
    bad_exprs(create_destroy);
}

void bi_probe_dagger_stencil_apply(void)
{
    bad_exprs(dagger_stencil_apply);
}

/* What the stencils that make their own arrays refuse, besides bad_exprs'. */
static void bad_own_output(dagger_status_t (*call)(const dagger_stencil_expr_t *e))
{
    dagger_stencil_expr_t e = copy_expr();
    E(DAGGER_ERR_INVALID_ARG, call(NULL));
    e.nin = 0;
    E(DAGGER_ERR_INVALID_ARG, call(&e));
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++) {
        e = copy_expr();
        e.in[0].array = bad[i];
        E(DAGGER_ERR_BAD_HANDLE, call(&e));
    }
    e = copy_expr();
    e.kernel = (dagger_stencil_kernel_t){4242};
    E(DAGGER_ERR_NOT_FOUND, call(&e));
    dagger_region_t *r = bi_open();
    e = copy_expr();
    E(DAGGER_ERR_STATE, call(&e));
    bi_close(r);
    E(DAGGER_OK, call(&e));
}

static dagger_status_t apply_new(const dagger_stencil_expr_t *e)
{
    dagger_array_t *y = (dagger_array_t *)BI.foreign;
    dagger_status_t st = dagger_stencil_apply_new(BI.rt, e, &y);
    if (st != DAGGER_OK)
        cr_expect_null(y, "a failed allocating stencil leaves *out NULL");
    else
        cr_expect_eq(dagger_array_destroy(y), DAGGER_OK);
    return st;
}

void bi_probe_dagger_stencil_apply_new(void)
{
    dagger_stencil_expr_t e = copy_expr();
    dagger_array_t *y;
    E(DAGGER_ERR_BAD_HANDLE, dagger_stencil_apply_new(NULL, &e, &y));
    E(DAGGER_ERR_BAD_HANDLE, dagger_stencil_apply_new(BI.dead, &e, &y));
    E(DAGGER_ERR_INVALID_ARG, dagger_stencil_apply_new(BI.rt, &e, NULL));
    bad_own_output(apply_new);
}

static dagger_status_t apply_binop(const dagger_stencil_expr_t *e)
{
    return dagger_stencil_apply_binop(BI.rt, DAGGER_OP_ADD, BI.b, BI.b, e);
}

void bi_probe_dagger_stencil_apply_binop(void)
{
    dagger_stencil_expr_t e = copy_expr();
    E(DAGGER_ERR_BAD_HANDLE, dagger_stencil_apply_binop(NULL, DAGGER_OP_ADD, BI.b, BI.b, &e));
    E(DAGGER_ERR_BAD_HANDLE, dagger_stencil_apply_binop(BI.dead, DAGGER_OP_ADD, BI.b, BI.b, &e));
    dagger_array_t *bad[] = BAD_ARRAYS;
    for (int i = 0; i < NBAD; i++) {
        E(DAGGER_ERR_BAD_HANDLE, dagger_stencil_apply_binop(BI.rt, DAGGER_OP_ADD, bad[i], BI.b, &e));
        E(DAGGER_ERR_BAD_HANDLE, dagger_stencil_apply_binop(BI.rt, DAGGER_OP_ADD, BI.b, bad[i], &e));
    }
    E(DAGGER_ERR_INVALID_ARG,
      dagger_stencil_apply_binop(BI.rt, (dagger_op_t)0, BI.b, BI.b, &e));
    E(DAGGER_ERR_INVALID_ARG,
      dagger_stencil_apply_binop(BI.rt, DAGGER_OP_MAX, BI.b, BI.b, &e));
    E(DAGGER_ERR_INVALID_ARG, dagger_stencil_apply_binop(BI.rt, DAGGER_OP_ADD, BI.v, BI.v, &e));
    E(DAGGER_ERR_DTYPE, dagger_stencil_apply_binop(BI.rt, DAGGER_OP_ADD, BI.b, BI.ai, &e));
    bad_own_output(apply_binop);
}

void bi_probe_dagger_stencil_run(void)
{
    dagger_stencil_t *bad[] = {NULL, BI.s_gone, (dagger_stencil_t *)BI.a, (dagger_stencil_t *)BI.rt,
                               (dagger_stencil_t *)BI.foreign};
    for (int i = 0; i < 5; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_stencil_run(NULL, bad[i]));
    E(DAGGER_ERR_BAD_HANDLE, dagger_stencil_run(BI.r_gone, BI.s));
    E(DAGGER_ERR_BAD_HANDLE, dagger_stencil_run((dagger_region_t *)BI.foreign, BI.s));
    dagger_region_t *r = bi_open();
    E(DAGGER_OK, dagger_stencil_run(r, BI.s));
    bi_close(r);
    E(DAGGER_OK, dagger_stencil_run(NULL, BI.s));
}

void bi_probe_dagger_stencil_destroy(void)
{
    dagger_stencil_t *bad[] = {NULL, BI.s_gone, (dagger_stencil_t *)BI.a, (dagger_stencil_t *)BI.rt,
                               (dagger_stencil_t *)BI.foreign};
    for (int i = 0; i < 5; i++)
        E(DAGGER_ERR_BAD_HANDLE, dagger_stencil_destroy(bad[i]));
    E(DAGGER_OK, dagger_stencil_destroy(BI.s));
    E(DAGGER_ERR_BAD_HANDLE, dagger_stencil_destroy(BI.s));
}
