/* The host device kind: the CPU processor actors (host_proc.c) and the host
 * memory-space actor (host_space.c), handlers of the executor's messages
 * (core/exec/msgs.h). devices/dev_setup.c starts them with the executor. */
#ifndef DG_DEV_HOST_H
#define DG_DEV_HOST_H

#include <dagger/status.h>

struct dg_exec;

/* Spawns the CPU processor actors of ex: one per worker, pinned to it, and
 * one for the submitting thread; fills ex->proc and ex->proc_turn. */
dagger_status_t dg_host_procs_start(struct dg_exec *ex);

/* Spawns the host memory-space actors of ex (space 0, its lanes) and fills
 * ex->space_actor[0]. The executor registered its message types first
 * (ex->msg). */
dagger_status_t dg_host_space_start(struct dg_exec *ex);

#endif
