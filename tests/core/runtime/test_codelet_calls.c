/* The calls that wait for every rank, made from inside a task's codelet:
 * each is refused with DAGGER_ERR_STATE and a detail naming it, instead of
 * waiting for calls the other ranks never make (a collective) or for the
 * task itself (region end, finalize: dagger_finalize hung there before
 * 2026-12-05). The region still ends well, and the runtime stays usable. */
#include <criterion/criterion.h>
#include <dagger.h>
#include <stdio.h>
#include <string.h>

typedef struct probe {
    const char *name;
    dagger_status_t st;
    char detail[256];
} probe_t;

enum { N_PROBES = 10 };
static probe_t probes[N_PROBES];
static dagger_runtime_t *the_rt;
static dagger_region_t *the_region;
static dagger_chunk_t the_chunk;
static dagger_future_t the_future;

static void add_u8(void *acc, const void *in, size_t len, void *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < len; i++)
        ((unsigned char *)acc)[i] += ((const unsigned char *)in)[i];
}

static void record(int k, const char *name, dagger_status_t st)
{
    probes[k].name = name;
    probes[k].st = st;
    snprintf(probes[k].detail, sizeof(probes[k].detail), "%s", dagger_error_detail());
}

static int try_spmd_calls(dagger_task_t *t)
{
    (void)t;
    dagger_runtime_t *rt = the_rt;
    double v = 1, buf[4];
    void *all = NULL;
    size_t lens[1];
    dagger_region_t *r;
    record(0, "dagger_barrier", dagger_barrier(rt));
    record(1, "dagger_bcast", dagger_bcast(rt, &v, sizeof(v), 0));
    record(2, "dagger_allgather", dagger_allgather(rt, &v, sizeof(v), &all, lens));
    record(3, "dagger_allreduce", dagger_allreduce(rt, &v, 1, DAGGER_F64, DAGGER_OP_ADD));
    record(4, "dagger_allreduce_bytes", dagger_allreduce_bytes(rt, &v, sizeof(v), add_u8, NULL));
    record(5, "dagger_region_begin", dagger_region_begin(rt, NULL, &r));
    record(6, "dagger_region_end", dagger_region_end(the_region));
    record(7, "dagger_fetch", dagger_fetch(rt, the_future, &v, sizeof(v), NULL));
    record(8, "dagger_fetch_chunk", dagger_fetch_chunk(rt, the_chunk, buf, sizeof(buf), NULL));
    record(9, "dagger_finalize", dagger_finalize(rt));
    return DAGGER_OK;
}

static int make_value(dagger_task_t *t)
{
    double v = 42;
    return dagger_task_return(t, &v, sizeof(v));
}

Test(codelet_calls, spmd_calls_from_a_codelet_are_refused, .timeout = 60)
{
    dagger_params_t p = {.num_threads = 2, .no_bind = 1};
    cr_assert_eq(dagger_init(NULL, NULL, &p, &the_rt), DAGGER_OK, "%s", dagger_error_detail());
    dagger_runtime_t *rt = the_rt;
    dagger_chunk_desc_t cd = {.dtype = DAGGER_F64, .ndims = 1, .dims = {4}, .owner = 0};
    cr_assert_eq(dagger_chunk_create(rt, &cd, &the_chunk), DAGGER_OK);
    dagger_codelet_t value, spmd;
    dagger_codelet_desc_t dv = {.name = "cc.value", .cpu = make_value, .return_size = sizeof(double)};
    dagger_codelet_desc_t ds = {.name = "cc.spmd", .cpu = try_spmd_calls};
    cr_assert_eq(dagger_codelet_register(rt, &dv, &value), DAGGER_OK);
    cr_assert_eq(dagger_codelet_register(rt, &ds, &spmd), DAGGER_OK);
    cr_assert_eq(dagger_region_begin(rt, NULL, &the_region), DAGGER_OK);
    cr_assert_eq(dagger_submit(the_region, value, 0, NULL, NULL, NULL, &the_future), DAGGER_OK);
    dagger_arg_t a = DAGGER_FUTURE(the_future);
    cr_assert_eq(dagger_submit(the_region, spmd, 1, &a, NULL, NULL, NULL), DAGGER_OK);
    cr_assert_eq(dagger_region_end(the_region), DAGGER_OK, "%s", dagger_error_detail());
    for (int k = 0; k < N_PROBES; k++) {
        cr_expect_eq(probes[k].st, DAGGER_ERR_STATE, "%s from a codelet gave %s (%s)", probes[k].name,
                     dagger_strerror(probes[k].st), probes[k].detail);
        cr_expect(strstr(probes[k].detail, probes[k].name) &&
                      strstr(probes[k].detail, "called from a task's codelet"),
                  "%s: detail '%s'", probes[k].name, probes[k].detail);
    }
    /* Outside the codelet the same calls work. */
    double v = 0;
    cr_assert_eq(dagger_fetch(rt, the_future, &v, sizeof(v), NULL), DAGGER_OK);
    cr_assert_eq(v, 42);
    cr_assert_eq(dagger_barrier(rt), DAGGER_OK);
    cr_assert_eq(dagger_future_free(rt, the_future), DAGGER_OK);
    cr_assert_eq(dagger_chunk_free(rt, the_chunk), DAGGER_OK);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}
