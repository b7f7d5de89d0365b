/* The runtime's own actors (issue 12), run with 1..4 ranks: every
 * allocation and release of a program's buffers happens inside the turn of
 * the memory-space actor that owns the memory, every task inside a
 * processor actor's turn, every op is planned in a turn of the planner
 * actor (also when another thread submits), and finalize with work and
 * messages in flight drains them instead of hanging. */
#include <pthread.h>
#include <unistd.h>

#include "core/runtime/tasks.h"
#include "core/runtime/runtime.h"
#include "mr_codelets.h"
#include "mr_util.h"

static dagger_codelet_t reg(dagger_runtime_t *rt, const char *name, dagger_impl_fn fn)
{
    dagger_codelet_desc_t d = {.name = name, .cpu = fn};
    dagger_codelet_t cl;
    MR_OK(dagger_codelet_register(rt, &d, &cl));
    return cl;
}

static double ramp(size_t i, size_t j)
{
    return (double)(i + 3 * j);
}

/* +1 on every rank in turn: each step moves the chunk to the next rank. */
static void pass_around(dagger_runtime_t *rt, dagger_region_t *r, dagger_codelet_t add1,
                        dagger_chunk_t c, int steps)
{
    for (int s = 0; s < steps; s++) {
        dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(s % dagger_nranks(rt))};
        MR_OK(dagger_submit(r, add1, 1, &DAGGER_INOUT(dagger_view(rt, c)), &o, NULL, NULL));
    }
}

/* n square chunks of side m, owned by the ranks in turn. */
static void spread_chunks(dagger_runtime_t *rt, dagger_chunk_t *c, int n, size_t m)
{
    for (int k = 0; k < n; k++)
        c[k] = mr_chunk2(rt, m, m, k % dagger_nranks(rt), ramp);
}

static dg_bufs_t *bufs_of(dagger_runtime_t *rt)
{
    return &dg_tasks_get(rt, "test")->exec->bufs;
}

Test(runtime_actors, every_allocation_is_a_memory_space_actor_turn)
{
    dagger_runtime_t *rt = mr_init();
    dagger_codelet_t add1 = reg(rt, "add1", mr_add1);
    uint64_t in0 = atomic_load(&bufs_of(rt)->in_owner_turn);
    /* Small (eager) and large (rendezvous) transfers, slots freed as the
     * chunks move on, chunks created and freed. */
    dagger_chunk_t small = mr_chunk2(rt, 8, 8, 0, ramp);
    dagger_chunk_t big = mr_chunk2(rt, 256, 256, 0, ramp);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    pass_around(rt, r, add1, small, 6);
    pass_around(rt, r, add1, big, 6);
    MR_OK(dagger_region_end(r));
    double got[64];
    mr_gather(rt, small, got, sizeof(got));
    for (size_t k = 0; k < 64; k++)
        cr_assert_eq(got[k], ramp(k % 8, k / 8) + 6);
    MR_OK(dagger_chunk_free(rt, small));
    MR_OK(dagger_chunk_free(rt, big));
    MR_OK(dagger_region_begin(rt, NULL, &r)); /* the frees run by the next region's end */
    MR_OK(dagger_region_end(r));
    dg_bufs_t *b = bufs_of(rt);
    cr_assert_gt(atomic_load(&b->in_owner_turn), in0 + 1,
                 "rank %d: allocations were counted inside the actor's turns", dagger_rank(rt));
    cr_assert_eq(atomic_load(&b->outside_owner_turn), 0,
                 "rank %d: %llu allocations or releases ran outside the memory-space actor",
                 dagger_rank(rt), (unsigned long long)atomic_load(&b->outside_owner_turn));
    MR_OK(dagger_finalize(rt));
}

/* Every task, on every rank, runs in a turn of a CPU processor actor: the
 * workers' and the submitting thread's (which takes shared work while it
 * waits: many more tasks than workers make it do so). */
Test(runtime_actors, every_task_is_a_processor_actor_turn)
{
    dagger_runtime_t *rt = mr_init();
    dagger_codelet_t add1 = reg(rt, "add1", mr_add1);
    dagger_chunk_t c[16];
    spread_chunks(rt, c, 16, 4);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    for (int round = 0; round < 50; round++)
        for (int k = 0; k < 16; k++)
            MR_OK(dagger_spawn(r, add1, DAGGER_INOUT(dagger_view(rt, c[k])), DAGGER_END));
    pass_around(rt, r, add1, c[0], 8);
    MR_OK(dagger_region_end(r));
    dagger_region_stats_t rs;
    MR_OK(dagger_region_stats(rt, &rs));
    cr_assert_gt(rs.tasks_local, 0, "rank %d ran tasks", dagger_rank(rt));
    cr_assert_eq(atomic_load(&dg_tasks_get(rt, "test")->exec->tasks_outside), 0,
                 "rank %d: %llu of its tasks ran outside a processor actor's turn",
                 dagger_rank(rt),
                 (unsigned long long)atomic_load(&dg_tasks_get(rt, "test")->exec->tasks_outside));
    double got[16];
    mr_gather(rt, c[0], got, sizeof(got));
    for (size_t k = 0; k < 16; k++)
        cr_assert_eq(got[k], ramp(k % 4, k / 4) + 58);
    MR_OK(dagger_finalize(rt));
}

static uint64_t emits_outside(dagger_runtime_t *rt)
{
    return atomic_load(&dg_tasks_get(rt, "test")->exec->emits_outside);
}

/* What the second thread submits to, and its outcome. */
struct submitter {
    dagger_status_t st;
    dagger_runtime_t *rt;
    dagger_region_t *r;
    dagger_codelet_t add1;
    dagger_chunk_t c;
};

/* Submits from a thread that did not begin the region (the one that did
 * holds the planner actor and only waits for this thread meanwhile). */
static void *submit_elsewhere(void *arg)
{
    struct submitter *s = arg;
    int k = 0;
    do
        s->st = dagger_spawn(s->r, s->add1, DAGGER_INOUT(dagger_view(s->rt, s->c)), DAGGER_END);
    while (s->st == DAGGER_OK && ++k < 10);
    return NULL;
}

/* Every op this rank carries out leaves a turn of its planner actor:
 * submissions, a fetch inside a region, frees, region ends, and the
 * submissions of a second thread while the region's thread holds the actor
 * and waits for it. */
Test(runtime_actors, every_op_is_planned_in_a_planner_actor_turn)
{
    dagger_runtime_t *rt = mr_init();
    alarm(120); /* a submission nobody handles fails the test instead of hanging */
    dagger_codelet_t add1 = reg(rt, "add1", mr_add1);
    dagger_chunk_t c = mr_chunk2(rt, 16, 16, 0, ramp);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    pass_around(rt, r, add1, c, 4);
    /* Last written away from its owner (with 2 ranks or more): the fetch
     * inside the region plans the copy home. */
    dagger_task_opts_t last = {.scope = &DAGGER_SCOPE_RANK(dagger_nranks(rt) - 1)};
    MR_OK(dagger_submit(r, add1, 1, &DAGGER_INOUT(dagger_view(rt, c)), &last, NULL, NULL));
    double got[256];
    size_t len;
    MR_OK(dagger_fetch_chunk(rt, c, got, sizeof(got), &len));
    cr_assert_eq(got[17], ramp(1, 1) + 5);
    struct submitter s = {.rt = rt, .r = r, .add1 = add1, .c = c};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, submit_elsewhere, &s), 0);
    pthread_join(th, NULL);
    cr_assert_eq(s.st, DAGGER_OK, "rank %d: %s", dagger_rank(rt), dagger_error_detail());
    pass_around(rt, r, add1, c, 2); /* and this thread again */
    MR_OK(dagger_region_end(r));
    mr_gather(rt, c, got, sizeof(got));
    for (size_t k = 0; k < 256; k++)
        cr_assert_eq(got[k], ramp(k % 16, k / 16) + 17);
    MR_OK(dagger_chunk_free(rt, c));
    MR_OK(dagger_region_begin(rt, NULL, &r)); /* the free's ops come with this region's end */
    MR_OK(dagger_region_end(r));
    cr_assert_eq(emits_outside(rt), 0, "rank %d: %llu ops were planned outside the planner "
                 "actor's turns", dagger_rank(rt), (unsigned long long)emits_outside(rt));
    alarm(0);
    MR_OK(dagger_finalize(rt));
}

/* An actor that keeps itself busy: every message sends the next one. */
static dagger_status_t on_tick(dagger_ctx_t *ctx)
{
    /* Once the actor is stopping, the send fails: that ends the stream. */
    (void)dagger_send(dagger_ctx_runtime(ctx), dagger_ctx_self(ctx), dagger_ctx_type(ctx), NULL, 0);
    return DAGGER_OK;
}

Test(runtime_actors, finalize_drains_work_and_messages_in_flight)
{
    dagger_runtime_t *rt = mr_init();
    alarm(120); /* a hang fails the test instead of stalling the suite */
    dagger_codelet_t add1 = reg(rt, "add1", mr_add1);
    dagger_msg_type_t tick;
    dagger_msg_type_desc_t td = {"mr.tick", DAGGER_MSG_FIXED, 0};
    MR_OK(dagger_msg_type_register(rt, &td, &tick));
    dagger_handler_t h[] = {{tick, on_tick}};
    dagger_actor_desc_t ad = {.name = "ticker", .handlers = h, .nhandlers = 1};
    dagger_actor_addr_t a;
    MR_OK(dagger_actor_spawn(rt, &ad, &a));
    MR_OK(dagger_send(rt, a, tick, NULL, 0));
    dagger_chunk_t c[4];
    spread_chunks(rt, c, 4, 128);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    for (int k = 0; k < 4; k++)
        pass_around(rt, r, add1, c[k], 20);
    /* No region end: finalize ends the region, waits for its ops and
     * transfers, stops the actor whose messages never run dry, and says the
     * region was still open (DAGGER_ERR_STATE, runtime.h). */
    cr_assert_eq(dagger_finalize(rt), DAGGER_ERR_STATE);
    alarm(0);
}

/* A task's own code sees the API as a plain thread does, although it runs
 * inside a processor actor's turn: it may start a request (a handler would
 * get DAGGER_ERR_STATE), and what it sends comes from no actor. (It does not
 * wait here: with one worker per rank the actor that answers would need the
 * worker the task holds, in the old design as in this one.) */
static dagger_runtime_t *g_rt;
static dagger_actor_addr_t g_echo;
static dagger_msg_type_t g_ping;
static _Atomic int g_from_none;

static dagger_status_t on_ping(dagger_ctx_t *ctx)
{
    if (!dagger_actor_addr_valid(dagger_ctx_sender(ctx)))
        atomic_fetch_add(&g_from_none, 1);
    return DAGGER_OK;
}

static int ask_echo(dagger_task_t *t)
{
    int v = 41;
    dagger_request_t req;
    dagger_status_t st = dagger_request_start(g_rt, g_echo, g_ping, &v, sizeof(v), &req);
    if (st != DAGGER_OK)
        return dagger_task_fail(t, "request from a task: %s", dagger_strerror(st));
    dagger_request_free(g_rt, req);
    if ((st = dagger_send(g_rt, g_echo, g_ping, &v, sizeof(v))) != DAGGER_OK)
        return dagger_task_fail(t, "send from a task: %s", dagger_strerror(st));
    return DAGGER_OK;
}

Test(runtime_actors, a_task_uses_the_api_as_a_plain_thread)
{
    dagger_runtime_t *rt = g_rt = mr_init();
    dagger_msg_type_desc_t td = {"mr.ping", DAGGER_MSG_FIXED, sizeof(int)};
    MR_OK(dagger_msg_type_register(rt, &td, &g_ping));
    dagger_handler_t h[] = {{g_ping, on_ping}};
    dagger_actor_desc_t ad = {.name = "echo", .handlers = h, .nhandlers = 1};
    MR_OK(dagger_actor_spawn(rt, &ad, &g_echo));
    dagger_codelet_t ask = reg(rt, "ask", ask_echo);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(dagger_rank(rt))};
    for (int k = 0; k < dagger_nranks(rt); k++) {
        o.scope = &DAGGER_SCOPE_RANK(k);
        MR_OK(dagger_submit(r, ask, 0, NULL, &o, NULL, NULL));
    }
    MR_OK(dagger_region_end(r));
    for (int i = 0; i < 10000 && atomic_load(&g_from_none) < 2; i++)
        usleep(1000); /* the messages are handled by the echo actor soon */
    cr_assert_eq(atomic_load(&g_from_none), 2, "the task's request and message came from no actor");
    MR_OK(dagger_finalize(rt));
}
