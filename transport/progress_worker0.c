/* The progress engine on actor worker 0 (see progress.h): the transport as
 * the actor kernel's poller. Worker 0 calls poll while it looks for work,
 * arm before it sleeps, and send_now for small actor messages it built on
 * its stack; ctx is the transport. No state of its own: whether worker 0
 * holds the UCX worker yet is dg_tx_is_owner on worker 0. */
#include "transport/progress.h"

#include <sched.h>

#include "core/base/common.h"
#include "transport/chan_actor.h"
#include "transport/tx_internal.h"

void dg_tx_engine_wake(void *sys)
{
    dg_act_system_wake(sys, 0);
}

/* The first poll adopts the UCX worker (the hand-over from the thread that
 * started the engine). */
static int poll_tx(void *ctx)
{
    dg_tx_t *tx = ctx;
    if (DG_UNLIKELY(!dg_tx_is_owner(tx)))
        dg_tx_adopt(tx);
    return dg_tx_progress(tx);
}

/* Not adopted yet: work is pending (the first poll), so no sleep. */
static int arm_tx(void *ctx)
{
    dg_tx_t *tx = ctx;
    return dg_tx_is_owner(tx) ? dg_tx_arm(tx) : 1;
}

void dg_tx_engine_start(dg_tx_t *tx, dg_act_system_t *sys)
{
    dg_tx_release(tx);
    dg_act_poller_t p = {.poll = poll_tx, .arm = arm_tx, .fd = dg_tx_fd(tx), .ctx = tx,
                         .send_now = dg_tx_actors_send_now};
    dg_act_system_set_poller(sys, &p);
    /* From here worker 0 sleeps on its own fd beside the UCX worker's. */
    atomic_store_explicit(&tx->woken_by_wake, 1, memory_order_seq_cst);
}

void dg_tx_engine_stop(dg_tx_t *tx, dg_act_system_t *sys)
{
    dg_act_system_set_poller(sys, NULL);
    /* The calling thread sleeps on the UCX worker's fd alone (dg_tx_wait). */
    atomic_store_explicit(&tx->woken_by_wake, 0, memory_order_seq_cst);
    /* The actor kernel goes next: a lost peer found from now on wakes the
     * owner through the fd only, and one waking it through the kernel now
     * is waited for (tx_lost.c). */
    atomic_store_explicit(&tx->wake_off, 1, memory_order_seq_cst);
    while (atomic_load_explicit(&tx->lost_waking, memory_order_seq_cst))
        sched_yield();
    dg_tx_adopt(tx);
}
