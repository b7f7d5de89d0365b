/* The hang detector: a thread per executor that wakes five times a second.
 * When ops are outstanding and none has finished for DAGGER_HANG_TIMEOUT
 * seconds, or when SIGUSR1 arrived, it prints what this rank waits for
 * (dg_exec_dump); DAGGER_HANG_EXIT seconds later, or when the caller has
 * waited in one collective that long, the rank exits (DG_HANG_EXIT_STATUS)
 * naming what it waited for. A thread of its own, because the thread that would notice
 * (the submitter waiting at region end) may itself be running the slow task.
 * The dump reads the op ring while others may change it: it is a best-effort
 * diagnostic, taken when the rank is stuck. */
#ifndef DG_EXEC_WATCHDOG_H
#define DG_EXEC_WATCHDOG_H

#include <pthread.h>

/* The exit status of a rank that DAGGER_HANG_EXIT ends (as timeout(1)'s). */
#define DG_HANG_EXIT_STATUS 124

struct dg_exec;

typedef struct dg_watchdog {
    struct dg_exec *ex;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int started, quit;
} dg_watchdog_t;

/* 0, or -1 when the thread cannot start (the rank then runs without one). */
int dg_watchdog_start(dg_watchdog_t *w, struct dg_exec *ex);
void dg_watchdog_stop(dg_watchdog_t *w);

/* Makes SIGUSR1 request a dump from every live watchdog of the process
 * (unless the program handles SIGUSR1 itself). */
void dg_watchdog_install_signal(void);

#endif
