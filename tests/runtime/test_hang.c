/* The hang detector: a rank that makes no progress for DAGGER_HANG_TIMEOUT
 * seconds (or gets SIGUSR1) prints what it waits for and which tasks it holds. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <dagger.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Busy for 1.5 s however often a signal interrupts a sleep. */
static int slow(dagger_task_t *t)
{
    (void)t;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        usleep(10 * 1000);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) <
             1500L * 1000 * 1000);
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

static void *send_usr1(void *arg)
{
    (void)arg;
    usleep(600 * 1000);
    kill(getpid(), SIGUSR1);
    return NULL;
}

Test(hang, sigusr1_prints_the_waits, .init = cr_redirect_stderr)
{
    unsetenv("DAGGER_HANG_TIMEOUT");
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
