/* Which cores the workers may use: the process binding read with hwloc, so
 * a launcher's binding (mpirun --bind-to core, srun --cpu-bind) is respected. */
#ifndef DG_ACT_TOPOLOGY_H
#define DG_ACT_TOPOLOGY_H

#include <dagger/status.h>
#include <hwloc.h>

/* The hwloc plugins the runtime does not need, which hwloc would dlopen when
 * a process makes its first topology: XML import through libxml2 (which
 * pulls in ICU), OpenCL and GL (X11) devices. Loading them was half the
 * instructions of a singleton's dagger_init + dagger_finalize (9M of 18M,
 * docs/benchmarks.md, "Start-up and shutdown"). The PCI plugin stays: device
 * locality (devices/dev_locality.c) reads the PCI tree. */
#define DG_TOPO_SKIP_PLUGINS "hwloc_gl,hwloc_opencl,hwloc_xml_libxml"

typedef struct dg_topo {
    hwloc_topology_t topo;
    int ncores;              /* cores that intersect the process binding */
    hwloc_bitmap_t *cores;   /* per core: its PUs within the binding */
    int shared;              /* 1: the process took its share of an unbound node */
} dg_topo_t;

/* Loads the topology and the process binding. Unless the user set
 * HWLOC_PLUGINS_BLACKLIST (even to nothing: then every plugin loads), the
 * plugins of DG_TOPO_SKIP_PLUGINS are not loaded: the variable is set for
 * hwloc_topology_init and removed again, so call this before the program
 * starts threads that read the environment (dagger_init's rule).
 *
 * When the launcher did not bind the process (its binding is every allowed
 * PU) and local_size processes of the job share this node, the process
 * takes its share of the cores: local rank r of s gets cores
 * [r*n/s, (r+1)*n/s) of n, or core r mod n when there are more processes
 * than cores, so unbound ranks do not pile onto core 0. DAGGER_ERR_SYSTEM on
 * failure. */
dagger_status_t dg_topo_init(dg_topo_t *t, int local_rank, int local_size);
void dg_topo_cleanup(dg_topo_t *t);

/* Pins the calling thread to core (i mod ncores) of the binding; 0 on
 * success, -1 (errno set) when the OS refuses. */
int dg_topo_bind_self(dg_topo_t *t, int i);

/* When the process took its share of the cores (dg_topo_init), pins the
 * calling thread to that share (every core of it) and saves the thread's
 * binding before in saved; 1 when it did, 0 when there is no share or the OS
 * refused (nothing changed). */
int dg_topo_bind_share(dg_topo_t *t, hwloc_bitmap_t saved);

/* Puts back, on the calling thread, a binding dg_topo_bind_share saved (0,
 * or -1 when the OS refused). */
int dg_topo_unbind_share(dg_topo_t *t, hwloc_const_bitmap_t saved);

#endif
