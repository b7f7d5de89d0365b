/* The host memory space (core/exec/host_memspace.c): aligned allocation of
 * any size and copies. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "core/exec/memspace.h"

Test(host_memspace, allocations_are_aligned_and_usable)
{
    dg_memspace_t ms = {.ops = &dg_host_memspace_ops};
    const size_t sizes[] = {1, 7, 64, 1000, 1 << 20};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        unsigned char *p = ms.ops->alloc(&ms, sizes[i]);
        cr_assert_not_null(p);
        cr_assert_eq((uintptr_t)p % 64, 0u, "%zu bytes at %p", sizes[i], (void *)p);
        memset(p, 0xab, sizes[i]);
        ms.ops->free(&ms, p, sizes[i]);
    }
}

Test(host_memspace, copy_moves_the_bytes)
{
    dg_memspace_t ms = {.ops = &dg_host_memspace_ops};
    char src[100], dst[100] = {0};
    for (int i = 0; i < 100; i++)
        src[i] = (char)i;
    cr_assert_eq(ms.ops->copy(&ms, dst, 1, src, 1, sizeof(src)), DAGGER_OK);
    cr_assert_arr_eq(dst, src, sizeof(src));
    cr_assert_eq(ms.ops->kind, DG_DEV_HOST);
}
