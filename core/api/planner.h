/* The planner actor of a rank ("planner"): the public calls that change
 * what is planned (chunk creation and free, codelet registration, region
 * begin and end, task submission) reach it as typed messages
 * (dagger.plan.*), and its handlers run the pure planner library
 * (core/plan), whose emitted ops go on, through the executor, as messages
 * to the processor and memory-space actors.
 *
 * Its turns run on the submitting thread (a borrowed turn: the message
 * lives on the caller's stack, so a submission costs no allocation and no
 * thread hop) while it is idle, which it is unless another thread submits
 * at the same time; then the message waits in its mailbox and the caller
 * waits for the reply slot. A handler may wait for room in the window of
 * ops in flight (DAGGER_TASK_WINDOW): that is the back-pressure, and why
 * its turns run on the submitting thread. Each call returns the planner's
 * status with its detail, as the inline calls did. */
#ifndef DG_API_PLANNER_H
#define DG_API_PLANNER_H

#include "core/api/tasks.h"

/* Registers the dagger.plan.* types and spawns the planner actor. */
dagger_status_t dg_planner_start(dg_tasks_t *t);

dagger_status_t dg_planner_chunk_create(dg_tasks_t *t, const dg_plan_chunk_desc_t *d,
                                        uint64_t *id);
dagger_status_t dg_planner_chunk_free(dg_tasks_t *t, uint64_t id);
dagger_status_t dg_planner_codelet(dg_tasks_t *t, const dg_plan_codelet_desc_t *d, uint32_t *id);
dagger_status_t dg_planner_region_begin(dg_tasks_t *t, const dg_plan_scope_t *scope);
dagger_status_t dg_planner_submit(dg_tasks_t *t, const dg_plan_task_desc_t *d,
                                  dg_plan_submitted_t *sub);
dagger_status_t dg_planner_region_end(dg_tasks_t *t);

#endif
