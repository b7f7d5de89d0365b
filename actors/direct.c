/* Posting to a local actor with a direct turn: when the actor is idle, the
 * sending thread runs its handler at once instead of queueing it for a
 * worker (shared/DESIGN.md section 9: the planner's turns run on the
 * submitting thread, so planning costs no thread hop; the runtime's own
 * actors use the same path for their small, frequent messages).
 *
 * It is still a turn of that actor: the thread holds the actor's
 * `scheduled` flag like a worker does, so no other thread runs the actor
 * meanwhile, the handler sees an ordinary context (dagger_ctx_self, replies,
 * sends) and counters and traces count the message. When the actor is busy,
 * or pinned to another worker, or has mail queued, the message is queued
 * behind that mail as dg_act_send would: a sender's messages are handled in
 * the order it sent them either way. */
#include "actors/ctx.h"
#include "actors/dispatch.h"
#include "actors/send.h"
#include "actors/system_impl.h"
#include "core/status_internal.h"

/* Whether the calling thread may run a's turn now; if so a is claimed. */
static int claim(dg_act_system_t *sys, dg_actor_t *a)
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
    if (!claim(sys, a))
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
    if (claim(sys, a)) {
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
