/* The runtime's own actors (issue 12), run with 1..4 ranks: every
 * allocation and release of a program's buffers happens inside the turn of
 * the memory-space actor that owns the memory, every task inside a
 * processor actor's turn, every op is planned in the planner actor's turn,
 * and finalize with work and messages in flight drains them instead of
 * hanging. */
#include <unistd.h>

#include "core/api/tasks.h"
#include "core/runtime.h"
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
 * waits: many more tasks than workers make it do so); and every op this
 * rank carries out was planned in a turn of its planner actor. */
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
    cr_assert_eq(atomic_load(&dg_tasks_get(rt, "test")->exec->emits_outside), 0,
                 "rank %d: ops were planned outside the planner actor's turns", dagger_rank(rt));
    double got[16];
    mr_gather(rt, c[0], got, sizeof(got));
    for (size_t k = 0; k < 16; k++)
        cr_assert_eq(got[k], ramp(k % 4, k / 4) + 58);
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
