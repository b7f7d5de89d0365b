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
 * dg_tasks_create and stops in dg_tasks_destroy, after the workers joined
 * (core/runtime/trace_session.h). This layer sits under the actor kernel, so
 * the hooks here take plain values; the executor's hooks, which read its ops,
 * are core/exec/exec_trace.h. */
#ifndef DG_TRACE_TRACE_H
#define DG_TRACE_TRACE_H

#include <dagger/status.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/common.h"
#include "core/trace/format.h"

#ifdef DG_TRACE_ENABLED
extern _Atomic int dg_trace_active;
#define DG_TRACE_ON() DG_UNLIKELY(atomic_load_explicit(&dg_trace_active, memory_order_relaxed))
#else
#define DG_TRACE_ON() 0
#endif

/* The recorder's clock (CLOCK_MONOTONIC, ns). */
uint64_t dg_trace_now(void);
/* The time now when tracing is on, else 0: the start of a span a hook ends. */
#define DG_TRACE_T0() (DG_TRACE_ON() ? dg_trace_now() : 0)

/* ---- hooks ---- */

void dg_trace_codelet(uint32_t id, const char *name);
/* A phase from t0 (0: an instant) to now; returns now, the next phase's t0. */
uint64_t dg_trace_phase(dg_trf_phase_t phase, uint64_t region, uint64_t t0, int status);
void dg_trace_check(uint32_t kind, uint64_t task, uint32_t codelet, uint64_t hash, uint64_t t0,
                    int status);

void dg_trace_mem(dg_trf_mem_kind_t kind, uint64_t chunk, uint32_t space, size_t bytes, int home);

/* Worker idle loop: it found nothing to do /
 * it found work again. */
void dg_trace_worker_idle(int worker);
void dg_trace_worker_busy(int ran_actor);
/* An actor handles a message: one MSG event per message, so dagger-trace
 * counts them by type and actor (the sender's rank and actor id: the
 * message header's "from"). */
void dg_trace_msg(uint32_t actor, uint32_t type, int32_t from_rank, uint32_t from_id,
                  uint32_t size);
/* A name for the trace (kind DG_TRE_ACTOR_NAME or DG_TRE_TYPE_NAME): an actor
 * was spawned or a message type registered while recording. */
void dg_trace_named(uint32_t kind, uint32_t id, const char *name);

#endif
