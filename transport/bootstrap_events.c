/* Lost-process reports from the launcher, through PMIx events.
 *
 * What launchers do differs: PRRTE notifies the job's processes; Open MPI
 * 4.1's mpirun sends no event and kills the other ranks itself (SIGTERM)
 * as soon as one dies; Slurm's PMIx plugin sends none either. So this is one
 * of several detectors (see tx_liveness.c for the others). */
#include <stdatomic.h>

#include "core/base/common.h"
#include "core/base/status_internal.h"
#include "transport/bootstrap_pmix.h"

/* The events that mean "a process of the job is gone", and
 * PMIX_ERR_LOST_CONNECTION, which is only a hint: Open MPI 4.1's server also
 * raises it, naming our own rank, when an earlier process of this rank
 * disconnects after finalizing (test runners start one per test), which
 * cannot be told apart from losing our own server; so it reaches the watcher
 * as DG_BOOT_SERVER_LOST, which checks the launcher's process. */
static const pmix_status_t dg_lost_codes[] = {
    PMIX_ERR_PROC_ABORTED_BY_SIG, PMIX_ERR_PROC_TERM_WO_SYNC, PMIX_ERR_PROC_REQUESTED_ABORT,
    PMIX_ERR_PROC_KILLED_BY_CMD,  PMIX_EVENT_PROC_TERMINATED, PMIX_ERR_LOST_CONNECTION,
};

/* PMIx passes no registration context to an event handler, so the one
 * watcher of the process lives here (dg_boot_watch allows one at a time). */
static _Atomic(struct dg_boot_pmix *) dg_boot_watched;

/* The process an event is about: the affected proc when given, else the
 * source. NULL when neither names a process of our namespace. */
static const pmix_proc_t *affected(const struct dg_boot_pmix *px, const pmix_proc_t *source,
                                   const pmix_info_t info[], size_t ninfo)
{
    const pmix_proc_t *p = source;
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC)
            p = info[i].value.data.proc;
    if (!p || !PMIX_CHECK_NSPACE(p->nspace, px->me.nspace) || p->rank >= PMIX_RANK_VALID)
        return NULL;
    return p;
}

static void on_event(size_t ref, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)ref;
    (void)results;
    (void)nresults;
    struct dg_boot_pmix *px = atomic_load(&dg_boot_watched);
    if (px && px->lost_fn && status == PMIX_ERR_LOST_CONNECTION) {
        /* Only a hint (see the codes above): the watcher checks the launcher. */
        px->lost_fn(px->lost_ctx, DG_BOOT_SERVER_LOST, PMIx_Error_string(status));
    } else if (px && px->lost_fn) {
        const pmix_proc_t *p = affected(px, source, info, ninfo);
        if (p && p->rank != px->me.rank)
            px->lost_fn(px->lost_ctx, (int)p->rank, PMIx_Error_string(status));
    }
    if (cbfunc)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

dagger_status_t dg_boot_watch(dg_boot_t *boot, dg_boot_lost_fn fn, void *ctx)
{
    DG_CHECK_ARG(boot && fn, "dg_boot_watch: NULL boot or callback");
    struct dg_boot_pmix *px = boot->pmix;
    if (!px)
        return DAGGER_OK;
    if (px->have_handler || atomic_load(&dg_boot_watched))
        return dg_error(DAGGER_ERR_STATE, "dg_boot_watch: a watcher is already registered");
    px->lost_fn = fn;
    px->lost_ctx = ctx;
    atomic_store(&dg_boot_watched, px);
    pmix_status_t rc = PMIx_Register_event_handler((pmix_status_t *)dg_lost_codes,
                                                   DG_ARRAY_LEN(dg_lost_codes), NULL, 0, on_event,
                                                   NULL, NULL);
    if (rc < 0) {
        atomic_store(&dg_boot_watched, NULL);
        return dg_error(DAGGER_ERR_BOOTSTRAP,
                        "PMIx_Register_event_handler failed: %s; PMIx library %s",
                        PMIx_Error_string(rc), PMIx_Get_version());
    }
    px->handler_ref = (size_t)rc;
    px->have_handler = 1;
    return DAGGER_OK;
}

void dg_boot_unwatch(dg_boot_t *boot, const void *ctx)
{
    struct dg_boot_pmix *px = boot ? boot->pmix : NULL;
    if (!px || !px->have_handler || (ctx && px->lost_ctx != ctx))
        return;
    struct dg_boot_pmix *expect = px;
    atomic_compare_exchange_strong(&dg_boot_watched, &expect, NULL);
    /* Blocking: PMIx runs handlers and deregistration on its one progress
     * thread, so no handler of ours runs once this returns. */
    PMIx_Deregister_event_handler(px->handler_ref, NULL, NULL);
    px->have_handler = 0;
}
