/* dagger_init / dagger_finalize: bring the subsystems up in order and take
 * them down in exact reverse order. */
#include "core/runtime.h"

#include <stdlib.h>

#include "core/log.h"
#include "core/status_internal.h"

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
    if (dg_handle_add(rt)) {
        free(rt);
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: too many live runtimes in this process");
    }
    *out = rt;
    return DAGGER_OK;
}

dagger_status_t dagger_finalize(dagger_runtime_t *rt)
{
    if (!dg_runtime_ok(rt))
        return dg_error(DAGGER_ERR_BAD_HANDLE, "dagger_finalize: not a live runtime handle (NULL or already finalized)");
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
