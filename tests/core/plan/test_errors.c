/* Every bad input returns its error with a message that names the task,
 * codelet and argument and says what to change, and leaves the planner
 * usable with its state unchanged. */
#include <criterion/criterion.h>

#include "tests/core/plan/plan_fixture.h"

static world_t *w;
static uint32_t cl, gpu_only, typed;
static uint64_t c2, c1;
static uint64_t next_id; /* the id the next planned task must get */

static void setup(void)
{
    w = w_create(2);
    cl = w_codelet(w, "solve", DG_PLAN_KIND_BIT(DG_PLAN_CPU), 8);
    gpu_only = w_codelet(w, "gpu_only", DG_PLAN_KIND_BIT(DG_PLAN_CUDA), 0);
    dg_plan_codelet_desc_t d = {.name = "typed", .kinds = 1,
                                .dtypes = (dagger_dtype_t[]){DAGGER_F32, 0}, .ndtypes = 2};
    for (int r = 0; r < w->P; r++)
        cr_assert_eq(dg_plan_codelet_register(w->pl[r], &d, &typed), DAGGER_OK);
    c2 = w_chunk2(w, 1, 4, 5);
    c1 = w_chunk1(w, 0, 8);
    next_id = 1;
    w_region_begin(w, NULL);
}

static void teardown(void)
{
    w_region_end(w);
    w_destroy(w);
}

TestSuite(errors, .init = setup, .fini = teardown);

/* Submits a bad task: the status and message, and nothing changed. */
static void expect_error(const dg_plan_task_desc_t *t, dagger_status_t want, const char *needle)
{
    uint64_t h = dg_plan_hash(w->pl[0]);
    uint64_t ops = dg_plan_sim_nops(w->sim, 0) + dg_plan_sim_nops(w->sim, 1);
    cr_assert_eq(w_submit(w, t, NULL), want, "%s", dagger_error_detail());
    cr_assert(strstr(dagger_error_detail(), needle), "message '%s' lacks '%s'",
              dagger_error_detail(), needle);
    cr_assert_eq(dg_plan_hash(w->pl[0]), h, "a refused task changes no state");
    cr_assert_eq(dg_plan_sim_nops(w->sim, 0) + dg_plan_sim_nops(w->sim, 1), ops);
    /* still usable: the next good task gets the next id */
    dg_plan_arg_t a = w_view(w, c1, DAGGER_MODE_INOUT);
    dg_plan_submitted_t s = w_task(w, cl, &a, 1, NULL);
    cr_assert_eq(s.task, next_id, "a refused task used up no task id");
    next_id++;
}

static dg_plan_task_desc_t one(uint32_t codelet, dg_plan_arg_t *a)
{
    return (dg_plan_task_desc_t){.codelet = codelet, .args = a, .nargs = 1};
}

Test(errors, views_out_of_bounds_wrong_ndims_zero_extent_and_modifier_on_1d)
{
    dg_plan_arg_t a = w_view(w, c2, DAGGER_MODE_IN);
    a.view.off[1] = 2;
    dg_plan_task_desc_t t = one(cl, &a);
    expect_error(&t, DAGGER_ERR_BAD_VIEW, "task 1 (codelet 'solve') argument 0");
    cr_assert(strstr(dagger_error_detail(), "exceeds dimension 1"));
    a = w_view(w, c2, DAGGER_MODE_IN);
    a.view.ndims = 1;
    expect_error(&t, DAGGER_ERR_BAD_VIEW, "dimensions");
    a = w_view(w, c2, DAGGER_MODE_IN);
    a.view.ext[0] = 0;
    expect_error(&t, DAGGER_ERR_BAD_VIEW, "extent 0");
    a = w_view(w, c1, DAGGER_MODE_IN);
    a.view.mod = DAGGER_LOWER;
    expect_error(&t, DAGGER_ERR_BAD_VIEW, "DAGGER_FULL");
}

Test(errors, unknown_codelet_and_wrong_dtype)
{
    dg_plan_arg_t a = w_view(w, c1, DAGGER_MODE_IN);
    dg_plan_task_desc_t t = one(0xabcdef, &a);
    expect_error(&t, DAGGER_ERR_NOT_FOUND, "not registered");
    dg_plan_arg_t two[2] = {w_view(w, c1, DAGGER_MODE_IN), w_view(w, c2, DAGGER_MODE_IN)};
    dg_plan_task_desc_t tt = {.codelet = typed, .args = two, .nargs = 2};
    expect_error(&tt, DAGGER_ERR_DTYPE, "argument 0");
    tt.nargs = 1;
    expect_error(&tt, DAGGER_ERR_INVALID_ARG, "declares 2");
}

Test(errors, unknown_and_freed_chunks)
{
    uint64_t gone = w_chunk1(w, 1, 3);
    w_free(w, gone);
    dg_plan_arg_t a = {.kind = DG_PLAN_ARG_VIEW, .mode = DAGGER_MODE_IN,
                       .view = {.chunk = gone, .ndims = 1, .ext = {3}}};
    dg_plan_task_desc_t t = one(cl, &a);
    expect_error(&t, DAGGER_ERR_NOT_FOUND, "freed");
    a.view.chunk = 999;
    expect_error(&t, DAGGER_ERR_NOT_FOUND, "chunk 999");
    cr_assert_eq(dg_plan_chunk_free(w->pl[0], gone), DAGGER_ERR_NOT_FOUND);
    dg_plan_arg_t f = {.kind = DG_PLAN_ARG_FUTURE, .future = c1};
    t = one(cl, &f);
    expect_error(&t, DAGGER_ERR_NOT_FOUND, "not the id of a live future");
}

Test(errors, unsatisfiable_scope)
{
    dg_plan_task_desc_t t = {.codelet = gpu_only};
    expect_error(&t, DAGGER_ERR_SCOPE, "task 1 (codelet 'gpu_only')");
    int32_t bad_rank = 7;
    dg_plan_scope_t s = {.ranks = &bad_rank, .nranks = 1};
    t = (dg_plan_task_desc_t){.codelet = cl, .scope = &s};
    expect_error(&t, DAGGER_ERR_SCOPE, "rank 7, but the job has 2 ranks");
    uint32_t bad_proc = 99;
    dg_plan_scope_t sp = {.procs = &bad_proc, .nprocs = 1};
    t.scope = &sp;
    expect_error(&t, DAGGER_ERR_SCOPE, "processor 99, but the job has");
    dg_plan_scope_t malformed = {.nranks = 1};
    t.scope = &malformed;
    expect_error(&t, DAGGER_ERR_INVALID_ARG, "count but no entries");
    dg_plan_scope_t g = {.kinds = DG_PLAN_KIND_BIT(DG_PLAN_CUDA)};
    t.scope = &g;
    expect_error(&t, DAGGER_ERR_SCOPE, "widen");
}

/* The region scope: the same code for what nothing satisfies, the message once. */
Test(errors, unsatisfiable_region_scope)
{
    w_region_end(w);
    int32_t bad_rank = 7;
    dg_plan_scope_t s = {.ranks = &bad_rank, .nranks = 1};
    cr_assert_eq(dg_plan_region_begin(w->pl[0], &s), DAGGER_ERR_SCOPE);
    cr_assert(strstr(dagger_error_detail(), "region scope: the scope names rank 7"), "%s",
              dagger_error_detail());
    dg_plan_scope_t g = {.kinds = DG_PLAN_KIND_BIT(DG_PLAN_CUDA)};
    cr_assert_eq(dg_plan_region_begin(w->pl[0], &g), DAGGER_ERR_SCOPE);
    cr_assert(strstr(dagger_error_detail(), "kinds allowed: CUDA"), "%s", dagger_error_detail());
    w_region_begin(w, NULL);
}

Test(errors, cycles_name_both_tasks)
{
    dg_plan_arg_t a = w_view(w, c1, DAGGER_MODE_IN);
    uint64_t self = 1;
    dg_plan_task_desc_t t = {.codelet = cl, .args = &a, .nargs = 1, .deps = &self, .ndeps = 1};
    expect_error(&t, DAGGER_ERR_CYCLE, "task 1 (codelet 'solve'): it depends on task 1, which "
                                       "is the task itself");
    uint64_t later = 40;
    t.deps = &later;
    expect_error(&t, DAGGER_ERR_CYCLE, "not submitted yet");
}

Test(errors, state_and_registration_errors)
{
    w_region_end(w);
    dg_plan_task_desc_t t = {.codelet = cl};
    cr_assert_eq(dg_plan_submit(w->pl[0], &t, NULL), DAGGER_ERR_STATE);
    cr_assert_eq(dg_plan_region_end(w->pl[0]), DAGGER_ERR_STATE);
    w_region_begin(w, NULL);
    cr_assert_eq(dg_plan_region_begin(w->pl[0], NULL), DAGGER_ERR_STATE);
    uint32_t id;
    dg_plan_codelet_desc_t same = {.name = "solve", .kinds = 1, .ret_size = 8};
    cr_assert_eq(dg_plan_codelet_register(w->pl[0], &same, &id), DAGGER_OK);
    cr_assert_eq(id, cl);
    dg_plan_codelet_desc_t other = {.name = "solve", .kinds = 1, .ret_size = 4};
    cr_assert_eq(dg_plan_codelet_register(w->pl[0], &other, &id), DAGGER_ERR_EXISTS);
    cr_assert(strstr(dagger_error_detail(), "different description"));
    dg_plan_chunk_desc_t bad = {.owner = 5, .geom = {.dtype = DAGGER_F64, .ndims = 1, .dims = {3}}};
    uint64_t cid;
    cr_assert_eq(dg_plan_chunk_create(w->pl[0], &bad, &cid), DAGGER_ERR_INVALID_ARG);
    bad.owner = 0;
    bad.home_space = 1;
    cr_assert_eq(dg_plan_chunk_create(w->pl[0], &bad, &cid), DAGGER_ERR_INVALID_ARG);
    bad.home_space = 0;
    bad.geom.dtype = (dagger_dtype_t)42;
    cr_assert_eq(dg_plan_chunk_create(w->pl[0], &bad, &cid), DAGGER_ERR_DTYPE);
}

Test(errors, dependency_beyond_the_window)
{
    w_region_end(w);
    w_destroy(w);
    w = w_create(1);
    dg_plan_destroy(w->pl[0]);
    dg_plan_params_t prm = {.nranks = 1, .my_rank = 0, .ranks = w->desc, .emit = dg_plan_sim_emit,
                            .emit_ctx = dg_plan_sim_rank_ctx(w->sim, 0), .dep_window = 4};
    cr_assert_eq(dg_plan_create(&prm, &w->pl[0]), DAGGER_OK);
    cl = w_codelet(w, "solve", 1, 0);
    w_region_begin(w, NULL);
    for (int i = 0; i < 6; i++)
        w_task(w, cl, NULL, 0, NULL);
    uint64_t old = 1, recent = 4;
    dg_plan_task_desc_t t = {.codelet = cl, .deps = &old, .ndeps = 1};
    cr_assert_eq(dg_plan_submit(w->pl[0], &t, NULL), DAGGER_ERR_INVALID_ARG);
    cr_assert(strstr(dagger_error_detail(), "dep_window"));
    t.deps = &recent;
    cr_assert_eq(dg_plan_submit(w->pl[0], &t, NULL), DAGGER_OK);
}
