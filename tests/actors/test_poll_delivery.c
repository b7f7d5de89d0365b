/* Messages that worker 0's poller delivers (the transport's progress) run
 * right after poll() returns, from the worker's run-next slot (worker.h),
 * and worker 0's small messages to other ranks may go out through the
 * poller's send_now from the stack (system.h). Neither may reorder, lose or
 * duplicate a message, or run a pinned actor on the wrong worker. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "act_test.h"

static dagger_runtime_t rt_storage, *rt = &rt_storage;
static dg_act_system_t *sys;
static dagger_msg_type_t SEQ, OTHER, BIG;

static void setup(void)
{
    sys = act_test_runtime_ranked(rt, 2, 0, 2);
    dagger_msg_type_desc_t seq = {"pd.seq", DAGGER_MSG_FIXED, sizeof(long)};
    dagger_msg_type_desc_t other = {"pd.other", DAGGER_MSG_FIXED, sizeof(long)};
    dagger_msg_type_desc_t big = {"pd.big", DAGGER_MSG_BYTES, 4096};
    cr_assert_eq(dagger_msg_type_register(rt, &seq, &SEQ), DAGGER_OK);
    cr_assert_eq(dagger_msg_type_register(rt, &other, &OTHER), DAGGER_OK);
    cr_assert_eq(dagger_msg_type_register(rt, &big, &BIG), DAGGER_OK);
}

static void teardown(void)
{
    dg_act_system_set_poller(sys, NULL);
    act_test_runtime_done(rt);
}

TestSuite(poll_delivery, .init = setup, .fini = teardown, .timeout = 60);

/* ------------------------------------------------ a fake transport poller */

#define MAX_TARGETS 4

typedef struct {
    int fd;
    dagger_actor_addr_t to[MAX_TARGETS];
    int ntargets;
    _Atomic long budget;  /* messages still to deliver (per target) */
    long next;            /* sequence number of the next delivery (worker 0 only) */
    int batch;            /* deliveries per poll */
    _Atomic long ok, refused;
    _Atomic long polls;
} feeder_t;

static dg_msg_t *seq_msg(dagger_actor_addr_t to, long v)
{
    dagger_actor_addr_t from = {1, 7};
    dg_msg_t *m = dg_msg_make(from, to, SEQ, 0, 0, &v, sizeof(v));
    cr_assert_not_null(m);
    return m;
}

/* Delivers up to `batch` numbered messages to every target per call, the
 * way the transport's progress delivers what arrived since the last one. */
static int feed_poll(void *ctx)
{
    feeder_t *f = ctx;
    atomic_fetch_add(&f->polls, 1);
    int did = 0;
    for (int b = 0; b < f->batch && atomic_load(&f->budget) > 0; b++) {
        atomic_fetch_sub(&f->budget, 1);
        long v = f->next++;
        for (int t = 0; t < f->ntargets; t++) {
            if (dg_act_deliver(sys, seq_msg(f->to[t], v)) == DAGGER_OK)
                atomic_fetch_add(&f->ok, 1);
            else
                atomic_fetch_add(&f->refused, 1);
        }
        did = 1;
    }
    return did;
}

static int feed_arm(void *ctx)
{
    feeder_t *f = ctx;
    return atomic_load(&f->budget) > 0; /* more to deliver: poll again */
}

static void feeder_start(feeder_t *f, long count)
{
    atomic_store(&f->budget, count);
    uint64_t one = 1;
    cr_assert_eq(write(f->fd, &one, sizeof(one)), sizeof(one)); /* wakes worker 0 */
}

static void install(feeder_t *f)
{
    f->fd = eventfd(0, EFD_NONBLOCK);
    cr_assert_geq(f->fd, 0);
    dg_act_poller_t p = {.poll = feed_poll, .arm = feed_arm, .fd = f->fd, .ctx = f};
    dg_act_system_set_poller(sys, &p);
}

static void uninstall(feeder_t *f)
{
    dg_act_system_set_poller(sys, NULL);
    close(f->fd);
}

/* ---------------------------------------------------------- a checker */

typedef struct {
    _Atomic long seq_seen, other_seen;
    _Atomic long out_of_order;
    long expect;            /* next SEQ number (only the running handler) */
    _Atomic int wrong_worker;
    int want_worker;        /* -1: any */
    _Atomic long on_worker0;
} checker_t;

static dagger_status_t on_seq(dagger_ctx_t *ctx)
{
    checker_t *c = dagger_ctx_state(ctx);
    long v;
    memcpy(&v, dagger_ctx_payload(ctx), sizeof(v));
    if (v != c->expect)
        atomic_fetch_add(&c->out_of_order, 1);
    c->expect = v + 1;
    int w = dagger_ctx_worker(ctx);
    if (c->want_worker >= 0 && w != c->want_worker)
        atomic_store(&c->wrong_worker, 1);
    if (w == 0)
        atomic_fetch_add(&c->on_worker0, 1);
    atomic_fetch_add(&c->seq_seen, 1);
    return DAGGER_OK;
}

static dagger_status_t on_other(dagger_ctx_t *ctx)
{
    checker_t *c = dagger_ctx_state(ctx);
    atomic_fetch_add(&c->other_seen, 1);
    return DAGGER_OK;
}

static dagger_actor_addr_t spawn_checker(checker_t *c, int pin, int worker)
{
    c->want_worker = pin ? worker : -1;
    dagger_handler_t h[] = {{SEQ, on_seq}, {OTHER, on_other}};
    dagger_actor_desc_t d = {.name = "checker", .state = c, .handlers = h, .nhandlers = 2,
                             .pin = pin, .worker = worker};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(rt, &d, &a), DAGGER_OK);
    return a;
}

/* -------------------------------------------------------------- tests */

Test(poll_delivery, batches_from_one_poll_run_in_order_on_worker_0)
{
    checker_t c1 = {0}, c2 = {0};
    feeder_t f = {.batch = 5};
    f.to[0] = spawn_checker(&c1, 0, 0);
    f.to[1] = spawn_checker(&c2, 0, 0);
    f.ntargets = 2;
    install(&f);
    for (int round = 1; round <= 20; round++) {
        feeder_start(&f, 5); /* one poll delivers all five, to both actors */
        ACT_WAIT_FOR(&c1.seq_seen, 5 * round);
        ACT_WAIT_FOR(&c2.seq_seen, 5 * round);
        act_test_sleep_ms(1); /* both idle again: the next batch starts them afresh */
    }
    uninstall(&f);
    dg_act_system_stop_all(sys);
    cr_assert_eq(atomic_load(&c1.out_of_order), 0);
    cr_assert_eq(atomic_load(&c2.out_of_order), 0);
    cr_assert_eq(atomic_load(&f.refused), 0);
    /* The first actor of each batch takes worker 0's run-next slot; the
     * other one goes through the run queue, where worker 1 may steal it. */
    cr_assert_geq(atomic_load(&c1.on_worker0) + atomic_load(&c2.on_worker0), 5 * 20,
                  "an actor the poll gave mail waits for another worker");
}

Test(poll_delivery, a_pinned_actor_of_another_worker_is_not_run_by_the_poller)
{
    checker_t c = {0};
    feeder_t f = {.batch = 3};
    f.to[0] = spawn_checker(&c, 1, 1);
    f.ntargets = 1;
    install(&f);
    for (int round = 1; round <= 10; round++) {
        feeder_start(&f, 3);
        ACT_WAIT_FOR(&c.seq_seen, 3 * round);
    }
    uninstall(&f);
    dg_act_system_stop_all(sys);
    cr_assert_eq(atomic_load(&c.wrong_worker), 0, "the actor pinned to worker 1 ran on worker 0");
    cr_assert_eq(atomic_load(&c.out_of_order), 0);
}

typedef struct {
    dagger_actor_addr_t to;
    long n;
} sender_arg_t;

static void *send_others(void *arg)
{
    sender_arg_t *s = arg;
    for (long i = 0; i < s->n; i++) {
        dagger_status_t st;
        while ((st = dagger_send(rt, s->to, OTHER, &i, sizeof(i))) == DAGGER_ERR_NO_MEMORY)
            sched_yield();
        cr_assert_eq(st, DAGGER_OK);
    }
    return NULL;
}

/* The poller's messages must stay in order while the actor also gets mail
 * from a plain thread and moves between the two workers: the run-next slot
 * races with the other worker's turn for the same actor. */
Test(poll_delivery, poller_messages_stay_in_order_while_others_keep_the_actor_busy)
{
    checker_t c = {0};
    feeder_t f = {.batch = 2};
    f.to[0] = spawn_checker(&c, 0, 0);
    f.ntargets = 1;
    install(&f);
    enum { N = 50000 };
    sender_arg_t sa = {f.to[0], N};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, send_others, &sa), 0);
    feeder_start(&f, N);
    pthread_join(th, NULL);
    ACT_WAIT_FOR(&c.seq_seen, N);
    ACT_WAIT_FOR(&c.other_seen, N);
    uninstall(&f);
    cr_assert_eq(dagger_actor_stop(rt, f.to[0]), DAGGER_OK);
    dagger_actor_stats_t st;
    cr_assert_eq(dagger_actor_join(rt, f.to[0], DAGGER_WAIT_FOREVER, &st), DAGGER_OK);
    cr_assert_eq(atomic_load(&c.out_of_order), 0, "poller messages were reordered");
    cr_assert_eq(st.handled, 2 * N, "lost or duplicated messages");
    cr_assert_eq(st.dropped, 0);
}

/* Actors stopped and joined while the poller keeps delivering to them:
 * every delivery that was accepted is either handled or dropped, once
 * (the sanitizer build also checks that no message leaks). */
Test(poll_delivery, stops_racing_with_poller_deliveries_lose_nothing)
{
    feeder_t f = {.batch = 1};
    f.ntargets = 1;
    install(&f);
    for (int round = 0; round < 200; round++) {
        checker_t c = {0};
        f.to[0] = spawn_checker(&c, 0, 0);
        f.next = 0; /* the poller touches it only while budget > 0 */
        long ok0 = atomic_load(&f.ok);
        feeder_start(&f, 1000000); /* more than it gets before the stop */
        act_test_sleep_ms(round % 3); /* 0..2 ms of deliveries */
        cr_assert_eq(dagger_actor_stop(rt, f.to[0]), DAGGER_OK);
        dagger_actor_stats_t st;
        cr_assert_eq(dagger_actor_join(rt, f.to[0], DAGGER_WAIT_FOREVER, &st), DAGGER_OK);
        atomic_store(&f.budget, 0);
        /* Deliveries after the join are refused; let the poller's current
         * call finish before counting. */
        dg_act_system_set_poller(sys, NULL);
        long accepted = atomic_load(&f.ok) - ok0;
        cr_assert_eq((long)(st.handled + st.dropped), accepted,
                     "round %d: %ld accepted, %llu handled + %llu dropped", round, accepted,
                     (unsigned long long)st.handled, (unsigned long long)st.dropped);
        cr_assert_eq(atomic_load(&c.out_of_order), 0);
        dg_act_poller_t p = {.poll = feed_poll, .arm = feed_arm, .fd = f.fd, .ctx = &f};
        dg_act_system_set_poller(sys, &p);
    }
    uninstall(&f);
}

/* ------------------------------------------------------------ send_now */

typedef struct {
    pthread_mutex_t lock;
    int accept;                 /* send_now: 1 takes the message, 0 declines */
    unsigned char wire[8][64];  /* copies of what send_now took */
    size_t len[8];
    _Atomic int taken, declined, routed;
} outlet_t;

static outlet_t out = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int outlet_send_now(void *ctx, dg_msg_t *msg)
{
    outlet_t *o = ctx;
    if (!o->accept) {
        atomic_fetch_add(&o->declined, 1);
        return 0;
    }
    pthread_mutex_lock(&o->lock);
    int i = atomic_load(&o->taken);
    cr_assert_lt(i, 8);
    cr_assert_leq(dg_msg_wire_size(msg), sizeof(o->wire[i]));
    o->len[i] = dg_msg_wire_size(msg);
    memcpy(o->wire[i], dg_msg_wire(msg), o->len[i]);
    atomic_fetch_add(&o->taken, 1);
    pthread_mutex_unlock(&o->lock);
    return 1;
}

static dagger_status_t outlet_route(void *ctx, dg_msg_t *msg)
{
    outlet_t *o = ctx;
    atomic_fetch_add(&o->routed, 1);
    dg_msg_free(msg);
    return DAGGER_OK;
}

static int idle_poll(void *ctx)
{
    (void)ctx;
    return 0;
}

static int idle_arm(void *ctx)
{
    (void)ctx;
    return 0;
}

typedef struct {
    dagger_actor_addr_t to;
    size_t size;
    _Atomic int runs;
    _Atomic int status;
} relay_t;

/* Sends one message of `size` bytes to r->to whenever it gets one. */
static dagger_status_t on_relay(dagger_ctx_t *ctx)
{
    relay_t *r = dagger_ctx_state(ctx);
    unsigned char payload[300];
    for (size_t i = 0; i < sizeof(payload); i++)
        payload[i] = (unsigned char)(i * 7 + 1);
    dagger_status_t st = r->size == sizeof(long)
                             ? dagger_send(dagger_ctx_runtime(ctx), r->to, SEQ, payload, r->size)
                             : dagger_send(dagger_ctx_runtime(ctx), r->to, BIG, payload, r->size);
    atomic_store(&r->status, st);
    atomic_fetch_add(&r->runs, 1);
    return DAGGER_OK;
}

static dagger_actor_addr_t spawn_relay(relay_t *r, int worker)
{
    dagger_handler_t h[] = {{OTHER, on_relay}};
    dagger_actor_desc_t d = {.name = "relay", .state = r, .handlers = h, .nhandlers = 1,
                             .pin = 1, .worker = worker};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(rt, &d, &a), DAGGER_OK);
    return a;
}

static void kick(relay_t *r, dagger_actor_addr_t a, int want_runs)
{
    long v = 0;
    cr_assert_eq(dagger_send(rt, a, OTHER, &v, sizeof(v)), DAGGER_OK);
    ACT_WAIT_FOR(&r->runs, want_runs);
}

Test(poll_delivery, worker_0_sends_small_remote_messages_through_send_now)
{
    int fd = eventfd(0, EFD_NONBLOCK);
    dg_act_system_set_route(sys, 0, 2, outlet_route, &out);
    dg_act_poller_t p = {.poll = idle_poll, .arm = idle_arm, .fd = fd, .ctx = &out,
                         .send_now = outlet_send_now};
    dg_act_system_set_poller(sys, &p);
    relay_t r0 = {.to = {1, 9}, .size = sizeof(long)}, r1 = r0;
    dagger_actor_addr_t a0 = spawn_relay(&r0, 0), a1 = spawn_relay(&r1, 1);

    out.accept = 1;
    kick(&r0, a0, 1);
    cr_assert_eq(atomic_load(&r0.status), DAGGER_OK);
    cr_assert_eq(atomic_load(&out.taken), 1);
    cr_assert_eq(atomic_load(&out.routed), 0);
    dg_msg_hdr_t h;
    memcpy(&h, out.wire[0], sizeof(h));
    cr_assert_eq(out.len[0], sizeof(h) + sizeof(long));
    cr_assert(dagger_actor_addr_eq(h.from, a0), "the sender is the relay actor");
    cr_assert_eq(h.to.rank, 1);
    cr_assert_eq(h.to.id, 9u);
    cr_assert_eq(h.type, SEQ);
    cr_assert_eq(h.flags, 0u);
    cr_assert_eq(h.corr, 0u);
    cr_assert_eq(h.size, sizeof(long));
    cr_assert_eq(h.reserved, 0u);
    for (size_t i = 0; i < sizeof(long); i++)
        cr_assert_eq(out.wire[0][sizeof(h) + i], (unsigned char)(i * 7 + 1));

    out.accept = 0; /* the transport cannot send at once: the route gets a copy */
    kick(&r0, a0, 2);
    cr_assert_eq(atomic_load(&r0.status), DAGGER_OK);
    cr_assert_eq(atomic_load(&out.declined), 1);
    cr_assert_eq(atomic_load(&out.routed), 1);

    out.accept = 1;
    kick(&r1, a1, 1); /* worker 1 does not own the transport */
    cr_assert_eq(atomic_load(&out.taken), 1);
    cr_assert_eq(atomic_load(&out.routed), 2);

    r0.size = 300; /* too large for the stack copy */
    kick(&r0, a0, 3);
    cr_assert_eq(atomic_load(&r0.status), DAGGER_OK);
    cr_assert_eq(atomic_load(&out.taken), 1);
    cr_assert_eq(atomic_load(&out.routed), 3);

    r0.size = sizeof(long);
    r0.to.rank = 2; /* the job has 2 ranks: checked before send_now */
    kick(&r0, a0, 4);
    cr_assert_eq(atomic_load(&r0.status), DAGGER_ERR_NO_SUCH_ACTOR);
    cr_assert_eq(atomic_load(&out.taken), 1);

    dg_act_system_set_route(sys, 0, 2, NULL, NULL); /* no route: not reachable, send_now or not */
    r0.to.rank = 1;
    kick(&r0, a0, 5);
    cr_assert_eq(atomic_load(&r0.status), DAGGER_ERR_NO_SUCH_ACTOR);
    cr_assert_eq(atomic_load(&out.taken), 1);

    dg_act_system_stop_all(sys);
    dg_act_system_set_poller(sys, NULL);
    close(fd);
}
