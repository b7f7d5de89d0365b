/* Read-only questions the runtime asks the planner about live chunks. */
#include "core/plan/planner_internal.h"
#include "core/status_internal.h"

dagger_status_t dg_plan_chunk_owner(const dg_plan_t *p, uint64_t id, int32_t *owner)
{
    const dg_plan_chunk_t *c = dg_plan_chunk_get(p, id);
    if (!c)
        return dg_error(DAGGER_ERR_NOT_FOUND, "chunk %llu is unknown or freed",
                        (unsigned long long)id);
    *owner = c->owner;
    return DAGGER_OK;
}
