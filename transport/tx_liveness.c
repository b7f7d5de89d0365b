/* Finding out that a peer is gone, whatever the launcher does about it:
 *  - PMIx events (PRRTE sends them) through dg_boot_watch;
 *  - UCX endpoint errors with DAGGER_PEER_ERRORS=1 (tx_lifecycle.c);
 *  - a thread that looks at the processes of the peers on this host every
 *    DG_LIVE_PERIOD_MS (Slurm and Open MPI's mpirun send no event);
 *  - a SIGTERM handler: Open MPI 4.1's mpirun (and srun -K) kill the other
 *    ranks as soon as one fails, so say which one before dying; and a
 *    SIGABRT one: UCX aborts a rank whose shared-memory transfer meets a
 *    peer's dead process (cma's process_vm_readv: "No such process"; peer
 *    errors are fatal without DAGGER_PEER_ERRORS), printing only its own
 *    backtrace, so say which rank of this host is gone before dying;
 *  - the same thread looks at the launcher's process (mpirun, orted, prted,
 *    slurmstepd): killed, it leaves the ranks running as orphans that nobody
 *    ends and whose output goes nowhere, so a rank that finds it gone exits.
 * Each marks the peer lost (dg_tx_mark_lost), which ends every wait of the
 * transport with DAGGER_ERR_PEER_LOST naming it. With lost_grace_s > 0 a rank
 * that keeps running anyway is ended after that many seconds (not in the
 * closing barrier, where ranks leave normally: progress_wait.c). The boot's
 * effects (DG_BOOT_NO_SIGNALS, DG_BOOT_NO_EXIT: dagger_params_t) leave out
 * the SIGTERM handler and every exit: the loss is then said and returned. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/base/alloc.h"
#include "core/base/common.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "transport/bootstrap_guard.h"
#include "transport/tx_internal.h"

/* Short enough to say which rank was lost before Slurm's PMIx plugin
 * SIGKILLs the step (about 1 s after a rank's PMIx connection drops, even
 * with --kill-on-bad-exit=0; measured with Slurm 22.05); a look is one
 * /proc read per local peer. */
#define DG_LIVE_PERIOD_MS 100

struct dg_tx_liveness {
    pthread_t thread;
    int running;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
    int term_installed, abrt_installed;
    struct sigaction old_term, old_abrt;
    int have_launcher;
    dg_proc_id_t launcher;
    char launcher_name[32];
    int launcher_said;      /* DG_BOOT_NO_EXIT: the launcher's loss was said */
};

/* The transport the SIGTERM handler reports about (one per process). */
static _Atomic(dg_tx_t *) dg_term_tx;

/* Marks rank r lost and says so at once, on this rank's stderr: the
 * launcher may end this process any moment now (see DG_LIVE_PERIOD_MS), so
 * the error the program would print once its wait fails may never come. */
static void lost_now(dg_tx_t *tx, int r, const char *why)
{
    int was = atomic_load(&tx->lost_rank);
    dg_tx_mark_lost(tx, r, why);
    /* Not in the closing barrier, where ranks leave normally: the wait
     * that a loss ends there returns its own error. */
    if (was < 0 && atomic_load(&tx->lost_ready) && !atomic_load(&tx->closing))
        dg_log(DG_LOG_ERROR, "%s", tx->lost_why);
}

/* Marks the first local peer found gone as lost; the text names every
 * other one gone by now too (when a launcher kills the job, or a rank ends
 * itself after seeing a loss, several are gone at once and the lowest rank
 * need not be the one that failed first). */
static void probe_local_peers(dg_tx_t *tx)
{
    char why[256] = "";
    int first = -1;
    int handshaking = atomic_load(&tx->handshaking);
    for (int r = 0; r < tx->size; r++) {
        dg_tx_peer_t *p = &tx->peers[r];
        if (handshaking && !atomic_load(&p->said_hello))
            continue; /* its record may be stale: the handshake reads it again */
        int ws = 0;
        dg_proc_state_t state = p->local ? dg_proc_probe(&p->proc, &ws) : DG_PROC_ALIVE;
        if (state == DG_PROC_ALIVE)
            continue;
        atomic_store(&p->gone, 1); /* for the closing barrier's waits (dg_tx_wait_from) */
        if (first < 0) {
            first = r;
            dg_str_append(why, sizeof(why), "its process ");
        } else {
            dg_str_append(why, sizeof(why), "; also rank ");
            dg_str_append_int(why, sizeof(why), r);
            dg_str_append(why, sizeof(why), " (pid ");
            dg_str_append_int(why, sizeof(why), p->proc.pid);
            dg_str_append(why, sizeof(why), ") ");
        }
        dg_proc_describe(why, sizeof(why), state, ws);
    }
    if (first >= 0)
        lost_now(tx, first, why);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int may_exit(const dg_tx_t *tx)
{
    return !(tx->boot->effects & DG_BOOT_NO_EXIT);
}

/* The job cannot go on without its launcher (no PMIx server, no one to end
 * the other ranks or to read this one's output): exit at once (or, with
 * DG_BOOT_NO_EXIT, say it once and leave the ending to the program). */
static void check_launcher(const dg_tx_t *tx, struct dg_tx_liveness *lv, int rank)
{
    int ws = 0;
    dg_proc_state_t state = lv->have_launcher && !lv->launcher_said
                                ? dg_proc_probe(&lv->launcher, &ws)
                                : DG_PROC_ALIVE;
    if (state == DG_PROC_ALIVE)
        return;
    char how[64] = "";
    dg_proc_describe(how, sizeof(how), state, ws);
    dg_log(DG_LOG_ERROR, "rank %d: the launcher of this job (pid %d, %s) %s; nothing can end "
           "this job or carry its output any more, %s", rank, (int)lv->launcher.pid,
           lv->launcher_name, how,
           may_exit(tx) ? "so this rank exits" : "and this rank goes on (dagger_params_t.no_exit)");
    if (may_exit(tx))
        _exit(1);
    lv->launcher_said = 1;
}

/* One look: a loss found by any detector starts the grace period. */
static void check(dg_tx_t *tx, double *lost_since)
{
    check_launcher(tx, tx->liveness, tx->rank);
    /* In the closing barrier the ranks that have every part leave: a
     * waiting rank goes on as long as the one it waits for is there, so
     * keep looking, and end nobody (progress_wait.c bounds that wait). */
    int closing = atomic_load(&tx->closing);
    if (atomic_load(&tx->lost_rank) < 0 || closing) {
        probe_local_peers(tx);
        return;
    }
    if (tx->lost_grace_s <= 0 || !may_exit(tx))
        return;
    if (*lost_since == 0) {
        *lost_since = now_s();
    } else if (now_s() - *lost_since >= tx->lost_grace_s) {
        dg_tx_health(tx);
        dg_log(DG_LOG_ERROR, "ending this rank: %s (it did not end by itself within %.0f s)",
               dagger_error_detail(), tx->lost_grace_s);
        _exit(1);
    }
}

static void *watch(void *arg)
{
    dg_tx_t *tx = arg;
    struct dg_tx_liveness *lv = tx->liveness;
    double lost_since = 0;
    pthread_mutex_lock(&lv->lock);
    while (!lv->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long long ns = (long long)ts.tv_nsec + DG_LIVE_PERIOD_MS * 1000000ll;
        ts.tv_sec += (time_t)(ns / 1000000000ll);
        ts.tv_nsec = (long)(ns % 1000000000ll);
        pthread_cond_timedwait(&lv->cond, &lv->lock, &ts);
        if (lv->stop)
            break;
        pthread_mutex_unlock(&lv->lock);
        check(tx, &lost_since);
        pthread_mutex_lock(&lv->lock);
    }
    pthread_mutex_unlock(&lv->lock);
    return NULL;
}

/* Async-signal-safe: names local peers that are gone, then dies of the
 * signal as it would have without us (SA_RESETHAND restored the default).
 * An abort says something only when a peer is gone (or was found lost):
 * an abort of the program's own has nothing to do with the peers. */
static void on_sigterm(int sig)
{
    char line[1024] = "dagger[rank ";
    dg_tx_t *tx = atomic_load(&dg_term_tx);
    dg_str_append_int(line, sizeof(line), tx ? tx->rank : -1);
    dg_str_append(line, sizeof(line),
                  sig == SIGABRT ? "] error: aborted (SIGABRT; UCX aborts a rank whose "
                                   "transfer meets a dead peer's process)"
                                 : "] error: terminated by SIGTERM (launchers end every rank "
                                   "when one fails)");
    int found = 0;
    for (int r = 0; tx && r < tx->size; r++) {
        const dg_tx_peer_t *p = &tx->peers[r];
        int ws = 0;
        dg_proc_state_t state = p->local ? dg_proc_probe(&p->proc, &ws) : DG_PROC_ALIVE;
        if (state == DG_PROC_ALIVE)
            continue;
        dg_str_append(line, sizeof(line), found++ ? "; rank " : ": rank ");
        dg_str_append_int(line, sizeof(line), r);
        dg_str_append(line, sizeof(line), " (pid ");
        dg_str_append_int(line, sizeof(line), p->proc.pid);
        dg_str_append(line, sizeof(line), ") ");
        dg_proc_describe(line, sizeof(line), state, ws);
    }
    int lost = tx && !found && atomic_load(&tx->lost_ready);
    if (lost) {
        dg_str_append(line, sizeof(line), ": ");
        dg_str_append(line, sizeof(line), tx->lost_why);
    } else if (tx && !found) {
        dg_str_append(line, sizeof(line), ": every rank on this host is still running");
    }
    dg_str_append(line, sizeof(line) - 1, "\n");
    if (sig != SIGABRT || found || lost) {
        ssize_t rc = write(STDERR_FILENO, line, strlen(line));
        (void)rc;
    }
    raise(sig);
}

/* Installs on_sigterm for sig when nobody else handles it (an application's
 * handler wins); 1 when installed. */
static int install_for(int sig, struct sigaction *old)
{
    struct sigaction cur, sa;
    if (sigaction(sig, NULL, &cur) || cur.sa_handler != SIG_DFL)
        return 0;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigterm;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, old) == 0;
}

static void remove_for(int sig, const struct sigaction *old)
{
    struct sigaction cur;
    if (sigaction(sig, NULL, &cur) == 0 && cur.sa_handler == on_sigterm)
        sigaction(sig, old, NULL);
}

/* SIGTERM's and SIGABRT's, each only when nobody else handles it, and for
 * one transport. */
static void install_sigterm(dg_tx_t *tx, struct dg_tx_liveness *lv)
{
    dg_tx_t *none = NULL;
    if ((tx->boot->effects & DG_BOOT_NO_SIGNALS) ||
        !atomic_compare_exchange_strong(&dg_term_tx, &none, tx))
        return;
    lv->term_installed = install_for(SIGTERM, &lv->old_term);
    lv->abrt_installed = install_for(SIGABRT, &lv->old_abrt);
    if (!lv->term_installed && !lv->abrt_installed)
        atomic_store(&dg_term_tx, NULL);
}

static void remove_sigterm(dg_tx_t *tx, struct dg_tx_liveness *lv)
{
    if (!lv->term_installed && !lv->abrt_installed)
        return;
    if (lv->term_installed)
        remove_for(SIGTERM, &lv->old_term);
    if (lv->abrt_installed)
        remove_for(SIGABRT, &lv->old_abrt);
    dg_tx_t *mine = tx;
    atomic_compare_exchange_strong(&dg_term_tx, &mine, NULL);
    lv->term_installed = lv->abrt_installed = 0;
}

/* A report about a rank of this host whose process is running concerns an
 * earlier process of that rank (test runners start one per test): ignore. */
static void on_launcher_report(void *ctx, int rank, const char *why)
{
    dg_tx_t *tx = ctx;
    if (rank == DG_BOOT_SERVER_LOST) { /* look at the launcher now, not in 250 ms */
        struct dg_tx_liveness *lv = tx->liveness;
        pthread_mutex_lock(&lv->lock);
        pthread_cond_signal(&lv->cond);
        pthread_mutex_unlock(&lv->lock);
        return;
    }
    if (rank >= 0 && rank < tx->size && tx->peers[rank].local &&
        dg_proc_probe(&tx->peers[rank].proc, NULL) == DG_PROC_ALIVE)
        return;
    lost_now(tx, rank, why);
}

dagger_status_t dg_tx_liveness_start(dg_tx_t *tx)
{
    struct dg_tx_liveness *lv = dg_calloc(1, sizeof(*lv));
    if (!lv)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_tx_create: out of memory");
    pthread_mutex_init(&lv->lock, NULL);
    pthread_cond_init(&lv->cond, NULL);
    tx->liveness = lv;
    /* A second transport in the same process (tests do that) leaves the
     * launcher's events to the first. */
    if (dg_boot_watch(tx->boot, on_launcher_report, tx) != DAGGER_OK)
        dg_log(DG_LOG_DEBUG, "launcher events not watched: %s", dagger_error_detail());
    lv->have_launcher = dg_proc_launcher(&lv->launcher, lv->launcher_name,
                                         sizeof(lv->launcher_name)) == 0;
    int locals = 0;
    for (int r = 0; r < tx->size; r++)
        locals += tx->peers[r].local;
    if (locals || tx->lost_grace_s > 0 || lv->have_launcher) {
        if (pthread_create(&lv->thread, NULL, watch, tx))
            return dg_error(DAGGER_ERR_SYSTEM, "dg_tx_create: cannot start the liveness thread");
        lv->running = 1;
    }
    return DAGGER_OK;
}

void dg_tx_liveness_arm_sigterm(dg_tx_t *tx)
{
    if (tx->liveness)
        install_sigterm(tx, tx->liveness);
}

void dg_tx_liveness_stop(dg_tx_t *tx)
{
    struct dg_tx_liveness *lv = tx->liveness;
    if (!lv)
        return;
    if (lv->running) {
        pthread_mutex_lock(&lv->lock);
        lv->stop = 1;
        pthread_cond_signal(&lv->cond);
        pthread_mutex_unlock(&lv->lock);
        pthread_join(lv->thread, NULL);
    }
    remove_sigterm(tx, lv);
    dg_boot_guard_finale(tx->boot); /* until dg_boot_finalize */
    dg_boot_unwatch(tx->boot, tx);
    pthread_cond_destroy(&lv->cond);
    pthread_mutex_destroy(&lv->lock);
    free(lv);
    tx->liveness = NULL;
}
