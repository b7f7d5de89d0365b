/* Public API: sending and replying. */
#include "core/runtime/actor_api.h"
#include "actors/ctx.h"

dagger_status_t dagger_send(dagger_runtime_t *rt, dagger_actor_addr_t to, dagger_msg_type_t type,
                            const void *payload, size_t size)
{
    DG_API_SYSTEM(rt, "dagger_send", sys);
    return dg_act_send(sys, dg_act_self_or_none(sys), to, type, 0, 0, payload, size, "dagger_send");
}

dagger_reply_to_t dagger_ctx_reply_to(const dagger_ctx_t *ctx)
{
    dagger_reply_to_t r = {dagger_actor_none(), 0};
    if (ctx && ctx->msg && ctx->msg->hdr.from.id != DG_ACT_ID_NONE) {
        r.addr = ctx->msg->hdr.from;
        r.corr = ctx->msg->hdr.corr;
    }
    return r;
}

static dagger_status_t send_reply(dg_act_system_t *sys, dagger_reply_to_t to, dagger_msg_type_t type,
                                  const void *payload, size_t size, const char *what)
{
    return dg_act_send(sys, dg_act_self_or_none(sys), to.addr, type, DG_MSG_REPLY, to.corr, payload,
                       size, what);
}

dagger_status_t dagger_reply(dagger_ctx_t *ctx, dagger_msg_type_t type, const void *payload,
                             size_t size)
{
    DG_CHECK_ARG(ctx && ctx == dg_act_current_ctx(),
                 "dagger_reply: ctx is NULL or not the context of the handler running on this thread");
    if (!ctx->msg)
        return dg_error(DAGGER_ERR_STATE, "dagger_reply: on_stop has no message to answer");
    dagger_reply_to_t to = dagger_ctx_reply_to(ctx);
    if (!dagger_actor_addr_valid(to.addr))
        return dg_error(DAGGER_ERR_STATE,
                        "dagger_reply: the message was sent by a plain thread with dagger_send, so "
                        "there is no one to answer (use dagger_request)");
    if (ctx->replied)
        return dg_error(DAGGER_ERR_STATE, "dagger_reply: this message was already answered");
    dagger_status_t st = send_reply(ctx->sys, to, type, payload, size, "dagger_reply");
    if (st == DAGGER_OK)
        ctx->replied = 1;
    return st;
}

dagger_status_t dagger_reply_later(dagger_runtime_t *rt, dagger_reply_to_t to,
                                   dagger_msg_type_t type, const void *payload, size_t size)
{
    DG_API_SYSTEM(rt, "dagger_reply_later", sys);
    DG_CHECK_ARG(dagger_actor_addr_valid(to.addr),
                 "dagger_reply_later: the reply_to has no sender (the message came from a plain "
                 "thread's dagger_send)");
    return send_reply(sys, to, type, payload, size, "dagger_reply_later");
}
