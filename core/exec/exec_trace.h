/* The executor's trace hooks (core/exec/exec_trace.c, exec_hang_trace.c):
 * they read the executor's ops, so they live above the recorder
 * (core/trace). Behind DG_TRACE_ON() like every hook. */
#ifndef DG_EXEC_EXEC_TRACE_H
#define DG_EXEC_EXEC_TRACE_H

#include <stddef.h>
#include <stdint.h>

struct dg_exec;
struct dg_xop;
struct dg_plan_op;

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

/* Hang dump (dg_exec_dump): begin records the unfinished ops and the running
 * tasks, rv each receive that waits or data that came early, end writes the
 * dump to the file at once (the process may never end normally). */
void dg_trace_hang_begin(const struct dg_exec *ex, const char *why);
void dg_trace_hang_rv(int waiting, uint64_t tag, int peer, uint64_t chunk, uint64_t bytes);
void dg_trace_hang_end(void);

#endif
