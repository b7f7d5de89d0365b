/* Shared helpers of the transport tests: bring a bootstrap and a transport
 * up and down inside one Criterion test, on shared memory (UCX's default
 * transports) or on tcp, and drive progress from the test thread. */
#ifndef DG_TX_TEST_H
#define DG_TX_TEST_H

#include <criterion/criterion.h>
#include <dagger/status.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/base/common.h"
#include "transport/bootstrap.h"
#include "transport/coll.h"
#include "transport/tx.h"
#include "support/thread_stacks.h"

typedef struct dgt_env {
    dg_boot_t boot;
    dg_tx_t *tx;
    int rank, size;
} dgt_env_t;

#define DGT_OK(expr)                                                                    \
    do {                                                                                \
        dagger_status_t st_ = (expr);                                                   \
        cr_assert_eq(st_, DAGGER_OK, "%s: %s (%s)", #expr, dagger_strerror(st_),        \
                     dagger_error_detail());                                            \
    } while (0)

/* The one environment of a test process. Static, not on the test's
 * stack: dgt_cleanup uses it after a failed assertion left the test. */
static dgt_env_t dgt_env;
static int dgt_live;

/* The watchdog: where this test process is (dgt_phase), said on stderr if
 * it is still there DGT_WATCHDOG_S seconds after the bootstrap began (the
 * environment variable of that name overrides it), before Criterion's
 * limit (DGT_SUITE) kills it without a word. Every rank of a hung job says
 * its own step: the start-ups, the body, dg_tx_destroy or PMIx's finalize,
 * and where each of its threads is (tests/support/thread_stacks.h). Then,
 * DGT_WATCHDOG_END_S later (so that the other ranks, whose watchdogs fire
 * at about the same time, can say theirs), it ends this rank's Criterion
 * runner and itself, and the launcher ends the job: left to Criterion, the
 * other ranks went on to the next tests, whose start-ups waited for this
 * rank until their own limits, and one hang cost CI the whole 300 s of the
 * ctest limit before its retry (2026-12-05, transport_mr_coll_np3). */
#define DGT_WATCHDOG_S 75
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

static inline void *dgt_dog_main(void *arg)
{
    (void)arg;
    const char *env = getenv("DGT_WATCHDOG_S");
    int limit = env && atoi(env) > 0 ? atoi(env) : DGT_WATCHDOG_S;
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
                criterion_current_suite->name, criterion_current_test->name,
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
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&dgt_dog_cond, &a);
    pthread_condattr_destroy(&a);
    dgt_dog_stop = 0;
    dgt_dog_on = pthread_create(&dgt_dog, NULL, dgt_dog_main, NULL) == 0;
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

/* Brings the bootstrap up (once per process: PMIx cannot start twice). */
static inline void dgt_boot(dgt_env_t *e)
{
    memset(e, 0, sizeof(*e));
    dgt_live = 1;
    dgt_at("the bootstrap's start-up (dg_boot_init)");
    atomic_store(&dgt_dog_rank, -1);
    dgt_dog_start();
    DGT_OK(dg_boot_init(&e->boot));
    /* Each test runs in a fresh process per rank: exchange keys of its own. */
    snprintf(e->boot.tag, sizeof(e->boot.tag), "%s.%s", criterion_current_suite->name,
             criterion_current_test->name);
    e->rank = e->boot.rank;
    e->size = e->boot.size;
    atomic_store(&dgt_dog_rank, e->rank);
    dgt_at("the test's body");
}

/* Then the transport, on tls: NULL for UCX's defaults (shared memory
 * here), or e.g. "tcp". */
static inline void dgt_connect(dgt_env_t *e, const char *tls, const dg_tx_params_t *extra)
{
    dg_tx_params_t p = extra ? *extra : (dg_tx_params_t){0};
    p.boot = &e->boot;
    p.tls = tls;
    dgt_at("the transport's start-up (dg_tx_create)");
    DGT_OK(dg_tx_create(&p, &e->tx));
    dgt_at("the test's body");
    cr_assert_eq(dg_tx_rank(e->tx), e->rank);
    cr_assert_eq(dg_tx_size(e->tx), e->size);
}

static inline void dgt_up(dgt_env_t *e, const char *tls)
{
    dgt_boot(e);
    dgt_connect(e, tls, NULL);
}

static inline void dgt_down(dgt_env_t *e)
{
    dg_tx_t *tx = e->tx;
    e->tx = NULL;
    dgt_at("dg_tx_destroy (the closing barrier)");
    if (tx)
        DGT_OK(dg_tx_destroy(tx));
    dgt_at("dg_boot_finalize (PMIx's finalize)");
    dg_boot_finalize(&e->boot);
    dgt_dog_end();
    dgt_live = 0;
}

/* Runs after every test, also one that failed an assertion: a process that
 * leaves without finalizing PMIx puts the launcher's later collective
 * operations out of step, which would fail every following test. */
static inline void dgt_cleanup(void)
{
    dgt_env_t *e = &dgt_env;
    if (!dgt_live)
        return;
    dgt_live = 0;
    dgt_at("dg_tx_destroy after a failed test");
    if (e->tx)
        dg_tx_destroy(e->tx);
    dgt_at("dg_boot_finalize after a failed test");
    dg_boot_finalize(&e->boot);
    dgt_dog_end();
}

/* Every multi-rank suite: cleanup after each test, and a time limit so
 * that a rank left waiting by a failed peer does not hold the run. */
#define DGT_SUITE(suite) TestSuite(suite, .fini = dgt_cleanup, .timeout = 90)

/* Waits (progressing) until *counter reaches target. */
typedef struct dgt_count {
    volatile long *counter;
    long target;
} dgt_count_t;

static inline int dgt_reached(void *arg)
{
    dgt_count_t *c = arg;
    return __atomic_load_n(c->counter, __ATOMIC_ACQUIRE) >= c->target;
}

static inline void dgt_wait_count(dg_tx_t *tx, volatile long *counter, long target)
{
    dgt_count_t c = {counter, target};
    DGT_OK(dg_tx_wait(tx, dgt_reached, &c, 60));
}

/* Each test body runs twice: on the default transports and on tcp. */
#define DGT_BOTH_TRANSPORTS(suite, name, body)          \
    Test(suite, name##_shm) { body(NULL); }             \
    Test(suite, name##_tcp) { body("tcp"); }

/* Runs this very binary again as a singleton (no launcher variables in
 * its environment) and expects every test to pass: the multi-rank binaries
 * must work without a launcher too. Only in a 1-rank job: the rerun is the
 * same whatever the job's size, and on 2-4 ranks it repeated the whole
 * binary's minute of CI three more times. The nested run skips this test.
 * Its output goes to a file named on failure. The job's size comes from
 * DGT_NP where ctest sets it (tests/CMakeLists.txt), else from PMIx: a PMIx
 * client that connects only to learn it is skipped, while the other ranks'
 * runners exit without waiting for it, hung in PMIx_Init (Open MPI 4.1's
 * server never answered it, 2 of 25 loaded 3-rank runs of transport_mr_coll,
 * each ended by the start-up guard after 120 s; docs/transport.md, "Known
 * flakes"). */
static inline void dgt_singleton_rerun(void)
{
    if (getenv("DGT_NESTED"))
        cr_skip_test("this is the nested singleton run");
    const char *np = getenv("DGT_NP");
    if (np && atoi(np) != 1)
        cr_skip_test("the singleton rerun runs in the 1-rank job only");
    dg_boot_t boot;
    DGT_OK(dg_boot_init(&boot));
    int size = boot.size;
    dg_boot_finalize(&boot);
    if (size != 1)
        cr_skip_test("the singleton rerun runs in the 1-rank job only");
    char log[64];
    snprintf(log, sizeof(log), "/tmp/dgt-singleton-%d.log", (int)getpid());
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        unsetenv("BXFI_MAP"); /* else it would take itself for one of Criterion's workers */
        unsetenv("PMIX_NAMESPACE");
        unsetenv("PMIX_RANK");
        setenv("DGT_NESTED", "1", 1);
        execl("/proc/self/exe", "singleton", "--jobs", "1", (char *)NULL);
        _exit(127);
    }
    int ws = 0;
    for (int i = 0; i < 2400 && waitpid(pid, &ws, WNOHANG) == 0; i++)
        usleep(50000);
    if (waitpid(pid, &ws, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &ws, 0);
        cr_assert_fail("the singleton run did not end within 120 s (output in %s)", log);
    }
    cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
              "the binary failed as a singleton (status 0x%x, output in %s)", ws, log);
    unlink(log);
}

#define DGT_SINGLETON_RERUN(suite) \
    Test(suite, same_binary_as_singleton, .timeout = 150) { dgt_singleton_rerun(); }

#endif
