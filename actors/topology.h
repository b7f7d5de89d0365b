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

/* Loads the topology and the process binding. When the launcher did not bind
 * the process (its binding is every allowed PU) and local_size processes of
 * the job share this node, the process takes its share of the cores: local
 * rank r of s gets cores [r*n/s, (r+1)*n/s) of n, or core r mod n when there
 * are more processes than cores, so unbound ranks do not pile onto core 0.
 * DAGGER_ERR_SYSTEM on failure. */
dagger_status_t dg_topo_init(dg_topo_t *t, int local_rank, int local_size);
void dg_topo_cleanup(dg_topo_t *t);

/* Pins the calling thread to core (i mod ncores) of the binding; 0 on
 * success, -1 (errno set) when the OS refuses. */
int dg_topo_bind_self(dg_topo_t *t, int i);

#endif
