/* Public API: message types, actor lifecycle and the handler context. */
#include <string.h>

#include "core/runtime/actor_api.h"
#include "actors/ctx.h"
#include "actors/system_impl.h"
#include "core/base/hash.h"

dagger_status_t dagger_msg_type_register(dagger_runtime_t *rt, const dagger_msg_type_desc_t *desc,
                                         dagger_msg_type_t *type)
{
    DG_API_SYSTEM(rt, "dagger_msg_type_register", sys);
    DG_CHECK_ARG(type, "dagger_msg_type_register: the type output pointer is NULL");
    return dg_msgtypes_register(dg_act_system_types(sys), desc, type);
}

dagger_status_t dagger_msg_type_find(dagger_runtime_t *rt, const char *name, dagger_msg_type_t *type)
{
    DG_API_SYSTEM(rt, "dagger_msg_type_find", sys);
    DG_CHECK_ARG(name && type, "dagger_msg_type_find: NULL name or type output pointer");
    uint32_t id = dg_name_id(name);
    const dg_msgtype_t *e = dg_msgtypes_get(dg_act_system_types(sys), id);
    if (!e || strcmp(e->name, name))
        return dg_error(DAGGER_ERR_NOT_FOUND, "dagger_msg_type_find: no message type '%s'", name);
    *type = id;
    return DAGGER_OK;
}

dagger_status_t dagger_actor_spawn(dagger_runtime_t *rt, const dagger_actor_desc_t *desc,
                                   dagger_actor_addr_t *addr)
{
    DG_API_SYSTEM(rt, "dagger_actor_spawn", sys);
    return dg_act_spawn(sys, desc, addr);
}

dagger_status_t dagger_actor_stop(dagger_runtime_t *rt, dagger_actor_addr_t addr)
{
    DG_API_SYSTEM(rt, "dagger_actor_stop", sys);
    return dg_act_stop(sys, addr);
}

dagger_status_t dagger_actor_join(dagger_runtime_t *rt, dagger_actor_addr_t addr, int64_t timeout_us,
                                  dagger_actor_stats_t *stats)
{
    DG_API_SYSTEM(rt, "dagger_actor_join", sys);
    return dg_act_join(sys, addr, timeout_us, stats);
}

/* ------------------------------------------------------------- context */

dagger_actor_addr_t dagger_ctx_self(const dagger_ctx_t *ctx)
{
    if (!ctx)
        return dagger_actor_none();
    dagger_actor_addr_t a = {dg_act_system_rank(ctx->sys), ctx->actor->id};
    return a;
}

dagger_actor_addr_t dagger_ctx_sender(const dagger_ctx_t *ctx)
{
    if (!ctx || !ctx->msg)
        return dagger_actor_none();
    dagger_actor_addr_t from = ctx->msg->hdr.from;
    return from.id == DG_ACT_ID_NONE || from.id == DG_ACT_ID_FUTURE ? dagger_actor_none() : from;
}

dagger_msg_type_t dagger_ctx_type(const dagger_ctx_t *ctx)
{
    return ctx && ctx->msg ? ctx->msg->hdr.type : 0;
}

const void *dagger_ctx_payload(const dagger_ctx_t *ctx)
{
    return ctx && ctx->msg ? ctx->msg->payload : NULL;
}

size_t dagger_ctx_size(const dagger_ctx_t *ctx)
{
    return ctx && ctx->msg ? ctx->msg->hdr.size : 0;
}

uint64_t dagger_ctx_corr(const dagger_ctx_t *ctx)
{
    return ctx && ctx->msg ? ctx->msg->hdr.corr : 0;
}

int dagger_ctx_is_reply(const dagger_ctx_t *ctx)
{
    return ctx && ctx->msg && (ctx->msg->hdr.flags & DG_MSG_REPLY);
}

void *dagger_ctx_state(const dagger_ctx_t *ctx)
{
    return ctx ? ctx->actor->user_state : NULL;
}

dagger_runtime_t *dagger_ctx_runtime(const dagger_ctx_t *ctx)
{
    return ctx ? (dagger_runtime_t *)ctx->sys->owner : NULL;
}

int dagger_ctx_worker(const dagger_ctx_t *ctx)
{
    return ctx ? ctx->worker : -1;
}
