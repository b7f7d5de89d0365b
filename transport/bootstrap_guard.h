/* The start-up guard: from the first PMIx call until the transport's own
 * lost-peer detection is armed (after the UCX wire-up), a rank cannot yet
 * tell which process is which rank from the start-up records, and some of
 * its waits (PMIx_Init above all) cannot be interrupted. The guard covers
 * that stretch:
 *  - it finds the job's processes on this host by their environment
 *    (PMIX_NAMESPACE and PMIX_RANK, set by every launcher) and, while a
 *    collective step (the exchange, the wire-up) runs, says at once when a
 *    rank's processes are all gone
 *    (Slurm's PMIx plugin SIGKILLs the step about 1 s later), then ends this
 *    rank if its start-up has not failed by itself DG_GUARD_LOSS_GRACE_S
 *    later;
 *  - its SIGTERM handler names those lost ranks before the process dies
 *    (Open MPI's mpirun SIGTERMs every rank at once when one dies);
 *  - a step that takes longer than the start-up limit (DAGGER_START_TIMEOUT)
 *    ends the rank with status 124, naming the step (PMIx_Init, the exchange,
 *    the wire-up): a hang in start-up never lasts for ever.
 * One guard per process (the first bootstrap that starts one); a second
 * bootstrap in the same process (tests do that) runs unguarded. */
#ifndef DG_BOOTSTRAP_GUARD_H
#define DG_BOOTSTRAP_GUARD_H

#include "transport/bootstrap.h"

typedef enum dg_boot_step {
    DG_BOOT_STEP_IDLE = 0,  /* between steps: no limit, losses are not reported */
    DG_BOOT_STEP_PMIX_INIT,
    DG_BOOT_STEP_IDENTITY,
    DG_BOOT_STEP_EXCHANGE,
    DG_BOOT_STEP_WIREUP,
    DG_BOOT_STEP_FINALIZE,  /* SIGTERM handler only (dg_boot_guard_finale) */
    DG_BOOT_STEP_COUNT
} dg_boot_step_t;

/* Test-only: when set, called on the calling thread each time a step begins
 * (tests/multirank/kill_rank.c kills a rank there). */
extern void (*volatile dg_boot_step_hook)(dg_boot_step_t step);

/* Starts the guard for boot (a PMIx client, before PMIx_Init): limit_s > 0
 * is the longest a step may take. boot->effects (DG_BOOT_NO_*): without a
 * SIGTERM handler; saying a loss or an overlong step without ending the
 * process. A no-op when the process already has a guard or the guard cannot
 * start (start-up then runs unguarded). */
void dg_boot_guard_start(dg_boot_t *boot, double limit_s);

/* The step boot's start-up is in now (a no-op for an unguarded boot). */
void dg_boot_guard_step(dg_boot_t *boot, dg_boot_step_t step);

/* Learns the job's size and which ranks run on this host (after PMIx_Init). */
void dg_boot_guard_job(dg_boot_t *boot, int size, const char *local_peers);

/* From the end of the transport to the end of dg_boot_finalize: the SIGTERM
 * handler again, without the thread (ranks that finish first are no loss),
 * so that a rank killed as the job ends is still named by the others. */
void dg_boot_guard_finale(dg_boot_t *boot);

/* Start-up is over (or failed), or the finale is: stops the thread, gives
 * SIGTERM back to its previous action. Idempotent. */
void dg_boot_guard_stop(dg_boot_t *boot);

#endif
