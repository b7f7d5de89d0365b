/* Timers: one-shot and periodic deliveries, cancellation, and timers whose
 * destination goes away. */
#include "act_test.h"
#include "actors/system_impl.h"

static dagger_runtime_t rt_storage, *rt = &rt_storage;
static dg_act_system_t *sys;
static dagger_msg_type_t TICK, ARM;

typedef struct {
    _Atomic long ticks;
    int order[8];
    _Atomic int norder;
    double first_at;
    _Atomic int from_self;
    dagger_timer_t own_timer;
} ticker_t;

static dagger_status_t on_tick(dagger_ctx_t *ctx)
{
    ticker_t *t = dagger_ctx_state(ctx);
    int v;
    memcpy(&v, dagger_ctx_payload(ctx), sizeof(v));
    if (atomic_load(&t->ticks) == 0)
        t->first_at = act_test_now();
    int n = atomic_load(&t->norder);
    if (n < 8) {
        t->order[n] = v;
        atomic_store(&t->norder, n + 1);
    }
    if (dagger_actor_addr_eq(dagger_ctx_sender(ctx), dagger_ctx_self(ctx)))
        atomic_store(&t->from_self, 1);
    atomic_fetch_add(&t->ticks, 1);
    return DAGGER_OK;
}

/* Arms a one-shot timer to itself from inside a handler. */
static dagger_status_t on_arm(dagger_ctx_t *ctx)
{
    ticker_t *t = dagger_ctx_state(ctx);
    int v = 7;
    return dagger_timer_start(dagger_ctx_runtime(ctx), dagger_ctx_self(ctx), TICK, &v, sizeof(v), 1000, 0,
                              &t->own_timer);
}

static void setup(void)
{
    sys = act_test_runtime(rt, 2);
    dagger_msg_type_desc_t tick = {"tm.tick", DAGGER_MSG_FIXED, sizeof(int)};
    dagger_msg_type_desc_t arm = {"tm.arm", DAGGER_MSG_FIXED, 0};
    cr_assert_eq(dagger_msg_type_register(rt, &tick, &TICK), DAGGER_OK);
    cr_assert_eq(dagger_msg_type_register(rt, &arm, &ARM), DAGGER_OK);
}

static void teardown(void)
{
    act_test_runtime_done(rt);
}

TestSuite(timer, .init = setup, .fini = teardown, .timeout = 30);

static dagger_actor_addr_t spawn_ticker(ticker_t *t)
{
    dagger_handler_t h[] = {{TICK, on_tick}, {ARM, on_arm}};
    dagger_actor_desc_t d = {.name = "ticker", .state = t, .handlers = h, .nhandlers = 2};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(rt, &d, &a), DAGGER_OK);
    return a;
}

Test(timer, one_shot_fires_once_and_not_early)
{
    ticker_t t = {0};
    dagger_actor_addr_t a = spawn_ticker(&t);
    int v = 1;
    dagger_timer_t id;
    double t0 = act_test_now();
    cr_assert_eq(dagger_timer_start(rt, a, TICK, &v, sizeof(v), 20000, 0, &id), DAGGER_OK);
    ACT_WAIT_FOR(&t.ticks, 1);
    cr_assert_geq(t.first_at - t0, 0.019, "fired after %.4f s, before its 20 ms delay", t.first_at - t0);
    act_test_sleep_ms(40);
    cr_assert_eq(atomic_load(&t.ticks), 1);
    cr_assert_eq(dagger_timer_cancel(rt, id), DAGGER_ERR_NOT_FOUND, "a fired one-shot is not pending");
    dg_act_system_stop_all(sys);
}

Test(timer, one_shots_arrive_in_deadline_order)
{
    ticker_t t = {0};
    dagger_actor_addr_t a = spawn_ticker(&t);
    int delays_ms[] = {60, 20, 40, 0};
    for (int i = 0; i < 4; i++) {
        dagger_timer_t id;
        cr_assert_eq(dagger_timer_start(rt, a, TICK, &delays_ms[i], sizeof(int),
                                        (uint64_t)delays_ms[i] * 1000, 0, &id), DAGGER_OK);
    }
    ACT_WAIT_FOR(&t.ticks, 4);
    dg_act_system_stop_all(sys);
    int want[] = {0, 20, 40, 60};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(t.order[i], want[i], "arrival %d was the %d ms timer", i, t.order[i]);
}

Test(timer, periodic_repeats_until_cancelled)
{
    ticker_t t = {0};
    dagger_actor_addr_t a = spawn_ticker(&t);
    int v = 2;
    dagger_timer_t id;
    cr_assert_eq(dagger_timer_start(rt, a, TICK, &v, sizeof(v), 1000, 2000, &id), DAGGER_OK);
    ACT_WAIT_FOR(&t.ticks, 5);
    cr_assert_eq(dagger_timer_cancel(rt, id), DAGGER_OK);
    act_test_sleep_ms(5); /* a tick sent just before the cancel may still be queued */
    long after = atomic_load(&t.ticks);
    act_test_sleep_ms(30);
    cr_assert_eq(atomic_load(&t.ticks), after, "ticks after cancel");
    cr_assert_eq(dagger_timer_cancel(rt, id), DAGGER_ERR_NOT_FOUND, "double cancel");
    dg_act_system_stop_all(sys);
}

Test(timer, cancelled_before_its_deadline_sends_nothing)
{
    ticker_t t = {0};
    dagger_actor_addr_t a = spawn_ticker(&t);
    int v = 3;
    dagger_timer_t id;
    cr_assert_eq(dagger_timer_start(rt, a, TICK, &v, sizeof(v), 30000, 0, &id), DAGGER_OK);
    cr_assert_eq(dagger_timer_cancel(rt, id), DAGGER_OK);
    act_test_sleep_ms(60);
    cr_assert_eq(atomic_load(&t.ticks), 0);
    cr_assert_eq(dagger_timer_cancel(rt, 999999), DAGGER_ERR_NOT_FOUND, "unknown id");
    dg_act_system_stop_all(sys);
}

Test(timer, started_from_a_handler_the_sender_is_the_actor)
{
    ticker_t t = {0};
    dagger_actor_addr_t a = spawn_ticker(&t);
    cr_assert_eq(dagger_send(rt, a, ARM, NULL, 0), DAGGER_OK);
    ACT_WAIT_FOR(&t.ticks, 1);
    dg_act_system_stop_all(sys);
    cr_assert_eq(atomic_load(&t.from_self), 1);
    cr_assert_eq(t.order[0], 7);
}

Test(timer, periodic_timer_ends_when_its_actor_stops)
{
    ticker_t t = {0};
    dagger_actor_addr_t a = spawn_ticker(&t);
    int v = 5;
    dagger_timer_t id;
    cr_assert_eq(dagger_timer_start(rt, a, TICK, &v, sizeof(v), 0, 1000, &id), DAGGER_OK);
    ACT_WAIT_FOR(&t.ticks, 2);
    cr_assert_eq(dagger_actor_stop(rt, a), DAGGER_OK);
    double t0 = act_test_now();
    int pending = 1;
    while (pending && act_test_now() - t0 < 5) { /* its next firing finds the actor stopped */
        act_test_sleep_ms(2);
        pthread_mutex_lock(&sys->timers.lock);
        pending = sys->timers.n > 0 || sys->timers.firing;
        pthread_mutex_unlock(&sys->timers.lock);
    }
    cr_assert_eq(dagger_timer_cancel(rt, id), DAGGER_ERR_NOT_FOUND, "the timer ended itself");
    dg_act_system_stop_all(sys);
    cr_assert_eq(dagger_timer_start(rt, a, TICK, &v, sizeof(v), 0, 1000, &id), DAGGER_ERR_ACTOR_STOPPED,
                 "the destination is checked when a timer is set");
}

Test(timer, start_checks_its_message_now)
{
    ticker_t t = {0};
    dagger_actor_addr_t a = spawn_ticker(&t);
    int v = 0;
    long wrong = 0;
    dagger_timer_t id;
    cr_assert_eq(dagger_timer_start(rt, a, TICK, &wrong, sizeof(wrong), 0, 0, &id), DAGGER_ERR_MSG_SIZE);
    cr_assert_eq(dagger_timer_start(rt, a, TICK, &v, sizeof(v), 0, 0, NULL), DAGGER_ERR_INVALID_ARG);
    cr_assert_eq(dagger_timer_start(rt, a, TICK, NULL, 4, 0, 0, &id), DAGGER_ERR_INVALID_ARG);
    dagger_actor_addr_t nowhere = {0, 31337};
    cr_assert_eq(dagger_timer_start(rt, nowhere, TICK, &v, sizeof(v), 0, 0, &id), DAGGER_ERR_NO_SUCH_ACTOR);
    dagger_actor_addr_t remote = {1, 5};
    cr_assert_eq(dagger_timer_start(rt, remote, TICK, &v, sizeof(v), 0, 0, &id), DAGGER_ERR_NO_SUCH_ACTOR);
    cr_assert(strstr(dagger_error_detail(), "not reachable"), "%s", dagger_error_detail());
    cr_assert_eq(dagger_timer_start(NULL, a, TICK, &v, sizeof(v), 0, 0, &id), DAGGER_ERR_BAD_HANDLE);
    cr_assert_eq(dagger_timer_cancel(NULL, 1), DAGGER_ERR_BAD_HANDLE);
    dg_act_system_stop_all(sys);
}

Test(timer, pending_timers_are_freed_at_teardown)
{
    ticker_t t = {0};
    dagger_actor_addr_t a = spawn_ticker(&t);
    int v = 6;
    for (int i = 0; i < 100; i++) {
        dagger_timer_t id;
        cr_assert_eq(dagger_timer_start(rt, a, TICK, &v, sizeof(v), 3600ull * 1000000, 0, &id), DAGGER_OK);
    }
    dg_act_system_stop_all(sys);
    /* teardown destroys the system with 100 timers pending (ASan checks leaks) */
}
