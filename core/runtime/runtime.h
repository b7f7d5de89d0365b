/* The runtime object: one per process, owning every subsystem. Each layer
 * hangs its state off this struct; nothing else is global. */
#ifndef DG_RUNTIME_H
#define DG_RUNTIME_H

#include <dagger/runtime.h>
#include <stdint.h>

#include "core/base/config.h"
#include "core/base/handles.h"

struct dg_act_system;
struct dg_tasks;
struct dg_boot;
struct dg_tx;
struct dg_tx_actors;

/* Brought up by dagger_init in this order: settings, bootstrap (rank and
 * size), actor system, transport (actor worker 0 drives it once init is
 * done), actor routing, task runtime. */
struct dagger_runtime {
    int rank;
    int nranks;
    int num_threads;
    dg_config_t cfg;
    struct dg_boot *boot;    /* PMIx or singleton (transport/bootstrap.h) */
    struct dg_act_system *actors;
    struct dg_tx *tx;        /* messages, collectives (transport/tx.h) */
    struct dg_tx_actors *txa; /* actor messages between ranks (transport/chan_actor.h) */
    struct dg_tasks *tasks;  /* planner + executor + regions (core/runtime/tasks.h) */
};

/* Validates a runtime handle given to a public call without dereferencing
 * it: NULL, finalized and foreign pointers are all rejected. */
static inline int dg_runtime_ok(const dagger_runtime_t *rt)
{
    return dg_handle_live(rt);
}

#endif
