/* The send path: type checks, local enqueue, remote routing, delivery of
 * messages from other ranks. */
#include "actors/send.h"

#include <string.h>

#include "actors/ctx.h"
#include "actors/system_impl.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"

dagger_actor_addr_t dg_act_self_or_none(dg_act_system_t *sys)
{
    dagger_ctx_t *c = dg_act_tls.ctx;
    dagger_actor_addr_t a = {sys->rank, (c && c->sys == sys) ? c->actor->id : DG_ACT_ID_NONE};
    return a;
}

int dg_act_log_sampled(uint64_t count)
{
    return (count & (count - 1)) == 0;
}

/* Type and size of a message about to be sent or delivered. Error replies
 * carry no type and go only to futures. */
static dagger_status_t check_msg(dg_act_system_t *sys, const dg_msg_t *msg, const char *what)
{
    if (DG_UNLIKELY(msg->hdr.flags & DG_MSG_ERROR)) {
        if (msg->hdr.to.id != DG_ACT_ID_FUTURE || msg->hdr.size < sizeof(dg_msg_error_t))
            return dg_error(DAGGER_ERR_PROTOCOL, "%s: malformed error reply", what);
        return DAGGER_OK;
    }
    return dg_msgtypes_check(&sys->types, msg->hdr.type, msg->hdr.size, what);
}

/* Whether a local actor takes a message of this type now. remote: the
 * message came from another rank, so a missing handler is counted there. */
static dagger_status_t actor_accepts(dg_act_system_t *sys, dg_actor_t *a, const dg_msg_hdr_t *h,
                                     int remote, const char *what)
{
    if (atomic_load_explicit(&a->state, memory_order_acquire) != DG_ACTOR_RUNNING)
        return dg_error(DAGGER_ERR_ACTOR_STOPPED, "%s: actor '%s' (%d:%u) was stopped", what, a->name,
                        h->to.rank, h->to.id);
    if (DG_UNLIKELY(h->flags & DG_MSG_ERROR))
        return dg_error(DAGGER_ERR_PROTOCOL, "%s: error reply addressed to an actor", what);
    if (DG_LIKELY(dg_actor_handler(a, h->type) != NULL))
        return DAGGER_OK;
    dagger_status_t st =
        dg_error(DAGGER_ERR_MSG_TYPE, "%s: actor '%s' (%d:%u) has no handler for message type '%s'",
                 what, a->name, h->to.rank, h->to.id, dg_msgtypes_name(&sys->types, h->type));
    if (remote) {
        uint64_t n = atomic_fetch_add(&a->unhandled, 1) + 1;
        if (dg_act_log_sampled(n))
            dg_log(DG_LOG_WARN, "%s (from rank %d; %llu such messages so far)", dagger_error_detail(),
                   h->from.rank, (unsigned long long)n);
    }
    return st;
}

static dagger_status_t lookup_error(dg_reg_lookup_t found, const dg_msg_hdr_t *h, const char *what)
{
    return found == DG_REG_NEVER
               ? dg_error(DAGGER_ERR_NO_SUCH_ACTOR, "%s: rank %d has no actor with id %u", what,
                          h->to.rank, h->to.id)
               : dg_error(DAGGER_ERR_ACTOR_STOPPED, "%s: actor %d:%u was stopped and joined", what,
                          h->to.rank, h->to.id);
}

dagger_status_t dg_act_acquire_dest(dg_act_system_t *sys, const dg_msg_hdr_t *h, int remote,
                                    dg_actor_t **a, dg_reg_slot_t **slot, const char *what)
{
    dg_reg_lookup_t found = dg_registry_acquire(&sys->reg, h->to.id, a, slot);
    if (DG_UNLIKELY(found != DG_REG_FOUND))
        return lookup_error(found, h, what);
    dagger_status_t st = actor_accepts(sys, *a, h, remote, what);
    if (DG_UNLIKELY(st != DAGGER_OK))
        dg_registry_release(*slot);
    return st;
}

/* Pushes a checked message into a local actor's mailbox (or hands a reply
 * to its future). On error the caller still owns msg. */
static dagger_status_t enqueue_local(dg_act_system_t *sys, dg_msg_t *msg, int remote,
                                     const char *what)
{
    const dg_msg_hdr_t *h = &msg->hdr;
    if (h->to.id == DG_ACT_ID_FUTURE) {
        dg_futures_complete(&sys->futures, msg);
        return DAGGER_OK;
    }
    dg_actor_t *a;
    dg_reg_slot_t *slot;
    dagger_status_t st = dg_act_acquire_dest(sys, h, remote, &a, &slot, what);
    if (DG_LIKELY(st == DAGGER_OK)) {
        if (dg_act_run_next(sys, a, msg, slot))
            return DAGGER_OK; /* the worker's run-next slot keeps the hold */
        dg_mpsc_push(&a->mbox, &msg->link);
        dg_act_schedule_if_idle(sys, a);
        dg_registry_release(slot);
    }
    return st;
}

/* Whether messages to rank r can leave this rank. */
static dagger_status_t route_status(dg_act_system_t *sys, int r, dg_act_route_fn fn, const char *what)
{
    int n = atomic_load_explicit(&sys->nranks, memory_order_acquire);
    if (!fn)
        return dg_error(DAGGER_ERR_NO_SUCH_ACTOR,
                        "%s: rank %d is not reachable from rank %d (single-rank runtime: no "
                        "transport route is installed)", what, r, sys->rank);
    if (r < 0 || r >= n)
        return dg_error(DAGGER_ERR_NO_SUCH_ACTOR, "%s: rank %d does not exist (the job has %d ranks)",
                        what, r, n);
    return DAGGER_OK;
}

/* A checked message for another rank: the transport's route takes it. */
static dagger_status_t route(dg_act_system_t *sys, dg_msg_t *msg, const char *what)
{
    dg_act_route_fn fn = atomic_load_explicit(&sys->route_fn, memory_order_acquire);
    dagger_status_t st = route_status(sys, msg->hdr.to.rank, fn, what);
    if (st == DAGGER_OK)
        return fn(atomic_load_explicit(&sys->route_ctx, memory_order_acquire), msg);
    dg_msg_free(msg);
    return st;
}

dagger_status_t dg_act_check_dest(dg_act_system_t *sys, dagger_actor_addr_t to, uint32_t type,
                                  size_t size, const char *what)
{
    dagger_status_t st = dg_msgtypes_check(&sys->types, type, size, what);
    if (st != DAGGER_OK)
        return st;
    if (to.rank != sys->rank)
        return route_status(sys, to.rank, atomic_load_explicit(&sys->route_fn, memory_order_acquire),
                            what);
    dg_msg_hdr_t h = {.to = to, .type = type};
    dg_actor_t *a;
    dg_reg_slot_t *slot;
    st = dg_act_acquire_dest(sys, &h, 0, &a, &slot, what);
    if (st == DAGGER_OK)
        dg_registry_release(slot);
    return st;
}

static dagger_status_t send_checked(dg_act_system_t *sys, dg_msg_t *msg, const char *what)
{
    if (msg->hdr.to.rank != sys->rank)
        return route(sys, msg, what);
    dagger_status_t st = enqueue_local(sys, msg, 0, what);
    if (st != DAGGER_OK)
        dg_msg_free(msg);
    return st;
}

/* Largest payload that the send_now shortcut builds on the stack. */
#define DG_ACT_SEND_NOW_MAX 256

typedef union {
    dg_msg_t msg;
    unsigned char bytes[sizeof(dg_msg_t) + DG_ACT_SEND_NOW_MAX];
} dg_msg_on_stack_t;

/* Worker 0, a small message for another rank: built on the stack and handed
 * to the poller's send_now, which sends it at once (the transport's common
 * case on its owner thread) or declines. 1 when the send is decided (*st),
 * 0 when the caller must take the ordinary route. */
static int try_send_now(dg_act_system_t *sys, dagger_actor_addr_t from, dagger_actor_addr_t to,
                        uint32_t type, uint32_t flags, uint64_t corr, const void *payload,
                        size_t size, const char *what, dagger_status_t *st)
{
    int me = dg_act_tls_worker(sys);
    const dg_act_poller_t *p = me >= 0 ? sys->workers[me].poller : NULL;
    if (!p || !p->send_now)
        return 0;
    *st = route_status(sys, to.rank, atomic_load_explicit(&sys->route_fn, memory_order_acquire),
                       what);
    if (*st != DAGGER_OK)
        return 1;
    dg_msg_on_stack_t buf;
    dg_msg_hdr_t *h = &buf.msg.hdr; /* field by field: no header temporary to copy */
    atomic_init(&buf.msg.link.next, NULL);
    h->from = from;
    h->to = to;
    h->type = type;
    h->flags = flags;
    h->corr = corr;
    h->size = (uint32_t)size;
    h->reserved = 0;
    if (size)
        memcpy(buf.msg.payload, payload, size);
    return p->send_now(p->ctx, &buf.msg);
}

dagger_status_t dg_act_send(dg_act_system_t *sys, dagger_actor_addr_t from, dagger_actor_addr_t to,
                            uint32_t type, uint32_t flags, uint64_t corr, const void *payload,
                            size_t size, const char *what)
{
    DG_CHECK_ARG(payload || size == 0, "%s: payload is NULL but size is %zu", what, size);
    dagger_status_t st = dg_msgtypes_check(&sys->types, type, size, what);
    if (DG_UNLIKELY(st != DAGGER_OK))
        return st;
    if (to.rank != sys->rank && size <= DG_ACT_SEND_NOW_MAX &&
        try_send_now(sys, from, to, type, flags, corr, payload, size, what, &st))
        return st;
    dg_msg_t *msg = dg_msg_make(from, to, type, flags, corr, payload, size);
    if (DG_UNLIKELY(!msg))
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: no memory for a %zu-byte message", what, size);
    return send_checked(sys, msg, what);
}

dagger_status_t dg_act_deliver(dg_act_system_t *sys, dg_msg_t *msg)
{
    static const char what[] = "delivery from another rank";
    dagger_status_t st;
    if (msg->hdr.to.rank != sys->rank)
        st = dg_error(DAGGER_ERR_PROTOCOL, "%s: message for rank %d arrived at rank %d", what,
                      msg->hdr.to.rank, sys->rank);
    else if ((st = check_msg(sys, msg, what)) == DAGGER_OK &&
             (st = enqueue_local(sys, msg, 1, what)) == DAGGER_OK)
        return DAGGER_OK;
    dg_act_fail_request(sys, msg, st, dagger_error_detail());
    dg_msg_free(msg);
    return st;
}

void dg_act_fail_request(dg_act_system_t *sys, const dg_msg_t *req, dagger_status_t status,
                         const char *detail)
{
    if (!(req->hdr.flags & DG_MSG_REQUEST) || req->hdr.from.id != DG_ACT_ID_FUTURE)
        return;
    size_t len = strlen(detail) + 1;
    dg_msg_t *err = dg_msg_alloc(sizeof(dg_msg_error_t) + len);
    if (!err) {
        dg_log(DG_LOG_ERROR, "no memory to report a failed request (%s)", detail);
        return;
    }
    err->hdr.from = req->hdr.to;
    err->hdr.to = req->hdr.from;
    err->hdr.flags = DG_MSG_REPLY | DG_MSG_ERROR;
    err->hdr.corr = req->hdr.corr;
    dg_msg_error_t *e = (dg_msg_error_t *)err->payload;
    e->status = status;
    memcpy(e->detail, detail, len);
    if (send_checked(sys, err, "error reply") != DAGGER_OK)
        dg_log(DG_LOG_DEBUG, "error reply to rank %d not sent: %s", req->hdr.from.rank,
               dagger_error_detail());
}
