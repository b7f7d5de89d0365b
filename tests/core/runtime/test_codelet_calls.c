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

static void record_in(probe_t *into, int k, const char *name, dagger_status_t st)
{
    into[k].name = name;
    into[k].st = st;
    snprintf(into[k].detail, sizeof(into[k].detail), "%s", dagger_error_detail());
}

/* Every probe refused, its detail naming it and where it was called. */
static void expect_refused_in(const probe_t *p, int n, const char *where)
{
    for (int k = 0; k < n; k++) {
        cr_expect_eq(p[k].st, DAGGER_ERR_STATE, "%s from %s gave %s (%s)", p[k].name, where,
                     dagger_strerror(p[k].st), p[k].detail);
        char said[64];
        snprintf(said, sizeof(said), "called from %s", where);
        cr_expect(strstr(p[k].detail, p[k].name) && strstr(p[k].detail, said),
                  "%s: detail '%s'", p[k].name, p[k].detail);
    }
}

static void expect_refused(const probe_t *p, int n)
{
    expect_refused_in(p, n, "a task's codelet");
}

/* The calls that wait for every rank, recorded into p[0 .. N_PROBES - 1]. */
static void waiting_calls(dagger_runtime_t *rt, probe_t *p)
{
    double v = 1, buf[4];
    void *all = NULL;
    size_t lens[1];
    dagger_region_t *r;
    record_in(p, 0, "dagger_barrier", dagger_barrier(rt));
    record_in(p, 1, "dagger_bcast", dagger_bcast(rt, &v, sizeof(v), 0));
    record_in(p, 2, "dagger_allgather", dagger_allgather(rt, &v, sizeof(v), &all, lens));
    record_in(p, 3, "dagger_allreduce", dagger_allreduce(rt, &v, 1, DAGGER_F64, DAGGER_OP_ADD));
    record_in(p, 4, "dagger_allreduce_bytes",
              dagger_allreduce_bytes(rt, &v, sizeof(v), add_u8, NULL));
    record_in(p, 5, "dagger_region_begin", dagger_region_begin(rt, NULL, &r));
    record_in(p, 6, "dagger_region_end", dagger_region_end(the_region));
    record_in(p, 7, "dagger_fetch", dagger_fetch(rt, the_future, &v, sizeof(v), NULL));
    record_in(p, 8, "dagger_fetch_chunk",
              dagger_fetch_chunk(rt, the_chunk, buf, sizeof(buf), NULL));
    record_in(p, 9, "dagger_finalize", dagger_finalize(rt));
}

static int try_spmd_calls(dagger_task_t *t)
{
    (void)t;
    waiting_calls(the_rt, probes);
    return DAGGER_OK;
}

static int make_value(dagger_task_t *t)
{
    double v = 42;
    return dagger_task_return(t, &v, sizeof(v));
}

/* A runtime on one rank with the_chunk made. */
static dagger_runtime_t *start(void)
{
    dagger_params_t p = {.num_threads = 2, .no_bind = 1};
    cr_assert_eq(dagger_init(NULL, NULL, &p, &the_rt), DAGGER_OK, "%s", dagger_error_detail());
    dagger_chunk_desc_t cd = {.dtype = DAGGER_F64, .ndims = 1, .dims = {4}, .owner = 0};
    cr_assert_eq(dagger_chunk_create(the_rt, &cd, &the_chunk), DAGGER_OK);
    return the_rt;
}

/* the_region: a task returning 42 (the_future), then one running fn with
 * the future as its argument. */
static void run_in_task(const char *name, dagger_impl_fn fn)
{
    dagger_codelet_t value, probe;
    dagger_codelet_desc_t dv = {.name = "cc.value", .cpu = make_value, .return_size = sizeof(double)};
    dagger_codelet_desc_t dp = {.name = name, .cpu = fn};
    cr_assert_eq(dagger_codelet_register(the_rt, &dv, &value), DAGGER_OK);
    cr_assert_eq(dagger_codelet_register(the_rt, &dp, &probe), DAGGER_OK);
    cr_assert_eq(dagger_region_begin(the_rt, NULL, &the_region), DAGGER_OK);
    cr_assert_eq(dagger_submit(the_region, value, 0, NULL, NULL, NULL, &the_future), DAGGER_OK);
    dagger_arg_t a = DAGGER_FUTURE(the_future);
    cr_assert_eq(dagger_submit(the_region, probe, 1, &a, NULL, NULL, NULL), DAGGER_OK);
    cr_assert_eq(dagger_region_end(the_region), DAGGER_OK, "%s", dagger_error_detail());
}

Test(codelet_calls, spmd_calls_from_a_codelet_are_refused, .timeout = 60)
{
    dagger_runtime_t *rt = start();
    run_in_task("cc.spmd", try_spmd_calls);
    expect_refused(probes, N_PROBES);
    /* Outside the codelet the same calls work. */
    double v = 0;
    cr_assert_eq(dagger_fetch(rt, the_future, &v, sizeof(v), NULL), DAGGER_OK);
    cr_assert_eq(v, 42);
    cr_assert_eq(dagger_barrier(rt), DAGGER_OK);
    cr_assert_eq(dagger_future_free(rt, the_future), DAGGER_OK);
    cr_assert_eq(dagger_chunk_free(rt, the_chunk), DAGGER_OK);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

/* The SPMD calls that do not wait but change what every rank's planner
 * holds (submissions, chunks, futures, registrations, arrays), from a
 * codelet: refused the same way. Before 2026-12-06 a submission into the
 * task's region raced the program thread's (or, once the region was
 * ending, failed naming the planner's internals), and dagger_array_destroy
 * destroyed the array on the one rank that ran the task. */
enum { N_STATE = 9 };
static probe_t state_probes[N_STATE];
static dagger_codelet_t the_noop;
static dagger_array_t *the_array;

static int noop(dagger_task_t *t)
{
    (void)t;
    return DAGGER_OK;
}

static double index_fn(const size_t idx[], int nd, const void *args)
{
    (void)idx, (void)nd, (void)args;
    return 0;
}

/* The calls that change what every rank's planner holds, recorded into
 * p[0 .. N_STATE - 1]. */
static void state_calls(dagger_runtime_t *rt, probe_t *p)
{
    dagger_chunk_t c = {0};
    dagger_chunk_desc_t cd = {.dtype = DAGGER_F64, .ndims = 1, .dims = {4}, .owner = 0};
    dagger_codelet_t cl;
    dagger_codelet_desc_t d = {.name = "cc.late", .cpu = noop};
    dagger_index_fn_id_t fid;
    dagger_array_t *v;
    record_in(p, 0, "dagger_submit",
              dagger_submit(the_region, the_noop, 0, NULL, NULL, NULL, NULL));
    record_in(p, 1, "dagger_chunk_create", dagger_chunk_create(rt, &cd, &c));
    record_in(p, 2, "dagger_chunk_free", dagger_chunk_free(rt, the_chunk));
    record_in(p, 3, "dagger_future_free", dagger_future_free(rt, the_future));
    record_in(p, 4, "dagger_codelet_register", dagger_codelet_register(rt, &d, &cl));
    record_in(p, 5, "dagger_index_fn_register",
              dagger_index_fn_register(rt, "cc.fn", index_fn, &fid));
    record_in(p, 6, "dagger_array_destroy", dagger_array_destroy(the_array));
    record_in(p, 7, "dagger_array_view",
              dagger_array_view(the_array, (size_t[]){0}, (size_t[]){2}, &v));
    record_in(p, 8, "dagger_array_fill", dagger_array_fill(the_region, the_array, 1));
}

static int try_state_calls(dagger_task_t *t)
{
    (void)t;
    state_calls(the_rt, state_probes);
    return DAGGER_OK;
}

/* Nothing was done: the future (42), the chunk and the array are still
 * there; then they are freed and the runtime finalized. */
static void expect_untouched(dagger_runtime_t *rt)
{
    double v = 0;
    cr_assert_eq(dagger_fetch(rt, the_future, &v, sizeof(v), NULL), DAGGER_OK);
    cr_assert_eq(v, 42);
    cr_assert_eq(dagger_future_free(rt, the_future), DAGGER_OK);
    cr_assert_eq(dagger_chunk_free(rt, the_chunk), DAGGER_OK);
    cr_assert_eq(dagger_array_destroy(the_array), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

Test(codelet_calls, state_changing_calls_from_a_codelet_are_refused, .timeout = 60)
{
    dagger_runtime_t *rt = start();
    dagger_array_desc_t ad = {.dtype = DAGGER_F64, .ndims = 1, .dims = {4}, .block = {2}};
    cr_assert_eq(dagger_array_zeros(rt, &ad, &the_array), DAGGER_OK);
    dagger_codelet_desc_t dn = {.name = "cc.noop", .cpu = noop};
    cr_assert_eq(dagger_codelet_register(rt, &dn, &the_noop), DAGGER_OK);
    run_in_task("cc.state", try_state_calls);
    expect_refused(state_probes, N_STATE);
    expect_untouched(rt);
}

/* The same calls from an actor's handler and its on_stop, which run on one
 * rank's worker like a codelet: refused the same way. Before 2026-12-06
 * they ran there (a barrier from one rank's handler waits for ranks that
 * never call it, blocking the worker; a submission raced the program
 * thread's), except dagger_finalize. */
enum { N_HANDLER = N_PROBES + N_STATE + 3 };
static probe_t handler_probes[N_HANDLER];
static probe_t stop_probe[1];
static dagger_msg_type_t t_go;

static dagger_status_t try_in_handler(dagger_ctx_t *ctx)
{
    dagger_runtime_t *rt = dagger_ctx_runtime(ctx);
    probe_t *more = handler_probes + N_PROBES + N_STATE;
    double v = 1;
    dagger_array_desc_t ad = {.dtype = DAGGER_F64, .ndims = 1, .dims = {4}, .block = {2}};
    dagger_array_t *a = NULL;
    waiting_calls(rt, handler_probes);
    state_calls(rt, handler_probes + N_PROBES);
    record_in(more, 0, "dagger_array_zeros", dagger_array_zeros(rt, &ad, &a));
    record_in(more, 1, "dagger_check_uniformity", dagger_check_uniformity(rt, 1));
    record_in(more, 2, "dagger_check_uniform", dagger_check_uniform(rt, &v, sizeof(v)));
    int done = 1;
    return dagger_reply(ctx, t_go, &done, sizeof(done));
}

static void try_in_on_stop(dagger_ctx_t *ctx)
{
    record_in(stop_probe, 0, "dagger_barrier", dagger_barrier(dagger_ctx_runtime(ctx)));
}

Test(codelet_calls, spmd_calls_from_an_actor_handler_are_refused, .timeout = 60)
{
    dagger_runtime_t *rt = start();
    dagger_array_desc_t ad = {.dtype = DAGGER_F64, .ndims = 1, .dims = {4}, .block = {2}};
    cr_assert_eq(dagger_array_zeros(rt, &ad, &the_array), DAGGER_OK);
    dagger_codelet_t value;
    dagger_codelet_desc_t dv = {.name = "cc.value", .cpu = make_value, .return_size = sizeof(double)};
    dagger_codelet_desc_t dn = {.name = "cc.noop", .cpu = noop};
    cr_assert_eq(dagger_codelet_register(rt, &dv, &value), DAGGER_OK);
    cr_assert_eq(dagger_codelet_register(rt, &dn, &the_noop), DAGGER_OK);
    dagger_msg_type_desc_t td = {.name = "cc.go", .encoding = DAGGER_MSG_FIXED, .size = sizeof(int)};
    cr_assert_eq(dagger_msg_type_register(rt, &td, &t_go), DAGGER_OK);
    dagger_handler_t h[] = {{t_go, try_in_handler}};
    dagger_actor_desc_t desc = {.name = "cc.prober", .handlers = h, .nhandlers = 1,
                                .on_stop = try_in_on_stop};
    dagger_actor_addr_t prober;
    cr_assert_eq(dagger_actor_spawn(rt, &desc, &prober), DAGGER_OK);
    /* The handler runs while the program's region is open, with a task in it. */
    cr_assert_eq(dagger_region_begin(rt, NULL, &the_region), DAGGER_OK);
    cr_assert_eq(dagger_submit(the_region, value, 0, NULL, NULL, NULL, &the_future), DAGGER_OK);
    int go = 1, done = 0;
    dagger_reply_t rep = {.buf = &done, .capacity = sizeof(done)};
    cr_assert_eq(dagger_request(rt, prober, t_go, &go, sizeof(go), DAGGER_WAIT_FOREVER, &rep),
                 DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(done, 1);
    cr_assert_eq(dagger_actor_stop(rt, prober), DAGGER_OK);
    cr_assert_eq(dagger_actor_join(rt, prober, DAGGER_WAIT_FOREVER, NULL), DAGGER_OK);
    expect_refused_in(handler_probes, N_HANDLER, "an actor's handler");
    expect_refused_in(stop_probe, 1, "an actor's handler");
    /* Nothing was done: the region has its one task, and the array, the
     * chunk and the future are still there. */
    cr_assert_eq(dagger_region_end(the_region), DAGGER_OK, "%s", dagger_error_detail());
    dagger_region_stats_t rs;
    cr_assert_eq(dagger_region_stats(rt, &rs), DAGGER_OK);
    cr_expect_eq(rs.tasks, 1, "the region planned %llu tasks", (unsigned long long)rs.tasks);
    expect_untouched(rt);
}
