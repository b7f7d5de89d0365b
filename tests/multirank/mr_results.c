/* Task results as data (issue 15) and fetch after a failure (issue 11), run
 * with 1..4 ranks: every rank must see the same bytes or the same error. */
#include <stdio.h>

#include "mr_codelets.h"
#include "mr_util.h"

/* Sets a value, then fails: the value must never be fetched. */
static int failval(dagger_task_t *t)
{
    double v = 42.0;
    dagger_task_return(t, &v, sizeof(v));
    return dagger_task_fail(t, "no value today");
}

static void expect_failed_fetch(dagger_runtime_t *rt, dagger_future_t f, const char *expect)
{
    double v = -1;
    size_t len = 0;
    dagger_status_t st = dagger_fetch(rt, f, &v, sizeof(v), &len);
    cr_assert_eq(st, DAGGER_ERR_TASK_FAILED, "rank %d: fetch gave %s (value %g)", dagger_rank(rt),
                 dagger_strerror(st), v);
    cr_assert(strstr(dagger_error_detail(), expect), "detail: %s", dagger_error_detail());
}

/* A future whose task failed: fetch returns that task's error on every rank,
 * inside the region and after it; values of tasks before it still fetch. */
Test(results, fetch_after_failure)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt), bad = (n - 1) % n;
    dagger_codelet_t ok = mr_reg(rt, "rankval", mr_rankval, sizeof(double));
    dagger_codelet_t fail = mr_reg(rt, "failval", failval, sizeof(double));
    dagger_future_t good, f;
    char expect[96];
    snprintf(expect, sizeof(expect), "task 2 (failval) failed on rank %d: no value today", bad);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, ok, 0, 0, NULL, &good));
    MR_OK(mr_spawn_on(r, fail, bad, 0, NULL, &f));
    expect_failed_fetch(rt, f, expect); /* inside the region */
    double v = 0;
    MR_OK(dagger_fetch(rt, good, &v, sizeof(v), NULL));
    cr_assert_eq(v, 10.0);
    cr_assert_eq(dagger_region_end(r), DAGGER_ERR_TASK_FAILED);
    expect_failed_fetch(rt, f, expect); /* after it */
    MR_OK(dagger_fetch(rt, good, &v, sizeof(v), NULL));
    cr_assert_eq(v, 10.0);
    /* A task of a later region produces a good value again. */
    dagger_future_t g;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    MR_OK(mr_spawn_on(r, ok, bad, 0, NULL, &g));
    MR_OK(dagger_region_end(r));
    MR_OK(dagger_fetch(rt, g, &v, sizeof(v), NULL));
    cr_assert_eq(v, (bad + 1) * 10.0);
    expect_failed_fetch(rt, f, expect);
    MR_OK(dagger_finalize(rt));
}
