/* Open-addressing id map (see idmap.h). */
#include "core/plan/idmap.h"

#include <string.h>

#include "core/base/common.h"

static inline uint32_t slot_of(uint64_t key, uint32_t cap)
{
    uint64_t x = key * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 32) & (cap - 1);
}

void dg_plan_idmap_init(dg_plan_idmap_t *m)
{
    memset(m, 0, sizeof(*m));
}

void *dg_plan_idmap_get(const dg_plan_idmap_t *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    for (uint32_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return m->vals[i];
        if (!m->keys[i])
            return NULL;
    }
}

static void place(dg_plan_idmap_t *m, uint64_t key, void *val)
{
    uint32_t i = slot_of(key, m->cap);
    while (m->keys[i])
        i = (i + 1) & (m->cap - 1);
    m->keys[i] = key;
    m->vals[i] = val;
}

static int grow(dg_plan_mem_t *mem, dg_plan_idmap_t *m)
{
    uint32_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = dg_plan_mem_alloc(mem, (size_t)cap * sizeof(*keys));
    void **vals = dg_plan_mem_alloc(mem, (size_t)cap * sizeof(*vals));
    if (!keys || !vals) {
        dg_plan_mem_free(mem, keys, (size_t)cap * sizeof(*keys));
        dg_plan_mem_free(mem, vals, (size_t)cap * sizeof(*vals));
        return -1;
    }
    memset(keys, 0, (size_t)cap * sizeof(*keys));
    dg_plan_idmap_t old = *m;
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    for (uint32_t i = 0; i < old.cap; i++)
        if (old.keys[i])
            place(m, old.keys[i], old.vals[i]);
    dg_plan_mem_free(mem, old.keys, (size_t)old.cap * sizeof(*old.keys));
    dg_plan_mem_free(mem, old.vals, (size_t)old.cap * sizeof(*old.vals));
    return 0;
}

int dg_plan_idmap_put(dg_plan_mem_t *mem, dg_plan_idmap_t *m, uint64_t key, void *val)
{
    DG_ASSERT(key != 0);
    if ((m->n + 1) * 4 > m->cap * 3 && grow(mem, m))
        return -1;
    place(m, key, val);
    m->n++;
    return 0;
}

void dg_plan_idmap_del(dg_plan_idmap_t *m, uint64_t key)
{
    if (!m->cap)
        return;
    uint32_t mask = m->cap - 1, i = slot_of(key, m->cap);
    while (m->keys[i] != key) {
        if (!m->keys[i])
            return;
        i = (i + 1) & mask;
    }
    /* Backward shift: move later members of the probe run into the hole
     * when their home slot does not lie between the hole and them. */
    for (uint32_t j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
        uint32_t home = slot_of(m->keys[j], m->cap);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = 0;
    m->vals[i] = NULL;
    m->n--;
}
