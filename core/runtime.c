/* dagger_init / dagger_finalize: bring the subsystems up in order and take
 * them down in exact reverse order. */
#include "core/runtime.h"

#include <stdlib.h>

#include "actors/system.h"
#include "core/api/tasks.h"
#include "core/log.h"
#include "core/status_internal.h"

/* Worker count and pinning: dagger_params_t overrides DAGGER_NUM_THREADS and
 * DAGGER_BIND_THREADS. */
static dagger_status_t start_actors(dagger_runtime_t *rt, const dagger_params_t *params)
{
    if (rt->cfg.num_threads < 0 || rt->cfg.num_threads > 4096)
        return dg_error(DAGGER_ERR_CONFIG,
                        "DAGGER_NUM_THREADS=%lld: use 0 (one per core of the process binding) or a "
                        "count from 1 to 4096", rt->cfg.num_threads);
    dg_act_params_t ap = {
        .rank = rt->rank,
        .nranks = rt->nranks,
        .num_threads = params && params->num_threads ? params->num_threads : (int)rt->cfg.num_threads,
        .bind = rt->cfg.bind_threads && !(params && params->no_bind),
        .owner = rt,
    };
    dagger_status_t st = dg_act_system_create(&ap, &rt->actors);
    if (st == DAGGER_OK)
        rt->num_threads = dg_act_system_num_workers(rt->actors);
    return st;
}

dagger_status_t dagger_init(int *argc, char ***argv, const dagger_params_t *params,
                            dagger_runtime_t **out)
{
    (void)argc;
    (void)argv;
    DG_CHECK_ARG(out, "dagger_init: the runtime output pointer is NULL");
    DG_CHECK_ARG(!params || params->num_threads >= 0,
                 "dagger_init: num_threads is %d; use 0 for the default or a positive count",
                 params ? params->num_threads : 0);
    *out = NULL;
    dagger_runtime_t *rt = calloc(1, sizeof(*rt));
    if (!rt)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: out of memory");
    const char *unknown = NULL;
    dagger_status_t st = dg_config_load(&rt->cfg, &unknown);
    if (st != DAGGER_OK) {
        free(rt);
        return st;
    }
    rt->rank = 0;
    rt->nranks = 1;
    dg_log_set_rank(rt->rank, (int)rt->cfg.log_level);
    if (unknown)
        dg_log(DG_LOG_WARN, "unknown settings ignored: %s (dagger-config lists the known ones)", unknown);
    st = start_actors(rt, params);
    if (st != DAGGER_OK) {
        free(rt);
        return st;
    }
    if (dg_handle_add(rt)) {
        if (rt->actors)
            dg_act_system_destroy(rt->actors);
        free(rt);
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: too many live runtimes in this process");
    }
    /* The task runtime (planner, executor) runs on the actor workers. */
    st = dg_tasks_create(rt, rt->actors, NULL, &rt->tasks);
    if (st != DAGGER_OK) {
        dg_handle_remove(rt);
        dg_act_system_destroy(rt->actors);
        free(rt);
        return st;
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
    /* Tasks finish while the workers run; their memory goes after the
     * workers stopped (a worker may still look at the ready queues). */
    dg_tasks_drain(rt->tasks);
    /* Actors stop while the handle is still live: on_stop may still send. */
    if (rt->actors)
        dg_act_system_destroy(rt->actors);
    rt->actors = NULL;
    dg_tasks_destroy(rt->tasks);
    rt->tasks = NULL;
    dg_handle_remove(rt);
    free(rt);
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
