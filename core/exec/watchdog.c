/* Hang detector thread (see watchdog.h). */
#include "core/exec/watchdog.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "core/exec/exec.h"
#include "core/log.h"

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
        }
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
