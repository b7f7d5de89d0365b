/* Uniformity checking across real ranks (1..4): identical programs pass,
 * differing ones fail the same way on every rank, naming who did what. */
#include <stdio.h>

#include "mr_codelets.h"
#include "mr_util.h"

static dagger_codelet_t reg(dagger_runtime_t *rt, const char *name, size_t ret)
{
    dagger_codelet_desc_t d = {.name = name, .cpu = mr_touch, .return_size = ret};
    dagger_codelet_t cl;
    MR_OK(dagger_codelet_register(rt, &d, &cl));
    return cl;
}

static dagger_chunk_t vec(dagger_runtime_t *rt)
{
    dagger_chunk_desc_t d = {.dtype = DAGGER_F64, .ndims = 1, .dims = {4}, .owner = -1};
    dagger_chunk_t c;
    MR_OK(dagger_chunk_create(rt, &d, &c));
    return c;
}

static void one_region(dagger_runtime_t *rt, dagger_codelet_t cl, dagger_chunk_t c)
{
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(dagger_spawn(r, cl, DAGGER_INOUT(dagger_view(rt, c)), DAGGER_END));
    MR_OK(dagger_region_end(r));
}

/* Codelets are known by name: ranks registering them in different orders
 * plan the same tasks, and checking must not call that a divergence (it did:
 * "ranks 0 create or free a chunk; ranks 1 create or free a chunk"). */
Test(uniformity, codelet_registration_order_is_free)
{
    dagger_runtime_t *rt = mr_init();
    int me = dagger_rank(rt);
    const char *names[3] = {"u_alpha", "u_beta", "u_gamma"};
    dagger_codelet_t cl[3];
    for (int i = 0; i < 3; i++) {
        int k = (i + me) % 3;
        cl[k] = reg(rt, names[k], 0);
    }
    MR_OK(dagger_check_uniformity(rt, 1));
    dagger_chunk_t c = vec(rt);
    for (int i = 0; i < 3; i++)
        one_region(rt, cl[i], c);
    MR_OK(dagger_chunk_free(rt, c));
    MR_OK(dagger_finalize(rt));
}

/* The program of the report: a region with checking off, a free, checking
 * turned on, then the same calls on every rank. */
Test(uniformity, turned_on_mid_program)
{
    dagger_runtime_t *rt = mr_init();
    dagger_codelet_t cl = reg(rt, "u_touch", 0), late;
    dagger_chunk_t a = vec(rt), b = vec(rt);
    one_region(rt, cl, a);
    one_region(rt, cl, b);
    MR_OK(dagger_chunk_free(rt, a));
    /* Registered while checking is off, in a rank-dependent order. */
    if (dagger_rank(rt) % 2) {
        late = reg(rt, "u_late", 0);
        reg(rt, "u_later", 0);
    } else {
        reg(rt, "u_later", 0);
        late = reg(rt, "u_late", 0);
    }
    MR_OK(dagger_check_uniformity(rt, 1));
    dagger_chunk_t c = vec(rt);
    one_region(rt, late, c);
    one_region(rt, cl, b);
    MR_OK(dagger_chunk_free(rt, c));
    MR_OK(dagger_finalize(rt));
}

/* dagger_check_uniformity is collective: different values are an error on
 * every rank naming who passed what, and nothing changes. */
Test(uniformity, ranks_must_pass_the_same_switch)
{
    dagger_runtime_t *rt = mr_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    dagger_status_t st = dagger_check_uniformity(rt, me == 0);
    if (n == 1) {
        cr_assert_eq(st, DAGGER_OK);
        MR_OK(dagger_check_uniformity(rt, 0));
    } else {
        cr_assert_eq(st, DAGGER_ERR_DIVERGENCE, "rank %d: %s", me, dagger_strerror(st));
        char expect[64];
        snprintf(expect, sizeof(expect), "ranks 0 pass 1 and ranks 1");
        cr_assert(strstr(dagger_error_detail(), expect), "%s", dagger_error_detail());
        cr_assert(strstr(dagger_error_detail(), "stays off"), "%s", dagger_error_detail());
    }
    /* Still off everywhere: a differing user value is not checked. */
    MR_OK(dagger_check_uniform(rt, &me, sizeof(me)));
    MR_OK(dagger_finalize(rt));
}

/* Turning checking on after the ranks already planned differently says so
 * at once, rather than at the next (identical) call. */
Test(uniformity, a_difference_from_before_shows_at_the_switch)
{
    dagger_runtime_t *rt = mr_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    dagger_chunk_desc_t d = {.dtype = DAGGER_F64, .ndims = 1, .dims = {me == n - 1 ? 5u : 4u}};
    dagger_chunk_t c;
    MR_OK(dagger_chunk_create(rt, &d, &c));
    dagger_status_t st = dagger_check_uniformity(rt, 1);
    if (n == 1) {
        cr_assert_eq(st, DAGGER_OK);
    } else {
        cr_assert_eq(st, DAGGER_ERR_DIVERGENCE, "rank %d: %s", me, dagger_strerror(st));
        cr_assert(strstr(dagger_error_detail(), "while it was off"), "%s", dagger_error_detail());
    }
    MR_OK(dagger_check_uniformity(rt, 0));
    MR_OK(dagger_finalize(rt));
}

/* dagger_check_uniform: equal bytes pass; bytes that differ on the last rank
 * are DAGGER_ERR_DIVERGENCE on every rank, naming both groups of ranks. */
Test(uniformity, check_uniform_names_the_ranks)
{
    dagger_runtime_t *rt = mr_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    MR_OK(dagger_check_uniformity(rt, 1));
    double same[3] = {1, 2, 3};
    MR_OK(dagger_check_uniform(rt, same, sizeof(same)));
    same[2] = me == n - 1 && n > 1 ? 4 : 3;
    dagger_status_t st = dagger_check_uniform(rt, same, sizeof(same));
    if (n == 1) {
        cr_assert_eq(st, DAGGER_OK);
    } else {
        cr_assert_eq(st, DAGGER_ERR_DIVERGENCE, "rank %d: %s", me, dagger_strerror(st));
        const char *why = dagger_error_detail();
        char first[96], last[96] = "ranks";
        snprintf(first, sizeof(first), "ranks");
        for (int r = 0; r < n - 1; r++)
            snprintf(first + strlen(first), sizeof(first) - strlen(first), " %d", r);
        strcat(first, " check a user value (dagger_check_uniform #2)");
        snprintf(last + 5, sizeof(last) - 5, " %d check a user value", n - 1);
        cr_assert(strstr(why, first) && strstr(why, last), "rank %d: %s", me, why);
    }
    /* Lengths count too. */
    st = dagger_check_uniform(rt, same, me == n - 1 ? 2 * sizeof(double) : sizeof(same));
    cr_assert_eq(st, n == 1 ? DAGGER_OK : DAGGER_ERR_DIVERGENCE, "rank %d: %s", me,
                 dagger_strerror(st));
    MR_OK(dagger_finalize(rt));
}

/* One name, two descriptions: the first task using it is the divergence. */
Test(uniformity, codelet_description_is_checked_with_its_task)
{
    dagger_runtime_t *rt = mr_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    MR_OK(dagger_check_uniformity(rt, 1));
    dagger_codelet_t cl = reg(rt, "u_two_faces", me == n - 1 && n > 1 ? 8 : 0);
    dagger_chunk_t c = vec(rt);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    dagger_status_t st = dagger_spawn(r, cl, DAGGER_INOUT(dagger_view(rt, c)), DAGGER_END);
    dagger_status_t end = dagger_region_end(r);
    if (n == 1) {
        cr_assert_eq(st, DAGGER_OK);
        cr_assert_eq(end, DAGGER_OK);
    } else {
        cr_assert_eq(st, DAGGER_ERR_DIVERGENCE, "rank %d: %s", me, dagger_strerror(st));
        cr_assert(strstr(dagger_error_detail(), "submit task 1 (codelet u_two_faces)"), "%s",
                  dagger_error_detail());
        cr_assert_eq(end, DAGGER_ERR_DIVERGENCE);
    }
    MR_OK(dagger_finalize(rt));
}
