/* The host memory space (core/exec/host_memspace.c): aligned allocation of
 * any size and copies. */
#include <criterion/criterion.h>
#include <stdlib.h>
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

/* A pinned allocator that counts, refusing when told to. */
typedef struct pin_count {
    int allocs, frees, refuse;
} pin_count_t;

static dagger_status_t count_alloc(void *ctx, size_t bytes, void **ptr)
{
    pin_count_t *c = ctx;
    if (c->refuse) {
        *ptr = NULL;
        return DAGGER_ERR_NO_MEMORY;
    }
    c->allocs++;
    *ptr = aligned_alloc(64, bytes);
    return *ptr ? DAGGER_OK : DAGGER_ERR_NO_MEMORY;
}

static void count_free(void *ctx, void *ptr)
{
    ((pin_count_t *)ctx)->frees++;
    free(ptr);
}

/* With pinning on (DAGGER_GPU_PIN_HOST), buffers from min_bytes up come from
 * the pinned allocator and go back to it; smaller ones and those it refused
 * are plain memory, freed as such; all stay aligned and usable. */
Test(host_memspace, large_buffers_come_from_the_pinned_allocator)
{
    pin_count_t c = {0};
    dg_host_pin_t pin = {.alloc = count_alloc, .free = count_free, .ctx = &c, .min_bytes = 4096};
    dg_memspace_t ms = {.ops = &dg_host_memspace_ops, .impl = &pin};
    const size_t sizes[] = {64, 4095, 4096, 100000};
    for (int refuse = 0; refuse < 2; refuse++) {
        c = (pin_count_t){.refuse = refuse};
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            unsigned char *p = ms.ops->alloc(&ms, sizes[i]);
            cr_assert_not_null(p);
            cr_assert_eq((uintptr_t)p % 64, 0u);
            memset(p, 0xcd, sizes[i]);
            ms.ops->free(&ms, p, sizes[i]);
        }
        cr_assert_eq(c.allocs, refuse ? 0 : 2, "refuse %d: %d pinned allocations", refuse, c.allocs);
        cr_assert_eq(c.frees, c.allocs, "refuse %d: every pinned buffer goes back to it", refuse);
    }
}
