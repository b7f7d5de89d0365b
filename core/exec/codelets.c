/* The executor's codelet table (see exec.h).
 *
 * Workers look codelets up for every task while the submitting thread may
 * register more (the array layer registers its codelets on first use, and
 * again, idempotently, on every later use). ThreadSanitizer found the old
 * table rewritten in place and reallocated under running workers. Now:
 *  - a published slot never changes: its fields are written first and its
 *    id is stored last with release order (readers load it with acquire);
 *  - a registration identical to a published one writes nothing;
 *  - growing, or changing a published codelet's implementations, builds a
 *    new table and publishes it whole; the old one is kept (readers may
 *    hold entries of it) until the executor is destroyed. Growth doubles,
 *    so the tables kept for growth total less than the current one. */
#include "core/base/alloc.h"
#include "core/exec/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/status_internal.h"

#define DG_CODELET_SLOTS0 256

static dg_exec_codelets_t *table_new(size_t nslots, dg_exec_codelets_t *older)
{
    dg_exec_codelets_t *t = dg_calloc(1, sizeof(*t) + nslots * sizeof(t->slot[0]));
    if (t) {
        t->nslots = nslots;
        t->older = older;
    }
    return t;
}

static dg_exec_codelet_t *find(dg_exec_codelets_t *t, uint32_t id)
{
    for (size_t j = id & (t->nslots - 1);; j = (j + 1) & (t->nslots - 1)) {
        uint32_t have = atomic_load_explicit(&t->slot[j].id, memory_order_acquire);
        if (have == id || !have)
            return &t->slot[j];
    }
}

/* Fills the empty slot of id, then publishes it. */
static void put(dg_exec_codelets_t *t, uint32_t id, const char *name, dagger_impl_fn cpu,
                dagger_impl_fn cuda, dagger_impl_fn hip)
{
    dg_exec_codelet_t *c = find(t, id);
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->cpu = cpu;
    c->cuda = cuda;
    c->hip = hip;
    t->used++;
    atomic_store_explicit(&c->id, id, memory_order_release);
}

int dg_exec_codelets_init(dg_exec_t *ex)
{
    pthread_mutex_init(&ex->codelet_lock, NULL);
    dg_exec_codelets_t *t = table_new(DG_CODELET_SLOTS0, NULL);
    atomic_init(&ex->codelets, t);
    return t ? 0 : -1;
}

void dg_exec_codelets_cleanup(dg_exec_t *ex)
{
    for (dg_exec_codelets_t *t = atomic_load(&ex->codelets), *next; t; t = next) {
        next = t->older;
        free(t);
    }
    pthread_mutex_destroy(&ex->codelet_lock);
}

/* A copy of t with room for one more, without the entry of skip (0: none). */
static dg_exec_codelets_t *table_copy(dg_exec_codelets_t *t, uint32_t skip)
{
    size_t nslots = (t->used + 1) * 2 > t->nslots ? t->nslots * 2 : t->nslots;
    dg_exec_codelets_t *nt = table_new(nslots, t);
    for (size_t i = 0; nt && i < t->nslots; i++) {
        const dg_exec_codelet_t *c = &t->slot[i];
        uint32_t id = atomic_load_explicit(&c->id, memory_order_relaxed);
        if (id && id != skip)
            put(nt, id, c->name, c->cpu, c->cuda, c->hip);
    }
    return nt;
}

dagger_status_t dg_exec_codelet_add(dg_exec_t *ex, uint32_t id, const char *name,
                                    dagger_impl_fn cpu, dagger_impl_fn cuda, dagger_impl_fn hip)
{
    dagger_status_t st = DAGGER_OK;
    pthread_mutex_lock(&ex->codelet_lock);
    dg_exec_codelets_t *t = atomic_load_explicit(&ex->codelets, memory_order_relaxed);
    dg_exec_codelet_t *c = find(t, id);
    int known = atomic_load_explicit(&c->id, memory_order_relaxed) == id;
    if (known && c->cpu == cpu && c->cuda == cuda && c->hip == hip && !strcmp(c->name, name)) {
        pthread_mutex_unlock(&ex->codelet_lock);
        return DAGGER_OK; /* registered again, the same: nothing changes */
    }
    if (!known && (t->used + 1) * 2 <= t->nslots) {
        put(t, id, name, cpu, cuda, hip);
    } else {
        dg_exec_codelets_t *nt = table_copy(t, known ? id : 0);
        if (nt) {
            put(nt, id, name, cpu, cuda, hip);
            atomic_store_explicit(&ex->codelets, nt, memory_order_release);
        } else {
            st = dg_error(DAGGER_ERR_NO_MEMORY, "codelet table: out of memory");
        }
    }
    pthread_mutex_unlock(&ex->codelet_lock);
    return st;
}

const dg_exec_codelet_t *dg_exec_codelet(const dg_exec_t *ex, uint32_t id)
{
    dg_exec_codelets_t *t = atomic_load_explicit(&((dg_exec_t *)ex)->codelets,
                                                 memory_order_acquire);
    dg_exec_codelet_t *c = find(t, id);
    return atomic_load_explicit(&c->id, memory_order_acquire) == id ? c : NULL;
}
