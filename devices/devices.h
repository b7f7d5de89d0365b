/* devices/: the processor and memory-space actors of a rank, per device
 * kind (host/, testdev/, cuda/, hip/ over common/device.h), above the
 * executor. The task runtime calls dg_devices_start after dg_exec_create and
 * before dg_exec_start (core/runtime/tasks.c); the executor reaches them
 * through the messages it defines (core/exec/msgs.h) and the hooks given
 * to it here (dg_exec_devices_t). */
#ifndef DG_DEV_DEVICES_H
#define DG_DEV_DEVICES_H

#include <dagger/status.h>
#include <stddef.h>
#include <stdint.h>

#include "core/exec/exec.h"
#include "devices/discover.h"

/* The settings of a rank's devices. */
typedef struct dg_devices_params {
    int gpu_direct;              /* DAGGER_GPU_DIRECT: 1 on, 0 off, -1 auto */
    const char *wake;            /* DAGGER_GPU_WAKE: "armed" (or NULL) or "each" (else
                                    DAGGER_ERR_CONFIG) */
    int priority;                /* DAGGER_GPU_PRIORITY: tasks with a priority above 0 run on
                                    urgent streams of their own (as many as streams) */
    int chain;                   /* DAGGER_GPU_CHAIN: a task is queued behind the events of the
                                    tasks of its device that it depends on, without waiting for
                                    them to be seen finished */
    long long streams;           /* DAGGER_GPU_STREAMS: streams of each device's processor
                                    actor, 1 to DG_DEV_STREAMS_MAX (else DAGGER_ERR_CONFIG) */
    size_t piece;                /* DAGGER_GPU_PIPELINE_PIECE: host-staged transfers between
                                    ranks above this many bytes go in pieces of it; 0 never */
    size_t pin_min;              /* DAGGER_GPU_PIN_HOST: with devices, host buffers of at least
                                    this many bytes are pinned memory of the first GPU's
                                    runtime, or of the first device's where there is no GPU;
                                    0 never */
    const uint64_t *ipc_domains; /* every rank's devices' IPC domains (dg_dev_ipc_domain),
                                    DG_DEV_MAX per rank, as published at start-up; NULL: no
                                    IPC (device transfers between ranks go host-staged) */
} dg_devices_params_t;

/* Registers the devices' message types, spawns the host actors (the host
 * memory-space actor first: the same actor id on every rank, which peers
 * address their transfers to; then the CPU processors) and the two actors
 * of every device of t, and gives the executor its device hooks. On
 * failure, dg_exec_destroy frees what was started. */
dagger_status_t dg_devices_start(dg_exec_t *ex, const dg_dev_table_t *t,
                                 const dg_devices_params_t *p);

#endif
