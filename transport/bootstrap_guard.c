/* The start-up guard (see bootstrap_guard.h). Its state is one static
 * object: the SIGTERM handler reads it, so it must never be freed under the
 * handler's feet, and nothing here can fail for want of memory. */
#include "transport/bootstrap_guard.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "transport/bootstrap_pmix.h"
#include "transport/tx_proc.h"

#define DG_GUARD_LOOK_MS 100     /* a look at the known processes */
#define DG_GUARD_SCAN_LOOKS 3    /* every third look also searches /proc for new ones */
/* Longer than DG_GUARD_UNSEEN_S: a rank that ends itself after seeing a loss
 * must not be the first loss the others see (they would name it instead). */
#define DG_GUARD_LOSS_GRACE_S 3.0
/* A rank placed on this host that never showed up is lost after this long
 * (as in bootstrap_gone.c: a launcher may start its ranks a little apart). */
#define DG_GUARD_UNSEEN_S 2.0
/* Steps that end by themselves with an error after DG_BOOT_TIMEOUT_S get
 * this much more, so that their own, more precise error comes first. */
#define DG_GUARD_SLACK_S 5.0
#define DG_GUARD_MAX_PROCS 256
#define DG_GUARD_MAX_LOCAL 256

void (*volatile dg_boot_step_hook)(dg_boot_step_t step);

/* bounded: the step has a deadline of its own. collective: every rank takes
 * part, so no rank can have finished normally meanwhile and a rank that is
 * gone is a loss (in PMIx_Init it need not be: a program that only asks who
 * it is, like the transport tests' singleton rerun, may be done and gone). */
static const struct {
    const char *name;
    int bounded, collective;
} dg_steps[DG_BOOT_STEP_COUNT] = {
    [DG_BOOT_STEP_IDLE] = {"start-up", 0, 0},
    [DG_BOOT_STEP_PMIX_INIT] = {"PMIx_Init", 0, 0},
    [DG_BOOT_STEP_IDENTITY] = {"the PMIx queries of the job's size and placement", 0, 0},
    [DG_BOOT_STEP_EXCHANGE] = {"the start-up exchange through PMIx", 1, 1},
    [DG_BOOT_STEP_WIREUP] = {"the UCX wire-up (handshake)", 1, 1},
    [DG_BOOT_STEP_FINALIZE] = {"the end of dagger_finalize", 0, 0},
};

typedef struct guard_proc {
    int rank;
    dg_proc_id_t id;
} guard_proc_t;

static struct dg_boot_guard {
    _Atomic(dg_boot_t *) owner;
    int rank; /* from PMIX_RANK: PMIx_Init has not told us yet */
    char ns_entry[PMIX_MAX_NSLEN + 32];
    double limit_s;
    _Atomic int step;
    _Atomic double step_since; /* CLOCK_MONOTONIC seconds */
    guard_proc_t procs[DG_GUARD_MAX_PROCS]; /* the job's other processes on this host */
    _Atomic int nprocs;                     /* entries below it are complete */
    int local[DG_GUARD_MAX_LOCAL];          /* ranks placed on this host (PMIX_LOCAL_PEERS) */
    _Atomic int nlocal;
    double job_known_at;                    /* when local[] was filled */
    int reported;                           /* a loss was said; when: */
    double reported_at;
    pthread_t thread;
    int running;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
    struct sigaction old_term;
    int term_installed;
    unsigned effects;                       /* DG_BOOT_NO_SIGNALS | DG_BOOT_NO_EXIT */
    int limit_said;                         /* an overlong step was said (NO_EXIT) */
} dg_guard = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int known(int32_t pid)
{
    int n = atomic_load(&dg_guard.nprocs);
    for (int i = 0; i < n; i++)
        if (dg_guard.procs[i].id.pid == pid)
            return 1;
    return 0;
}

/* Adds the job's processes on this host not seen before (other ranks only:
 * this rank's own processes include a test runner's parent). */
static void scan(void)
{
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d));) {
        int32_t pid = (int32_t)atoi(e->d_name);
        int n = atomic_load(&dg_guard.nprocs);
        if (pid <= 0 || n == DG_GUARD_MAX_PROCS || known(pid))
            continue;
        int rank = dg_boot_environ_rank(e->d_name, dg_guard.ns_entry);
        guard_proc_t *p = &dg_guard.procs[n];
        if (rank < 0 || rank == dg_guard.rank || dg_proc_of(pid, &p->id, NULL))
            continue;
        p->rank = rank;
        atomic_store(&dg_guard.nprocs, n + 1);
    }
    if (d)
        closedir(d);
}

/* Rank r's state on this host: ALIVE while one of its processes runs; else
 * the state of the last one found (-1: none ever seen). Signal-safe. */
static int rank_state(int r, int *pid, int *wstatus)
{
    int n = atomic_load(&dg_guard.nprocs), state = -1;
    for (int i = 0; i < n; i++) {
        if (dg_guard.procs[i].rank != r)
            continue;
        int ws = 0;
        dg_proc_state_t s = dg_proc_probe(&dg_guard.procs[i].id, &ws);
        if (s == DG_PROC_ALIVE)
            return DG_PROC_ALIVE;
        state = (int)s;
        *pid = dg_guard.procs[i].id.pid;
        *wstatus = ws;
    }
    return state;
}

/* Whether rank r was already looked at (as procs[i] for i < upto). */
static int rank_before(int r, int upto)
{
    for (int i = 0; i < upto; i++)
        if (dg_guard.procs[i].rank == r)
            return 1;
    return 0;
}

/* Appends "rank R (pid P) was killed by signal 9" for every rank seen here
 * whose processes are all gone, and, with missing, "rank R (no process on
 * this host)" for each rank placed here that never showed up. The count
 * appended. Signal-safe. */
static int describe_lost(char *buf, size_t cap, int missing)
{
    int n = atomic_load(&dg_guard.nprocs), found = 0;
    for (int i = 0; i < n; i++) {
        int r = dg_guard.procs[i].rank, pid = 0, ws = 0;
        if (rank_before(r, i))
            continue;
        int state = rank_state(r, &pid, &ws);
        if (state == DG_PROC_ALIVE)
            continue;
        dg_str_append(buf, cap, found++ ? "; rank " : "rank ");
        dg_str_append_int(buf, cap, r);
        dg_str_append(buf, cap, " (pid ");
        dg_str_append_int(buf, cap, pid);
        dg_str_append(buf, cap, ") ");
        dg_proc_describe(buf, cap, (dg_proc_state_t)state, ws);
    }
    int nlocal = missing && n < DG_GUARD_MAX_PROCS ? atomic_load(&dg_guard.nlocal) : 0;
    for (int i = 0; i < nlocal; i++) {
        int r = dg_guard.local[i];
        if (r == dg_guard.rank || rank_before(r, n))
            continue;
        dg_str_append(buf, cap, found++ ? "; rank " : "rank ");
        dg_str_append_int(buf, cap, r);
        dg_str_append(buf, cap, " (no process of it on this host)");
    }
    return found;
}

/* "dagger[rank R] error: " */
static void line_start(char *buf, size_t cap)
{
    buf[0] = '\0';
    dg_str_append(buf, cap, "dagger[rank ");
    dg_str_append_int(buf, cap, dg_guard.rank);
    dg_str_append(buf, cap, "] error: ");
}

static void say(char *line, size_t cap)
{
    dg_str_append(line, cap - 1, "\n");
    ssize_t rc = write(STDERR_FILENO, line, strlen(line));
    (void)rc;
}

static void on_sigterm(int sig)
{
    char line[1024];
    line_start(line, sizeof(line));
    dg_str_append(line, sizeof(line), "terminated by SIGTERM during ");
    dg_str_append(line, sizeof(line), dg_steps[atomic_load(&dg_guard.step)].name);
    dg_str_append(line, sizeof(line), " (launchers end every rank when one fails): ");
    if (!describe_lost(line, sizeof(line), 1))
        dg_str_append(line, sizeof(line), "every rank of this job on this host is still running");
    say(line, sizeof(line));
    raise(sig); /* SA_RESETHAND: dies of it as it would have without us */
}

/* While a collective step runs: a rank whose processes are all gone is said at once;
 * a start-up still going DG_GUARD_LOSS_GRACE_S later is ended. */
static void check_losses(double now)
{
    char line[1024];
    if (dg_guard.reported) {
        if (now - dg_guard.reported_at < DG_GUARD_LOSS_GRACE_S ||
            (dg_guard.effects & DG_BOOT_NO_EXIT))
            return;
        line_start(line, sizeof(line));
        dg_str_append(line, sizeof(line), "ending this rank: its start-up did not end within ");
        dg_str_append_int(line, sizeof(line), (long long)DG_GUARD_LOSS_GRACE_S);
        dg_str_append(line, sizeof(line), " s after another rank was lost");
        say(line, sizeof(line));
        _exit(1);
    }
    line_start(line, sizeof(line));
    dg_str_append(line, sizeof(line), "a rank was lost during start-up (this rank was in ");
    dg_str_append(line, sizeof(line), dg_steps[atomic_load(&dg_guard.step)].name);
    dg_str_append(line, sizeof(line), "): ");
    /* (not with a full table: an unseen rank may just not fit in it) */
    int unseen_too = atomic_load(&dg_guard.nlocal) > 0 &&
                     atomic_load(&dg_guard.nprocs) < DG_GUARD_MAX_PROCS &&
                     now - dg_guard.job_known_at >= DG_GUARD_UNSEEN_S;
    if (!describe_lost(line, sizeof(line), unseen_too))
        return;
    dg_str_append(line, sizeof(line), "; the job cannot continue");
    say(line, sizeof(line));
    dg_guard.reported = 1;
    dg_guard.reported_at = now;
}

/* A step past its limit: say which, and end (status 124, as a hang). */
static void check_limit(int step, double now)
{
    double limit = dg_guard.limit_s + (dg_steps[step].bounded ? DG_GUARD_SLACK_S : 0);
    if (dg_guard.limit_s <= 0 || now - atomic_load(&dg_guard.step_since) < limit ||
        dg_guard.limit_said)
        return;
    char uri[256];
    const char *server = getenv("PMIX_SERVER_URI41");
    snprintf(uri, sizeof(uri), "%s", server ? server : "(PMIX_SERVER_URI41 unset)");
    fprintf(stderr, "dagger[rank %d] error: start-up hung in %s: not done after %.0f s "
            "(DAGGER_START_TIMEOUT=%.0f; the launcher's PMIx server is %s): ending this rank\n",
            dg_guard.rank, dg_steps[step].name, now - atomic_load(&dg_guard.step_since),
            dg_guard.limit_s, uri);
    if (!(dg_guard.effects & DG_BOOT_NO_EXIT))
        _exit(124);
    dg_guard.limit_said = 1; /* no_exit: said once, the step goes on */
}

static void *watch(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&dg_guard.lock);
    for (unsigned look = 1; !dg_guard.stop; look++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long long ns = (long long)ts.tv_nsec + DG_GUARD_LOOK_MS * 1000000ll;
        ts.tv_sec += (time_t)(ns / 1000000000ll);
        ts.tv_nsec = (long)(ns % 1000000000ll);
        pthread_cond_timedwait(&dg_guard.cond, &dg_guard.lock, &ts);
        if (dg_guard.stop)
            break;
        pthread_mutex_unlock(&dg_guard.lock);
        if (look % DG_GUARD_SCAN_LOOKS == 0)
            scan();
        int step = atomic_load(&dg_guard.step);
        double now = now_s();
        if (dg_steps[step].collective)
            check_losses(now);
        if (step != DG_BOOT_STEP_IDLE && step != DG_BOOT_STEP_FINALIZE)
            check_limit(step, now);
        pthread_mutex_lock(&dg_guard.lock);
    }
    pthread_mutex_unlock(&dg_guard.lock);
    return NULL;
}

/* Only when nobody else handles SIGTERM (an application's handler wins). */
static void install_sigterm(void)
{
    struct sigaction cur, sa;
    if ((dg_guard.effects & DG_BOOT_NO_SIGNALS) || sigaction(SIGTERM, NULL, &cur) ||
        cur.sa_handler != SIG_DFL)
        return;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigterm;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    dg_guard.term_installed = sigaction(SIGTERM, &sa, &dg_guard.old_term) == 0;
}

/* Takes the guard for boot, in step; 0 when another boot holds it. */
static int take(dg_boot_t *boot, dg_boot_step_t step)
{
    const char *ns = getenv("PMIX_NAMESPACE"), *rank = getenv("PMIX_RANK");
    dg_boot_t *none = NULL;
    if (!ns || !rank || !atomic_compare_exchange_strong(&dg_guard.owner, &none, boot))
        return 0;
    dg_guard.rank = atoi(rank);
    dg_guard.effects = boot->effects;
    snprintf(dg_guard.ns_entry, sizeof(dg_guard.ns_entry), "PMIX_NAMESPACE=%s", ns);
    atomic_store(&dg_guard.step, (int)step);
    dg_guard.reported = 0;
    dg_guard.limit_said = 0;
    dg_guard.stop = 0;
    scan(); /* who is here already: a rank killed in PMIx_Init is then known */
    install_sigterm();
    return 1;
}

void dg_boot_guard_start(dg_boot_t *boot, double limit_s)
{
    atomic_store(&dg_guard.nprocs, 0);
    atomic_store(&dg_guard.nlocal, 0);
    dg_guard.limit_s = limit_s;
    if (take(boot, DG_BOOT_STEP_IDLE))
        dg_guard.running = pthread_create(&dg_guard.thread, NULL, watch, NULL) == 0;
}

void dg_boot_guard_finale(dg_boot_t *boot)
{
    take(boot, DG_BOOT_STEP_FINALIZE); /* the processes of start-up are still known */
    if (dg_boot_step_hook)
        dg_boot_step_hook(DG_BOOT_STEP_FINALIZE);
}

void dg_boot_guard_step(dg_boot_t *boot, dg_boot_step_t step)
{
    if (dg_boot_step_hook)
        dg_boot_step_hook(step);
    if (!boot || atomic_load(&dg_guard.owner) != boot)
        return;
    atomic_store(&dg_guard.step_since, now_s());
    atomic_store(&dg_guard.step, (int)step);
}

void dg_boot_guard_job(dg_boot_t *boot, int size, const char *local_peers)
{
    if (!boot || atomic_load(&dg_guard.owner) != boot || !local_peers)
        return;
    int n = 0;
    for (const char *p = local_peers; *p && n < DG_GUARD_MAX_LOCAL;) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p)
            break;
        if (r >= 0 && r < size)
            dg_guard.local[n++] = (int)r;
        p = *end == ',' ? end + 1 : end;
    }
    dg_guard.job_known_at = now_s();
    atomic_store(&dg_guard.nlocal, n);
}

void dg_boot_guard_stop(dg_boot_t *boot)
{
    if (!boot || atomic_load(&dg_guard.owner) != boot)
        return;
    struct sigaction cur;
    if (dg_guard.term_installed && sigaction(SIGTERM, NULL, &cur) == 0 &&
        cur.sa_handler == on_sigterm)
        sigaction(SIGTERM, &dg_guard.old_term, NULL);
    dg_guard.term_installed = 0;
    if (dg_guard.running) {
        pthread_mutex_lock(&dg_guard.lock);
        dg_guard.stop = 1;
        pthread_cond_signal(&dg_guard.cond);
        pthread_mutex_unlock(&dg_guard.lock);
        pthread_join(dg_guard.thread, NULL);
        dg_guard.running = 0;
    }
    atomic_store(&dg_guard.owner, NULL);
}
