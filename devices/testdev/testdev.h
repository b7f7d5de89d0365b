/* The test device kind's own calls (besides dg_testdev_backend). */
#ifndef DG_DEV_TESTDEV_H
#define DG_DEV_TESTDEV_H

#include <stdint.h>

#include "devices/common/device.h"

/* How many test devices this process has (DAGGER_TEST_DEVICES; set at init
 * before discovery). */
void dg_testdev_configure(int n);
/* Test device memory allocated now, over every test device (tests). */
void dg_testdev_stats(int64_t *bytes, int64_t *blocks);

/* The kind's IPC calls (testdev_ipc.c; device.h says what each does). */
#define DG_TESTDEV_IPC_HANDLE 32
dagger_status_t dg_testdev_ipc_alloc(int dev, size_t bytes, void **ptr);
void dg_testdev_ipc_free(int dev, void *ptr);
dagger_status_t dg_testdev_ipc_export(int dev, void *ptr, void *handle);
dagger_status_t dg_testdev_ipc_open(int dev, const void *handle, void **ptr);
void dg_testdev_ipc_close(int dev, void *ptr);
/* Test-only fault injection: the k-th ipc_open of this process from now
 * fails (k >= 1); 0 disarms. */
void dg_testdev_ipc_fail_open(long k);
/* Test-only: with 0, this process's test devices have no peer access, as
 * GPUs of one node without it: they refuse to open the IPC handles of test
 * devices of another index (the start-up probe then stages their transfers
 * between ranks through host memory), and peer_enable refuses (copies
 * between the devices of a rank stage through host memory). 1 (the
 * default): they have it. Set before dagger_init. */
void dg_testdev_peers(int on);
int dg_testdev_peers_on(void);

#endif
