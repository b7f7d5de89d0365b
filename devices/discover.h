/* Device discovery at init: the devices of this rank, of every backend
 * compiled in, in the order that numbers their memory spaces (CUDA, HIP,
 * then test devices; space 1 + i is device i of this list). */
#ifndef DG_DEV_DISCOVER_H
#define DG_DEV_DISCOVER_H

#include <dagger/status.h>
#include <stdint.h>

#include "devices/common/device.h"

#define DG_DEV_MAX 15 /* memory spaces 1..15 (DG_MAX_SPACES) */

typedef struct dg_dev_found {
    const dg_dev_backend_t *be;
    int index;                   /* the backend's device index */
    dg_dev_info_t info;
} dg_dev_found_t;

typedef struct dg_dev_table {
    int n;
    dg_dev_found_t dev[DG_DEV_MAX];
    char summary[512];           /* what was found, and why not ("CUDA: not built; ...") */
} dg_dev_table_t;

/* Counts and describes the devices of every compiled backend. test_devices:
 * DAGGER_TEST_DEVICES (0-15). Errors: DAGGER_ERR_CONFIG (test_devices out
 * of range), a backend's info failing. */
dagger_status_t dg_dev_discover(long long test_devices, dg_dev_table_t *out);

/* The IPC domain of a found device on host `host`: one physical device of
 * one host (host name and PCI bus id for the GPU kinds; host name and index
 * for test devices, so that test device i of every rank of a host stands for
 * GPU i of a node). Two devices of two ranks with the same non-zero domain
 * move data between them through IPC handles. 0 when the kind has no IPC
 * calls or `on` is 0 (DAGGER_GPU_IPC=0). Every rank publishes its devices'
 * domains at start-up, so both ends of a transfer decide alike. */
uint64_t dg_dev_ipc_domain(const dg_dev_found_t *f, const char *host, int on);
/* Its IPC node: the devices of its kind on host `host` (0 likewise). Two
 * devices of one node but different domains move data through IPC handles
 * only where the start-up probe (dev_ipc_probe.c) showed that the receiver
 * opens and reads the sender's handles. */
uint64_t dg_dev_ipc_node(const dg_dev_found_t *f, const char *host, int on);

/* Fills the NUMA node and nearby cores of the devices whose backend gave a
 * PCI bus id but left those unknown (hwloc's I/O topology, loaded only
 * then; dev_locality.c). */
void dg_dev_locality(dg_dev_table_t *t);
/* The same for n bus ids ("0000:3b:00.0"; NULL or "" skipped): numa[i] and
 * cpus[i] are written for the ones found. Returns how many were found. */
int dg_dev_locality_n(const char *const *busids, int n, int32_t *numa, char (*cpus)[64]);

#endif
