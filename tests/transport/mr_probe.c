/* The probe's comparison of what two ranks planned (transport/coll_probe.c):
 * a rank that gets a PROBE looks up the asker's last planned task in its own
 * record and marks the divergence only when it has that very task with
 * another hash. Rank 1 asks rank 0; the other ranks only take part in the
 * barriers. Run with 1..4 ranks; alone there is nobody to ask. */
#include <string.h>
#include <unistd.h>

#include "transport/coll.h"
#include "tx_test.h"

DGT_SUITE(probe);

/* The hash a rank notes after task t: every rank's alike, or another. */
static uint64_t hash_of(uint64_t t, int other)
{
    return t * 0x9e3779b97f4a7c15ull ^ (other ? 0x5a5a5aull : 0);
}

static void note(dg_tx_t *tx, uint64_t lo, uint64_t hi, int other)
{
    dg_tx_planned_t *pl = dg_tx_planned(tx);
    cr_assert(pl, "more than one rank, yet no record of planned tasks");
    for (uint64_t t = lo; t <= hi; t++)
        dg_tx_note_planned(pl, t, hash_of(t, other));
}

/* Every rank, in step: until all of them say done (or a thousand rounds,
 * for a test that then fails), a barrier (which also drives this rank's
 * progress) and an allreduce of the flags. */
static int all_until(dgt_env_t *e, int (*done)(dgt_env_t *, uint64_t), uint64_t arg)
{
    for (int round = 0; round < 1000; round++) {
        DGT_OK(dg_coll_barrier(e->tx));
        int64_t all = done(e, arg);
        DGT_OK(dg_coll_allreduce(e->tx, &all, 1, DAGGER_I64, DAGGER_OP_MIN));
        if (all)
            return 1;
        usleep(1000);
    }
    return 0;
}

/* Rank 0 has handled `want` probes (the others: nothing to wait for). */
static int handled(dgt_env_t *e, uint64_t want)
{
    dg_tx_stats_t st;
    dg_tx_get_stats(e->tx, &st);
    return e->rank != 0 || st.probes >= want;
}

/* Rank 1 asks rank 0 (its `n`th probe) once every rank has noted what it
 * planned (a barrier: rank 0 handles a probe in whichever progress call
 * meets it, its start-up's included); returns once rank 0 has compared,
 * with whether this rank knows of a divergence (dg_tx_divergence). */
static dagger_status_t ask_rank0(dgt_env_t *e, uint64_t n)
{
    DGT_OK(dg_coll_barrier(e->tx));
    if (e->rank == 1)
        DGT_OK(dg_tx_probe(e->tx, 0));
    cr_assert(all_until(e, handled, n), "rank %d: rank 0 never handled probe %llu", e->rank,
              (unsigned long long)n);
    return dg_tx_divergence(e->tx);
}

/* This rank knows of the divergence. */
static int told(dgt_env_t *e, uint64_t unused)
{
    (void)unused;
    return dg_tx_divergence(e->tx) != DAGGER_OK;
}

/* Alike, not planned yet, or planned so long ago that the record holds a
 * later task in its place: none of them is a divergence. */
static void nothing_to_decide(void)
{
    dgt_env_t *e = &dgt_env;
    dgt_up(e, NULL);
    if (e->size < 2) {
        cr_assert_null(dg_tx_planned(e->tx), "one rank keeps no record");
        dgt_down(e);
        return;
    }
    if (e->rank == 0)
        note(e->tx, 1, DG_TX_PLANNED + 1000, 0);
    if (e->rank == 1)
        note(e->tx, 1, 10, 0); /* the same plan, rank 0 ahead */
    DGT_OK(ask_rank0(e, 1));
    if (e->rank == 1)
        note(e->tx, 11, DG_TX_PLANNED + 5000, 0); /* rank 1 ahead of rank 0 */
    DGT_OK(ask_rank0(e, 2));
    if (e->rank == 1) /* task 5 with another hash, but rank 0 keeps task DG_TX_PLANNED + 5 there */
        dg_tx_note_planned(dg_tx_planned(e->tx), 5, hash_of(5, 1));
    DGT_OK(ask_rank0(e, 3));
    dgt_down(e);
}

Test(probe, alike_ahead_or_forgotten_decide_nothing) { nothing_to_decide(); }

/* Rank 1's last task has another hash than rank 0's same task: rank 0 marks
 * the divergence and every rank is told, naming the task. */
static void another_hash_is_a_divergence(void)
{
    dgt_env_t *e = &dgt_env;
    dgt_up(e, NULL);
    if (e->size < 2) {
        dgt_down(e);
        return;
    }
    if (e->rank == 0)
        note(e->tx, 1, 20, 0);
    if (e->rank == 1) {
        note(e->tx, 1, 11, 0);
        note(e->tx, 12, 12, 1);
    }
    ask_rank0(e, 1);
    cr_assert(all_until(e, told, 0), "rank %d: no divergence", e->rank);
    dagger_status_t st = dg_tx_divergence(e->tx);
    cr_assert_eq(st, DAGGER_ERR_DIVERGENCE, "rank %d: %s", e->rank, dagger_strerror(st));
    cr_assert(strstr(dagger_error_detail(), "planned different work by task 12"), "rank %d: %s",
              e->rank, dagger_error_detail());
    dgt_down(e);
}

Test(probe, another_hash_is_a_divergence) { another_hash_is_a_divergence(); }
