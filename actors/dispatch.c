/* One actor's turn on a worker (see dispatch.h and actor.h). */
#include "actors/dispatch.h"

#include <sched.h>

#include "actors/bound.h"
#include "actors/clock.h"
#include "actors/ctx.h"
#include "actors/send.h"
#include "actors/system_impl.h"
#include "core/base/log.h"
#include "core/base/spmd_caller.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"

/* A message the stopped actor will never handle. */
static void drop(dg_act_system_t *sys, dg_actor_t *a, dg_msg_t *m)
{
    atomic_fetch_add_explicit(&a->dropped, 1, memory_order_relaxed);
    if (m->hdr.flags & DG_MSG_REQUEST) {
        dg_error(DAGGER_ERR_ACTOR_STOPPED, "actor '%s' (%d:%u) was stopped before handling the request",
                 a->name, sys->rank, a->id);
        dg_act_fail_request(sys, m, DAGGER_ERR_ACTOR_STOPPED, dagger_error_detail());
    }
    dg_msg_free(m);
}

static void report_failure(dg_act_system_t *sys, dagger_ctx_t *ctx, dagger_status_t st)
{
    dg_actor_t *a = ctx->actor;
    const dg_msg_t *m = ctx->msg;
    uint64_t n = atomic_load_explicit(&a->failed, memory_order_relaxed);
    char detail[512];
    snprintf(detail, sizeof(detail), "handler of '%s' in actor '%s' (%d:%u) returned %s: %s",
             dg_msgtypes_name(&sys->types, m->hdr.type), a->name, sys->rank, a->id,
             dagger_strerror(st), dagger_error_detail());
    if (dg_act_log_sampled(n))
        dg_log(DG_LOG_WARN, "%s (%llu failures so far)", detail, (unsigned long long)n);
    if (!ctx->replied)
        dg_act_fail_request(sys, m, st, detail);
}

/* The handler of m in ctx's actor, counted and traced; m stays the caller's. */
static void handle_with(dg_act_system_t *sys, dagger_ctx_t *ctx, dg_msg_t *m, dagger_handler_fn fn)
{
    dg_actor_t *a = ctx->actor;
    ctx->msg = m;
    ctx->replied = 0;
    if (DG_TRACE_ON())
        dg_trace_msg(a->id, m->hdr.type, m->hdr.from.rank, m->hdr.from.id, m->hdr.size);
    int caller = dg_caller_enter(DG_CALLER_HANDLER); /* SPMD calls refuse to run here */
    dagger_status_t st = fn(ctx);
    dg_caller_restore(caller);
    dg_count(&a->handled);
    if (DG_UNLIKELY(st != DAGGER_OK)) {
        dg_count(&a->failed);
        report_failure(sys, ctx, st);
    }
    ctx->msg = NULL;
}

static void handle(dg_act_system_t *sys, dagger_ctx_t *ctx, dg_msg_t *m)
{
    dagger_handler_fn fn = dg_actor_handler(ctx->actor, m->hdr.type);
    DG_ASSERT(fn); /* local sends and deliveries check for a handler */
    handle_with(sys, ctx, m, fn);
    dg_msg_free(m);
}

/* The stop requested by dg_act_stop: drop what is queued, run on_stop, then
 * tell joiners. Messages that slip in later are dropped by later turns. */
static void finish_stop(dg_act_system_t *sys, dagger_ctx_t *ctx)
{
    dg_actor_t *a = ctx->actor;
    dg_mpsc_node_t *n;
    while (dg_mpsc_pop(&a->mbox, &n) == DG_MPSC_ITEM)
        drop(sys, a, DG_CONTAINER_OF(n, dg_msg_t, link));
    if (a->on_stop) {
        ctx->msg = NULL;
        int caller = dg_caller_enter(DG_CALLER_HANDLER);
        a->on_stop(ctx);
        dg_caller_restore(caller);
    }
    pthread_mutex_lock(&sys->life_lock);
    atomic_store_explicit(&a->state, DG_ACTOR_STOPPED, memory_order_seq_cst);
    pthread_cond_broadcast(&sys->life_cond);
    if (a->join_helper) /* a worker joining from inside a task */
        dg_act_worker_help_wake(a->join_helper);
    pthread_mutex_unlock(&sys->life_lock);
}

/* One message of a turn: handled while the actor runs, dropped once it
 * was asked to stop. */
static void handle_or_drop(dg_act_system_t *sys, dagger_ctx_t *ctx, dg_msg_t *m)
{
    if (DG_LIKELY(atomic_load_explicit(&ctx->actor->state, memory_order_acquire) ==
                  DG_ACTOR_RUNNING))
        handle(sys, ctx, m);
    else
        drop(sys, ctx->actor, m);
}

/* The end of a turn: the stop, when one was requested. */
static void stop_if_asked(dg_act_system_t *sys, dagger_ctx_t *ctx)
{
    if (atomic_load_explicit(&ctx->actor->state, memory_order_acquire) == DG_ACTOR_STOPPING)
        finish_stop(sys, ctx);
}

/* Hands the actor back: clear `scheduled`, then look again, because a sender
 * that found it still set relied on us to notice its message (or a stop).
 * held: the turn was kept alive by a registry hold instead of a `refs`. */
static void release(dg_act_system_t *sys, dg_actor_t *a, int producer_mid_push, dg_reg_slot_t *held)
{
    atomic_store_explicit(&a->scheduled, 0, memory_order_seq_cst);
    int more = !dg_mpsc_is_empty(&a->mbox) ||
               atomic_load_explicit(&a->state, memory_order_seq_cst) == DG_ACTOR_STOPPING;
    if (more && atomic_exchange_explicit(&a->scheduled, 1, memory_order_seq_cst) == 0) {
        if (producer_mid_push)
            sched_yield(); /* it may be waiting for this core to finish its push */
        if (held) /* the queue needs a reference of its own */
            atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
        dg_act_schedule(sys, a); /* our reference moves to the queue */
    } else if (!held) {
        atomic_fetch_sub_explicit(&a->refs, 1, memory_order_release); /* last touch */
    }
    if (held)
        dg_registry_release(held); /* last touch */
}

/* The mailbox ran dry: 1 if a message arrived within DG_ACT_LINGER_NS while
 * the worker had nothing else to do. */
static int linger(dg_act_system_t *sys, dg_act_worker_t *w, dg_actor_t *a)
{
    if (atomic_load_explicit(&a->state, memory_order_relaxed) != DG_ACTOR_RUNNING ||
        w->polls || dg_act_worker_has_work(sys, w))
        return 0;
    uint64_t until = dg_now_ns() + DG_ACT_LINGER_NS;
    do {
        for (int i = 0; i < 16; i++) {
            if (!dg_mpsc_is_empty(&a->mbox))
                return 1;
            dg_cpu_relax();
        }
    } while (dg_now_ns() < until);
    return 0;
}

void dg_act_run_actor(dg_act_system_t *sys, dg_act_worker_t *w, dg_actor_t *a,
                      const dg_act_turn_t *turn)
{
    dg_msg_t *first = turn->first;
    dagger_ctx_t ctx = {.sys = sys, .actor = a, .msg = NULL, .worker = w->index, .replied = 0};
    dg_act_tls.ctx = &ctx;
    int busy = 0;
    for (int i = 0; i < DG_ACT_BATCH; i++) {
        dg_msg_t *m = first;
        first = NULL;
        if (!m) {
            dg_mpsc_node_t *n;
            dg_mpsc_pop_t r = dg_mpsc_pop(&a->mbox, &n);
            if (r == DG_MPSC_EMPTY && linger(sys, w, a))
                r = dg_mpsc_pop(&a->mbox, &n);
            if (r != DG_MPSC_ITEM) {
                busy = r == DG_MPSC_BUSY;
                break;
            }
            m = DG_CONTAINER_OF(n, dg_msg_t, link);
        }
        handle_or_drop(sys, &ctx, m);
    }
    stop_if_asked(sys, &ctx);
    dg_act_tls.ctx = NULL;
    release(sys, a, busy, turn->held);
}

/* A direct turn's hand-back: like release, but mail that arrived meanwhile
 * is handled by this thread (it claims the actor again) instead of queueing
 * the actor for a worker, so a posted message never waits for a worker's
 * run queue. Returns 1 when the actor was claimed again. */
static int release_direct(dg_act_system_t *sys, dg_actor_t *a)
{
    (void)sys;
    atomic_store_explicit(&a->scheduled, 0, memory_order_seq_cst);
    int more = !dg_mpsc_is_empty(&a->mbox) ||
               atomic_load_explicit(&a->state, memory_order_seq_cst) == DG_ACTOR_STOPPING;
    if (more && atomic_exchange_explicit(&a->scheduled, 1, memory_order_seq_cst) == 0)
        return 1;
    atomic_fetch_sub_explicit(&a->refs, 1, memory_order_release); /* last touch */
    return 0;
}

/* Every message in the mailbox of ctx's actor, which this thread holds. */
static void drain(dg_act_system_t *sys, dagger_ctx_t *ctx)
{
    for (;;) {
        dg_mpsc_node_t *n;
        dg_mpsc_pop_t r = dg_mpsc_pop(&ctx->actor->mbox, &n);
        if (r == DG_MPSC_BUSY) { /* a producer is mid-push: its message is next */
            dg_cpu_relax();
            continue;
        }
        if (r != DG_MPSC_ITEM)
            return;
        handle_or_drop(sys, ctx, DG_CONTAINER_OF(n, dg_msg_t, link));
    }
}

/* The direct turn's loop; first (may be NULL) is handled first, and not
 * freed when kept_fn is its handler (a borrowed message). */
static void run_direct(dg_act_system_t *sys, dg_actor_t *a, dg_msg_t *first,
                       dagger_handler_fn kept_fn)
{
    dagger_ctx_t *outer = dg_act_tls.ctx; /* a handler may post to another actor */
    dagger_ctx_t ctx = {.sys = sys, .actor = a, .msg = NULL, .worker = dg_act_tls_worker(sys),
                        .replied = 0};
    dg_act_tls.ctx = &ctx;
    if (first && kept_fn)
        handle_with(sys, &ctx, first, kept_fn); /* the caller checked that a runs */
    else if (first)
        handle_or_drop(sys, &ctx, first);
    do {
        drain(sys, &ctx);
        stop_if_asked(sys, &ctx);
    } while (release_direct(sys, a));
    dg_act_tls.ctx = outer;
}

void dg_act_run_direct(dg_act_system_t *sys, dg_actor_t *a, dg_msg_t *m)
{
    run_direct(sys, a, m, NULL);
}

int dg_act_claim(dg_act_system_t *sys, dg_actor_t *a)
{
    if (a->pinned && a->worker != dg_act_tls_worker(sys))
        return 0;
    int idle = 0;
    if (atomic_load_explicit(&a->scheduled, memory_order_seq_cst) != 0 ||
        !atomic_compare_exchange_strong_explicit(&a->scheduled, &idle, 1, memory_order_seq_cst,
                                                 memory_order_seq_cst))
        return 0;
    atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
    return 1;
}

/* A borrowed turn (see dg_act_run_borrowed) with the handler known. */
static int run_kept(dg_act_system_t *sys, dg_actor_t *a, dg_msg_t *m, dagger_handler_fn fn)
{
    dg_act_tls_t *tls = &dg_act_tls;
    dagger_ctx_t *outer = tls->ctx;
    if (DG_UNLIKELY(atomic_load_explicit(&a->state, memory_order_acquire) != DG_ACTOR_RUNNING ||
                    (outer && outer->actor == a) || !fn))
        return 0;
    if (DG_LIKELY(a->pinned)) {
        /* Only the worker an actor is pinned to ever runs it: that worker
         * needs no claim, only not to be inside a's turn already. */
        if (tls->sys != sys || a->worker != tls->worker)
            return 0;
        dagger_ctx_t ctx = {.sys = sys, .actor = a, .msg = NULL, .worker = a->worker,
                            .replied = 0};
        tls->ctx = &ctx;
        handle_with(sys, &ctx, m, fn);
        tls->ctx = outer;
        return 1;
    }
    /* Claimed like a direct turn; mail already waiting goes first, so the
     * caller sends a copy behind it instead. */
    if (!dg_act_claim(sys, a))
        return 0;
    int clear = dg_mpsc_is_empty(&a->mbox);
    run_direct(sys, a, clear ? m : NULL, fn);
    return clear;
}

int dg_act_run_borrowed(dg_act_system_t *sys, dg_actor_t *a, dg_msg_t *m)
{
    return run_kept(sys, a, m, dg_actor_handler(a, m->hdr.type));
}

dagger_status_t dg_act_prepare(dg_act_system_t *sys, dagger_actor_addr_t to, uint32_t type,
                               dg_act_prepared_t *out)
{
    dg_actor_t *a = dg_act_local(sys, to);
    dagger_handler_fn fn = a ? dg_actor_handler(a, type) : NULL;
    if (!fn)
        return dg_error(DAGGER_ERR_NO_SUCH_ACTOR, "actor %d:%u has no handler for message type '%s'",
                        to.rank, to.id, dg_msgtypes_name(&sys->types, type));
    *out = (dg_act_prepared_t){.actor = a, .fn = fn, .to = to, .type = type};
    return DAGGER_OK;
}

int dg_act_run_prepared(dg_act_system_t *sys, const dg_act_prepared_t *p, dg_msg_t *m)
{
    return run_kept(sys, p->actor, m, p->fn);
}

/* ------------------------------------------------------------ bound turns */

int dg_act_bind(dg_act_system_t *sys, dg_actor_t *a, dg_act_bound_t *b)
{
    if (a->pinned || atomic_load_explicit(&a->state, memory_order_acquire) != DG_ACTOR_RUNNING ||
        !dg_act_claim(sys, a))
        return 0;
    b->ctx = (dagger_ctx_t){.sys = sys, .actor = a, .msg = NULL, .worker = -1, .replied = 0};
    return 1;
}

void dg_act_bound_pinned(dg_act_system_t *sys, dg_actor_t *a, dg_act_bound_t *b)
{
    b->ctx = (dagger_ctx_t){.sys = sys, .actor = a, .msg = NULL, .worker = a->worker,
                            .replied = 0};
}

void dg_act_unbind(dg_act_bound_t *b)
{
    run_direct(b->ctx.sys, b->ctx.actor, NULL, NULL); /* mail that waited, a stop, the hand-back */
}

int dg_act_run_bound_slow(dg_act_bound_t *b, dg_msg_t *m, dagger_handler_fn fn)
{
    dagger_ctx_t *ctx = &b->ctx;
    dagger_ctx_t *outer = dg_act_tls.ctx;
    if (atomic_load_explicit(&ctx->actor->state, memory_order_acquire) != DG_ACTOR_RUNNING ||
        (outer && outer->actor == ctx->actor))
        return 0;
    dg_msg_t *nested = ctx->msg;
    dg_act_tls.ctx = ctx;
    drain(ctx->sys, ctx); /* another thread's mail goes first: it waited for this one */
    handle_with(ctx->sys, ctx, m, fn);
    ctx->msg = nested;
    dg_act_tls.ctx = outer;
    return 1;
}

void dg_act_bound_failed(dg_act_bound_t *b, dagger_status_t st)
{
    dg_count(&b->ctx.actor->failed);
    report_failure(b->ctx.sys, &b->ctx, st);
}
