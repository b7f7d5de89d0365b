/* The PMIx part of a dg_boot_t, shared by bootstrap.c (identity, exchange)
 * and bootstrap_events.c (lost-process reports). */
#ifndef DG_BOOTSTRAP_PMIX_H
#define DG_BOOTSTRAP_PMIX_H

#include <pmix.h>

#include "transport/bootstrap.h"
#include "transport/pmix_lib.h" /* PMIx's routines, loaded at run time */

struct dg_boot_pmix {
    pmix_proc_t me;
    size_t handler_ref;      /* PMIx event handler reference */
    int have_handler;
    dg_boot_lost_fn lost_fn; /* set before registration, read on PMIx's thread */
    void *lost_ctx;
};

/* Watches for a rank of this host that is gone before it published its
 * start-up data (bootstrap_gone.c). Zero-initialise; pass the same one for
 * every look while waiting. */
typedef struct dg_boot_gone {
    int rank;             /* the rank looked for; its state below */
    int local;            /* -1 unknown, 0 on another host (never reported), 1 here */
    int seen;             /* its process was there at some look */
    double absent_since;  /* 0 while its process was there at the last look */
    double next_look;
} dg_boot_gone_t;

/* 1 when rank's process on this host is gone (seen before, or never seen
 * for DG_BOOT_GONE_S). Looks at most every DG_BOOT_GONE_LOOK_S; now is
 * CLOCK_MONOTONIC seconds. */
int dg_boot_gone_check(dg_boot_t *boot, int rank, dg_boot_gone_t *g, double now);

/* The PMIX_RANK of process pid (a /proc name) when its environment also
 * holds ns_entry ("PMIX_NAMESPACE=..."); -1 otherwise or unreadable. */
int dg_boot_environ_rank(const char *pid, const char *ns_entry);

/* Turns Nagle's algorithm off (TCP_NODELAY) on each socket of this process
 * connected to a TCP endpoint of its PMIx server (bootstrap_nodelay.c);
 * returns how many. Call after PMIx_Init. */
int dg_boot_nodelay(void);

/* One PMIx Get of peer's key, asking the server past this client's cache
 * when refresh is set, that waits at most wait_s for the server's answer
 * (bootstrap_get.c): PMIX_SUCCESS with *out (a byte object: release it
 * with PMIX_VALUE_RELEASE), PMIX_ERR_TIMEOUT when no answer came in time
 * (ask again), or PMIx's error. */
#define DG_BOOT_GET_WAIT_S 5.0
pmix_status_t dg_boot_get_within(const pmix_proc_t *peer, const char *key, int refresh,
                                 double wait_s, pmix_value_t **out);

/* DAGGER_ERR_BOOTSTRAP naming the failed call, the PMIx error and version,
 * and what the user can do. */
dagger_status_t dg_boot_pmix_failure(const char *what, pmix_status_t rc);

#endif
