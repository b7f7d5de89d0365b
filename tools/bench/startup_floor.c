/* The floor of a Dagger-C process's start-up and shutdown, for
 * bench_startup: what any program using this machine's hwloc and UCX pays,
 * and nothing of Dagger-C. It loads the hwloc topology, creates a UCP
 * context with active messages and RMA and one worker (with a wake-up fd, as
 * the runtime's), and takes them down again. No PMIx: a singleton (no
 * PMIX_NAMESPACE) never calls PMIx_Init, so a singleton's floor has none.
 * It links only hwloc and UCX, so its process load is theirs. Like the
 * runtime (actors/topology.c), it keeps hwloc from loading the plugins of
 * DG_TOPO_SKIP_PLUGINS, and it changes the UCX defaults the runtime changes
 * (transport/tx_ucx_defaults.h), so that the floor is what the runtime
 * could reach. */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "actors/topology.h"
#include "transport/tx_ucx_defaults.h"
#include <ucp/api/ucp.h>

static int ucp_up_down(void)
{
    ucp_config_t *cfg = NULL;
    if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK)
        return 1;
    (void)dg_tx_ucx_defaults(cfg, NULL);
    ucp_params_t p = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                      .features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP};
    ucp_context_h ctx = NULL;
    ucs_status_t s = ucp_init(&p, cfg, &ctx);
    ucp_config_release(cfg);
    if (s != UCS_OK)
        return 1;
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SERIALIZED};
    ucp_worker_h w = NULL;
    s = ucp_worker_create(ctx, &wp, &w);
    if (s == UCS_OK)
        ucp_worker_destroy(w);
    ucp_cleanup(ctx);
    return s != UCS_OK;
}

int main(void)
{
    hwloc_topology_t topo;
    if (!getenv("HWLOC_PLUGINS_BLACKLIST"))
        setenv("HWLOC_PLUGINS_BLACKLIST", DG_TOPO_SKIP_PLUGINS, 0);
    if (hwloc_topology_init(&topo) || hwloc_topology_load(topo)) {
        fprintf(stderr, "startup_floor: hwloc topology load failed\n");
        return 1;
    }
    int bad = ucp_up_down();
    hwloc_topology_destroy(topo);
    if (bad)
        fprintf(stderr, "startup_floor: UCP context or worker failed\n");
    return bad;
}
