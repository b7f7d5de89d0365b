/* Actors across ranks through the whole library (1..4 ranks, on UCX's
 * default transports and on tcp): a token ring of actors, all-to-all, a
 * many-to-one storm of 10^5 messages, and request/reply from a plain thread
 * and between actors. Every rank spawns its actors, then learns the others'
 * addresses with dagger_allgather. */
#include <criterion/criterion.h>
#include <dagger.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mr_tag.h"

#define OK(expr)                                                                        \
    do {                                                                                \
        dagger_status_t st_ = (expr);                                                   \
        cr_assert_eq(st_, DAGGER_OK, "%s: %s (%s)", #expr, dagger_strerror(st_),        \
                     dagger_error_detail());                                            \
    } while (0)

/* One runtime per test process; finalized after a failed assertion too, so
 * the ranks' next tests do not start out of step. */
static dagger_runtime_t *the_rt;

static void cleanup(void)
{
    if (the_rt)
        dagger_finalize(the_rt);
    the_rt = NULL;
    unsetenv("UCX_TLS");
}

TestSuite(actors_remote, .fini = cleanup, .timeout = 90);

static dagger_runtime_t *up(const char *tls)
{
    if (tls)
        setenv("UCX_TLS", tls, 1);
    mr_tag_test();
    OK(dagger_init(NULL, NULL, NULL, &the_rt));
    return the_rt;
}

static void down(void)
{
    dagger_runtime_t *rt = the_rt;
    the_rt = NULL;
    OK(dagger_finalize(rt));
    unsetenv("UCX_TLS");
}

static dagger_msg_type_t type_of(dagger_runtime_t *rt, const char *name, size_t size)
{
    dagger_msg_type_t t;
    OK(dagger_msg_type_register(rt, &(dagger_msg_type_desc_t){name, DAGGER_MSG_FIXED, size}, &t));
    return t;
}

/* Every rank's address of one actor, in rank order (caller frees). */
static dagger_actor_addr_t *everyones(dagger_runtime_t *rt, dagger_actor_addr_t mine)
{
    void *all;
    size_t *lens = calloc((size_t)dagger_nranks(rt), sizeof(size_t));
    OK(dagger_allgather(rt, &mine, sizeof(mine), &all, lens));
    for (int r = 0; r < dagger_nranks(rt); r++)
        cr_assert_eq(lens[r], sizeof(mine));
    free(lens);
    return all;
}

/* Waits (sleeping) until *v reaches target or 30 s pass. */
static void await(volatile long *v, long target)
{
    for (int i = 0; i < 30000 && __atomic_load_n(v, __ATOMIC_ACQUIRE) < target; i++)
        usleep(1000);
    cr_assert_geq(__atomic_load_n(v, __ATOMIC_ACQUIRE), target, "stuck at %ld of %ld", *v, target);
}

/* ------------------------------------------------------------------ ring */

typedef struct ring_state {
    dagger_actor_addr_t next;
    dagger_msg_type_t token;
    volatile long laps;   /* rank 0: tokens back home */
    long bad;
} ring_state_t;

typedef struct token {
    int64_t hops;
    int32_t origin;
    int32_t lap;
} token_t;

static dagger_status_t on_token(dagger_ctx_t *ctx)
{
    ring_state_t *s = dagger_ctx_state(ctx);
    token_t t;
    memcpy(&t, dagger_ctx_payload(ctx), sizeof(t));
    t.hops++;
    dagger_runtime_t *rt = dagger_ctx_runtime(ctx);
    if (dagger_rank(rt) == 0 && t.hops > 1) { /* home again */
        if (t.hops != (int64_t)dagger_nranks(rt) * (t.lap + 1) + 1)
            s->bad++;
        __atomic_add_fetch(&s->laps, 1, __ATOMIC_RELEASE);
        if (t.lap + 1 == 50)
            return DAGGER_OK;
        t.lap++;
    }
    return dagger_send(rt, s->next, s->token, &t, sizeof(t));
}

static void ring(const char *tls)
{
    dagger_runtime_t *rt = up(tls);
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    ring_state_t s = {.token = type_of(rt, "test.ring.token", sizeof(token_t))};
    dagger_handler_t h = {s.token, on_token};
    dagger_actor_addr_t self;
    OK(dagger_actor_spawn(rt, &(dagger_actor_desc_t){.name = "ring", .state = &s, .handlers = &h,
                                                     .nhandlers = 1}, &self));
    dagger_actor_addr_t *all = everyones(rt, self);
    s.next = all[(me + 1) % n];
    OK(dagger_barrier(rt)); /* every actor knows its successor */
    if (me == 0)
        OK(dagger_send(rt, self, s.token, &(token_t){0, 0, 0}, sizeof(token_t)));
    if (me == 0)
        await(&s.laps, 50);
    OK(dagger_barrier(rt));
    cr_assert_eq(s.bad, 0, "a token came home with a wrong hop count");
    OK(dagger_actor_stop(rt, self));
    OK(dagger_actor_join(rt, self, DAGGER_WAIT_FOREVER, NULL));
    free(all);
    down();
}

Test(actors_remote, ring_shm) { ring(NULL); }
Test(actors_remote, ring_tcp) { ring("tcp"); }

/* ------------------------------------------- all-to-all and many-to-one */

typedef struct counter_state {
    volatile long got;
    long bad;
    int64_t next[4];     /* next sequence number expected from each rank */
} counter_state_t;

typedef struct seq_msg {
    int32_t from;
    int32_t pad;
    int64_t seq;
} seq_msg_t;

static dagger_status_t on_seq(dagger_ctx_t *ctx)
{
    counter_state_t *s = dagger_ctx_state(ctx);
    seq_msg_t m;
    memcpy(&m, dagger_ctx_payload(ctx), sizeof(m));
    if (m.from < 0 || m.from >= 4 || m.seq != s->next[m.from])
        s->bad++;
    else
        s->next[m.from]++;
    __atomic_add_fetch(&s->got, 1, __ATOMIC_RELEASE);
    return DAGGER_OK;
}

/* Spawns a counter on every rank; returns everyone's addresses. */
static dagger_actor_addr_t *counters(dagger_runtime_t *rt, counter_state_t *s,
                                     dagger_msg_type_t *type, dagger_actor_addr_t *self)
{
    cr_assert_leq(dagger_nranks(rt), 4);
    *type = type_of(rt, "test.seq", sizeof(seq_msg_t));
    dagger_handler_t h = {*type, on_seq};
    OK(dagger_actor_spawn(rt, &(dagger_actor_desc_t){.name = "counter", .state = s, .handlers = &h,
                                                     .nhandlers = 1}, self));
    dagger_actor_addr_t *all = everyones(rt, *self);
    OK(dagger_barrier(rt));
    return all;
}

static void finish_counter(dagger_runtime_t *rt, dagger_actor_addr_t self, dagger_actor_addr_t *all)
{
    OK(dagger_barrier(rt));
    OK(dagger_actor_stop(rt, self));
    OK(dagger_actor_join(rt, self, DAGGER_WAIT_FOREVER, NULL));
    free(all);
}

static void all_to_all(const char *tls)
{
    dagger_runtime_t *rt = up(tls);
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    counter_state_t s = {0};
    dagger_msg_type_t type;
    dagger_actor_addr_t self, *all = counters(rt, &s, &type, &self);
    enum { PER_PEER = 500 };
    for (int64_t i = 0; i < PER_PEER; i++)
        for (int d = 0; d < n; d++)
            OK(dagger_send(rt, all[(me + d) % n], type, &(seq_msg_t){me, 0, i}, sizeof(seq_msg_t)));
    await(&s.got, (long)PER_PEER * n);
    cr_assert_eq(s.bad, 0, "rank %d: %ld messages out of order", me, s.bad);
    for (int r = 0; r < n; r++)
        cr_assert_eq(s.next[r], PER_PEER, "from rank %d", r);
    finish_counter(rt, self, all);
    down();
}

Test(actors_remote, all_to_all_shm) { all_to_all(NULL); }
Test(actors_remote, all_to_all_tcp) { all_to_all("tcp"); }

/* 10^5 messages into rank 0's actor from every other rank (from itself when
 * alone), sent from plain threads as fast as they go. */
static void storm(const char *tls)
{
    dagger_runtime_t *rt = up(tls);
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    counter_state_t s = {0};
    dagger_msg_type_t type;
    dagger_actor_addr_t self, *all = counters(rt, &s, &type, &self);
    enum { TOTAL = 100000 };
    int senders = n > 1 ? n - 1 : 1;
    long each = TOTAL / senders;
    if (me != 0 || n == 1)
        for (int64_t i = 0; i < each; i++)
            OK(dagger_send(rt, all[0], type, &(seq_msg_t){me, 0, i}, sizeof(seq_msg_t)));
    if (me == 0) {
        await(&s.got, each * senders);
        cr_assert_eq(s.bad, 0, "%ld messages out of order", s.bad);
    }
    finish_counter(rt, self, all);
    down();
}

Test(actors_remote, storm_shm, .timeout = 120) { storm(NULL); }
Test(actors_remote, storm_tcp, .timeout = 120) { storm("tcp"); }

/* ---------------------------------------------------------- request/reply */

typedef struct pair {
    int64_t value;
    int32_t rank;
    int32_t pad;
} pair_t;

static dagger_msg_type_t t_ask, t_answer;

/* Answers value + 1 and the rank it runs on. */
static dagger_status_t on_ask(dagger_ctx_t *ctx)
{
    pair_t p;
    memcpy(&p, dagger_ctx_payload(ctx), sizeof(p));
    p.value++;
    p.rank = dagger_rank(dagger_ctx_runtime(ctx));
    return dagger_reply(ctx, t_answer, &p, sizeof(p));
}

/* An actor that asks its neighbour's server from a handler (dagger_ask)
 * and counts the answers. */
typedef struct asker_state {
    dagger_actor_addr_t server;
    volatile long answers;
    long bad;
    int expect_rank;
} asker_state_t;

static dagger_status_t on_go(dagger_ctx_t *ctx)
{
    asker_state_t *s = dagger_ctx_state(ctx);
    return dagger_ask(ctx, s->server, t_ask, &(pair_t){100, -1, 0}, sizeof(pair_t), NULL);
}

static dagger_status_t on_answer(dagger_ctx_t *ctx)
{
    asker_state_t *s = dagger_ctx_state(ctx);
    pair_t p;
    memcpy(&p, dagger_ctx_payload(ctx), sizeof(p));
    if (p.value != 101 || p.rank != s->expect_rank || !dagger_ctx_is_reply(ctx))
        s->bad++;
    __atomic_add_fetch(&s->answers, 1, __ATOMIC_RELEASE);
    return DAGGER_OK;
}

static void request_reply(const char *tls)
{
    dagger_runtime_t *rt = up(tls);
    int me = dagger_rank(rt), n = dagger_nranks(rt), next = (me + 1) % n;
    t_ask = type_of(rt, "test.ask", sizeof(pair_t));
    t_answer = type_of(rt, "test.answer", sizeof(pair_t));
    dagger_msg_type_t t_go = type_of(rt, "test.go", 1);
    dagger_handler_t hs[] = {{t_ask, on_ask}};
    dagger_actor_addr_t server;
    OK(dagger_actor_spawn(rt, &(dagger_actor_desc_t){.name = "server", .handlers = hs,
                                                     .nhandlers = 1}, &server));
    dagger_actor_addr_t *servers = everyones(rt, server);
    asker_state_t as = {.server = servers[next], .expect_rank = next};
    dagger_handler_t ha[] = {{t_go, on_go}, {t_answer, on_answer}};
    dagger_actor_addr_t asker;
    OK(dagger_actor_spawn(rt, &(dagger_actor_desc_t){.name = "asker", .state = &as, .handlers = ha,
                                                     .nhandlers = 2}, &asker));
    OK(dagger_barrier(rt));
    /* From this plain thread to the next rank's server, many times. */
    for (int64_t i = 0; i < 200; i++) {
        pair_t got = {0};
        dagger_reply_t reply = {.buf = &got, .capacity = sizeof(got)};
        OK(dagger_request(rt, servers[next], t_ask, &(pair_t){i, -1, 0}, sizeof(pair_t),
                          10 * 1000 * 1000, &reply));
        cr_assert_eq(reply.type, t_answer);
        cr_assert_eq(got.value, i + 1);
        cr_assert_eq(got.rank, next, "answered by rank %d, asked rank %d", got.rank, next);
        cr_assert(dagger_actor_addr_eq(reply.from, servers[next]));
    }
    /* From an actor to the next rank's server. */
    for (int i = 0; i < 50; i++)
        OK(dagger_send(rt, asker, t_go, "g", 1));
    await(&as.answers, 50);
    cr_assert_eq(as.bad, 0, "%ld wrong answers", as.bad);
    OK(dagger_barrier(rt));
    OK(dagger_actor_stop(rt, asker));
    OK(dagger_actor_join(rt, asker, DAGGER_WAIT_FOREVER, NULL));
    OK(dagger_actor_stop(rt, server));
    OK(dagger_actor_join(rt, server, DAGGER_WAIT_FOREVER, NULL));
    free(servers);
    down();
}

Test(actors_remote, request_reply_shm) { request_reply(NULL); }
Test(actors_remote, request_reply_tcp) { request_reply("tcp"); }

/* A request to an actor that does not exist on another rank fails the same
 * way as locally, within the timeout. */
Test(actors_remote, request_to_missing_remote_actor_fails)
{
    dagger_runtime_t *rt = up(NULL);
    int n = dagger_nranks(rt);
    t_ask = type_of(rt, "test.ask", sizeof(pair_t));
    t_answer = type_of(rt, "test.answer", sizeof(pair_t));
    OK(dagger_barrier(rt)); /* the types are known everywhere */
    dagger_actor_addr_t nobody = {(dagger_rank(rt) + 1) % n, 0x7ffffff0u};
    pair_t got;
    dagger_reply_t reply = {.buf = &got, .capacity = sizeof(got)};
    dagger_status_t st = dagger_request(rt, nobody, t_ask, &(pair_t){1, -1, 0}, sizeof(pair_t),
                                        5 * 1000 * 1000, &reply);
    cr_assert_eq(st, DAGGER_ERR_NO_SUCH_ACTOR, "got %s (%s)", dagger_strerror(st),
                 dagger_error_detail());
    OK(dagger_barrier(rt));
    down();
}

/* ------------------------------------------------ requests from tasks */

/* Tasks on every rank ask the next rank's server and wait for the answer,
 * more of them at once than a rank has threads: every thread that runs
 * tasks then waits inside one, and the servers' turns and the transport's
 * progress must still happen (a worker that waits runs actor turns and, on
 * worker 0, polls the transport: docs/actors.md, "Waiting inside tasks").
 * The codelet returns the request's status, so a failure fails the region
 * on every rank. */
static dagger_runtime_t *task_rt;
static dagger_actor_addr_t *task_servers;

static int ask_next(dagger_task_t *t)
{
    int me = dagger_task_rank(t), next = (me + 1) % dagger_nranks(task_rt);
    int64_t v = (int64_t)dagger_task_seq(t);
    pair_t got = {0};
    dagger_reply_t reply = {.buf = &got, .capacity = sizeof(got)};
    dagger_status_t st = dagger_request(task_rt, task_servers[next], t_ask, &(pair_t){v, -1, 0},
                                        sizeof(pair_t), 20 * 1000 * 1000, &reply);
    if (st != DAGGER_OK)
        return st;
    return got.value == v + 1 && got.rank == next ? DAGGER_OK : DAGGER_ERR_INTERNAL;
}

Test(actors_remote, tasks_wait_for_the_next_ranks_server)
{
    dagger_runtime_t *rt = task_rt = up(NULL);
    int n = dagger_nranks(rt);
    t_ask = type_of(rt, "test.ask", sizeof(pair_t));
    t_answer = type_of(rt, "test.answer", sizeof(pair_t));
    dagger_handler_t hs[] = {{t_ask, on_ask}};
    dagger_actor_addr_t server;
    OK(dagger_actor_spawn(rt, &(dagger_actor_desc_t){.name = "server", .handlers = hs,
                                                     .nhandlers = 1}, &server));
    task_servers = everyones(rt, server);
    dagger_codelet_t cl;
    OK(dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "test.ask_next", .cpu = ask_next},
                               &cl));
    OK(dagger_barrier(rt)); /* every server is up */
    int per_rank = 2 * dagger_num_threads(rt) + 2;
    for (int k = 0; k < 10; k++) {
        dagger_region_t *r;
        OK(dagger_region_begin(rt, NULL, &r));
        for (int i = 0; i < per_rank * n; i++) {
            dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(i % n)};
            OK(dagger_submit(r, cl, 0, NULL, &o, NULL, NULL));
        }
        OK(dagger_region_end(r));
        usleep(2000); /* the workers go to sleep between regions */
    }
    OK(dagger_barrier(rt));
    OK(dagger_actor_stop(rt, server));
    OK(dagger_actor_join(rt, server, DAGGER_WAIT_FOREVER, NULL));
    free(task_servers);
    task_servers = NULL;
    down();
}
