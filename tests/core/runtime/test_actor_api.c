/* The public actor API through dagger_init/dagger_finalize: thread counts
 * from settings, a whole request/timer/stop/join cycle, and every kind of
 * bad input (NULL and dangling handles, double destroy) answered with a
 * specific error instead of a crash. */
#include <criterion/criterion.h>
#include <dagger.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static dagger_runtime_t *init_with(int threads)
{
    dagger_params_t p = {.num_threads = threads, .no_bind = 1};
    dagger_runtime_t *rt = NULL;
    cr_assert_eq(dagger_init(NULL, NULL, &p, &rt), DAGGER_OK, "%s", dagger_error_detail());
    return rt;
}

Test(actor_api, thread_count_comes_from_params_then_settings)
{
    dagger_runtime_t *rt = init_with(3);
    cr_assert_eq(dagger_num_threads(rt), 3);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);

    setenv("DAGGER_NUM_THREADS", "2", 1);
    rt = init_with(0);
    cr_assert_eq(dagger_num_threads(rt), 2, "DAGGER_NUM_THREADS is used when params say 0");
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
    rt = init_with(1);
    cr_assert_eq(dagger_num_threads(rt), 1, "params override DAGGER_NUM_THREADS");
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);

    setenv("DAGGER_NUM_THREADS", "-2", 1);
    dagger_runtime_t *bad = (dagger_runtime_t *)1;
    cr_assert_eq(dagger_init(NULL, NULL, NULL, &bad), DAGGER_ERR_CONFIG);
    cr_assert_null(bad);
    cr_assert(strstr(dagger_error_detail(), "DAGGER_NUM_THREADS"), "%s", dagger_error_detail());
    unsetenv("DAGGER_NUM_THREADS");
}

/* ------------------------------------------------------ a whole cycle */

typedef struct {
    int total;
    _Atomic int ticks;
    _Atomic int stopped;
} adder_t;

static dagger_msg_type_t ADD, SUM, TICK;

static dagger_status_t on_add(dagger_ctx_t *ctx)
{
    adder_t *s = dagger_ctx_state(ctx);
    int v;
    memcpy(&v, dagger_ctx_payload(ctx), sizeof(v));
    s->total += v;
    return dagger_reply(ctx, SUM, &s->total, sizeof(s->total));
}

static dagger_status_t on_tick(dagger_ctx_t *ctx)
{
    adder_t *s = dagger_ctx_state(ctx);
    atomic_fetch_add(&s->ticks, 1);
    return DAGGER_OK;
}

static void on_adder_stop(dagger_ctx_t *ctx)
{
    adder_t *s = dagger_ctx_state(ctx);
    atomic_fetch_add(&s->stopped, 1);
}

static dagger_actor_addr_t spawn_adder(dagger_runtime_t *rt, adder_t *s)
{
    dagger_msg_type_desc_t add = {"api.add", DAGGER_MSG_FIXED, sizeof(int)};
    dagger_msg_type_desc_t sum = {"api.sum", DAGGER_MSG_FIXED, sizeof(int)};
    dagger_msg_type_desc_t tick = {"api.tick", DAGGER_MSG_FIXED, 0};
    cr_assert_eq(dagger_msg_type_register(rt, &add, &ADD), DAGGER_OK);
    cr_assert_eq(dagger_msg_type_register(rt, &sum, &SUM), DAGGER_OK);
    cr_assert_eq(dagger_msg_type_register(rt, &tick, &TICK), DAGGER_OK);
    dagger_handler_t h[] = {{ADD, on_add}, {TICK, on_tick}};
    dagger_actor_desc_t d = {.name = "adder", .state = s, .handlers = h, .nhandlers = 2,
                             .on_stop = on_adder_stop};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(rt, &d, &a), DAGGER_OK, "%s", dagger_error_detail());
    return a;
}

Test(actor_api, register_spawn_request_timer_stop_join)
{
    dagger_runtime_t *rt = init_with(2);
    adder_t s = {0};
    dagger_actor_addr_t a = spawn_adder(rt, &s);
    cr_assert_eq(a.rank, dagger_rank(rt));
    dagger_msg_type_t found;
    cr_assert_eq(dagger_msg_type_find(rt, "api.add", &found), DAGGER_OK);
    cr_assert_eq(found, ADD);
    cr_assert_eq(dagger_msg_type_find(rt, "api.nope", &found), DAGGER_ERR_NOT_FOUND);
    for (int i = 1; i <= 10; i++) {
        int total = 0;
        dagger_reply_t r = {.buf = &total, .capacity = sizeof(total)};
        cr_assert_eq(dagger_request(rt, a, ADD, &i, sizeof(i), 5000000, &r), DAGGER_OK, "%s",
                     dagger_error_detail());
        cr_assert_eq(total, i * (i + 1) / 2);
    }
    dagger_timer_t t;
    cr_assert_eq(dagger_timer_start(rt, a, TICK, NULL, 0, 0, 1000, &t), DAGGER_OK);
    for (int i = 0; i < 5000 && atomic_load(&s.ticks) < 3; i++)
        sleep_ms(1);
    cr_assert_geq(atomic_load(&s.ticks), 3);
    cr_assert_eq(dagger_timer_cancel(rt, t), DAGGER_OK);
    cr_assert_eq(dagger_actor_stop(rt, a), DAGGER_OK);
    dagger_actor_stats_t st;
    cr_assert_eq(dagger_actor_join(rt, a, DAGGER_WAIT_FOREVER, &st), DAGGER_OK);
    cr_assert_geq(st.handled, 13);
    cr_assert_eq(atomic_load(&s.stopped), 1);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

Test(actor_api, finalize_stops_and_joins_live_actors)
{
    dagger_runtime_t *rt = init_with(2);
    adder_t s[5] = {{0}};
    for (int i = 0; i < 5; i++)
        spawn_adder(rt, &s[i]);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(atomic_load(&s[i].stopped), 1, "actor %d was not stopped", i);
}

/* ------------------------------------------------------ bad handles */

Test(actor_api, null_and_dangling_runtime_handles_are_bad_handles)
{
    dagger_runtime_t *dead = init_with(1);
    cr_assert_eq(dagger_finalize(dead), DAGGER_OK);
    cr_assert_eq(dagger_finalize(dead), DAGGER_ERR_BAD_HANDLE, "double finalize");
    dagger_runtime_t *handles[] = {NULL, dead};
    dagger_actor_addr_t a = {0, 1};
    int v = 0;
    dagger_msg_type_desc_t d = {"x", DAGGER_MSG_FIXED, 4};
    dagger_actor_desc_t ad = {.name = "x"};
    dagger_msg_type_t t;
    dagger_reply_t r = {0};
    dagger_request_t req;
    dagger_timer_t tm;
    dagger_reply_to_t rto = {a, 1};
    for (int i = 0; i < 2; i++) {
        dagger_runtime_t *rt = handles[i];
        cr_assert_eq(dagger_msg_type_register(rt, &d, &t), DAGGER_ERR_BAD_HANDLE);
        cr_assert_eq(dagger_msg_type_find(rt, "x", &t), DAGGER_ERR_BAD_HANDLE);
        cr_assert_eq(dagger_actor_spawn(rt, &ad, &a), DAGGER_ERR_BAD_HANDLE);
        cr_assert_eq(dagger_actor_stop(rt, a), DAGGER_ERR_BAD_HANDLE);
        cr_assert_eq(dagger_actor_join(rt, a, 0, NULL), DAGGER_ERR_BAD_HANDLE);
        cr_assert_eq(dagger_send(rt, a, 1, &v, sizeof(v)), DAGGER_ERR_BAD_HANDLE);
        cr_assert_eq(dagger_reply_later(rt, rto, 1, &v, sizeof(v)), DAGGER_ERR_BAD_HANDLE);
        cr_assert_eq(dagger_request(rt, a, 1, &v, sizeof(v), 0, &r), DAGGER_ERR_BAD_HANDLE);
        cr_assert_eq(dagger_request_start(rt, a, 1, &v, sizeof(v), &req), DAGGER_ERR_BAD_HANDLE);
        cr_assert_eq(dagger_request_wait(rt, 1, 0, &r), DAGGER_ERR_BAD_HANDLE);
        cr_assert_eq(dagger_request_free(rt, 1), DAGGER_ERR_BAD_HANDLE);
        cr_assert_eq(dagger_timer_start(rt, a, 1, &v, sizeof(v), 0, 0, &tm), DAGGER_ERR_BAD_HANDLE);
        cr_assert_eq(dagger_timer_cancel(rt, 1), DAGGER_ERR_BAD_HANDLE);
        cr_assert_eq(dagger_num_threads(rt), -1);
    }
    cr_assert(strstr(dagger_error_detail(), "not a live runtime handle"), "%s", dagger_error_detail());
}

Test(actor_api, context_accessors_accept_null)
{
    cr_assert_eq(dagger_ctx_self(NULL).id, 0);
    cr_assert_eq(dagger_ctx_sender(NULL).rank, -1);
    cr_assert_eq(dagger_ctx_type(NULL), 0);
    cr_assert_null(dagger_ctx_payload(NULL));
    cr_assert_eq(dagger_ctx_size(NULL), 0);
    cr_assert_eq(dagger_ctx_corr(NULL), 0);
    cr_assert_eq(dagger_ctx_is_reply(NULL), 0);
    cr_assert_null(dagger_ctx_state(NULL));
    cr_assert_null(dagger_ctx_runtime(NULL));
    cr_assert_eq(dagger_ctx_worker(NULL), -1);
    cr_assert_eq(dagger_ctx_reply_to(NULL).addr.id, 0);
}

/* ------------------------------------- blocking calls from handlers */

typedef struct {
    dagger_status_t finalize, join;
    _Atomic int done;
    dagger_runtime_t *rt;
} blocker_t;

static dagger_status_t on_try_blocking(dagger_ctx_t *ctx)
{
    blocker_t *b = dagger_ctx_state(ctx);
    cr_assert_eq(dagger_ctx_runtime(ctx), b->rt);
    b->finalize = dagger_finalize(dagger_ctx_runtime(ctx));
    b->join = dagger_actor_join(dagger_ctx_runtime(ctx), dagger_ctx_self(ctx), 0, NULL);
    atomic_store(&b->done, 1);
    return DAGGER_OK;
}

Test(actor_api, calls_that_would_block_a_worker_are_refused_in_handlers)
{
    dagger_runtime_t *rt = init_with(1);
    blocker_t b = {.rt = rt};
    dagger_msg_type_desc_t d = {"api.block", DAGGER_MSG_FIXED, 0};
    dagger_msg_type_t T;
    cr_assert_eq(dagger_msg_type_register(rt, &d, &T), DAGGER_OK);
    dagger_handler_t h[] = {{T, on_try_blocking}};
    dagger_actor_desc_t ad = {.name = "blocker", .state = &b, .handlers = h, .nhandlers = 1};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(rt, &ad, &a), DAGGER_OK);
    cr_assert_eq(dagger_send(rt, a, T, NULL, 0), DAGGER_OK);
    for (int i = 0; i < 5000 && !atomic_load(&b.done); i++)
        sleep_ms(1);
    cr_assert_eq(atomic_load(&b.done), 1);
    cr_assert_eq(b.finalize, DAGGER_ERR_STATE);
    cr_assert_eq(b.join, DAGGER_ERR_STATE);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK, "the runtime is still intact");
}

Test(actor_api, double_stop_and_unknown_join_are_specific_errors)
{
    dagger_runtime_t *rt = init_with(1);
    adder_t s = {0};
    dagger_actor_addr_t a = spawn_adder(rt, &s);
    cr_assert_eq(dagger_actor_stop(rt, a), DAGGER_OK);
    cr_assert_eq(dagger_actor_stop(rt, a), DAGGER_ERR_ACTOR_STOPPED);
    int v = 1;
    cr_assert_eq(dagger_send(rt, a, ADD, &v, sizeof(v)), DAGGER_ERR_ACTOR_STOPPED);
    cr_assert_eq(dagger_actor_join(rt, a, DAGGER_WAIT_FOREVER, NULL), DAGGER_OK);
    cr_assert_eq(dagger_actor_join(rt, a, DAGGER_WAIT_FOREVER, NULL), DAGGER_ERR_STATE);
    dagger_actor_addr_t unknown = {0, 0x5555};
    cr_assert_eq(dagger_actor_join(rt, unknown, 0, NULL), DAGGER_ERR_NO_SUCH_ACTOR);
    dagger_actor_addr_t other_rank = {dagger_nranks(rt), 1};
    cr_assert_eq(dagger_send(rt, other_rank, ADD, &v, sizeof(v)), DAGGER_ERR_NO_SUCH_ACTOR);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

/* ------------------------------------------ requests from inside tasks */

/* A task may ask a local actor and wait for the answer (dagger_request).
 * Here every thread that runs tasks is inside such a task at once (more
 * tasks than threads, the workers asleep between regions): the actor's turn
 * must still run. A worker that waits for a reply runs actor turns
 * meanwhile (docs/actors.md, "Waiting inside tasks"); before, the turn
 * waited on the queue of a worker blocked in its task, and the requests
 * timed out. The codelet returns the request's status, so a failure fails
 * the region. */
static dagger_runtime_t *task_rt;
static dagger_actor_addr_t task_adder;
static _Atomic int task_asks;

/* regions of per_region tasks of fn, more than the threads that run tasks;
 * the workers go to sleep between regions. */
static void run_regions(dagger_runtime_t *rt, const char *name, dagger_impl_fn fn, int regions,
                        int per_region)
{
    dagger_codelet_desc_t d = {.name = name, .cpu = fn};
    dagger_codelet_t cl;
    cr_assert_eq(dagger_codelet_register(rt, &d, &cl), DAGGER_OK);
    for (int k = 0; k < regions; k++) {
        dagger_region_t *r;
        cr_assert_eq(dagger_region_begin(rt, NULL, &r), DAGGER_OK);
        for (int j = 0; j < per_region; j++)
            cr_assert_eq(dagger_spawn(r, cl, DAGGER_END), DAGGER_OK);
        cr_assert_eq(dagger_region_end(r), DAGGER_OK, "region %d: %s", k, dagger_error_detail());
        sleep_ms(2);
    }
}

static int ask_adder(dagger_task_t *t)
{
    (void)t;
    int one = 1, total = 0;
    dagger_reply_t r = {.buf = &total, .capacity = sizeof(total)};
    dagger_status_t st = dagger_request(task_rt, task_adder, ADD, &one, sizeof(one), 5000000, &r);
    if (st == DAGGER_OK)
        atomic_fetch_add(&task_asks, 1);
    return st;
}

Test(actor_api, tasks_may_wait_for_actor_replies_while_every_thread_runs_one, .timeout = 60)
{
    dagger_runtime_t *rt = task_rt = init_with(2);
    adder_t s = {0};
    task_adder = spawn_adder(rt, &s);
    int regions = 40, per_region = 6;
    run_regions(rt, "api.ask_adder", ask_adder, regions, per_region);
    cr_assert_eq(atomic_load(&task_asks), regions * per_region);
    cr_assert_eq(s.total, regions * per_region, "each request was handled once");
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

/* The same for dagger_actor_join: a task that stops and joins an actor of
 * its own waits for that actor's last turn, which may be queued for the
 * very worker that runs the task. */
static dagger_msg_type_t task_ping;
static _Atomic int task_joins;

static dagger_status_t on_task_ping(dagger_ctx_t *ctx)
{
    (void)ctx;
    return DAGGER_OK;
}

static int spawn_stop_join(dagger_task_t *t)
{
    (void)t;
    dagger_handler_t h[] = {{task_ping, on_task_ping}};
    dagger_actor_desc_t d = {.name = "api.short_lived", .handlers = h, .nhandlers = 1};
    dagger_actor_addr_t a;
    dagger_status_t st = dagger_actor_spawn(task_rt, &d, &a);
    for (int i = 0; i < 10 && st == DAGGER_OK; i++)
        st = dagger_send(task_rt, a, task_ping, NULL, 0);
    if (st == DAGGER_OK)
        st = dagger_actor_stop(task_rt, a);
    if (st == DAGGER_OK)
        st = dagger_actor_join(task_rt, a, 5000000, NULL);
    if (st == DAGGER_OK)
        atomic_fetch_add(&task_joins, 1);
    return st;
}

Test(actor_api, tasks_may_join_actors_while_every_thread_runs_one, .timeout = 60)
{
    dagger_runtime_t *rt = task_rt = init_with(2);
    dagger_msg_type_desc_t md = {"api.task_ping", DAGGER_MSG_FIXED, 0};
    cr_assert_eq(dagger_msg_type_register(rt, &md, &task_ping), DAGGER_OK);
    int regions = 40, per_region = 6;
    run_regions(rt, "api.spawn_stop_join", spawn_stop_join, regions, per_region);
    cr_assert_eq(atomic_load(&task_joins), regions * per_region);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}
