/* The locality of a PCI function, from sysfs. hwloc would find the same
 * (its PCI objects read these files) but needs a topology load with I/O
 * objects, tens of milliseconds at every init, for two values. */
#include "devices/gpu/gpu_pci.h"

#include <stdio.h>
#include <string.h>

int dg_gpu_pci_normalize(const char *busid, char *out, size_t cap)
{
    unsigned dom, bus, dev, fn;
    int used = 0;
    if (cap)
        out[0] = '\0';
    /* hex digits and separators only: %x alone would take "0x", signs and
     * spaces */
    if (!busid || busid[strspn(busid, "0123456789abcdefABCDEF:.")] != '\0' ||
        sscanf(busid, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &used) != 4 ||
        busid[used] != '\0' || dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
        return -1;
    int n = snprintf(out, cap, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* The first line of /sys/bus/pci/devices/<busid>/<file>, without its
 * newline; 0 when the file exists and is not empty. */
static int read_attr(const char *busid, const char *file, char *buf, size_t cap)
{
    char path[160];
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/%s", busid, file);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *got = fgets(buf, (int)cap, f);
    fclose(f);
    if (!got)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return buf[0] ? 0 : -1;
}

void dg_gpu_pci_locality(const char *busid, int32_t *numa, char *cpus, size_t cap)
{
    char buf[64];
    int node = -1;
    *numa = -1;
    if (cap)
        cpus[0] = '\0';
    if (!busid || !busid[0] || strchr(busid, '/'))
        return;
    /* Linux writes -1 when the platform has no NUMA information. */
    if (read_attr(busid, "numa_node", buf, sizeof buf) == 0 && sscanf(buf, "%d", &node) == 1 &&
        node >= 0)
        *numa = node;
    if (cap && read_attr(busid, "local_cpulist", buf, sizeof buf) == 0 && strlen(buf) < cap)
        memcpy(cpus, buf, strlen(buf) + 1);
}
