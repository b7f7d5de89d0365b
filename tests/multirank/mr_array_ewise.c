/* Distributed arrays: element-wise operations against a serial reference,
 * with operands whose blocks differ (tiles) and in-place forms. */
#include <stdio.h>

#include "array_util.h"

static const dagger_dtype_t all_types[] = {DAGGER_F32, DAGGER_F64, DAGGER_I32, DAGGER_I64};

/* A host buffer of n elements of type t: small non-zero values of mixed
 * sign (integers for integer types), the same on every rank. */
static void *host_values(dagger_dtype_t t, size_t n, uint64_t seed)
{
    void *p = malloc(n * dagger_dtype_size(t));
    for (size_t i = 0; i < n; i++) {
        uint64_t r = dagger_rand_bits(seed, i);
        double v = (double)(int)(r % 199) - 99.0;
        v = v == 0 ? 7 : v;
        if (t == DAGGER_F32 || t == DAGGER_F64)
            v += (double)(r >> 40) / (double)(1ull << 24);
        switch (t) {
        case DAGGER_F32: ((float *)p)[i] = (float)v; break;
        case DAGGER_F64: ((double *)p)[i] = v; break;
        case DAGGER_I32: ((int32_t *)p)[i] = (int32_t)v; break;
        default: ((int64_t *)p)[i] = (int64_t)v; break;
        }
    }
    return p;
}

static dagger_array_t *from_values(dagger_runtime_t *rt, dagger_array_desc_t d, uint64_t seed)
{
    void *h = host_values(d.dtype, ar_count(&d), seed);
    dagger_array_t *a;
    AR_OK(dagger_array_from_host(rt, &d, h, &a));
    free(h);
    return a;
}

/* x op y computed in the array's type (integers wrap). */
static double ref_op(dagger_dtype_t t, dagger_op_t op, double x, double y)
{
    switch (t) {
    case DAGGER_F32: {
        float a = (float)x, b = (float)y;
        return op == DAGGER_OP_ADD ? a + b : op == DAGGER_OP_SUB ? a - b
               : op == DAGGER_OP_MUL ? a * b : a / b;
    }
    case DAGGER_F64:
        return op == DAGGER_OP_ADD ? x + y : op == DAGGER_OP_SUB ? x - y
               : op == DAGGER_OP_MUL ? x * y : x / y;
    default: {
        int64_t a = (int64_t)x, b = (int64_t)y, r;
        switch (op) {
        case DAGGER_OP_ADD: r = (int64_t)((uint64_t)a + (uint64_t)b); break;
        case DAGGER_OP_SUB: r = (int64_t)((uint64_t)a - (uint64_t)b); break;
        case DAGGER_OP_MUL: r = (int64_t)((uint64_t)a * (uint64_t)b); break;
        default: r = a / b; break;
        }
        return t == DAGGER_I32 ? (double)(int32_t)(uint32_t)(uint64_t)r : (double)r;
    }
    }
}

/* out = a op b with three different block grids, every op and type. */
Test(array_ewise, binop_every_type_mixed_blocks)
{
    dagger_runtime_t *rt = ar_init();
    for (int t = 0; t < 4; t++) {
        dagger_dtype_t ty = all_types[t];
        dagger_array_t *a = from_values(rt, AR_D2(ty, 11, 7, 4, 3), 1);
        dagger_array_t *b = from_values(rt, AR_D2(ty, 11, 7, 5, 5), 2);
        dagger_array_t *c;
        dagger_array_desc_t dc = AR_D2(ty, 11, 7, 3, 7);
        AR_OK(dagger_array_zeros(rt, &dc, &c));
        double *x = ar_collect(a), *y = ar_collect(b), want[77];
        for (dagger_op_t op = DAGGER_OP_ADD; op <= DAGGER_OP_DIV; op++) {
            AR_OK(dagger_array_binop(NULL, op, c, a, b));
            for (int i = 0; i < 77; i++)
                want[i] = ref_op(ty, op, x[i], y[i]);
            char what[64];
            snprintf(what, sizeof(what), "type %d op %d", (int)ty, (int)op);
            ar_expect(c, want, ty == DAGGER_F32 ? 1e-6 : 0, what);
        }
        free(x);
        free(y);
        AR_OK(dagger_array_destroy(a));
        AR_OK(dagger_array_destroy(b));
        AR_OK(dagger_array_destroy(c));
    }
    AR_OK(dagger_finalize(rt));
}

Test(array_ewise, scalars_and_in_place)
{
    dagger_runtime_t *rt = ar_init();
    for (int t = 0; t < 4; t++) {
        dagger_dtype_t ty = all_types[t];
        dagger_array_t *a = from_values(rt, AR_D1(ty, 23, 5), 3);
        dagger_array_t *b = from_values(rt, AR_D1(ty, 23, 4), 4);
        double *x = ar_collect(a), *y = ar_collect(b), want[23];
        /* a = a - 3 (in place, scalar), then a = 12 / a... for floats only. */
        AR_OK(dagger_array_scalar(NULL, DAGGER_OP_SUB, a, a, 3));
        for (int i = 0; i < 23; i++)
            want[i] = x[i] = ref_op(ty, DAGGER_OP_SUB, x[i], 3);
        ar_expect(a, want, 0, "a - 3");
        AR_OK(dagger_array_rscalar(NULL, DAGGER_OP_SUB, a, 5, a));
        for (int i = 0; i < 23; i++)
            want[i] = x[i] = ref_op(ty, DAGGER_OP_SUB, 5, x[i]);
        ar_expect(a, want, 0, "5 - a");
        /* b = a * b with the output being the second operand; then b = b * b. */
        AR_OK(dagger_array_mul(NULL, b, a, b));
        AR_OK(dagger_array_mul(NULL, b, b, b));
        for (int i = 0; i < 23; i++) {
            double p = ref_op(ty, DAGGER_OP_MUL, x[i], y[i]);
            want[i] = ref_op(ty, DAGGER_OP_MUL, p, p);
        }
        ar_expect(b, want, ty == DAGGER_F32 ? 1e-6 : 0, "b = (a*b)^2");
        AR_OK(dagger_array_fill(NULL, b, -2));
        for (int i = 0; i < 23; i++)
            want[i] = -2;
        ar_expect(b, want, 0, "fill");
        free(x);
        free(y);
        AR_OK(dagger_array_destroy(a));
        AR_OK(dagger_array_destroy(b));
    }
    AR_OK(dagger_finalize(rt));
}

Test(array_ewise, integer_wrap_and_division_by_zero)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D1(DAGGER_I32, 6, 4);
    dagger_array_t *a, *z;
    AR_OK(dagger_array_full(rt, &d, 2147483647.0, &a));
    AR_OK(dagger_array_scalar(NULL, DAGGER_OP_ADD, a, a, 1));
    double want[6];
    for (int i = 0; i < 6; i++)
        want[i] = -2147483648.0;
    ar_expect(a, want, 0, "INT32_MAX + 1 wraps");
    AR_OK(dagger_array_zeros(rt, &d, &z));
    AR_FAILS(dagger_array_div(NULL, a, a, z), DAGGER_ERR_TASK_FAILED, "division by zero");
    /* The runtime stays usable; float division by zero is IEEE. */
    dagger_array_desc_t df = AR_D1(DAGGER_F64, 6, 4);
    dagger_array_t *f, *fz;
    AR_OK(dagger_array_ones(rt, &df, &f));
    AR_OK(dagger_array_zeros(rt, &df, &fz));
    AR_OK(dagger_array_div(NULL, f, f, fz));
    for (int i = 0; i < 6; i++)
        want[i] = INFINITY;
    ar_expect(f, want, 0, "1/0");
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(z));
    AR_OK(dagger_array_destroy(f));
    AR_OK(dagger_array_destroy(fz));
    AR_OK(dagger_finalize(rt));
}

/* copy re-blocks and redistributes; only the tiles move. */
Test(array_ewise, copy_reblocks_and_redistributes)
{
    dagger_runtime_t *rt = ar_init();
    int n = dagger_nranks(rt);
    dagger_array_t *a = from_values(rt, AR_D3(DAGGER_F64, 6, 5, 4, 4, 2, 3), 5);
    dagger_array_desc_t d = AR_D3(DAGGER_F64, 6, 5, 4, 3, 5, 1);
    int table[2 * 1 * 4];
    for (int b = 0; b < 8; b++)
        table[b] = n - 1;
    dagger_dist_t tab = {.kind = DAGGER_DIST_TABLE, .table = table, .ntable = 8};
    d.dist = &tab;
    dagger_array_t *b;
    AR_OK(dagger_array_zeros(rt, &d, &b));
    AR_OK(dagger_array_copy(NULL, b, a));
    double *x = ar_collect(a);
    ar_expect(b, x, 0, "copy");
    /* The copy region moved only the elements not already on rank n-1. */
    AR_OK(dagger_array_copy(NULL, b, a));
    dagger_region_stats_t s;
    AR_OK(dagger_region_stats(rt, &s));
    size_t away = 0;
    for (size_t k = 0; k < dagger_array_nblocks(a); k++) {
        dagger_array_block_t info;
        AR_OK(dagger_array_block_info(a, k, &info));
        if (info.owner != n - 1)
            away += info.extent[0] * info.extent[1] * info.extent[2];
    }
    if (dagger_rank(rt) == n - 1)
        cr_assert_eq(s.bytes_received, away * sizeof(double));
    free(x);
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(b));
    AR_OK(dagger_finalize(rt));
}

Test(array_ewise, transpose)
{
    dagger_runtime_t *rt = ar_init();
    const size_t blk[][4] = {{4, 3, 3, 4}, {5, 5, 2, 7}, {9, 13, 13, 9}};
    for (int c = 0; c < 3; c++) {
        for (int t = 0; t < 4; t += 1) {
            dagger_dtype_t ty = all_types[t];
            dagger_array_t *a = from_values(rt, AR_D2(ty, 9, 13, blk[c][0], blk[c][1]), 6);
            dagger_array_t *b;
            dagger_array_desc_t d = AR_D2(ty, 13, 9, blk[c][2], blk[c][3]);
            AR_OK(dagger_array_zeros(rt, &d, &b));
            AR_OK(dagger_array_transpose(NULL, b, a));
            double *x = ar_collect(a), want[117];
            for (int j = 0; j < 13; j++)
                for (int i = 0; i < 9; i++)
                    want[j + 13 * i] = x[i + 9 * j];
            ar_expect(b, want, 0, "transpose");
            AR_FAILS(dagger_array_transpose(NULL, a, a), DAGGER_ERR_INVALID_ARG, "shapes");
            free(x);
            AR_OK(dagger_array_destroy(a));
            AR_OK(dagger_array_destroy(b));
        }
    }
    AR_OK(dagger_finalize(rt));
}

/* A user codelet: out = sin(in) * scale (f64), on each tile. */
static int sin_tile(dagger_task_t *t)
{
    dagger_slot_t o = dagger_task_arg(t, 0), x = dagger_task_arg(t, 1), v = dagger_task_arg(t, 2);
    double scale;
    memcpy(&scale, v.data, sizeof(scale));
    for (size_t j = 0; j < (o.ndims > 1 ? o.dims[1] : 1); j++)
        for (size_t i = 0; i < o.dims[0]; i++)
            ((double *)o.data)[i + j * o.strides[1]] =
                sin(((const double *)x.data)[i + j * x.strides[1]]) * scale;
    return DAGGER_OK;
}

Test(array_ewise, map_with_user_codelet)
{
    dagger_runtime_t *rt = ar_init();
    dagger_codelet_t cl;
    AR_OK(dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "test.sin", .cpu = sin_tile},
                                  &cl));
    dagger_array_t *a = from_values(rt, AR_D2(DAGGER_F64, 10, 6, 3, 4), 7);
    dagger_array_t *b;
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 10, 6, 4, 4);
    AR_OK(dagger_array_zeros(rt, &d, &b));
    double scale = 2;
    AR_OK(dagger_array_map(NULL, cl, b, 1, (dagger_array_t *[]){a}, &scale, sizeof(scale)));
    double *x = ar_collect(a), want[60];
    for (int i = 0; i < 60; i++)
        want[i] = sin(x[i]) * 2;
    ar_expect(b, want, 0, "map");
    /* In place: a = sin(a) * 2. */
    AR_OK(dagger_array_map(NULL, cl, a, 1, (dagger_array_t *[]){a}, &scale, sizeof(scale)));
    ar_expect(a, want, 0, "map in place");
    free(x);
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(b));
    AR_OK(dagger_finalize(rt));
}

/* Several operations in one region of the caller's: they pipeline and the
 * region's end waits for all. */
Test(array_ewise, operations_in_a_user_region)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 12, 12, 5, 5);
    dagger_array_t *a, *b, *c;
    AR_OK(dagger_array_rand(rt, &d, 1, &a));
    AR_OK(dagger_array_zeros(rt, &d, &b));
    AR_OK(dagger_array_zeros(rt, &d, &c));
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, NULL, &r));
    AR_OK(dagger_array_scalar(r, DAGGER_OP_ADD, b, a, 1));      /* b = a + 1 */
    AR_OK(dagger_array_add(r, c, a, b));                         /* c = a + b */
    AR_OK(dagger_array_scalar(r, DAGGER_OP_MUL, a, a, 10));     /* a *= 10, after c read it */
    dagger_future_t s;
    AR_OK(dagger_array_reduce(r, DAGGER_OP_MAX, c, &s));
    AR_OK(dagger_region_end(r));
    double want[144], wa[144], x = 0;
    for (int i = 0; i < 144; i++) {
        double v = dagger_rand_uniform(1, (uint64_t)i);
        want[i] = v + (v + 1);
        wa[i] = v * 10;
        x = want[i] > x ? want[i] : x;
    }
    ar_expect(c, want, 0, "c");
    ar_expect(a, wa, 0, "a");
    double got;
    AR_OK(dagger_fetch(rt, s, &got, sizeof(got), NULL));
    cr_assert_eq(got, x);
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(b));
    AR_OK(dagger_array_destroy(c));
    AR_OK(dagger_finalize(rt));
}

Test(array_ewise, bad_input)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D2(DAGGER_F64, 4, 4, 2, 2), e = AR_D2(DAGGER_F64, 4, 5, 2, 2);
    dagger_array_desc_t di = AR_D2(DAGGER_I32, 4, 4, 2, 2), d1 = AR_D1(DAGGER_F64, 16, 4);
    dagger_array_t *a, *b, *i, *v;
    AR_OK(dagger_array_zeros(rt, &d, &a));
    AR_OK(dagger_array_zeros(rt, &e, &b));
    AR_OK(dagger_array_zeros(rt, &di, &i));
    AR_OK(dagger_array_zeros(rt, &d1, &v));
    AR_FAILS(dagger_array_add(NULL, a, a, b), DAGGER_ERR_INVALID_ARG, "shapes do not match");
    AR_FAILS(dagger_array_add(NULL, a, a, v), DAGGER_ERR_INVALID_ARG, "shapes do not match");
    AR_FAILS(dagger_array_add(NULL, a, a, i), DAGGER_ERR_DTYPE, "element types differ");
    AR_FAILS(dagger_array_binop(NULL, (dagger_op_t)9, a, a, a), DAGGER_ERR_INVALID_ARG,
             "unknown operation");
    AR_FAILS(dagger_array_scalar(NULL, DAGGER_OP_ADD, i, i, 0.5), DAGGER_ERR_INVALID_ARG,
             "not an integer");
    AR_FAILS(dagger_array_transpose(NULL, v, v), DAGGER_ERR_INVALID_ARG, "2-D");
    AR_FAILS(dagger_array_transpose(NULL, a, a), DAGGER_ERR_INVALID_ARG, "in-place");
    AR_FAILS(dagger_array_add(NULL, a, a, NULL), DAGGER_ERR_BAD_HANDLE, "not a live array");
    dagger_region_t *r;
    AR_OK(dagger_region_begin(rt, NULL, &r));
    AR_OK(dagger_region_end(r));
    AR_FAILS(dagger_array_fill(r, a, 1), DAGGER_ERR_BAD_HANDLE, "not an open region");
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(b));
    AR_OK(dagger_array_destroy(i));
    AR_OK(dagger_array_destroy(v));
    AR_OK(dagger_finalize(rt));
}

/* Outputs of 32 MiB and more are written with non-temporal stores: odd line
 * lengths and offsets (head and tail pieces), in place too. */
Test(array_ewise, large_outputs_streamed)
{
    dagger_runtime_t *rt = ar_init();
    dagger_array_desc_t d = AR_D1(DAGGER_I32, 8500001, 1000003); /* 34 MB */
    dagger_array_t *a, *b, *c;
    AR_OK(dagger_array_rand(rt, &d, 17, &a));
    AR_OK(dagger_array_zeros(rt, &d, &b));
    AR_OK(dagger_array_zeros(rt, &d, &c));
    AR_OK(dagger_array_scalar(NULL, DAGGER_OP_ADD, b, a, 3));    /* wraps where a is near max */
    AR_OK(dagger_array_sub(NULL, c, b, a));
    AR_OK(dagger_array_mul(NULL, c, c, c));                      /* in place */
    dagger_future_t mn, mx;
    AR_OK(dagger_array_reduce(NULL, DAGGER_OP_MIN, c, &mn));
    AR_OK(dagger_array_reduce(NULL, DAGGER_OP_MAX, c, &mx));
    int64_t lo = 0, hi = 0;
    AR_OK(dagger_fetch(rt, mn, &lo, sizeof(lo), NULL));
    AR_OK(dagger_fetch(rt, mx, &hi, sizeof(hi), NULL));
    cr_assert(lo == 9 && hi == 9, "(a + 3 - a)^2 ranges over [%lld, %lld]", (long long)lo,
              (long long)hi);
    int32_t tail[5];
    AR_OK(dagger_array_collect_box(b, (size_t[]){8499996}, (size_t[]){5}, DAGGER_ALL_RANKS, tail));
    for (int i = 0; i < 5; i++)
        cr_assert_eq(tail[i], (int32_t)((uint32_t)dagger_rand_bits(17, 8499996u + (unsigned)i) + 3u));
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_array_destroy(b));
    AR_OK(dagger_array_destroy(c));
    AR_OK(dagger_finalize(rt));
}
