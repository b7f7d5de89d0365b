/* Bound actors: a thread that is no worker (the submitting thread) holds an
 * unpinned local actor across many turns, so that a turn costs no claim,
 * no hand-back and no context set-up: the context lives in the binding.
 *
 * dg_act_bind claims a (its `scheduled` flag and a `refs`, as a direct turn
 * does) and fills b; 0 when a is pinned, not running or busy on another
 * thread. While bound, only the holding thread runs a's turns:
 * dg_act_run_bound handles the caller's message m (kept by the caller, as
 * in dg_act_run_borrowed; handler fn) now, after any mail other threads
 * posted meanwhile (dg_act_post queues it behind the holder, the only one
 * that handles it). It returns 0 when a is not running (stopped) or this
 * thread is inside a's turn already; the caller then unbinds (or reports).
 * dg_act_unbind handles the mail left and a requested stop, then hands a
 * back; mail posted during the hand-back is handled by the caller too (as
 * after a direct turn). Whoever unbinds must be the only thread using b
 * (the holder, or a thread that took the binding over from an idle holder
 * by its own agreement, core/runtime/planner.c). A bound actor must be unbound
 * before it is joined. */
#ifndef DG_ACT_BOUND_H
#define DG_ACT_BOUND_H

#include "actors/ctx.h"
#include "actors/system.h"
#include "core/base/common.h"
#include "core/base/spmd_caller.h"
#include "core/trace/trace.h"

typedef struct dg_act_bound {
    dagger_ctx_t ctx; /* the turns' context: the actor, no worker */
} dg_act_bound_t;

int dg_act_bind(dg_act_system_t *sys, struct dg_actor *a, dg_act_bound_t *b);
/* The same context for an actor pinned to a worker, which is bound to that
 * worker for good (no claim: no other thread ever runs it); its turns run
 * through dg_act_run_bound on that worker only. */
void dg_act_bound_pinned(dg_act_system_t *sys, struct dg_actor *a, dg_act_bound_t *b);
void dg_act_unbind(dg_act_bound_t *b);

/* The paths off the fast one: mail waiting, tracing, a stopped actor, a
 * nested call; and a handler's failure (counted and logged). */
int dg_act_run_bound_slow(dg_act_bound_t *b, dg_msg_t *m, dagger_handler_fn fn);
void dg_act_bound_failed(dg_act_bound_t *b, dagger_status_t st);

static inline __attribute__((always_inline)) int dg_act_run_bound(dg_act_bound_t *b, dg_msg_t *m, dagger_handler_fn fn)
{
    dagger_ctx_t *ctx = &b->ctx;
    dg_actor_t *a = ctx->actor;
    dagger_ctx_t *outer = dg_act_tls.ctx;
    if (DG_UNLIKELY((outer && outer->actor == a) || !dg_mpsc_is_empty(&a->mbox) ||
                    DG_TRACE_ON() ||
                    atomic_load_explicit(&a->state, memory_order_relaxed) != DG_ACTOR_RUNNING))
        return dg_act_run_bound_slow(b, m, fn);
    /* A turn nested in one of the same binding (a task's codelet runs with
     * no context, and may wait on work this thread runs) restores it. */
    dg_msg_t *nested = ctx->msg;
    dg_act_tls.ctx = ctx;
    ctx->msg = m;
    ctx->replied = 0;
    int caller = dg_caller_enter(DG_CALLER_HANDLER);
    dagger_status_t st = fn(ctx);
    dg_caller_restore(caller);
    dg_count(&a->handled);
    if (DG_UNLIKELY(st != DAGGER_OK))
        dg_act_bound_failed(b, st);
    ctx->msg = nested;
    dg_act_tls.ctx = outer;
    return 1;
}

#endif
