/* Span sets against brute-force element sets (64-bit masks over a 64-element
 * universe), and view span sets against explicit enumeration. */
#include <criterion/criterion.h>

#include "core/plan/spans.h"
#include "core/plan/view.h"
#include "tests/core/plan/plan_fixture.h"

static dg_plan_mem_t mem;

static void setup(void)
{
    dg_plan_mem_init(&mem);
}

static void teardown(void)
{
    dg_plan_mem_cleanup(&mem);
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void from_mask(dg_plan_spans_t *s, uint64_t m)
{
    dg_plan_spans_clear(s);
    for (uint64_t i = 0; i < 64;) {
        if (!((m >> i) & 1)) {
            i++;
            continue;
        }
        uint64_t b = i;
        while (i < 64 && ((m >> i) & 1))
            i++;
        dg_plan_spans_append(&mem, s, b, i);
    }
}

/* Checks the set invariant (sorted, disjoint, non-adjacent) and returns its mask. */
static uint64_t to_mask(const dg_plan_spans_t *s)
{
    uint64_t m = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        cr_assert_lt(s->v[i].begin, s->v[i].end);
        if (i)
            cr_assert_gt(s->v[i].begin, s->v[i - 1].end, "spans must not touch or overlap");
        for (uint64_t e = s->v[i].begin; e < s->v[i].end; e++)
            m |= 1ull << e;
    }
    return m;
}

/* Random masks with runs, so spans are long and short. */
static uint64_t rnd_mask(uint64_t *seed)
{
    switch (rnd(seed) % 4) {
    case 0: return rnd(seed);
    case 1: return rnd(seed) & rnd(seed);
    case 2: {
        uint64_t lo = rnd(seed) % 64, len = rnd(seed) % (64 - lo) + 1;
        return (len == 64 ? ~0ull : ((1ull << len) - 1)) << lo;
    }
    default: return rnd(seed) % 3 == 0 ? 0 : (rnd(seed) | rnd(seed));
    }
}

TestSuite(spans, .init = setup, .fini = teardown);

Test(spans, every_operation_matches_brute_force)
{
    uint64_t seed = 88172645463325252ull;
    dg_plan_spans_t a, b, o;
    dg_plan_spans_init(&a);
    dg_plan_spans_init(&b);
    dg_plan_spans_init(&o);
    for (int it = 0; it < 20000; it++) {
        uint64_t ma = rnd_mask(&seed), mb = rnd_mask(&seed);
        from_mask(&a, ma);
        from_mask(&b, mb);
        cr_assert_eq(to_mask(&a), ma);
        cr_assert_eq(dg_plan_spans_count(&a), (uint64_t)__builtin_popcountll(ma));
        dg_plan_spans_union(&mem, &o, &a, &b);
        cr_assert_eq(to_mask(&o), ma | mb);
        dg_plan_spans_inter(&mem, &o, &a, &b);
        cr_assert_eq(to_mask(&o), ma & mb);
        dg_plan_spans_diff(&mem, &o, &a, &b);
        cr_assert_eq(to_mask(&o), ma & ~mb, "diff %llx \\ %llx", (unsigned long long)ma,
                     (unsigned long long)mb);
        cr_assert_eq(dg_plan_spans_overlap(&a, &b), (ma & mb) != 0);
        cr_assert_eq(dg_plan_spans_subset(&a, &b), (ma & ~mb) == 0);
        cr_assert_eq(dg_plan_spans_inter_count(&a, &b), (uint64_t)__builtin_popcountll(ma & mb));
        cr_assert_eq(dg_plan_spans_equal(&a, &b), ma == mb);
        dg_plan_spans_copy(&mem, &o, &a);
        cr_assert(dg_plan_spans_equal(&o, &a));
    }
    dg_plan_spans_release(&mem, &a);
    dg_plan_spans_release(&mem, &b);
    dg_plan_spans_release(&mem, &o);
    cr_assert_eq(mem.st.in_use, 0, "every span array was given back");
}

Test(spans, empty_sets)
{
    dg_plan_spans_t e, a, o;
    dg_plan_spans_init(&e);
    dg_plan_spans_init(&a);
    dg_plan_spans_init(&o);
    dg_plan_spans_append(&mem, &a, 3, 9);
    cr_assert(dg_plan_spans_subset(&e, &a));
    cr_assert(!dg_plan_spans_subset(&a, &e));
    cr_assert(!dg_plan_spans_overlap(&e, &a));
    dg_plan_spans_diff(&mem, &o, &a, &e);
    cr_assert(dg_plan_spans_equal(&o, &a));
    dg_plan_spans_inter(&mem, &o, &a, &e);
    cr_assert_eq(o.n, 0);
    dg_plan_spans_union(&mem, &o, &e, &e);
    cr_assert_eq(o.n, 0);
}

/* Element offsets of a view by explicit enumeration, as a mask (extent <= 64). */
static uint64_t brute_view(const dg_plan_geom_t *g, const dg_plan_view_t *v)
{
    uint64_t m = 0, ext[4] = {1, 1, 1, 1}, off[4] = {0, 0, 0, 0};
    for (uint32_t k = 0; k < g->ndims; k++) {
        ext[k] = v->ext[k];
        off[k] = v->off[k];
    }
    for (uint64_t k3 = 0; k3 < ext[3]; k3++)
        for (uint64_t k2 = 0; k2 < ext[2]; k2++)
            for (uint64_t j = 0; j < ext[1]; j++)
                for (uint64_t i = 0; i < ext[0]; i++) {
                    int in = 1;
                    switch (v->mod) {
                    case DAGGER_FULL: break;
                    case DAGGER_UPPER: in = i <= j; break;
                    case DAGGER_LOWER: in = i >= j; break;
                    case DAGGER_UNIT_UPPER: in = i < j; break;
                    case DAGGER_UNIT_LOWER: in = i > j; break;
                    case DAGGER_DIAGONAL: in = i == j; break;
                    }
                    if (!in)
                        continue;
                    uint64_t o = (off[0] + i) * g->strides[0] + (off[1] + j) * g->strides[1] +
                                 (off[2] + k2) * g->strides[2] + (off[3] + k3) * g->strides[3];
                    cr_assert_lt(o, 64);
                    m |= 1ull << o;
                }
    return m;
}

/* A random chunk (extent <= 64, sometimes padded strides) and a random valid view. */
static void rnd_geom_view(uint64_t *seed, dg_plan_geom_t *g, dg_plan_view_t *v)
{
    char why[256];
    for (;;) {
        memset(g, 0, sizeof(*g));
        g->dtype = DAGGER_F32;
        g->ndims = 1 + (uint32_t)(rnd(seed) % 4);
        for (uint32_t k = 0; k < g->ndims; k++)
            g->dims[k] = 1 + rnd(seed) % (g->ndims == 1 ? 20 : g->ndims == 2 ? 7 : 3);
        if (rnd(seed) % 3 == 0) { /* padded layout */
            uint64_t need = 1 + rnd(seed) % 2;
            for (uint32_t k = 0; k < g->ndims; k++) {
                g->strides[k] = need;
                need = g->strides[k] * g->dims[k] + rnd(seed) % 2;
            }
        }
        if (dg_plan_geom_check(g, why, sizeof(why)) == DAGGER_OK && g->extent <= 64)
            break;
    }
    for (;;) {
        memset(v, 0, sizeof(*v));
        v->chunk = 1;
        v->ndims = g->ndims;
        v->mod = g->ndims >= 2 ? (dagger_modifier_t)(rnd(seed) % 6) : DAGGER_FULL;
        for (uint32_t k = 0; k < g->ndims; k++) {
            v->off[k] = rnd(seed) % g->dims[k];
            v->ext[k] = 1 + rnd(seed) % (g->dims[k] - v->off[k]);
        }
        if (dg_plan_view_check(g, v, why, sizeof(why)) == DAGGER_OK)
            return;
    }
}

Test(spans, view_spans_are_exact_for_every_modifier_and_layout)
{
    uint64_t seed = 0x1234567;
    dg_plan_spans_t s;
    dg_plan_spans_init(&s);
    for (int it = 0; it < 20000; it++) {
        dg_plan_geom_t g;
        dg_plan_view_t v;
        rnd_geom_view(&seed, &g, &v);
        dg_plan_view_spans(&mem, &g, &v, &s);
        cr_assert_eq(to_mask(&s), brute_view(&g, &v), "view spans differ (mod %d, %u-D)", v.mod,
                     g.ndims);
    }
    dg_plan_spans_release(&mem, &s);
}

Test(spans, overlap_of_every_modifier_pair_matches_brute_force)
{
    uint64_t seed = 0xfeedbeef;
    dg_plan_spans_t a, b;
    dg_plan_spans_init(&a);
    dg_plan_spans_init(&b);
    int hits[6][6][2] = {{{0}}};
    for (int it = 0; it < 40000; it++) {
        dg_plan_geom_t g;
        dg_plan_view_t v, w;
        rnd_geom_view(&seed, &g, &v);
        /* a second view of the same chunk */
        char why[256];
        memset(&w, 0, sizeof(w));
        w.chunk = 1;
        w.ndims = g.ndims;
        for (uint32_t k = 0; k < g.ndims; k++) {
            w.off[k] = rnd(&seed) % g.dims[k];
            w.ext[k] = 1 + rnd(&seed) % (g.dims[k] - w.off[k]);
        }
        w.mod = g.ndims >= 2 ? (dagger_modifier_t)(rnd(&seed) % 6) : DAGGER_FULL;
        if (dg_plan_view_check(&g, &w, why, sizeof(why)) != DAGGER_OK)
            continue;
        dg_plan_view_spans(&mem, &g, &v, &a);
        dg_plan_view_spans(&mem, &g, &w, &b);
        int want = (brute_view(&g, &v) & brute_view(&g, &w)) != 0;
        cr_assert_eq(dg_plan_spans_overlap(&a, &b), want);
        hits[v.mod][w.mod][want]++;
    }
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            cr_assert(hits[i][j][0] && hits[i][j][1],
                      "modifier pair (%d, %d) was not exercised both ways", i, j);
    dg_plan_spans_release(&mem, &a);
    dg_plan_spans_release(&mem, &b);
}

Test(spans, full_view_of_dense_chunk_is_one_span)
{
    dg_plan_geom_t g = {.dtype = DAGGER_F64, .ndims = 3, .dims = {4, 5, 6}};
    char why[256];
    cr_assert_eq(dg_plan_geom_check(&g, why, sizeof(why)), DAGGER_OK);
    dg_plan_view_t v;
    dg_plan_view_full(&g, 1, &v);
    dg_plan_spans_t s;
    dg_plan_spans_init(&s);
    dg_plan_view_spans(&mem, &g, &v, &s);
    cr_assert_eq(s.n, 1);
    cr_assert_eq(s.v[0].begin, 0);
    cr_assert_eq(s.v[0].end, 120);
    /* a column block of a matrix: one run per column, merged when contiguous */
    v.off[0] = 1;
    v.ext[0] = 2;
    dg_plan_view_spans(&mem, &g, &v, &s);
    cr_assert_eq(s.n, 30);
    dg_plan_spans_release(&mem, &s);
}
