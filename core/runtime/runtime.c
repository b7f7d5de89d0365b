/* dagger_init / dagger_finalize: bring the subsystems up in order and take
 * them down in reverse order (see the one exception in teardown). */
#include "core/runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/system.h"
#include "actors/thread_sched.h"
#include "core/base/alloc.h"
#include "core/base/asym_fence.h"
#include "core/runtime/tasks.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "core/base/spmd_caller.h"
#include "transport/bootstrap.h"
#include "transport/chan_actor.h"
#include "transport/coll.h"
#include "transport/progress.h"
#include "transport/tx.h"

/* After a rank is lost, a rank that keeps running (a computation that never
 * waits on the transport) is ended this many seconds later. */
#define DG_LOST_GRACE_S 5.0

/* Worker count and pinning: dagger_params_t overrides DAGGER_NUM_THREADS and
 * DAGGER_BIND_THREADS; without pinning the calling thread is not pinned
 * either (DAGGER_BIND_SUBMITTER). */
static dagger_status_t start_actors(dagger_runtime_t *rt, const dagger_params_t *params)
{
    if (rt->cfg.num_threads < 0 || rt->cfg.num_threads > 4096)
        return dg_error(DAGGER_ERR_CONFIG,
                        "DAGGER_NUM_THREADS=%lld: use 0 (one per core of the process binding) or a "
                        "count from 1 to 4096", rt->cfg.num_threads);
    if (rt->cfg.sched_slice_us != 0 &&
        (rt->cfg.sched_slice_us < DG_SLICE_MIN_US || rt->cfg.sched_slice_us > DG_SLICE_MAX_US))
        return dg_error(DAGGER_ERR_CONFIG,
                        "DAGGER_SCHED_SLICE_US=%lld: use 0 (the kernel's default slice) or %d to %d "
                        "microseconds", rt->cfg.sched_slice_us, DG_SLICE_MIN_US, DG_SLICE_MAX_US);
    dg_act_params_t ap = {
        .rank = rt->rank,
        .nranks = rt->nranks,
        .num_threads = params && params->num_threads ? params->num_threads : (int)rt->cfg.num_threads,
        .local_rank = rt->boot ? rt->boot->local_rank : 0,
        .local_size = rt->boot ? rt->boot->local_size : 1,
        .bind = rt->cfg.bind_threads && !(params && params->no_bind),
        .slice_us = (int)rt->cfg.sched_slice_us,
        .no_spin_yield = !rt->cfg.spin_yield,
        .owner = rt,
    };
    dagger_status_t st = dg_act_system_create(&ap, &rt->actors);
    if (st == DAGGER_OK)
        rt->num_threads = dg_act_system_num_workers(rt->actors);
    if (st == DAGGER_OK && ap.bind && rt->cfg.bind_submitter)
        dg_act_system_bind_caller(rt->actors);
    return st;
}

/* The transport, owned by this thread until init hands it to worker 0. */
static dagger_status_t start_transport(dagger_runtime_t *rt)
{
    dg_tx_params_t p = {
        .boot = rt->boot,
        .cfg = &rt->cfg,
        .wake = dg_tx_engine_wake,
        .wake_ctx = rt->actors,
        .lost_grace_s = DG_LOST_GRACE_S,
    };
    dagger_status_t st = dg_tx_create(&p, &rt->tx);
    if (st == DAGGER_OK)
        st = dg_tx_actors_attach(rt->tx, rt->actors, &rt->txa);
    return st;
}

/* Takes down what is up, in reverse order; safe on a half-built runtime.
 * One exception to the order: the task runtime's memory goes after the
 * workers stopped (a worker may still look at its ready queues), and its
 * transfers still hold transport state, so it goes between the two. */
static dagger_status_t teardown(dagger_runtime_t *rt)
{
    dagger_status_t st = DAGGER_OK;
    dg_tasks_quiet(rt->tasks); /* the devices' stream threads: before the kernel goes */
    if (rt->txa) {
        dg_tx_engine_stop(rt->tx, rt->actors);
        dg_tx_actors_detach(rt->txa);
        rt->txa = NULL;
    }
    /* Data that still comes (from a rank that diverged, or has not seen a
     * loss yet) has been dropped by the executor's transfer layer since
     * dg_tasks_drain (the memory-space actors stopped and were freed after
     * it); from here on the channel drops it, as the layer goes below. */
    if (rt->tx && rt->tasks) {
        dg_tx_close_channel(rt->tx, DG_TX_CH_DATA);
        dg_tx_set_probe(rt->tx, NULL, NULL, NULL); /* the transfer layer's counts go too */
    }
    if (rt->actors)
        dg_act_system_destroy(rt->actors);
    rt->actors = NULL;
    if (rt->tasks)
        dg_tasks_destroy(rt->tasks);
    rt->tasks = NULL;
    if (rt->tx)
        st = dg_tx_destroy(rt->tx);
    rt->tx = NULL;
    if (rt->boot)
        dg_boot_finalize(rt->boot);
    free(rt->boot);
    rt->boot = NULL;
    return st;
}

/* Settings and identity: the bootstrap says which rank this is. */
static dagger_status_t start_identity(dagger_runtime_t *rt, const dagger_params_t *params)
{
    unsigned effects = (params && params->no_signal_handlers ? DG_BOOT_NO_SIGNALS : 0u) |
                       (params && params->no_exit ? DG_BOOT_NO_EXIT : 0u);
    const char *unknown = NULL;
    dagger_status_t st = dg_config_load(&rt->cfg, &unknown);
    if (st != DAGGER_OK)
        return st;
    rt->boot = dg_calloc(1, sizeof(*rt->boot));
    if (!rt->boot)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: out of memory");
    st = dg_boot_init_within(rt->boot, rt->cfg.start_timeout, effects);
    if (st != DAGGER_OK) {
        free(rt->boot);
        rt->boot = NULL;
        return st;
    }
    if (rt->cfg.boot_tag) /* keys of their own for each process a test runner starts */
        snprintf(rt->boot->tag, sizeof(rt->boot->tag), "%s", rt->cfg.boot_tag);
    rt->rank = rt->boot->rank;
    rt->nranks = rt->boot->size;
    dg_log_set_rank(rt->rank, (int)rt->cfg.log_level);
    if (unknown)
        dg_log(DG_LOG_WARN, "unknown settings ignored: %s (dagger-config lists the known ones)", unknown);
    return DAGGER_OK;
}

static dagger_status_t start(dagger_runtime_t *rt, const dagger_params_t *params)
{
    dg_fence_asym_ask_early(); /* the planner needs it; the kernel takes its time */
    dagger_status_t st = start_identity(rt, params);
    if (st == DAGGER_OK)
        st = start_actors(rt, params);
    if (st == DAGGER_OK)
        st = start_transport(rt);
    if (st == DAGGER_OK && dg_handle_add(rt))
        st = dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: too many live runtimes in this process");
    /* The task runtime (planner, executor) runs on the actor workers. */
    if (st == DAGGER_OK)
        st = dg_tasks_create(rt, rt->actors, rt->tx, &rt->tasks);
    /* Every rank's channel handlers are in place before anyone returns and
     * sends: then worker 0 takes the transport over. */
    if (st == DAGGER_OK)
        st = dg_coll_barrier(rt->tx);
    if (st == DAGGER_OK)
        dg_tx_engine_start(rt->tx, rt->actors);
    return st;
}

dagger_status_t dagger_init(int *argc, char ***argv, const dagger_params_t *params,
                            dagger_runtime_t **out)
{
    (void)argc;
    (void)argv;
    DG_CHECK_ARG(out, "dagger_init: the runtime output pointer is NULL");
    *out = NULL;
    DG_CHECK_ARG(!params || params->num_threads >= 0,
                 "dagger_init: num_threads is %d; use 0 for the default or a positive count",
                 params ? params->num_threads : 0);
    if (dg_handle_count(DG_HANDLE_RUNTIME))
        return dg_error(DAGGER_ERR_STATE, "dagger_init: this process already has a live runtime "
                        "(one per process); use it, or dagger_finalize it first");
    dagger_runtime_t *rt = dg_calloc(1, sizeof(*rt));
    if (!rt)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: out of memory");
    dagger_status_t st = start(rt, params);
    if (st != DAGGER_OK) {
        char why[1024];
        snprintf(why, sizeof(why), "%s", dagger_error_detail());
        dg_handle_remove(rt);
        teardown(rt);
        free(rt);
        return dg_error(st, "%s", why);
    }
    *out = rt;
    return DAGGER_OK;
}

dagger_status_t dagger_finalize(dagger_runtime_t *rt)
{
    if (!dg_runtime_ok(rt))
        return dg_error(DAGGER_ERR_BAD_HANDLE, "dagger_finalize: not a live runtime handle (NULL or already finalized)");
    if (dg_act_current_ctx())
        return dg_error(DAGGER_ERR_STATE,
                        "dagger_finalize: called from an actor's handler, whose worker it would have "
                        "to join; call it from the thread that called dagger_init");
    dagger_status_t in_task = dg_spmd_allowed("dagger_finalize");
    if (in_task != DAGGER_OK)
        return in_task;
    /* A region still open is ended here (every rank left it open at the
     * same point, so its end is collective as usual), and said so. */
    uint64_t open_region = rt->tasks && rt->tasks->region ? rt->tasks->region->id : 0;
    dagger_status_t region_st = open_region ? dagger_region_end(rt->tasks->region) : DAGGER_OK;
    /* Tasks finish and actors stop while the workers (and worker 0's
     * transport progress) still run: on_stop may still send. */
    dg_tasks_drain(rt->tasks);
    dg_act_system_stop_all(rt->actors);
    /* Every rank is done with tasks and actors before routes go away; ranks
     * finishing at different times wait here asleep. */
    dagger_status_t st = dg_coll_barrier_final(rt->tx);
    char why[1024] = "";
    if (st != DAGGER_OK)
        snprintf(why, sizeof(why), "%s", dagger_error_detail());
    dg_handle_remove(rt);
    dagger_status_t down = teardown(rt);
    if (st == DAGGER_OK && down != DAGGER_OK) {
        st = down;
        snprintf(why, sizeof(why), "%s", dagger_error_detail());
    }
    free(rt);
    if (st != DAGGER_OK)
        return dg_error(st, "dagger_finalize: %s", why);
    if (open_region)
        return dg_error(DAGGER_ERR_STATE, "dagger_finalize: region %llu was still open; it was "
                        "ended here (its tasks ran, its end returned %s) and the runtime is "
                        "finalized: call dagger_region_end before dagger_finalize",
                        (unsigned long long)open_region, dagger_strerror(region_st));
    return DAGGER_OK;
}

int dagger_rank(const dagger_runtime_t *rt)
{
    return dg_runtime_ok(rt) ? rt->rank : -1;
}

int dagger_nranks(const dagger_runtime_t *rt)
{
    return dg_runtime_ok(rt) ? rt->nranks : -1;
}

int dagger_num_threads(const dagger_runtime_t *rt)
{
    return dg_runtime_ok(rt) ? rt->num_threads : -1;
}
