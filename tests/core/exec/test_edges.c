/* The executor's dependency edges (core/exec/exec.c register_deps and
 * dg_exec_finish, xop.h): hand-made op streams emitted into the executor of a
 * live one-rank runtime, whose test codelet records when each task started
 * and ended. A task may start only after every task it depends on ended:
 *  - fan-in past the inline edges (DG_XOP_INLINE_EDGES, then a malloc'ed array),
 *  - a dependency that already finished (its successor stack is closed),
 *  - a dependency whose ring slot was reused (a window of 64 ops),
 *  - the edge array out of memory (the emitting thread waits instead),
 *  - fan-out: one op releasing many waiting ops at once (sends first, in
 *    plan order),
 *  - edges released early (dg_exec_release_early; chained tasks of a test
 *    device, DAGGER_GPU_CHAIN=1), whose ops may finish before their
 *    dependencies do and must keep their slots until those have. */
#include <time.h>
#include <criterion/criterion.h>
#include <dagger.h>
#include <sched.h>
#include <stdlib.h>

#include "core/base/alloc.h"
#include "core/runtime/tasks.h"
#include "core/runtime/runtime.h"
#include "devices/dev.h"

#define MAXT 512 /* task ids of one test */

static _Atomic uint64_t clock_ticks;            /* a logical clock: one tick per event */
static _Atomic uint64_t started[MAXT], ended[MAXT];

static _Atomic uint64_t gated;                  /* this task waits for gate_open */
static _Atomic int gate_open;

static int record(dagger_task_t *t)
{
    uint64_t id = dagger_task_seq(t);
    atomic_store(&started[id], atomic_fetch_add(&clock_ticks, 1) + 1);
    while (id == atomic_load(&gated) && !atomic_load(&gate_open))
        sched_yield();
    for (int i = 0; i < (int)(id % 5) * 20; i++) /* some tasks last longer */
        sched_yield();
    atomic_store(&ended[id], atomic_fetch_add(&clock_ticks, 1) + 1);
    return DAGGER_OK;
}

static dagger_runtime_t *rt;
static dg_exec_t *ex;
static uint32_t cl_id = 0x5eed;
/* The gated task's codelet, never run before it: a codelet without a
 * timing may run long, so its worker stops counting as spinning (run.c),
 * and wake-ups for other ready work go to the sleepers. */
static uint32_t gated_cl_id = 0x6a7e;

static void start(void)
{
    dagger_params_t p = {.num_threads = 3, .no_bind = 1};
    cr_assert_eq(dagger_init(NULL, NULL, &p, &rt), DAGGER_OK, "%s", dagger_error_detail());
    ex = rt->tasks->exec;
    cr_assert_eq(dg_exec_codelet_add(ex, cl_id, "edges.record", record, NULL, NULL), DAGGER_OK);
    cr_assert_eq(dg_exec_codelet_add(ex, gated_cl_id, "edges.gated", record, NULL, NULL),
                 DAGGER_OK);
}

static void stop(void)
{
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

static int on_device; /* launch on the rank's first (test) device, not a CPU */
static uint32_t device_proc; /* its processor id */

/* Op seq runs task seq (task ids = op seqs here) after deps. */
static void launch(uint64_t seq, const uint64_t *deps, uint32_t ndeps)
{
    cr_assert_lt(seq, MAXT);
    dg_plan_op_t op = {.seq = seq, .kind = DG_PLAN_OP_LAUNCH, .deps = deps, .ndeps = ndeps};
    op.u.launch.task = seq;
    op.u.launch.codelet = seq == atomic_load(&gated) ? gated_cl_id : cl_id;
    op.u.launch.proc = on_device ? device_proc : DG_PLAN_ANY_CPU;
    op.u.launch.space = on_device ? 1 : 0;
    dg_exec_emit(ex, &op);
}

static void wait_and_check(uint64_t n, const uint64_t deps[][8], const uint32_t *ndeps)
{
    cr_assert_eq(dg_exec_wait_all(ex), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_not(atomic_load(&ex->failed), "%s", ex->fail_msg);
    for (uint64_t s = 1; s <= n; s++) {
        cr_assert(atomic_load(&ended[s]), "task %llu never ran", (unsigned long long)s);
        for (uint32_t d = 0; d < ndeps[s]; d++)
            cr_assert_gt(atomic_load(&started[s]), atomic_load(&ended[deps[s][d]]),
                         "task %llu started before its dependency %llu ended",
                         (unsigned long long)s, (unsigned long long)deps[s][d]);
    }
}

/* A random DAG of n ops: each depends on up to 7 earlier ones (more than
 * the 4 inline edges), often on very recent ones (still running), sometimes
 * on old ones (long finished). */
static void random_dag(uint64_t n, uint64_t seed, uint64_t deps[][8], uint32_t *ndeps)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (uint64_t s = 1; s <= n; s++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ndeps[s] = s > 1 ? (uint32_t)(x % 8) : 0;
        uint64_t prev = 0;
        for (uint32_t d = 0; d < ndeps[s]; d++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint64_t span = x % 4 ? 6 : s - 1; /* mostly recent ops */
            uint64_t lo = s - 1 > span ? s - 1 - span : 0;
            uint64_t dep = lo + 1 + x % (s - 1 - lo);
            if (dep <= prev) /* sorted, distinct */
                dep = prev + 1;
            if (dep >= s) {
                ndeps[s] = d;
                break;
            }
            deps[s][d] = prev = dep;
        }
        launch(s, deps[s], ndeps[s]);
    }
}

static uint64_t deps_of[MAXT][8];
static uint32_t ndeps_of[MAXT];

Test(edges, random_dags_run_in_dependency_order, .init = start, .fini = stop, .timeout = 120)
{
    random_dag(400, 1, deps_of, ndeps_of);
    wait_and_check(400, deps_of, ndeps_of);
}

/* DAGGER_TASK_WINDOW=64 (the smallest ring): ops reuse ring slots every 64;
 * a dependency on an op 64 or more back finds its slot reused (it has
 * retired: the emitter waited for it) and needs no edge. */
Test(edges, small_window_reuses_slots, .timeout = 120)
{
    setenv("DAGGER_TASK_WINDOW", "64", 1);
    start();
    cr_assert_eq(ex->mask + 1, 64, "the window setting reaches the executor");
    random_dag(500, 2, deps_of, ndeps_of);
    wait_and_check(500, deps_of, ndeps_of);
    stop();
}

/* One op with 40 dependencies (a malloc'ed edge array), then 40 ops that
 * wait for it alone (one finish releases them all). */
Test(edges, wide_fan_in_and_fan_out, .init = start, .fini = stop, .timeout = 120)
{
    for (uint64_t s = 1; s <= 40; s++) {
        ndeps_of[s] = 0;
        launch(s, NULL, 0);
    }
    ndeps_of[41] = 0;
    static uint64_t all[40];
    for (uint64_t s = 1; s <= 40; s++)
        all[s - 1] = s;
    launch(41, all, 40);
    for (uint64_t s = 42; s <= 81; s++) {
        ndeps_of[s] = 1;
        deps_of[s][0] = 41;
        launch(s, deps_of[s], 1);
    }
    cr_assert_eq(dg_exec_wait_all(ex), DAGGER_OK);
    for (uint64_t s = 1; s <= 40; s++)
        cr_assert_gt(atomic_load(&started[41]), atomic_load(&ended[s]), "fan-in: after %llu",
                     (unsigned long long)s);
    wait_and_check(81, deps_of, ndeps_of);
}

/* The order a finish releases its waiters in (xop.h
 * dg_xedge_release_order), on a hand-made successor stack: sends first, in
 * plan order; the other waiters after them, last-planned first; an edge
 * released early stays among the others whatever its op. */
Test(edges, sends_are_released_first_in_plan_order)
{
    enum { N = 9 };
    static dg_xop_t ops[N];
    static dg_xedge_t edges[N];
    const dg_plan_op_kind_t kinds[N] = {DG_PLAN_OP_SEND, DG_PLAN_OP_LAUNCH, DG_PLAN_OP_SEND,
                                        DG_PLAN_OP_SEND, DG_PLAN_OP_RECV, DG_PLAN_OP_LAUNCH,
                                        DG_PLAN_OP_SEND, DG_PLAN_OP_SEND, DG_PLAN_OP_COPY};
    dg_xedge_t *stack = NULL;
    for (int i = 0; i < N; i++) { /* planned 0 .. N-1: each pushed on top */
        ops[i].kind = kinds[i];
        edges[i].op = &ops[i];
        edges[i].next = stack;
        stack = &edges[i];
    }
    edges[6].op = (dg_xop_t *)((uintptr_t)&ops[6] | 1); /* released early */
    const int want[N] = {0, 2, 3, 7, 8, 6, 5, 4, 1};
    int i = 0;
    for (dg_xedge_t *e = dg_xedge_release_order(stack); e; e = e->next, i++) {
        cr_assert_lt(i, N, "more edges than went in");
        cr_assert_eq(e, &edges[want[i]], "position %d: edge %d, expected %d", i,
                     (int)(e - edges), want[i]);
    }
    cr_assert_eq(i, N, "%d edges came out of %d", i, N);
    edges[0].next = NULL; /* one waiter, and none: unchanged */
    cr_assert_eq(dg_xedge_release_order(&edges[0]), &edges[0]);
    cr_assert_null(dg_xedge_release_order(NULL));
}

/* The edge array of an op with more than 4 dependencies cannot be had: the
 * emitting thread waits for the dependencies instead, and order still holds. */
Test(edges, edge_array_out_of_memory, .init = start, .fini = stop, .timeout = 120)
{
    for (uint64_t s = 1; s <= 6; s++) {
        ndeps_of[s] = 0;
        launch(s, NULL, 0);
    }
    static const uint64_t six[6] = {1, 2, 3, 4, 5, 6};
    ndeps_of[7] = 6;
    memcpy(deps_of[7], six, sizeof(six));
    dg_alloc_fail_at(1); /* the emitting thread's next allocation: the edge array */
    launch(7, six, 6);
    cr_assert(dg_alloc_failed(), "emitting 6 dependencies allocates an edge array");
    dg_alloc_fail_at(0);
    wait_and_check(7, deps_of, ndeps_of);
}

/* DAGGER_GPU_CHAIN=1 on a test device, in the smallest window: an op
 * released early runs (and finishes) while the op it depends on is still
 * pending, but its edge sits in that op's successor stack until its
 * finish passes it; reusing its slot before then would break that stack.
 * Every op still runs once, in dependency order. */
Test(edges, ops_released_early_keep_their_slots_until_passed, .timeout = 120)
{
    setenv("DAGGER_TASK_WINDOW", "64", 1);
    setenv("DAGGER_TEST_DEVICES", "1", 1);
    setenv("DAGGER_GPU_CHAIN", "1", 1);
    start();
    dagger_proc_info_t procs[8];
    int n = dagger_procs(rt, procs, 8);
    for (int i = 0; i < n && i < 8; i++)
        if (procs[i].kind == DAGGER_PROC_TESTDEV)
            device_proc = (uint32_t)procs[i].id;
    cr_assert_gt(device_proc, 0, "a test device among %d processors", n);
    on_device = 1;
    random_dag(500, 3, deps_of, ndeps_of);
    wait_and_check(500, deps_of, ndeps_of);
    on_device = 0;
    cr_assert_eq(atomic_load(&dg_devs_of(ex)->dev[0].launched), 500);
    uint64_t chained = atomic_load(&dg_devs_of(ex)->dev[0].chained);
    /* 161-401 here, fewer the more the submitting thread lags the device */
    cr_assert_gt(chained, 10, "only %llu of 500 ops were released early",
                 (unsigned long long)chained);
    stop();
    unsetenv("DAGGER_GPU_CHAIN");
    unsetenv("DAGGER_TEST_DEVICES");
    unsetenv("DAGGER_TASK_WINDOW");
}

static int take_all(void *arg, dg_xop_t *succ)
{
    (void)arg;
    (void)succ;
    return 1;
}

/* dg_exec_release_early on a running op: its successor runs and finishes
 * before it, but keeps its slot (and its edge array, in which the running
 * op's successor stack still points) until the running op's finish has
 * passed the edge. */
Test(edges, an_op_released_early_keeps_its_slot_until_passed, .init = start, .fini = stop,
     .timeout = 120)
{
    atomic_store(&gated, 1);
    atomic_store(&gate_open, 0);
    for (uint64_t s = 1; s <= 5; s++) {
        ndeps_of[s] = 0;
        launch(s, NULL, 0);
    }
    for (uint64_t s = 2; s <= 5; s++) /* finished: only op 1 is left running */
        while (atomic_load(&ex->ring[s & ex->mask].succ) != DG_XOP_CLOSED)
            sched_yield();
    while (!atomic_load(&started[1]))
        sched_yield();
    static const uint64_t five[5] = {1, 2, 3, 4, 5}; /* more than the inline edges */
    launch(6, five, 5);
    dg_xop_t *t = &ex->ring[1 & ex->mask], *x = &ex->ring[6 & ex->mask];
    cr_assert_eq(atomic_load(&x->pending), 1, "op 6 waits for op 1 alone");
    dg_exec_release_early(ex, t, take_all, NULL);
    /* its finish is over: it dropped its own hold, or (wrongly) retired */
    for (int i = 0; i < 30000 && atomic_load(&x->holds) != 1 && !atomic_load(&x->retired); i++)
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    if (!atomic_load(&ended[6]))
        atomic_store(&gate_open, 1); /* fail now, not after the timeout: op 1 ends */
    cr_assert(atomic_load(&ended[6]) && !atomic_load(&ended[1]), "op 6 ran while op 1 ran");
    cr_assert_not(atomic_load(&x->retired), "op 6 retired while op 1's stack held its edge");
    cr_assert_eq(atomic_load(&x->holds), 1);
    atomic_store(&gate_open, 1);
    cr_assert_eq(dg_exec_wait_all(ex), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert(atomic_load(&x->retired), "op 6 retired once op 1 finished");
    atomic_store(&gated, 0);
}
