/* The switches of the library's process-wide effects (dagger_params_t,
 * dagger.h): with no_signal_handlers no signal handler is installed (asked
 * with sigaction), and with no_exit a rank whose peer is lost goes on past
 * the grace period after which the runtime would end it, and its next
 * collective returns DAGGER_ERR_PEER_LOST. Each switch is tested beside the
 * default, which shows that the test can see the effect.
 *
 * The lost-peer tests launch this binary on 2 ranks through tools/dagger-run
 * (mode --dg-rank): rank 1 leaves without finalizing, rank 0 sleeps past the
 * grace period, then calls a barrier. They need Open MPI's mpirun told to
 * let a rank exit without finalizing (it would kill the job itself). */
#include <criterion/criterion.h>
#include <dagger.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cr_main.h"
#include "job_launch.h"
#include "launcher_need.h"
#include "support/thread_sched_probe.h"

/* Longer than the runtime's grace period after a loss (DG_LOST_GRACE_S,
 * 5 s in core/runtime/runtime.c). */
#define PAST_GRACE_S 8

static int handled(int sig)
{
    struct sigaction cur;
    return sigaction(sig, NULL, &cur) == 0 && cur.sa_handler != SIG_DFL;
}

static void sleep_s(int s)
{
    struct timespec ts = {.tv_sec = s}, rem;
    while (nanosleep(&ts, &rem) != 0)
        ts = rem;
}

/* ---- one rank of a launched job ---- */

static int rank_main(const char *mode)
{
    dagger_params_t p = {0};
    if (!strcmp(mode, "switched-off"))
        p.no_signal_handlers = 1, p.no_exit = 1;
    dagger_runtime_t *rt = NULL;
    dagger_status_t st = dagger_init(NULL, NULL, &p, &rt);
    if (st != DAGGER_OK) {
        fprintf(stderr, "rank ?: dagger_init: %s\n", dagger_error_detail());
        return 2;
    }
    int rank = dagger_rank(rt);
    printf("rank %d: SIGTERM handler %s, SIGUSR1 handler %s\n", rank,
           handled(SIGTERM) ? "installed" : "none", handled(SIGUSR1) ? "installed" : "none");
    fflush(stdout);
    st = dagger_barrier(rt);
    if (st != DAGGER_OK || rank == 1)
        _exit(st == DAGGER_OK ? 0 : 3); /* leaves without finalizing */
    sleep_s(PAST_GRACE_S);
    st = dagger_barrier(rt);
    printf("rank %d survived: the barrier after the loss returned %s\n", rank,
           dagger_strerror(st));
    fflush(stdout);
    dagger_finalize(rt);
    return st == DAGGER_ERR_PEER_LOST ? 0 : 3;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--dg-rank"))
        return rank_main(argv[2]);
    return cr_main(argc, argv);
}

/* ---- signal handlers, in a singleton ---- */

static void singleton_init(const dagger_params_t *p, dagger_runtime_t **rt)
{
    dagger_status_t st = dagger_init(NULL, NULL, p, rt);
    cr_assert_eq(st, DAGGER_OK, "dagger_init: %s", dagger_error_detail());
}

Test(effects, signal_handler_installed_by_default)
{
    dagger_runtime_t *rt;
    cr_assert(!handled(SIGUSR1), "SIGUSR1 is handled before dagger_init");
    singleton_init(NULL, &rt);
    cr_expect(handled(SIGUSR1), "no SIGUSR1 handler (hang dump) after a default dagger_init");
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

/* DAGGER_SCHED_SLICE_US reaches the workers, which name themselves. */
Test(effects, workers_named_and_with_the_slice_asked_for)
{
    setenv("DAGGER_SCHED_SLICE_US", "300", 1);
    dagger_params_t p = {.num_threads = 2};
    dagger_runtime_t *rt = NULL;
    cr_assert_eq(dagger_init(NULL, NULL, &p, &rt), DAGGER_OK, "%s", dagger_error_detail());
    unsetenv("DAGGER_SCHED_SLICE_US");
    int keeps = dgt_kernel_keeps_slices();
    dgt_expect_worker_slices(2, 300, keeps);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

/* DAGGER_SPIN_YIELD reaches the spinning threads' pause, and the next
 * runtime's default brings the yields back. */
Test(effects, spin_yield_setting_reaches_the_pause)
{
    dagger_runtime_t *rt = NULL;
    setenv("DAGGER_SPIN_YIELD", "0", 1);
    cr_assert_eq(dagger_init(NULL, NULL, NULL, &rt), DAGGER_OK, "%s", dagger_error_detail());
    unsetenv("DAGGER_SPIN_YIELD");
    cr_expect_eq(dg_spin_yields(), 0);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
    cr_assert_eq(dagger_init(NULL, NULL, NULL, &rt), DAGGER_OK, "%s", dagger_error_detail());
    cr_expect_eq(dg_spin_yields(), 1);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

Test(effects, no_signal_handlers_installs_none)
{
    dagger_params_t p = {.no_signal_handlers = 1};
    dagger_runtime_t *rt;
    singleton_init(&p, &rt);
    cr_expect(!handled(SIGUSR1), "a SIGUSR1 handler with no_signal_handlers = 1");
    cr_expect(!handled(SIGTERM), "a SIGTERM handler with no_signal_handlers = 1");
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

/* ---- a lost peer, on 2 ranks ---- */

static void launch_2(const char *mode, outcome_t *o)
{
    DG_NEED_LAUNCHER("mpirun", !system("command -v mpirun >/dev/null 2>&1"),
                     "needs Open MPI's mpirun (to let a rank leave without ending the job)");
    setenv("DAGGER_LAUNCHER", "mpirun", 1);
    job_launch(2, "--dg-rank", mode, "OMPI_MCA_orte_allowed_exit_without_sync=1", 90, o);
    cr_assert(!o->timed_out, "the job hung:\n%s", o->out);
}

Test(effects, lost_peer_ends_the_rank_by_default, .timeout = 150)
{
    outcome_t o;
    launch_2("default", &o);
    cr_expect(strstr(o.out, "rank 0: SIGTERM handler installed"),
              "rank 0 has no SIGTERM handler under a launcher by default:\n%s", o.out);
    cr_expect(strstr(o.out, "ending this rank"), "the runtime did not end rank 0:\n%s", o.out);
    cr_expect(!strstr(o.out, "rank 0 survived"), "rank 0 was not ended:\n%s", o.out);
}

Test(effects, no_exit_returns_peer_lost_instead, .timeout = 150)
{
    outcome_t o;
    launch_2("switched-off", &o);
    cr_expect(strstr(o.out, "rank 0: SIGTERM handler none, SIGUSR1 handler none"),
              "a signal handler with no_signal_handlers = 1 under a launcher:\n%s", o.out);
    cr_expect(!strstr(o.out, "ending this rank"), "the runtime ended rank 0:\n%s", o.out);
    cr_expect(strstr(o.out, "rank 0 survived: the barrier after the loss returned "
                            "DAGGER_ERR_PEER_LOST"),
              "rank 0 did not go on to a DAGGER_ERR_PEER_LOST:\n%s", o.out);
}
