/* dagger-config: prints every DAGGER_* setting with its default, the value in
 * this environment and what it does. */
#include <stdio.h>

#include "core/base/config.h"
#include "devices/discover.h"

int main(void)
{
    const char *unknown = NULL;
    dg_config_t cfg;
    dagger_status_t st = dg_config_load(&cfg, &unknown);
    dg_config_print(stdout);
    dg_dev_table_t devs;
    if (st == DAGGER_OK)
        st = dg_dev_discover(cfg.test_devices, &devs); /* a bad device setting is said below */
    if (st == DAGGER_OK) {
        printf("\ndevices of this process: %s\n", devs.summary);
        for (int i = 0; i < devs.n; i++) {
            const dg_dev_info_t *d = &devs.dev[i].info;
            /* transfers to ranks of this host with the same domain go through IPC
             * handles (the runtime hashes the launcher's host name; any name
             * says whether there is a domain at all) */
            const char *ipc = !dg_dev_ipc_domain(&devs.dev[i], "host", (int)cfg.gpu_ipc)
                                  ? (!cfg.gpu_ipc ? "no IPC (DAGGER_GPU_IPC=0)"
                                                  : "no IPC (the kind has none, or no PCI bus id)")
                              : devs.dev[i].be->kind == DG_DEV_TEST
                                  ? "IPC with the test device of this index of other ranks of "
                                    "this host, and with their other test devices where the "
                                    "start-up probe reads their handles"
                                  : "IPC with other ranks of this host on the same GPU, and on "
                                    "other GPUs where the start-up probe reads their handles";
            printf("  space %d: %s, %llu MiB%s%s, NUMA node %d, cores %s; %s\n", i + 1,
                   d->name, (unsigned long long)(d->mem_bytes >> 20),
                   d->pci_bus_id[0] ? ", PCI " : "", d->pci_bus_id, (int)d->numa_node,
                   d->cpus[0] ? d->cpus : "unknown", ipc);
        }
    }
    if (unknown)
        printf("\nunknown settings in this environment (ignored): %s\n", unknown);
    if (st != DAGGER_OK) {
        fprintf(stderr, "dagger-config: %s\n", dagger_error_detail());
        return 1;
    }
    return 0;
}
