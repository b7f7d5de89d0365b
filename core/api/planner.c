/* The planner actor (see planner.h). */
#include "core/api/planner.h"

#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "actors/msg.h"
#include "actors/msgtype.h"
#include "actors/system.h"
#include "core/alloc.h"
#include "core/runtime.h"
#include "core/status_internal.h"

enum { K_CHUNK_CREATE, K_CHUNK_FREE, K_CODELET, K_REGION_BEGIN, K_SUBMIT, K_REGION_END, K_N };

/* A submission and its reply slot, on the submitting thread's stack (not
 * cleared: detail is written only on an error); the message carries a
 * pointer to it (it never leaves the rank). */
typedef struct dg_plan_req {
    dg_tasks_t *t;
    const void *in;                   /* the description (or scope) planned */
    void *out;                        /* where the id or placement goes */
    uint64_t chunk;                   /* chunk_free */
    dagger_status_t status;
    _Atomic int done;
    char detail[512];
} dg_plan_req_t;

typedef struct dg_plan_msg {
    dg_plan_req_t *req;
} dg_plan_msg_t;

struct dg_planner {
    dagger_actor_addr_t addr;
    struct dg_actor *actor;
    uint32_t type[K_N];
};

static const char *const type_names[K_N] = {
    "dagger.plan.chunk_create", "dagger.plan.chunk_free", "dagger.plan.codelet",
    "dagger.plan.region_begin", "dagger.plan.submit",     "dagger.plan.region_end",
};

static dagger_status_t plan(int kind, dg_plan_req_t *r)
{
    dg_plan_t *p = r->t->plan;
    switch (kind) {
    case K_CHUNK_CREATE: return dg_plan_chunk_create(p, r->in, r->out);
    case K_CHUNK_FREE: return dg_plan_chunk_free(p, r->chunk);
    case K_CODELET: return dg_plan_codelet_register(p, r->in, r->out);
    case K_REGION_BEGIN: return dg_plan_region_begin(p, r->in);
    case K_SUBMIT: return dg_plan_submit(p, r->in, r->out);
    default: return dg_plan_region_end(p);
    }
}

/* Every dagger.plan.* handler: the planner call, then the reply slot. */
static dagger_status_t handle(dagger_ctx_t *ctx, int kind)
{
    dg_plan_req_t *r = ((const dg_plan_msg_t *)dagger_ctx_payload(ctx))->req;
    r->status = plan(kind, r);
    if (DG_UNLIKELY(r->status != DAGGER_OK))
        snprintf(r->detail, sizeof(r->detail), "%s", dagger_error_detail());
    atomic_store_explicit(&r->done, 1, memory_order_release);
    return DAGGER_OK;
}

static dagger_status_t on_chunk_create(dagger_ctx_t *ctx) { return handle(ctx, K_CHUNK_CREATE); }
static dagger_status_t on_chunk_free(dagger_ctx_t *ctx) { return handle(ctx, K_CHUNK_FREE); }
static dagger_status_t on_codelet(dagger_ctx_t *ctx) { return handle(ctx, K_CODELET); }
static dagger_status_t on_region_begin(dagger_ctx_t *ctx) { return handle(ctx, K_REGION_BEGIN); }
static dagger_status_t on_submit(dagger_ctx_t *ctx) { return handle(ctx, K_SUBMIT); }
static dagger_status_t on_region_end(dagger_ctx_t *ctx) { return handle(ctx, K_REGION_END); }

dagger_status_t dg_planner_start(dg_tasks_t *t)
{
    struct dg_planner *pl = dg_calloc(1, sizeof(*pl));
    if (!pl)
        return dg_error(DAGGER_ERR_NO_MEMORY, "planner actor: out of memory");
    t->planner = pl;
    dg_act_system_t *sys = t->rt->actors;
    for (int k = 0; k < K_N; k++) {
        dagger_msg_type_desc_t d = {type_names[k], DAGGER_MSG_FIXED, sizeof(dg_plan_msg_t)};
        dagger_status_t st = dg_msgtypes_register(dg_act_system_types(sys), &d, &pl->type[k]);
        if (st != DAGGER_OK)
            return st;
    }
    const dagger_handler_t h[K_N] = {
        {pl->type[K_CHUNK_CREATE], on_chunk_create}, {pl->type[K_CHUNK_FREE], on_chunk_free},
        {pl->type[K_CODELET], on_codelet},           {pl->type[K_REGION_BEGIN], on_region_begin},
        {pl->type[K_SUBMIT], on_submit},             {pl->type[K_REGION_END], on_region_end},
    };
    /* Unpinned: the submitting thread, which is no worker, runs its turns. */
    dagger_actor_desc_t d = {.name = "planner", .state = t, .handlers = h, .nhandlers = K_N};
    dagger_status_t st = dg_act_spawn(sys, &d, &pl->addr);
    if (st != DAGGER_OK)
        return st;
    pl->actor = dg_act_local(sys, pl->addr);
    t->exec->planner = pl->addr;
    return DAGGER_OK;
}

/* Sends the submission to the planner actor and returns its reply. */
static dagger_status_t call(dg_tasks_t *t, int kind, dg_plan_req_t *r)
{
    struct dg_planner *pl = t->planner;
    dg_act_system_t *sys = t->rt->actors;
    dg_plan_msg_t pm = {r};
    r->t = t; /* the rest of r is set by the handler (detail only on an error) */
    r->status = DAGGER_OK;
    atomic_init(&r->done, 0);
    union {
        dg_msg_t m;
        unsigned char bytes[sizeof(dg_msg_t) + sizeof(dg_plan_msg_t)];
    } buf;
    buf.m.hdr = (dg_msg_hdr_t){.from = {t->rank, 0}, .to = pl->addr, .type = pl->type[kind],
                               .size = sizeof(pm)};
    memcpy(buf.m.payload, &pm, sizeof(pm));
    if (!dg_act_run_borrowed(sys, pl->actor, &buf.m)) {
        /* Busy with another thread's submission: a copy waits its turn. */
        dg_act_post_t p = {.to = pl->addr, .type = pl->type[kind], .payload = &pm,
                           .size = sizeof(pm), .what = type_names[kind]};
        int direct;
        dagger_status_t st = dg_act_post(sys, &p, &direct);
        if (st != DAGGER_OK)
            return st;
        while (!atomic_load_explicit(&r->done, memory_order_acquire))
            sched_yield();
    }
    if (DG_UNLIKELY(r->status != DAGGER_OK))
        return dg_error(r->status, "%s", r->detail);
    return DAGGER_OK;
}

static dagger_status_t ask(dg_tasks_t *t, int kind, const void *in, void *out, uint64_t chunk)
{
    dg_plan_req_t r;
    r.in = in;
    r.out = out;
    r.chunk = chunk;
    return call(t, kind, &r);
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
    return ask(t, K_REGION_BEGIN, scope, NULL, 0);
}

dagger_status_t dg_planner_submit(dg_tasks_t *t, const dg_plan_task_desc_t *d,
                                  dg_plan_submitted_t *sub)
{
    return ask(t, K_SUBMIT, d, sub, 0);
}

dagger_status_t dg_planner_region_end(dg_tasks_t *t)
{
    return ask(t, K_REGION_END, NULL, NULL, 0);
}
