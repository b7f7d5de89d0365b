/* Actor lifecycle on a running system: spawn, handle, stop (dropping what is
 * queued), join (reporting counts), and the errors for ids that are stopped,
 * joined or never existed. */
#include <pthread.h>
#include <semaphore.h>
#include <string.h>

#include "act_test.h"

static dg_act_system_t *sys;
static uint32_t T_INT, T_BYTES, T_OTHER;

static void setup(void)
{
    sys = act_test_system(2);
    T_INT = act_test_type(sys, "test.int", DAGGER_MSG_FIXED, sizeof(int));
    T_BYTES = act_test_type(sys, "test.bytes", DAGGER_MSG_BYTES, 64);
    T_OTHER = act_test_type(sys, "test.other", DAGGER_MSG_FIXED, 0);
}

static void teardown(void)
{
    dg_act_system_destroy(sys);
}

TestSuite(lifecycle, .init = setup, .fini = teardown, .timeout = 30);

/* ------------------------------------------------------------ counting */

typedef struct {
    _Atomic long sum;
    _Atomic long count;
    _Atomic int stopped;
    atomic_int stop_worker; /* on_stop of actors sharing this state run concurrently */
} counter_t;

static dagger_status_t on_int(dagger_ctx_t *ctx)
{
    counter_t *c = dagger_ctx_state(ctx);
    int v;
    cr_assert_eq(dagger_ctx_size(ctx), sizeof(v));
    memcpy(&v, dagger_ctx_payload(ctx), sizeof(v));
    atomic_fetch_add(&c->sum, v);
    atomic_fetch_add(&c->count, 1);
    return DAGGER_OK;
}

static void on_stop_count(dagger_ctx_t *ctx)
{
    counter_t *c = dagger_ctx_state(ctx);
    cr_assert_eq(dagger_ctx_type(ctx), 0, "on_stop has no message");
    atomic_store(&c->stop_worker, dagger_ctx_worker(ctx));
    atomic_fetch_add(&c->stopped, 1);
}

static dagger_actor_addr_t spawn_counter(counter_t *c, int pin, int worker)
{
    dagger_handler_t h[] = {{T_INT, on_int}};
    dagger_actor_desc_t d = {.name = "counter", .state = c, .handlers = h, .nhandlers = 1,
                             .on_stop = on_stop_count, .pin = pin, .worker = worker};
    dagger_actor_addr_t a;
    cr_assert_eq(dg_act_spawn(sys, &d, &a), DAGGER_OK, "%s", dagger_error_detail());
    return a;
}

static dagger_status_t send_int(dagger_actor_addr_t to, int v)
{
    return dg_act_send(sys, dg_act_self_or_none(sys), to, T_INT, 0, 0, &v, sizeof(v), "test");
}

Test(lifecycle, messages_are_handled_and_join_reports_counts)
{
    counter_t c = {0};
    dagger_actor_addr_t a = spawn_counter(&c, 0, 0);
    cr_assert_eq(a.rank, 0);
    cr_assert_neq(a.id, 0);
    for (int i = 1; i <= 1000; i++)
        cr_assert_eq(send_int(a, i), DAGGER_OK, "%s", dagger_error_detail());
    ACT_WAIT_FOR(&c.count, 1000);
    cr_assert_eq(atomic_load(&c.sum), 500500);
    cr_assert_eq(dg_act_stop(sys, a), DAGGER_OK);
    dagger_actor_stats_t st;
    cr_assert_eq(dg_act_join(sys, a, DAGGER_WAIT_FOREVER, &st), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(st.handled, 1000);
    cr_assert_eq(st.dropped, 0);
    cr_assert_eq(st.failed, 0);
    cr_assert_eq(atomic_load(&c.stopped), 1, "on_stop runs exactly once");
}

/* ------------------------------------------------ stop drops the queue */

typedef struct {
    sem_t entered, release;
    _Atomic long handled;
} gate_t;

static dagger_status_t on_gate(dagger_ctx_t *ctx)
{
    gate_t *g = dagger_ctx_state(ctx);
    if (atomic_fetch_add(&g->handled, 1) == 0) { /* hold the first message */
        sem_post(&g->entered);
        sem_wait(&g->release);
    }
    return DAGGER_OK;
}

Test(lifecycle, stop_drops_pending_messages_and_join_counts_them)
{
    gate_t g = {.handled = 0};
    sem_init(&g.entered, 0, 0);
    sem_init(&g.release, 0, 0);
    dagger_handler_t h[] = {{T_INT, on_gate}};
    dagger_actor_desc_t d = {.name = "gate", .state = &g, .handlers = h, .nhandlers = 1};
    dagger_actor_addr_t a;
    cr_assert_eq(dg_act_spawn(sys, &d, &a), DAGGER_OK);
    cr_assert_eq(send_int(a, 0), DAGGER_OK);
    sem_wait(&g.entered); /* the handler is busy with message 0 */
    for (int i = 1; i <= 50; i++)
        cr_assert_eq(send_int(a, i), DAGGER_OK);
    cr_assert_eq(dg_act_stop(sys, a), DAGGER_OK);
    cr_assert_eq(send_int(a, 99), DAGGER_ERR_ACTOR_STOPPED);
    cr_assert(strstr(dagger_error_detail(), "'gate'"), "%s", dagger_error_detail());
    cr_assert_eq(dg_act_join(sys, a, 20000, NULL), DAGGER_ERR_TIMEOUT, "still in its handler");
    sem_post(&g.release);
    dagger_actor_stats_t st;
    cr_assert_eq(dg_act_join(sys, a, DAGGER_WAIT_FOREVER, &st), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(st.handled, 1);
    cr_assert_eq(st.dropped, 50);
    cr_assert_eq(atomic_load(&g.handled), 1);
}

Test(lifecycle, stopped_joined_and_unknown_ids_give_specific_errors)
{
    counter_t c = {0};
    dagger_actor_addr_t a = spawn_counter(&c, 0, 0);
    cr_assert_eq(dg_act_stop(sys, a), DAGGER_OK);
    cr_assert_eq(dg_act_stop(sys, a), DAGGER_ERR_ACTOR_STOPPED, "double stop");
    cr_assert_eq(send_int(a, 1), DAGGER_ERR_ACTOR_STOPPED);
    cr_assert_eq(dg_act_join(sys, a, DAGGER_WAIT_FOREVER, NULL), DAGGER_OK);
    cr_assert_eq(dg_act_join(sys, a, DAGGER_WAIT_FOREVER, NULL), DAGGER_ERR_STATE, "double join");
    cr_assert(strstr(dagger_error_detail(), "already joined"), "%s", dagger_error_detail());
    cr_assert_eq(send_int(a, 1), DAGGER_ERR_ACTOR_STOPPED, "joined: it existed");
    cr_assert_eq(dg_act_stop(sys, a), DAGGER_ERR_ACTOR_STOPPED);

    dagger_actor_addr_t never = {0, a.id + 1000};
    cr_assert_eq(send_int(never, 1), DAGGER_ERR_NO_SUCH_ACTOR);
    cr_assert_eq(dg_act_stop(sys, never), DAGGER_ERR_NO_SUCH_ACTOR);
    cr_assert_eq(dg_act_join(sys, never, 0, NULL), DAGGER_ERR_NO_SUCH_ACTOR);
    dagger_actor_addr_t zero = {0, 0}, future_ep = {0, DG_ACT_ID_FUTURE};
    cr_assert_eq(dg_act_stop(sys, zero), DAGGER_ERR_NO_SUCH_ACTOR);
    cr_assert_eq(dg_act_join(sys, future_ep, 0, NULL), DAGGER_ERR_NO_SUCH_ACTOR);
}

Test(lifecycle, join_of_a_running_actor_times_out_and_it_stays_joinable)
{
    counter_t c = {0};
    dagger_actor_addr_t a = spawn_counter(&c, 0, 0);
    cr_assert_eq(dg_act_join(sys, a, 1000, NULL), DAGGER_ERR_TIMEOUT);
    cr_assert_eq(send_int(a, 5), DAGGER_OK, "still running");
    ACT_WAIT_FOR(&c.count, 1);
    cr_assert_eq(dg_act_stop(sys, a), DAGGER_OK);
    cr_assert_eq(dg_act_join(sys, a, DAGGER_WAIT_FOREVER, NULL), DAGGER_OK);
}

/* ------------------------------------------------------ self stop */

static dagger_status_t on_stop_request(dagger_ctx_t *ctx)
{
    return dg_act_stop(sys, dagger_ctx_self(ctx));
}

Test(lifecycle, an_actor_can_stop_itself_and_is_joined_from_outside)
{
    counter_t c = {0};
    dagger_handler_t h[] = {{T_INT, on_int}, {T_OTHER, on_stop_request}};
    dagger_actor_desc_t d = {.name = "selfstop", .state = &c, .handlers = h, .nhandlers = 2,
                             .on_stop = on_stop_count};
    dagger_actor_addr_t a;
    cr_assert_eq(dg_act_spawn(sys, &d, &a), DAGGER_OK);
    cr_assert_eq(send_int(a, 1), DAGGER_OK);
    cr_assert_eq(dg_act_send(sys, dg_act_self_or_none(sys), a, T_OTHER, 0, 0, NULL, 0, "t"), DAGGER_OK);
    dagger_actor_stats_t st;
    cr_assert_eq(dg_act_join(sys, a, DAGGER_WAIT_FOREVER, &st), DAGGER_OK);
    cr_assert_eq(st.handled, 2);
    cr_assert_eq(atomic_load(&c.stopped), 1);
}

/* ------------------------------------------------- spawn arguments */

static dagger_status_t nop(dagger_ctx_t *ctx)
{
    (void)ctx;
    return DAGGER_OK;
}

Test(lifecycle, spawn_rejects_bad_descriptions)
{
    dagger_actor_addr_t a;
    dagger_handler_t dup[] = {{T_INT, nop}, {T_BYTES, nop}, {T_INT, nop}};
    dagger_handler_t nofn[] = {{T_INT, NULL}};
    dagger_handler_t unreg[] = {{0x1234567u, nop}};
    dagger_actor_desc_t d = {.name = "bad"};
    cr_assert_eq(dg_act_spawn(sys, NULL, &a), DAGGER_ERR_INVALID_ARG);
    cr_assert_eq(dg_act_spawn(sys, &d, NULL), DAGGER_ERR_INVALID_ARG);
    d.nhandlers = 1;
    cr_assert_eq(dg_act_spawn(sys, &d, &a), DAGGER_ERR_INVALID_ARG, "handlers NULL");
    d.handlers = nofn;
    cr_assert_eq(dg_act_spawn(sys, &d, &a), DAGGER_ERR_INVALID_ARG, "NULL fn");
    d.handlers = unreg;
    cr_assert_eq(dg_act_spawn(sys, &d, &a), DAGGER_ERR_MSG_TYPE);
    d.handlers = dup;
    d.nhandlers = 3;
    cr_assert_eq(dg_act_spawn(sys, &d, &a), DAGGER_ERR_INVALID_ARG, "duplicate type");
    d.nhandlers = 2;
    d.pin = 1;
    d.worker = 2;
    cr_assert_eq(dg_act_spawn(sys, &d, &a), DAGGER_ERR_INVALID_ARG, "worker out of range");
    d.worker = -1;
    cr_assert_eq(dg_act_spawn(sys, &d, &a), DAGGER_ERR_INVALID_ARG);
    d.worker = 1;
    cr_assert_eq(dg_act_spawn(sys, &d, &a), DAGGER_OK);
}

Test(lifecycle, send_checks_type_size_and_handler)
{
    counter_t c = {0};
    dagger_actor_addr_t a = spawn_counter(&c, 0, 0);
    dagger_actor_addr_t none = dg_act_self_or_none(sys);
    long v = 7;
    cr_assert_eq(dg_act_send(sys, none, a, T_INT, 0, 0, &v, sizeof(v), "t"), DAGGER_ERR_MSG_SIZE);
    cr_assert_eq(dg_act_send(sys, none, a, 0xdeadbeefu, 0, 0, &v, 4, "t"), DAGGER_ERR_MSG_TYPE);
    cr_assert_eq(dg_act_send(sys, none, a, T_BYTES, 0, 0, "x", 1, "t"), DAGGER_ERR_MSG_TYPE,
                 "registered, but the counter has no handler for it");
    cr_assert(strstr(dagger_error_detail(), "no handler") && strstr(dagger_error_detail(), "test.bytes"),
              "%s", dagger_error_detail());
    cr_assert_eq(dg_act_send(sys, none, a, T_INT, 0, 0, NULL, 4, "t"), DAGGER_ERR_INVALID_ARG);
    dg_act_system_stop_all(sys); /* c lives on this stack frame */
    cr_assert_eq(atomic_load(&c.count), 0, "nothing was delivered");
}

/* ------------------------------------------------------- pinning */

typedef struct {
    _Atomic long count;
    _Atomic int bad_worker;
    int want;
} pin_probe_t;

static dagger_status_t on_pin_probe(dagger_ctx_t *ctx)
{
    pin_probe_t *p = dagger_ctx_state(ctx);
    if (dagger_ctx_worker(ctx) != p->want || dg_act_current_worker(sys) != p->want)
        atomic_store(&p->bad_worker, 1);
    atomic_fetch_add(&p->count, 1);
    return DAGGER_OK;
}

Test(lifecycle, pinned_actors_run_only_on_their_worker)
{
    pin_probe_t p[2] = {{.want = 0}, {.want = 1}};
    dagger_actor_addr_t a[2];
    for (int k = 0; k < 2; k++) {
        dagger_handler_t h[] = {{T_INT, on_pin_probe}};
        dagger_actor_desc_t d = {.name = "pinned", .state = &p[k], .handlers = h, .nhandlers = 1,
                                 .pin = 1, .worker = k};
        cr_assert_eq(dg_act_spawn(sys, &d, &a[k]), DAGGER_OK);
    }
    for (int i = 0; i < 2000; i++)
        cr_assert_eq(send_int(a[i & 1], i), DAGGER_OK);
    ACT_WAIT_FOR(&p[0].count, 1000);
    ACT_WAIT_FOR(&p[1].count, 1000);
    dg_act_system_stop_all(sys);
    cr_assert_eq(atomic_load(&p[0].bad_worker), 0);
    cr_assert_eq(atomic_load(&p[1].bad_worker), 0);
}

/* ------------------------- one at a time, FIFO per sender, many senders */

#define SENDERS 4
#define PER_SENDER 20000

typedef struct {
    _Atomic int inside;
    _Atomic int overlap;
    long next[SENDERS];
    _Atomic long total;
    _Atomic int out_of_order;
} serial_t;

static dagger_status_t on_seq(dagger_ctx_t *ctx)
{
    serial_t *s = dagger_ctx_state(ctx);
    if (atomic_fetch_add(&s->inside, 1) != 0)
        atomic_store(&s->overlap, 1);
    int v[2];
    memcpy(v, dagger_ctx_payload(ctx), sizeof(v));
    /* plain (non-atomic) state: safe only because handlers never overlap */
    if (s->next[v[0]] != v[1])
        atomic_store(&s->out_of_order, 1);
    s->next[v[0]] = v[1] + 1;
    atomic_fetch_sub(&s->inside, 1);
    atomic_fetch_add(&s->total, 1);
    return DAGGER_OK;
}

typedef struct {
    dagger_actor_addr_t to;
    uint32_t type;
    int id;
} sender_arg_t;

static void *sender(void *p)
{
    sender_arg_t *a = p;
    for (int i = 0; i < PER_SENDER; i++) {
        int v[2] = {a->id, i};
        dagger_status_t st;
        while ((st = dg_act_send(sys, dg_act_self_or_none(sys), a->to, a->type, 0, 0, v, sizeof(v),
                                 "t")) == DAGGER_ERR_NO_MEMORY)
            sched_yield();
        if (st != DAGGER_OK)
            return (void *)1;
    }
    return NULL;
}

Test(lifecycle, unpinned_actor_never_runs_twice_at_once_and_keeps_sender_order)
{
    serial_t s = {0};
    uint32_t T_PAIR = act_test_type(sys, "test.pair", DAGGER_MSG_FIXED, 2 * sizeof(int));
    dagger_handler_t h[] = {{T_PAIR, on_seq}};
    dagger_actor_desc_t d = {.name = "serial", .state = &s, .handlers = h, .nhandlers = 1};
    dagger_actor_addr_t a;
    cr_assert_eq(dg_act_spawn(sys, &d, &a), DAGGER_OK);
    pthread_t t[SENDERS];
    sender_arg_t args[SENDERS];
    for (int k = 0; k < SENDERS; k++) {
        args[k] = (sender_arg_t){a, T_PAIR, k};
        pthread_create(&t[k], NULL, sender, &args[k]);
    }
    for (int k = 0; k < SENDERS; k++) {
        void *rc;
        pthread_join(t[k], &rc);
        cr_assert_null(rc, "sender %d failed: %s", k, dagger_error_detail());
    }
    ACT_WAIT_FOR(&s.total, SENDERS * PER_SENDER);
    cr_assert_eq(atomic_load(&s.overlap), 0, "two workers ran the actor at once");
    cr_assert_eq(atomic_load(&s.out_of_order), 0, "a sender's messages arrived out of order");
    cr_assert_eq(dg_act_stop(sys, a), DAGGER_OK);
    dagger_actor_stats_t st;
    cr_assert_eq(dg_act_join(sys, a, DAGGER_WAIT_FOREVER, &st), DAGGER_OK);
    cr_assert_eq(st.handled, (uint64_t)SENDERS * PER_SENDER);
}

/* ------------------------------------------ chains between actors */

typedef struct {
    dagger_actor_addr_t next;
    _Atomic long *arrived;
} relay_t;

static dagger_status_t on_relay(dagger_ctx_t *ctx)
{
    relay_t *r = dagger_ctx_state(ctx);
    int hops;
    memcpy(&hops, dagger_ctx_payload(ctx), sizeof(hops));
    if (hops == 0) {
        atomic_fetch_add(r->arrived, 1);
        return DAGGER_OK;
    }
    hops--;
    return dg_act_send(sys, dg_act_self_or_none(sys), r->next, T_INT, 0, 0, &hops, sizeof(hops), "relay");
}

Test(lifecycle, a_ring_of_actors_passes_tokens_around)
{
    enum { N = 16, TOKENS = 8, HOPS = 2000 };
    relay_t r[N];
    dagger_actor_addr_t a[N];
    _Atomic long arrived = 0;
    dagger_handler_t h[] = {{T_INT, on_relay}};
    for (int i = 0; i < N; i++) {
        r[i].arrived = &arrived;
        dagger_actor_desc_t d = {.name = "relay", .state = &r[i], .handlers = h, .nhandlers = 1};
        cr_assert_eq(dg_act_spawn(sys, &d, &a[i]), DAGGER_OK);
    }
    for (int i = 0; i < N; i++)
        r[i].next = a[(i + 1) % N];
    for (int t = 0; t < TOKENS; t++)
        cr_assert_eq(send_int(a[t], HOPS), DAGGER_OK);
    ACT_WAIT_FOR(&arrived, TOKENS);
    dg_act_system_stop_all(sys); /* the relays live on this stack frame */
    cr_assert_eq(atomic_load(&arrived), TOKENS);
}

/* --------------------------------------------------- many actors */

Test(lifecycle, thousands_of_spawn_join_cycles_leave_nothing_behind)
{
    counter_t c = {0};
    for (int round = 0; round < 20; round++) {
        dagger_actor_addr_t a[200];
        for (int i = 0; i < 200; i++)
            a[i] = spawn_counter(&c, i % 3 == 0, i % 2);
        for (int i = 0; i < 200; i++)
            cr_assert_eq(send_int(a[i], 1), DAGGER_OK);
        for (int i = 0; i < 200; i++)
            cr_assert_eq(dg_act_stop(sys, a[i]), DAGGER_OK);
        for (int i = 0; i < 200; i++) {
            dagger_actor_stats_t st;
            cr_assert_eq(dg_act_join(sys, a[i], DAGGER_WAIT_FOREVER, &st), DAGGER_OK);
            cr_assert_eq(st.handled + st.dropped, 1, "the one message was handled or dropped");
        }
    }
    cr_assert_eq(atomic_load(&c.stopped), 4000);
}

Test(lifecycle, destroy_stops_and_joins_live_actors)
{
    counter_t c = {0};
    for (int i = 0; i < 10; i++)
        spawn_counter(&c, 0, 0);
    dg_act_system_destroy(sys);
    cr_assert_eq(atomic_load(&c.stopped), 10);
    sys = act_test_system(1); /* for teardown */
}
