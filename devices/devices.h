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

struct dg_tx;

/* Which devices of two ranks move data between them through IPC handles
 * (dev_ipc.c) rather than host-staged: the same device of one node (equal
 * domains), or different devices of one node (equal nodes) where the
 * start-up probe showed that the receiver reads the sender's handles
 * (dev_ipc_probe.c). Built at init from what every rank published, the same
 * on both ends of every transfer. */
typedef struct dg_dev_ipc_map {
    int nranks;
    uint64_t *domains;           /* DG_DEV_MAX per rank (dg_dev_ipc_domain); 0: no IPC */
    uint64_t *nodes;             /* likewise (dg_dev_ipc_node) */
    uint64_t *opened;            /* the probe's pairs that passed and involve this rank,
                                    sorted (dev_ipc_probe.c's keys) */
    size_t nopened;
    uint32_t probed, failed;     /* pairs this rank's devices tried, and those that failed */
} dg_dev_ipc_map_t;

/* 1: transfers from send_rank's device send_dev to recv_rank's recv_dev go
 * through IPC handles. */
int dg_dev_ipc_map_can(const dg_dev_ipc_map_t *m, int send_rank, int send_dev, int recv_rank,
                       int recv_dev);
/* 1 when m's table has two ranks' devices of one node and different
 * domains (the probe has pairs to try), 0 not, -1 out of memory. */
int dg_dev_ipc_probe_needed(const dg_dev_ipc_map_t *m);
/* The start-up probe (two allgathers over tx, every rank at once, only when
 * dg_dev_ipc_probe_needed): fills m->opened. m's domains and nodes are
 * every rank's as published; devs is this rank's. A pair that fails is no
 * error (it goes host-staged; logged at info level); errors are the
 * collectives' and malformed probe messages, the same on every rank. */
dagger_status_t dg_dev_ipc_probe(struct dg_tx *tx, const dg_dev_table_t *devs, int rank,
                                 dg_dev_ipc_map_t *m);
void dg_dev_ipc_map_free(dg_dev_ipc_map_t *m);

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
    int peer;                    /* DAGGER_GPU_PEER: copies between the rank's devices go device
                                    to device where they have peer access (else host-staged) */
    long long streams;           /* DAGGER_GPU_STREAMS: streams of each device's processor
                                    actor, 1 to DG_DEV_STREAMS_MAX (else DAGGER_ERR_CONFIG) */
    size_t piece;                /* DAGGER_GPU_PIPELINE_PIECE: host-staged transfers between
                                    ranks above this many bytes go in pieces of it; 0 never */
    size_t pin_min;              /* DAGGER_GPU_PIN_HOST: with devices, host buffers of at least
                                    this many bytes are pinned memory of the first GPU's
                                    runtime, or of the first device's where there is no GPU;
                                    0 never */
    const dg_dev_ipc_map_t *ipc; /* which device pairs of two ranks go through IPC handles;
                                    NULL: none (device transfers between ranks go
                                    host-staged) */
} dg_devices_params_t;

/* Registers the devices' message types, spawns the host actors (the host
 * memory-space actor first: the same actor id on every rank, which peers
 * address their transfers to; then the CPU processors) and the two actors
 * of every device of t, and gives the executor its device hooks. On
 * failure, dg_exec_destroy frees what was started. */
dagger_status_t dg_devices_start(dg_exec_t *ex, const dg_dev_table_t *t,
                                 const dg_devices_params_t *p);

#endif
