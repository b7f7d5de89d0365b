/* A rank that calls dagger_finalize where the others go on (an early
 * return on one rank) ends the job with an error naming both points instead
 * of leaving the others waiting for its transfers (transport/coll_final.c).
 * Run with 1..4 ranks; alone there is nobody to diverge from. */
#include <stdio.h>

#include "mr_util.h"

#define EARLY 1 /* the rank that leaves */

/* The others' dot products need blocks of EARLY's: they wait for its
 * transfers, which never come, until its finalize barrier's message says
 * why. Every call returns; the first error is DAGGER_ERR_DIVERGENCE. */
Test(finalize_early, the_others_regions_end_with_a_divergence, .timeout = 120)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), me = dagger_rank(rt);
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 1, .dims = {4000}, .block = {250}};
    dagger_array_t *x;
    MR_OK(dagger_array_rand(rt, &d, 1, &x));
    if (n == 1) {
        MR_OK(dagger_array_destroy(x));
        MR_OK(dagger_finalize(rt));
        return;
    }
    if (me == EARLY) {
        dagger_status_t st = dagger_finalize(rt);
        cr_assert_neq(st, DAGGER_OK, "rank %d left alone, yet its dagger_finalize succeeded", me);
        return;
    }
    dagger_status_t st = DAGGER_OK;
    double dot;
    for (int i = 0; i < 3 && st == DAGGER_OK; i++) {
        dagger_region_t *r;
        dagger_future_t f;
        st = dagger_region_begin(rt, NULL, &r);
        if (st != DAGGER_OK)
            break;
        st = dagger_array_dot(r, x, x, &f);
        dagger_status_t end = dagger_region_end(r);
        st = st != DAGGER_OK ? st : end;
        if (st == DAGGER_OK)
            st = dagger_fetch(rt, f, &dot, sizeof(dot), NULL);
    }
    cr_assert_eq(st, DAGGER_ERR_DIVERGENCE, "rank %d: %s: %s", me, dagger_strerror(st),
                 dagger_error_detail());
    char want[64];
    snprintf(want, sizeof(want), "rank %d called dagger_finalize after 1 region,", EARLY);
    cr_assert(strstr(dagger_error_detail(), want), "rank %d: %s", me, dagger_error_detail());
    cr_assert_neq(dagger_finalize(rt), DAGGER_OK);
}

/* Where the others call a collective instead, its signature check says it
 * on every rank, the leaving one included. */
Test(finalize_early, a_collective_against_it_names_dagger_finalize, .timeout = 120)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), me = dagger_rank(rt);
    if (n == 1) {
        MR_OK(dagger_finalize(rt));
        return;
    }
    dagger_status_t st;
    if (me == EARLY) {
        st = dagger_finalize(rt);
    } else {
        int64_t v = 1;
        st = dagger_allreduce(rt, &v, 1, DAGGER_I64, DAGGER_OP_ADD);
    }
    cr_assert_eq(st, DAGGER_ERR_DIVERGENCE, "rank %d: %s: %s", me, dagger_strerror(st),
                 dagger_error_detail());
    char want[64];
    snprintf(want, sizeof(want), "rank %d called dagger_finalize() after 0 regions", EARLY);
    cr_assert(strstr(dagger_error_detail(), want), "rank %d: %s", me, dagger_error_detail());
    if (me != EARLY)
        cr_assert_neq(dagger_finalize(rt), DAGGER_OK);
}
