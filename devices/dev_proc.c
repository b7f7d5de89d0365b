/* A device's processor actor (named after the device: "test device 0",
 * "CUDA GPU 0"): a dagger.dev.launch message runs a task's implementation
 * for the device's kind on the actor's turn with one of its streams
 * current (dagger_task_stream), records an event after what the task
 * queued, and the task ends when a dagger.dev.poll turn sees the event
 * pass. A task with a priority above 0 runs on one of the urgent streams
 * (DAGGER_GPU_PRIORITY), which the device schedules first: the next panel
 * of a factorisation overtakes the trailing updates queued before it. The
 * test device kind runs the codelet's cpu implementation (its memory is
 * host-addressable). */
#include <stdio.h>

#include "actors/system.h"
#include "core/base/status_internal.h"
#include "core/exec/exec.h"
#include "devices/dev.h"

/* dagger.dev.launch (on_dev_launch): a ready LAUNCH op placed on the device. */
typedef struct dg_dev_launch_msg {
    dg_xop_t *op;
} dg_dev_launch_msg_t;

dagger_status_t dg_dev_launch_type(dg_devs_t *ds)
{
    return dg_devs_type(ds, "dagger.dev.launch", sizeof(dg_dev_launch_msg_t), &ds->msg.launch);
}

/* The task's work is done: its check (cuSOLVER's info) runs now; a device
 * failure (ok = 0) was recorded with the region's outcome already. */
static void launch_done(dg_dev_t *d, dg_dev_pending_t *p, int ok)
{
    dg_exec_after(d->ex, p->op, ok);
    dg_exec_finish(d->ex, p->op);
}

_Static_assert((int)DG_DEV_CUDA == (int)DG_PLAN_CUDA && (int)DG_DEV_HIP == (int)DG_PLAN_HIP &&
                   (int)DG_DEV_TEST == (int)DG_PLAN_TESTDEV,
               "device kinds and planner kinds share their values (the inventory sends them)");

static dg_plan_kind_t plan_kind(const dg_dev_t *d)
{
    return (dg_plan_kind_t)d->be->kind;
}

/* dagger.dev.launch: a ready task placed on this device. */
static dagger_status_t on_dev_launch(dagger_ctx_t *ctx)
{
    dg_dev_t *d = dagger_ctx_state(ctx);
    dg_xop_t *op = ((const dg_dev_launch_msg_t *)dagger_ctx_payload(ctx))->op;
    int urgent = d->nurgent && op->u.launch.priority > 0;
    dg_dev_stream_t *s = urgent ? d->urgent[d->next_urgent++ % d->nurgent]
                                : d->streams[d->next_stream++ % d->nstreams];
    atomic_fetch_add_explicit(&d->launched, 1, memory_order_relaxed);
    if (urgent)
        atomic_fetch_add_explicit(&d->launched_urgent, 1, memory_order_relaxed);
    if (d->be->set_current(d->index) != DAGGER_OK) {
        dg_exec_fail(d->ex, op->u.launch.task, DAGGER_ERR_SYSTEM, dagger_error_detail());
        dg_exec_finish(d->ex, op);
        return DAGGER_OK;
    }
    dg_exec_run_device(d->ex, op, plan_kind(d), d->be->stream_native(s), op->u.launch.proc,
                       dagger_ctx_worker(ctx));
    dg_dev_pending_t what = {.op = op, .done = launch_done};
    dg_dev_pend(d, DG_DEV_SIDE_PROC, s, &what);
    return DAGGER_OK;
}

dagger_status_t dg_dev_proc_spawn(dg_dev_t *d)
{
    const dagger_handler_t h[] = {{d->all->msg.launch, on_dev_launch},
                                  {d->all->msg.poll, dg_dev_on_poll}};
    /* Unpinned: its turns run on whoever posts while it is idle. */
    dagger_actor_desc_t desc = {.name = d->label, .state = d, .handlers = h, .nhandlers = 2};
    dagger_status_t st = dg_act_spawn(d->ex->actors, &desc, &d->side[DG_DEV_SIDE_PROC].addr);
    if (st == DAGGER_OK)
        d->side[DG_DEV_SIDE_PROC].obj = dg_act_local(d->ex->actors, d->side[DG_DEV_SIDE_PROC].addr);
    return st;
}

void dg_devs_launch(void *ctx, int dev, dg_xop_t *op)
{
    dg_devs_t *ds = ctx;
    dg_exec_t *ex = ds->ex;
    dg_dev_t *d = &ds->dev[dev];
    dg_dev_launch_msg_t m = {op};
    dg_act_post_t p = {.to = d->side[DG_DEV_SIDE_PROC].addr, .type = ds->msg.launch,
                       .payload = &m, .size = sizeof(m), .what = "device launch"};
    int direct;
    dagger_status_t st = dg_act_post_local(ex->actors, d->side[DG_DEV_SIDE_PROC].obj, &p, &direct);
    if (st != DAGGER_OK) {
        char msg[300];
        snprintf(msg, sizeof(msg), "the processor actor of %s did not take its launch: %s",
                 d->label, dagger_error_detail());
        dg_exec_fail(ex, op->u.launch.task, st, msg);
        dg_exec_finish(ex, op);
    }
}
