/* The kernel's contracts with the transport and the task executor
 * (docs/design.md section 3): route, deliver, poller, wake, idle sources. */
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "act_test.h"
#include "actors/system_impl.h"

static dagger_runtime_t rt_storage, *rt = &rt_storage;
static dg_act_system_t *sys;
static dagger_msg_type_t NUM, PONG;

/* ------------------------------------------------- a fake transport */

typedef struct {
    pthread_mutex_t lock;
    dg_msg_t *msgs[64];
    int n;
} captured_t;

static captured_t cap = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};

static dagger_status_t capture_route(void *ctx, dg_msg_t *msg)
{
    cr_assert_eq(ctx, &cap);
    pthread_mutex_lock(&cap.lock);
    cr_assert_lt(cap.n, 64);
    cap.msgs[cap.n++] = msg;
    pthread_mutex_unlock(&cap.lock);
    return DAGGER_OK;
}

static dg_msg_t *captured(int i)
{
    double t0 = act_test_now();
    for (;;) {
        pthread_mutex_lock(&cap.lock);
        dg_msg_t *m = i < cap.n ? cap.msgs[i] : NULL;
        pthread_mutex_unlock(&cap.lock);
        if (m || act_test_now() - t0 > 10)
            return m;
        act_test_sleep_ms(1);
    }
}

static void setup(void)
{
    sys = act_test_runtime(rt, 2);
    dagger_msg_type_desc_t num = {"ct.num", DAGGER_MSG_FIXED, sizeof(int)};
    dagger_msg_type_desc_t pong = {"ct.pong", DAGGER_MSG_FIXED, sizeof(int)};
    cr_assert_eq(dagger_msg_type_register(rt, &num, &NUM), DAGGER_OK);
    cr_assert_eq(dagger_msg_type_register(rt, &pong, &PONG), DAGGER_OK);
}

static void teardown(void)
{
    act_test_runtime_done(rt);
    for (int i = 0; i < cap.n; i++)
        dg_msg_free(cap.msgs[i]);
    cap.n = 0;
}

TestSuite(contracts, .init = setup, .fini = teardown, .timeout = 30);

typedef struct {
    _Atomic int got;
    int value;
    dagger_actor_addr_t sender;
} sink_t;

static dagger_status_t on_num(dagger_ctx_t *ctx)
{
    sink_t *s = dagger_ctx_state(ctx);
    memcpy(&s->value, dagger_ctx_payload(ctx), sizeof(int));
    s->sender = dagger_ctx_sender(ctx);
    atomic_fetch_add(&s->got, 1);
    return DAGGER_OK;
}

static dagger_actor_addr_t spawn_sink(sink_t *s)
{
    dagger_handler_t h[] = {{NUM, on_num}};
    dagger_actor_desc_t d = {.name = "sink", .state = s, .handlers = h, .nhandlers = 1};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(rt, &d, &a), DAGGER_OK);
    return a;
}

static dg_msg_t *remote_msg(dagger_actor_addr_t from, dagger_actor_addr_t to, uint32_t type,
                            uint32_t flags, uint64_t corr, int v)
{
    dg_msg_t *m = dg_msg_make(from, to, type, flags, corr, &v, sizeof(v));
    cr_assert_not_null(m);
    return m;
}

/* -------------------------------------------------------------- route */

Test(contracts, without_a_route_other_ranks_are_not_reachable)
{
    int v = 1;
    dagger_actor_addr_t remote = {1, 5};
    cr_assert_eq(dagger_send(rt, remote, NUM, &v, sizeof(v)), DAGGER_ERR_NO_SUCH_ACTOR);
    cr_assert(strstr(dagger_error_detail(), "rank 1 is not reachable") &&
              strstr(dagger_error_detail(), "single-rank"), "%s", dagger_error_detail());
}

Test(contracts, route_takes_messages_for_other_ranks_with_full_headers)
{
    dg_act_system_set_route(sys, 0, 3, capture_route, &cap);
    int v = 77;
    dagger_actor_addr_t remote = {2, 5};
    cr_assert_eq(dagger_send(rt, remote, NUM, &v, sizeof(v)), DAGGER_OK);
    dg_msg_t *m = captured(0);
    cr_assert_not_null(m);
    cr_assert_eq(m->hdr.to.rank, 2);
    cr_assert_eq(m->hdr.to.id, 5u);
    cr_assert_eq(m->hdr.from.rank, 0);
    cr_assert_eq(m->hdr.from.id, DG_ACT_ID_NONE, "sent by a plain thread");
    cr_assert_eq(m->hdr.type, NUM);
    cr_assert_eq(m->hdr.size, sizeof(int));
    cr_assert_eq(*(int *)m->payload, 77);
    cr_assert_eq(dagger_send(rt, remote, NUM, &v, 2), DAGGER_ERR_MSG_SIZE, "checked before routing");
    dagger_actor_addr_t beyond = {3, 5}, negative = {-2, 5};
    cr_assert_eq(dagger_send(rt, beyond, NUM, &v, sizeof(v)), DAGGER_ERR_NO_SUCH_ACTOR);
    cr_assert(strstr(dagger_error_detail(), "rank 3 does not exist"), "%s", dagger_error_detail());
    cr_assert_eq(dagger_send(rt, negative, NUM, &v, sizeof(v)), DAGGER_ERR_NO_SUCH_ACTOR);
}

/* ------------------------------------------------------------ deliver */

Test(contracts, delivered_messages_reach_local_actors_with_the_remote_sender)
{
    sink_t s = {0};
    dagger_actor_addr_t a = spawn_sink(&s);
    dagger_actor_addr_t from = {1, 42};
    cr_assert_eq(dg_act_deliver(sys, remote_msg(from, a, NUM, 0, 0, 5)), DAGGER_OK);
    ACT_WAIT_FOR(&s.got, 1);
    dg_act_system_stop_all(sys);
    cr_assert_eq(s.value, 5);
    cr_assert(dagger_actor_addr_eq(s.sender, from));
}

Test(contracts, delivery_checks_type_handler_and_rank)
{
    sink_t s = {0};
    dagger_actor_addr_t a = spawn_sink(&s);
    dagger_actor_addr_t from = {1, 42};
    cr_assert_eq(dg_act_deliver(sys, remote_msg(from, a, 0x777u, 0, 0, 1)), DAGGER_ERR_MSG_TYPE,
                 "unregistered here");
    cr_assert_eq(dg_act_deliver(sys, remote_msg(from, a, PONG, 0, 0, 1)), DAGGER_ERR_MSG_TYPE,
                 "no handler");
    cr_assert_eq(dg_act_deliver(sys, remote_msg(from, a, PONG, 0, 0, 1)), DAGGER_ERR_MSG_TYPE);
    dg_msg_t *wrong_size = dg_msg_make(from, a, NUM, 0, 0, "abcdefgh", 8);
    cr_assert_eq(dg_act_deliver(sys, wrong_size), DAGGER_ERR_MSG_SIZE);
    dagger_actor_addr_t elsewhere = {1, a.id};
    cr_assert_eq(dg_act_deliver(sys, remote_msg(from, elsewhere, NUM, 0, 0, 1)), DAGGER_ERR_PROTOCOL);
    dagger_actor_addr_t nobody = {0, 99999};
    cr_assert_eq(dg_act_deliver(sys, remote_msg(from, nobody, NUM, 0, 0, 1)), DAGGER_ERR_NO_SUCH_ACTOR);
    cr_assert_eq(dagger_actor_stop(rt, a), DAGGER_OK);
    dagger_actor_stats_t st;
    cr_assert_eq(dagger_actor_join(rt, a, DAGGER_WAIT_FOREVER, &st), DAGGER_OK);
    cr_assert_eq(st.unhandled, 2, "messages without a handler are counted at delivery");
    cr_assert_eq(st.handled, 0);
}

Test(contracts, a_remote_request_that_cannot_be_delivered_gets_an_error_reply)
{
    dg_act_system_set_route(sys, 0, 2, capture_route, &cap);
    sink_t s = {0};
    dagger_actor_addr_t a = spawn_sink(&s);
    cr_assert_eq(dagger_actor_stop(rt, a), DAGGER_OK);
    dagger_actor_addr_t remote_future = {1, DG_ACT_ID_FUTURE};
    cr_assert_eq(dg_act_deliver(sys, remote_msg(remote_future, a, NUM, DG_MSG_REQUEST, 77, 1)),
                 DAGGER_ERR_ACTOR_STOPPED);
    dg_msg_t *e = captured(0);
    cr_assert_not_null(e, "an error reply went back to rank 1");
    cr_assert(dagger_actor_addr_eq(e->hdr.to, remote_future));
    cr_assert_eq(e->hdr.corr, 77);
    cr_assert_eq(e->hdr.flags, DG_MSG_REPLY | DG_MSG_ERROR);
    const dg_msg_error_t *err = (const dg_msg_error_t *)e->payload;
    cr_assert_eq(err->status, DAGGER_ERR_ACTOR_STOPPED);
    cr_assert(strstr(err->detail, "'sink'"), "%s", err->detail);
}

Test(contracts, a_request_to_another_rank_completes_when_its_reply_is_delivered)
{
    dg_act_system_set_route(sys, 0, 2, capture_route, &cap);
    dagger_actor_addr_t remote = {1, 9};
    int v = 3;
    dagger_request_t req;
    cr_assert_eq(dagger_request_start(rt, remote, NUM, &v, sizeof(v), &req), DAGGER_OK);
    dg_msg_t *q = captured(0);
    cr_assert_not_null(q);
    cr_assert_eq(q->hdr.flags, DG_MSG_REQUEST);
    cr_assert_eq(q->hdr.from.id, DG_ACT_ID_FUTURE);
    /* Rank 1 answers: the transport delivers the reply here. */
    cr_assert_eq(dg_act_deliver(sys, remote_msg(remote, q->hdr.from, PONG, DG_MSG_REPLY, q->hdr.corr, 4)),
                 DAGGER_OK);
    int out = 0;
    dagger_reply_t r = {.buf = &out, .capacity = sizeof(out)};
    cr_assert_eq(dagger_request_wait(rt, req, DAGGER_WAIT_FOREVER, &r), DAGGER_OK);
    cr_assert_eq(out, 4);
    cr_assert(dagger_actor_addr_eq(r.from, remote));
    dagger_request_free(rt, req);
}

/* ------------------------------------------------------------- poller */

typedef struct {
    int fd;
    _Atomic long polls, arms, events;
} fake_poller_t;

static int fake_poll(void *ctx)
{
    fake_poller_t *p = ctx;
    atomic_fetch_add(&p->polls, 1);
    uint64_t v;
    if (read(p->fd, &v, sizeof(v)) == sizeof(v)) {
        atomic_fetch_add(&p->events, 1);
        return 1;
    }
    return 0;
}

static int fake_arm(void *ctx)
{
    fake_poller_t *p = ctx;
    atomic_fetch_add(&p->arms, 1);
    return 0;
}

Test(contracts, worker0_polls_arms_blocks_and_wakes_on_the_poller_fd)
{
    fake_poller_t p = {.fd = eventfd(0, EFD_NONBLOCK)};
    cr_assert_geq(p.fd, 0);
    dg_act_poller_t poller = {.poll = fake_poll, .arm = fake_arm, .fd = p.fd, .ctx = &p};
    dg_act_system_set_poller(sys, &poller);
    ACT_WAIT_FOR(&p.arms, 1); /* worker 0 ran out of work, armed, and blocks */
    act_test_sleep_ms(20);
    long polls = atomic_load(&p.polls), arms = atomic_load(&p.arms);
    act_test_sleep_ms(100);
    cr_assert_leq(atomic_load(&p.polls) - polls, 2, "worker 0 keeps polling while idle: it should block");
    uint64_t one = 1;
    cr_assert_eq(write(p.fd, &one, sizeof(one)), sizeof(one));
    ACT_WAIT_FOR(&p.events, 1); /* the fd woke worker 0, which polled */
    ACT_WAIT_FOR(&p.arms, arms + 1);

    polls = atomic_load(&p.polls);
    dg_act_system_wake(sys, 0);
    ACT_WAIT_FOR(&p.polls, polls + 1); /* a wake makes worker 0 poll again */

    dg_act_system_set_poller(sys, NULL);
    polls = atomic_load(&p.polls);
    arms = atomic_load(&p.arms);
    cr_assert_eq(write(p.fd, &one, sizeof(one)), sizeof(one));
    dg_act_system_wake(sys, 0);
    act_test_sleep_ms(30);
    cr_assert_eq(atomic_load(&p.polls), polls, "poll called after set_poller(NULL) returned");
    cr_assert_eq(atomic_load(&p.arms), arms);
    close(p.fd);
}

static int busy_arm(void *ctx)
{
    fake_poller_t *p = ctx;
    atomic_fetch_add(&p->arms, 1);
    return atomic_load(&p->arms) < 5; /* "events pending" four times, then armed */
}

Test(contracts, a_poller_with_pending_events_is_polled_again_instead_of_sleeping)
{
    fake_poller_t p = {.fd = eventfd(0, EFD_NONBLOCK)};
    dg_act_poller_t poller = {.poll = fake_poll, .arm = busy_arm, .fd = p.fd, .ctx = &p};
    dg_act_system_set_poller(sys, &poller);
    ACT_WAIT_FOR(&p.arms, 5);
    dg_act_system_set_poller(sys, NULL);
    cr_assert_geq(atomic_load(&p.polls), 5, "each refused arm is followed by a poll");
    close(p.fd);
}

/* ------------------------------------------------------- idle sources */

typedef struct {
    _Atomic int pending;
    _Atomic long calls, done, last_looks;
    _Atomic int worker_seen;
    _Atomic long asleep_runs; /* work done by a worker counted asleep: never */
} source_t;

/* Does the job *flag stands for, if any: 1 and *done counted. */
static int take_job(_Atomic int *flag, _Atomic long *done)
{
    if (!atomic_exchange(flag, 0))
        return 0;
    atomic_fetch_add(done, 1);
    return 1;
}

/* Work is a flag; at a worker's last look it is reported, not done. */
static int fake_source(void *ctx, int worker, int last_look)
{
    source_t *s = ctx;
    atomic_fetch_add(&s->calls, 1);
    atomic_store(&s->worker_seen, worker);
    if (last_look) {
        atomic_fetch_add(&s->last_looks, 1);
        return atomic_load(&s->pending) != 0;
    }
    if (atomic_load(&sys->workers[worker].sleeping))
        atomic_fetch_add(&s->asleep_runs, 1);
    return take_job(&s->pending, &s->done);
}

Test(contracts, idle_sources_are_polled_and_a_wake_gets_their_work_done)
{
    source_t s = {0};
    dg_act_system_add_idle_source(sys, fake_source, &s);
    ACT_WAIT_FOR(&s.calls, 1);
    act_test_sleep_ms(20); /* everyone is asleep now */
    for (int i = 1; i <= 3; i++) {
        atomic_store(&s.pending, 1);
        dg_act_system_wake(sys, 1);
        ACT_WAIT_FOR(&s.done, i);
    }
    int w = atomic_load(&s.worker_seen);
    cr_assert(w == 0 || w == 1);
    cr_assert_gt(atomic_load(&s.last_looks), 0, "a worker about to sleep looks at the sources");
    cr_assert_eq(atomic_load(&s.asleep_runs), 0, "work was done by a worker counted asleep");
    dg_act_system_stop_all(sys);
    act_test_runtime_done(rt); /* the source lives on this stack frame */
    sys = act_test_runtime(rt, 1);
}

/* A job that runs until released (at most 20 s), saying so in *in_long. */
static int long_job(_Atomic int *in_long, _Atomic int *release)
{
    atomic_store(in_long, 1);
    double t0 = act_test_now();
    while (!atomic_load(release) && act_test_now() - t0 < 20.0)
        act_test_sleep_ms(1);
    atomic_store(in_long, 0);
    return 1;
}

/* Worker 0 finds a long job at its last look before sleeping: the job
 * arrives just then. It must take the job awake: counted asleep while the
 * job runs, it was the worker that dg_act_system_wake_any picked for the
 * next work (the first sleeper by index), and worker 1, really asleep,
 * never woke (the executor: a task released early waited for a gated task
 * to end, tests/core/exec/test_edges.c, 1 run in 100 under load). */
typedef struct {
    _Atomic int armed, long_pending, in_long, release, quick;
    _Atomic long quick_done, asleep_runs;
} trap_t;

static int trap_source(void *ctx, int worker, int last_look)
{
    trap_t *t = ctx;
    if (last_look) {
        if (worker == 0 && atomic_exchange(&t->armed, 0))
            atomic_store(&t->long_pending, 1); /* arrives during the last look */
        return (worker == 0 && atomic_load(&t->long_pending)) || atomic_load(&t->quick);
    }
    if (atomic_load(&sys->workers[worker].sleeping))
        atomic_fetch_add(&t->asleep_runs, 1);
    if (worker == 0 && atomic_exchange(&t->long_pending, 0)) {
        return long_job(&t->in_long, &t->release);
    }
    return take_job(&t->quick, &t->quick_done);
}

/* Worker 0, woken, finds nothing (it then counts as spinning), and a look
 * of it while it counts as spinning finds a long job. The source says so
 * (worker_busy), as the executor does before a task: counted spinning
 * through the job, it was trusted by dg_act_system_wake_any to find the
 * next work, and worker 1, asleep, was never woken (the executor: one run
 * in about 100 of tests/core/exec/test_edges.c under load, nspinning 1 and
 * no worker spinning). */
typedef struct {
    _Atomic int armed, in_long, release, quick;
    _Atomic long quick_done;
} spin_trap_t;

static int spin_trap_source(void *ctx, int worker, int last_look)
{
    spin_trap_t *t = ctx;
    if (last_look)
        return atomic_load(&t->quick) != 0;
    if (worker == 0 && sys->workers[0].spinning && atomic_exchange(&t->armed, 0)) {
        dg_act_system_worker_busy(sys, worker);
        return long_job(&t->in_long, &t->release);
    }
    return take_job(&t->quick, &t->quick_done);
}

Test(contracts, a_worker_running_long_work_is_not_counted_spinning)
{
    spin_trap_t t = {0};
    dg_act_system_add_idle_source(sys, spin_trap_source, &t);
    act_test_sleep_ms(20); /* both asleep */
    atomic_store(&t.armed, 1);
    /* Woken again should it sleep before a look while spinning (preempted
     * past its 50 us of spinning on a loaded machine). */
    for (int i = 0; i < 10000 && !atomic_load(&t.in_long); i++) {
        dg_act_system_wake(sys, 0);
        act_test_sleep_ms(1);
    }
    ACT_WAIT_FOR(&t.in_long, 1);
    cr_assert_eq(atomic_load(&sys->nspinning), 0, "worker 0 in its long job still counts as spinning");
    act_test_sleep_ms(20); /* worker 1 is asleep */
    atomic_store(&t.quick, 1);
    dg_act_system_wake_any(sys);
    ACT_WAIT_FOR(&t.quick_done, 1);
    cr_assert(atomic_load(&t.in_long), "worker 0 still runs its long job");
    atomic_store(&t.release, 1);
    dg_act_system_stop_all(sys);
    act_test_runtime_done(rt); /* the source lives on this stack frame */
    sys = act_test_runtime(rt, 1);
}

Test(contracts, work_found_at_the_last_look_is_taken_awake_and_wakes_go_to_real_sleepers)
{
    trap_t t = {0};
    atomic_store(&t.armed, 1);
    dg_act_system_add_idle_source(sys, trap_source, &t);
    ACT_WAIT_FOR(&t.in_long, 1);
    act_test_sleep_ms(20); /* worker 1 is asleep now */
    atomic_store(&t.quick, 1);
    dg_act_system_wake_any(sys); /* as the executor does for a ready task */
    ACT_WAIT_FOR(&t.quick_done, 1);
    cr_assert(atomic_load(&t.in_long), "worker 0 still runs its long job");
    atomic_store(&t.release, 1);
    cr_assert_eq(atomic_load(&t.asleep_runs), 0, "work was done by a worker counted asleep");
    dg_act_system_stop_all(sys);
    act_test_runtime_done(rt); /* the source lives on this stack frame */
    sys = act_test_runtime(rt, 1);
}

/* Which workers looked at the source since `seen` was cleared. */
typedef struct {
    _Atomic int seen;
} looks_t;

static int looks_source(void *ctx, int worker, int last_look)
{
    looks_t *l = ctx;
    if (!last_look)
        atomic_fetch_or(&l->seen, 1 << worker);
    return 0;
}

/* dg_act_system_wake_sleepers (the executor, as a region opens) wakes every
 * worker asleep in its idle loop, not one: each looks for work again. An
 * idle sleep has no timeout, so only a wake-up makes a worker look. */
Test(contracts, wake_sleepers_wakes_every_sleeping_worker)
{
    looks_t l = {0};
    dg_act_system_add_idle_source(sys, looks_source, &l); /* wakes them: they look, then sleep */
    /* Quiet: 20 ms in which every worker slept and none looked (a worker
     * counts in nsleeping from the start of its last look, and one still
     * signalled by the source's addition looks once more). */
    int quiet = 0;
    for (int i = 0; i < 500 && !quiet; i++) {
        atomic_store(&l.seen, 0);
        act_test_sleep_ms(20);
        quiet = atomic_load(&l.seen) == 0 && atomic_load(&sys->nsleeping) == sys->nworkers;
    }
    cr_assert(quiet, "the workers did not go to sleep and stay asleep for 20 ms");
    dg_act_system_wake_sleepers(sys);
    int all = (1 << sys->nworkers) - 1;
    for (int i = 0; i < 10000 && atomic_load(&l.seen) != all; i++)
        act_test_sleep_ms(1);
    cr_assert_eq(atomic_load(&l.seen), all, "workers that looked after the wake-up: mask %#x of %#x",
                 atomic_load(&l.seen), all);
    dg_act_system_stop_all(sys);
    act_test_runtime_done(rt); /* the source lives on this stack frame */
    sys = act_test_runtime(rt, 1);
}

Test(contracts, wake_ignores_workers_that_do_not_exist)
{
    dg_act_system_wake(sys, -1);
    dg_act_system_wake(sys, 2);
    dg_act_system_wake(sys, 1000);
}

/* A worker kept busy by actor messages still serves its idle sources. */
typedef struct {
    _Atomic int stop;
    _Atomic long handled;
} busy_t;

static uint32_t T_SPIN;

static dagger_status_t on_spin(dagger_ctx_t *ctx)
{
    busy_t *b = dagger_ctx_state(ctx);
    atomic_fetch_add(&b->handled, 1);
    if (atomic_load(&b->stop))
        return DAGGER_OK;
    return dagger_send(dagger_ctx_runtime(ctx), dagger_ctx_self(ctx), T_SPIN, NULL, 0); /* forever busy */
}

Test(contracts, idle_sources_are_not_starved_by_busy_actors)
{
    act_test_runtime_done(rt);
    sys = act_test_runtime(rt, 1); /* one worker, kept busy */
    dagger_msg_type_desc_t d = {"ct.spin", DAGGER_MSG_FIXED, 0};
    cr_assert_eq(dagger_msg_type_register(rt, &d, &T_SPIN), DAGGER_OK);
    busy_t b = {0};
    dagger_handler_t h[] = {{T_SPIN, on_spin}};
    dagger_actor_desc_t ad = {.name = "spinner", .state = &b, .handlers = h, .nhandlers = 1};
    dagger_actor_addr_t a;
    cr_assert_eq(dagger_actor_spawn(rt, &ad, &a), DAGGER_OK);
    cr_assert_eq(dagger_send(rt, a, T_SPIN, NULL, 0), DAGGER_OK);
    ACT_WAIT_FOR(&b.handled, 1000);
    source_t s = {0};
    dg_act_system_add_idle_source(sys, fake_source, &s);
    atomic_store(&s.pending, 1);
    ACT_WAIT_FOR(&s.done, 1);
    atomic_store(&b.stop, 1);
    dg_act_system_stop_all(sys);
    act_test_runtime_done(rt); /* the source lives on this stack frame */
    sys = act_test_runtime(rt, 1);
}
