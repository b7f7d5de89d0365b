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

/* At most this many deleted futures are kept for reuse (a few KiB, in the
 * planner's allocator like every other structure: dg_plan_destroy frees them
 * with it). */
#define DG_PLAN_SPARE_FUTURES 64

/* A future's chunk is one contiguous span, current at its home alone. A
 * kept one (dg_plan_chunk_delete) gives its storage for those two spans and
 * for its currency list, so that a future made and freed with every task of
 * a value tree costs no allocation: new and delete were about 1000 of such a
 * task's 3.4k instructions of planning, on every rank; with a kept chunk
 * 340. What it makes is what the general path below makes of the same
 * geometry (test_chunks.c compares the two). */
static dg_plan_chunk_t *future_from_spare(dg_plan_t *p, uint64_t id, int32_t owner,
                                          uint32_t home_space, const dg_plan_geom_t *g)
{
    dg_plan_chunk_t *c = p->spare_futures;
    p->spare_futures = c->tnext;
    p->nspare_futures--;
    dg_plan_span_t *all = c->all.v, *home = c->cur[0].cur.v;
    uint32_t all_cap = c->all.cap, home_cap = c->cur[0].cur.cap, capcur = c->capcur;
    dg_plan_cur_t *cur = c->cur;
    memset(c, 0, sizeof(*c));
    c->id = id;
    c->owner = owner;
    c->home_space = home_space;
    c->is_future = 1;
    c->g = *g;
    all[0] = (dg_plan_span_t){0, g->dims[0]};
    c->all = (dg_plan_spans_t){all, 1, all_cap};
    dg_plan_hist_init(&c->logical);
    home[0] = all[0];
    cur[0] = (dg_plan_cur_t){{owner, home_space}, {home, 1, home_cap}};
    c->cur = cur;
    c->ncur = 1;
    c->capcur = capcur;
    if (dg_plan_idmap_put(&p->mem, &p->chunks, c->id, c)) {
        p->mem.failed = 1;
        return c;
    }
    p->st.live_chunks++;
    return c;
}

/* A future whose storage can be kept: one currency entry, one span each. */
static int future_keepable(const dg_plan_t *p, const dg_plan_chunk_t *c)
{
    return c->is_future && p->nspare_futures < DG_PLAN_SPARE_FUTURES && c->ncur >= 1 &&
           c->all.cap >= 1 && c->cur[0].cur.cap >= 1;
}

dg_plan_chunk_t *dg_plan_chunk_new(dg_plan_t *p, int32_t owner, uint32_t home_space,
                                   const dg_plan_geom_t *g, int is_future)
{
    dg_plan_chunk_t *c = dg_plan_chunk_make(p, p->next_chunk + 1, owner, home_space, g, is_future);
    if (c)
        p->next_chunk++;
    return c;
}

dg_plan_chunk_t *dg_plan_chunk_make(dg_plan_t *p, uint64_t id, int32_t owner,
                                    uint32_t home_space, const dg_plan_geom_t *g, int is_future)
{
    if (is_future && p->spare_futures && g->ndims == 1 && g->strides[0] == 1 && g->dims[0])
        return future_from_spare(p, id, owner, home_space, g);
    dg_plan_chunk_t *c = dg_plan_mem_alloc(&p->mem, sizeof(*c));
    if (!c)
        return NULL;
    memset(c, 0, sizeof(*c));
    c->id = id;
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
    int keep = future_keepable(p, c);
    for (uint32_t i = keep; i < c->ncur; i++)
        dg_plan_spans_release(&p->mem, &c->cur[i].cur);
    for (uint32_t i = 0; i < c->nbufs; i++)
        dg_plan_hist_clear(&p->hc, &c->bufs[i].hist);
    dg_plan_mem_free(&p->mem, c->bufs, c->capbufs * sizeof(*c->bufs));
    p->st.live_chunks--;
    if (keep) {
        c->tnext = p->spare_futures;
        p->spare_futures = c;
        p->nspare_futures++;
        return;
    }
    dg_plan_mem_free(&p->mem, c->cur, c->capcur * sizeof(*c->cur));
    dg_plan_spans_release(&p->mem, &c->all);
    dg_plan_mem_free(&p->mem, c, sizeof(*c));
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
