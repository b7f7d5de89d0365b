/* The planner actor (see planner.h). */
#include "core/runtime/planner.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/bound.h"
#include "actors/msg.h"
#include "actors/msgtype.h"
#include "actors/system.h"
#include "core/base/alloc.h"
#include "core/base/asym_fence.h"
#include "core/runtime/runtime.h"
#include "core/base/status_internal.h"
#include "transport/coll.h"

/* The fast path's pieces, inlined into each public call so that a bound
 * turn is a handful of plain loads and stores around the planner's call. */
#define DG_HOT static inline __attribute__((always_inline))

enum {
    K_CHUNK_CREATE, K_CHUNK_FREE, K_CODELET, K_REGION_BEGIN, K_SUBMIT, K_REGION_END,
    K_SYNC_HOME, K_TAINT, K_N
};

/* A call and its reply slot, on the calling thread's stack; the message
 * carries only a pointer to it (it never leaves the rank). The detail and
 * `done` are written only for a posted call, whose caller waits for them. */
typedef struct dg_plan_req {
    const void *in;   /* the description (or scope) planned */
    void *out;        /* where the id or placement goes */
    uint64_t id;      /* chunk_free, sync_home: the chunk; taint: the first task */
    uint32_t tag;     /* taint */
    int posted;
    dagger_status_t status;
    _Atomic int done;
    char detail[512];
} dg_plan_req_t;

/* A bound turn's message, one per type with its header written once: only
 * the holder uses them, one turn at a time; a call writes the pointer. */
typedef union dg_plan_msg {
    dg_msg_t m;
    unsigned char bytes[sizeof(dg_msg_t) + sizeof(dg_plan_req_t *)];
} dg_plan_msg_t;

/* The binding. The holder sets in_call around each of its calls with
 * plain stores and a light fence; a thread whose posted call waits for a
 * holder that is not in a call (it may never call again: it waits for that
 * very thread, or exited) sets revoke, fences heavily and, when in_call is
 * still 0, takes the binding over and unbinds the actor (the asymmetric
 * Dekker protocol of core/base/asym_fence.h). A holder that sees revoke waits
 * until it clears, then finds itself unbound or still bound. */
typedef struct dg_planner {
    dg_act_system_t *sys;
    dg_act_prepared_t prep[K_N];   /* the actor and each type's handler */
    dg_act_bound_t bound;          /* the bound turns' context */
    dg_plan_msg_t msg[K_N];
    int asym;                      /* dg_fence_asym_ok() */
    _Atomic(const void *) holder;  /* the bound thread's token, or NULL */
    _Atomic int in_call;           /* written by the holder only */
    _Atomic int revoke;
    pthread_mutex_t revoke_lock;   /* one revoking thread at a time */
} dg_planner_t;

/* A thread's identity for the binding: the address of its own copy. */
static _Thread_local char holder_token DG_TLS_IE;

static const char *const type_names[K_N] = {
    "dagger.plan.chunk_create", "dagger.plan.chunk_free", "dagger.plan.codelet",
    "dagger.plan.region_begin", "dagger.plan.submit",     "dagger.plan.region_end",
    "dagger.plan.sync_home",    "dagger.plan.taint",
};

/* The reply: the status, and for a posted call its detail and `done` (the
 * last touch: the caller's stack frame may be gone right after). */
static dagger_status_t reply(dg_plan_req_t *r, dagger_status_t st)
{
    r->status = st;
    if (DG_UNLIKELY(r->posted)) {
        if (st != DAGGER_OK)
            snprintf(r->detail, sizeof(r->detail), "%s", dagger_error_detail());
        atomic_store_explicit(&r->done, 1, memory_order_release);
    }
    return DAGGER_OK;
}

/* The pure planner's call for a message kind. */
static dagger_status_t plan(dg_plan_t *p, int k, dg_plan_req_t *r)
{
    switch (k) {
    case K_CHUNK_CREATE: return dg_plan_chunk_create(p, r->in, r->out);
    case K_CHUNK_FREE: return dg_plan_chunk_free(p, r->id);
    case K_CODELET: return dg_plan_codelet_register(p, r->in, r->out);
    case K_REGION_BEGIN: return dg_plan_region_begin(p, r->in);
    case K_SUBMIT: return dg_plan_submit(p, r->in, r->out);
    case K_REGION_END: return dg_plan_region_end(p);
    case K_SYNC_HOME: return dg_plan_chunk_sync_home(p, r->id);
    default: dg_plan_taint(p, r->id, r->tag); return DAGGER_OK;
    }
}

/* dagger.plan.*: each calls the pure planner (the actor's state is the
 * rank's task runtime) and replies. A planned task's id and the plan's hash
 * after it go to the transport, whose probes compare them with other ranks'
 * (transport/coll_probe.c). */
DG_HOT dagger_status_t handle(dagger_ctx_t *ctx, int k)
{
    dg_plan_req_t *r;
    memcpy(&r, ctx->msg->payload, sizeof(r));
    dg_tasks_t *t = ctx->actor->user_state;
    dagger_status_t st = plan(t->plan, k, r);
    if (k == K_SUBMIT && st == DAGGER_OK && t->planned && r->out)
        dg_tx_note_planned(t->planned, ((const dg_plan_submitted_t *)r->out)->task,
                           dg_plan_shape_hash(t->plan));
    return reply(r, st);
}

static dagger_status_t on_chunk_create(dagger_ctx_t *ctx) { return handle(ctx, K_CHUNK_CREATE); }
static dagger_status_t on_chunk_free(dagger_ctx_t *ctx) { return handle(ctx, K_CHUNK_FREE); }
static dagger_status_t on_codelet(dagger_ctx_t *ctx) { return handle(ctx, K_CODELET); }
static dagger_status_t on_region_begin(dagger_ctx_t *ctx) { return handle(ctx, K_REGION_BEGIN); }
static dagger_status_t on_submit(dagger_ctx_t *ctx) { return handle(ctx, K_SUBMIT); }
static dagger_status_t on_region_end(dagger_ctx_t *ctx) { return handle(ctx, K_REGION_END); }
static dagger_status_t on_sync_home(dagger_ctx_t *ctx) { return handle(ctx, K_SYNC_HOME); }
static dagger_status_t on_taint(dagger_ctx_t *ctx) { return handle(ctx, K_TAINT); }

static const dagger_handler_fn handler_fns[K_N] = {
    on_chunk_create, on_chunk_free, on_codelet, on_region_begin,
    on_submit,       on_region_end, on_sync_home, on_taint,
};

dagger_status_t dg_planner_start(dg_tasks_t *t)
{
    dg_planner_t *pl = dg_calloc(1, sizeof(*pl));
    if (!pl)
        return dg_error(DAGGER_ERR_NO_MEMORY, "planner actor: out of memory");
    t->planner = pl;
    dg_act_system_t *sys = t->rt->actors;
    dagger_handler_t h[K_N];
    for (int k = 0; k < K_N; k++) {
        dagger_msg_type_desc_t d = {type_names[k], DAGGER_MSG_FIXED, sizeof(dg_plan_req_t *)};
        dagger_status_t st = dg_msgtypes_register(dg_act_system_types(sys), &d, &h[k].type);
        if (st != DAGGER_OK)
            return st;
        h[k].fn = handler_fns[k];
    }
    /* Unpinned: the submitting thread, which is no worker, binds it. */
    dagger_actor_desc_t d = {.name = "planner", .state = t, .handlers = h, .nhandlers = K_N};
    dagger_actor_addr_t addr;
    dagger_status_t st = dg_act_spawn(sys, &d, &addr);
    for (int k = 0; k < K_N && st == DAGGER_OK; k++) {
        st = dg_act_prepare(sys, addr, h[k].type, &pl->prep[k]);
        dg_msg_hdr_set(&pl->msg[k].m.hdr, (dagger_actor_addr_t){t->rank, 0}, addr, h[k].type,
                       sizeof(dg_plan_req_t *));
    }
    if (st != DAGGER_OK)
        return st;
    pl->sys = sys;
    pl->asym = dg_fence_asym_ok();
    pthread_mutex_init(&pl->revoke_lock, NULL);
    t->exec->planner = pl->prep[0].actor;
    return DAGGER_OK;
}

static int bound_here(const dg_planner_t *pl)
{
    return atomic_load_explicit(&pl->holder, memory_order_relaxed) == &holder_token;
}

/* The holder's side: 1 when this thread still holds the actor and is now
 * in a call (no thread revokes it until leave); 0 when it holds it no more. */
static int enter(dg_planner_t *pl)
{
    for (;;) {
        atomic_store_explicit(&pl->in_call, 1, memory_order_relaxed);
        dg_fence_light(pl->asym);
        if (DG_LIKELY(!atomic_load_explicit(&pl->revoke, memory_order_acquire)))
            return bound_here(pl);
        atomic_store_explicit(&pl->in_call, 0, memory_order_release);
        while (atomic_load_explicit(&pl->revoke, memory_order_acquire))
            sched_yield(); /* a waiting thread decides; then look again */
        if (!bound_here(pl))
            return 0;
    }
}

static void leave(dg_planner_t *pl)
{
    atomic_store_explicit(&pl->in_call, 0, memory_order_release);
}

/* Hands the actor back (mail left is handled first). The caller holds the
 * binding and cannot lose it meanwhile (it is in a call, or revoked it). */
static __attribute__((noinline)) void hand_back(dg_planner_t *pl)
{
    atomic_store_explicit(&pl->holder, NULL, memory_order_relaxed);
    dg_act_unbind(&pl->bound);
}

static void unbind(dg_tasks_t *t)
{
    dg_planner_t *pl = t->planner;
    if (!pl || !bound_here(pl) || !enter(pl))
        return;
    hand_back(pl);
    leave(pl);
}

void dg_planner_unbind(dg_tasks_t *t)
{
    unbind(t);
}

/* The waiting side: a holder that is not in a call loses the actor, and
 * this thread hands it back (handling the mail, its own call's too). */
static void revoke_idle_holder(dg_planner_t *pl)
{
    pthread_mutex_lock(&pl->revoke_lock);
    atomic_store_explicit(&pl->revoke, 1, memory_order_seq_cst);
    dg_fence_heavy(pl->asym);
    if (atomic_load_explicit(&pl->holder, memory_order_seq_cst) &&
        !atomic_load_explicit(&pl->in_call, memory_order_seq_cst))
        hand_back(pl);
    atomic_store_explicit(&pl->revoke, 0, memory_order_release);
    pthread_mutex_unlock(&pl->revoke_lock);
}

/* Waits for a posted call's reply; a stopped planner never replies. A
 * holder that keeps it waiting loses the actor (it handles its mailbox
 * before each of its calls, but it may not call again). */
static dagger_status_t wait_reply(dg_planner_t *pl, dg_plan_req_t *r, int k)
{
    const dg_actor_t *a = pl->prep[k].actor;
    for (unsigned spins = 1; !atomic_load_explicit(&r->done, memory_order_acquire); spins++) {
        if (spins % 64 == 0 && atomic_load_explicit(&pl->holder, memory_order_relaxed))
            revoke_idle_holder(pl);
        if (atomic_load_explicit(&a->state, memory_order_acquire) == DG_ACTOR_STOPPED &&
            !atomic_load_explicit(&r->done, memory_order_acquire))
            return dg_error(DAGGER_ERR_ACTOR_STOPPED, "%s: the planner actor was stopped "
                            "(the runtime is finalizing)", type_names[k]);
        sched_yield(); /* the thread that holds the planner handles it */
    }
    if (r->status != DAGGER_OK)
        return dg_error(r->status, "%s", r->detail);
    return DAGGER_OK;
}

/* An ordinary message: a direct turn when the actor is idle, else it waits
 * in the mailbox for the thread that runs or holds it. */
static __attribute__((noinline)) dagger_status_t post(dg_planner_t *pl, int k,
                                                      dg_plan_req_t *r)
{
    r->posted = 1;
    atomic_init(&r->done, 0);
    dg_act_post_t p = {.to = pl->prep[k].to, .type = pl->prep[k].type, .payload = &r,
                       .size = sizeof(r), .what = type_names[k]};
    int direct;
    dagger_status_t st = dg_act_post(pl->sys, &p, &direct);
    if (st != DAGGER_OK)
        return st;
    return wait_reply(pl, r, k);
}

/* A bound turn for r on the holding thread, which is in a call: 1 when it
 * ran (the reply is in r); 0 when the actor stopped (now unbound). */
DG_HOT int run_bound(dg_planner_t *pl, int k, dg_plan_req_t *r)
{
    r->posted = 0;
    memcpy(pl->msg[k].m.payload, &r, sizeof(r));
    if (DG_LIKELY(dg_act_run_bound(&pl->bound, &pl->msg[k].m, handler_fns[k])))
        return 1;
    hand_back(pl);
    return 0;
}

/* Everything off the holder's fast path: a nested call, a revocation under
 * way, no binding, a stopped actor. */
static __attribute__((noinline)) dagger_status_t call_slow(dg_planner_t *pl, int k,
                                                           dg_plan_req_t *r)
{
    if (bound_here(pl)) {
        if (atomic_load_explicit(&pl->in_call, memory_order_relaxed))
            return dg_error(DAGGER_ERR_STATE, "%s: called from a task that the submitting "
                            "thread runs while it plans (tasks may not submit)", type_names[k]);
        if (enter(pl)) {
            int ran = run_bound(pl, k, r);
            leave(pl);
            if (ran)
                return r->status;
        }
    }
    return post(pl, k, r);
}

/* A call to the planner actor: on the holding thread, outside any other
 * call and with no revocation under way, a bound turn (a few plain loads
 * and stores around the handler); everything else in call_slow. The detail
 * of a bound turn's error is this thread's already. */
DG_HOT dagger_status_t call(dg_tasks_t *t, int k, dg_plan_req_t *r)
{
    dg_planner_t *pl = t->planner;
    if (DG_LIKELY(bound_here(pl) && !atomic_load_explicit(&pl->in_call, memory_order_relaxed))) {
        atomic_store_explicit(&pl->in_call, 1, memory_order_relaxed);
        dg_fence_light(pl->asym);
        if (DG_LIKELY(!atomic_load_explicit(&pl->revoke, memory_order_acquire) &&
                      bound_here(pl))) {
            int ran = run_bound(pl, k, r);
            leave(pl);
            if (DG_LIKELY(ran))
                return r->status;
            return post(pl, k, r);
        }
        leave(pl);
    }
    return call_slow(pl, k, r);
}

DG_HOT dagger_status_t ask(dg_tasks_t *t, int k, const void *in, void *out, uint64_t id)
{
    dg_plan_req_t r;
    r.in = in;
    r.out = out;
    r.id = id;
    return call(t, k, &r);
}

dagger_status_t dg_planner_chunk_create(dg_tasks_t *t, const dg_plan_chunk_desc_t *d,
                                        uint64_t *id)
{
    return ask(t, K_CHUNK_CREATE, d, id, 0);
}

dagger_status_t dg_planner_chunk_free(dg_tasks_t *t, uint64_t id)
{
    return ask(t, K_CHUNK_FREE, NULL, NULL, id);
}

dagger_status_t dg_planner_codelet(dg_tasks_t *t, const dg_plan_codelet_desc_t *d, uint32_t *id)
{
    return ask(t, K_CODELET, d, id, 0);
}

dagger_status_t dg_planner_region_begin(dg_tasks_t *t, const dg_plan_scope_t *scope)
{
    dagger_status_t st = ask(t, K_REGION_BEGIN, scope, NULL, 0);
    dg_planner_t *pl = t->planner;
    /* The region's submissions come from this thread: bind the actor to it
     * (when another thread holds or runs it, calls stay posts). */
    if (st == DAGGER_OK && !atomic_load_explicit(&pl->holder, memory_order_relaxed) &&
        dg_act_bind(pl->sys, pl->prep[0].actor, &pl->bound))
        atomic_store_explicit(&pl->holder, &holder_token, memory_order_release); /* b's context */
    return st;
}

dagger_status_t dg_planner_submit(dg_tasks_t *t, const dg_plan_task_desc_t *d,
                                  dg_plan_submitted_t *sub)
{
    return ask(t, K_SUBMIT, d, sub, 0);
}

dagger_status_t dg_planner_region_end(dg_tasks_t *t)
{
    dagger_status_t st = ask(t, K_REGION_END, NULL, NULL, 0);
    unbind(t);
    return st;
}

dagger_status_t dg_planner_sync_home(dg_tasks_t *t, uint64_t id)
{
    return ask(t, K_SYNC_HOME, NULL, NULL, id);
}

void dg_planner_taint(dg_tasks_t *t, uint64_t first, uint32_t tag)
{
    dg_plan_req_t r;
    r.id = first;
    r.tag = tag;
    call(t, K_TAINT, &r);
}
