/* The chunk table: every rank holds every chunk's metadata and currency;
 * only the owner's executor holds its bytes. Chunk ids come from a counter
 * that advances identically on every rank. */
#include <string.h>

#include "core/base/status_internal.h"
#include "core/plan/planner_internal.h"

dg_plan_chunk_t *dg_plan_chunk_get(const dg_plan_t *p, uint64_t id)
{
    return id ? dg_plan_idmap_get(&p->chunks, id) : NULL;
}

dg_plan_chunk_t *dg_plan_chunk_again(dg_plan_t *p, uint64_t id, const char *fn)
{
    dg_plan_chunk_t *c = dg_plan_chunk_get(p, id);
    if (!c) {
        p->mem.failed = 1;
        dg_error(DAGGER_ERR_INTERNAL, "%s: chunk %llu was not made again when the region caught "
                 "up; the planner state is lost", fn, (unsigned long long)id);
    }
    return c;
}

dg_plan_chunk_t *dg_plan_chunk_new(dg_plan_t *p, int32_t owner, uint32_t home_space,
                                   const dg_plan_geom_t *g, int is_future)
{
    dg_plan_chunk_t *c = dg_plan_mem_alloc(&p->mem, sizeof(*c));
    if (!c)
        return NULL;
    memset(c, 0, sizeof(*c));
    c->id = ++p->next_chunk;
    c->owner = owner;
    c->home_space = home_space;
    c->is_future = (uint32_t)is_future;
    c->g = *g;
    dg_plan_view_t full;
    dg_plan_view_full(g, c->id, &full);
    dg_plan_view_spans(&p->mem, g, &full, &c->all);
    dg_plan_spans_shrink(&p->mem, &c->all);
    dg_plan_hist_init(&c->logical);
    dg_plan_cur_t *home = dg_plan_cur_get(p, c, (dg_plan_loc_t){owner, home_space});
    if (home)
        dg_plan_spans_copy(&p->mem, &home->cur, &c->all);
    if (dg_plan_idmap_put(&p->mem, &p->chunks, c->id, c)) {
        p->mem.failed = 1;
        return c;
    }
    p->st.live_chunks++;
    return c;
}

void dg_plan_chunk_touch(dg_plan_t *p, dg_plan_chunk_t *c)
{
    if (c->touched)
        return;
    c->touched = 1;
    c->tnext = NULL;
    c->tprev = p->touched_tail;
    if (p->touched_tail)
        p->touched_tail->tnext = c;
    else
        p->touched_head = c;
    p->touched_tail = c;
}

void dg_plan_chunk_untouch(dg_plan_t *p, dg_plan_chunk_t *c)
{
    if (!c->touched)
        return;
    if (c->tprev)
        c->tprev->tnext = c->tnext;
    else
        p->touched_head = c->tnext;
    if (c->tnext)
        c->tnext->tprev = c->tprev;
    else
        p->touched_tail = c->tprev;
    c->tprev = c->tnext = NULL;
    c->touched = 0;
}

void dg_plan_chunk_delete(dg_plan_t *p, dg_plan_chunk_t *c)
{
    dg_plan_chunk_untouch(p, c);
    dg_plan_idmap_del(&p->chunks, c->id);
    dg_plan_hist_clear(&p->hc, &c->logical);
    for (uint32_t i = 0; i < c->ncur; i++)
        dg_plan_spans_release(&p->mem, &c->cur[i].cur);
    for (uint32_t i = 0; i < c->nbufs; i++)
        dg_plan_hist_clear(&p->hc, &c->bufs[i].hist);
    dg_plan_mem_free(&p->mem, c->cur, c->capcur * sizeof(*c->cur));
    dg_plan_mem_free(&p->mem, c->bufs, c->capbufs * sizeof(*c->bufs));
    dg_plan_spans_release(&p->mem, &c->all);
    dg_plan_mem_free(&p->mem, c, sizeof(*c));
    p->st.live_chunks--;
}

int dg_plan_loc_is_home(const dg_plan_chunk_t *c, dg_plan_loc_t loc)
{
    return loc.rank == c->owner && loc.space == c->home_space;
}

dg_plan_cur_t *dg_plan_cur_find(dg_plan_chunk_t *c, dg_plan_loc_t loc)
{
    for (uint32_t i = 0; i < c->ncur; i++)
        if (c->cur[i].loc.rank == loc.rank && c->cur[i].loc.space == loc.space)
            return &c->cur[i];
    return NULL;
}

dg_plan_cur_t *dg_plan_cur_get(dg_plan_t *p, dg_plan_chunk_t *c, dg_plan_loc_t loc)
{
    dg_plan_cur_t *cu = dg_plan_cur_find(c, loc);
    if (cu)
        return cu;
    void *nv = dg_plan_mem_grow(&p->mem, c->cur, &c->capcur, c->ncur, sizeof(*c->cur));
    if (!nv)
        return NULL;
    c->cur = nv;
    cu = &c->cur[c->ncur++];
    cu->loc = loc;
    dg_plan_spans_init(&cu->cur);
    return cu;
}
