/* Actor ids -> live actors, safe against concurrent join.
 *
 * An id is (generation << 20 | slot index). Slots live in fixed chunks that
 * are never moved or freed while the system lives, so a sender may always
 * touch a slot. A sender announces itself in the slot's `users` counter
 * before reading the actor pointer; join clears the pointer and then waits
 * for `users` to drain, after which no sender can reach the actor:
 *
 *   sender: users++ ; a = slot.actor ; ... push ... ; users--
 *   join:   slot.actor = NULL ; wait users == 0 ; (free)
 *
 * Both sides are sequentially consistent, so either the sender sees NULL or
 * join sees the sender. Freed slots are reused in FIFO order with the next
 * generation, so a stale id is recognised for 4096 reuses of its slot. */
#ifndef DG_ACT_REGISTRY_H
#define DG_ACT_REGISTRY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "actors/actor.h"

#define DG_REG_INDEX_BITS 20
#define DG_REG_INDEX_MASK ((1u << DG_REG_INDEX_BITS) - 1)
#define DG_REG_GEN_MASK   ((1u << (32 - DG_REG_INDEX_BITS)) - 1)
#define DG_REG_CHUNK      1024u
#define DG_REG_NCHUNKS    ((DG_REG_INDEX_MASK + 1) / DG_REG_CHUNK)
/* Index 0 is never used (id 0 means "no actor") nor the last index (id
 * 0xffffffff is the futures endpoint). */
#define DG_REG_MAX_INDEX  (DG_REG_INDEX_MASK - 1)

typedef struct dg_reg_slot {
    _Atomic(dg_actor_t *) actor;
    _Atomic uint32_t users;
    _Atomic uint32_t gen;  /* generation of the latest actor given this slot */
    uint32_t next_free;    /* free list link (under the lock) */
} dg_reg_slot_t;

typedef struct dg_registry {
    pthread_mutex_t lock;
    _Atomic(dg_reg_slot_t *) chunk[DG_REG_NCHUNKS];
    _Atomic uint32_t fresh; /* first index never handed out */
    uint32_t free_head, free_tail;
} dg_registry_t;

typedef enum {
    DG_REG_FOUND = 0,
    DG_REG_NEVER = 1, /* no actor ever had this id */
    DG_REG_GONE = 2   /* the actor existed and was joined */
} dg_reg_lookup_t;

void dg_registry_init(dg_registry_t *reg);
void dg_registry_cleanup(dg_registry_t *reg);

/* Gives the actor an id and publishes it. -1: no free slot, -2: no memory. */
int dg_registry_add(dg_registry_t *reg, dg_actor_t *a);

/* Finds a live (not yet joined) actor and holds its slot: release it with
 * dg_registry_release(*slot) when done touching the actor. */
dg_reg_lookup_t dg_registry_acquire(dg_registry_t *reg, uint32_t id, dg_actor_t **a,
                                    dg_reg_slot_t **slot);

static inline void dg_registry_release(dg_reg_slot_t *slot)
{
    atomic_fetch_sub_explicit(&slot->users, 1, memory_order_seq_cst);
}

/* Unpublishes an actor (join) and waits until no sender holds its slot; the
 * slot is then free for reuse. */
void dg_registry_remove(dg_registry_t *reg, dg_actor_t *a);

/* Calls fn on every live actor (slot held during the call). */
void dg_registry_each(dg_registry_t *reg, void (*fn)(dg_actor_t *a, void *arg), void *arg);

#endif
