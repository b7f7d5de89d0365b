/* dg_act_post: an idle actor's turn runs on the posting thread; a busy
 * actor gets the message behind its mail, handled by whoever runs it, in
 * the order each sender posted. */
#include <pthread.h>

#include "act_test.h"

typedef struct {
    pthread_t thread[64];     /* who handled message i */
    int seq[64];
    _Atomic int n;
    _Atomic int hold;         /* 1: the "block" handler waits until it is 0 */
    _Atomic int blocked;
    _Atomic int self_ok;      /* the handler saw its own address as self */
    dagger_actor_addr_t addr;
} rec_t;

static dagger_status_t on_rec(dagger_ctx_t *ctx)
{
    rec_t *r = dagger_ctx_state(ctx);
    int i = atomic_load(&r->n);
    r->thread[i] = pthread_self();
    r->seq[i] = *(const int *)dagger_ctx_payload(ctx);
    if (dagger_actor_addr_eq(dagger_ctx_self(ctx), r->addr))
        atomic_fetch_add(&r->self_ok, 1);
    atomic_store(&r->n, i + 1);
    return DAGGER_OK;
}

static dagger_status_t on_block(dagger_ctx_t *ctx)
{
    rec_t *r = dagger_ctx_state(ctx);
    atomic_store(&r->blocked, 1);
    double t0 = act_test_now();
    while (atomic_load(&r->hold) && act_test_now() - t0 < 10.0)
        sched_yield();
    return DAGGER_OK;
}

static dagger_actor_addr_t spawn_rec(dg_act_system_t *sys, rec_t *r, uint32_t T, uint32_t B,
                                     int pin)
{
    dagger_handler_t h[] = {{T, on_rec}, {B, on_block}};
    dagger_actor_desc_t d = {.name = "rec", .state = r, .handlers = h, .nhandlers = 2,
                             .pin = pin, .worker = 0};
    cr_assert_eq(dg_act_spawn(sys, &d, &r->addr), DAGGER_OK);
    return r->addr;
}

/* A system with workers, the two types and a recording actor. */
typedef struct {
    dg_act_system_t *sys;
    uint32_t T, B;
    dagger_actor_addr_t a;
} fix_t;

static fix_t setup(int workers, rec_t *r, int pin)
{
    fix_t f;
    f.sys = act_test_system(workers);
    f.T = act_test_type(f.sys, "dt.rec", DAGGER_MSG_FIXED, sizeof(int));
    f.B = act_test_type(f.sys, "dt.block", DAGGER_MSG_FIXED, sizeof(int));
    f.a = spawn_rec(f.sys, r, f.T, f.B, pin);
    return f;
}

/* The actor blocks in a handler on a worker until r->hold is cleared. */
static void block_on_worker(fix_t *f, rec_t *r)
{
    int z = 0;
    atomic_store(&r->hold, 1);
    cr_assert_eq(dg_act_send(f->sys, dg_act_self_or_none(f->sys), f->a, f->B, 0, 0, &z, sizeof(z),
                             "t"), DAGGER_OK);
    ACT_WAIT_FOR(&r->blocked, 1);
}

static int post(dg_act_system_t *sys, dagger_actor_addr_t to, uint32_t type, int v)
{
    dg_act_post_t p = {.to = to, .type = type, .payload = &v, .size = sizeof(v), .what = "t"};
    int direct = -1;
    cr_assert_eq(dg_act_post(sys, &p, &direct), DAGGER_OK, "%s", dagger_error_detail());
    return direct;
}

Test(direct, idle_actor_runs_on_the_posting_thread)
{
    rec_t r = {0};
    fix_t f = setup(2, &r, 0);
    dg_act_system_t *sys = f.sys;
    dagger_actor_addr_t a = f.a;
    for (int i = 0; i < 10; i++)
        cr_assert_eq(post(sys, a, f.T, i), 1, "an idle actor's turn runs at once");
    cr_assert_eq(atomic_load(&r.n), 10, "handled before dg_act_post returned");
    for (int i = 0; i < 10; i++) {
        cr_assert(pthread_equal(r.thread[i], pthread_self()), "message %d ran elsewhere", i);
        cr_assert_eq(r.seq[i], i);
    }
    cr_assert_eq(atomic_load(&r.self_ok), 10, "the handler's context names the actor");
    dagger_actor_stats_t st;
    cr_assert_eq(dg_act_stop(sys, a), DAGGER_OK);
    cr_assert_eq(dg_act_join(sys, a, 5000000, &st), DAGGER_OK);
    cr_assert_eq(st.handled, 10, "direct turns count as handled messages");
    dg_act_system_destroy(sys);
}

Test(direct, busy_actor_handles_posts_behind_its_mail_in_order)
{
    rec_t r = {0};
    fix_t f = setup(2, &r, 0);
    dg_act_system_t *sys = f.sys;
    block_on_worker(&f, &r);
    for (int i = 0; i < 20; i++)
        cr_assert_eq(post(sys, f.a, f.T, i), 0, "a busy actor's message waits");
    cr_assert_eq(atomic_load(&r.n), 0, "nothing runs beside the running turn");
    atomic_store(&r.hold, 0);
    ACT_WAIT_FOR(&r.n, 20);
    for (int i = 0; i < 20; i++) {
        cr_assert_eq(r.seq[i], i, "posts are handled in the order they were posted");
        cr_assert(!pthread_equal(r.thread[i], pthread_self()), "the worker handled them");
    }
    dg_act_system_destroy(sys);
}

Test(direct, pinned_actor_stays_on_its_worker)
{
    rec_t r = {0};
    fix_t f = setup(2, &r, 1);
    dg_act_system_t *sys = f.sys;
    cr_assert_eq(post(sys, f.a, f.T, 7), 0, "a plain thread never runs a pinned actor");
    ACT_WAIT_FOR(&r.n, 1);
    cr_assert(!pthread_equal(r.thread[0], pthread_self()));
    dg_act_system_destroy(sys);
}

static dagger_status_t keep_fails(void *payload)
{
    (void)payload;
    return DAGGER_ERR_NO_MEMORY;
}

Test(direct, keep_runs_only_when_the_message_must_wait)
{
    rec_t r = {0};
    fix_t f = setup(1, &r, 0);
    dg_act_system_t *sys = f.sys;
    int v = 1, direct;
    dg_act_post_t p = {.to = f.a, .type = f.T, .payload = &v, .size = sizeof(v), .keep = keep_fails,
                       .what = "t"};
    cr_assert_eq(dg_act_post(sys, &p, &direct), DAGGER_OK, "idle: keep is not needed");
    cr_assert_eq(direct, 1);
    block_on_worker(&f, &r);
    cr_assert_eq(dg_act_post(sys, &p, &direct), DAGGER_ERR_NO_MEMORY, "keep's error is the post's");
    atomic_store(&r.hold, 0);
    act_test_sleep_ms(20);
    cr_assert_eq(atomic_load(&r.n), 1, "the failed post was not delivered");
    dg_act_system_destroy(sys);
}
