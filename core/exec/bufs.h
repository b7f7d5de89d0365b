/* The memory of this rank's buffers: the one copy of a chunk in one memory
 * space, found by (chunk id, space). The submitting thread owns the table
 * (allocations happen when an ALLOC op is emitted, lookups when ops are
 * emitted); only the release of memory happens later, on whichever thread
 * runs the FREE op, through a locked pool that keeps freed blocks for reuse. */
#ifndef DG_EXEC_BUFS_H
#define DG_EXEC_BUFS_H

#include <dagger/actor.h>
#include <dagger/status.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "core/exec/memspace.h"

typedef struct dg_buf_entry {
    uint64_t chunk;   /* 0: empty slot */
    uint32_t space;
    uint32_t home;    /* 1: the chunk's own storage */
    void *ptr;
    size_t bytes;
} dg_buf_entry_t;

#define DG_MAX_SPACES 16
/* At most this many memory-space actors serve one space (lanes, see
 * devices/host/host_space.c). */
#define DG_MEM_LANES 8
#define DG_POOL_SIZES 64

typedef struct dg_bufs {
    dg_memspace_t spaces[DG_MAX_SPACES]; /* by space index; ops NULL = absent */
    dg_buf_entry_t *slots;
    size_t cap, used, tombs;
    /* Released host blocks kept for reuse, in one list per exact size (the
     * slots of an array's blocks have few distinct sizes); a size that finds
     * no free list is not kept. Guarded by pool_lock. */
    pthread_mutex_t pool_lock;
    struct dg_pool_list {
        size_t bytes;                 /* 0: unused */
        struct dg_pool_block *head;
    } pool[DG_POOL_SIZES];
    size_t pool_bytes, pool_limit;
    /* The memory-space actors (lanes) that own each space (docs/design.md
     * section 6): allocations and releases are counted by whether they run
     * inside a turn of one of them (tests check that all do). */
    dagger_actor_addr_t owner[DG_MAX_SPACES][DG_MEM_LANES];
    _Atomic uint64_t in_owner_turn, outside_owner_turn;
} dg_bufs_t;

dagger_status_t dg_bufs_init(dg_bufs_t *b, size_t pool_limit);
void dg_bufs_cleanup(dg_bufs_t *b);

/* The size of the block that holds bytes (small buffers get room for the
 * pool's link). */
static inline size_t dg_bufs_block_size(size_t bytes)
{
    return bytes < 2 * sizeof(void *) ? 2 * sizeof(void *) : bytes;
}

/* The memory-space actor's side: a block of dg_bufs_block_size(bytes)
 * bytes of space (from the pool when one of that size is kept). zero:
 * clear it. */
dagger_status_t dg_bufs_mem_get(dg_bufs_t *b, uint32_t space, size_t bytes, int zero, void **ptr);
/* The executor's side: records ptr (bytes: the block size) as the buffer of
 * (chunk, space). */
dagger_status_t dg_bufs_insert(dg_bufs_t *b, uint64_t chunk, uint32_t space, int home, void *ptr,
                               size_t bytes);
/* Both in one (tests): allocates bytes and records it as the buffer of
 * (chunk, space). zero: clear the memory. */
dagger_status_t dg_bufs_alloc(dg_bufs_t *b, uint64_t chunk, uint32_t space, size_t bytes,
                              int home, int zero, void **ptr);
/* The buffer of (chunk, space), or NULL. */
dg_buf_entry_t *dg_bufs_find(dg_bufs_t *b, uint64_t chunk, uint32_t space);
/* Forgets (chunk, space) and returns its memory for a later dg_bufs_release. */
void *dg_bufs_remove(dg_bufs_t *b, uint64_t chunk, uint32_t space, size_t *bytes);
/* Any thread: copies bytes between two buffers of this rank (either space
 * may be a device; the copy goes through that device's ops). */
dagger_status_t dg_bufs_copy(dg_bufs_t *b, uint32_t dst_space, void *dst, uint32_t src_space,
                             const void *src, size_t bytes);
/* Any thread: gives memory of space back (host blocks are kept in the pool
 * up to its limit). */
void dg_bufs_release(dg_bufs_t *b, uint32_t space, void *ptr, size_t bytes);

#endif
