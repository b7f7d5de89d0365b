/* The chunk table (core/plan/chunks.c): a future's chunk made from the
 * storage of a freed one is in the state a fresh one is in. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/plan/planner_internal.h"
#include "tests/core/plan/plan_fixture.h"

/* Two chunks in the same planning state, told apart only by their ids and
 * where their storage lies. */
static void same_chunk(const dg_plan_chunk_t *a, const dg_plan_chunk_t *b)
{
    cr_assert(a->owner == b->owner && a->home_space == b->home_space &&
                  a->is_future == b->is_future && a->touched == b->touched &&
                  a->version == b->version && a->taint == b->taint,
              "owner %d/%d space %u/%u future %u/%u touched %u/%u version %llu/%llu taint %u/%u",
              a->owner, b->owner, a->home_space, b->home_space, a->is_future, b->is_future,
              a->touched, b->touched, (unsigned long long)a->version,
              (unsigned long long)b->version, a->taint, b->taint);
    cr_assert_eq(!a->writer, !b->writer); /* a task id: the worlds' differ */
    cr_assert(!memcmp(a->g.dims, b->g.dims, sizeof(a->g.dims)) && a->g.extent == b->g.extent &&
              a->g.elsize == b->g.elsize && a->g.ndims == b->g.ndims);
    cr_assert(a->all.n == b->all.n && !memcmp(a->all.v, b->all.v, a->all.n * sizeof(*a->all.v)));
    cr_assert_eq(a->logical.n, b->logical.n);
    cr_assert_eq(a->ncur, b->ncur);
    for (uint32_t i = 0; i < a->ncur; i++)
        cr_assert(a->cur[i].loc.rank == b->cur[i].loc.rank &&
                      a->cur[i].loc.space == b->cur[i].loc.space &&
                      a->cur[i].cur.n == b->cur[i].cur.n &&
                      !memcmp(a->cur[i].cur.v, b->cur[i].cur.v,
                              a->cur[i].cur.n * sizeof(*a->cur[i].cur.v)),
                  "currency entry %u", i);
    cr_assert_eq(a->nbufs, b->nbufs);
    for (uint32_t i = 0; i < a->nbufs; i++)
        cr_assert(a->bufs[i].space == b->bufs[i].space && a->bufs[i].home == b->bufs[i].home &&
                  a->bufs[i].hist.n == b->bufs[i].hist.n);
}

/* A future's chunk made from the storage of a freed one (chunks.c keeps a
 * few) is in the state a fresh one is in, on every rank: the second world
 * makes the same future with nothing freed before it. */
Test(chunks, a_kept_future_is_made_as_a_fresh_one)
{
    world_t *kept = w_create(2), *fresh = w_create(2);
    uint32_t k8 = w_codelet(kept, "r8", DG_PLAN_KIND_BIT(DG_PLAN_CPU), 8);
    uint32_t k24 = w_codelet(kept, "r24", DG_PLAN_KIND_BIT(DG_PLAN_CPU), 24);
    uint32_t f24 = w_codelet(fresh, "r24", DG_PLAN_KIND_BIT(DG_PLAN_CPU), 24);
    int32_t r0 = 0, r1 = 1;
    dg_plan_scope_t on0 = {.ranks = &r0, .nranks = 1}, on1 = {.ranks = &r1, .nranks = 1};
    w_region_begin(kept, NULL);
    w_region_begin(fresh, NULL);
    for (int i = 0; i < 3; i++) /* futures of another size on the other rank, freed */
        w_free(kept, w_task(kept, k8, NULL, 0, &on0).future);
    cr_assert_gt(kept->pl[0]->nspare_futures, 0, "a freed future was kept");
    uint64_t a = w_task(kept, k24, NULL, 0, &on1).future;
    uint64_t b = w_task(fresh, f24, NULL, 0, &on1).future;
    for (int r = 0; r < 2; r++)
        same_chunk(dg_plan_chunk_get(kept->pl[r], a), dg_plan_chunk_get(fresh->pl[r], b));
    w_region_end(kept);
    w_region_end(fresh);
    for (int r = 0; r < 2; r++)
        same_chunk(dg_plan_chunk_get(kept->pl[r], a), dg_plan_chunk_get(fresh->pl[r], b));
    w_destroy(kept);
    w_destroy(fresh);
}
