/* The planner actor of a rank ("planner"): the public calls that change
 * what is planned (chunk creation and free, codelet registration, region
 * begin and end, task submission, a fetch's copy home, failure marks) reach
 * it as typed messages (dagger.plan.*), and its handlers run the pure
 * planner library (core/plan), whose ops leave the turn through the
 * executor's emit callback: ALLOC as a dagger.mem.alloc message, the others
 * into the processors' ready mailboxes or, once ready, as dagger.mem.*
 * messages (docs/design.md, section 6).
 *
 * Bound to the submitting thread: the thread that begins a region holds
 * the actor (dg_act_bind) until it ends it, so a submission is a turn run
 * on that thread with the message on its stack (header and a pointer to the
 * request): no claim, no allocation, no copy of the submission, no thread
 * hop. A call from another thread meanwhile (or any call outside a region)
 * is posted: it runs at once when the actor is idle, and otherwise waits in
 * the mailbox, which the holder drains before its next turn and when it
 * ends the region; the caller waits for the reply. Each call returns the
 * planner's status with its detail, as the inline calls did. A handler may
 * wait for room in the window of ops in flight (DAGGER_TASK_WINDOW): that
 * is the back-pressure, and why its turns run on the submitting thread. */
#ifndef DG_API_PLANNER_H
#define DG_API_PLANNER_H

#include "core/runtime/tasks.h"

/* Registers the dagger.plan.* types and spawns the planner actor. */
dagger_status_t dg_planner_start(dg_tasks_t *t);
/* Unbinds it when this thread holds it (finalize: the actors stop next). */
void dg_planner_unbind(dg_tasks_t *t);

dagger_status_t dg_planner_chunk_create(dg_tasks_t *t, const dg_plan_chunk_desc_t *d,
                                        uint64_t *id);
dagger_status_t dg_planner_chunk_free(dg_tasks_t *t, uint64_t id);
dagger_status_t dg_planner_codelet(dg_tasks_t *t, const dg_plan_codelet_desc_t *d, uint32_t *id);
/* Begins the region and binds the actor to the calling thread. */
dagger_status_t dg_planner_region_begin(dg_tasks_t *t, const dg_plan_scope_t *scope);
dagger_status_t dg_planner_submit(dg_tasks_t *t, const dg_plan_task_desc_t *d,
                                  dg_plan_submitted_t *sub);
/* Plans the region's end, then unbinds the actor (mail left is handled). */
dagger_status_t dg_planner_region_end(dg_tasks_t *t);
dagger_status_t dg_planner_sync_home(dg_tasks_t *t, uint64_t id);
void dg_planner_taint(dg_tasks_t *t, uint64_t first, uint32_t tag);

#endif
