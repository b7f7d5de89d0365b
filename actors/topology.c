/* Process binding and thread pinning with hwloc. */
#include "actors/topology.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/status_internal.h"

/* The PUs this process may run on: its binding, or every allowed PU when
 * the binding cannot be read. */
static hwloc_bitmap_t process_binding(hwloc_topology_t topo)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return NULL;
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(set))
        hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(topo));
    return set;
}

/* One cpuset per core that intersects the binding, in topology order. */
static int collect_cores(dg_topo_t *t, hwloc_const_bitmap_t binding)
{
    int n = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE);
    hwloc_obj_type_t type = HWLOC_OBJ_CORE;
    if (n <= 0) { /* some virtual machines report no cores: use PUs */
        type = HWLOC_OBJ_PU;
        n = hwloc_get_nbobjs_by_type(t->topo, type);
    }
    t->cores = dg_calloc((size_t)(n > 0 ? n : 1), sizeof(*t->cores));
    if (!t->cores)
        return -1;
    t->ncores = 0;
    for (int i = 0; i < n; i++) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(t->topo, type, (unsigned)i);
        if (!obj || !hwloc_bitmap_intersects(obj->cpuset, binding))
            continue;
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (!set)
            return -1;
        hwloc_bitmap_and(set, obj->cpuset, binding);
        t->cores[t->ncores++] = set;
    }
    if (t->ncores == 0) { /* the binding names no known core: use it whole */
        t->cores[0] = hwloc_bitmap_dup(binding);
        if (!t->cores[0])
            return -1;
        t->ncores = 1;
    }
    return 0;
}

/* Keeps this process's share of the cores (see dg_topo_init). */
static void take_share(dg_topo_t *t, int local_rank, int local_size)
{
    int n = t->ncores, lo, hi;
    if (local_size <= 1 || local_rank < 0 || local_rank >= local_size)
        return;
    if (n >= local_size) {
        lo = (int)((long)local_rank * n / local_size);
        hi = (int)((long)(local_rank + 1) * n / local_size);
    } else {
        lo = local_rank % n;
        hi = lo + 1;
    }
    for (int i = 0; i < n; i++)
        if (i < lo || i >= hi)
            hwloc_bitmap_free(t->cores[i]);
    memmove(t->cores, t->cores + lo, (size_t)(hi - lo) * sizeof(*t->cores));
    t->ncores = hi - lo;
    t->shared = 1;
}

/* hwloc reads HWLOC_PLUGINS_BLACKLIST when its first topology of the
 * process is made (later ones reuse the plugins loaded then). */
static int topology_init(hwloc_topology_t *topo)
{
    int set = !getenv("HWLOC_PLUGINS_BLACKLIST") &&
              setenv("HWLOC_PLUGINS_BLACKLIST", DG_TOPO_SKIP_PLUGINS, 0) == 0;
    int rc = hwloc_topology_init(topo);
    if (set)
        unsetenv("HWLOC_PLUGINS_BLACKLIST");
    return rc;
}

dagger_status_t dg_topo_init(dg_topo_t *t, int local_rank, int local_size)
{
    memset(t, 0, sizeof(*t));
    if (topology_init(&t->topo) != 0)
        return dg_error(DAGGER_ERR_SYSTEM, "hwloc_topology_init failed");
    if (hwloc_topology_load(t->topo) != 0) {
        hwloc_topology_destroy(t->topo);
        return dg_error(DAGGER_ERR_SYSTEM, "hwloc_topology_load failed");
    }
    hwloc_bitmap_t binding = process_binding(t->topo);
    int rc = binding ? collect_cores(t, binding) : -1;
    if (rc == 0 && hwloc_bitmap_isequal(binding, hwloc_topology_get_allowed_cpuset(t->topo)))
        take_share(t, local_rank, local_size);
    hwloc_bitmap_free(binding);
    if (rc != 0) {
        dg_topo_cleanup(t);
        return dg_error(DAGGER_ERR_NO_MEMORY, "no memory for the core list of the process binding");
    }
    return DAGGER_OK;
}

void dg_topo_cleanup(dg_topo_t *t)
{
    for (int i = 0; t->cores && i < t->ncores; i++)
        hwloc_bitmap_free(t->cores[i]);
    free(t->cores);
    t->cores = NULL;
    if (t->topo)
        hwloc_topology_destroy(t->topo);
    t->topo = NULL;
}

int dg_topo_bind_self(dg_topo_t *t, int i)
{
    return hwloc_set_cpubind(t->topo, t->cores[i % t->ncores], HWLOC_CPUBIND_THREAD);
}

int dg_topo_bind_share(dg_topo_t *t, hwloc_bitmap_t saved)
{
    if (!t->shared || !t->cores || !saved)
        return 0;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return 0;
    for (int i = 0; i < t->ncores; i++)
        hwloc_bitmap_or(set, set, t->cores[i]);
    int ok = hwloc_get_cpubind(t->topo, saved, HWLOC_CPUBIND_THREAD) == 0 &&
             hwloc_set_cpubind(t->topo, set, HWLOC_CPUBIND_THREAD) == 0;
    hwloc_bitmap_free(set);
    return ok;
}

int dg_topo_unbind_share(dg_topo_t *t, hwloc_const_bitmap_t saved)
{
    return hwloc_set_cpubind(t->topo, saved, HWLOC_CPUBIND_THREAD) == 0 ? 0 : -1;
}
