/* Scopes on real ranks (issue 15; issue 11's one error code), 1..4 ranks:
 * what nothing satisfies is DAGGER_ERR_SCOPE on every rank, wherever given. */
#include <stdio.h>

#include "mr_codelets.h"
#include "mr_util.h"

static void expect_scope_error(dagger_status_t st, const char *needle)
{
    cr_assert_eq(st, DAGGER_ERR_SCOPE, "got %s: %s", dagger_strerror(st), dagger_error_detail());
    cr_assert(strstr(dagger_error_detail(), needle), "detail: %s", dagger_error_detail());
}

Test(scopes, nothing_satisfies_is_one_error_everywhere)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), np = dagger_procs(rt, NULL, 0);
    dagger_codelet_t who = mr_reg(rt, "whoami", mr_whoami, 0);
    dagger_chunk_desc_t d = {.dtype = DAGGER_I32, .ndims = 1, .dims = {1}, .owner = 0};
    dagger_chunk_t c;
    MR_OK(dagger_chunk_create(rt, &d, &c));
    dagger_region_t *r;
    char rank_msg[64], proc_msg[64];
    snprintf(rank_msg, sizeof(rank_msg), "names rank %d, but the job has %d ranks", n, n);
    snprintf(proc_msg, sizeof(proc_msg), "names processor %d, but the job has %d", np, np);
    /* In a region's scope: a rank, a processor, a kind nobody has. */
    expect_scope_error(dagger_region_begin(rt, &DAGGER_SCOPE_RANK(n), &r), rank_msg);
    cr_assert_null(strstr(strstr(dagger_error_detail(), "dagger_region_begin") + 19,
                          "region_begin"), "the name once: %s", dagger_error_detail());
    dagger_scope_t bad_proc = {.has_proc = 1, .proc = np};
    expect_scope_error(dagger_region_begin(rt, &bad_proc, &r), proc_msg);
    dagger_scope_t gpu = {.kinds = DAGGER_PROC_CUDA};
    expect_scope_error(dagger_region_begin(rt, &gpu, &r), "kinds allowed: CUDA");
    /* In a task's scope: the same code, and the region stays usable. */
    MR_OK(dagger_region_begin(rt, NULL, &r));
    dagger_arg_t a = DAGGER_OUT(dagger_view(rt, c));
    dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(n)};
    expect_scope_error(dagger_submit(r, who, 1, &a, &o, NULL, NULL), rank_msg);
    o.scope = &(dagger_scope_t){.ranks = (const int[]){-1}, .nranks = 1};
    expect_scope_error(dagger_submit(r, who, 1, &a, &o, NULL, NULL), "names rank -1");
    o.scope = &bad_proc;
    expect_scope_error(dagger_submit(r, who, 1, &a, &o, NULL, NULL), proc_msg);
    o.scope = &gpu;
    expect_scope_error(dagger_submit(r, who, 1, &a, &o, NULL, NULL), "kinds allowed: CUDA");
    MR_OK(dagger_spawn(r, who, DAGGER_OUT(dagger_view(rt, c)), DAGGER_END));
    MR_OK(dagger_region_end(r));
    int32_t got = -1;
    mr_gather(rt, c, &got, sizeof(got));
    cr_assert_eq(got, 0);
    MR_OK(dagger_finalize(rt));
}

/* Writes (rank, processor) of the running task into an i32 chunk of 2. */
static int whereami(dagger_task_t *t)
{
    int32_t *p = dagger_task_arg(t, 0).data;
    p[0] = dagger_task_rank(t);
    p[1] = dagger_task_proc(t);
    return DAGGER_OK;
}

static dagger_chunk_t pair_chunk(dagger_runtime_t *rt, int owner)
{
    dagger_chunk_desc_t d = {.dtype = DAGGER_I32, .ndims = 1, .dims = {2}, .owner = owner};
    dagger_chunk_t c;
    MR_OK(dagger_chunk_create(rt, &d, &c));
    return c;
}

/* A runtime with the whereami codelet registered. */
static dagger_runtime_t *setup(dagger_codelet_t *where)
{
    dagger_runtime_t *rt = mr_init();
    *where = mr_reg(rt, "whereami", whereami, 0);
    return rt;
}

static void expect_ran(dagger_runtime_t *rt, dagger_chunk_t c, int rank, int proc)
{
    int32_t got[2] = {-1, -1};
    mr_gather(rt, c, got, sizeof(got));
    cr_assert_eq(got[0], rank, "ran on rank %d, not %d", got[0], rank);
    if (proc >= 0)
        cr_assert_eq(got[1], proc, "ran on processor %d, not %d", got[1], proc);
}

/* A task scoped to an exact processor really runs on that rank's thread. */
Test(scopes, exact_processor_on_real_ranks)
{
    dagger_codelet_t where;
    dagger_runtime_t *rt = setup(&where);
    dagger_proc_info_t procs[64];
    int np = dagger_procs(rt, procs, 64);
    cr_assert(np >= dagger_nranks(rt) && np <= 64);
    dagger_chunk_t c[64];
    for (int q = 0; q < np; q++)
        c[q] = pair_chunk(rt, 0); /* owned by rank 0: the data moves to the processor */
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    for (int q = 0; q < np; q++) {
        dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_PROC(q)};
        dagger_arg_t a = DAGGER_OUT(dagger_view(rt, c[q]));
        MR_OK(dagger_submit(r, where, 1, &a, &o, NULL, NULL));
    }
    MR_OK(dagger_region_end(r));
    for (int q = 0; q < np; q++)
        expect_ran(rt, c[q], procs[q].rank, q);
    MR_OK(dagger_finalize(rt));
}

/* "Rank 0's CPUs, or the last rank's last CPU thread, or the last rank's GPU":
 * owner computes among those candidates; no GPU here, so no GPU is chosen. */
Test(scopes, union_places_by_owner_among_candidates)
{
    dagger_codelet_t where;
    dagger_runtime_t *rt = setup(&where);
    int n = dagger_nranks(rt), last = n - 1;
    dagger_proc_info_t procs[64];
    int np = dagger_procs(rt, procs, 64), q = -1;
    for (int i = 0; i < np; i++)
        if (procs[i].rank == last && procs[i].kind == DAGGER_PROC_CPU)
            q = i; /* the last CPU thread of the last rank */
    dagger_scope_t u = DAGGER_SCOPE_UNION(
        DAGGER_SCOPE_RANK(0), DAGGER_SCOPE_PROC(q),
        ((dagger_scope_t){.ranks = (const int[]){last}, .nranks = 1, .kinds = DAGGER_PROC_CUDA}));
    dagger_chunk_t c[4];
    for (int o = 0; o < 4; o++)
        c[o] = pair_chunk(rt, o % n);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    dagger_task_opts_t opts = {.scope = &u};
    for (int o = 0; o < 4; o++) {
        dagger_arg_t a = DAGGER_INOUT(dagger_view(rt, c[o]));
        MR_OK(dagger_submit(r, where, 1, &a, &opts, NULL, NULL));
    }
    MR_OK(dagger_region_end(r));
    for (int o = 0; o < 4; o++) {
        int owner = o % n;
        if (owner == last && last > 0)
            expect_ran(rt, c[o], last, q);
        else
            expect_ran(rt, c[o], 0, -1); /* rank 0, or no candidate owner: the lowest rank */
    }
    /* A union of GPUs only admits nothing on these ranks: an error on every rank. */
    MR_OK(dagger_region_begin(rt, NULL, &r));
    dagger_scope_t gpus = DAGGER_SCOPE_UNION(
        ((dagger_scope_t){.ranks = (const int[]){0}, .nranks = 1, .kinds = DAGGER_PROC_CUDA}),
        ((dagger_scope_t){.ranks = (const int[]){last}, .nranks = 1, .kinds = DAGGER_PROC_HIP}));
    opts.scope = &gpus;
    dagger_arg_t a = DAGGER_INOUT(dagger_view(rt, c[0]));
    expect_scope_error(dagger_submit(r, where, 1, &a, &opts, NULL, NULL), "is a union");
    MR_OK(dagger_region_end(r));
    expect_scope_error(dagger_region_begin(rt, &gpus, &r), "in any part of its union");
    MR_OK(dagger_finalize(rt));
}

/* A union region scope, intersected with each task's scope. */
Test(scopes, union_region_scope_meets_task_scopes)
{
    dagger_codelet_t where;
    dagger_chunk_t c[3];
    dagger_runtime_t *rt = setup(&where);
    int n = dagger_nranks(rt), last = n - 1;
    for (int i = 0; i < 3; i++)
        c[i] = pair_chunk(rt, (i + 1) % n);
    dagger_scope_t ends = DAGGER_SCOPE_UNION(DAGGER_SCOPE_RANK(0), DAGGER_SCOPE_RANK(last));
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, &ends, &r));
    dagger_task_opts_t to_last = {.scope = &DAGGER_SCOPE_RANK(last)};
    dagger_arg_t a0 = DAGGER_INOUT(dagger_view(rt, c[0])), a1 = DAGGER_INOUT(dagger_view(rt, c[1]));
    MR_OK(dagger_submit(r, where, 1, &a0, &to_last, NULL, NULL));
    MR_OK(dagger_submit(r, where, 1, &a1, NULL, NULL, NULL));
    if (n >= 3) { /* rank 1 is outside the region's union */
        dagger_task_opts_t to1 = {.scope = &DAGGER_SCOPE_RANK(1)};
        dagger_arg_t a2 = DAGGER_INOUT(dagger_view(rt, c[2]));
        expect_scope_error(dagger_submit(r, where, 1, &a2, &to1, NULL, NULL),
                           "the region scope lists ranks/processors or is a union");
    }
    MR_OK(dagger_region_end(r));
    expect_ran(rt, c[0], last, -1);
    int owner1 = 2 % n; /* c[1]'s owner, when in the union, computes; else rank 0 */
    expect_ran(rt, c[1], owner1 == last || owner1 == 0 ? owner1 : 0, -1);
    MR_OK(dagger_finalize(rt));
}
