/* A device's processor actor (named after the device: "test device 0",
 * "CUDA GPU 0"): a dagger.dev.launch message runs a task's implementation
 * for the device's kind on the actor's turn with one of its streams
 * current (dagger_task_stream), records an event after what the task
 * queued, and the task ends when a dagger.dev.poll turn sees the event
 * pass. A task with a priority above 0 runs on one of the urgent streams
 * (DAGGER_GPU_PRIORITY), which the device schedules first: the next panel
 * of a factorisation overtakes the trailing updates queued before it. The
 * test device kind runs the codelet's cpu implementation (its memory is
 * host-addressable).
 *
 * Chaining (DAGGER_GPU_CHAIN): once a task is queued, the tasks of the same
 * device that depend on it need not wait for the poll that sees its event
 * pass. They are released at once (dg_exec_release_early), and each is
 * queued, when the rest of its dependencies allow, behind the events of
 * those not finished by then (stream_wait): the device, not the host,
 * orders them. A task that reads a future is left to wait as usual (its
 * value is read on the host when it is queued). */
#include <stdio.h>
#include <stdlib.h>

#include "actors/system.h"
#include "core/base/alloc.h"
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

/* The events a chained task waits for (its dg_xlaunch_t.dev_waits): the
 * pending entries of the tasks it was released early by, each with its
 * generation then (a later one: that task has finished since). */
typedef struct dg_dev_waits {
    uint32_t n, cap;
    struct {
        dg_dev_pending_t *p;
        uint64_t gen;
    } w[];
} dg_dev_waits_t;

/* What a queued task offers the tasks that depend on it. */
typedef struct chain_from {
    dg_dev_t *d;
    dg_dev_pending_t *p;          /* its pending entry */
} chain_from_t;

/* dg_exec_release_early's take: succ is a task of the same device that
 * reads no future, and the wait for from's event is recorded in it. */
static int chain_take(void *arg, dg_xop_t *succ)
{
    const chain_from_t *f = arg;
    dg_xlaunch_t *l = &succ->u.launch;
    if (succ->kind != DG_PLAN_OP_LAUNCH || l->device < 0 || &f->d->all->dev[l->device] != f->d)
        return 0;
    for (uint32_t i = 0; i < l->nargs; i++)
        if (l->args[i].kind == DG_PLAN_ARG_FUTURE)
            return 0;
    dg_dev_waits_t *w = l->dev_waits;
    if (!w || w->n == w->cap) {
        uint32_t cap = w ? 2 * w->cap : 4;
        dg_dev_waits_t *g = dg_realloc(w, sizeof(*w) + cap * sizeof(w->w[0]));
        if (!g)
            return 0; /* it waits for the finish as usual */
        if (!w)
            g->n = 0;
        g->cap = cap;
        l->dev_waits = w = g;
    }
    w->w[w->n].p = f->p;
    w->w[w->n].gen = f->p->gen;
    w->n++;
    return 1;
}

/* Queues on s the waits of a chained task for the tasks it depends on that
 * have not finished (none for one on s itself: a stream keeps its order). */
static void chain_wait(dg_dev_t *d, dg_xlaunch_t *l, dg_dev_stream_t *s)
{
    dg_dev_waits_t *w = l->dev_waits;
    l->dev_waits = NULL;
    if (!w)
        return;
    atomic_fetch_add_explicit(&d->chained, 1, memory_order_relaxed);
    for (uint32_t i = 0; i < w->n; i++) {
        dg_dev_pending_t *p = w->w[i].p;
        if (p->gen != w->w[i].gen || p->stream == s)
            continue;
        atomic_fetch_add_explicit(&d->chain_waits, 1, memory_order_relaxed);
        if (d->be->stream_wait(s, p->ev) != DAGGER_OK) {
            char msg[300];
            snprintf(msg, sizeof(msg), "a task on %s of rank %d could not be queued behind the "
                     "one it depends on: %s", d->label, d->ex->rank, dagger_error_detail());
            dg_exec_fail(d->ex, l->task, DAGGER_ERR_SYSTEM, msg);
        }
    }
    free(w);
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
        free(op->u.launch.dev_waits);
        op->u.launch.dev_waits = NULL;
        dg_exec_finish(d->ex, op);
        return DAGGER_OK;
    }
    chain_wait(d, &op->u.launch, s);
    dg_exec_run_device(d->ex, op, plan_kind(d), d->be->stream_native(s), op->u.launch.proc,
                       dagger_ctx_worker(ctx));
    dg_dev_pending_t what = {.op = op, .done = launch_done};
    dg_dev_pending_t *p = dg_dev_pend(d, DG_DEV_SIDE_PROC, s, &what);
    if (p && d->all->chain) {
        chain_from_t f = {d, p};
        dg_exec_release_early(d->ex, op, chain_take, &f);
    }
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
        free(op->u.launch.dev_waits);
        op->u.launch.dev_waits = NULL;
        dg_exec_finish(ex, op);
    }
}
