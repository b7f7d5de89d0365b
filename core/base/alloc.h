/* Allocation for every layer of the library: malloc, calloc, realloc and
 * aligned_alloc behind one hook, so that tests can make the k-th allocation
 * fail and check that each init and create path returns
 * DAGGER_ERR_NO_MEMORY and frees what it took (tests/core/runtime/test_alloc_fail.c).
 *
 * The countdown is per thread: only allocations made by the thread that
 * armed it count, so a test's count does not depend on what worker threads
 * do meanwhile. Disarmed (always, outside those tests) it costs one
 * predictable branch on a thread-local load. */
#ifndef DG_ALLOC_H
#define DG_ALLOC_H

#include <stddef.h>
#include <stdlib.h>

#include "core/base/common.h"

/* Allocations left before the one that fails on this thread; 0 = disarmed. */
extern _Thread_local long dg_alloc_countdown;

/* Counts one allocation down; 1 when this one is to fail (out of line: only
 * armed threads get here). */
int dg_alloc_tick(void);

static inline int dg_alloc_refused(void)
{
    return DG_UNLIKELY(dg_alloc_countdown != 0) && dg_alloc_tick();
}

static inline void *dg_malloc(size_t n)
{
    return dg_alloc_refused() ? NULL : malloc(n);
}

static inline void *dg_calloc(size_t n, size_t size)
{
    return dg_alloc_refused() ? NULL : calloc(n, size);
}

static inline void *dg_realloc(void *p, size_t n)
{
    return dg_alloc_refused() ? NULL : realloc(p, n);
}

static inline void *dg_aligned_alloc(size_t align, size_t n)
{
    return dg_alloc_refused() ? NULL : aligned_alloc(align, n);
}

/* Asks the kernel to back the 2 MiB-aligned part of [p, p + n) with
 * transparent huge pages (madvise MADV_HUGEPAGE; a kernel without them, or
 * with them off, ignores it). For large arrays that are zeroed lazily and
 * touched a little at a time, such as the executor's op ring: each first
 * touch of a 4 KiB page is a fault, which on a paravirtualised machine here
 * cost 12-20 us, one per 8 ops. */
void dg_alloc_advise_huge(void *p, size_t n);
/* n bytes for a large data block, 64-byte aligned, or NULL; free with free().
 * With huge and n of at least DG_ALLOC_HUGE_MIN, the block starts on a
 * 2 MiB boundary and is advised to use transparent huge pages
 * (dg_alloc_advise_huge), so that each whole 2 MiB of it takes one page
 * fault at first touch instead of 512 and one TLB entry: a malloc'ed block of
 * that size starts at an arbitrary page, where no huge page fits whole. The
 * alignment costs address space only (the slack around the block is never
 * touched). */
#define DG_ALLOC_HUGE_MIN ((size_t)2 << 20)
void *dg_alloc_block(size_t n, int huge);
/* Maps the pages of [p, p + n) writable now, in one system call, instead of
 * one page fault each at first touch (MADV_POPULATE_WRITE, Linux 5.14).
 * The contents are unchanged. Returns 0, or -1 when the system cannot
 * (an older kernel or another system: nothing happened). */
int dg_alloc_populate(void *p, size_t n);

/* ---- for tests ---- */

/* Arms this thread: its k-th allocation from now (k >= 1) fails, once, and
 * later ones succeed again. k = 0 disarms. */
void dg_alloc_fail_at(long k);

/* 1 if the armed failure has happened on this thread since dg_alloc_fail_at. */
int dg_alloc_failed(void);

#endif
