/* The test device kind in the planner: a device kind like CUDA and HIP whose
 * tasks run the codelet's CPU implementation; opt-in through scopes only. */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/core/plan/plan_fixture.h"

static world_t *w;
static uint32_t cpu, cuda_only;
#define TD DG_PLAN_KIND_BIT(DG_PLAN_TESTDEV)

static void make(const uint32_t *ndev)
{
    const dg_plan_kind_t kinds[3] = {DG_PLAN_TESTDEV, DG_PLAN_TESTDEV, DG_PLAN_TESTDEV};
    w = w_create_ex(3, 2, ndev, kinds, 0, 0);
    cpu = w_codelet(w, "cpu", DG_PLAN_KIND_BIT(DG_PLAN_CPU), 0);
    cuda_only = w_codelet(w, "cuda_only", DG_PLAN_KIND_BIT(DG_PLAN_CUDA), 0);
    w_region_begin(w, NULL);
}

static void teardown(void)
{
    w_region_end(w);
    w_destroy(w);
}

static void with_devices(void)
{
    const uint32_t ndev[3] = {1, 2, 0};
    make(ndev);
}

static void without_devices(void)
{
    make(NULL);
}

static dg_plan_kind_t kind_at(dg_plan_submitted_t s, int32_t *rank)
{
    dg_plan_kind_t k = DG_PLAN_CPU;
    if (s.proc != DG_PLAN_ANY_CPU)
        cr_assert_eq(dg_plan_proc_info(w->pl[0], s.proc, rank, &k, NULL), DAGGER_OK);
    return k;
}

Test(testdev, cpu_codelets_run_on_test_devices_when_the_scope_opts_in, .init = with_devices,
     .fini = teardown)
{
    uint64_t c = w_chunk1(w, 1, 10);
    dg_plan_arg_t a = w_view(w, c, DAGGER_MODE_INOUT);
    cr_assert_eq(w_task(w, cpu, &a, 1, NULL).space, 0, "default scope: CPU only");
    dg_plan_scope_t td = {.kinds = TD};
    dg_plan_submitted_t s = w_task(w, cpu, &a, 1, &td);
    int32_t r = -1;
    cr_assert_eq(kind_at(s, &r), DG_PLAN_TESTDEV);
    cr_assert_eq(r, 1, "owner computes");
    cr_assert_gt(s.space, 0, "in the device's memory space");
    cr_assert_gt(w_count(w, 1, DG_PLAN_OP_COPY), 0, "the data was copied to the device");
    /* rank 2 has none: a scope of its devices names what is missing */
    dg_plan_scope_t r2 = {.kinds = TD, .ranks = (const int32_t[]){2}, .nranks = 1};
    dg_plan_task_desc_t t = {.codelet = cpu, .args = &a, .nargs = 1, .scope = &r2};
    cr_assert_eq(w_submit(w, &t, NULL), DAGGER_ERR_SCOPE);
    cr_assert(strstr(dagger_error_detail(), "test device"), "%s", dagger_error_detail());
    /* a union of rank 2's CPUs and rank 0's test device */
    dg_plan_scope_t parts[2] = {{.ranks = (const int32_t[]){2}, .nranks = 1},
                                {.ranks = (const int32_t[]){0}, .nranks = 1, .kinds = TD}};
    dg_plan_scope_t u = {.parts = parts, .nparts = 2};
    s = w_task(w, cpu, NULL, 0, &u);
    cr_assert_eq(kind_at(s, &r), DG_PLAN_TESTDEV);
    cr_assert_eq(r, 0, "the lowest rank the union admits, on its device");
}

Test(testdev, processor_table_numbers_test_devices_after_cpus, .init = with_devices,
     .fini = teardown)
{
    cr_assert_eq(dg_plan_nprocs(w->pl[0]), 2 + 1 + 2 + 2 + 2);
    uint32_t id;
    cr_assert_eq(dg_plan_proc_id(w->pl[0], 1, DG_PLAN_TESTDEV, 1, &id), DAGGER_OK);
    cr_assert_eq(id, 3 + 2 + 1);
    int32_t r;
    dg_plan_kind_t k;
    uint32_t idx;
    cr_assert_eq(dg_plan_proc_info(w->pl[0], id, &r, &k, &idx), DAGGER_OK);
    cr_assert(r == 1 && k == DG_PLAN_TESTDEV && idx == 1);
    cr_assert_eq(dg_plan_proc_id(w->pl[0], 2, DG_PLAN_TESTDEV, 0, &id), DAGGER_ERR_NOT_FOUND);
}

Test(testdev, a_codelet_without_an_implementation_for_the_kind_is_a_scope_error,
     .init = with_devices, .fini = teardown)
{
    dg_plan_scope_t td = {.kinds = TD};
    dg_plan_task_desc_t t = {.codelet = cuda_only, .scope = &td};
    cr_assert_eq(w_submit(w, &t, NULL), DAGGER_ERR_SCOPE);
    cr_assert(strstr(dagger_error_detail(), "implements: CUDA"), "%s", dagger_error_detail());
}

Test(testdev, no_test_devices_anywhere_says_how_to_get_them, .init = without_devices,
     .fini = teardown)
{
    dg_plan_scope_t td = {.kinds = TD};
    dg_plan_task_desc_t t = {.codelet = cpu, .scope = &td};
    cr_assert_eq(w_submit(w, &t, NULL), DAGGER_ERR_SCOPE);
    cr_assert(strstr(dagger_error_detail(), "no rank has a device of kind test device"), "%s",
              dagger_error_detail());
    cr_assert(strstr(dagger_error_detail(), "DAGGER_TEST_DEVICES"), "%s", dagger_error_detail());
}
