/* Bootstrap: who am I, how many are we, and a one-off exchange of bytes.
 *
 * Under a launcher (prterun, srun --mpi=pmix, Open MPI's mpirun) this is a
 * PMIx client that reads only standard PMIx keys. Without a launcher
 * (neither PMIX_NAMESPACE nor PMIX_RANK in the environment) the process is
 * rank 0 of 1 and PMIx is never initialised. When the variables are there
 * but PMIx cannot start, that is an error: never N silent singletons. */
#ifndef DG_BOOTSTRAP_H
#define DG_BOOTSTRAP_H

#include <dagger/status.h>
#include <stddef.h>

#define DG_BOOT_HOSTNAME_MAX 256

struct dg_boot_pmix; /* PMIx state, private to bootstrap.c */

/* What the library may do to the whole process, off by default
 * (dagger_params_t.no_signal_handlers and .no_exit): the start-up guard, the
 * transport's liveness watch and the hang watchdog read them here. */
#define DG_BOOT_NO_SIGNALS 1u /* install no signal handler */
#define DG_BOOT_NO_EXIT 2u    /* never end the process: say what happened, go on */

typedef struct dg_boot {
    int rank;        /* this process, 0 .. size-1 */
    int size;        /* ranks in the job */
    int local_rank;  /* rank among the job's processes on this node */
    int local_size;  /* the job's processes on this node */
    int singleton;   /* 1: no launcher, PMIx not used */
    char hostname[DG_BOOT_HOSTNAME_MAX]; /* node identity (PMIX_HOSTNAME) */
    unsigned exchanges; /* allgathers done so far: names their keys */
    /* Also part of the keys; empty by default. Processes that replace one
     * another as the same rank of one launcher job (a test runner that
     * forks a fresh process per test) must each use a tag of their own:
     * Open MPI 4.1's PMIx server may serve the previous process's value of
     * a reused key, or none, for a while after that process finalized. */
    char tag[96];
    struct dg_boot_pmix *pmix;           /* NULL for a singleton */
    unsigned effects;                    /* DG_BOOT_NO_SIGNALS | DG_BOOT_NO_EXIT */
    struct dg_boot_alt {                 /* dg_boot_set_alternate */
        int (*fn)(void *ctx, int rank, const void **data, size_t *len);
        void *ctx;
    } alt;
} dg_boot_t;

/* Called on a PMIx thread when the launcher reports that another process
 * of the job is gone. why is a short text for the user. Must be quick and
 * thread-safe. */
typedef void (*dg_boot_lost_fn)(void *ctx, int rank, const char *why);
/* The rank fn gets when this process lost its connection to the PMIx server
 * (its launcher may be gone: the callee checks, since Open MPI's server also
 * raises it when an earlier process of this rank disconnects). */
#define DG_BOOT_SERVER_LOST (-2)

/* Finds out the identity as described above. Errors: DAGGER_ERR_BOOTSTRAP
 * with the PMIx error string and the PMIx version in the detail. */
dagger_status_t dg_boot_init(dg_boot_t *boot);
/* The same with limit_s (> 0) as the longest each start-up step may take
 * before the process exits naming it (bootstrap_guard.h; dg_boot_init uses
 * DG_BOOT_TIMEOUT_S), and effects (DG_BOOT_NO_*; dg_boot_init: 0) kept in
 * boot->effects. The guard runs until dg_boot_end_start_up. */
dagger_status_t dg_boot_init_within(dg_boot_t *boot, double limit_s, unsigned effects);

/* Start-up is over: the start-up guard stops (the transport's lost-peer
 * detection takes over). Also done by dg_boot_finalize. */
void dg_boot_end_start_up(dg_boot_t *boot);

/* Optional check of a rank's exchanged bytes: 0 when they are stale (left
 * by an earlier process of that rank), and dg_boot_allgather reads them
 * again until they are not. */
typedef int (*dg_boot_check_fn)(void *ctx, int rank, const void *data, size_t len);

/* Exchanges len bytes from every rank (lengths may differ). On success
 * *all is a malloc'ed buffer holding every rank's bytes in rank order (free
 * it with free()), and offsets[r] .. offsets[r+1] delimit rank r's bytes
 * (offsets has size+1 entries, given by the caller). Collective: every rank
 * calls it the same number of times. Meant for start-up, not hot paths.
 * It returns once this rank has read everyone's bytes; it does not wait for
 * the others to have read this rank's (the caller's next step must, e.g. a
 * handshake over the network, before this process may exit). check may be
 * NULL. Errors: DAGGER_ERR_BOOTSTRAP (a rank that never publishes: after
 * DG_BOOT_TIMEOUT_S). */
#define DG_BOOT_TIMEOUT_S 120
dagger_status_t dg_boot_allgather(dg_boot_t *boot, const void *mine, size_t len,
                                  dg_boot_check_fn check, void *ctx, void **all, size_t *offsets);

/* A second source of the exchange's values, for a rank whose Get PMIx
 * never answers: OpenPMIx 4.2's client then holds every later Get of that
 * rank too (bootstrap_get.c), so asking PMIx again cannot help, but the
 * peers that read this rank's value may pass theirs another way (the
 * transport: each rank's record in its hello). Once a Get of the exchange
 * went unanswered for DG_BOOT_GET_WAIT_S, dg_boot_allgather asks fn, on its
 * own thread, between its Gets; fn returns 1 with rank's bytes (valid until
 * it returns again; check still applies), or 0. fn NULL: none. */
void dg_boot_set_alternate(dg_boot_t *boot,
                           int (*fn)(void *ctx, int rank, const void **data, size_t *len),
                           void *ctx);

/* Reads rank's bytes of the latest dg_boot_allgather again (from the
 * launcher, not a cache), until check accepts them or wait_s has passed:
 * for a value that turned out stale after it was accepted. On success
 * *data (free it) holds *len bytes. */
dagger_status_t dg_boot_reread(dg_boot_t *boot, int rank, dg_boot_check_fn check, void *ctx,
                               double wait_s, void **data, size_t *len);

/* Test injection (bootstrap_get.c): the nth PMIx Get of a peer's bytes from
 * now (nth >= 1; every one until disarmed: nth < 0; 0 disarms) loses its
 * answer, and the wait for that answer lasts wait_s; the exchange must ask
 * again, and say so when its deadline passes. PMIx's own request completes
 * (the answer is dropped on arrival), so this is an answer that comes after
 * the wait; a request Open MPI 4.1's server never answers, as in CI, also
 * holds every later Get of that rank in PMIx's client (bootstrap_get.c). dg_boot_abandoned_gets counts the Gets of this process
 * whose answer did not come in time. */
void dg_boot_inject_lost_get(int nth, double wait_s);
unsigned long dg_boot_abandoned_gets(void);

/* Overwrites the values this process exchanged with tombstones, once every
 * rank has read them (and at finalize). A later process of this rank (test
 * runners start one per test) publishes under the same keys; until it has,
 * readers must find a tombstone (and wait), not this process's old value. */
void dg_boot_retract(dg_boot_t *boot);

/* Asks the launcher to report lost processes of the job to fn (through PMIx
 * events). A singleton has nobody to lose: a no-op. One watcher at a time;
 * dg_boot_finalize removes it. */
dagger_status_t dg_boot_watch(dg_boot_t *boot, dg_boot_lost_fn fn, void *ctx);

/* Removes the watcher registered with ctx (any watcher when ctx is NULL);
 * once it returns its fn is not running and will not be called again. A
 * no-op when there is no such watcher. */
void dg_boot_unwatch(dg_boot_t *boot, const void *ctx);

/* Leaves PMIx (not collective: ranks may finish at different times) and
 * clears boot. Safe on a boot whose init failed or that was finalized. */
void dg_boot_finalize(dg_boot_t *boot);

#endif
