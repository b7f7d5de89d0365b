/* Layout and view validation, sub-view composition against brute force. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/plan/planner_internal.h"
#include "core/plan/view.h"
#include "tests/core/plan/plan_fixture.h"

static dg_plan_geom_t geom(uint32_t nd, uint64_t d0, uint64_t d1)
{
    dg_plan_geom_t g = {.dtype = DAGGER_F64, .ndims = nd, .dims = {d0, d1, 1, 1}};
    char why[256];
    cr_assert_eq(dg_plan_geom_check(&g, why, sizeof(why)), DAGGER_OK, "%s", why);
    return g;
}

Test(view, layout_checks)
{
    char why[256];
    dg_plan_geom_t g = {.dtype = (dagger_dtype_t)99, .ndims = 1, .dims = {4}};
    cr_assert_eq(dg_plan_geom_check(&g, why, sizeof(why)), DAGGER_ERR_DTYPE);
    g = (dg_plan_geom_t){.dtype = DAGGER_F64, .ndims = 0, .dims = {4}};
    cr_assert_eq(dg_plan_geom_check(&g, why, sizeof(why)), DAGGER_ERR_BAD_VIEW);
    g = (dg_plan_geom_t){.dtype = DAGGER_F64, .ndims = 5, .dims = {4}};
    cr_assert_eq(dg_plan_geom_check(&g, why, sizeof(why)), DAGGER_ERR_BAD_VIEW);
    g = (dg_plan_geom_t){.dtype = DAGGER_F64, .ndims = 2, .dims = {4, 0}};
    cr_assert_eq(dg_plan_geom_check(&g, why, sizeof(why)), DAGGER_ERR_BAD_VIEW);
    /* overlapping strides: column stride smaller than the column */
    g = (dg_plan_geom_t){.dtype = DAGGER_F64, .ndims = 2, .dims = {4, 3}, .strides = {1, 3}};
    cr_assert_eq(dg_plan_geom_check(&g, why, sizeof(why)), DAGGER_ERR_BAD_VIEW);
    cr_assert(strstr(why, "overlap"), "%s", why);
    /* padded leading dimension is fine; extent is the last element + 1 */
    g = (dg_plan_geom_t){.dtype = DAGGER_F64, .ndims = 2, .dims = {4, 3}, .strides = {1, 6}};
    cr_assert_eq(dg_plan_geom_check(&g, why, sizeof(why)), DAGGER_OK);
    cr_assert_eq(g.extent, 2 * 6 + 4);
    g = geom(3, 4, 5);
    cr_assert_eq(g.extent, 20);
    cr_assert_eq(g.strides[1], 4);
}

/* A future's geometry, written out for speed, is what the check makes of a
 * one-dimensional byte array of its size. */
Test(view, future_geometry_is_the_checked_one)
{
    static const uint32_t sizes[] = {0, 1, 3, 8, 64, 4096, 1u << 20, UINT32_MAX};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        dg_plan_geom_t fast, want = {.dtype = DAGGER_U8, .ndims = 1, .dims = {sizes[i]}};
        char why[256];
        dg_plan_geom_check(&want, why, sizeof(why));
        memset(&fast, 0xa5, sizeof(fast));
        dg_plan_future_geom(sizes[i], &fast);
        cr_assert(fast.dtype == want.dtype && fast.elsize == want.elsize &&
                      fast.ndims == want.ndims && fast.extent == want.extent &&
                      !memcmp(fast.dims, want.dims, sizeof(fast.dims)) &&
                      !memcmp(fast.strides, want.strides, sizeof(fast.strides)),
                  "a future of %u bytes", sizes[i]);
    }
}

Test(view, view_checks)
{
    char why[256];
    dg_plan_geom_t g2 = geom(2, 4, 5), g1 = geom(1, 10, 1);
    dg_plan_view_t v;
    dg_plan_view_full(&g2, 7, &v);
    cr_assert_eq(dg_plan_view_check(&g2, &v, why, sizeof(why)), DAGGER_OK);
    v.ext[1] = 6;
    cr_assert_eq(dg_plan_view_check(&g2, &v, why, sizeof(why)), DAGGER_ERR_BAD_VIEW);
    cr_assert(strstr(why, "exceeds dimension 1"), "%s", why);
    dg_plan_view_full(&g2, 7, &v);
    v.ext[0] = 0;
    cr_assert_eq(dg_plan_view_check(&g2, &v, why, sizeof(why)), DAGGER_ERR_BAD_VIEW);
    dg_plan_view_full(&g2, 7, &v);
    v.ndims = 3;
    cr_assert_eq(dg_plan_view_check(&g2, &v, why, sizeof(why)), DAGGER_ERR_BAD_VIEW);
    dg_plan_view_full(&g1, 7, &v);
    v.mod = DAGGER_UPPER;
    cr_assert_eq(dg_plan_view_check(&g1, &v, why, sizeof(why)), DAGGER_ERR_BAD_VIEW);
    cr_assert(strstr(why, "DAGGER_FULL"), "%s", why);
    dg_plan_view_full(&g2, 7, &v);
    v.mod = (dagger_modifier_t)9;
    cr_assert_eq(dg_plan_view_check(&g2, &v, why, sizeof(why)), DAGGER_ERR_BAD_VIEW);
    v.mod = DAGGER_UNIT_UPPER;
    v.ext[1] = 1;
    cr_assert_eq(dg_plan_view_check(&g2, &v, why, sizeof(why)), DAGGER_ERR_BAD_VIEW);
}

/* (i, j) of the chunk is in view v (2-D). */
static int in_view(const dg_plan_view_t *v, uint64_t i, uint64_t j)
{
    if (i < v->off[0] || i >= v->off[0] + v->ext[0] || j < v->off[1] || j >= v->off[1] + v->ext[1])
        return 0;
    int64_t d = (int64_t)(i - v->off[0]) - (int64_t)(j - v->off[1]);
    switch (v->mod) {
    case DAGGER_FULL: return 1;
    case DAGGER_UPPER: return d <= 0;
    case DAGGER_LOWER: return d >= 0;
    case DAGGER_UNIT_UPPER: return d < 0;
    case DAGGER_UNIT_LOWER: return d > 0;
    case DAGGER_DIAGONAL: return d == 0;
    }
    return 0;
}

Test(view, sub_views_compose_exactly_or_fail)
{
    /* Every sub-box and modifier of every modifier of an 5x6 parent box: the
     * composed view selects exactly parent AND sub, or the call fails because
     * that set is empty or no single box+modifier describes it. */
    dg_plan_geom_t g = geom(2, 8, 9);
    int composed = 0, refused = 0;
    for (int pm = 0; pm < 6; pm++) {
        dg_plan_view_t parent = {.chunk = 1, .ndims = 2, .mod = (dagger_modifier_t)pm,
                                 .off = {2, 1}, .ext = {5, 6}};
        for (uint64_t o0 = 0; o0 < 5; o0++)
            for (uint64_t o1 = 0; o1 < 6; o1++)
                for (uint64_t e0 = 1; o0 + e0 <= 5; e0++)
                    for (uint64_t e1 = 1; o1 + e1 <= 6; e1++)
                        for (int sm = 0; sm < 6; sm++) {
                            uint64_t off[2] = {o0, o1}, ext[2] = {e0, e1};
                            dg_plan_view_t sub = {.chunk = 1, .ndims = 2,
                                                  .mod = (dagger_modifier_t)sm, .off = {o0 + 2, o1 + 1},
                                                  .ext = {e0, e1}};
                            dg_plan_view_t out;
                            dagger_status_t st = dg_plan_view_sub(&parent, off, ext,
                                                                  (dagger_modifier_t)sm, &out);
                            int any = 0;
                            for (uint64_t i = 0; i < 8; i++)
                                for (uint64_t j = 0; j < 9; j++)
                                    any |= in_view(&parent, i, j) && in_view(&sub, i, j);
                            if (st != DAGGER_OK) {
                                cr_assert_eq(st, DAGGER_ERR_BAD_VIEW);
                                refused++;
                                continue;
                            }
                            cr_assert(any);
                            char why[256];
                            cr_assert_eq(dg_plan_view_check(&g, &out, why, sizeof(why)), DAGGER_OK);
                            for (uint64_t i = 0; i < 8; i++)
                                for (uint64_t j = 0; j < 9; j++)
                                    cr_assert_eq(in_view(&out, i, j),
                                                 in_view(&parent, i, j) && in_view(&sub, i, j),
                                                 "parent mod %d sub (%llu,%llu)+(%llu,%llu) mod %d",
                                                 pm, (unsigned long long)o0,
                                                 (unsigned long long)o1, (unsigned long long)e0,
                                                 (unsigned long long)e1, sm);
                            composed++;
                        }
    }
    cr_assert_gt(composed, 1000);
    cr_assert_gt(refused, 100);
}

Test(view, sub_view_out_of_parent_is_an_error)
{
    dg_plan_view_t parent = {.chunk = 1, .ndims = 1, .mod = DAGGER_FULL, .off = {3}, .ext = {4}};
    dg_plan_view_t out;
    uint64_t off[1] = {2}, ext[1] = {3};
    cr_assert_eq(dg_plan_view_sub(&parent, off, ext, DAGGER_FULL, &out), DAGGER_ERR_BAD_VIEW);
    ext[0] = 2;
    cr_assert_eq(dg_plan_view_sub(&parent, off, ext, DAGGER_FULL, &out), DAGGER_OK);
    cr_assert_eq(out.off[0], 5);
    cr_assert_eq(dg_plan_view_sub(&parent, off, ext, DAGGER_LOWER, &out), DAGGER_ERR_BAD_VIEW);
}
