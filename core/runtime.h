/* The runtime object: one per process, owning every subsystem. Each layer
 * hangs its state off this struct; nothing else is global. */
#ifndef DG_RUNTIME_H
#define DG_RUNTIME_H

#include <dagger/runtime.h>
#include <stdint.h>

#include "core/config.h"
#include "core/handles.h"


struct dg_act_system;
struct dg_tasks;

struct dagger_runtime {
    int rank;
    int nranks;
    int num_threads;
    dg_config_t cfg;
    struct dg_act_system *actors;
    struct dg_tasks *tasks;  /* planner + executor + regions (core/api/tasks.h) */
};

/* Validates a runtime handle given to a public call without dereferencing
 * it: NULL, finalized and foreign pointers are all rejected. */
static inline int dg_runtime_ok(const dagger_runtime_t *rt)
{
    return dg_handle_live(rt);
}

#endif
