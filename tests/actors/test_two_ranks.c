/* Two actor systems in one process, as ranks 0 and 1 of a job, joined by an
 * in-process "transport": its route ships the wire bytes of a message
 * (dg_msg_wire) and the other side rebuilds and delivers them
 * (dg_msg_from_wire, dg_act_deliver), as the UCX transport does. The same
 * public calls reach actors on the other rank. */
#include "act_test.h"

static dagger_runtime_t rts[2];
static dg_act_system_t *sys[2];
static dagger_msg_type_t PING, PONG, GO, OTHER;
static _Atomic long shipped;

static dagger_status_t ship(void *ctx, dg_msg_t *msg)
{
    dg_act_system_t *to = ctx;
    unsigned char wire[256];
    size_t len = dg_msg_wire_size(msg);
    cr_assert_leq(len, sizeof(wire));
    memcpy(wire, dg_msg_wire(msg), len);
    dg_msg_free(msg);
    dg_msg_t *copy;
    cr_assert_eq(dg_msg_from_wire(wire, len, &copy), DAGGER_OK);
    atomic_fetch_add(&shipped, 1);
    dg_act_deliver(to, copy); /* failures answer requests with error replies */
    return DAGGER_OK;
}

static void setup(void)
{
    for (int r = 0; r < 2; r++) {
        sys[r] = act_test_runtime_ranked(&rts[r], 1, r, 2);
        const struct { const char *name; size_t size; dagger_msg_type_t *t; } types[] = {
            {"tr.ping", sizeof(int), &PING}, {"tr.pong", sizeof(int), &PONG},
            {"tr.go", sizeof(dagger_actor_addr_t), &GO}, {"tr.other", 0, &OTHER}};
        for (int i = 0; i < 4; i++) {
            dagger_msg_type_desc_t d = {types[i].name, DAGGER_MSG_FIXED, types[i].size};
            cr_assert_eq(dagger_msg_type_register(&rts[r], &d, types[i].t), DAGGER_OK);
        }
    }
    dg_act_system_set_route(sys[0], 0, 2, ship, sys[1]);
    dg_act_system_set_route(sys[1], 1, 2, ship, sys[0]);
}

static void teardown(void)
{
    dg_act_system_stop_all(sys[0]);
    dg_act_system_stop_all(sys[1]);
    act_test_runtime_done(&rts[0]);
    act_test_runtime_done(&rts[1]);
}

TestSuite(two_ranks, .init = setup, .fini = teardown, .timeout = 30);

static dagger_status_t on_ping(dagger_ctx_t *ctx)
{
    int v;
    memcpy(&v, dagger_ctx_payload(ctx), sizeof(v));
    v *= 2;
    return dagger_reply(ctx, PONG, &v, sizeof(v));
}

static dagger_actor_addr_t spawn_echo(int rank)
{
    dagger_handler_t h[] = {{PING, on_ping}};
    dagger_actor_desc_t d = {.name = "echo", .handlers = h, .nhandlers = 1};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(&rts[rank], &d, &a), DAGGER_OK);
    cr_assert_eq(a.rank, rank);
    return a;
}

Test(two_ranks, a_plain_thread_requests_from_an_actor_on_the_other_rank)
{
    dagger_actor_addr_t echo = spawn_echo(1);
    for (int i = 0; i < 50; i++) {
        int out = 0;
        dagger_reply_t r = {.buf = &out, .capacity = sizeof(out)};
        cr_assert_eq(dagger_request(&rts[0], echo, PING, &i, sizeof(i), 5000000, &r), DAGGER_OK, "%s",
                     dagger_error_detail());
        cr_assert_eq(out, 2 * i);
        cr_assert(dagger_actor_addr_eq(r.from, echo));
    }
    cr_assert_geq(atomic_load(&shipped), 100, "each request and reply crossed");
}

typedef struct {
    _Atomic int got;
    int value;
    dagger_actor_addr_t from;
} asker_t;

static dagger_status_t on_go(dagger_ctx_t *ctx)
{
    dagger_actor_addr_t echo;
    memcpy(&echo, dagger_ctx_payload(ctx), sizeof(echo));
    int v = 21;
    return dagger_ask(ctx, echo, PING, &v, sizeof(v), NULL);
}

static dagger_status_t on_pong(dagger_ctx_t *ctx)
{
    asker_t *s = dagger_ctx_state(ctx);
    memcpy(&s->value, dagger_ctx_payload(ctx), sizeof(int));
    s->from = dagger_ctx_sender(ctx);
    atomic_store(&s->got, 1);
    return DAGGER_OK;
}

Test(two_ranks, an_actor_asks_an_actor_on_the_other_rank)
{
    dagger_actor_addr_t echo = spawn_echo(1);
    asker_t s = {0};
    dagger_handler_t h[] = {{GO, on_go}, {PONG, on_pong}};
    dagger_actor_desc_t d = {.name = "asker", .state = &s, .handlers = h, .nhandlers = 2};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(&rts[0], &d, &a), DAGGER_OK);
    cr_assert_eq(dagger_send(&rts[0], a, GO, &echo, sizeof(echo)), DAGGER_OK);
    ACT_WAIT_FOR(&s.got, 1);
    dg_act_system_stop_all(sys[0]);
    cr_assert_eq(s.value, 42);
    cr_assert(dagger_actor_addr_eq(s.from, echo), "the sender is the remote actor");
}

Test(two_ranks, remote_failures_reach_the_waiting_thread)
{
    dagger_actor_addr_t echo = spawn_echo(1);
    cr_assert_eq(dagger_actor_stop(&rts[1], echo), DAGGER_OK);
    cr_assert_eq(dagger_actor_join(&rts[1], echo, DAGGER_WAIT_FOREVER, NULL), DAGGER_OK);
    int v = 1, out;
    dagger_reply_t r = {.buf = &out, .capacity = sizeof(out)};
    cr_assert_eq(dagger_request(&rts[0], echo, PING, &v, sizeof(v), 5000000, &r), DAGGER_ERR_ACTOR_STOPPED,
                 "the error reply crossed back");
    dagger_actor_addr_t never = {1, 777};
    cr_assert_eq(dagger_request(&rts[0], never, PING, &v, sizeof(v), 5000000, &r), DAGGER_ERR_NO_SUCH_ACTOR);
    cr_assert(strstr(dagger_error_detail(), "rank 1 has no actor"), "%s", dagger_error_detail());
    dagger_actor_addr_t beyond = {2, 1};
    cr_assert_eq(dagger_send(&rts[0], beyond, PING, &v, sizeof(v)), DAGGER_ERR_NO_SUCH_ACTOR);
}

Test(two_ranks, a_remote_message_without_a_handler_is_counted_there)
{
    dagger_actor_addr_t echo = spawn_echo(1);
    cr_assert_eq(dagger_send(&rts[0], echo, OTHER, NULL, 0), DAGGER_OK, "not checkable from rank 0");
    cr_assert_eq(dagger_actor_stop(&rts[1], echo), DAGGER_OK);
    dagger_actor_stats_t st;
    cr_assert_eq(dagger_actor_join(&rts[1], echo, DAGGER_WAIT_FOREVER, &st), DAGGER_OK);
    cr_assert_eq(st.unhandled, 1);
}
