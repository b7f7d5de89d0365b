/* Actor lifecycle: spawn, stop, join, and stopping everything at the end. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "actors/clock.h"
#include "actors/ctx.h"
#include "actors/system_impl.h"
#include "core/base/alloc.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"

static dagger_status_t check_desc(dg_act_system_t *sys, const dagger_actor_desc_t *desc)
{
    DG_CHECK_ARG(desc, "dagger_actor_spawn: the actor description is NULL");
    DG_CHECK_ARG(desc->handlers || desc->nhandlers == 0,
                 "dagger_actor_spawn: handlers is NULL but nhandlers is %zu", desc->nhandlers);
    DG_CHECK_ARG(!desc->pin || (desc->worker >= 0 && desc->worker < sys->nworkers),
                 "dagger_actor_spawn: pinned to worker %d but workers are 0..%d "
                 "(dagger_num_threads)", desc->worker, sys->nworkers - 1);
    for (size_t i = 0; i < desc->nhandlers; i++) {
        const dagger_handler_t *h = &desc->handlers[i];
        DG_CHECK_ARG(h->fn, "dagger_actor_spawn: handler %zu (type 0x%08x) has no function", i,
                     h->type);
        if (!dg_msgtypes_get(&sys->types, h->type))
            return dg_error(DAGGER_ERR_MSG_TYPE,
                            "dagger_actor_spawn: handler %zu is for message type 0x%08x, which is "
                            "not registered (dagger_msg_type_register)", i, h->type);
    }
    return DAGGER_OK;
}

/* Handlers are sorted in the actor: a duplicate type sits next to its twin. */
static int has_duplicate(const dg_actor_t *a)
{
    for (size_t i = 1; i < a->nhandlers; i++)
        if (a->handlers[i].type == a->handlers[i - 1].type)
            return 1;
    return 0;
}

dagger_status_t dg_act_spawn(dg_act_system_t *sys, const dagger_actor_desc_t *desc,
                             dagger_actor_addr_t *addr)
{
    DG_CHECK_ARG(addr, "dagger_actor_spawn: the address output pointer is NULL");
    dagger_status_t st = check_desc(sys, desc);
    if (st != DAGGER_OK)
        return st;
    dg_actor_t *a = dg_actor_new(desc);
    if (!a)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_actor_spawn: no memory for actor '%s'",
                        desc->name ? desc->name : "actor");
    if (has_duplicate(a)) {
        dg_actor_free(a);
        return dg_error(DAGGER_ERR_INVALID_ARG,
                        "dagger_actor_spawn: two handlers for the same message type");
    }
    int rc = dg_registry_add(&sys->reg, a);
    if (rc) {
        dg_actor_free(a);
        if (rc == -2)
            return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_actor_spawn: no memory for the actor "
                            "registry");
        return dg_error(DAGGER_ERR_OVERFLOW,
                        "dagger_actor_spawn: no actor id left (about %u live actors per rank); "
                        "join stopped actors", DG_REG_MAX_INDEX);
    }
    addr->rank = sys->rank;
    addr->id = a->id;
    if (DG_TRACE_ON())
        dg_trace_named(DG_TRE_ACTOR_NAME, a->id, a->name);
    return DAGGER_OK;
}

/* Finds a local actor for stop/join, holding its slot. */
static dagger_status_t find_local(dg_act_system_t *sys, dagger_actor_addr_t addr, const char *what,
                                  dg_actor_t **a, dg_reg_slot_t **slot)
{
    if (addr.rank != sys->rank)
        return dg_error(DAGGER_ERR_NO_SUCH_ACTOR,
                        "%s: actor %d:%u is not on this rank (%d); only its own rank can do this",
                        what, addr.rank, addr.id, sys->rank);
    switch (dg_registry_acquire(&sys->reg, addr.id, a, slot)) {
    case DG_REG_FOUND:
        return DAGGER_OK;
    case DG_REG_GONE:
        return dg_error(DAGGER_ERR_STATE, "%s: actor %d:%u was already joined", what, addr.rank,
                        addr.id);
    default:
        return dg_error(DAGGER_ERR_NO_SUCH_ACTOR, "%s: no actor %d:%u ever existed on this rank", what,
                        addr.rank, addr.id);
    }
}

dagger_status_t dg_act_stop(dg_act_system_t *sys, dagger_actor_addr_t addr)
{
    dg_actor_t *a;
    dg_reg_slot_t *slot;
    dagger_status_t st = find_local(sys, addr, "dagger_actor_stop", &a, &slot);
    if (st == DAGGER_ERR_STATE)
        return dg_error(DAGGER_ERR_ACTOR_STOPPED,
                        "dagger_actor_stop: actor %d:%u was already stopped and joined", addr.rank,
                        addr.id);
    if (st != DAGGER_OK)
        return st;
    int running = DG_ACTOR_RUNNING;
    if (atomic_compare_exchange_strong(&a->state, &running, DG_ACTOR_STOPPING))
        dg_act_schedule_if_idle(sys, a); /* its worker finishes the stop */
    else
        st = dg_error(DAGGER_ERR_ACTOR_STOPPED, "dagger_actor_stop: actor '%s' (%d:%u) was already stopped",
                      a->name, addr.rank, addr.id);
    dg_registry_release(slot);
    return st;
}

/* Waits until a's worker finished stopping it; DAGGER_ERR_TIMEOUT at the
 * deadline. */
static int is_stopped(const void *actor)
{
    return atomic_load(&((const dg_actor_t *)actor)->state) == DG_ACTOR_STOPPED;
}

static dagger_status_t wait_stopped(dg_act_system_t *sys, dg_actor_t *a, int64_t timeout_us)
{
    uint64_t deadline = dg_deadline_ns(timeout_us);
    dagger_status_t st = DAGGER_OK;
    pthread_mutex_lock(&sys->life_lock);
    int w = dg_act_tls_worker(sys);
    if (w >= 0 && !is_stopped(a)) {
        /* A worker (a task that joins): its last turn may be queued for this
         * very worker, so run actor turns while waiting (worker.h). */
        a->join_helper = &sys->workers[w];
        pthread_mutex_unlock(&sys->life_lock);
        dg_act_worker_help(sys, &sys->workers[w], is_stopped, a, deadline);
        pthread_mutex_lock(&sys->life_lock);
        a->join_helper = NULL;
    }
    while (atomic_load(&a->state) != DG_ACTOR_STOPPED && st == DAGGER_OK)
        if (dg_cond_wait_until(&sys->life_cond, &sys->life_lock, deadline) == ETIMEDOUT &&
            atomic_load(&a->state) != DG_ACTOR_STOPPED)
            st = dg_error(DAGGER_ERR_TIMEOUT,
                          "dagger_actor_join: actor '%s' (%d:%u) is still running at the deadline "
                          "(stop it with dagger_actor_stop)", a->name, sys->rank, a->id);
    pthread_mutex_unlock(&sys->life_lock);
    return st;
}

dagger_status_t dg_act_join(dg_act_system_t *sys, dagger_actor_addr_t addr, int64_t timeout_us,
                            dagger_actor_stats_t *stats)
{
    if (dg_act_tls.ctx)
        return dg_error(DAGGER_ERR_STATE,
                        "dagger_actor_join: called from a handler, where it would block a worker");
    dg_actor_t *a;
    dg_reg_slot_t *slot;
    dagger_status_t st = find_local(sys, addr, "dagger_actor_join", &a, &slot);
    if (st != DAGGER_OK)
        return st;
    int busy = atomic_exchange(&a->joining, 1);
    dg_registry_release(slot); /* only the joiner frees a, so it stays valid */
    if (busy)
        return dg_error(DAGGER_ERR_STATE, "dagger_actor_join: actor %d:%u is being joined by another thread",
                        addr.rank, addr.id);
    st = wait_stopped(sys, a, timeout_us);
    if (st != DAGGER_OK) {
        atomic_store(&a->joining, 0);
        return st;
    }
    dg_registry_remove(&sys->reg, a); /* no sender can reach it from here on */
    while (atomic_load_explicit(&a->refs, memory_order_acquire) != 0)
        sched_yield(); /* a worker drops messages that slipped in after the stop */
    dg_mpsc_node_t *n;
    while (dg_mpsc_pop(&a->mbox, &n) == DG_MPSC_ITEM) {
        atomic_fetch_add(&a->dropped, 1);
        dg_msg_free(DG_CONTAINER_OF(n, dg_msg_t, link));
    }
    if (stats) {
        stats->handled = atomic_load(&a->handled);
        stats->failed = atomic_load(&a->failed);
        stats->dropped = atomic_load(&a->dropped);
        stats->unhandled = atomic_load(&a->unhandled);
    }
    dg_actor_free(a);
    return DAGGER_OK;
}

/* ---------------------------------------------------------- stop all */

typedef struct {
    dagger_actor_addr_t *addr;
    size_t n, cap;
    int rank;
} addr_list_t;

static void collect(dg_actor_t *a, void *arg)
{
    addr_list_t *l = arg;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        dagger_actor_addr_t *p = dg_realloc(l->addr, cap * sizeof(*p));
        if (!p)
            return; /* the next round picks it up */
        l->addr = p;
        l->cap = cap;
    }
    l->addr[l->n].rank = l->rank;
    l->addr[l->n++].id = a->id;
}

void dg_act_system_stop_all(dg_act_system_t *sys)
{
    if (dg_act_tls.ctx) { /* every join would be refused: it would never end */
        dg_log(DG_LOG_ERROR, "dg_act_system_stop_all called from a handler; ignored");
        return;
    }
    addr_list_t l = {NULL, 0, 0, sys->rank};
    /* Rounds, because an on_stop or a last handler may spawn actors. */
    for (;;) {
        l.n = 0;
        dg_registry_each(&sys->reg, collect, &l);
        if (l.n == 0)
            break;
        for (size_t i = 0; i < l.n; i++)
            dg_act_stop(sys, l.addr[i]); /* already stopping: fine */
        size_t joined = 0;
        for (size_t i = 0; i < l.n; i++)
            joined += dg_act_join(sys, l.addr[i], DAGGER_WAIT_FOREVER, NULL) == DAGGER_OK;
        if (!joined)
            sched_yield(); /* another thread is joining them: let it finish */
    }
    free(l.addr);
}
