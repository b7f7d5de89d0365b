/* Running ready tasks on a CPU worker: the codelet's implementation, with
 * its arguments resolved to memory. (Copies between buffers are the
 * memory-space actors' work: devices/host/host_space.c.) */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "actors/ctx.h"
#include "actors/system.h"
#include "core/base/common.h"
#include "core/base/spmd_caller.h"
#include "core/exec/exec.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"
#include "core/exec/exec_trace.h"

#include "core/exec/task_ctx.h"

static int after_failure(dg_exec_t *ex, uint64_t task)
{
    pthread_mutex_lock(&ex->fail_lock);
    /* The failed task itself too: one whose failure was recorded before it
     * ran (its arguments' buffers could not be had) does not run. */
    int later = task >= ex->fail_task || ex->fail_task >= UINT64_MAX - 1; /* or not a task */
    pthread_mutex_unlock(&ex->fail_lock);
    return later;
}

/* The implementation for a processor kind: test devices run the CPU one on
 * their (host-addressable) memory. */
static dagger_impl_fn impl_for(const dg_exec_codelet_t *cl, dg_plan_kind_t kind)
{
    switch (kind) {
    case DG_PLAN_CUDA: return cl->cuda;
    case DG_PLAN_HIP: return cl->hip;
    default: return cl->cpu;
    }
}

static const char *kind_name(dg_plan_kind_t kind)
{
    static const char *names[DG_PLAN_NKINDS] = {"CPU", "CUDA", "HIP", "CPU (for test devices)"};
    return (int)kind >= 0 && kind < DG_PLAN_NKINDS ? names[kind] : "?";
}

static void run_launch(dg_exec_t *ex, struct dagger_task *t, dg_plan_kind_t kind)
{
    dg_xlaunch_t *l = &t->op->u.launch;
    /* The argument block was written on the submitting thread's core: ask
     * for all of its lines at once rather than one miss per dagger_task_arg. */
    for (size_t b = 0, n = l->nargs * sizeof(*l->args); b < n; b += 64)
        __builtin_prefetch((const char *)l->args + b, 0);
    /* After a failure on this rank, later tasks of the region (by task id,
     * not by when they start) are skipped: their inputs may be garbage.
     * Earlier ones still run, so their results stay valid (fetch relies on
     * it). Transfers still run, so every rank's plan completes and the
     * region ends with the first error everywhere. */
    if (atomic_load_explicit(&ex->failed, memory_order_relaxed) && after_failure(ex, l->task))
        return;
    const dg_exec_codelet_t *cl = dg_exec_codelet(ex, l->codelet);
    dagger_impl_fn fn = cl ? impl_for(cl, kind) : NULL;
    if (!fn) {
        char msg[200];
        snprintf(msg, sizeof(msg), "codelet %s has no %s implementation on rank %d",
                 cl ? cl->name : "?", kind_name(kind), ex->rank);
        dg_exec_fail(ex, l->task, DAGGER_ERR_UNSUPPORTED, msg);
        return;
    }
    if (l->ret)
        memset(l->ret, 0, l->ret_size);
    /* User code runs as on a plain thread (no handler context), still
     * inside the processor actor's turn, which holds the actor. */
    dagger_ctx_t *turn = dg_act_tls.ctx;
    dg_act_tls.ctx = NULL;
    int outer = dg_caller_enter(DG_CALLER_CODELET); /* SPMD calls refuse to run here */
    int rc = fn(t);
    dg_caller_restore(outer);
    dg_act_tls.ctx = turn;
    if (rc != DAGGER_OK && !t->failed) {
        char msg[320];
        const char *named = dg_status_text((dagger_status_t)rc); /* a dagger status passed on */
        snprintf(msg, sizeof(msg), "task %llu (%s) on rank %d returned %d%s%s%s",
                 (unsigned long long)l->task, cl->name, ex->rank, rc, named ? " (" : "",
                 named ? named : "", named ? ")" : "");
        dg_exec_fail(ex, l->task, DAGGER_ERR_TASK_FAILED, msg);
    }
}

/* Tasks run in a turn of a CPU processor actor (a dagger.proc.launch
 * handler). One that does not is counted (tests check there is none); the
 * common case costs a thread-local load and no shared write. */
static void count_turn(dg_exec_t *ex)
{
    const dagger_ctx_t *ctx = dg_act_tls.ctx;
    if (DG_UNLIKELY(!ctx || !ctx->msg || (ctx->msg->hdr.type != ex->msg.launch &&
                                           ctx->msg->hdr.type != ex->dev.launch_type)))
        atomic_fetch_add_explicit(&ex->tasks_outside, 1, memory_order_relaxed);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Which codelets run long (exec.h, DG_LONG_TASK_US): every run of a long
 * one is timed (two clock reads against its hundreds of microseconds), a
 * short one's first run and then one run in 16 per thread, so an empty task
 * pays an eighth of a clock read on average. The estimate is a decaying
 * minimum of wall times: a lower sample replaces it at once, a higher one
 * raises it by a quarter at most. Preemption only ever lengthens a sample
 * (four ranks share two cores in the tests), and a mean took one preempted
 * 5 us reduction node for a 1 ms task, which capped the tiny-task trees
 * that followed; thread CPU time would not be fooled, but it is a system
 * call (0.3-5 us here). */
static _Thread_local unsigned tl_sample;

static uint32_t next_estimate(uint32_t old, uint64_t us)
{
    if (!old || us <= old)
        return (uint32_t)us;
    uint64_t up = (uint64_t)old + old / 4u + 1u;
    return (uint32_t)(us < up ? us : up);
}

static void run_cpu_task(dg_exec_t *ex, struct dagger_task *t)
{
    _Atomic uint32_t *stat = &ex->task_us[t->op->u.launch.codelet % DG_TASK_STAT_BUCKETS];
    uint32_t est = atomic_load_explicit(stat, memory_order_relaxed);
    int is_long = est >= DG_LONG_TASK_US;
    if (!is_long && est && (tl_sample++ & 15)) {
        run_launch(ex, t, DG_PLAN_CPU);
        return;
    }
    /* A task that may run long (its codelet's first, or a long one): its
     * worker stops counting as spinning, so wake-ups for new ready work go
     * to a sleeper instead of waiting for this task (actors/system.h). A
     * short one keeps the count: its worker is back within microseconds,
     * and a wake-up per task looked costly for small-task regions
     * (bench_region_launch on 2 x 2, docs/design.md, section 3). */
    if (is_long || !est)
        dg_act_system_worker_busy(ex->actors, t->worker);
    if (is_long && !atomic_load_explicit(&ex->long_seen, memory_order_relaxed))
        atomic_store_explicit(&ex->long_seen, 1, memory_order_relaxed);
    uint64_t t0 = now_ns();
    run_launch(ex, t, DG_PLAN_CPU);
    uint64_t us = (now_ns() - t0) / 1000u + 1; /* 0 means never sampled */
    if (us > UINT32_MAX / 4)
        us = UINT32_MAX / 4;
    uint32_t next = next_estimate(est, us);
    atomic_store_explicit(stat, next, memory_order_relaxed);
    if (next >= DG_LONG_TASK_US && !atomic_load_explicit(&ex->long_seen, memory_order_relaxed))
        atomic_store_explicit(&ex->long_seen, 1, memory_order_relaxed);
}

void dg_exec_run(dg_exec_t *ex, dg_xop_t *op, int worker)
{
    count_turn(ex);
    uint64_t tr0 = DG_TRACE_ON() ? dg_trace_run_begin(op, worker) : 0;
    struct dagger_task t = {ex, op, worker, 0, NULL, -1};
    run_cpu_task(ex, &t);
    if (DG_TRACE_ON())
        dg_trace_run_end(ex, op, worker, tr0);
    dg_exec_after(ex, op, 1); /* CPU work is done when the implementation returns */
    dg_exec_finish(ex, op);
}

void dg_exec_run_device(dg_exec_t *ex, dg_xop_t *op, dg_plan_kind_t kind, void *stream,
                        uint32_t proc, int worker)
{
    count_turn(ex);
    uint64_t tr0 = DG_TRACE_ON() ? dg_trace_run_begin(op, worker) : 0;
    struct dagger_task t = {ex, op, worker, 0, stream, (int32_t)proc};
    run_launch(ex, &t, kind);
    if (DG_TRACE_ON())
        dg_trace_run_end(ex, op, worker, tr0);
}

/* A task's failure with its detail, in the form every rank reports. */
void dg_exec_fail_task(dg_exec_t *ex, const dg_xop_t *op, const char *detail)
{
    char msg[512];
    const dg_exec_codelet_t *cl = dg_exec_codelet(ex, op->u.launch.codelet);
    snprintf(msg, sizeof(msg), "task %llu (%s) failed on rank %d: %s",
             (unsigned long long)op->u.launch.task, cl ? cl->name : "?", ex->rank, detail);
    dg_exec_fail(ex, op->u.launch.task, DAGGER_ERR_TASK_FAILED, msg);
}

void dg_exec_after(dg_exec_t *ex, dg_xop_t *op, int ok)
{
    dg_xlaunch_t *l = &op->u.launch;
    dagger_task_check_fn fn = l->after;
    if (!fn)
        return;
    l->after = NULL;
    char detail[384] = "";
    if (fn(l->after_arg, ok, detail, sizeof(detail)) && ok)
        dg_exec_fail_task(ex, op, detail);
}
