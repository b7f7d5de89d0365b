/* Running ready tasks on a CPU worker: the codelet's implementation, with
 * its arguments resolved to memory. (Copies between buffers are the
 * memory-space actors' work: devices/host/host_space.c.) */
#include <stdio.h>
#include <string.h>

#include "actors/ctx.h"
#include "core/base/common.h"
#include "core/exec/exec.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"
#include "core/exec/exec_trace.h"

#include "core/exec/task_ctx.h"

static int after_failure(dg_exec_t *ex, uint64_t task)
{
    pthread_mutex_lock(&ex->fail_lock);
    int later = task > ex->fail_task || ex->fail_task >= UINT64_MAX - 1; /* or not a task */
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
    int rc = fn(t);
    dg_act_tls.ctx = turn;
    if (rc != DAGGER_OK && !t->failed) {
        char msg[200];
        snprintf(msg, sizeof(msg), "task %llu (%s) on rank %d returned %d",
                 (unsigned long long)l->task, cl->name, ex->rank, rc);
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
                                           ctx->msg->hdr.type != ex->msg.dev_launch)))
        atomic_fetch_add_explicit(&ex->tasks_outside, 1, memory_order_relaxed);
}

void dg_exec_run(dg_exec_t *ex, dg_xop_t *op, int worker)
{
    count_turn(ex);
    uint64_t tr0 = DG_TRACE_ON() ? dg_trace_run_begin(op, worker) : 0;
    struct dagger_task t = {ex, op, worker, 0, NULL, -1};
    run_launch(ex, &t, DG_PLAN_CPU);
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
