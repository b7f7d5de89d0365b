/* Live-handle registry: a fixed table of atomic slots. Lookups never
 * dereference the handle, so any pointer value can be checked safely. */
#include "core/handles.h"

#include <stdatomic.h>
#include <stdint.h>

#define DG_MAX_LIVE_HANDLES 256

static _Atomic(uintptr_t) dg_live[DG_MAX_LIVE_HANDLES];

int dg_handle_add(const void *h)
{
    for (int i = 0; i < DG_MAX_LIVE_HANDLES; i++) {
        uintptr_t expect = 0;
        if (atomic_compare_exchange_strong(&dg_live[i], &expect, (uintptr_t)h))
            return 0;
    }
    return -1;
}

void dg_handle_remove(const void *h)
{
    for (int i = 0; i < DG_MAX_LIVE_HANDLES; i++) {
        uintptr_t expect = (uintptr_t)h;
        if (atomic_compare_exchange_strong(&dg_live[i], &expect, 0))
            return;
    }
}

int dg_handle_live(const void *h)
{
    if (!h)
        return 0;
    for (int i = 0; i < DG_MAX_LIVE_HANDLES; i++)
        if (atomic_load_explicit(&dg_live[i], memory_order_acquire) == (uintptr_t)h)
            return 1;
    return 0;
}
