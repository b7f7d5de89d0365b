/* Which cores the workers may use: the process binding read with hwloc, so
 * a launcher's binding (mpirun --bind-to core, srun --cpu-bind) is respected. */
#ifndef DG_ACT_TOPOLOGY_H
#define DG_ACT_TOPOLOGY_H

#include <dagger/status.h>
#include <hwloc.h>

typedef struct dg_topo {
    hwloc_topology_t topo;
    int ncores;              /* cores that intersect the process binding */
    hwloc_bitmap_t *cores;   /* per core: its PUs within the binding */
} dg_topo_t;

/* Loads the topology and the process binding. DAGGER_ERR_SYSTEM on failure. */
dagger_status_t dg_topo_init(dg_topo_t *t);
void dg_topo_cleanup(dg_topo_t *t);

/* Pins the calling thread to core (i mod ncores) of the binding; 0 on
 * success, -1 (errno set) when the OS refuses. */
int dg_topo_bind_self(dg_topo_t *t, int i);

#endif
