/* The layout of dg_act_system_t, shared by the kernel's own files only. */
#ifndef DG_ACT_SYSTEM_IMPL_H
#define DG_ACT_SYSTEM_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "actors/future.h"
#include "actors/msgtype.h"
#include "actors/registry.h"
#include "actors/system.h"
#include "actors/timer.h"
#include "actors/topology.h"
#include "actors/worker.h"

typedef struct dg_idle_source {
    dg_act_idle_fn fn;
    void *ctx;
} dg_idle_source_t;

struct dg_act_system {
    int rank;
    _Atomic int nranks;
    void *owner;
    dg_msgtypes_t types;
    dg_registry_t reg;
    dg_futures_t futures;
    dg_timers_t timers;
    dg_topo_t topo;
    int bind;
    hwloc_bitmap_t caller_saved; /* the bound caller's binding before (dg_act_system_bind_caller) */
    pthread_t caller;            /* that caller */
    int slice_us;

    int nworkers;
    dg_act_worker_t *workers;
    _Atomic int running;    /* workers started and not told to quit */
    _Atomic int quit;       /* workers: exit when out of work */
    _Atomic int nsleeping;  /* workers blocked (or about to block) */
    _Atomic int nspinning;  /* idle workers still looking for work */
    _Atomic unsigned rr;    /* round robin for pushes from plain threads */
    _Atomic uint64_t next_corr;

    _Atomic(dg_act_route_fn) route_fn;
    void *_Atomic route_ctx;

    /* Poller hand-over to worker 0 (dg_act_system_set_poller). */
    pthread_mutex_t poller_lock;
    pthread_cond_t poller_cond;
    dg_act_poller_t poller_next; /* poll == NULL: none */
    _Atomic uint64_t poller_gen; /* bumped by set_poller */
    uint64_t poller_ack;         /* the generation worker 0 uses */

    dg_idle_source_t idle[DG_ACT_MAX_IDLE_SOURCES];
    _Atomic int nidle;

    /* Actor lifecycle: join waits here for STOPPED. */
    pthread_mutex_t life_lock;
    pthread_cond_t life_cond;
};

#endif
