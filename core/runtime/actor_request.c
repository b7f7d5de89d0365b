/* Public API: request/reply (blocking, futures, and from inside actors). */
#include "core/runtime/actor_api.h"
#include "actors/clock.h"
#include "actors/ctx.h"
#include "actors/system_impl.h"

static dagger_status_t not_in_handler(const char *what, const char *instead)
{
    if (dg_act_current_ctx())
        return dg_error(DAGGER_ERR_STATE, "%s: called from a handler, where waiting would block a "
                        "worker; use %s", what, instead);
    return DAGGER_OK;
}

static dagger_status_t start(dg_act_system_t *sys, dagger_actor_addr_t to, dagger_msg_type_t type,
                             const void *payload, size_t size, dagger_request_t *req,
                             const char *what)
{
    dagger_status_t st = not_in_handler(what, "dagger_ask");
    if (st != DAGGER_OK)
        return st;
    uint64_t id = dg_act_next_corr(sys);
    if ((st = dg_future_create(&sys->futures, id)) != DAGGER_OK)
        return st;
    dagger_actor_addr_t from = {sys->rank, DG_ACT_ID_FUTURE};
    st = dg_act_send(sys, from, to, type, DG_MSG_REQUEST, id, payload, size, what);
    if (st != DAGGER_OK) {
        dg_future_destroy(&sys->futures, id);
        return st;
    }
    *req = id;
    return DAGGER_OK;
}

static dagger_status_t check_reply(const dagger_reply_t *reply, const char *what)
{
    DG_CHECK_ARG(reply, "%s: the reply pointer is NULL", what);
    DG_CHECK_ARG(reply->buf || reply->capacity == 0, "%s: reply->buf is NULL but capacity is %zu",
                 what, reply->capacity);
    return DAGGER_OK;
}

dagger_status_t dagger_request_start(dagger_runtime_t *rt, dagger_actor_addr_t to,
                                     dagger_msg_type_t type, const void *payload, size_t size,
                                     dagger_request_t *req)
{
    DG_API_SYSTEM(rt, "dagger_request_start", sys);
    DG_CHECK_ARG(req, "dagger_request_start: the request output pointer is NULL");
    return start(sys, to, type, payload, size, req, "dagger_request_start");
}

dagger_status_t dagger_request_wait(dagger_runtime_t *rt, dagger_request_t req, int64_t timeout_us,
                                    dagger_reply_t *reply)
{
    DG_API_SYSTEM(rt, "dagger_request_wait", sys);
    dagger_status_t st = check_reply(reply, "dagger_request_wait");
    if (st == DAGGER_OK && timeout_us != 0)
        st = not_in_handler("dagger_request_wait", "a timeout of 0, or dagger_ask");
    if (st != DAGGER_OK)
        return st;
    return dg_act_request_wait(sys, req, dg_deadline_ns(timeout_us), reply);
}

dagger_status_t dagger_request_free(dagger_runtime_t *rt, dagger_request_t req)
{
    DG_API_SYSTEM(rt, "dagger_request_free", sys);
    return dg_future_destroy(&sys->futures, req);
}

dagger_status_t dagger_request(dagger_runtime_t *rt, dagger_actor_addr_t to, dagger_msg_type_t type,
                               const void *payload, size_t size, int64_t timeout_us,
                               dagger_reply_t *reply)
{
    DG_API_SYSTEM(rt, "dagger_request", sys);
    dagger_status_t st = check_reply(reply, "dagger_request");
    dagger_request_t f;
    if (st != DAGGER_OK || (st = start(sys, to, type, payload, size, &f, "dagger_request")) != DAGGER_OK)
        return st;
    st = dg_act_request_wait(sys, f, dg_deadline_ns(timeout_us), reply);
    dg_future_destroy(&sys->futures, f);
    return st;
}

dagger_status_t dagger_ask(dagger_ctx_t *ctx, dagger_actor_addr_t to, dagger_msg_type_t type,
                           const void *payload, size_t size, uint64_t *corr)
{
    if (!ctx || ctx != dg_act_current_ctx())
        return dg_error(DAGGER_ERR_STATE, "dagger_ask: not called from a handler with its own ctx "
                        "(plain threads use dagger_request or dagger_request_start)");
    dg_act_system_t *sys = ctx->sys;
    uint64_t id = dg_act_next_corr(sys);
    dagger_actor_addr_t self = {sys->rank, ctx->actor->id};
    dagger_status_t st = dg_act_send(sys, self, to, type, DG_MSG_REQUEST, id, payload, size, "dagger_ask");
    if (st == DAGGER_OK && corr)
        *corr = id;
    return st;
}
