/* A rank that dies or leaves early must not leave the others hanging, and
 * the survivors' output must name it. Each test launches this binary on 3
 * ranks through tools/dagger-run (in "victim" mode: collectives in a loop,
 * rank 1 leaves after a few) and checks the outcome within a time limit.
 *
 * What ends the survivors depends on the launcher: Open MPI's mpirun kills
 * them with SIGTERM as soon as rank 1 dies (our handler names the lost rank
 * first); when the launcher lets them run (mpirun told to allow exits
 * without finalize, srun without -K), the transport's own detection ends
 * their waits with DAGGER_ERR_PEER_LOST. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cr_main.h"
#include "job_launch.h"
#include "transport/coll.h"
#include "transport/tx_inject.h"
#include "transport/tx.h"
#include "launcher_need.h"

/* ---- victim mode: the program the launcher runs ---- */

/* Rank 1 in the "closing" mode: it leaves without finalizing once it has
 * seen rank 2 leave, while its owner thread holds back its closing part
 * for rank 0 (dg_tx_inject_late_part). */
static void *leave_after_a_peer(void *arg)
{
    dg_tx_t *tx = arg;
    while (dg_tx_lost_rank(tx) < 0)
        usleep(10000);
    usleep(300000);
    _exit(0);
}

/* Every rank meets the others in a few collectives, then rank 1 leaves in
 * the middle of dg_tx_destroy's closing barrier: after rank 2 has its
 * every part and has left, before rank 0 has rank 1's. Rank 0 must fail at
 * once naming rank 1, not take rank 2's normal exit for the loss. */
static int closing_main(dg_boot_t *boot, dg_tx_t *tx)
{
    for (int i = 0; i < 5; i++)
        if (dg_coll_barrier(tx) != DAGGER_OK)
            return 2;
    pthread_t t;
    if (boot->rank == 1) {
        dg_tx_inject_late_part(0, 10000);
        if (pthread_create(&t, NULL, leave_after_a_peer, tx))
            return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    dagger_status_t st = dg_tx_destroy(tx);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st != DAGGER_OK) {
        double took = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        fprintf(stderr, "dagger[rank %d] error: %s: %s [after %.2f s]\n", boot->rank,
                dagger_strerror(st), dagger_error_detail(), took);
        return 3;
    }
    dg_boot_finalize(boot);
    return 0;
}

static int victim_main(const char *how)
{
    dg_boot_t boot;
    dg_tx_t *tx;
    dagger_status_t st = dg_boot_init(&boot);
    dg_tx_params_t p = {.boot = &boot, .lost_grace_s = 10};
    if (st == DAGGER_OK)
        st = dg_tx_create(&p, &tx);
    if (st != DAGGER_OK) {
        fprintf(stderr, "victim: start-up failed: %s\n", dagger_error_detail());
        return 2;
    }
    if (!strcmp(how, "closing"))
        return closing_main(&boot, tx);
    time_t start = time(NULL);
    for (long i = 0; time(NULL) - start < 30; i++) {
        if (boot.rank == 1 && i == 20) {
            if (!strcmp(how, "kill") || !strcmp(how, "abort"))
                raise(SIGKILL);
            _exit(0); /* leaves without finalizing */
        }
        int64_t v = i;
        st = dg_coll_allreduce(tx, &v, 1, DAGGER_I64, DAGGER_OP_ADD);
        if (st != DAGGER_OK && !strcmp(how, "abort"))
            abort(); /* as UCX does when a transfer meets the dead peer's process */
        if (st != DAGGER_OK) {
            fprintf(stderr, "dagger[rank %d] error: %s: %s\n", boot.rank, dagger_strerror(st),
                    dagger_error_detail());
            return 3;
        }
    }
    fprintf(stderr, "victim rank %d: nobody noticed the loss within 30 s\n", boot.rank);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--dg-victim"))
        return victim_main(argv[2]);
    return cr_main(argc, argv);
}

/* ---- the tests: launch, wait with a limit, read the output ---- */

static void launch(const char *how, const char *extra_env, double limit_s, outcome_t *o)
{
    job_launch(3, "--dg-victim", how, extra_env, limit_s, o);
}

/* Every survivor wrote a line of its own that names rank 1. */
static void check_survivors_named_rank_1(const outcome_t *o)
{
    for (int r = 0; r <= 2; r += 2) {
        char tag[32];
        snprintf(tag, sizeof(tag), "dagger[rank %d]", r);
        const char *line = strstr(o->out, tag);
        int named = 0;
        while (line && !named) {
            const char *end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line);
            const char *hit = strstr(line, "rank 1 ");
            named = hit && hit < line + len;
            line = strstr(line + 1, tag);
        }
        cr_assert(named, "rank %d's output does not name the lost rank 1:\n%s", r, o->out);
    }
}

/* The job ended (no rank hung) and failed, as it must once rank 1 is gone. */
static void check_failed(const outcome_t *o, const char *what)
{
    cr_assert(!o->timed_out, "the survivors hung after rank 1 %s:\n%s", what, o->out);
    cr_assert(!(WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0),
              "the job succeeded although rank 1 %s:\n%s", what, o->out);
}

/* Under Open MPI's mpirun told to let ranks exit without finalizing, which
 * then does not end the job: the transport's own detection must. */
static void launch_letting_ranks_leave(const char *how, outcome_t *o)
{
    DG_NEED_LAUNCHER("mpirun", !system("command -v mpirun >/dev/null 2>&1"),
                     "needs Open MPI's mpirun");
    setenv("DAGGER_LAUNCHER", "mpirun", 1);
    launch(how, "OMPI_MCA_orte_allowed_exit_without_sync=1", 60, o);
}

static int launcher_available(void)
{
    return !system("command -v prterun >/dev/null 2>&1 || command -v mpirun >/dev/null 2>&1 "
                   "|| scontrol ping >/dev/null 2>&1");
}

/* Under whichever launcher dagger-run finds (a test skips without one). */
static void launch_under_any_launcher(const char *how, outcome_t *o)
{
    DG_NEED_LAUNCHER("mpirun", launcher_available(),
                     "no launcher (prterun, mpirun or a Slurm controller)");
    launch(how, NULL, 60, o);
}

Test(lost, killed_rank_ends_the_job_and_is_named, .timeout = 120)
{
    outcome_t o;
    launch_under_any_launcher("kill", &o);
    check_failed(&o, "was killed");
    check_survivors_named_rank_1(&o);
}

Test(lost, rank_leaving_early_ends_the_job_and_is_named, .timeout = 120)
{
    outcome_t o;
    launch_under_any_launcher("exit", &o);
    check_failed(&o, "left early");
    check_survivors_named_rank_1(&o);
}

/* Rank 1 leaves early, and mpirun lets it (launch_letting_ranks_leave). */
Test(lost, detected_without_the_launchers_help, .timeout = 120)
{
    outcome_t o;
    launch_letting_ranks_leave("exit", &o);
    check_failed(&o, "left early");
    check_survivors_named_rank_1(&o);
    cr_assert(strstr(o.out, "DAGGER_ERR_PEER_LOST"), "the survivors' waits did not fail with "
              "DAGGER_ERR_PEER_LOST:\n%s", o.out);
}

/* Rank 1 is killed and the survivors abort, as UCX makes a rank abort when
 * its shared-memory transfer meets the dead process (cma: "process_vm_readv
 * ... No such process", fatal without DAGGER_PEER_ERRORS): the SIGABRT
 * handler names rank 1 before the rank dies (seen under
 * DAGGER_EAGER_LIMIT=64, where every transfer is a rendezvous). */
Test(lost, an_abort_after_a_peer_died_names_it, .timeout = 120)
{
    outcome_t o;
    launch_under_any_launcher("abort", &o);
    check_failed(&o, "was killed");
    int named = 0;
    for (const char *line = strstr(o.out, "] error: aborted (SIGABRT"); line && !named;
         line = strstr(line + 1, "] error: aborted (SIGABRT")) {
        const char *end = strchr(line, '\n');
        const char *hit = strstr(line, "rank 1 (pid ");
        named = hit && (!end || hit < end);
    }
    /* (The launcher may end the other survivor first, with SIGTERM.) */
    cr_assert(named, "no survivor's abort named the dead rank 1:\n%s", o.out);
}

/* Rank 1 leaves inside the closing barrier after rank 2 left normally
 * (closing_main): rank 0 fails naming rank 1, at once (not after the 2 s
 * grace, whose text differs), and rank 2 ends cleanly. mpirun is told to
 * let rank 1 leave without finalizing, as above. */
Test(lost, leaving_in_the_closing_barrier_is_named, .timeout = 120)
{
    outcome_t o;
    launch_letting_ranks_leave("closing", &o);
    check_failed(&o, "left in the closing barrier");
    cr_assert(strstr(o.out, "dagger[rank 0] error: DAGGER_ERR_PEER_LOST"),
              "rank 0 did not fail with DAGGER_ERR_PEER_LOST:\n%s", o.out);
    cr_assert(strstr(o.out, "in the closing barrier: rank 1 (pid ") &&
                  strstr(o.out, ") is gone and its part of the closing barrier never came"),
              "rank 0 did not name rank 1 as the rank whose part never came:\n%s", o.out);
    cr_assert(strstr(o.out, "the closing barrier on rank 0: rank 1 (pid "),
              "the transport did not say the failure on rank 0's stderr itself:\n%s", o.out);
    cr_assert(!strstr(o.out, "dagger[rank 2] error"), "rank 2 left normally but failed:\n%s",
              o.out);
    /* Rank 2 leaves at once, rank 1 300 ms after it saw that (100 ms
     * probes): rank 0's dg_tx_destroy ends well within a second unless it
     * waited for the grace. */
    const char *after = strstr(strstr(o.out, "dagger[rank 0] error"), "[after ");
    double took = after ? atof(after + 7) : 1e9;
    cr_assert_lt(took, 1.6, "rank 0 failed %.2f s into dg_tx_destroy: it waited for the 2 s "
                 "grace, not for rank 1:\n%s", took, o.out);
}
