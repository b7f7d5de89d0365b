/* The tile kernels' ceiling of bench_linalg_tiled (tools/bench/linalg_ceiling.c):
 * every product runs, on the thread it was given to, against the tiles the
 * rotation names, and bad settings are refused. Speed is the benchmark's
 * business, not this test's. */
#include <criterion/criterion.h>

#include "tools/bench/linalg_ceiling.h"

/* With A = B = 1, a product C -= A B takes `tile` from every element of
 * its C tile: each C tile holds -tile times the products that named it. */
static void check_counts(const dg_ceiling_t *c)
{
    long total = 0;
    for (int t = 0; t < c->threads; t++) {
        long expect = c->products / c->threads + (t < c->products % c->threads);
        cr_assert_eq(c->done[t], expect, "thread %d ran %ld products, not %ld", t, c->done[t],
                     expect);
        double **cc = c->tiles[t] + 2 * c->ntiles;
        for (int i = 0; i < c->ntiles; i++) {
            long named = 0;
            for (long p = 0; p < expect; p++)
                named += p % c->ntiles == i;
            size_t elems = (size_t)c->tile * (size_t)c->tile;
            for (size_t e = 0; e < elems; e++)
                cr_assert_eq(cc[i][e], -(double)c->tile * (double)named,
                             "thread %d, C tile %d, element %zu: %g", t, i, e, cc[i][e]);
            total += named;
        }
        for (int i = 0; i < 2 * c->ntiles; i++) /* A and B untouched */
            cr_assert_eq(c->tiles[t][i][0], 1.0);
    }
    cr_assert_eq(total, c->products);
}

Test(linalg_ceiling, every_product_runs_on_its_thread)
{
    dg_ceiling_t c = {.tile = 24, .threads = 3, .ntiles = 4, .products = 23, .keep = 1};
    double s = dg_ceiling_run(&c);
    cr_assert(s >= 0, "run failed");
    check_counts(&c);
    dg_ceiling_free(&c);
    cr_assert_null(c.tiles);
}

Test(linalg_ceiling, fewer_products_than_threads)
{
    dg_ceiling_t c = {.tile = 8, .threads = 4, .ntiles = 2, .products = 3, .keep = 1};
    cr_assert(dg_ceiling_run(&c) >= 0);
    check_counts(&c);
    cr_assert_eq(c.done[3], 0);
    dg_ceiling_free(&c);
}

Test(linalg_ceiling, bad_settings_are_refused)
{
    dg_ceiling_t bad[] = {{.tile = 0, .threads = 1, .ntiles = 2, .products = 1},
                          {.tile = 8, .threads = 0, .ntiles = 2, .products = 1},
                          {.tile = 8, .threads = 1, .ntiles = 0, .products = 1},
                          {.tile = 8, .threads = 1, .ntiles = 2, .products = -1}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert(dg_ceiling_run(&bad[i]) < 0, "case %zu", i);
    cr_assert(dg_ceiling_run(NULL) < 0);
}
