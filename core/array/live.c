/* The registry of live array-layer handles (arrays, stencils): a growable
 * open-addressing set of pointer values behind a mutex. The runtime's own
 * handle table is small and fixed; programs hold many arrays. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/base/alloc.h"
#include "core/array/array_internal.h"

#define TOMB ((uintptr_t)1)

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t *live_tab;
static size_t live_cap, live_used, live_n; /* used: entries and tombstones; n: entries */

static size_t slot_of(uintptr_t h, size_t cap)
{
    return (size_t)((h >> 4) * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

/* Rehashes without tombstones, doubling only when live entries need it. */
static int grow(void)
{
    size_t ncap = live_cap ? live_cap : 64;
    while ((live_n + 1) * 4 > ncap)
        ncap *= 2;
    uintptr_t *n = dg_calloc(ncap, sizeof(*n));
    if (!n)
        return -1;
    size_t used = 0;
    for (size_t i = 0; i < live_cap; i++) {
        uintptr_t h = live_tab[i];
        if (h <= TOMB)
            continue;
        size_t j = slot_of(h, ncap);
        while (n[j])
            j = (j + 1) & (ncap - 1);
        n[j] = h;
        used++;
    }
    free(live_tab);
    live_tab = n;
    live_cap = ncap;
    live_used = used;
    return 0;
}

int dg_arr_live_add(const void *p)
{
    uintptr_t h = (uintptr_t)p;
    pthread_mutex_lock(&live_lock);
    int rc = 0;
    if ((live_used + 1) * 2 > live_cap)
        rc = grow();
    if (rc == 0) {
        size_t j = slot_of(h, live_cap);
        while (live_tab[j] > TOMB)
            j = (j + 1) & (live_cap - 1);
        live_used += live_tab[j] == 0;
        live_tab[j] = h;
        live_n++;
    }
    pthread_mutex_unlock(&live_lock);
    return rc;
}

/* The slot holding h, or NULL. Called with the lock held. */
static uintptr_t *find(uintptr_t h)
{
    if (!live_cap)
        return NULL;
    for (size_t j = slot_of(h, live_cap);; j = (j + 1) & (live_cap - 1)) {
        if (live_tab[j] == h)
            return &live_tab[j];
        if (live_tab[j] == 0)
            return NULL;
    }
}

void dg_arr_live_remove(const void *p)
{
    pthread_mutex_lock(&live_lock);
    uintptr_t *e = find((uintptr_t)p);
    if (e) {
        *e = TOMB;
        live_n--;
    }
    pthread_mutex_unlock(&live_lock);
}

int dg_arr_live(const void *p)
{
    if ((uintptr_t)p <= TOMB)
        return 0;
    pthread_mutex_lock(&live_lock);
    int live = find((uintptr_t)p) != NULL;
    pthread_mutex_unlock(&live_lock);
    return live;
}
