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
