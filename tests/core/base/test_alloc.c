/* The allocation helpers for large, lazily touched arrays such as the
 * executor's op ring: the huge-page advice (dg_alloc_advise_huge) and
 * mapping pages ahead in one call (dg_alloc_populate). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/base/alloc.h"

#define HUGE ((uintptr_t)2 << 20)

/* The transparent huge page mode ("always", "madvise", "never") into out;
 * 0 when the kernel has none. */
static int thp_mode(char *out, size_t n)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    if (!f)
        return 0;
    char *ok = fgets(line, sizeof(line), f);
    fclose(f);
    char *b = ok ? strchr(line, '[') : NULL, *e = b ? strchr(b, ']') : NULL;
    if (!b || !e || (size_t)(e - b) > n)
        return 0;
    memcpy(out, b + 1, (size_t)(e - b - 1));
    out[e - b - 1] = '\0';
    return 1;
}

/* AnonHugePages (kB) of the mapping that holds addr, from /proc/self/smaps;
 * -1 when no mapping holds it. */
static long huge_kb_at(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    cr_assert(f, "cannot read /proc/self/smaps");
    char line[512];
    int in = 0;
    long kb = -1;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
            continue;
        }
        if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

/* 16 MiB never touched: mapped here rather than calloc'ed, because a
 * sanitizer's calloc writes the memory before the advice could count (TSan's
 * does: the advised array then had no huge page). */
static unsigned char *untouched(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(p != MAP_FAILED);
    return p;
}

/* One touch of a 2 MiB-aligned byte of each array: the advised one gets a
 * huge page, the other (where huge pages are opt-in) does not. */
Test(alloc, advised_array_is_backed_by_huge_pages)
{
    char mode[32];
    if (!thp_mode(mode, sizeof(mode)) || strcmp(mode, "never") == 0)
        cr_skip_test("transparent huge pages are off on this machine");
    size_t n = 16u << 20;
    unsigned char *adv = untouched(n), *plain = untouched(n);
    dg_alloc_advise_huge(adv, n);
    volatile unsigned char *a = (unsigned char *)(((uintptr_t)adv + HUGE - 1) & ~(HUGE - 1));
    volatile unsigned char *p = (unsigned char *)(((uintptr_t)plain + HUGE - 1) & ~(HUGE - 1));
    a[0] = 1;
    p[0] = 1;
    long kb = huge_kb_at((const void *)a);
    cr_expect_geq(kb, 2048, "the advised array's mapping has %ld kB of huge pages after a touch "
                            "(THP mode %s)", kb, mode);
    if (strcmp(mode, "madvise") == 0) /* its flags differ, so the kernel keeps it a mapping apart */
        cr_expect_eq(huge_kb_at((const void *)p), 0, "without the advice, no huge page (THP mode madvise)");
    munmap(adv, n);
    munmap(plain, n);
}

/* A large data block with huge pages on: on a 2 MiB boundary, and its
 * second 2 MiB (the first page of the first may have been written by the
 * allocator before the advice: ASan fills the first 4 KiB of a block) gets
 * a huge page at its first touch; without, in madvise mode, none. Small
 * blocks are 64-byte aligned either way. */
Test(alloc, a_large_block_gets_huge_pages_when_asked)
{
    char mode[32];
    size_t n = (size_t)6 << 20;
    unsigned char *big = dg_alloc_block(n, 1), *small = dg_alloc_block(100, 1);
    cr_assert(big && small);
    cr_assert_eq((uintptr_t)big % HUGE, 0u, "block at %p", (void *)big);
    cr_assert_eq((uintptr_t)small % 64, 0u);
    if (thp_mode(mode, sizeof(mode)) && strcmp(mode, "never") != 0) {
        ((volatile unsigned char *)big)[HUGE] = 1;
        long kb = huge_kb_at(big + HUGE);
        cr_expect_geq(kb, 2048, "the block's mapping has %ld kB of huge pages after a touch "
                                "(THP mode %s)", kb, mode);
        if (strcmp(mode, "madvise") == 0) {
            unsigned char *plain = dg_alloc_block(n, 0);
            cr_assert(plain);
            unsigned char *at = (unsigned char *)(((uintptr_t)plain + HUGE - 1) & ~(HUGE - 1));
            ((volatile unsigned char *)at)[HUGE] = 1;
            cr_expect_eq(huge_kb_at(at + HUGE), 0, "without the advice, no huge page");
            free(plain);
        }
    }
    free(big);
    free(small);
}

/* NULL, a range with no whole 2 MiB page and a stack array: no effect, no crash. */
Test(alloc, advice_on_small_or_null_ranges_does_nothing)
{
    char small[4096];
    dg_alloc_advise_huge(NULL, (size_t)1 << 30);
    dg_alloc_advise_huge(small, sizeof(small));
    small[0] = 1;
    cr_assert_eq(small[0], 1);
}

/* The minor page faults of this process so far. */
static long minor_faults(void)
{
    FILE *f = fopen("/proc/self/stat", "r");
    long v = -1;
    if (!f)
        return -1;
    /* Field 10 is minflt; field 2, the command, is in parentheses. */
    char buf[1024];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %ld", &v) != 1)
        v = -1;
    return v;
}

/* Faults of writing one byte in every page of a (populated or not). */
static long touch_faults(unsigned char *a, size_t n)
{
    long before = minor_faults();
    for (size_t i = 0; i < n; i += 4096)
        a[i + 1] = 1;
    long after = minor_faults();
    return before >= 0 && after >= 0 ? after - before : -1;
}

/* Populating maps a lazily mapped range at once, contents unchanged: the
 * touches after it fault far less than the same touches of a range not
 * populated (a sanitizer's shadow memory faults in both), and what was
 * written before it is still there. */
Test(alloc, populate_maps_pages_without_changing_them)
{
    size_t n = 8u << 20;
    unsigned char *a = calloc(1, n), *plain = calloc(1, n);
    cr_assert(a && plain);
    a[100] = 7;                         /* one page already mapped, with data */
    if (dg_alloc_populate(a + 1, n - 2)) { /* unaligned at both ends */
        free(a);
        free(plain);
        cr_skip_test("this kernel cannot populate (MADV_POPULATE_WRITE is Linux 5.14)");
    }
    long populated = touch_faults(a, n), lazy = touch_faults(plain, n);
    cr_assert_eq(a[100], 7, "populating changed the contents");
    cr_assert_eq(a[0], 0);
    if (populated >= 0 && lazy >= 512) /* the other range faulted page by page (no THP) */
        cr_expect_lt(2 * populated, lazy, "%ld faults touching 2048 populated pages, %ld "
                     "touching 2048 others", populated, lazy);
    free(a);
    free(plain);
    cr_assert_eq(dg_alloc_populate(NULL, 4096), 0, "nothing to do");
    char small[64] = {1};
    cr_assert_eq(dg_alloc_populate(small, sizeof(small)), 0);
    cr_assert_eq(small[0], 1);
}
