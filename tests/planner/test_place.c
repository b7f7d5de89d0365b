/* Placement: owner computes (writes, then reads, then lowest rank), scopes,
 * exact processors, GPU opt-in, device choice, processor ids. */
#include <criterion/criterion.h>

#include "planner/plan_fixture.h"

static world_t *w;
static uint32_t cpu, both;

static void setup(void)
{
    uint32_t ndev[4] = {0, 2, 0, 1};
    w = w_create_ex(4, 2, ndev, NULL, 0, 0);
    cpu = w_codelet(w, "cpu", DG_PLAN_KIND_BIT(DG_PLAN_CPU), 0);
    both = w_codelet(w, "both", DG_PLAN_KIND_BIT(DG_PLAN_CPU) | DG_PLAN_KIND_BIT(DG_PLAN_CUDA), 0);
    w_region_begin(w, NULL);
}

static void teardown(void)
{
    w_region_end(w);
    w_destroy(w);
}

TestSuite(place, .init = setup, .fini = teardown);

static dg_plan_arg_t view(uint64_t c, dagger_access_t m)
{
    return w_view(w, c, m);
}

Test(place, owner_of_most_written_bytes_computes)
{
    uint64_t small = w_chunk1(w, 1, 10), large = w_chunk1(w, 2, 20), read = w_chunk1(w, 3, 100);
    dg_plan_arg_t a[3] = {view(small, DAGGER_MODE_OUT), view(large, DAGGER_MODE_INOUT),
                          view(read, DAGGER_MODE_IN)};
    cr_assert_eq(w_task(w, cpu, a, 3, NULL).rank, 2, "writes outweigh reads");
    a[1].mode = DAGGER_MODE_IN; /* now rank 1 writes the most */
    cr_assert_eq(w_task(w, cpu, a, 3, NULL).rank, 1);
}

Test(place, ties_go_to_most_read_bytes_then_lowest_rank)
{
    uint64_t w2 = w_chunk1(w, 2, 10), w1 = w_chunk1(w, 1, 10), r1 = w_chunk1(w, 1, 5);
    dg_plan_arg_t a[3] = {view(w2, DAGGER_MODE_OUT), view(w1, DAGGER_MODE_OUT),
                          view(r1, DAGGER_MODE_IN)};
    cr_assert_eq(w_task(w, cpu, a, 3, NULL).rank, 1, "equal writes, rank 1 reads more");
    cr_assert_eq(w_task(w, cpu, a, 2, NULL).rank, 1, "equal writes and reads: lowest rank");
    cr_assert_eq(w_task(w, cpu, NULL, 0, NULL).rank, 0, "no data: the lowest rank");
}

Test(place, scopes_filter_ranks_and_processors)
{
    uint64_t c = w_chunk1(w, 1, 10);
    dg_plan_arg_t a = view(c, DAGGER_MODE_INOUT);
    int32_t ranks[2] = {3, 2};
    dg_plan_scope_t s = {.ranks = ranks, .nranks = 2};
    cr_assert_eq(w_task(w, cpu, &a, 1, &s).rank, 2, "owner outside the scope: lowest allowed");
    uint32_t proc;
    cr_assert_eq(dg_plan_proc_id(w->pl[0], 3, DG_PLAN_CPU, 1, &proc), DAGGER_OK);
    dg_plan_scope_t ex = {.procs = &proc, .nprocs = 1};
    dg_plan_submitted_t r = w_task(w, cpu, &a, 1, &ex);
    cr_assert_eq(r.rank, 3);
    cr_assert_eq(r.proc, proc, "an exact processor is named in the launch");
    dg_plan_submitted_t any = w_task(w, cpu, &a, 1, NULL);
    cr_assert_eq(any.proc, DG_PLAN_ANY_CPU, "otherwise any CPU thread of the rank");
}

Test(place, gpus_only_when_the_scope_opts_in)
{
    uint64_t c = w_chunk1(w, 1, 10);
    dg_plan_arg_t a = view(c, DAGGER_MODE_INOUT);
    dg_plan_submitted_t s = w_task(w, both, &a, 1, NULL);
    cr_assert_eq(s.space, 0, "default scope: CPU");
    dg_plan_scope_t g = {.kinds = DG_PLAN_KIND_BIT(DG_PLAN_CPU) | DG_PLAN_KIND_BIT(DG_PLAN_CUDA)};
    s = w_task(w, both, &a, 1, &g);
    cr_assert_eq(s.rank, 1);
    cr_assert_gt(s.space, 0);
    dg_plan_kind_t k;
    int32_t r;
    cr_assert_eq(dg_plan_proc_info(w->pl[0], s.proc, &r, &k, NULL), DAGGER_OK);
    cr_assert(r == 1 && k == DG_PLAN_CUDA);
    /* the data now lives on that device: the next task goes there too */
    uint32_t first = s.space;
    for (int i = 0; i < 3; i++)
        cr_assert_eq(w_task(w, both, &a, 1, &g).space, first);
    /* no argument bytes anywhere: device = task id mod device count */
    dg_plan_scope_t g1 = {.kinds = DG_PLAN_KIND_BIT(DG_PLAN_CUDA), .ranks = (int32_t[]){1},
                          .nranks = 1};
    uint32_t seen = 0;
    for (int i = 0; i < 4; i++)
        seen |= 1u << w_task(w, both, NULL, 0, &g1).space;
    cr_assert_eq(seen, 6u, "both devices are used");
    /* a CPU-only codelet never lands on a GPU, even when the scope allows one */
    cr_assert_eq(w_task(w, cpu, &a, 1, &g).space, 0);
}

Test(place, processor_ids_sort_by_rank_kind_index)
{
    cr_assert_eq(dg_plan_nprocs(w->pl[0]), 2 + 4 + 2 + 3);
    uint32_t id;
    cr_assert_eq(dg_plan_proc_id(w->pl[0], 1, DG_PLAN_CUDA, 1, &id), DAGGER_OK);
    cr_assert_eq(id, 2 + 3);
    int32_t r;
    dg_plan_kind_t k;
    uint32_t idx;
    cr_assert_eq(dg_plan_proc_info(w->pl[0], 10, &r, &k, &idx), DAGGER_OK);
    cr_assert(r == 3 && k == DG_PLAN_CUDA && idx == 0);
    cr_assert_eq(dg_plan_proc_info(w->pl[0], 2, &r, &k, &idx), DAGGER_OK);
    cr_assert(r == 1 && k == DG_PLAN_CPU && idx == 0);
    cr_assert_eq(dg_plan_proc_id(w->pl[0], 0, DG_PLAN_CUDA, 0, &id), DAGGER_ERR_NOT_FOUND);
    cr_assert_eq(dg_plan_proc_info(w->pl[0], 11, &r, &k, &idx), DAGGER_ERR_NOT_FOUND);
}

Test(place, region_scope_intersects_task_scope)
{
    w_region_end(w);
    int32_t rr[2] = {1, 2};
    dg_plan_scope_t region = {.ranks = rr, .nranks = 2};
    w_region_begin(w, &region);
    uint64_t c = w_chunk1(w, 3, 10);
    dg_plan_arg_t a = view(c, DAGGER_MODE_INOUT);
    cr_assert_eq(w_task(w, cpu, &a, 1, NULL).rank, 1);
    int32_t t2 = 2;
    dg_plan_scope_t s = {.ranks = &t2, .nranks = 1};
    cr_assert_eq(w_task(w, cpu, &a, 1, &s).rank, 2);
    int32_t t3 = 3;
    dg_plan_scope_t bad = {.ranks = &t3, .nranks = 1};
    dg_plan_task_desc_t t = {.codelet = cpu, .args = &a, .nargs = 1, .scope = &bad};
    cr_assert_eq(w_submit(w, &t, NULL), DAGGER_ERR_SCOPE);
}
