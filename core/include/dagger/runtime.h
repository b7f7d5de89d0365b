/* Runtime lifecycle: one dagger_runtime_t per process.
 *
 * Under a launcher (prterun, srun --mpi=pmix, Open MPI's mpirun) every rank
 * calls dagger_init; without one the process is rank 0 of 1 (a singleton). */
#ifndef DAGGER_RUNTIME_H
#define DAGGER_RUNTIME_H

#include <dagger/export.h>
#include <dagger/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dagger_runtime dagger_runtime_t;

/* Parameters of dagger_init. Zero-initialise, then set what you need; a zero
 * field means "use the DAGGER_* setting or the default". The last two are
 * the switches of the process-wide effects dagger.h lists. */
typedef struct dagger_params {
    int num_threads;   /* CPU worker threads of this rank; 0 = DAGGER_NUM_THREADS,
                          else one per core of the process binding */
    int no_bind;       /* 1 = do not pin worker threads (overrides DAGGER_BIND_THREADS) */
    int no_signal_handlers; /* 1 = install no signal handler: no SIGTERM handler naming
                               the lost rank, no SIGUSR1 handler dumping what each
                               rank waits for (by default each is installed only
                               where the program left the signal at SIG_DFL) */
    int no_exit;       /* 1 = the library never ends the process: after a lost peer,
                          a lost launcher, a start-up step past DAGGER_START_TIMEOUT or
                          a hang past DAGGER_HANG_EXIT it says so on stderr and goes
                          on; waits on the lost peer return DAGGER_ERR_PEER_LOST */
} dagger_params_t;

/* Starts the runtime: reads the DAGGER_* settings, bootstraps (PMIx under a
 * launcher, singleton otherwise), starts the worker threads. argc/argv may be
 * NULL. params may be NULL for defaults. On success *rt is the new runtime.
 * Errors (*rt is then NULL): DAGGER_ERR_INVALID_ARG (rt NULL, negative
 * thread count), DAGGER_ERR_STATE (this process already has a live runtime:
 * one per process), DAGGER_ERR_CONFIG (a DAGGER_* value that does not parse),
 * DAGGER_ERR_BOOTSTRAP, DAGGER_ERR_TRANSPORT, DAGGER_ERR_NO_MEMORY. */
DAGGER_API
dagger_status_t dagger_init(int *argc, char ***argv, const dagger_params_t *params,
                            dagger_runtime_t **rt);

/* Stops every actor and worker thread and frees the runtime. The handle is
 * invalid afterwards; a second call with it is DAGGER_ERR_BAD_HANDLE (as long
 * as the memory was not reused). Collective: every rank calls it.
 * With a region still open, the region is ended first (its tasks run, as in
 * dagger_region_end), the runtime is finalized all the same, and the call
 * returns DAGGER_ERR_STATE naming the region: end regions before finalizing.
 * The region handle is invalid afterwards. Errors: DAGGER_ERR_BAD_HANDLE
 * (NULL, finalized, or not a runtime), DAGGER_ERR_STATE (a region was still
 * open, see above; or called from an actor's handler), DAGGER_ERR_PEER_LOST
 * (a rank was lost; the runtime is freed anyway), DAGGER_ERR_DIVERGENCE
 * (other ranks called another collective, or began another number of
 * regions: an early dagger_finalize on some ranks; freed anyway). */
DAGGER_API
dagger_status_t dagger_finalize(dagger_runtime_t *rt);

/* This process's rank and the number of ranks. */
DAGGER_API
int dagger_rank(const dagger_runtime_t *rt);
DAGGER_API
int dagger_nranks(const dagger_runtime_t *rt);

/* Number of CPU worker threads of this rank. */
DAGGER_API
int dagger_num_threads(const dagger_runtime_t *rt);

#ifdef __cplusplus
}
#endif
#endif
