/* Bad-input probes of dagger/region.h and dagger/coll.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/core/runtime/bad_input.h"

void bi_probe_dagger_procs(void)
{
    dagger_proc_info_t p[4];
    cr_expect_eq(dagger_procs(NULL, p, 4), -1);
    cr_expect_eq(dagger_procs(BI.dead, p, 4), -1);
    cr_expect_eq(dagger_procs(BI.rt, NULL, 4), 2, "NULL procs: the count only");
    memset(p, 0x5a, sizeof(p));
    cr_expect_eq(dagger_procs(BI.rt, p, -1), 2, "a negative cap writes nothing");
    cr_expect_eq(dagger_procs(BI.rt, p, 0), 2);
    cr_expect_eq(p[0].id, 0x5a5a5a5a, "cap 0 wrote an entry");
    cr_expect_eq(dagger_procs(BI.rt, p, 1), 2);
    cr_expect_eq(p[1].id, 0x5a5a5a5a, "cap 1 wrote two entries");
}

void bi_probe_dagger_region_begin(void)
{
    dagger_region_t *r = (dagger_region_t *)BI.foreign;
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_begin(NULL, NULL, &r));
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_begin(BI.dead, NULL, &r));
    E(DAGGER_ERR_INVALID_ARG, dagger_region_begin(BI.rt, NULL, NULL));
    dagger_scope_t neg = {.nranks = -1};
    E(DAGGER_ERR_INVALID_ARG, dagger_region_begin(BI.rt, &neg, &r));
    cr_expect_null(r);
    dagger_scope_t nullranks = {.nranks = 1};
    E(DAGGER_ERR_INVALID_ARG, dagger_region_begin(BI.rt, &nullranks, &r));
    E(DAGGER_ERR_SCOPE, dagger_region_begin(BI.rt, &DAGGER_SCOPE_RANK(3), &r));
    dagger_scope_t proc = {.has_proc = 1, .proc = 999};
    E(DAGGER_ERR_SCOPE, dagger_region_begin(BI.rt, &proc, &r));
    r = bi_open();
    dagger_region_t *inner = (dagger_region_t *)BI.foreign;
    E(DAGGER_ERR_STATE, dagger_region_begin(BI.rt, NULL, &inner));
    cr_expect_null(inner);
    bi_close(r);
}

static dagger_arg_t touch_arg(void)
{
    return DAGGER_INOUT(dagger_view(BI.rt, BI.c));
}

/* Submissions that must fail while the region stays usable. */
static void bad_submissions(dagger_region_t *r)
{
    dagger_arg_t a = touch_arg();
    E(DAGGER_ERR_NOT_FOUND, dagger_submit(r, BI.cl_never, 1, &a, NULL, NULL, NULL));
    E(DAGGER_ERR_INVALID_ARG, dagger_submit(r, BI.cl, -1, &a, NULL, NULL, NULL));
    E(DAGGER_ERR_INVALID_ARG, dagger_submit(r, BI.cl, DAGGER_MAX_ARGS + 1, &a, NULL, NULL, NULL));
    E(DAGGER_ERR_INVALID_ARG, dagger_submit(r, BI.cl, 1, NULL, NULL, NULL, NULL));
    E(DAGGER_ERR_INVALID_ARG, dagger_submit(r, BI.cl, 0, NULL, NULL, NULL, NULL)); /* arity */
    dagger_arg_t gone = DAGGER_INOUT(dagger_view(BI.rt, BI.c_gone));
    E(DAGGER_ERR_BAD_VIEW, dagger_submit(r, BI.cl, 1, &gone, NULL, NULL, NULL));
    dagger_arg_t past = a;
    past.view.off[0] = 3;
    E(DAGGER_ERR_BAD_VIEW, dagger_submit(r, BI.cl, 1, &past, NULL, NULL, NULL));
    dagger_arg_t mode = a;
    mode.mode = (dagger_access_t)9;
    E(DAGGER_ERR_INVALID_ARG, dagger_submit(r, BI.cl, 1, &mode, NULL, NULL, NULL));
    dagger_arg_t kind = a;
    kind.kind = (dagger_arg_kind_t)9;
    E(DAGGER_ERR_INVALID_ARG, dagger_submit(r, BI.cl, 1, &kind, NULL, NULL, NULL));
    dagger_arg_t val = DAGGER_VALUE(NULL, 8);
    E(DAGGER_ERR_INVALID_ARG, dagger_submit(r, BI.cl_ret, 1, &val, NULL, NULL, NULL));
    static const char big[DAGGER_MAX_VALUE + 1];
    dagger_arg_t toobig = DAGGER_VALUE(big, sizeof(big));
    E(DAGGER_ERR_INVALID_ARG, dagger_submit(r, BI.cl_ret, 1, &toobig, NULL, NULL, NULL));
    dagger_arg_t fut = DAGGER_FUTURE(BI.f_gone);
    E(DAGGER_ERR_BAD_HANDLE, dagger_submit(r, BI.cl_ret, 1, &fut, NULL, NULL, NULL));
    dagger_arg_t ai = DAGGER_INOUT(dagger_array_block(BI.ai, 0));
    E(DAGGER_ERR_DTYPE, dagger_submit(r, BI.cl, 1, &ai, NULL, NULL, NULL));
    uint64_t later = 1000;
    dagger_task_opts_t after = {.after = &later, .nafter = 1};
    E(DAGGER_ERR_CYCLE, dagger_submit(r, BI.cl, 1, &a, &after, NULL, NULL));
    dagger_task_opts_t nafter = {.nafter = 1};
    E(DAGGER_ERR_INVALID_ARG, dagger_submit(r, BI.cl, 1, &a, &nafter, NULL, NULL));
    dagger_task_opts_t negafter = {.after = &later, .nafter = -1};
    E(DAGGER_ERR_INVALID_ARG, dagger_submit(r, BI.cl, 1, &a, &negafter, NULL, NULL));
    dagger_scope_t neg = {.nranks = -4};
    dagger_task_opts_t badscope = {.scope = &neg};
    E(DAGGER_ERR_INVALID_ARG, dagger_submit(r, BI.cl, 1, &a, &badscope, NULL, NULL));
    dagger_scope_t gpu = {.kinds = DAGGER_PROC_HIP};
    dagger_task_opts_t noproc = {.scope = &gpu};
    E(DAGGER_ERR_SCOPE, dagger_submit(r, BI.cl, 1, &a, &noproc, NULL, NULL));
}

void bi_probe_dagger_submit(void)
{
    dagger_arg_t a = touch_arg();
    E(DAGGER_ERR_BAD_HANDLE, dagger_submit(NULL, BI.cl, 1, &a, NULL, NULL, NULL));
    E(DAGGER_ERR_BAD_HANDLE, dagger_submit(BI.r_gone, BI.cl, 1, &a, NULL, NULL, NULL));
    E(DAGGER_ERR_BAD_HANDLE, dagger_submit((dagger_region_t *)BI.rt, BI.cl, 1, &a, NULL, NULL, NULL));
    E(DAGGER_ERR_BAD_HANDLE, dagger_submit((dagger_region_t *)BI.foreign, BI.cl, 1, &a, NULL, NULL,
                                           NULL));
    dagger_region_t *r = bi_open();
    uint64_t first = UINT64_MAX, seq = UINT64_MAX;
    E(DAGGER_OK, dagger_submit(r, BI.cl, 1, &a, NULL, &first, NULL));
    bad_submissions(r);
    E(DAGGER_OK, dagger_submit(r, BI.cl, 1, &a, NULL, &seq, NULL));
    cr_expect_eq(seq, first + 1, "failed submissions take no sequence number");
    bi_close(r);
}

void bi_probe_dagger_spawn(void)
{
    dagger_view_t v = dagger_view(BI.rt, BI.c);
    E(DAGGER_ERR_BAD_HANDLE, dagger_spawn(NULL, BI.cl, DAGGER_INOUT(v), DAGGER_END));
    E(DAGGER_ERR_BAD_HANDLE, dagger_spawn(BI.r_gone, BI.cl, DAGGER_INOUT(v), DAGGER_END));
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_INVALID_ARG, dagger_spawn(r, BI.cl, DAGGER_END));
    dagger_arg_t x = DAGGER_IN(v);
    /* More arguments than DAGGER_MAX_ARGS before the end marker. */
    E(DAGGER_ERR_INVALID_ARG, dagger_spawn(r, BI.cl, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x,
                                           x, x, DAGGER_END));
    E(DAGGER_ERR_NOT_FOUND, dagger_spawn(r, BI.cl_never, DAGGER_INOUT(v), DAGGER_END));
    E(DAGGER_OK, dagger_spawn(r, BI.cl, DAGGER_INOUT(v), DAGGER_END));
    bi_close(r);
}

void bi_probe_dagger_region_end(void)
{
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_end(NULL));
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_end(BI.r_gone));
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_end((dagger_region_t *)BI.rt));
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_end((dagger_region_t *)BI.foreign));
    dagger_region_t *r = bi_open();
    E(DAGGER_OK, dagger_region_end(r));
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_end(r));
}

void bi_probe_dagger_region_current(void)
{
    dagger_region_t *cur = (dagger_region_t *)BI.foreign;
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_current(NULL, &cur));
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_current(BI.dead, &cur));
    E(DAGGER_ERR_INVALID_ARG, dagger_region_current(BI.rt, NULL));
    E(DAGGER_OK, dagger_region_current(BI.rt, &cur));
    cr_expect_null(cur, "no region is open");
    dagger_region_t *r = bi_open();
    E(DAGGER_OK, dagger_region_current(BI.rt, &cur));
    cr_expect_eq(cur, r, "the open region");
    bi_close(r);
    E(DAGGER_OK, dagger_region_current(BI.rt, &cur));
    cr_expect_null(cur, "ended");
}

void bi_probe_dagger_region_runtime(void)
{
    dagger_runtime_t *owner = NULL;
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_runtime(NULL, &owner));
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_runtime(BI.r_gone, &owner));
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_runtime((dagger_region_t *)BI.rt, &owner));
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_runtime((dagger_region_t *)BI.foreign, &owner));
    dagger_region_t *r = bi_open();
    E(DAGGER_ERR_INVALID_ARG, dagger_region_runtime(r, NULL));
    E(DAGGER_OK, dagger_region_runtime(r, &owner));
    cr_expect_eq(owner, BI.rt);
    bi_close(r);
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_runtime(r, &owner));
}

void bi_probe_dagger_region_stats(void)
{
    dagger_region_stats_t s;
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_stats(NULL, &s));
    E(DAGGER_ERR_BAD_HANDLE, dagger_region_stats(BI.dead, &s));
    E(DAGGER_ERR_INVALID_ARG, dagger_region_stats(BI.rt, NULL));
    E(DAGGER_OK, dagger_region_stats(BI.rt, &s));
}

void bi_probe_dagger_fetch(void)
{
    double v = 0;
    size_t len = 0;
    E(DAGGER_ERR_BAD_HANDLE, dagger_fetch(NULL, BI.f, &v, 8, &len));
    E(DAGGER_ERR_BAD_HANDLE, dagger_fetch(BI.dead, BI.f, &v, 8, &len));
    E(DAGGER_ERR_BAD_HANDLE, dagger_fetch(BI.rt, BI.f_gone, &v, 8, &len));
    E(DAGGER_ERR_BAD_HANDLE, dagger_fetch(BI.rt, (dagger_future_t){0}, &v, 8, &len));
    E(DAGGER_ERR_BAD_HANDLE, dagger_fetch(BI.rt, (dagger_future_t){BI.c.id}, &v, 8, &len));
    E(DAGGER_ERR_INVALID_ARG, dagger_fetch(BI.rt, BI.f, NULL, 8, &len));
    E(DAGGER_ERR_OVERFLOW, dagger_fetch(BI.rt, BI.f, &v, 4, &len));
    E(DAGGER_OK, dagger_fetch(BI.rt, BI.f, &v, 8, NULL));
    cr_expect_eq(v, 42);
}

/* dagger_fetch_chunk and dagger_fetch_view share their checks. */
void bi_probe_dagger_fetch_view(void)
{
    double v[16];
    size_t len = 0;
    dagger_view_t whole = dagger_view(BI.rt, BI.c), bad = whole;
    bad.ext[0] = 5; /* past the 4x4 chunk */
    E(DAGGER_ERR_BAD_HANDLE, dagger_fetch_view(NULL, whole, v, sizeof(v), &len));
    E(DAGGER_ERR_BAD_HANDLE, dagger_fetch_view(BI.dead, whole, v, sizeof(v), &len));
    E(DAGGER_ERR_BAD_HANDLE, dagger_fetch_view(BI.rt, dagger_view(BI.rt, BI.c_gone), v, sizeof(v),
                                               &len));
    E(DAGGER_ERR_BAD_VIEW, dagger_fetch_view(BI.rt, bad, v, sizeof(v), &len));
    bad = whole;
    bad.ndims = 0;
    E(DAGGER_ERR_BAD_VIEW, dagger_fetch_view(BI.rt, bad, v, sizeof(v), &len));
    E(DAGGER_ERR_INVALID_ARG, dagger_fetch_view(BI.rt, whole, NULL, sizeof(v), &len));
    E(DAGGER_ERR_OVERFLOW, dagger_fetch_view(BI.rt, whole, v, 8, &len));
    E(DAGGER_OK, dagger_fetch_view(BI.rt, whole, v, sizeof(v), &len));
    cr_expect_eq(len, sizeof(v));
}

void bi_probe_dagger_fetch_chunk(void)
{
    double v[16];
    size_t len = 0;
    E(DAGGER_ERR_BAD_HANDLE, dagger_fetch_chunk(NULL, BI.c, v, sizeof(v), &len));
    E(DAGGER_ERR_BAD_HANDLE, dagger_fetch_chunk(BI.dead, BI.c, v, sizeof(v), &len));
    E(DAGGER_ERR_BAD_HANDLE, dagger_fetch_chunk(BI.rt, BI.c_gone, v, sizeof(v), &len));
    E(DAGGER_ERR_BAD_HANDLE, dagger_fetch_chunk(BI.rt, (dagger_chunk_t){0}, v, sizeof(v), &len));
    E(DAGGER_ERR_INVALID_ARG, dagger_fetch_chunk(BI.rt, BI.c, NULL, sizeof(v), &len));
    E(DAGGER_ERR_OVERFLOW, dagger_fetch_chunk(BI.rt, BI.c, v, 8, &len));
    E(DAGGER_OK, dagger_fetch_chunk(BI.rt, BI.c, v, sizeof(v), NULL));
}

void bi_probe_dagger_future_free(void)
{
    E(DAGGER_ERR_BAD_HANDLE, dagger_future_free(NULL, BI.f));
    E(DAGGER_ERR_BAD_HANDLE, dagger_future_free(BI.dead, BI.f));
    E(DAGGER_ERR_BAD_HANDLE, dagger_future_free(BI.rt, BI.f_gone));
    E(DAGGER_ERR_BAD_HANDLE, dagger_future_free(BI.rt, (dagger_future_t){BI.c.id}));
    E(DAGGER_OK, dagger_future_free(BI.rt, BI.f));
    E(DAGGER_ERR_BAD_HANDLE, dagger_future_free(BI.rt, BI.f));
}

void bi_probe_dagger_check_uniformity(void)
{
    E(DAGGER_ERR_BAD_HANDLE, dagger_check_uniformity(NULL, 1));
    E(DAGGER_ERR_BAD_HANDLE, dagger_check_uniformity(BI.dead, 1));
    E(DAGGER_OK, dagger_check_uniformity(BI.rt, 1));
    E(DAGGER_OK, dagger_check_uniformity(BI.rt, 0));
}

void bi_probe_dagger_check_uniform(void)
{
    int x = 1;
    E(DAGGER_ERR_BAD_HANDLE, dagger_check_uniform(NULL, &x, sizeof(x)));
    E(DAGGER_ERR_BAD_HANDLE, dagger_check_uniform(BI.dead, &x, sizeof(x)));
    E(DAGGER_ERR_INVALID_ARG, dagger_check_uniform(BI.rt, NULL, 4));
    E(DAGGER_OK, dagger_check_uniformity(BI.rt, 1));
    E(DAGGER_ERR_INVALID_ARG, dagger_check_uniform(BI.rt, NULL, 4));
    E(DAGGER_OK, dagger_check_uniform(BI.rt, &x, sizeof(x)));
    E(DAGGER_OK, dagger_check_uniform(BI.rt, NULL, 0));
}

/* ------------------------------------------------------------ collectives */

void bi_probe_dagger_barrier(void)
{
    E(DAGGER_ERR_BAD_HANDLE, dagger_barrier(NULL));
    E(DAGGER_ERR_BAD_HANDLE, dagger_barrier(BI.dead));
    E(DAGGER_ERR_BAD_HANDLE, dagger_barrier((dagger_runtime_t *)BI.foreign));
    E(DAGGER_OK, dagger_barrier(BI.rt));
}

void bi_probe_dagger_bcast(void)
{
    int x = 3;
    E(DAGGER_ERR_BAD_HANDLE, dagger_bcast(NULL, &x, 4, 0));
    E(DAGGER_ERR_BAD_HANDLE, dagger_bcast(BI.dead, &x, 4, 0));
    E(DAGGER_ERR_INVALID_ARG, dagger_bcast(BI.rt, NULL, 4, 0));
    E(DAGGER_ERR_INVALID_ARG, dagger_bcast(BI.rt, &x, 4, 1));
    E(DAGGER_ERR_INVALID_ARG, dagger_bcast(BI.rt, &x, 4, -1));
    E(DAGGER_OK, dagger_bcast(BI.rt, &x, 4, 0));
    E(DAGGER_OK, dagger_bcast(BI.rt, NULL, 0, 0));
}

void bi_probe_dagger_allgather(void)
{
    int x = 3;
    void *all = NULL;
    size_t lens[1];
    E(DAGGER_ERR_BAD_HANDLE, dagger_allgather(NULL, &x, 4, &all, lens));
    E(DAGGER_ERR_BAD_HANDLE, dagger_allgather(BI.dead, &x, 4, &all, lens));
    E(DAGGER_ERR_INVALID_ARG, dagger_allgather(BI.rt, NULL, 4, &all, lens));
    E(DAGGER_ERR_INVALID_ARG, dagger_allgather(BI.rt, &x, 4, NULL, lens));
    E(DAGGER_ERR_INVALID_ARG, dagger_allgather(BI.rt, &x, 4, &all, NULL));
    E(DAGGER_OK, dagger_allgather(BI.rt, &x, 4, &all, lens));
    cr_expect_eq(lens[0], 4);
    free(all);
}

void bi_probe_dagger_allreduce(void)
{
    int64_t x[2] = {1, 2};
    E(DAGGER_ERR_BAD_HANDLE, dagger_allreduce(NULL, x, 2, DAGGER_I64, DAGGER_OP_ADD));
    E(DAGGER_ERR_BAD_HANDLE, dagger_allreduce(BI.dead, x, 2, DAGGER_I64, DAGGER_OP_ADD));
    E(DAGGER_ERR_INVALID_ARG, dagger_allreduce(BI.rt, NULL, 2, DAGGER_I64, DAGGER_OP_ADD));
    E(DAGGER_ERR_INVALID_ARG, dagger_allreduce(BI.rt, x, 2, (dagger_dtype_t)9, DAGGER_OP_ADD));
    E(DAGGER_ERR_INVALID_ARG, dagger_allreduce(BI.rt, x, 2, DAGGER_I64, (dagger_op_t)9));
    E(DAGGER_ERR_INVALID_ARG, dagger_allreduce(BI.rt, x, 2, DAGGER_F64, DAGGER_OP_BOR));
    /* element types and operators of the shared enums that allreduce does not take */
    E(DAGGER_ERR_INVALID_ARG, dagger_allreduce(BI.rt, x, 2, DAGGER_F32, DAGGER_OP_ADD));
    E(DAGGER_ERR_INVALID_ARG, dagger_allreduce(BI.rt, x, 2, DAGGER_U8, DAGGER_OP_MAX));
    E(DAGGER_ERR_INVALID_ARG, dagger_allreduce(BI.rt, x, 2, DAGGER_I64, DAGGER_OP_SUB));
    E(DAGGER_ERR_INVALID_ARG, dagger_allreduce(BI.rt, x, 2, DAGGER_F64, DAGGER_OP_NORM2));
    E(DAGGER_ERR_INVALID_ARG, dagger_allreduce(BI.rt, x, 2, DAGGER_I64, DAGGER_OP_SET));
    E(DAGGER_ERR_INVALID_ARG, dagger_allreduce(BI.rt, x, SIZE_MAX / 4, DAGGER_I64, DAGGER_OP_ADD));
    E(DAGGER_OK, dagger_allreduce(BI.rt, x, 2, DAGGER_I64, DAGGER_OP_ADD));
}

static void combine(void *acc, const void *in, size_t len, void *ctx)
{
    (void)acc, (void)in, (void)len, (void)ctx;
}

void bi_probe_dagger_allreduce_bytes(void)
{
    char b[8] = {0};
    E(DAGGER_ERR_BAD_HANDLE, dagger_allreduce_bytes(NULL, b, 8, combine, NULL));
    E(DAGGER_ERR_BAD_HANDLE, dagger_allreduce_bytes(BI.dead, b, 8, combine, NULL));
    E(DAGGER_ERR_INVALID_ARG, dagger_allreduce_bytes(BI.rt, NULL, 8, combine, NULL));
    E(DAGGER_ERR_INVALID_ARG, dagger_allreduce_bytes(BI.rt, b, 8, NULL, NULL));
    E(DAGGER_OK, dagger_allreduce_bytes(BI.rt, b, 8, combine, NULL));
}
