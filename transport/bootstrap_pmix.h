/* The PMIx part of a dg_boot_t, shared by bootstrap.c (identity, exchange)
 * and bootstrap_events.c (lost-process reports). */
#ifndef DG_BOOTSTRAP_PMIX_H
#define DG_BOOTSTRAP_PMIX_H

#include <pmix.h>

#include "transport/bootstrap.h"

struct dg_boot_pmix {
    pmix_proc_t me;
    size_t handler_ref;      /* PMIx event handler reference */
    int have_handler;
    dg_boot_lost_fn lost_fn; /* set before registration, read on PMIx's thread */
    void *lost_ctx;
};

/* DAGGER_ERR_BOOTSTRAP naming the failed call, the PMIx error and version,
 * and what the user can do. */
dagger_status_t dg_boot_pmix_failure(const char *what, pmix_status_t rc);

#endif
