/* Data movement: copy counts, copy-back of only what changed, remainder
 * transfers, slot sharing, slot caching, device copies; every plan is also
 * run by the reference executor. */
#include <criterion/criterion.h>

#include "tests/core/plan/plan_fixture.h"

static world_t *w;
static uint32_t cl;
static cl_table_t tbl;

static void setup(void)
{
    w = w_create(3);
    cl = w_codelet(w, "k", DG_PLAN_KIND_BIT(DG_PLAN_CPU) | DG_PLAN_KIND_BIT(DG_PLAN_CUDA), 0);
    tbl = (cl_table_t){.ids = {cl}, .ret = {0}, .n = 1};
}

static void teardown(void)
{
    w_destroy(w);
}

TestSuite(moves, .init = setup, .fini = teardown);

static dg_plan_scope_t on_rank(const int32_t *r)
{
    return (dg_plan_scope_t){.ranks = r, .nranks = 1};
}

/* Data transfers (SEND ops with bytes) and their total bytes. */
static uint64_t transfers(uint64_t *bytes)
{
    uint64_t n = 0, b = 0;
    for (int r = 0; r < w->P; r++)
        for (uint64_t i = 0; i < dg_plan_sim_nops(w->sim, r); i++) {
            const dg_plan_op_t *op = dg_plan_sim_op(w->sim, r, i);
            if (op->kind == DG_PLAN_OP_SEND && op->u.xfer.bytes) {
                n++;
                b += op->u.xfer.bytes;
            }
        }
    if (bytes)
        *bytes = b;
    return n;
}

static void run_sim(void)
{
    dg_plan_sim_opts_t o = {.seed = 7, .launch = cl_sim_launch, .ctx = &tbl};
    cr_assert_eq(dg_plan_sim_run(w->sim, &o), DAGGER_OK, "%s", dagger_error_detail());
}

Test(moves, in_on_a_remote_rank_is_one_transfer_and_zero_when_local)
{
    uint64_t c = w_chunk2(w, 0, 4, 4);
    int32_t r1 = 1, r0 = 0;
    dg_plan_scope_t s1 = on_rank(&r1), s0 = on_rank(&r0);
    w_region_begin(w, NULL);
    dg_plan_arg_t a = w_view(w, c, DAGGER_MODE_IN);
    w_task(w, cl, &a, 1, &s0);
    cr_assert_eq(transfers(NULL), 0);
    w_task(w, cl, &a, 1, &s1);
    cr_assert_eq(transfers(NULL), 1);
    w_task(w, cl, &a, 1, &s1); /* still current there */
    w_region_end(w);
    cr_assert_eq(transfers(NULL), 1, "nothing changed, so nothing goes back");
    run_sim();
}

Test(moves, inout_on_owner_is_zero_and_on_a_remote_rank_is_two)
{
    uint64_t c = w_chunk2(w, 0, 4, 4);
    int32_t r1 = 1;
    dg_plan_scope_t s1 = on_rank(&r1);
    w_region_begin(w, NULL);
    dg_plan_arg_t a = w_view(w, c, DAGGER_MODE_INOUT);
    dg_plan_submitted_t s = w_task(w, cl, &a, 1, NULL);
    cr_assert_eq(s.rank, 0, "owner computes");
    w_region_end(w);
    cr_assert_eq(transfers(NULL), 0);
    w_region_begin(w, NULL);
    w_task(w, cl, &a, 1, &s1);
    w_task(w, cl, &a, 1, &s1); /* second InOut on the same remote rank: no new transfer */
    w_region_end(w);
    cr_assert_eq(transfers(NULL), 2, "in, and back at region end");
    run_sim();
}

Test(moves, copy_back_moves_only_what_changed_and_remainders_only_the_stale_part)
{
    uint64_t c = w_chunk2(w, 0, 8, 8); /* 64 doubles, 512 bytes */
    int32_t r1 = 1, r0 = 0;
    dg_plan_scope_t s1 = on_rank(&r1), s0 = on_rank(&r0);
    w_region_begin(w, NULL);
    dg_plan_arg_t all = w_view(w, c, DAGGER_MODE_IN);
    w_task(w, cl, &all, 1, &s1);
    uint64_t bytes;
    cr_assert_eq(transfers(&bytes), 1);
    cr_assert_eq(bytes, 512);
    /* the owner rewrites one column: rank 1's copy is stale there only */
    dg_plan_arg_t col = {.kind = DG_PLAN_ARG_VIEW, .mode = DAGGER_MODE_OUT,
                         .view = {.chunk = c, .ndims = 2, .off = {0, 3}, .ext = {8, 1}}};
    w_task(w, cl, &col, 1, &s0);
    w_task(w, cl, &all, 1, &s1);
    cr_assert_eq(transfers(&bytes), 2);
    cr_assert_eq(bytes, 512 + 64, "only the stale column moves again");
    /* rank 1 updates the strict upper triangle of a 4x4 box: 6 elements */
    dg_plan_arg_t tri = {.kind = DG_PLAN_ARG_VIEW, .mode = DAGGER_MODE_INOUT,
                         .view = {.chunk = c, .ndims = 2, .mod = DAGGER_UNIT_UPPER,
                                  .off = {2, 2}, .ext = {4, 4}}};
    w_task(w, cl, &tri, 1, &s1);
    w_region_end(w);
    cr_assert_eq(transfers(&bytes), 3);
    cr_assert_eq(bytes, 512 + 64 + 6 * 8, "copy-back moves the 6 changed elements");
    run_sim();
}

Test(moves, views_of_one_parent_share_one_slot)
{
    uint64_t c = w_chunk2(w, 0, 8, 8);
    int32_t r2 = 2;
    dg_plan_scope_t s2 = on_rank(&r2);
    w_region_begin(w, NULL);
    dg_plan_arg_t top = {.kind = DG_PLAN_ARG_VIEW, .mode = DAGGER_MODE_INOUT,
                         .view = {.chunk = c, .ndims = 2, .off = {0, 0}, .ext = {4, 8}}};
    dg_plan_arg_t bottom = top;
    bottom.view.off[0] = 4;
    w_task(w, cl, &top, 1, &s2);
    w_task(w, cl, &bottom, 1, &s2);
    cr_assert_eq(w_count(w, 2, DG_PLAN_OP_ALLOC), 1, "one slot for both views");
    w_region_end(w);
    cr_assert_eq(w_count(w, 2, DG_PLAN_OP_FREE), 1);
    cr_assert_eq(w_count(w, 0, DG_PLAN_OP_ALLOC), 0, "the home needs no allocation");
    run_sim();
}

Test(moves, slots_are_cached_between_regions_within_the_limit)
{
    w_destroy(w);
    w = w_create_ex(2, 1, NULL, NULL, 1024, 0);
    cl = w_codelet(w, "k", DG_PLAN_KIND_BIT(DG_PLAN_CPU), 0);
    tbl = (cl_table_t){.ids = {cl}, .ret = {0}, .n = 1};
    uint64_t a = w_chunk2(w, 0, 8, 8), b = w_chunk2(w, 0, 8, 8), big = w_chunk2(w, 0, 20, 20);
    int32_t r1 = 1;
    dg_plan_scope_t s1 = on_rank(&r1);
    for (int reg = 0; reg < 2; reg++) {
        w_region_begin(w, NULL);
        dg_plan_arg_t x = w_view(w, reg ? b : a, DAGGER_MODE_IN);
        dg_plan_arg_t y = w_view(w, big, DAGGER_MODE_IN);
        w_task(w, cl, &x, 1, &s1);
        w_task(w, cl, &y, 1, &s1);
        w_region_end(w);
    }
    uint64_t cached_alloc = 0, cached_free = 0;
    for (uint64_t i = 0; i < dg_plan_sim_nops(w->sim, 1); i++) {
        const dg_plan_op_t *op = dg_plan_sim_op(w->sim, 1, i);
        cached_alloc += op->kind == DG_PLAN_OP_ALLOC && op->u.mem.cached;
        cached_free += op->kind == DG_PLAN_OP_FREE && op->u.mem.cached;
    }
    /* 512-byte slots fit the 1 KiB cache, the 3200-byte one never does */
    cr_assert_eq(cached_free, 2);
    cr_assert_eq(cached_alloc, 1, "region 2 reuses region 1's 512-byte slot");
    run_sim();
}

Test(moves, device_tasks_copy_within_the_rank)
{
    w_destroy(w);
    uint32_t ndev[3] = {2, 2, 2};
    w = w_create_ex(3, 2, ndev, NULL, 0, 0);
    cl = w_codelet(w, "k", DG_PLAN_KIND_BIT(DG_PLAN_CPU) | DG_PLAN_KIND_BIT(DG_PLAN_CUDA), 0);
    tbl = (cl_table_t){.ids = {cl}, .ret = {0}, .n = 1};
    uint64_t c = w_chunk2(w, 1, 4, 4);
    dg_plan_scope_t gpu = {.kinds = DG_PLAN_KIND_BIT(DG_PLAN_CUDA)};
    w_region_begin(w, NULL);
    dg_plan_arg_t a = w_view(w, c, DAGGER_MODE_INOUT);
    dg_plan_submitted_t s = w_task(w, cl, &a, 1, &gpu);
    cr_assert_eq(s.rank, 1);
    cr_assert_gt(s.space, 0);
    dg_plan_submitted_t s2 = w_task(w, cl, &a, 1, &gpu);
    cr_assert_eq(s2.space, s.space, "the device holding the data is preferred");
    w_region_end(w);
    cr_assert_eq(w_count(w, 1, DG_PLAN_OP_COPY), 2, "host to device, and back at region end");
    cr_assert_eq(transfers(NULL), 0);
    run_sim();
}

Test(moves, freeing_inside_a_region_waits_for_users_and_skips_copy_back)
{
    uint64_t c = w_chunk2(w, 0, 4, 4);
    int32_t r1 = 1;
    dg_plan_scope_t s1 = on_rank(&r1);
    w_region_begin(w, NULL);
    dg_plan_arg_t a = w_view(w, c, DAGGER_MODE_INOUT);
    w_task(w, cl, &a, 1, &s1);
    w_free(w, c);
    w_region_end(w);
    cr_assert_eq(transfers(NULL), 1, "the changed copy is not sent home: the chunk is gone");
    cr_assert_eq(w_count(w, 1, DG_PLAN_OP_FREE), 1);
    cr_assert_eq(w_count(w, 0, DG_PLAN_OP_FREE), 1, "the owner releases the home storage");
    run_sim();
    cr_assert_null(dg_plan_sim_buffer(w->sim, 0, (dg_plan_buf_t){c, 0}, NULL));
}

Test(moves, explicit_dependency_across_ranks_is_a_zero_byte_signal)
{
    uint64_t a = w_chunk1(w, 0, 4), b = w_chunk1(w, 1, 4);
    w_region_begin(w, NULL);
    dg_plan_arg_t x = w_view(w, a, DAGGER_MODE_INOUT), y = w_view(w, b, DAGGER_MODE_INOUT);
    uint64_t t1 = w_task(w, cl, &x, 1, NULL).task;
    dg_plan_task_desc_t t = {.codelet = cl, .args = &y, .nargs = 1, .deps = &t1, .ndeps = 1};
    dg_plan_submitted_t s;
    cr_assert_eq(w_submit(w, &t, &s), DAGGER_OK);
    cr_assert_eq(s.rank, 1);
    w_region_end(w);
    cr_assert_eq(transfers(NULL), 0);
    cr_assert_eq(w_count(w, 0, DG_PLAN_OP_SEND), 1);
    cr_assert_eq(w_count(w, 1, DG_PLAN_OP_RECV), 1);
    const dg_plan_op_t *launch = NULL;
    for (uint64_t i = 0; i < dg_plan_sim_nops(w->sim, 1); i++)
        if (dg_plan_sim_op(w->sim, 1, i)->kind == DG_PLAN_OP_LAUNCH)
            launch = dg_plan_sim_op(w->sim, 1, i);
    cr_assert(launch && launch->ndeps == 1, "the launch waits for the signal");
    run_sim();
}
