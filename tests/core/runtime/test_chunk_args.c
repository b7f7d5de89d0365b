/* Whole-chunk arguments (DAGGER_IN/OUT/INOUT_CHUNK): the same task argument
 * as the view dagger_view gives, without building it; dependencies between
 * them and views of the same chunk; a chunk that does not exist. */
#include <criterion/criterion.h>
#include <dagger.h>
#include <string.h>

#define ROWS 3
#define COLS 5

static dagger_slot_t seen[2];

/* Element (i, j) of a 2-D f64 slot. */
static double *at(const dagger_slot_t *s, size_t i, size_t j)
{
    return (double *)s->data + i * s->strides[0] + j * s->strides[1];
}

/* Keeps its two arguments' slots; writes 10 * row + col + v into the first. */
static int fill(dagger_task_t *t)
{
    seen[0] = dagger_task_arg(t, 0);
    seen[1] = dagger_task_arg(t, 1);
    double v;
    memcpy(&v, dagger_task_data(t, 2), sizeof(v));
    for (size_t i = 0; i < seen[0].dims[0]; i++)
        for (size_t j = 0; j < seen[0].dims[1]; j++)
            *at(&seen[0], i, j) = 10.0 * (double)i + (double)j + v;
    return DAGGER_OK;
}

/* d = k * s + c elementwise over s's box: s is argument 0, d argument 1 or,
 * for a task with one argument, argument 0 itself. twice: d = 2 s; add_one:
 * s += 1. */
static int scale_add(dagger_task_t *t, double k, double c)
{
    dagger_slot_t s = dagger_task_arg(t, 0);
    dagger_slot_t d = dagger_task_nargs(t) > 1 ? dagger_task_arg(t, 1) : s;
    for (size_t i = 0; i < s.dims[0]; i++)
        for (size_t j = 0; j < s.dims[1]; j++)
            *at(&d, i, j) = k * *at(&s, i, j) + c;
    return DAGGER_OK;
}

static int twice(dagger_task_t *t)
{
    return scale_add(t, 2.0, 0.0);
}

static int add_one(dagger_task_t *t)
{
    return scale_add(t, 1.0, 1.0);
}

typedef struct {
    dagger_runtime_t *rt;
    dagger_codelet_t fill, twice, add_one;
    dagger_chunk_t a, b;
} fx_t;

static void setup(fx_t *f, int threads)
{
    cr_assert_eq(dagger_init(NULL, NULL, &(dagger_params_t){.num_threads = threads}, &f->rt),
                 DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dagger_codelet_register(f->rt, &(dagger_codelet_desc_t){.name = "ca.fill",
                                                                         .cpu = fill}, &f->fill),
                 DAGGER_OK);
    cr_assert_eq(dagger_codelet_register(f->rt, &(dagger_codelet_desc_t){.name = "ca.twice",
                                                                         .cpu = twice}, &f->twice),
                 DAGGER_OK);
    cr_assert_eq(dagger_codelet_register(f->rt, &(dagger_codelet_desc_t){.name = "ca.add_one",
                                                                         .cpu = add_one},
                                         &f->add_one),
                 DAGGER_OK);
    dagger_chunk_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {ROWS, COLS}, .owner = 0};
    cr_assert_eq(dagger_chunk_create(f->rt, &d, &f->a), DAGGER_OK);
    cr_assert_eq(dagger_chunk_create(f->rt, &d, &f->b), DAGGER_OK);
}

/* Chunk c's elements, the first dimension fastest (the default strides). */
static void fetch(fx_t *f, dagger_chunk_t c, double out[ROWS * COLS])
{
    size_t len = 0;
    cr_assert_eq(dagger_fetch_chunk(f->rt, c, out, ROWS * COLS * sizeof(double), &len), DAGGER_OK,
                 "%s", dagger_error_detail());
    cr_assert_eq(len, ROWS * COLS * sizeof(double));
}

static void expect_same_slot(const dagger_slot_t *x, const dagger_slot_t *y)
{
    cr_expect_eq(x->data, y->data);
    cr_expect_eq(x->dtype, y->dtype);
    cr_expect_eq(x->ndims, y->ndims);
    cr_expect_eq(x->mod, y->mod);
    cr_expect_eq(x->count, y->count);
    cr_expect_eq(x->bytes, y->bytes);
    for (int k = 0; k < x->ndims; k++) {
        cr_expect_eq(x->dims[k], y->dims[k], "dims[%d]", k);
        cr_expect_eq(x->strides[k], y->strides[k], "strides[%d]", k);
    }
}

Test(chunk_args, a_chunk_argument_is_the_whole_view)
{
    fx_t f;
    setup(&f, 1);
    double v = 0.5;
    dagger_region_t *r;
    cr_assert_eq(dagger_region_begin(f.rt, NULL, &r), DAGGER_OK);
    /* The same chunk twice: once as a chunk argument, once as its view. */
    cr_assert_eq(dagger_spawn(r, f.fill, DAGGER_OUT_CHUNK(f.a), DAGGER_IN(dagger_view(f.rt, f.a)),
                              DAGGER_VALUE(&v, sizeof(v)), DAGGER_END),
                 DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
    cr_expect_eq(seen[0].ndims, 2);
    cr_expect_eq(seen[0].dims[0], ROWS);
    cr_expect_eq(seen[0].dims[1], COLS);
    cr_expect_eq(seen[0].count, ROWS * COLS);
    cr_expect_eq(seen[0].mod, DAGGER_FULL);
    expect_same_slot(&seen[0], &seen[1]);
    double a[ROWS * COLS];
    fetch(&f, f.a, a);
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            cr_expect_eq(a[j * ROWS + i], 10.0 * i + j + 0.5, "a[%d][%d]", i, j);
    cr_assert_eq(dagger_finalize(f.rt), DAGGER_OK);
}

/* Writes through chunk arguments order reads through views and sub-views,
 * and the other way round, in regions that replay. */
Test(chunk_args, chunk_arguments_and_views_depend_on_each_other)
{
    fx_t f;
    setup(&f, 2);
    double v = 1.0;
    for (int round = 0; round < 4; round++) {
        dagger_region_t *r;
        cr_assert_eq(dagger_region_begin(f.rt, NULL, &r), DAGGER_OK);
        cr_assert_eq(dagger_spawn(r, f.fill, DAGGER_OUT_CHUNK(f.a), DAGGER_IN_CHUNK(f.a),
                                  DAGGER_VALUE(&v, sizeof(v)), DAGGER_END),
                     DAGGER_OK, "%s", dagger_error_detail());
        for (int k = 0; k < 3; k++)
            cr_assert_eq(dagger_spawn(r, f.add_one, DAGGER_INOUT_CHUNK(f.a), DAGGER_END), DAGGER_OK,
                         "%s", dagger_error_detail());
        dagger_view_t row1 = dagger_view_sub(dagger_view(f.rt, f.a), (size_t[]){1, 0},
                                             (size_t[]){1, COLS});
        cr_assert_eq(dagger_spawn(r, f.add_one, DAGGER_INOUT(row1), DAGGER_END), DAGGER_OK, "%s",
                     dagger_error_detail());
        cr_assert_eq(dagger_spawn(r, f.twice, DAGGER_IN_CHUNK(f.a), DAGGER_OUT_CHUNK(f.b),
                                  DAGGER_END),
                     DAGGER_OK, "%s", dagger_error_detail());
        cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
        double b[ROWS * COLS];
        fetch(&f, f.b, b);
        for (int i = 0; i < ROWS; i++)
            for (int j = 0; j < COLS; j++)
                cr_expect_eq(b[j * ROWS + i], 2.0 * (10.0 * i + j + 1.0 + 3.0 + (i == 1)),
                             "round %d b[%d][%d]", round, i, j);
    }
    cr_assert_eq(dagger_finalize(f.rt), DAGGER_OK);
}

Test(chunk_args, a_chunk_that_does_not_exist_is_a_bad_handle)
{
    fx_t f;
    setup(&f, 1);
    dagger_chunk_t gone = f.b;
    cr_assert_eq(dagger_chunk_free(f.rt, gone), DAGGER_OK);
    dagger_region_t *r;
    cr_assert_eq(dagger_region_begin(f.rt, NULL, &r), DAGGER_OK);
    cr_expect_eq(dagger_spawn(r, f.add_one, DAGGER_INOUT_CHUNK(gone), DAGGER_END),
                 DAGGER_ERR_BAD_HANDLE);
    cr_expect(strstr(dagger_error_detail(), "argument 0 is chunk") != NULL, "%s",
              dagger_error_detail());
    dagger_arg_t mode = DAGGER_IN_CHUNK(f.a);
    mode.mode = (dagger_access_t)9;
    cr_expect_eq(dagger_submit(r, f.add_one, 1, &mode, NULL, NULL, NULL), DAGGER_ERR_INVALID_ARG);
    cr_expect(strstr(dagger_error_detail(), "DAGGER_IN_CHUNK") != NULL, "%s",
              dagger_error_detail());
    cr_assert_eq(dagger_spawn(r, f.add_one, DAGGER_INOUT_CHUNK(f.a), DAGGER_END), DAGGER_OK, "%s",
                 dagger_error_detail());
    cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dagger_finalize(f.rt), DAGGER_OK);
}
