/* The host memory space (core/exec/host_memspace.c): aligned allocation of
 * any size and copies; in a runtime, DAGGER_HUGE_PAGES reaching its blocks. */
#include <criterion/criterion.h>
#include <dagger.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "core/exec/memspace.h"
#include "core/runtime/runtime.h"
#include "core/runtime/tasks.h"

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

/* With huge pages on (DAGGER_HUGE_PAGES, the default), blocks of 2 MiB and
 * more start on a 2 MiB boundary (the huge pages themselves:
 * tests/core/base/test_alloc.c); smaller ones stay 64-byte aligned. */
Test(host_memspace, large_blocks_start_on_a_huge_page_boundary)
{
    dg_memspace_t ms = {.ops = &dg_host_memspace_ops, .huge = 1};
    const size_t sizes[] = {1000, (size_t)2 << 20, ((size_t)5 << 20) + 64};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        unsigned char *p = ms.ops->alloc(&ms, sizes[i]);
        cr_assert_not_null(p);
        uintptr_t align = sizes[i] >= ((size_t)2 << 20) ? (uintptr_t)2 << 20 : 64;
        cr_assert_eq((uintptr_t)p % align, 0u, "%zu bytes at %p", sizes[i], (void *)p);
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

static void *seen_data;

static int keep_data(dagger_task_t *t)
{
    seen_data = dagger_task_arg(t, 0).data;
    return DAGGER_OK;
}

/* The address of a new 512 x 512 f64 chunk's (2 MiB) buffer, as a task sees
 * it, in a runtime started with DAGGER_HUGE_PAGES=setting (NULL: unset);
 * *huge: the host space's flag. */
static uintptr_t tile_address(const char *setting, int *huge)
{
    if (setting)
        setenv("DAGGER_HUGE_PAGES", setting, 1);
    else
        unsetenv("DAGGER_HUGE_PAGES");
    dagger_runtime_t *rt;
    cr_assert_eq(dagger_init(NULL, NULL, &(dagger_params_t){.num_threads = 1}, &rt), DAGGER_OK,
                 "%s", dagger_error_detail());
    *huge = rt->tasks->exec->bufs.spaces[0].huge;
    dagger_codelet_t cl;
    cr_assert_eq(dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "hm.keep",
                                                                      .cpu = keep_data}, &cl),
                 DAGGER_OK);
    dagger_chunk_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {512, 512}, .owner = 0};
    dagger_chunk_t c;
    cr_assert_eq(dagger_chunk_create(rt, &d, &c), DAGGER_OK);
    dagger_region_t *r;
    cr_assert_eq(dagger_region_begin(rt, NULL, &r), DAGGER_OK);
    dagger_arg_t a[1] = {DAGGER_INOUT_CHUNK(c)};
    cr_assert_eq(dagger_submit(r, cl, 1, a, NULL, NULL, NULL), DAGGER_OK);
    cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
    uintptr_t at = (uintptr_t)seen_data;
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
    unsetenv("DAGGER_HUGE_PAGES");
    return at;
}

/* By default a 2 MiB tile starts on a huge page boundary; the setting 0
 * reaches the host space (where a block then starts is malloc's choice). */
Test(host_memspace, huge_pages_follow_the_setting)
{
    int huge;
    uintptr_t at = tile_address(NULL, &huge);
    cr_assert_eq(huge, 1, "on by default");
    cr_assert_eq(at % ((uintptr_t)2 << 20), 0u, "the tile at %p", (void *)at);
    tile_address("0", &huge);
    cr_assert_eq(huge, 0, "DAGGER_HUGE_PAGES=0 reaches the host space");
    tile_address("1", &huge);
    cr_assert_eq(huge, 1);
}
