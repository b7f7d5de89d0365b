/* Hang detector thread (see watchdog.h). */
#include "core/exec/watchdog.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/exec/exec.h"
#include "core/base/log.h"
#include "transport/coll.h"

#define DG_WATCH_TICK_NS (200 * 1000 * 1000L)

/* Set by the SIGUSR1 handler (any thread), taken by the watchdog thread: a
 * lock-free atomic, since sig_atomic_t is only safe within one thread
 * (ThreadSanitizer reported the race); no data travels with it. */
static atomic_int dg_dump_requested;

static void on_sigusr1(int sig)
{
    (void)sig;
    atomic_store_explicit(&dg_dump_requested, 1, memory_order_relaxed);
}

void dg_watchdog_install_signal(void)
{
    struct sigaction old, sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigusr1;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGUSR1, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
        sigaction(SIGUSR1, &sa, NULL);
}

/* What this rank waits for, for the last words of a hung rank: the oldest
 * unfinished op that waits for no earlier op of its own (a receive whose
 * data never came, a task that does not return), else the oldest one. */
static void describe_wait(const dg_exec_t *ex, char *buf, size_t cap)
{
    const dg_xop_t *pick = NULL;
    for (uint64_t i = 0; i <= ex->mask; i++) {
        const dg_xop_t *op = &ex->ring[i];
        if (!op->seq || atomic_load(&((dg_xop_t *)op)->retired))
            continue;
        int ready = atomic_load(&((dg_xop_t *)op)->pending) == 0;
        int pick_ready = pick && atomic_load(&((dg_xop_t *)pick)->pending) == 0;
        if (!pick || (ready && !pick_ready) || (ready == pick_ready && op->seq < pick->seq))
            pick = op;
    }
    if (pick)
        dg_exec_describe_op(ex, pick, buf, cap);
    else
        snprintf(buf, cap, "nothing of its own");
}

/* DAGGER_HANG_EXIT after the hang report: nothing this rank waits for can
 * be cancelled (ops in flight hold buffers other ranks may still write), so
 * the rank ends, and with it the launcher's job. */
static void end_hung_rank(const char *what, double waited)
{
    dg_log(DG_LOG_ERROR, "DAGGER_ERR_HANG: no progress for %.1f s (DAGGER_HANG_TIMEOUT + "
           "DAGGER_HANG_EXIT): this rank exits with status %d; it waited for %s", waited,
           DG_HANG_EXIT_STATUS, what);
    fflush(NULL);
    _exit(DG_HANG_EXIT_STATUS);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A caller waiting in a collective as long as both limits: the others never
 * came (the exec side may be idle: its ops are done). */
static void check_collective(const dg_exec_t *ex)
{
    unsigned long long seq;
    int src;
    double since, limit = ex->hang_timeout + ex->hang_exit;
    if (!ex->tx || !dg_coll_waiting(ex->tx, &seq, &src, &since) || mono_s() - since < limit)
        return;
    char what[160];
    snprintf(what, sizeof(what), "collective #%llu (a region end, fetch, chunk check or "
             "dagger_* collective): the message of rank %d", seq, src);
    end_hung_rank(what, mono_s() - since);
}

static void *watch(void *arg)
{
    dg_watchdog_t *w = arg;
    dg_exec_t *ex = w->ex;
    uint64_t last = atomic_load(&ex->progress);
    double idle = 0;
    int dumped = 0;
    pthread_mutex_lock(&w->lock);
    while (!w->quit) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += DG_WATCH_TICK_NS;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cond, &w->lock, &ts);
        if (w->quit)
            break;
        pthread_mutex_unlock(&w->lock);
        if (atomic_exchange_explicit(&dg_dump_requested, 0, memory_order_relaxed))
            dg_exec_dump(ex, "SIGUSR1");
        uint64_t now = atomic_load(&ex->progress);
        int busy = atomic_load(&ex->retired) != atomic_load(&ex->emitted);
        if (now != last || !busy) {
            last = now;
            idle = 0;
            dumped = 0;
        } else {
            idle += DG_WATCH_TICK_NS * 1e-9;
            if (ex->hang_timeout > 0 && idle >= ex->hang_timeout && !dumped) {
                dg_exec_dump(ex, "no progress within DAGGER_HANG_TIMEOUT");
                dumped = 1;
            }
            if (dumped && ex->hang_exit > 0 && idle >= ex->hang_timeout + ex->hang_exit) {
                char what[512];
                describe_wait(ex, what, sizeof(what));
                end_hung_rank(what, idle);
            }
        }
        if (ex->hang_timeout > 0 && ex->hang_exit > 0)
            check_collective(ex);
        pthread_mutex_lock(&w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int dg_watchdog_start(dg_watchdog_t *w, dg_exec_t *ex)
{
    memset(w, 0, sizeof(*w));
    w->ex = ex;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    if (pthread_create(&w->thread, NULL, watch, w) != 0) {
        dg_log(DG_LOG_WARN, "cannot start the hang detector thread; running without it");
        return -1;
    }
    w->started = 1;
    return 0;
}

void dg_watchdog_stop(dg_watchdog_t *w)
{
    if (!w->started)
        return;
    pthread_mutex_lock(&w->lock);
    w->quit = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    w->started = 0;
}
