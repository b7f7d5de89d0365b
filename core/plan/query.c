/* Read-only questions the runtime asks the planner about live chunks. */
#include "core/plan/planner_internal.h"
#include "core/status_internal.h"

static const dg_plan_chunk_t *live(const dg_plan_t *p, uint64_t id)
{
    const dg_plan_chunk_t *c = dg_plan_chunk_get(p, id);
    if (!c)
        dg_error(DAGGER_ERR_NOT_FOUND, "chunk %llu is unknown or freed", (unsigned long long)id);
    return c;
}

dagger_status_t dg_plan_chunk_owner(const dg_plan_t *p, uint64_t id, int32_t *owner)
{
    const dg_plan_chunk_t *c = live(p, id);
    if (c)
        *owner = c->owner;
    return c ? DAGGER_OK : DAGGER_ERR_NOT_FOUND;
}

dagger_status_t dg_plan_chunk_writer(const dg_plan_t *p, uint64_t id, uint64_t *task)
{
    const dg_plan_chunk_t *c = live(p, id);
    if (c)
        *task = c->writer;
    return c ? DAGGER_OK : DAGGER_ERR_NOT_FOUND;
}
