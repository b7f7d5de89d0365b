/* A UCX send that fails (issue 11, failure injection): rank 0's next
 * active-message send fails as if UCX had returned an I/O error
 * (transport/tx_inject.h). The call that needed it must return an error on
 * rank 0, and every rank must come out of the collective and of
 * dagger_finalize with a status (no crash, no hang: an alarm fails the test
 * after 60 s). With one rank there is nothing to send: the tests skip. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "mr_util.h"
#include "transport/tx_inject.h"

static void hung(int sig)
{
    (void)sig;
    static const char msg[] = "mr_fault_send: still waiting after 60 s: a hang\n";
    ssize_t rc = write(2, msg, sizeof(msg) - 1);
    (void)rc;
    _exit(3);
}

/* Every rank: a working barrier, then rank 0 arms the failure and each rank
 * runs call; returns this rank's status of call. */
static dagger_status_t with_failed_send(dagger_runtime_t *rt,
                                        dagger_status_t (*call)(dagger_runtime_t *))
{
    signal(SIGALRM, hung);
    alarm(60);
    MR_OK(dagger_barrier(rt));
    if (dagger_rank(rt) == 0)
        dg_tx_inject_send_failure(1);
    dagger_status_t st = call(rt);
    dg_tx_inject_send_failure(0);
    fprintf(stderr, "rank %d: -> %s (%s)\n", dagger_rank(rt), dagger_strerror(st),
            st == DAGGER_OK ? "" : dagger_error_detail());
    return st;
}

/* Rank 0 names the rank it could not reach, and so does the rank that
 * waited for the lost message (it names rank 0, gone by then). With more
 * ranks, one whose own part of the exchange went through may finish the
 * call. Then dagger_finalize returns on every rank. */
static void expect_error_everywhere(dagger_runtime_t *rt, dagger_status_t st)
{
    int rank = dagger_rank(rt);
    if (rank == 0 || dagger_nranks(rt) == 2)
        cr_expect_eq(st, DAGGER_ERR_PEER_LOST, "rank %d: a failed send gave %s (%s)", rank,
                     dagger_strerror(st), dagger_error_detail());
    else
        cr_expect(st == DAGGER_OK || st == DAGGER_ERR_PEER_LOST, "rank %d: %s (%s)", rank,
                  dagger_strerror(st), dagger_error_detail());
    if (rank == 0)
        cr_expect(strstr(dagger_error_detail(), "a transfer to it failed"),
                  "rank 0's detail says why: %s", dagger_error_detail());
    dagger_status_t fin = dagger_finalize(rt);
    fprintf(stderr, "rank %d: dagger_finalize -> %s\n", rank, dagger_strerror(fin));
    alarm(0);
}

static dagger_status_t allreduce_one(dagger_runtime_t *rt)
{
    int64_t x = dagger_rank(rt);
    return dagger_allreduce(rt, &x, 1, DAGGER_REDUCE_I64, DAGGER_OP_SUM);
}

Test(fault_send, failed_send_in_a_collective_is_an_error)
{
    dagger_runtime_t *rt = mr_init();
    if (dagger_nranks(rt) < 2) {
        MR_OK(dagger_finalize(rt));
        cr_skip_test("one rank sends nothing");
    }
    expect_error_everywhere(rt, with_failed_send(rt, allreduce_one));
}
