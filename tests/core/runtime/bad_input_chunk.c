/* Bad-input probes of dagger/chunk.h and dagger/task.h (codelets, and the
 * calls made from inside a running task). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/core/runtime/bad_input.h"

static dagger_chunk_desc_t chunk_desc(void)
{
    return (dagger_chunk_desc_t){.dtype = DAGGER_F64, .ndims = 2, .dims = {4, 4}, .owner = -1};
}

void bi_probe_dagger_chunk_create(void)
{
    dagger_chunk_desc_t d = chunk_desc();
    dagger_chunk_t c;
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_create(NULL, &d, &c));
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_create(BI.dead, &d, &c));
    E(DAGGER_ERR_INVALID_ARG, dagger_chunk_create(BI.rt, NULL, &c));
    E(DAGGER_ERR_INVALID_ARG, dagger_chunk_create(BI.rt, &d, NULL));
    int bad_ndims[] = {0, -1, DAGGER_MAX_DIMS + 1};
    for (size_t i = 0; i < sizeof(bad_ndims) / sizeof(bad_ndims[0]); i++) {
        d = chunk_desc();
        d.ndims = bad_ndims[i];
        E(DAGGER_ERR_INVALID_ARG, dagger_chunk_create(BI.rt, &d, &c));
    }
    d = chunk_desc();
    d.dims[1] = 0;
    E(DAGGER_ERR_INVALID_ARG, dagger_chunk_create(BI.rt, &d, &c));
    d = chunk_desc();
    d.dtype = (dagger_dtype_t)99;
    E(DAGGER_ERR_DTYPE, dagger_chunk_create(BI.rt, &d, &c));
    d = chunk_desc();
    d.owner = 1; /* a singleton has rank 0 only */
    E(DAGGER_ERR_INVALID_ARG, dagger_chunk_create(BI.rt, &d, &c));
    d = chunk_desc();
    d.dims[0] = d.dims[1] = SIZE_MAX / 2; /* elements * 8 bytes overflow */
    E(DAGGER_ERR_OVERFLOW, dagger_chunk_create(BI.rt, &d, &c));
    d = chunk_desc();
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_STATE, dagger_chunk_create(BI.rt, &d, &c));
    bi_close(r);
    E(DAGGER_OK, dagger_chunk_create(BI.rt, &d, &c));
}

void bi_probe_dagger_chunk_create_many(void)
{
    dagger_chunk_desc_t d[3] = {chunk_desc(), chunk_desc(), chunk_desc()};
    dagger_chunk_t c[3] = {{0}, {0}, {0}};
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_create_many(NULL, 3, d, c));
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_create_many(BI.dead, 3, d, c));
    E(DAGGER_ERR_INVALID_ARG, dagger_chunk_create_many(BI.rt, 3, NULL, c));
    E(DAGGER_ERR_INVALID_ARG, dagger_chunk_create_many(BI.rt, 3, d, NULL));
    /* One bad description refuses the call: none is made. */
    d[2].dims[0] = 0;
    E(DAGGER_ERR_INVALID_ARG, dagger_chunk_create_many(BI.rt, 3, d, c));
    d[2] = chunk_desc();
    d[1].dims[0] = d[1].dims[1] = SIZE_MAX / 2;
    E(DAGGER_ERR_OVERFLOW, dagger_chunk_create_many(BI.rt, 3, d, c));
    for (int i = 0; i < 3; i++)
        cr_expect_eq(c[i].id, 0u, "chunk %d of a refused call has id %llu", i,
                     (unsigned long long)c[i].id);
    d[1] = chunk_desc();
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_STATE, dagger_chunk_create_many(BI.rt, 3, d, c));
    bi_close(r);
    E(DAGGER_OK, dagger_chunk_create_many(BI.rt, 0, NULL, NULL));
    E(DAGGER_OK, dagger_chunk_create_many(BI.rt, 3, d, c));
}

void bi_probe_dagger_chunk_free(void)
{
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_free(NULL, BI.c));
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_free(BI.dead, BI.c));
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_free(BI.rt, BI.c_gone));
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_free(BI.rt, (dagger_chunk_t){0}));
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_free(BI.rt, (dagger_chunk_t){UINT64_MAX}));
    /* A future is not a chunk. */
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_free(BI.rt, (dagger_chunk_t){BI.f.id}));
    E(DAGGER_OK, dagger_chunk_free(BI.rt, BI.c));
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_free(BI.rt, BI.c));
}

void bi_probe_dagger_chunk_data(void)
{
    void *data = BI.foreign;
    size_t strides[DAGGER_MAX_DIMS];
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_data(NULL, BI.c, &data, strides));
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_data(BI.dead, BI.c, &data, strides));
    E(DAGGER_ERR_INVALID_ARG, dagger_chunk_data(BI.rt, BI.c, NULL, strides));
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_data(BI.rt, BI.c_gone, &data, strides));
    cr_expect_null(data);
    E(DAGGER_ERR_BAD_HANDLE, dagger_chunk_data(BI.rt, (dagger_chunk_t){BI.f.id}, &data, NULL));
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_STATE, dagger_chunk_data(BI.rt, BI.c, &data, strides));
    bi_close(r);
    E(DAGGER_OK, dagger_chunk_data(BI.rt, BI.c, &data, NULL));
    cr_expect_not_null(data);
}

void bi_probe_dagger_chunk_owner(void)
{
    cr_expect_eq(dagger_chunk_owner(NULL, BI.c), -1);
    cr_expect_eq(dagger_chunk_owner(BI.dead, BI.c), -1);
    cr_expect_eq(dagger_chunk_owner(BI.rt, BI.c_gone), -1);
    cr_expect_eq(dagger_chunk_owner(BI.rt, (dagger_chunk_t){0}), -1);
    cr_expect_eq(dagger_chunk_owner(BI.rt, (dagger_chunk_t){BI.f.id}), -1);
    cr_expect_eq(dagger_chunk_owner(BI.rt, BI.c), 0);
}

void bi_probe_dagger_view(void)
{
    cr_expect_eq(dagger_view(NULL, BI.c).ndims, 0);
    cr_expect_eq(dagger_view(BI.dead, BI.c).ndims, 0);
    cr_expect_eq(dagger_view(BI.rt, BI.c_gone).ndims, 0);
    cr_expect_eq(dagger_view(BI.rt, (dagger_chunk_t){0}).ndims, 0);
    cr_expect_eq(dagger_view(BI.rt, (dagger_chunk_t){BI.f.id}).ndims, 0, "a future is no chunk");
    cr_expect_eq(dagger_view(BI.rt, BI.c).ndims, 2);
}

void bi_probe_dagger_view_sub(void)
{
    dagger_view_t v = dagger_view(BI.rt, BI.c);
    size_t off[] = {1, 1}, ext[] = {2, 2}, big[] = {4, 4}, huge[] = {SIZE_MAX, SIZE_MAX};
    cr_expect_eq(dagger_view_sub(v, NULL, ext).ndims, 0);
    cr_expect_eq(dagger_view_sub(v, off, NULL).ndims, 0);
    cr_expect_eq(dagger_view_sub(v, off, big).ndims, 0, "a box past the chunk's edge");
    cr_expect_eq(dagger_view_sub(v, huge, ext).ndims, 0, "an offset that overflows");
    cr_expect_eq(dagger_view_sub(v, off, huge).ndims, 0, "an extent that overflows");
    cr_expect_eq(dagger_view_sub(dagger_view(BI.rt, BI.c_gone), off, ext).ndims, 0);
    dagger_view_t odd = v;
    odd.ndims = 99;
    cr_expect_eq(dagger_view_sub(odd, off, ext).ndims, 0);
    cr_expect_eq(dagger_view_sub(v, off, ext).ndims, 2);
}

void bi_probe_dagger_view_mod(void)
{
    dagger_view_t v = dagger_view(BI.rt, BI.c);
    cr_expect_eq(dagger_view_mod(v, (dagger_modifier_t)99).ndims, 0);
    cr_expect_eq(dagger_view_mod(v, (dagger_modifier_t)-1).ndims, 0);
    dagger_view_t odd = v;
    odd.ndims = -3;
    cr_expect_eq(dagger_view_mod(odd, DAGGER_UPPER).ndims, 0);
    cr_expect_eq(dagger_view_mod(v, DAGGER_LOWER).ndims, 2);
}

/* ------------------------------------------------------------ codelets */

void bi_probe_dagger_codelet_register(void)
{
    dagger_codelet_desc_t d = {.name = "bi.new", .cpu = bi_noop};
    dagger_codelet_t cl;
    E(DAGGER_ERR_BAD_HANDLE, dagger_codelet_register(NULL, &d, &cl));
    E(DAGGER_ERR_BAD_HANDLE, dagger_codelet_register(BI.dead, &d, &cl));
    E(DAGGER_ERR_INVALID_ARG, dagger_codelet_register(BI.rt, NULL, &cl));
    E(DAGGER_ERR_INVALID_ARG, dagger_codelet_register(BI.rt, &d, NULL));
    const char *names[] = {NULL, "", bi_long_name()};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        dagger_codelet_desc_t n = d;
        n.name = names[i];
        E(DAGGER_ERR_INVALID_ARG, dagger_codelet_register(BI.rt, &n, &cl));
    }
    dagger_codelet_desc_t x = d;
    x.cpu = NULL;
    E(DAGGER_ERR_INVALID_ARG, dagger_codelet_register(BI.rt, &x, &cl));
    x = d;
    x.return_size = DAGGER_MAX_RETURN + 1;
    E(DAGGER_ERR_INVALID_ARG, dagger_codelet_register(BI.rt, &x, &cl));
    int nargs[] = {-1, DAGGER_MAX_ARGS + 1};
    for (size_t i = 0; i < 2; i++) {
        x = d;
        x.nargs = nargs[i];
        E(DAGGER_ERR_INVALID_ARG, dagger_codelet_register(BI.rt, &x, &cl));
    }
    dagger_dtype_t bad_dtype[] = {(dagger_dtype_t)77};
    x = d;
    x.nargs = 1;
    x.arg_dtypes = bad_dtype;
    E(DAGGER_ERR_INVALID_ARG, dagger_codelet_register(BI.rt, &x, &cl));
    /* The same name with another description. */
    x = d;
    x.name = "bi.touch";
    x.return_size = 8;
    E(DAGGER_ERR_EXISTS, dagger_codelet_register(BI.rt, &x, &cl));
    E(DAGGER_OK, dagger_codelet_register(BI.rt, &d, &cl));
}

/* ------------------------------------------------------------ inside a task */

/* What the calls made with bad arguments from inside a running task gave. */
static struct {
    _Atomic int ran;
    void *arg_neg, *arg_past, *data_neg, *data_past, *data_0, *arg_0;
    int nargs;
    dagger_status_t ret_big, ret_null, ret_none;
    uint64_t seq, submitted_seq;
    int rank, proc;
    void *stream, *result, *result_none;
    size_t result_size, result_none_size;
} inside;

static int probe_body(dagger_task_t *t)
{
    inside.arg_neg = dagger_task_arg(t, -1).data;
    inside.arg_past = dagger_task_arg(t, 1).data;
    inside.data_neg = dagger_task_data(t, -1);
    inside.data_past = dagger_task_data(t, 1);
    inside.data_0 = dagger_task_data(t, 0);
    inside.arg_0 = dagger_task_arg(t, 0).data;
    inside.nargs = dagger_task_nargs(t);
    char bytes[8] = {0};
    inside.ret_null = dagger_task_return(t, NULL, 8);
    inside.seq = dagger_task_seq(t);
    inside.rank = dagger_task_rank(t);
    inside.proc = dagger_task_proc(t);
    inside.stream = dagger_task_stream(t);
    inside.result = dagger_task_result(t, &inside.result_size);
    atomic_store(&inside.ran, 1);
    return dagger_task_return(t, bytes, 8);
}

static int probe_noret(dagger_task_t *t)
{
    inside.ret_none = dagger_task_return(t, &inside, 1);
    inside.result_none = dagger_task_result(t, &inside.result_none_size);
    return DAGGER_OK;
}

/* Returns one byte more than its return_size of 8: that fails the task. */
static int probe_too_big(dagger_task_t *t)
{
    char big[9] = {0};
    inside.ret_big = dagger_task_return(t, big, sizeof(big));
    return DAGGER_OK;
}

/* A result larger than declared fails the task and its region
 * (task.h), on top of the call's own DAGGER_ERR_OVERFLOW. */
static void run_too_big(void)
{
    dagger_codelet_desc_t d = {.name = "bi.too_big", .cpu = probe_too_big, .return_size = 8};
    dagger_codelet_t cl;
    cr_assert_eq(dagger_codelet_register(BI.rt, &d, &cl), DAGGER_OK);
    dagger_region_t *r = bi_open();
    cr_assert_eq(dagger_submit(r, cl, 0, NULL, NULL, NULL, NULL), DAGGER_OK);
    dagger_status_t st = dagger_region_end(r);
    cr_expect_eq(st, DAGGER_ERR_OVERFLOW, "%s", dagger_strerror(st));
    cr_expect(strstr(dagger_error_detail(), "(bi.too_big) on rank 0 returned 9 bytes"), "%s",
              dagger_error_detail()); /* the detail names the task */
}

static void run_inside(void)
{
    static const dagger_dtype_t f64[] = {DAGGER_F64};
    dagger_codelet_desc_t d = {.name = "bi.inside", .cpu = probe_body, .return_size = 8,
                               .nargs = 1, .arg_dtypes = f64};
    dagger_codelet_desc_t n = {.name = "bi.noret", .cpu = probe_noret};
    dagger_codelet_t cl, cn;
    cr_assert_eq(dagger_codelet_register(BI.rt, &d, &cl), DAGGER_OK);
    cr_assert_eq(dagger_codelet_register(BI.rt, &n, &cn), DAGGER_OK);
    /* Its own region: tasks after a region's first failure do not run. */
    dagger_region_t *r = bi_open();
    cr_assert_eq(dagger_submit(r, cn, 0, NULL, NULL, NULL, NULL), DAGGER_OK);
    bi_close(r);
    r = bi_open();
    dagger_arg_t a = DAGGER_INOUT(dagger_view(BI.rt, BI.c));
    cr_assert_eq(dagger_submit(r, cl, 1, &a, NULL, &inside.submitted_seq, NULL), DAGGER_OK, "%s",
                 dagger_error_detail());
    bi_close(r);
    cr_assert(atomic_load(&inside.ran));
}

void bi_probe_dagger_task_arg(void)
{
    cr_expect_null(dagger_task_arg(NULL, 0).data);
    run_inside();
    cr_expect_null(inside.arg_neg);
    cr_expect_null(inside.arg_past);
}

void bi_probe_dagger_task_data(void)
{
    cr_expect_null(dagger_task_data(NULL, 0));
    run_inside();
    cr_expect_null(inside.data_neg);
    cr_expect_null(inside.data_past);
    cr_expect_not_null(inside.data_0);
    cr_expect_eq(inside.data_0, inside.arg_0, "dagger_task_data(t, 0) is dagger_task_arg(t, 0).data");
}

void bi_probe_dagger_task_nargs(void)
{
    cr_expect_eq(dagger_task_nargs(NULL), -1);
    run_inside();
    cr_expect_eq(inside.nargs, 1);
}

void bi_probe_dagger_task_return(void)
{
    E(DAGGER_ERR_INVALID_ARG, dagger_task_return(NULL, &inside, 1));
    run_inside();
    run_too_big();
    cr_expect_eq(inside.ret_big, DAGGER_ERR_OVERFLOW, "%s", dagger_strerror(inside.ret_big));
    cr_expect_eq(inside.ret_null, DAGGER_ERR_INVALID_ARG, "%s", dagger_strerror(inside.ret_null));
    cr_expect_eq(inside.ret_none, DAGGER_ERR_STATE, "%s", dagger_strerror(inside.ret_none));
}

void bi_probe_dagger_task_fail(void)
{
    cr_expect_eq(dagger_task_fail(NULL, "no task %d", 1), DAGGER_ERR_TASK_FAILED);
}

void bi_probe_dagger_task_seq(void)
{
    cr_expect_eq(dagger_task_seq(NULL), 0);
    run_inside();
    cr_expect_eq(inside.seq, inside.submitted_seq, "the number dagger_submit gave");
}

void bi_probe_dagger_task_rank(void)
{
    cr_expect_eq(dagger_task_rank(NULL), -1);
    run_inside();
    cr_expect_eq(inside.rank, 0);
}

void bi_probe_dagger_task_stream(void)
{
    cr_expect_null(dagger_task_stream(NULL));
    run_inside();
    cr_expect_null(inside.stream, "a CPU task has no stream");
}

void bi_probe_dagger_task_proc(void)
{
    cr_expect_eq(dagger_task_proc(NULL), -1);
    run_inside();
    int n = dagger_procs(BI.rt, NULL, 0);
    cr_expect(inside.proc >= -1 && inside.proc < n, "processor %d of %d", inside.proc, n);
}

void bi_probe_dagger_task_result(void)
{
    size_t size = 99;
    cr_expect_null(dagger_task_result(NULL, &size));
    cr_expect_eq(size, 0);
    cr_expect_null(dagger_task_result(NULL, NULL));
    run_inside();
    cr_expect(inside.result && inside.result_size == 8, "the 8 bytes it returns");
    cr_expect(!inside.result_none && !inside.result_none_size, "a task that returns nothing");
}

/* dagger_task_after on a CPU task: the check runs once the implementation
 * returned (ok = 1), and a failure it reports is the task's and the
 * region's, with its detail. */
static _Atomic int after_ran, after_ok;
static int after_check(void *arg, int ok, char *detail, size_t cap)
{
    atomic_store(&after_ran, 1);
    atomic_store(&after_ok, ok);
    if (!arg)
        return 0;
    snprintf(detail, cap, "the check found %s", (const char *)arg);
    return 1;
}

static dagger_status_t after_st, after_null_fn;
static int probe_after_pass(dagger_task_t *t)
{
    after_null_fn = dagger_task_after(t, NULL, NULL); /* removes nothing: allowed */
    after_st = dagger_task_after(t, after_check, NULL);
    return DAGGER_OK;
}

static int probe_after_fail(dagger_task_t *t)
{
    after_st = dagger_task_after(t, after_check, "info = 3");
    return DAGGER_OK;
}

static dagger_status_t run_after(dagger_impl_fn fn, const char *name)
{
    dagger_codelet_desc_t d = {.name = name, .cpu = fn};
    dagger_codelet_t cl;
    cr_assert_eq(dagger_codelet_register(BI.rt, &d, &cl), DAGGER_OK);
    atomic_store(&after_ran, 0);
    dagger_region_t *r = bi_open();
    cr_assert_eq(dagger_submit(r, cl, 0, NULL, NULL, NULL, NULL), DAGGER_OK);
    return dagger_region_end(r);
}

void bi_probe_dagger_task_after(void)
{
    E(DAGGER_ERR_INVALID_ARG, dagger_task_after(NULL, after_check, NULL));
    E(DAGGER_OK, run_after(probe_after_pass, "bi.after_pass"));
    cr_expect_eq(after_st, DAGGER_OK);
    cr_expect_eq(after_null_fn, DAGGER_OK);
    cr_expect(atomic_load(&after_ran), "the check ran");
    cr_expect_eq(atomic_load(&after_ok), 1, "a CPU task's work is done when it returns");
    dagger_status_t st = run_after(probe_after_fail, "bi.after_fail");
    cr_expect_eq(st, DAGGER_ERR_TASK_FAILED, "%s", dagger_strerror(st));
    cr_expect(strstr(dagger_error_detail(), "(bi.after_fail) failed on rank 0: the check found info = 3"),
              "%s", dagger_error_detail());
}
