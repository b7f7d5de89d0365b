/* Recording a run (DAGGER_TRACE=dir): starting and stopping the recorder
 * with the task runtime, and the planner's per-task callback. Collective:
 * it opens every rank's file and estimates the clocks' offsets with the
 * transport's collectives (core/runtime/trace_start.c). */
#ifndef DG_RUNTIME_TRACE_SESSION_H
#define DG_RUNTIME_TRACE_SESSION_H

#include <dagger/status.h>

struct dagger_runtime;
struct dg_tasks;
struct dg_plan_task_info;

/* Collective when DAGGER_TRACE is set (every rank must have it set): creates
 * the directory and this rank's file, estimates the clock offsets between
 * ranks, writes job.meta (rank 0). An unwritable directory on any rank is
 * DAGGER_ERR_CONFIG on every rank. Does nothing when DAGGER_TRACE is empty.
 * The hooks stay off until dg_trace_enable, once nothing can fail. */
dagger_status_t dg_trace_start(struct dg_tasks *t);
void dg_trace_enable(struct dg_tasks *t);
/* Writes every thread's buffer and the end record, closes the file. Call
 * after the worker threads have stopped; a no-op for a runtime that does
 * not record. */
void dg_trace_stop(struct dg_tasks *t);
/* The planner's on_task callback while recording (ctx = the dg_tasks_t). */
void dg_trace_on_task(void *ctx, const struct dg_plan_task_info *info);
/* dg_trace_on_task when this runtime will record, else NULL: the planner
 * works out logical dependencies only for a callback that wants them. */
typedef void (*dg_trace_task_fn)(void *ctx, const struct dg_plan_task_info *info);
dg_trace_task_fn dg_trace_task_hook(const struct dagger_runtime *rt);
/* Before dg_plan_submit: the planner's time for the task ends in on_task. */
void dg_trace_plan_begin(void);

#endif
