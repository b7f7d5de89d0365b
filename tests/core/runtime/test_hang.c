/* The hang detector: a rank that makes no progress for DAGGER_HANG_TIMEOUT
 * seconds (or gets SIGUSR1) prints what it waits for and which tasks it holds. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <dagger.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "support/proc_sigmask.h"

static atomic_int task_started;  /* the slow task runs, so dagger_init returned */
static atomic_int expect_usr1;   /* the test sends SIGUSR1 */
static _Atomic long long usr1_sent_ms;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Busy for 1.5 s however often a signal interrupts a sleep; when the test
 * sends SIGUSR1, also until 1.5 s after it went out (the dump must find the
 * task still running, however late the machine let the sender run). */
static int slow(dagger_task_t *t)
{
    (void)t;
    atomic_store(&task_started, 1);
    long long start = now_ms();
    for (;;) {
        usleep(10 * 1000);
        long long now = now_ms(), sent = atomic_load(&usr1_sent_ms);
        if (now - start >= 1500 && (!atomic_load(&expect_usr1) || (sent && now - sent >= 1500)))
            break;
    }
    return DAGGER_OK;
}

static void run_slow_region(void)
{
    dagger_runtime_t *rt;
    cr_assert_eq(dagger_init(NULL, NULL, NULL, &rt), DAGGER_OK, "%s", dagger_error_detail());
    dagger_codelet_t cl;
    cr_assert_eq(dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "slow_task", .cpu = slow},
                                         &cl), DAGGER_OK);
    dagger_region_t *r;
    cr_assert_eq(dagger_region_begin(rt, NULL, &r), DAGGER_OK);
    cr_assert_eq(dagger_spawn(r, cl, DAGGER_END), DAGGER_OK);
    cr_assert_eq(dagger_region_end(r), DAGGER_OK);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

static char *captured_stderr(void)
{
    fflush(stderr);
    FILE *f = cr_get_redirected_stderr();
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    return buf;
}

Test(hang, timeout_prints_the_waits, .init = cr_redirect_stderr)
{
    setenv("DAGGER_HANG_TIMEOUT", "0.5", 1);
    run_slow_region();
    char *err = captured_stderr();
    cr_assert(strstr(err, "no progress within DAGGER_HANG_TIMEOUT"), "stderr: %s", err);
    cr_assert(strstr(err, "launch of task 1 (slow_task)"), "stderr: %s", err);
}

/* Whether this process catches sig (SigCgt in /proc/self/status): the
 * runtime's handler is installed. */
static int catches(int sig)
{
    return dgt_sigmask_has("/proc/self/status", "SigCgt", sig);
}

/* Sends SIGUSR1 once the runtime is ready for it (its handler installed, the
 * slow task running), not after a guessed delay: under load dagger_init can
 * take longer than any guess, and SIGUSR1's default action kills. */
static void *send_usr1(void *arg)
{
    (void)arg;
    while (!atomic_load(&task_started) || !catches(SIGUSR1))
        usleep(5 * 1000);
    atomic_store(&usr1_sent_ms, now_ms());
    kill(getpid(), SIGUSR1);
    return NULL;
}

Test(hang, sigusr1_prints_the_waits, .init = cr_redirect_stderr)
{
    unsetenv("DAGGER_HANG_TIMEOUT");
    atomic_store(&expect_usr1, 1);
    pthread_t th;
    pthread_create(&th, NULL, send_usr1, NULL);
    run_slow_region();
    pthread_join(th, NULL);
    char *err = captured_stderr();
    cr_assert(strstr(err, "SIGUSR1"), "stderr: %s", err);
    cr_assert(strstr(err, "slow_task"), "stderr: %s", err);
}

Test(hang, quiet_without_a_hang, .init = cr_redirect_stderr)
{
    setenv("DAGGER_HANG_TIMEOUT", "5", 1);
    run_slow_region();
    char *err = captured_stderr();
    cr_assert(!strstr(err, "DAGGER_HANG_TIMEOUT"), "stderr: %s", err);
}
