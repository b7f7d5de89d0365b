/* Host staging blocks of packed transfers (core/exec/staging.h): a block
 * given back is the next one of its size, sizes are kept apart, and what is
 * kept stays under DG_STAGING_KEEP bytes and DG_STAGING_SIZES sizes. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/exec/staging.h"

Test(staging, a_block_given_back_serves_the_next_request_of_its_size)
{
    dg_staging_t s;
    dg_staging_init(&s, 0);
    char *a = dg_staging_get(&s, 2 << 20);
    cr_assert(a);
    memset(a, 1, 2 << 20);
    dg_staging_put(&s, a, 2 << 20);
    cr_assert_eq(s.kept, (size_t)2 << 20);
    void *other = dg_staging_get(&s, 1 << 20);
    cr_assert_neq(other, a, "another size gets another block");
    free(other);
    char *b = dg_staging_get(&s, 2 << 20);
    cr_assert_eq(b, a, "the kept block of that size");
    cr_assert_eq(s.kept, 0);
    dg_staging_put(&s, b, 2 << 20);
    dg_staging_put(&s, NULL, 4096); /* nothing */
    dg_staging_cleanup(&s);
}

/* With huge pages (the runtime's default), a block of 2 MiB or more starts on
 * a 2 MiB boundary, kept or new. */
Test(staging, large_blocks_start_on_a_huge_page_boundary)
{
    dg_staging_t s;
    dg_staging_init(&s, 1);
    char *a = dg_staging_get(&s, 2 << 20), *small = dg_staging_get(&s, 4096);
    cr_assert(a && small);
    cr_assert_eq((uintptr_t)a % ((uintptr_t)2 << 20), 0u, "block at %p", (void *)a);
    memset(a, 1, 2 << 20);
    dg_staging_put(&s, a, 2 << 20);
    cr_assert_eq(dg_staging_get(&s, 2 << 20), a);
    free(a);
    free(small);
    dg_staging_cleanup(&s);
}

Test(staging, what_is_kept_stays_under_its_bounds)
{
    dg_staging_t s;
    dg_staging_init(&s, 0);
    /* DG_STAGING_KEEP / 4 MiB blocks of one size fill it; one more is freed */
    size_t big = (size_t)4 << 20, n = DG_STAGING_KEEP / big;
    void *blocks[64];
    cr_assert_leq(n + 1, 64);
    for (size_t i = 0; i <= n; i++)
        blocks[i] = dg_staging_get(&s, big);
    for (size_t i = 0; i <= n; i++)
        dg_staging_put(&s, blocks[i], big);
    cr_assert_eq(s.kept, DG_STAGING_KEEP);
    dg_staging_cleanup(&s);

    dg_staging_init(&s, 0); /* at most DG_STAGING_SIZES sizes */
    for (size_t i = 0; i <= DG_STAGING_SIZES; i++)
        dg_staging_put(&s, dg_staging_get(&s, 64 * (i + 1)), 64 * (i + 1));
    size_t want = 0;
    for (size_t i = 0; i < DG_STAGING_SIZES; i++)
        want += 64 * (i + 1);
    cr_assert_eq(s.kept, want, "the size after the lists are taken is not kept");
    dg_staging_cleanup(&s);
}
