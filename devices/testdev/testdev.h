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
/* Test-only: with 0, this process's test devices refuse to open the IPC
 * handles of test devices of another index, as GPUs of one node without
 * peer access do (the start-up probe then sends their transfers through
 * host memory); 1 (the default) opens them. Set before dagger_init. */
void dg_testdev_ipc_peers(int on);

#endif
