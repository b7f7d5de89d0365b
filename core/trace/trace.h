/* Tracing (DAGGER_TRACE=dir): the recorder's API and the hooks the runtime
 * calls. docs/trace.md is the user's guide; format.h the file format.
 *
 * Every hook sits behind DG_TRACE_ON(), one relaxed load and a predictable
 * branch, so tracing costs nothing noticeable when off (and nothing at all
 * when built with -DDAGGER_TRACE=OFF). When on, each thread appends events
 * to a buffer of its own, without locks, and writes the buffer to its
 * rank's file as one block when it is full (the only lock: the file).
 *
 * The recorder is process-wide, not hung off the runtime handle, because a
 * hook must reach it from any thread (workers, the transport's callbacks)
 * with one load. One runtime at a time records; it starts in
 * dg_tasks_create and stops in dg_tasks_destroy, after the workers joined. */
#ifndef DG_TRACE_TRACE_H
#define DG_TRACE_TRACE_H

#include <dagger/status.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/common.h"
#include "core/trace/format.h"

struct dagger_runtime;
struct dg_tasks;
struct dg_exec;
struct dg_xop;
struct dg_plan_op;
struct dg_plan_task_info;

#ifdef DG_TRACE_ENABLED
/* Weak: the actor kernel (actors/worker.c) is also linked without this
 * layer, in its own tests, where the flag does not exist (address NULL). */
extern _Atomic int dg_trace_active __attribute__((weak));
#define DG_TRACE_ON() DG_UNLIKELY(atomic_load_explicit(&dg_trace_active, memory_order_relaxed))
#define DG_TRACE_WORKER_ON() (&dg_trace_active != NULL && DG_TRACE_ON())
#else
#define DG_TRACE_ON() 0
#define DG_TRACE_WORKER_ON() 0
#endif

/* The recorder's clock (CLOCK_MONOTONIC, ns). */
uint64_t dg_trace_now(void);
/* The time now when tracing is on, else 0: the start of a span a hook ends. */
#define DG_TRACE_T0() (DG_TRACE_ON() ? dg_trace_now() : 0)

/* ---- lifecycle (core/runtime/tasks.c) ---- */

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
/* 1 while t is the runtime being recorded. */
int dg_trace_records(const struct dg_tasks *t);

/* ---- hooks ---- */

void dg_trace_codelet(uint32_t id, const char *name);
/* Before dg_plan_submit: the planner's time for the task ends in on_task. */
void dg_trace_plan_begin(void);
/* A phase from t0 (0: an instant) to now; returns now, the next phase's t0. */
uint64_t dg_trace_phase(dg_trf_phase_t phase, uint64_t region, uint64_t t0, int status);
void dg_trace_check(uint32_t kind, uint64_t task, uint32_t codelet, uint64_t hash, uint64_t t0,
                    int status);

/* A worker runs a LAUNCH or COPY op: begin returns the start time. */
uint64_t dg_trace_run_begin(const struct dg_xop *op, int worker);
void dg_trace_run_end(const struct dg_exec *ex, const struct dg_xop *op, int worker, uint64_t t0);
/* The planner emitted an op of this rank (transfers are recorded). */
void dg_trace_emit(const struct dg_plan_op *p);
/* A SEND or RECV op became ready (its start). */
void dg_trace_xfer_start(const struct dg_xop *op);
/* Data of a transfer arrived from src. */
void dg_trace_xfer_arrive(uint64_t tag, int src, size_t bytes);
/* An op finished (transfers record their end). */
void dg_trace_finish(const struct dg_xop *op);
void dg_trace_mem(dg_trf_mem_kind_t kind, uint64_t chunk, uint32_t space, size_t bytes, int home);

/* Worker idle loop (behind DG_TRACE_WORKER_ON): it found nothing to do /
 * it found work again. Weak, like the flag. */
void dg_trace_worker_idle(int worker) __attribute__((weak));
void dg_trace_worker_busy(int ran_actor) __attribute__((weak));
/* An actor handles a message (behind DG_TRACE_WORKER_ON, weak): one MSG
 * event per message, so dagger-trace counts them by type and actor. */
struct dg_msg_hdr;
void dg_trace_msg(uint32_t actor, const struct dg_msg_hdr *h) __attribute__((weak));
/* A name for the trace (kind DG_TRE_ACTOR_NAME or DG_TRE_TYPE_NAME): an actor
 * was spawned or a message type registered while recording (weak). */
void dg_trace_named(uint32_t kind, uint32_t id, const char *name) __attribute__((weak));
/* Names every type and live actor of sys (when recording starts). */
struct dg_act_system;
void dg_trace_name_all(struct dg_act_system *sys);

/* Hang dump (dg_exec_dump): begin records the unfinished ops and the running
 * tasks, rv each receive that waits or data that came early, end writes the
 * dump to the file at once (the process may never end normally). */
void dg_trace_hang_begin(const struct dg_exec *ex, const char *why);
void dg_trace_hang_rv(int waiting, uint64_t tag, int peer, uint64_t chunk, uint64_t bytes);
void dg_trace_hang_end(void);

#endif
