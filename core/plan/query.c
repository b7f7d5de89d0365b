/* Questions the runtime asks the planner about live chunks, and the one
 * request fetch makes of it (bring a chunk home inside a region). */
#include "core/plan/planner_internal.h"
#include "core/plan/replay.h"
#include "core/plan/uhash.h"
#include "core/base/status_internal.h"

static const dg_plan_chunk_t *live(const dg_plan_t *p, uint64_t id)
{
    const dg_plan_chunk_t *c = dg_plan_chunk_get(p, id);
    if (!c)
        dg_error(DAGGER_ERR_NOT_FOUND, "chunk %llu is unknown or freed", (unsigned long long)id);
    return c;
}

dagger_status_t dg_plan_chunk_owner(const dg_plan_t *p, uint64_t id, int32_t *owner)
{
    if (!dg_plan_chunk_get(p, id) && dg_plan_rp_vgeom(p, id, owner))
        return DAGGER_OK; /* a replayed future without its chunk */
    const dg_plan_chunk_t *c = live(p, id);
    if (c)
        *owner = c->owner;
    return c ? DAGGER_OK : DAGGER_ERR_NOT_FOUND;
}

dagger_status_t dg_plan_chunk_writer(dg_plan_t *p, uint64_t id, uint64_t *task)
{
    if (dg_plan_rp_settle(p, 0)) /* a replayed region's writers are set at its end */
        return DAGGER_ERR_NO_MEMORY;
    const dg_plan_chunk_t *c = live(p, id);
    if (c)
        *task = c->writer;
    return c ? DAGGER_OK : DAGGER_ERR_NOT_FOUND;
}

void dg_plan_taint(dg_plan_t *p, uint64_t first, uint32_t tag)
{
    /* Right after the region ended, a chunk written by a task >= first is one
     * whose last writer is >= first (task ids only grow). */
    dg_plan_rp_settle(p, 1);
    for (uint32_t i = 0; i < p->chunks.cap; i++) {
        dg_plan_chunk_t *c = p->chunks.keys[i] ? p->chunks.vals[i] : NULL;
        if (c && c->writer >= first) {
            c->taint = tag;
            p->tainted = 1;
        }
    }
}

dagger_status_t dg_plan_chunk_taint(const dg_plan_t *p, uint64_t id, uint32_t *tag)
{
    if (!dg_plan_chunk_get(p, id) && dg_plan_rp_vgeom(p, id, NULL)) {
        *tag = 0; /* a replayed future without its chunk: made in this region, untainted */
        return DAGGER_OK;
    }
    const dg_plan_chunk_t *c = live(p, id);
    if (c)
        *tag = c->taint;
    return c ? DAGGER_OK : DAGGER_ERR_NOT_FOUND;
}

dagger_status_t dg_plan_chunk_sync_home(dg_plan_t *p, uint64_t id)
{
    DG_CHECK_ARG(p, "dg_plan_chunk_sync_home: NULL planner");
    if (p->mem.failed)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan_chunk_sync_home: the planner ran out of "
                        "memory earlier");
    dg_plan_chunk_t *c = dg_plan_chunk_get(p, id);
    if (!c && !dg_plan_rp_vgeom(p, id, NULL)) /* a replayed future: chunkless until settled */
        return dg_error(DAGGER_ERR_NOT_FOUND, "chunk %llu is unknown or freed",
                        (unsigned long long)id);
    if (!p->in_region)
        return DAGGER_OK; /* region end brought everything home */
    if (dg_plan_rp_settle(p, 1))
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan_chunk_sync_home: the planner state is lost");
    if (!(c = dg_plan_chunk_again(p, id, __func__)))
        return DAGGER_ERR_INTERNAL;
    p->shash = dg_plan_hmix(dg_plan_hmix(p->shash, 0x5e7c40u), id);
    dg_plan_chunk_touch(p, c);
    dg_plan_make_current(p, c, (dg_plan_loc_t){c->owner, c->home_space}, &c->all);
    return p->mem.failed ? dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan_chunk_sync_home: out of memory")
                         : DAGGER_OK;
}
