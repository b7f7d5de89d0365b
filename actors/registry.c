/* Actor registry (scheme in registry.h). */
#include "actors/registry.h"

#include <sched.h>
#include <stdlib.h>

#include "core/base/alloc.h"

static dg_reg_slot_t *slot_of(dg_registry_t *reg, uint32_t index)
{
    dg_reg_slot_t *c = atomic_load_explicit(&reg->chunk[index / DG_REG_CHUNK], memory_order_acquire);
    return &c[index % DG_REG_CHUNK];
}

void dg_registry_init(dg_registry_t *reg)
{
    pthread_mutex_init(&reg->lock, NULL);
    for (size_t i = 0; i < DG_REG_NCHUNKS; i++)
        atomic_init(&reg->chunk[i], NULL);
    atomic_init(&reg->fresh, 1);
    reg->free_head = reg->free_tail = 0;
}

void dg_registry_cleanup(dg_registry_t *reg)
{
    for (size_t i = 0; i < DG_REG_NCHUNKS; i++)
        free(atomic_load(&reg->chunk[i]));
    pthread_mutex_destroy(&reg->lock);
}

static uint32_t pop_free(dg_registry_t *reg)
{
    uint32_t i = reg->free_head;
    if (i) {
        reg->free_head = slot_of(reg, i)->next_free;
        if (!reg->free_head)
            reg->free_tail = 0;
    }
    return i;
}

/* A slot index for a new actor (caller holds the lock), 0 if none (*nomem
 * says whether memory ran out rather than ids). Fresh
 * slots are used first until half the id space is used, so a slot is rarely
 * reused and stale ids stay recognisable; chunks are 16 KiB each. */
static uint32_t take_index(dg_registry_t *reg, int *reused, int *nomem)
{
    uint32_t fresh = atomic_load_explicit(&reg->fresh, memory_order_relaxed);
    *reused = 1;
    if (reg->free_head && fresh > DG_REG_MAX_INDEX / 2)
        return pop_free(reg);
    if (fresh <= DG_REG_MAX_INDEX) {
        size_t c = fresh / DG_REG_CHUNK;
        if (!atomic_load_explicit(&reg->chunk[c], memory_order_relaxed)) {
            dg_reg_slot_t *chunk = dg_calloc(DG_REG_CHUNK, sizeof(*chunk));
            if (!chunk) {
                *nomem = 1;
                return 0;
            }
            atomic_store_explicit(&reg->chunk[c], chunk, memory_order_release);
        }
        atomic_store_explicit(&reg->fresh, fresh + 1, memory_order_release);
        *reused = 0;
        return fresh;
    }
    return pop_free(reg);
}

int dg_registry_add(dg_registry_t *reg, dg_actor_t *a)
{
    pthread_mutex_lock(&reg->lock);
    int reused, nomem = 0;
    uint32_t index = take_index(reg, &reused, &nomem);
    if (!index) {
        pthread_mutex_unlock(&reg->lock);
        return nomem ? -2 : -1;
    }
    dg_reg_slot_t *s = slot_of(reg, index);
    uint32_t gen = atomic_load_explicit(&s->gen, memory_order_relaxed);
    if (reused)
        gen = (gen + 1) & DG_REG_GEN_MASK;
    atomic_store_explicit(&s->gen, gen, memory_order_relaxed);
    a->id = gen << DG_REG_INDEX_BITS | index;
    atomic_store_explicit(&s->actor, a, memory_order_seq_cst);
    pthread_mutex_unlock(&reg->lock);
    return 0;
}

dg_reg_lookup_t dg_registry_acquire(dg_registry_t *reg, uint32_t id, dg_actor_t **a,
                                    dg_reg_slot_t **slot)
{
    uint32_t index = id & DG_REG_INDEX_MASK, gen = id >> DG_REG_INDEX_BITS;
    *a = NULL;
    if (index == 0 || index >= atomic_load_explicit(&reg->fresh, memory_order_acquire))
        return DG_REG_NEVER;
    dg_reg_slot_t *s = slot_of(reg, index);
    atomic_fetch_add_explicit(&s->users, 1, memory_order_seq_cst);
    dg_actor_t *p = atomic_load_explicit(&s->actor, memory_order_seq_cst);
    if (p && p->id == id) {
        *a = p;
        *slot = s;
        return DG_REG_FOUND;
    }
    dg_registry_release(s);
    /* Generations count up per reuse: an older one existed, a newer one was
     * never handed out. */
    return gen <= atomic_load_explicit(&s->gen, memory_order_relaxed) ? DG_REG_GONE : DG_REG_NEVER;
}

void dg_registry_remove(dg_registry_t *reg, dg_actor_t *a)
{
    uint32_t index = a->id & DG_REG_INDEX_MASK;
    dg_reg_slot_t *s = slot_of(reg, index);
    atomic_store_explicit(&s->actor, NULL, memory_order_seq_cst);
    while (atomic_load_explicit(&s->users, memory_order_seq_cst) != 0)
        sched_yield(); /* senders hold a slot for the length of one push */
    pthread_mutex_lock(&reg->lock);
    s->next_free = 0;
    if (reg->free_tail)
        slot_of(reg, reg->free_tail)->next_free = index;
    else
        reg->free_head = index;
    reg->free_tail = index;
    pthread_mutex_unlock(&reg->lock);
}

void dg_registry_each(dg_registry_t *reg, void (*fn)(dg_actor_t *a, void *arg), void *arg)
{
    uint32_t fresh = atomic_load_explicit(&reg->fresh, memory_order_acquire);
    for (uint32_t i = 1; i < fresh; i++) {
        dg_reg_slot_t *s = slot_of(reg, i);
        atomic_fetch_add_explicit(&s->users, 1, memory_order_seq_cst);
        dg_actor_t *a = atomic_load_explicit(&s->actor, memory_order_seq_cst);
        if (a)
            fn(a, arg);
        dg_registry_release(s);
    }
}
