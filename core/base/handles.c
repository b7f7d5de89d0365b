/* Live-handle registry: a fixed table of atomic slots holding the handle's
 * address with its kind in the low bits (handles are at least 8-aligned).
 * Lookups never dereference the handle, so any pointer value can be checked
 * safely. */
#include "core/base/handles.h"

#include <stdatomic.h>
#include <stdint.h>

#define DG_MAX_LIVE_HANDLES 256
#define DG_KIND_MASK ((uintptr_t)7)

static _Atomic(uintptr_t) dg_live[DG_MAX_LIVE_HANDLES];

static uintptr_t tagged(const void *h, dg_handle_kind_t kind)
{
    return (uintptr_t)h | ((uintptr_t)kind & DG_KIND_MASK);
}

int dg_handle_add_kind(const void *h, dg_handle_kind_t kind)
{
    if (!h || ((uintptr_t)h & DG_KIND_MASK))
        return -1;
    for (int i = 0; i < DG_MAX_LIVE_HANDLES; i++) {
        uintptr_t expect = 0;
        if (atomic_compare_exchange_strong(&dg_live[i], &expect, tagged(h, kind)))
            return 0;
    }
    return -1;
}

void dg_handle_remove(const void *h)
{
    for (int i = 0; i < DG_MAX_LIVE_HANDLES; i++) {
        uintptr_t v = atomic_load_explicit(&dg_live[i], memory_order_acquire);
        if (v && (v & ~DG_KIND_MASK) == (uintptr_t)h &&
            atomic_compare_exchange_strong(&dg_live[i], &v, 0))
            return;
    }
}

int dg_handle_live_kind(const void *h, dg_handle_kind_t kind)
{
    if (!h || ((uintptr_t)h & DG_KIND_MASK))
        return 0;
    uintptr_t want = tagged(h, kind);
    for (int i = 0; i < DG_MAX_LIVE_HANDLES; i++)
        if (atomic_load_explicit(&dg_live[i], memory_order_acquire) == want)
            return 1;
    return 0;
}

int dg_handle_count(dg_handle_kind_t kind)
{
    int n = 0;
    for (int i = 0; i < DG_MAX_LIVE_HANDLES; i++) {
        uintptr_t v = atomic_load_explicit(&dg_live[i], memory_order_acquire);
        n += v && (v & DG_KIND_MASK) == ((uintptr_t)kind & DG_KIND_MASK);
    }
    return n;
}
