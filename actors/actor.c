/* Actor objects: allocation and the sorted handler table. */
#include "actors/actor.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/common.h"

static int handler_cmp(const void *a, const void *b)
{
    uint32_t x = ((const dagger_handler_t *)a)->type, y = ((const dagger_handler_t *)b)->type;
    return x < y ? -1 : x > y;
}

dg_actor_t *dg_actor_new(const dagger_actor_desc_t *desc)
{
    dg_actor_t *a = dg_aligned_alloc(DG_CACHELINE, (sizeof(*a) + desc->nhandlers * sizeof(a->handlers[0]) +
                                                 DG_CACHELINE - 1) / DG_CACHELINE * DG_CACHELINE);
    if (!a)
        return NULL;
    memset(a, 0, sizeof(*a));
    dg_mpsc_init(&a->mbox);
    atomic_init(&a->rq.next, NULL);
    atomic_init(&a->scheduled, 0);
    atomic_init(&a->refs, 0);
    atomic_init(&a->state, DG_ACTOR_RUNNING);
    atomic_init(&a->joining, 0);
    a->pinned = desc->pin;
    a->worker = desc->pin ? desc->worker : -1;
    a->user_state = desc->state;
    a->on_stop = desc->on_stop;
    snprintf(a->name, sizeof(a->name), "%s", desc->name ? desc->name : "actor");
    a->nhandlers = desc->nhandlers;
    if (desc->nhandlers) {
        memcpy(a->handlers, desc->handlers, desc->nhandlers * sizeof(a->handlers[0]));
        qsort(a->handlers, a->nhandlers, sizeof(a->handlers[0]), handler_cmp);
    }
    return a;
}

void dg_actor_free(dg_actor_t *a)
{
    free(a);
}

dagger_handler_fn dg_actor_handler(const dg_actor_t *a, uint32_t type)
{
    size_t lo = 0, hi = a->nhandlers;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint32_t t = a->handlers[mid].type;
        if (t == type)
            return a->handlers[mid].fn;
        if (t < type)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
