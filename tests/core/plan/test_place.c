/* Placement: owner computes (writes, then reads, then lowest rank), scopes,
 * exact processors, GPU opt-in, device choice, processor ids. */
#include <criterion/criterion.h>

#include "tests/core/plan/plan_fixture.h"

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

/* ---- union scopes ---- */

static uint32_t pid(int32_t rank, dg_plan_kind_t kind, uint32_t index)
{
    uint32_t id;
    cr_assert_eq(dg_plan_proc_id(w->pl[0], rank, kind, index, &id), DAGGER_OK);
    return id;
}

static dg_plan_kind_t kind_at(dg_plan_submitted_t s)
{
    if (s.proc == DG_PLAN_ANY_CPU)
        return DG_PLAN_CPU;
    dg_plan_kind_t k;
    cr_assert_eq(dg_plan_proc_info(w->pl[0], s.proc, NULL, &k, NULL), DAGGER_OK);
    return k;
}

/* "Rank 0's CPUs or rank 1's GPU": owner computes among those candidates. */
Test(place, union_of_rank_cpus_and_a_gpu)
{
    int32_t r0 = 0, r1 = 1;
    dg_plan_scope_t parts[2] = {
        {.ranks = &r0, .nranks = 1, .kinds = DG_PLAN_KIND_BIT(DG_PLAN_CPU)},
        {.ranks = &r1, .nranks = 1, .kinds = DG_PLAN_KIND_BIT(DG_PLAN_CUDA)}};
    dg_plan_scope_t u = {.parts = parts, .nparts = 2};
    for (int32_t owner = 0; owner < 4; owner++) {
        dg_plan_arg_t a = view(w_chunk1(w, owner, 10), DAGGER_MODE_INOUT);
        dg_plan_submitted_t s = w_task(w, both, &a, 1, &u);
        if (owner == 1) {
            cr_assert(s.rank == 1 && s.space > 0 && kind_at(s) == DG_PLAN_CUDA,
                      "rank 1 only through its GPU");
        } else {
            cr_assert_eq(s.rank, 0, "owner %d is no candidate: the lowest candidate rank", owner);
            cr_assert(s.space == 0 && s.proc == DG_PLAN_ANY_CPU, "rank 0 through its CPUs");
        }
        /* Without a GPU implementation, only rank 0's CPUs remain. */
        cr_assert_eq(w_task(w, cpu, &a, 1, &u).rank, 0);
    }
    /* "Rank 1's CPUs or rank 3's GPU": rank 1 has GPUs too, but not in the union. */
    int32_t r3 = 3;
    dg_plan_scope_t p2[2] = {{.ranks = &r1, .nranks = 1},
                             {.ranks = &r3, .nranks = 1, .kinds = DG_PLAN_KIND_BIT(DG_PLAN_CUDA)}};
    dg_plan_scope_t u2 = {.parts = p2, .nparts = 2};
    dg_plan_arg_t b1 = view(w_chunk1(w, 1, 10), DAGGER_MODE_INOUT);
    dg_plan_submitted_t c = w_task(w, both, &b1, 1, &u2);
    cr_assert(c.rank == 1 && c.space == 0, "rank 1 through its CPUs only");
    /* The order of the parts does not matter. */
    dg_plan_scope_t rev[2] = {parts[1], parts[0]}, ur = {.parts = rev, .nparts = 2};
    dg_plan_arg_t a = view(w_chunk1(w, 1, 10), DAGGER_MODE_INOUT);
    dg_plan_submitted_t x = w_task(w, both, &a, 1, &u), y = w_task(w, both, &a, 1, &ur);
    cr_assert(x.rank == y.rank && x.space == y.space);
}

/* An explicit list of exact processors, as a union or as one list. */
Test(place, union_of_exact_processors)
{
    uint32_t q2 = pid(2, DG_PLAN_CPU, 1), q3 = pid(3, DG_PLAN_CPU, 0);
    dg_plan_scope_t parts[2] = {{.procs = &q2, .nprocs = 1}, {.procs = &q3, .nprocs = 1}};
    dg_plan_scope_t u = {.parts = parts, .nparts = 2};
    dg_plan_arg_t a3 = view(w_chunk1(w, 3, 10), DAGGER_MODE_INOUT);
    dg_plan_arg_t a2 = view(w_chunk1(w, 2, 10), DAGGER_MODE_INOUT);
    dg_plan_arg_t a0 = view(w_chunk1(w, 0, 10), DAGGER_MODE_INOUT);
    dg_plan_submitted_t s = w_task(w, cpu, &a3, 1, &u);
    cr_assert(s.rank == 3 && s.proc == q3, "owner 3 computes, on the named thread");
    s = w_task(w, cpu, &a2, 1, &u);
    cr_assert(s.rank == 2 && s.proc == q2);
    s = w_task(w, cpu, &a0, 1, &u);
    cr_assert(s.rank == 2 && s.proc == q2, "owner 0 is no candidate: the lowest candidate");
    /* Two threads of one rank named: the task id picks, in sorted order. */
    uint32_t both_threads[2] = {pid(2, DG_PLAN_CPU, 1), pid(2, DG_PLAN_CPU, 0)};
    dg_plan_scope_t l = {.procs = both_threads, .nprocs = 2};
    uint32_t seen = 0;
    for (int i = 0; i < 4; i++) {
        s = w_task(w, cpu, &a2, 1, &l);
        cr_assert_eq(s.rank, 2);
        seen |= 1u << (s.proc - pid(2, DG_PLAN_CPU, 0));
    }
    cr_assert_eq(seen, 3u, "both named threads are used");
    /* A named GPU as a part: the union opts into its kind. */
    uint32_t g3 = pid(3, DG_PLAN_CUDA, 0);
    dg_plan_scope_t gp[2] = {{.procs = &q2, .nprocs = 1}, {.procs = &g3, .nprocs = 1}};
    dg_plan_scope_t ug = {.parts = gp, .nparts = 2};
    s = w_task(w, both, &a3, 1, &ug);
    cr_assert(s.rank == 3 && s.proc == g3 && s.space == 1);
}

/* A union region scope intersected with task scopes keeps both meanings. */
Test(place, union_region_scope_intersects_task_scope)
{
    w_region_end(w);
    int32_t r0 = 0, r1 = 1, r2 = 2;
    dg_plan_scope_t parts[2] = {
        {.ranks = &r0, .nranks = 1, .kinds = DG_PLAN_KIND_BIT(DG_PLAN_CPU)},
        {.ranks = &r1, .nranks = 1, .kinds = DG_PLAN_KIND_BIT(DG_PLAN_CUDA)}};
    dg_plan_scope_t region = {.parts = parts, .nparts = 2};
    w_region_begin(w, &region);
    dg_plan_arg_t a = view(w_chunk1(w, 3, 10), DAGGER_MODE_INOUT);
    cr_assert_eq(w_task(w, both, &a, 1, NULL).rank, 0, "no task scope: the region's candidates");
    dg_plan_scope_t on1 = {.ranks = &r1, .nranks = 1};
    dg_plan_submitted_t s = w_task(w, both, &a, 1, &on1);
    cr_assert(s.rank == 1 && kind_at(s) == DG_PLAN_CUDA, "rank 1 of the region is its GPU");
    dg_plan_scope_t cpus = {.kinds = DG_PLAN_KIND_BIT(DG_PLAN_CPU)};
    cr_assert_eq(w_task(w, both, &a, 1, &cpus).rank, 0);
    /* A task union of rank 1's and rank 2's CPUs meets the region nowhere. */
    dg_plan_scope_t tp[2] = {{.ranks = &r1, .nranks = 1}, {.ranks = &r2, .nranks = 1}};
    dg_plan_scope_t tu = {.parts = tp, .nparts = 2};
    dg_plan_task_desc_t t = {.codelet = both, .args = &a, .nargs = 1, .scope = &tu};
    cr_assert_eq(w_submit(w, &t, NULL), DAGGER_ERR_SCOPE);
    cr_assert(strstr(dagger_error_detail(), "is a union"), "%s", dagger_error_detail());
    dg_plan_scope_t on2 = {.ranks = &r2, .nranks = 1};
    t.scope = &on2;
    cr_assert_eq(w_submit(w, &t, NULL), DAGGER_ERR_SCOPE);
}

Test(place, malformed_and_unsatisfiable_unions)
{
    dg_plan_arg_t a = view(w_chunk1(w, 0, 10), DAGGER_MODE_INOUT);
    int32_t r9 = 9, r0 = 0;
    dg_plan_scope_t bad_rank[2] = {{.ranks = &r0, .nranks = 1}, {.ranks = &r9, .nranks = 1}};
    dg_plan_scope_t u = {.parts = bad_rank, .nparts = 2};
    dg_plan_task_desc_t t = {.codelet = cpu, .args = &a, .nargs = 1, .scope = &u};
    cr_assert_eq(w_submit(w, &t, NULL), DAGGER_ERR_SCOPE);
    cr_assert(strstr(dagger_error_detail(), "part 1 of the union: the scope names rank 9"), "%s",
              dagger_error_detail());
    dg_plan_scope_t nested[1] = {{.parts = bad_rank, .nparts = 1}};
    dg_plan_scope_t n = {.parts = nested, .nparts = 1};
    t.scope = &n;
    cr_assert_eq(w_submit(w, &t, NULL), DAGGER_ERR_INVALID_ARG);
    /* Rank 0 and rank 2 have no GPU: a union of their GPUs admits nothing. */
    int32_t r2 = 2;
    uint32_t cuda = DG_PLAN_KIND_BIT(DG_PLAN_CUDA);
    dg_plan_scope_t gpus[2] = {{.ranks = &r0, .nranks = 1, .kinds = cuda},
                               {.ranks = &r2, .nranks = 1, .kinds = cuda}};
    dg_plan_scope_t ug = {.parts = gpus, .nparts = 2};
    t = (dg_plan_task_desc_t){.codelet = both, .args = &a, .nargs = 1, .scope = &ug};
    cr_assert_eq(w_submit(w, &t, NULL), DAGGER_ERR_SCOPE);
    w_region_end(w);
    cr_assert_eq(dg_plan_region_begin(w->pl[0], &ug), DAGGER_ERR_SCOPE);
    cr_assert(strstr(dagger_error_detail(), "in any part of its union"), "%s",
              dagger_error_detail());
    w_region_begin(w, NULL);
}
