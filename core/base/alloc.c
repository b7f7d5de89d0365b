/* The allocation hook's test side: the per-thread failure countdown. */
#include "core/base/alloc.h"

#include <stdint.h>
#include <sys/mman.h>

_Thread_local long dg_alloc_countdown;
static _Thread_local int dg_alloc_fired;

int dg_alloc_tick(void)
{
    if (--dg_alloc_countdown != 0)
        return 0;
    dg_alloc_fired = 1;
    return 1;
}

void dg_alloc_fail_at(long k)
{
    dg_alloc_countdown = k > 0 ? k : 0;
    dg_alloc_fired = 0;
}

int dg_alloc_failed(void)
{
    return dg_alloc_fired;
}

void dg_alloc_advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t b = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + n) & ~(huge - 1);
    if (p && e > b)
        (void)madvise((void *)b, e - b, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

void *dg_alloc_block(size_t n, int huge)
{
    if (!huge || n < DG_ALLOC_HUGE_MIN)
        return dg_aligned_alloc(64, (n + 63) / 64 * 64);
    /* aligned_alloc wants a multiple of the alignment; the rounded-up tail
     * past n is never touched, so it costs address space only */
    void *p = dg_aligned_alloc(DG_ALLOC_HUGE_MIN,
                               (n + DG_ALLOC_HUGE_MIN - 1) / DG_ALLOC_HUGE_MIN * DG_ALLOC_HUGE_MIN);
    dg_alloc_advise_huge(p, n);
    return p;
}

int dg_alloc_populate(void *p, size_t n)
{
    if (!p || !n)
        return 0;
#ifdef MADV_POPULATE_WRITE
    const uintptr_t page = 4096;
    uintptr_t b = (uintptr_t)p & ~(page - 1), e = ((uintptr_t)p + n + page - 1) & ~(page - 1);
    return madvise((void *)b, e - b, MADV_POPULATE_WRITE) == 0 ? 0 : -1;
#else
    return -1;
#endif
}
