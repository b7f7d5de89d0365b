/* The planner's allocator: size classes carved from slabs, with free lists,
 * so steady-state planning never calls malloc (DESIGN.md section 11: no
 * per-task leak, no per-op malloc). Everything it hands out is released at
 * once by dg_plan_mem_cleanup. Counters feed the benchmark's bytes/task. */
#ifndef DG_PLAN_MEM_H
#define DG_PLAN_MEM_H

#include <stddef.h>
#include <stdint.h>

#define DG_PLAN_MEM_MIN_SHIFT 4   /* smallest class: 16 bytes */
#define DG_PLAN_MEM_MAX_SHIFT 15  /* largest class: 32 KiB; larger blocks are direct */
#define DG_PLAN_MEM_CLASSES (DG_PLAN_MEM_MAX_SHIFT - DG_PLAN_MEM_MIN_SHIFT + 1)
#define DG_PLAN_MEM_SLAB (256u * 1024u)

typedef struct dg_plan_mem_stats {
    uint64_t in_use;      /* bytes handed out and not yet freed (rounded to classes) */
    uint64_t peak_in_use;
    uint64_t reserved;    /* bytes obtained from the system and still held */
    uint64_t sys_bytes;   /* cumulative bytes obtained from the system */
    uint64_t sys_calls;   /* cumulative system allocations */
} dg_plan_mem_stats_t;

typedef struct dg_plan_mem {
    void *free_lists[DG_PLAN_MEM_CLASSES];
    void *slabs;              /* singly linked through the first word */
    char *bump;               /* unused tail of the newest slab */
    size_t bump_left;
    struct dg_plan_big *big;  /* direct blocks, doubly linked */
    int failed;               /* an allocation failed: the owner is unusable */
    dg_plan_mem_stats_t st;
} dg_plan_mem_t;

void dg_plan_mem_init(dg_plan_mem_t *m);
void dg_plan_mem_cleanup(dg_plan_mem_t *m);

/* Returns NULL (and sets m->failed) when the system is out of memory.
 * size 0 returns NULL without failing. */
void *dg_plan_mem_alloc(dg_plan_mem_t *m, size_t size);
/* The same, zeroed; a large block (over the largest class) comes from
 * calloc, so pages nobody writes are never touched: the planner's task ring
 * was 1.5 MB of page faults at every start (384 faults, ~6 ms here). */
void *dg_plan_mem_alloc_zeroed(dg_plan_mem_t *m, size_t size);
/* size must be the size given to alloc (callers always know it). */
void dg_plan_mem_free(dg_plan_mem_t *m, void *ptr, size_t size);
/* Grows or shrinks a block, keeping min(old, new) bytes. */
void *dg_plan_mem_realloc(dg_plan_mem_t *m, void *ptr, size_t old_size, size_t new_size);
/* Room for element n of an array of `size`-byte elements with *cap slots:
 * returns the array (moved when it had to grow, doubling from 2 slots, and
 * *cap updated), or NULL with the array and *cap unchanged when out of
 * memory. The find-or-append tables of the planner share it. */
void *dg_plan_mem_grow(dg_plan_mem_t *m, void *arr, uint32_t *cap, uint32_t n, size_t size);

#endif
