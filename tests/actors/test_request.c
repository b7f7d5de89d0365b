/* Request/reply through the public API: blocking with timeout, the future
 * form, replies inside actors (dagger_ask), deferred replies, and how
 * failures reach the requester. */
#include <semaphore.h>

#include "act_test.h"
#include "actors/system_impl.h"
#include "core/base/status_internal.h"

static dagger_runtime_t rt_storage, *rt = &rt_storage;
static dg_act_system_t *sys;
static dagger_msg_type_t PING, PONG, FAIL, GO, SAVE, FLUSH;
static sem_t gate_entered, gate_release;

static dagger_msg_type_t reg(const char *name, dagger_msg_encoding_t enc, size_t size)
{
    dagger_msg_type_desc_t d = {name, enc, size};
    dagger_msg_type_t t;
    cr_assert_eq(dagger_msg_type_register(rt, &d, &t), DAGGER_OK, "%s", dagger_error_detail());
    return t;
}

static void setup(void)
{
    sys = act_test_runtime(rt, 2);
    PING = reg("rq.ping", DAGGER_MSG_FIXED, sizeof(int));
    PONG = reg("rq.pong", DAGGER_MSG_FIXED, sizeof(int));
    FAIL = reg("rq.fail", DAGGER_MSG_FIXED, 0);
    GO = reg("rq.go", DAGGER_MSG_FIXED, sizeof(dagger_actor_addr_t));
    SAVE = reg("rq.save", DAGGER_MSG_FIXED, sizeof(int));
    FLUSH = reg("rq.flush", DAGGER_MSG_FIXED, 0);
    sem_init(&gate_entered, 0, 0);
    sem_init(&gate_release, 0, 0);
}

static void teardown(void)
{
    act_test_runtime_done(rt);
}

TestSuite(request, .init = setup, .fini = teardown, .timeout = 30);

/* ---------------------------------------------------------------- echo */

static dagger_status_t on_ping(dagger_ctx_t *ctx)
{
    int v;
    memcpy(&v, dagger_ctx_payload(ctx), sizeof(v));
    v += 1;
    return dagger_reply(ctx, PONG, &v, sizeof(v));
}

static dagger_status_t on_fail(dagger_ctx_t *ctx)
{
    (void)ctx;
    return dg_error(DAGGER_ERR_NOT_FOUND, "no such key: 'apple'");
}

static dagger_actor_addr_t spawn_echo(void)
{
    dagger_handler_t h[] = {{PING, on_ping}, {FAIL, on_fail}};
    dagger_actor_desc_t d = {.name = "echo", .handlers = h, .nhandlers = 2};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(rt, &d, &a), DAGGER_OK, "%s", dagger_error_detail());
    return a;
}

Test(request, blocking_request_returns_the_reply)
{
    dagger_actor_addr_t echo = spawn_echo();
    for (int i = 0; i < 100; i++) {
        int out = -1;
        dagger_reply_t r = {.buf = &out, .capacity = sizeof(out)};
        cr_assert_eq(dagger_request(rt, echo, PING, &i, sizeof(i), 5000000, &r), DAGGER_OK, "%s",
                     dagger_error_detail());
        cr_assert_eq(out, i + 1);
        cr_assert_eq(r.size, sizeof(int));
        cr_assert_eq(r.type, PONG);
        cr_assert(dagger_actor_addr_eq(r.from, echo));
    }
}

Test(request, handler_failure_reaches_the_requester_with_its_detail)
{
    dagger_actor_addr_t echo = spawn_echo();
    int dummy = 0;
    dagger_reply_t r = {.buf = &dummy, .capacity = sizeof(dummy)};
    cr_assert_eq(dagger_request(rt, echo, FAIL, NULL, 0, DAGGER_WAIT_FOREVER, &r), DAGGER_ERR_NOT_FOUND);
    cr_assert(strstr(dagger_error_detail(), "no such key: 'apple'"), "%s", dagger_error_detail());
    cr_assert(strstr(dagger_error_detail(), "rq.fail") && strstr(dagger_error_detail(), "echo"), "%s",
              dagger_error_detail());
}

Test(request, small_buffer_is_overflow_and_the_future_can_be_read_again)
{
    dagger_actor_addr_t echo = spawn_echo();
    int v = 41;
    dagger_request_t req;
    cr_assert_eq(dagger_request_start(rt, echo, PING, &v, sizeof(v), &req), DAGGER_OK);
    char small[2];
    dagger_reply_t r = {.buf = small, .capacity = sizeof(small)};
    cr_assert_eq(dagger_request_wait(rt, req, DAGGER_WAIT_FOREVER, &r), DAGGER_ERR_OVERFLOW);
    cr_assert_eq(r.size, sizeof(int), "says how much is needed");
    int out = 0;
    r = (dagger_reply_t){.buf = &out, .capacity = sizeof(out)};
    cr_assert_eq(dagger_request_wait(rt, req, 0, &r), DAGGER_OK);
    cr_assert_eq(out, 42);
    cr_assert_eq(dagger_request_free(rt, req), DAGGER_OK);
    cr_assert_eq(dagger_request_free(rt, req), DAGGER_ERR_BAD_HANDLE, "double destroy");
    cr_assert_eq(dagger_request_wait(rt, req, 0, &r), DAGGER_ERR_BAD_HANDLE);
    cr_assert_eq(dagger_request_wait(rt, 987654321, 0, &r), DAGGER_ERR_BAD_HANDLE);
}

/* --------------------------------------------------------- a slow actor */

static dagger_status_t on_slow_ping(dagger_ctx_t *ctx)
{
    sem_post(&gate_entered);
    sem_wait(&gate_release);
    return on_ping(ctx);
}

static dagger_actor_addr_t spawn_slow(void)
{
    dagger_handler_t h[] = {{PING, on_slow_ping}};
    dagger_actor_desc_t d = {.name = "slow", .handlers = h, .nhandlers = 1};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(rt, &d, &a), DAGGER_OK);
    return a;
}

/* The count of late replies, read under its lock (workers update it). */
static uint64_t late_replies(void)
{
    pthread_mutex_lock(&sys->futures.lock);
    uint64_t n = sys->futures.late;
    pthread_mutex_unlock(&sys->futures.lock);
    return n;
}

Test(request, timed_out_request_fails_and_its_late_reply_is_discarded)
{
    dagger_actor_addr_t slow = spawn_slow();
    int v = 1, out;
    dagger_reply_t r = {.buf = &out, .capacity = sizeof(out)};
    cr_assert_eq(dagger_request(rt, slow, PING, &v, sizeof(v), 20000, &r), DAGGER_ERR_TIMEOUT);
    sem_post(&gate_release);
    double t0 = act_test_now();
    while (late_replies() == 0 && act_test_now() - t0 < 10)
        act_test_sleep_ms(1);
    cr_assert_eq(late_replies(), 1, "the late reply found no future and was dropped");
}

Test(request, future_can_be_polled_then_waited)
{
    dagger_actor_addr_t slow = spawn_slow();
    int v = 9, out = 0;
    dagger_request_t req;
    cr_assert_eq(dagger_request_start(rt, slow, PING, &v, sizeof(v), &req), DAGGER_OK);
    dagger_reply_t r = {.buf = &out, .capacity = sizeof(out)};
    sem_wait(&gate_entered);
    cr_assert_eq(dagger_request_wait(rt, req, 0, &r), DAGGER_ERR_TIMEOUT, "not answered yet");
    sem_post(&gate_release);
    cr_assert_eq(dagger_request_wait(rt, req, DAGGER_WAIT_FOREVER, &r), DAGGER_OK);
    cr_assert_eq(out, 10);
    cr_assert_eq(dagger_request_free(rt, req), DAGGER_OK);
}

Test(request, request_dropped_by_a_stop_fails_with_actor_stopped)
{
    dagger_actor_addr_t slow = spawn_slow();
    int v = 1, out;
    dagger_request_t first, second;
    cr_assert_eq(dagger_request_start(rt, slow, PING, &v, sizeof(v), &first), DAGGER_OK);
    sem_wait(&gate_entered); /* busy with the first */
    cr_assert_eq(dagger_request_start(rt, slow, PING, &v, sizeof(v), &second), DAGGER_OK);
    cr_assert_eq(dagger_actor_stop(rt, slow), DAGGER_OK);
    sem_post(&gate_release);
    dagger_reply_t r = {.buf = &out, .capacity = sizeof(out)};
    cr_assert_eq(dagger_request_wait(rt, first, DAGGER_WAIT_FOREVER, &r), DAGGER_OK, "it was handled");
    cr_assert_eq(dagger_request_wait(rt, second, DAGGER_WAIT_FOREVER, &r), DAGGER_ERR_ACTOR_STOPPED);
    cr_assert(strstr(dagger_error_detail(), "'slow'"), "%s", dagger_error_detail());
    dagger_request_free(rt, first);
    dagger_request_free(rt, second);
    cr_assert_eq(dagger_request(rt, slow, PING, &v, sizeof(v), 1000, &r), DAGGER_ERR_ACTOR_STOPPED);
}

/* ----------------------------------------------------- inside actors */

typedef struct {
    uint64_t asked;
    _Atomic int got;
    int value;
    int was_reply;
    int corr_matches;
    dagger_actor_addr_t sender;
    dagger_status_t inside_request, inside_wait;
} asker_t;

static dagger_status_t on_go(dagger_ctx_t *ctx)
{
    asker_t *s = dagger_ctx_state(ctx);
    dagger_actor_addr_t echo;
    memcpy(&echo, dagger_ctx_payload(ctx), sizeof(echo));
    int v = 100, out;
    dagger_reply_t r = {.buf = &out, .capacity = sizeof(out)};
    s->inside_request = dagger_request(dagger_ctx_runtime(ctx), echo, PING, &v, sizeof(v), 1000, &r);
    s->inside_wait = dagger_request_wait(dagger_ctx_runtime(ctx), 1, 1000, &r);
    return dagger_ask(ctx, echo, PING, &v, sizeof(v), &s->asked);
}

static dagger_status_t on_pong(dagger_ctx_t *ctx)
{
    asker_t *s = dagger_ctx_state(ctx);
    memcpy(&s->value, dagger_ctx_payload(ctx), sizeof(int));
    s->was_reply = dagger_ctx_is_reply(ctx);
    s->corr_matches = dagger_ctx_corr(ctx) == s->asked;
    s->sender = dagger_ctx_sender(ctx);
    atomic_store(&s->got, 1);
    return DAGGER_OK;
}

Test(request, ask_from_an_actor_gets_the_reply_as_a_message)
{
    dagger_actor_addr_t echo = spawn_echo();
    asker_t s = {0};
    dagger_handler_t h[] = {{GO, on_go}, {PONG, on_pong}};
    dagger_actor_desc_t d = {.name = "asker", .state = &s, .handlers = h, .nhandlers = 2};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(rt, &d, &a), DAGGER_OK);
    cr_assert_eq(dagger_send(rt, a, GO, &echo, sizeof(echo)), DAGGER_OK);
    ACT_WAIT_FOR(&s.got, 1);
    cr_assert_eq(s.value, 101);
    cr_assert(s.was_reply);
    cr_assert(s.corr_matches);
    cr_assert(dagger_actor_addr_eq(s.sender, echo));
    cr_assert_eq(s.inside_request, DAGGER_ERR_STATE, "blocking request inside a handler");
    cr_assert_eq(s.inside_wait, DAGGER_ERR_STATE, "waiting inside a handler");
    int v = 0;
    cr_assert_eq(dagger_ask(NULL, echo, PING, &v, sizeof(v), NULL), DAGGER_ERR_STATE, "outside handlers");
    dg_act_system_stop_all(sys); /* s lives on this stack frame */
}

/* ----------------------------------------------------- deferred reply */

typedef struct {
    dagger_reply_to_t saved[8];
    int n;
    dagger_status_t plain_reply, second_reply;
} deferrer_t;

static dagger_status_t on_save(dagger_ctx_t *ctx)
{
    deferrer_t *s = dagger_ctx_state(ctx);
    s->saved[s->n++] = dagger_ctx_reply_to(ctx);
    return DAGGER_OK;
}

static dagger_status_t on_flush(dagger_ctx_t *ctx)
{
    deferrer_t *s = dagger_ctx_state(ctx);
    s->plain_reply = dagger_reply(ctx, PONG, &s->n, sizeof(int)); /* flush came from dagger_send */
    for (int i = 0; i < s->n; i++) {
        int v = 1000 + i;
        dagger_status_t st = dagger_reply_later(dagger_ctx_runtime(ctx), s->saved[i], PONG, &v, sizeof(v));
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}

Test(request, replies_can_be_deferred_to_a_later_message)
{
    deferrer_t s = {0};
    dagger_handler_t h[] = {{SAVE, on_save}, {FLUSH, on_flush}};
    dagger_actor_desc_t d = {.name = "deferrer", .state = &s, .handlers = h, .nhandlers = 2, .pin = 1};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(rt, &d, &a), DAGGER_OK);
    dagger_request_t req[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(dagger_request_start(rt, a, SAVE, &i, sizeof(i), &req[i]), DAGGER_OK);
    cr_assert_eq(dagger_send(rt, a, FLUSH, NULL, 0), DAGGER_OK);
    for (int i = 0; i < 3; i++) {
        int out;
        dagger_reply_t r = {.buf = &out, .capacity = sizeof(out)};
        cr_assert_eq(dagger_request_wait(rt, req[i], DAGGER_WAIT_FOREVER, &r), DAGGER_OK, "%s",
                     dagger_error_detail());
        cr_assert_eq(out, 1000 + i);
        dagger_request_free(rt, req[i]);
    }
    dg_act_system_stop_all(sys);
    cr_assert_eq(s.plain_reply, DAGGER_ERR_STATE, "a plain dagger_send has no one to answer");
}

static _Atomic int double_reply_ok;

static dagger_status_t on_double_reply(dagger_ctx_t *ctx)
{
    int v = 1;
    dagger_status_t first = dagger_reply(ctx, PONG, &v, sizeof(v));
    dagger_status_t second = dagger_reply(ctx, PONG, &v, sizeof(v));
    atomic_store(&double_reply_ok, first == DAGGER_OK && second == DAGGER_ERR_STATE);
    return DAGGER_OK;
}

Test(request, second_reply_and_reply_outside_handlers_are_errors)
{
    dagger_handler_t h[] = {{PING, on_double_reply}};
    dagger_actor_desc_t d = {.name = "twice", .handlers = h, .nhandlers = 1};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(rt, &d, &a), DAGGER_OK);
    int v = 0, out = 0;
    dagger_reply_t r = {.buf = &out, .capacity = sizeof(out)};
    cr_assert_eq(dagger_request(rt, a, PING, &v, sizeof(v), DAGGER_WAIT_FOREVER, &r), DAGGER_OK);
    cr_assert_eq(out, 1);
    dg_act_system_stop_all(sys); /* the handler has certainly returned */
    cr_assert(atomic_load(&double_reply_ok), "the second dagger_reply was not refused");
    cr_assert_eq(dagger_reply(NULL, PONG, &v, sizeof(v)), DAGGER_ERR_INVALID_ARG);
    dagger_reply_to_t nobody = {dagger_actor_none(), 0};
    cr_assert_eq(dagger_reply_later(rt, nobody, PONG, &v, sizeof(v)), DAGGER_ERR_INVALID_ARG);
}

Test(request, bad_arguments_are_reported)
{
    dagger_actor_addr_t echo = spawn_echo();
    int v = 0;
    dagger_request_t req;
    dagger_reply_t r = {.buf = NULL, .capacity = 4};
    cr_assert_eq(dagger_request(rt, echo, PING, &v, sizeof(v), 1000, NULL), DAGGER_ERR_INVALID_ARG);
    cr_assert_eq(dagger_request(rt, echo, PING, &v, sizeof(v), 1000, &r), DAGGER_ERR_INVALID_ARG);
    cr_assert_eq(dagger_request_start(rt, echo, PING, &v, sizeof(v), NULL), DAGGER_ERR_INVALID_ARG);
    cr_assert_eq(dagger_request_start(rt, echo, PING, &v, 2, &req), DAGGER_ERR_MSG_SIZE);
    cr_assert_eq(dagger_request_start(rt, echo, GO, &echo, sizeof(echo), &req), DAGGER_ERR_MSG_TYPE);
    cr_assert_eq(dagger_request_start(NULL, echo, PING, &v, sizeof(v), &req), DAGGER_ERR_BAD_HANDLE);
    dagger_actor_addr_t nowhere = {0, 424242};
    cr_assert_eq(dagger_request_start(rt, nowhere, PING, &v, sizeof(v), &req), DAGGER_ERR_NO_SUCH_ACTOR);
}
