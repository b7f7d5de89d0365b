/* Size-class allocator for the planner (see mem.h for why). */
#include "core/plan/mem.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/common.h"

typedef struct dg_plan_big {
    struct dg_plan_big *prev, *next;
    size_t size;
    size_t pad; /* keeps the payload 16-byte aligned */
} dg_plan_big_t;

void dg_plan_mem_init(dg_plan_mem_t *m)
{
    memset(m, 0, sizeof(*m));
}

void dg_plan_mem_cleanup(dg_plan_mem_t *m)
{
    while (m->slabs) {
        void *next = *(void **)m->slabs;
        free(m->slabs);
        m->slabs = next;
    }
    while (m->big) {
        dg_plan_big_t *next = m->big->next;
        free(m->big);
        m->big = next;
    }
    memset(m, 0, sizeof(*m));
}

/* The class whose blocks hold size bytes (size at most the largest class's):
 * the bit length of size - 1 past the smallest class's. One instruction for
 * the loop it replaces (a 200-byte block went round four times, three times
 * for each alloc and free). */
static unsigned size_class(size_t size)
{
    if (size <= ((size_t)1 << DG_PLAN_MEM_MIN_SHIFT))
        return 0;
    return (unsigned)(64 - __builtin_clzll((unsigned long long)(size - 1))) - DG_PLAN_MEM_MIN_SHIFT;
}

/* zero: calloc, whose large blocks come zeroed from the system untouched. */
static void *sys_alloc(dg_plan_mem_t *m, size_t size, int zero)
{
    void *p = zero ? dg_calloc(1, size) : dg_malloc(size);
    if (DG_UNLIKELY(!p)) {
        m->failed = 1;
        return NULL;
    }
    m->st.sys_bytes += size;
    m->st.sys_calls++;
    m->st.reserved += size;
    return p;
}

static void *big_alloc(dg_plan_mem_t *m, size_t size, int zero)
{
    dg_plan_big_t *b = sys_alloc(m, sizeof(*b) + size, zero);
    if (!b)
        return NULL;
    b->size = size;
    b->prev = NULL;
    b->next = m->big;
    if (m->big)
        m->big->prev = b;
    m->big = b;
    return b + 1;
}

static void big_free(dg_plan_mem_t *m, void *ptr)
{
    dg_plan_big_t *b = (dg_plan_big_t *)ptr - 1;
    if (b->prev)
        b->prev->next = b->next;
    else
        m->big = b->next;
    if (b->next)
        b->next->prev = b->prev;
    m->st.reserved -= sizeof(*b) + b->size;
    free(b);
}

/* A class block from the free list, or carved from the newest slab. */
static void *class_alloc(dg_plan_mem_t *m, unsigned c)
{
    size_t bytes = (size_t)1 << (c + DG_PLAN_MEM_MIN_SHIFT);
    void *p = m->free_lists[c];
    if (p) {
        m->free_lists[c] = *(void **)p;
        return p;
    }
    if (m->bump_left < bytes) {
        /* The old slab's tail is too small for this class: give it to the
         * free lists of smaller classes so nothing is wasted for good. */
        for (unsigned k = c; k-- > 0;) {
            size_t kb = (size_t)1 << (k + DG_PLAN_MEM_MIN_SHIFT);
            while (m->bump_left >= kb) {
                *(void **)m->bump = m->free_lists[k];
                m->free_lists[k] = m->bump;
                m->bump += kb;
                m->bump_left -= kb;
            }
        }
        char *slab = sys_alloc(m, DG_PLAN_MEM_SLAB, 0);
        if (!slab)
            return NULL;
        *(void **)slab = m->slabs;
        m->slabs = slab;
        /* The first 64 bytes hold the link and keep blocks aligned. */
        m->bump = slab + 64;
        m->bump_left = DG_PLAN_MEM_SLAB - 64;
    }
    p = m->bump;
    m->bump += bytes;
    m->bump_left -= bytes;
    return p;
}

static size_t rounded(size_t size)
{
    if (size > ((size_t)1 << DG_PLAN_MEM_MAX_SHIFT))
        return size;
    return (size_t)1 << (size_class(size) + DG_PLAN_MEM_MIN_SHIFT);
}

static void *alloc(dg_plan_mem_t *m, size_t size, int zero)
{
    if (size == 0)
        return NULL;
    void *p;
    if (size > ((size_t)1 << DG_PLAN_MEM_MAX_SHIFT))
        p = big_alloc(m, size, zero);
    else if ((p = class_alloc(m, size_class(size))) && zero)
        memset(p, 0, size);
    if (p) {
        m->st.in_use += rounded(size);
        if (m->st.in_use > m->st.peak_in_use)
            m->st.peak_in_use = m->st.in_use;
    }
    return p;
}

void *dg_plan_mem_alloc(dg_plan_mem_t *m, size_t size)
{
    return alloc(m, size, 0);
}

void *dg_plan_mem_alloc_zeroed(dg_plan_mem_t *m, size_t size)
{
    return alloc(m, size, 1);
}

void dg_plan_mem_free(dg_plan_mem_t *m, void *ptr, size_t size)
{
    if (!ptr)
        return;
    m->st.in_use -= rounded(size);
    if (size > ((size_t)1 << DG_PLAN_MEM_MAX_SHIFT)) {
        big_free(m, ptr);
        return;
    }
    unsigned c = size_class(size);
    *(void **)ptr = m->free_lists[c];
    m->free_lists[c] = ptr;
}

void *dg_plan_mem_realloc(dg_plan_mem_t *m, void *ptr, size_t old_size, size_t new_size)
{
    if (ptr && rounded(old_size) == rounded(new_size) && new_size)
        return ptr;
    void *q = dg_plan_mem_alloc(m, new_size);
    if (!q && new_size)
        return NULL;
    if (ptr) {
        memcpy(q, ptr, DG_MIN(old_size, new_size));
        dg_plan_mem_free(m, ptr, old_size);
    }
    return q;
}

void *dg_plan_mem_grow(dg_plan_mem_t *m, void *arr, uint32_t *cap, uint32_t n, size_t size)
{
    if (n < *cap)
        return arr;
    uint32_t ncap = *cap ? *cap * 2 : 2;
    void *nv = dg_plan_mem_realloc(m, arr, *cap * size, ncap * size);
    if (nv)
        *cap = ncap;
    return nv;
}
