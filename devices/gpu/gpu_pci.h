/* Where a GPU sits on the PCI bus, and what is close to it: the NUMA node
 * and the cores that Linux reports for its PCI function. Shared by the CUDA
 * and HIP backends (their runtimes give the bus id, nothing more). */
#ifndef DG_DEV_GPU_PCI_H
#define DG_DEV_GPU_PCI_H

#include <stddef.h>
#include <stdint.h>

/* Rewrites a bus id as the runtimes print it ("00000000:3B:00.0",
 * "0000:3b:00.0") into sysfs's form ("0000:3b:00.0"). Returns 0, or -1 when
 * it is not of the form domain:bus:device.function (out is then ""). */
int dg_gpu_pci_normalize(const char *busid, char *out, size_t cap);

/* Reads /sys/bus/pci/devices/<busid>/numa_node and local_cpulist: numa is
 * -1 and cpus "" when Linux does not say (no such device, no NUMA). */
void dg_gpu_pci_locality(const char *busid, int32_t *numa, char *cpus, size_t cap);

#endif
