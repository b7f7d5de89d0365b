/* Posting to a local actor with a direct turn: when the actor is idle, the
 * posting thread runs its handler at once instead of queueing it for a
 * worker (shared/DESIGN.md section 9: turns that cost no thread hop). The
 * runtime's memory-space actor gets all its local messages this way.
 *
 * It is still a turn of that actor: the thread holds the actor's
 * `scheduled` flag like a worker does, so no other thread runs the actor
 * meanwhile, and the handler sees an ordinary context (dagger_ctx_self,
 * replies, sends; counted and traced). When another thread is running the
 * actor, the message waits in the mailbox and that thread handles it before
 * it lets go (dg_act_run_direct re-checks the mailbox after clearing the
 * flag); an actor pinned to another worker gets it queued for that worker.
 * Either way a sender's messages are handled in the order it posted them. */
#include <string.h>

#include "actors/ctx.h"
#include "actors/dispatch.h"
#include "actors/send.h"
#include "actors/system_impl.h"
#include "core/base/status_internal.h"

/* The actor was busy: m (made durable by keep) waits in its mailbox. The
 * holder re-checks the mailbox after it lets go, so either it sees m or
 * this thread claims the actor and handles m itself. Pinned actors (to
 * another worker) are queued for their worker instead. 1: m was handled. */
static int queue_behind(dg_act_system_t *sys, dg_actor_t *a, dg_msg_t *m)
{
    dg_mpsc_push(&a->mbox, &m->link);
    if (a->pinned && a->worker != dg_act_tls_worker(sys)) {
        dg_act_schedule_if_idle(sys, a);
        return 0;
    }
    if (!dg_act_claim(sys, a))
        return 0;
    dg_act_run_direct(sys, a, NULL);
    return 1;
}

dagger_status_t dg_act_post(dg_act_system_t *sys, const dg_act_post_t *p, int *direct)
{
    *direct = 0;
    dagger_actor_addr_t from = p->from_set ? p->from : dg_act_self_or_none(sys);
    if (p->to.rank != sys->rank)
        return dg_act_send(sys, from, p->to, p->type, 0, 0, p->payload, p->size, p->what);
    dagger_status_t st = dg_msgtypes_check(&sys->types, p->type, p->size, p->what);
    if (DG_UNLIKELY(st != DAGGER_OK))
        return st;
    dg_msg_t *m = dg_msg_make(from, p->to, p->type, 0, 0, p->payload, p->size);
    if (DG_UNLIKELY(!m))
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: no memory for a %zu-byte message", p->what,
                        p->size);
    dg_actor_t *a;
    dg_reg_slot_t *slot;
    if ((st = dg_act_acquire_dest(sys, &m->hdr, 0, &a, &slot, p->what)) != DAGGER_OK) {
        dg_msg_free(m);
        return st;
    }
    if (dg_act_claim(sys, a)) {
        /* Mail already waiting goes first: m behind it, all handled now. */
        if (DG_UNLIKELY(!dg_mpsc_is_empty(&a->mbox))) {
            dg_mpsc_push(&a->mbox, &m->link);
            m = NULL;
        }
        dg_act_run_direct(sys, a, m);
        *direct = 1;
    } else if (p->keep && (st = p->keep(m->payload)) != DAGGER_OK) {
        dg_msg_free(m);
    } else {
        *direct = queue_behind(sys, a, m);
    }
    dg_registry_release(slot);
    return st;
}

/* Largest payload dg_act_post_local builds on the stack. 256: a transfer's
 * arrival (dg_xfer_arrival_t, 152 bytes) fits, so the memory-space actor
 * takes it without a heap message (on a 2-rank Task Bench step, 1.35k ->
 * about 1k instructions an arrival). */
#define DG_ACT_BORROW_MAX 256

dagger_status_t dg_act_post_any(dg_act_system_t *sys, dg_actor_t *const *a,
                                const dagger_actor_addr_t *to, int n, const dg_act_post_t *p,
                                int *direct)
{
    if (DG_LIKELY(p->size <= DG_ACT_BORROW_MAX && p->to.rank == sys->rank)) {
        union {
            dg_msg_t m;
            unsigned char bytes[sizeof(dg_msg_t) + DG_ACT_BORROW_MAX];
        } buf;
        dg_msg_hdr_set(&buf.m.hdr, p->from_set ? p->from : dg_act_self_or_none(sys), p->to,
                       p->type, p->size);
        memcpy(buf.m.payload, p->payload, p->size);
        for (int i = 0; i < n; i++) {
            buf.m.hdr.to = to[i];
            if (dg_act_run_borrowed(sys, a[i], &buf.m)) {
                *direct = 1;
                return DAGGER_OK;
            }
        }
    }
    return dg_act_post(sys, p, direct);
}

dagger_status_t dg_act_post_local(dg_act_system_t *sys, dg_actor_t *a, const dg_act_post_t *p,
                                  int *direct)
{
    return dg_act_post_any(sys, &a, &p->to, 1, p, direct);
}
