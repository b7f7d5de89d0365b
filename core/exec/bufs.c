/* Buffer table (open addressing on (chunk, space)) and the reuse pool. */
#include "core/exec/bufs.h"

#include <stdlib.h>
#include <string.h>

#include "actors/system.h"
#include "core/base/alloc.h"
#include "core/base/common.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"

#define DG_TOMB UINT64_MAX

typedef struct dg_pool_block {
    struct dg_pool_block *next;
    size_t bytes;
} dg_pool_block_t;

/* Chunk ids come from a counter: neighbouring ids in neighbouring slots
 * keep lookups of chunks created together in the same cache lines. */
static uint64_t slot_hash(uint64_t chunk, uint32_t space)
{
    return (chunk << 1) ^ ((uint64_t)space * 0x9e3779b97f4a7c15ull);
}

dagger_status_t dg_bufs_init(dg_bufs_t *b, size_t pool_limit)
{
    memset(b, 0, sizeof(*b));
    b->slots = dg_calloc(1024, sizeof(*b->slots));
    if (!b->slots) /* b stays all zero: dg_bufs_cleanup is then a no-op */
        return dg_error(DAGGER_ERR_NO_MEMORY, "buffer table: out of memory");
    b->cap = 1024;
    pthread_mutex_init(&b->pool_lock, NULL);
    b->pool_limit = pool_limit;
    b->spaces[0].ops = &dg_host_memspace_ops;
    return DAGGER_OK;
}

void dg_bufs_cleanup(dg_bufs_t *b)
{
    if (!b->slots) /* never initialised, or its init failed */
        return;
    for (size_t i = 0; i < b->cap; i++) {
        dg_buf_entry_t *e = &b->slots[i];
        if (e->chunk && e->chunk != DG_TOMB)
            b->spaces[e->space].ops->free(&b->spaces[e->space], e->ptr, e->bytes);
    }
    free(b->slots);
    for (int i = 0; i < DG_POOL_SIZES; i++)
        for (dg_pool_block_t *p = b->pool[i].head, *n; p; p = n) {
            n = p->next;
            dg_host_memspace_ops.free(&b->spaces[0], p, p->bytes);
        }
    pthread_mutex_destroy(&b->pool_lock);
    memset(b, 0, sizeof(*b));
}

/* The entry of (chunk, space), or NULL. */
static dg_buf_entry_t *probe(dg_bufs_t *b, uint64_t chunk, uint32_t space)
{
    size_t mask = b->cap - 1;
    for (size_t i = slot_hash(chunk, space) & mask;; i = (i + 1) & mask) {
        dg_buf_entry_t *e = &b->slots[i];
        if (e->chunk == 0)
            return NULL;
        if (e->chunk == chunk && e->space == space)
            return e;
    }
}

/* The first free slot (empty or a tomb) on the probe path of a (chunk,
 * space) that is not in the table (dg_bufs_insert's callers know). */
static dg_buf_entry_t *free_slot(dg_bufs_t *b, uint64_t chunk, uint32_t space)
{
    size_t mask = b->cap - 1;
    size_t i = slot_hash(chunk, space) & mask;
    while (b->slots[i].chunk && b->slots[i].chunk != DG_TOMB)
        i = (i + 1) & mask;
    return &b->slots[i];
}

static int grow(dg_bufs_t *b)
{
    dg_bufs_t nb = *b;
    /* Mostly tombstones (chunks created and freed): rehash at the same size. */
    nb.cap = b->used * 2 >= b->cap / 2 ? b->cap * 2 : b->cap;
    nb.slots = dg_calloc(nb.cap, sizeof(*nb.slots));
    if (!nb.slots)
        return -1;
    nb.used = nb.tombs = 0;
    for (size_t i = 0; i < b->cap; i++) {
        dg_buf_entry_t *e = &b->slots[i];
        if (e->chunk && e->chunk != DG_TOMB) {
            *free_slot(&nb, e->chunk, e->space) = *e;
            nb.used++;
        }
    }
    free(b->slots);
    b->slots = nb.slots;
    b->cap = nb.cap;
    b->used = nb.used;
    b->tombs = 0;
    return 0;
}

/* The free list of blocks of exactly bytes (create: claim an unused one),
 * or NULL. Lock held. */
static struct dg_pool_list *pool_list(dg_bufs_t *b, size_t bytes, int create)
{
    size_t h = (bytes * 0x9e3779b97f4a7c15ull) >> 58; /* 0..63 */
    for (int i = 0; i < DG_POOL_SIZES; i++) {
        struct dg_pool_list *l = &b->pool[(h + (size_t)i) % DG_POOL_SIZES];
        if (l->bytes == bytes)
            return l;
        if (l->bytes == 0 || (!l->head && create)) {
            if (!create)
                return NULL;
            l->bytes = bytes;
            return l;
        }
    }
    return NULL;
}

static void *pool_take(dg_bufs_t *b, size_t bytes)
{
    void *ptr = NULL;
    pthread_mutex_lock(&b->pool_lock);
    struct dg_pool_list *l = pool_list(b, bytes, 0);
    if (l && l->head) {
        dg_pool_block_t *blk = l->head;
        l->head = blk->next;
        b->pool_bytes -= bytes;
        ptr = blk;
    }
    pthread_mutex_unlock(&b->pool_lock);
    return ptr;
}

/* Whether the calling thread runs the turn of the actor that owns space
 * (counted: every allocation and release should be inside one). */
static void count_owner(dg_bufs_t *b, uint32_t space)
{
    dagger_ctx_t *ctx = dg_act_current_ctx();
    int mine = 0;
    for (int l = 0; ctx && l < DG_MEM_LANES && !mine; l++)
        mine = dagger_actor_addr_eq(dagger_ctx_self(ctx), b->owner[space][l]);
    atomic_fetch_add_explicit(mine ? &b->in_owner_turn : &b->outside_owner_turn, 1,
                              memory_order_relaxed);
}

dagger_status_t dg_bufs_mem_get(dg_bufs_t *b, uint32_t space, size_t bytes, int zero, void **ptr)
{
    dg_memspace_t *ms = space < DG_MAX_SPACES ? &b->spaces[space] : NULL;
    if (!ms || !ms->ops)
        return dg_error(DAGGER_ERR_UNSUPPORTED, "memory space %u does not exist on this rank",
                        space);
    count_owner(b, space);
    size_t alloc = dg_bufs_block_size(bytes);
    void *mem = space == 0 ? pool_take(b, alloc) : NULL;
    if (!mem) {
        mem = ms->ops->alloc(ms, alloc);
        if (!mem)
            return dg_error(DAGGER_ERR_NO_MEMORY, "cannot allocate %zu bytes of %s memory", bytes,
                            ms->ops->name);
    }
    if (zero && space == 0)
        memset(mem, 0, alloc);
    *ptr = mem;
    return DAGGER_OK;
}

dagger_status_t dg_bufs_insert(dg_bufs_t *b, uint64_t chunk, uint32_t space, int home, void *ptr,
                               size_t bytes)
{
    DG_ASSERT(chunk != 0 && chunk != DG_TOMB);
    /* At most half the slots in use or tombs: a missed lookup (an ALLOC
     * looks first) walks to an empty slot, and at three quarters the runs
     * of a value tree's buffers, made and freed with every task, came to
     * about 50 slots (1 x 1 tiny tree: 330 instructions a lookup, 960 an
     * insertion, a quarter of the submitting thread's; docs/benchmarks.md). */
    if ((b->used + b->tombs + 1) * 2 > b->cap && grow(b))
        return dg_error(DAGGER_ERR_NO_MEMORY, "buffer table: out of memory");
    DG_ASSERT(!probe(b, chunk, space));
    dg_buf_entry_t *e = free_slot(b, chunk, space);
    if (e->chunk == DG_TOMB)
        b->tombs--;
    *e = (dg_buf_entry_t){chunk, space, (uint32_t)home, ptr, bytes};
    b->used++;
    if (DG_TRACE_ON())
        dg_trace_mem(DG_TRM_ALLOC, chunk, space, bytes, home);
    return DAGGER_OK;
}

dagger_status_t dg_bufs_alloc(dg_bufs_t *b, uint64_t chunk, uint32_t space, size_t bytes,
                              int home, int zero, void **ptr)
{
    void *mem;
    dagger_status_t st = dg_bufs_mem_get(b, space, bytes, zero, &mem);
    if (st == DAGGER_OK && (st = dg_bufs_insert(b, chunk, space, home, mem,
                                                dg_bufs_block_size(bytes))) != DAGGER_OK)
        dg_bufs_release(b, space, mem, dg_bufs_block_size(bytes));
    if (st == DAGGER_OK)
        *ptr = mem;
    return st;
}

dg_buf_entry_t *dg_bufs_find(dg_bufs_t *b, uint64_t chunk, uint32_t space)
{
    return probe(b, chunk, space);
}

void *dg_bufs_remove(dg_bufs_t *b, uint64_t chunk, uint32_t space, size_t *bytes)
{
    dg_buf_entry_t *e = probe(b, chunk, space);
    if (!e)
        return NULL;
    void *ptr = e->ptr;
    *bytes = e->bytes;
    e->chunk = DG_TOMB;
    e->ptr = NULL;
    b->used--;
    b->tombs++;
    return ptr;
}

void dg_bufs_release(dg_bufs_t *b, uint32_t space, void *ptr, size_t bytes)
{
    if (!ptr)
        return;
    count_owner(b, space);
    if (DG_TRACE_ON())
        dg_trace_mem(DG_TRM_RELEASE, 0, space, bytes, 0);
    if (space != 0) {
        b->spaces[space].ops->free(&b->spaces[space], ptr, bytes);
        return;
    }
    pthread_mutex_lock(&b->pool_lock);
    struct dg_pool_list *l = b->pool_bytes + bytes <= b->pool_limit ? pool_list(b, bytes, 1) : NULL;
    if (l) {
        dg_pool_block_t *blk = ptr;
        blk->bytes = bytes;
        blk->next = l->head;
        l->head = blk;
        b->pool_bytes += bytes;
        ptr = NULL;
    }
    pthread_mutex_unlock(&b->pool_lock);
    if (ptr)
        dg_host_memspace_ops.free(&b->spaces[0], ptr, bytes);
}

dagger_status_t dg_bufs_copy(dg_bufs_t *b, uint32_t dst_space, void *dst, uint32_t src_space,
                             const void *src, size_t bytes)
{
    uint32_t dev = dst_space ? dst_space : src_space;
    dg_memspace_t *ms = &b->spaces[dev];
    return ms->ops->copy(ms, dst, dst_space == 0, src, src_space == 0, bytes);
}
