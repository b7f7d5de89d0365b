/* The actor system: creation, teardown and the contracts of system.h. */
#include "actors/system.h"

#include <stdlib.h>
#include <string.h>

#include "actors/ctx.h"
#include "actors/system_impl.h"
#include "actors/thread_sched.h"
#include "core/base/alloc.h"
#include "core/base/cond.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"

_Thread_local dg_act_tls_t dg_act_tls DG_TLS_IE = {NULL, -1, NULL};

static void init_sync(dg_act_system_t *sys)
{
    pthread_mutex_init(&sys->life_lock, NULL);
    dg_cond_init_monotonic(&sys->life_cond);
    pthread_mutex_init(&sys->poller_lock, NULL);
    pthread_cond_init(&sys->poller_cond, NULL);
}

static void cleanup_sync(dg_act_system_t *sys)
{
    pthread_cond_destroy(&sys->poller_cond);
    pthread_mutex_destroy(&sys->poller_lock);
    pthread_cond_destroy(&sys->life_cond);
    pthread_mutex_destroy(&sys->life_lock);
}

static dagger_status_t check_params(const dg_act_params_t *p, dg_act_system_t **out)
{
    DG_CHECK_ARG(p && out, "dg_act_system_create: NULL parameters or output pointer");
    DG_CHECK_ARG(p->num_threads >= 0, "worker thread count %d is negative", p->num_threads);
    DG_CHECK_ARG(p->slice_us == 0 ||
                     (p->slice_us >= DG_SLICE_MIN_US && p->slice_us <= DG_SLICE_MAX_US),
                 "scheduler slice %d us: use 0 (the kernel's default) or %d to %d", p->slice_us,
                 DG_SLICE_MIN_US, DG_SLICE_MAX_US);
    DG_CHECK_ARG(p->nranks >= 1 && p->rank >= 0 && p->rank < p->nranks,
                 "rank %d of %d ranks is out of range", p->rank, p->nranks);
    return DAGGER_OK;
}

dagger_status_t dg_act_system_create(const dg_act_params_t *p, dg_act_system_t **out)
{
    dagger_status_t st = check_params(p, out);
    if (st != DAGGER_OK)
        return st;
    *out = NULL;
    dg_act_system_t *sys = dg_calloc(1, sizeof(*sys));
    if (!sys)
        return dg_error(DAGGER_ERR_NO_MEMORY, "no memory for the actor system");
    sys->rank = p->rank;
    atomic_init(&sys->nranks, p->nranks);
    sys->owner = p->owner;
    sys->bind = p->bind;
    sys->slice_us = p->slice_us;
    dg_spin_set_yield(!p->no_spin_yield);
    atomic_init(&sys->next_corr, 1);
    init_sync(sys);
    dg_registry_init(&sys->reg);
    dg_futures_init(&sys->futures);
    if ((st = dg_msgtypes_init(&sys->types)) != DAGGER_OK)
        goto fail_types;
    if ((st = dg_topo_init(&sys->topo, p->local_rank, p->local_size)) != DAGGER_OK)
        goto fail_topo;
    if ((st = dg_act_workers_start(sys, p->num_threads ? p->num_threads : sys->topo.ncores)) != DAGGER_OK)
        goto fail_workers;
    if ((st = dg_timers_start(&sys->timers, sys)) != DAGGER_OK)
        goto fail_timers;
    *out = sys;
    return DAGGER_OK;

fail_timers:
    dg_act_workers_stop(sys);
fail_workers:
    dg_topo_cleanup(&sys->topo);
fail_topo:
    dg_msgtypes_cleanup(&sys->types);
fail_types:
    dg_futures_cleanup(&sys->futures);
    dg_registry_cleanup(&sys->reg);
    cleanup_sync(sys);
    free(sys);
    return st;
}

int dg_act_system_bind_caller(dg_act_system_t *sys)
{
    if (!sys->bind || sys->caller_saved || !(sys->caller_saved = hwloc_bitmap_alloc()))
        return 0;
    if (!dg_topo_bind_share(&sys->topo, sys->caller_saved)) {
        hwloc_bitmap_free(sys->caller_saved);
        sys->caller_saved = NULL;
        return 0;
    }
    sys->caller = pthread_self();
    return 1;
}

/* Puts the bound caller's binding back when the caller destroys. */
static void unbind_caller(dg_act_system_t *sys)
{
    if (!sys->caller_saved)
        return;
    if (pthread_equal(pthread_self(), sys->caller))
        dg_topo_unbind_share(&sys->topo, sys->caller_saved);
    hwloc_bitmap_free(sys->caller_saved);
    sys->caller_saved = NULL;
}

void dg_act_system_destroy(dg_act_system_t *sys)
{
    if (!sys)
        return;
    unbind_caller(sys);
    dg_act_system_stop_all(sys);
    dg_timers_stop(&sys->timers);
    dg_act_workers_stop(sys);
    dg_topo_cleanup(&sys->topo);
    dg_msgtypes_cleanup(&sys->types);
    dg_futures_cleanup(&sys->futures);
    dg_registry_cleanup(&sys->reg);
    cleanup_sync(sys);
    free(sys);
}

int dg_act_system_num_workers(const dg_act_system_t *sys)
{
    return sys->nworkers;
}

int dg_act_system_rank(const dg_act_system_t *sys)
{
    return sys->rank;
}

int dg_act_current_worker(const dg_act_system_t *sys)
{
    return dg_act_tls_worker(sys);
}

dagger_ctx_t *dg_act_current_ctx(void)
{
    return dg_act_tls.ctx;
}

struct dg_msgtypes *dg_act_system_types(dg_act_system_t *sys)
{
    return &sys->types;
}

void dg_act_system_each_type(dg_act_system_t *sys,
                             void (*fn)(void *arg, uint32_t id, const char *name), void *arg)
{
    dg_msgtypes_each(&sys->types, fn, arg);
}

typedef struct {
    void (*fn)(void *arg, uint32_t id, const char *name);
    void *arg;
} dg_each_actor_t;

static void each_actor(dg_actor_t *a, void *arg)
{
    dg_each_actor_t *e = arg;
    e->fn(e->arg, a->id, a->name);
}

void dg_act_system_each_actor(dg_act_system_t *sys,
                              void (*fn)(void *arg, uint32_t id, const char *name), void *arg)
{
    dg_each_actor_t e = {fn, arg};
    dg_registry_each(&sys->reg, each_actor, &e);
}

dg_actor_t *dg_act_local(dg_act_system_t *sys, dagger_actor_addr_t addr)
{
    dg_actor_t *a;
    dg_reg_slot_t *slot;
    if (addr.rank != sys->rank || dg_registry_acquire(&sys->reg, addr.id, &a, &slot) != DG_REG_FOUND)
        return NULL;
    dg_registry_release(slot);
    return a;
}

uint64_t dg_act_next_corr(dg_act_system_t *sys)
{
    return atomic_fetch_add_explicit(&sys->next_corr, 1, memory_order_relaxed);
}

/* ----------------------------------------------------------- contracts */

void dg_act_system_set_route(dg_act_system_t *sys, int my_rank, int nranks, dg_act_route_fn fn,
                             void *ctx)
{
    if (my_rank != sys->rank)
        dg_log(DG_LOG_ERROR, "dg_act_system_set_route: rank %d given, but actors were created on rank %d",
               my_rank, sys->rank);
    DG_ASSERT(my_rank == sys->rank);
    atomic_store_explicit(&sys->route_ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&sys->nranks, nranks, memory_order_relaxed);
    atomic_store_explicit(&sys->route_fn, fn, memory_order_release);
}

void dg_act_system_set_poller(dg_act_system_t *sys, const dg_act_poller_t *p)
{
    pthread_mutex_lock(&sys->poller_lock);
    if (p)
        sys->poller_next = *p;
    else
        memset(&sys->poller_next, 0, sizeof(sys->poller_next));
    uint64_t gen = atomic_fetch_add(&sys->poller_gen, 1) + 1;
    if (dg_act_current_worker(sys) != 0 && atomic_load(&sys->running)) {
        dg_act_worker_wake(&sys->workers[0]);
        while (sys->poller_ack < gen && atomic_load(&sys->running))
            pthread_cond_wait(&sys->poller_cond, &sys->poller_lock);
    }
    pthread_mutex_unlock(&sys->poller_lock);
}

void dg_act_system_wake(dg_act_system_t *sys, int w)
{
    if (w >= 0 && w < sys->nworkers)
        dg_act_worker_wake(&sys->workers[w]);
}

void dg_act_system_wake_any(dg_act_system_t *sys)
{
    dg_act_wake_idle(sys, 0);
}

void dg_act_system_wake_helper(dg_act_system_t *sys)
{
    dg_act_wake_idle(sys, 1);
}

void dg_act_system_wake_sleepers(dg_act_system_t *sys)
{
    dg_act_wake_all_idle(sys);
}

void dg_act_system_worker_busy(dg_act_system_t *sys, int worker)
{
    if (worker >= 0 && worker < sys->nworkers)
        dg_act_worker_stop_spinning(sys, &sys->workers[worker]);
}

static int flag_set(const void *flag)
{
    return atomic_load_explicit((const _Atomic int *)flag, memory_order_seq_cst) != 0;
}

static void help_wait(void *worker, const _Atomic int *ready, uint64_t deadline_ns)
{
    dg_act_worker_t *w = worker;
    dg_act_worker_help(w->sys, w, flag_set, ready, deadline_ns);
}

dagger_status_t dg_act_request_wait(dg_act_system_t *sys, uint64_t id, uint64_t deadline_ns,
                                    dagger_reply_t *reply)
{
    int w = dg_act_tls_worker(sys);
    if (w < 0)
        return dg_future_wait(&sys->futures, id, deadline_ns, reply, NULL);
    dg_future_helper_t help = {help_wait, dg_act_worker_help_wake, &sys->workers[w]};
    return dg_future_wait(&sys->futures, id, deadline_ns, reply, &help);
}

void dg_act_system_add_idle_source(dg_act_system_t *sys, dg_act_idle_fn fn, void *ctx)
{
    pthread_mutex_lock(&sys->life_lock);
    int n = atomic_load_explicit(&sys->nidle, memory_order_relaxed);
    if (n < DG_ACT_MAX_IDLE_SOURCES) {
        sys->idle[n].fn = fn;
        sys->idle[n].ctx = ctx;
        atomic_store_explicit(&sys->nidle, n + 1, memory_order_release);
    } else {
        dg_log(DG_LOG_ERROR, "dg_act_system_add_idle_source: already %d sources; this one is ignored",
               n);
    }
    pthread_mutex_unlock(&sys->life_lock);
    for (int i = 0; i < sys->nworkers; i++) /* sleepers should poll it from now on */
        dg_act_worker_wake(&sys->workers[i]);
}
