/* Where a device sits: the cores and NUMA node closest to its PCI bus id,
 * from hwloc's I/O topology (common to every device kind: backends report
 * the bus id, this finds its neighbourhood). */
#include "devices/discover.h"

#include <hwloc.h>
#include <stdio.h>
#include <string.h>

/* The PCI device's first non-I/O ancestor holds the cores near it. */
static int locate(hwloc_topology_t topo, const char *busid, int32_t *numa, char *cpus,
                  size_t cap)
{
    hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(topo, busid);
    hwloc_obj_t near = pci ? hwloc_get_non_io_ancestor_obj(topo, pci) : NULL;
    if (!near || !near->cpuset)
        return 0;
    if (cpus && cap)
        hwloc_bitmap_list_snprintf(cpus, cap, near->cpuset);
    if (numa)
        *numa = near->nodeset ? hwloc_bitmap_first(near->nodeset) : -1;
    return 1;
}

int dg_dev_locality_n(const char *const *busids, int n, int32_t *numa, char (*cpus)[64])
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return 0;
    int found = 0;
    /* Every PCI device (a GPU is important anyway; others let the tests
     * check this on machines without one), bridges only where they matter.
     * The Linux backend reads them from sysfs; the plugins (libpciaccess's
     * name database, OpenCL, GL) add nothing a bus id needs, cost seconds
     * and leave memory behind. */
    static const char *skip[] = {"pci", "opencl", "gl"};
    for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
        hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, skip[i]);
    if (hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) == 0 &&
        hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL) ==
            0 &&
        hwloc_topology_load(topo) == 0)
        for (int i = 0; i < n; i++)
            found += busids[i] && busids[i][0] &&
                     locate(topo, busids[i], &numa[i], cpus ? cpus[i] : NULL, cpus ? 64 : 0);
    hwloc_topology_destroy(topo);
    return found;
}

void dg_dev_locality(dg_dev_table_t *t)
{
    const char *ids[DG_DEV_MAX];
    int32_t numa[DG_DEV_MAX];
    char cpus[DG_DEV_MAX][64];
    int need = 0;
    for (int i = 0; i < t->n; i++) {
        const dg_dev_info_t *in = &t->dev[i].info;
        int unknown = in->pci_bus_id[0] && (in->numa_node < 0 || !in->cpus[0]);
        ids[i] = unknown ? in->pci_bus_id : NULL;
        numa[i] = in->numa_node;
        snprintf(cpus[i], sizeof(cpus[i]), "%s", in->cpus);
        need += unknown;
    }
    if (!need || !dg_dev_locality_n(ids, t->n, numa, cpus)) /* no topology load without need */
        return;
    for (int i = 0; i < t->n; i++) {
        dg_dev_info_t *in = &t->dev[i].info;
        if (!ids[i])
            continue;
        if (in->numa_node < 0)
            in->numa_node = numa[i];
        if (!in->cpus[0])
            snprintf(in->cpus, sizeof(in->cpus), "%s", cpus[i]);
    }
}
