/* The CPU processor actors of a rank: one per worker thread, pinned to it
 * and named after its CPU processor in the processor table ("cpu:<index>"),
 * plus one for the submitting thread ("cpu:submit"), which takes shared
 * work while it waits (exec.c). A dagger.proc.launch message runs a task.
 *
 * Their mailbox for launches is the rank's shared ready queue (and a queue
 * of its own per worker for tasks whose scope names that processor): an
 * idle worker takes the next launch from there and runs it as a turn of its
 * processor actor. One shared mailbox balances the load as the ready queue
 * did before: an idle processor takes the next task, whoever readied it. */
#include <stdio.h>

#include "actors/bound.h"
#include "actors/system.h"
#include "core/exec/exec.h"
#include "core/base/status_internal.h"
#include "devices/space_actor.h"

/* dagger.proc.launch: a ready task runs on this processor. */
static dagger_status_t on_launch(dagger_ctx_t *ctx)
{
    const dg_proc_launch_msg_t *m = dagger_ctx_payload(ctx);
    dg_exec_run(m->ex, m->op, m->worker);
    return DAGGER_OK;
}

static dagger_status_t spawn_proc(dg_exec_t *ex, int w, const char *name)
{
    const dagger_handler_t h[] = {{ex->msg.launch, on_launch}};
    /* The submitting thread's processor is not pinned: that thread is no
     * worker, and it runs the actor's turns itself (dg_act_post). */
    dagger_actor_desc_t d = {.name = name, .state = ex, .handlers = h, .nhandlers = 1,
                             .pin = w < ex->nworkers, .worker = w < ex->nworkers ? w : 0};
    dagger_actor_addr_t addr;
    dagger_status_t st = dg_act_spawn(ex->actors, &d, &addr);
    if (st == DAGGER_OK)
        st = dg_act_prepare(ex->actors, addr, ex->msg.launch, &ex->proc[w]);
    if (st == DAGGER_OK && w < ex->nworkers)
        dg_act_bound_pinned(ex->actors, ex->proc[w].actor, &ex->proc_turn[w]);
    return st;
}

dagger_status_t dg_host_procs_start(dg_exec_t *ex)
{
    for (int w = 0; w <= ex->nworkers; w++) {
        char name[32];
        if (w < ex->nworkers)
            snprintf(name, sizeof(name), "cpu:%d", w);
        else
            snprintf(name, sizeof(name), "cpu:submit");
        dagger_status_t st = spawn_proc(ex, w, name);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}
