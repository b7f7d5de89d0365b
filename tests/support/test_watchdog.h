/* The watchdog of the multi-rank tests: where a test process is (dgt_at),
 * said on stderr if it is still running long after any test should have
 * ended (below), with every thread's stack (tests/support/thread_stacks.h); then,
 * DGT_WATCHDOG_END_S later (so that the other ranks, whose watchdogs fire
 * at about the same time, can say theirs), it ends this rank's Criterion
 * runner and itself, and the launcher ends the job. Left to Criterion, a
 * hung test was killed without a word, the other ranks went on to the next
 * tests, whose start-ups waited for the hung rank until their own limits,
 * and one hang cost CI the whole 300 s of the ctest limit before its retry
 * (2026-12-05 and 2026-12-06, transport_mr_coll_np3: docs/transport.md).
 *
 * It fires DGT_WATCHDOG_S seconds after dgt_dog_start (the environment
 * variable; DGT_WATCHDOG_DEFAULT_S without it): before the 90 s Criterion
 * limit of the suites that have one, and well before ctest ends a whole
 * binary at 300 s; a multi-rank binary's tests take seconds each (the
 * slowest whole binary took 12 s in CI on 2026-12-06), so a test still
 * running after 75 s is hung. (The test's own Criterion limit cannot be
 * read in the test's process: criterion_current_test->data points into the
 * runner's memory there, found by UBSan.)
 * The transport tests (tests/transport/tx_test.h) start it at each bring-up
 * and end it after PMIx's finalize, marking each step; the whole-library
 * tests (tests/multirank/mr_tag.h) start it before dagger_init and leave it
 * to end with the test's process. */
#ifndef DG_TEST_WATCHDOG_H
#define DG_TEST_WATCHDOG_H

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/base/cond.h"
#include "support/thread_stacks.h"

#define DGT_WATCHDOG_DEFAULT_S 75
#define DGT_WATCHDOG_END_S 5
static _Atomic(const char *) dgt_phase;
static _Atomic int dgt_dog_rank = -1; /* -1 until the bootstrap says */
static pthread_t dgt_dog;
static int dgt_dog_on, dgt_dog_stop;
static pthread_mutex_t dgt_dog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dgt_dog_cond;

static inline void dgt_at(const char *phase)
{
    atomic_store(&dgt_phase, phase);
}

static inline void dgt_dog_set_rank(int rank)
{
    atomic_store(&dgt_dog_rank, rank);
}

/* 1 when process pid runs the same program file as this one. */
static inline int dgt_same_program(pid_t pid)
{
    char path[64], mine[4096], theirs[4096];
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    ssize_t a = readlink("/proc/self/exe", mine, sizeof(mine) - 1);
    ssize_t b = readlink(path, theirs, sizeof(theirs) - 1);
    if (a <= 0 || b <= 0)
        return 0;
    mine[a] = theirs[b] = '\0';
    return strcmp(mine, theirs) == 0;
}

/* Ends this rank: its Criterion runner (this test process's parent, the
 * same program; not a shell, as under Criterion's --debug), then itself. */
static inline void dgt_end_job(const char *who)
{
    pid_t runner = getppid();
    int kill_runner = runner > 1 && dgt_same_program(runner);
    fprintf(stderr, "%s: ending this rank%s, so that the launcher ends the job\n", who,
            kill_runner ? " and its test runner" : "");
    fflush(stderr);
    if (kill_runner)
        kill(runner, SIGKILL);
    _exit(1);
}

/* Seconds from dgt_dog_start to the report (see the top). */
static inline int dgt_dog_limit(void)
{
    const char *env = getenv("DGT_WATCHDOG_S");
    return env && atoi(env) > 0 ? atoi(env) : DGT_WATCHDOG_DEFAULT_S;
}

static inline void *dgt_dog_main(void *arg)
{
    int limit = (int)(intptr_t)arg;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += limit;
    pthread_mutex_lock(&dgt_dog_lock);
    int rc = 0;
    while (!dgt_dog_stop && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&dgt_dog_cond, &dgt_dog_lock, &until);
    int late = !dgt_dog_stop;
    pthread_mutex_unlock(&dgt_dog_lock);
    if (late) {
        char who[64];
        snprintf(who, sizeof(who), "dgt watchdog: rank %d", atomic_load(&dgt_dog_rank));
        fprintf(stderr, "%s, test %s.%s: still in %s after %d s; its threads:\n", who,
                criterion_current_suite ? criterion_current_suite->name : "?",
                criterion_current_test ? criterion_current_test->name : "?",
                atomic_load(&dgt_phase), limit);
        dgt_print_thread_stacks(stderr, who);
        sleep(DGT_WATCHDOG_END_S);
        dgt_end_job(who);
    }
    return NULL;
}

static inline void dgt_dog_start(void)
{
    if (dgt_dog_on)
        return; /* one watchdog per bring-up */
    dg_cond_init_monotonic(&dgt_dog_cond);
    dgt_dog_stop = 0;
    dgt_dog_on = pthread_create(&dgt_dog, NULL, dgt_dog_main,
                                (void *)(intptr_t)dgt_dog_limit()) == 0;
}

static inline void dgt_dog_end(void)
{
    if (!dgt_dog_on)
        return;
    pthread_mutex_lock(&dgt_dog_lock);
    dgt_dog_stop = 1;
    pthread_cond_signal(&dgt_dog_cond);
    pthread_mutex_unlock(&dgt_dog_lock);
    pthread_join(dgt_dog, NULL);
    pthread_cond_destroy(&dgt_dog_cond);
    dgt_dog_on = 0;
}

#endif
