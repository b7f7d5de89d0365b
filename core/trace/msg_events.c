/* Actor messages in the trace: one MSG event per handled message, and the
 * names of actors and message types, so dagger-trace shows each actor as a
 * track and counts messages by type and actor. */
#include <stdio.h>

#include "core/trace/recorder.h"
#include "core/trace/trace.h"

void dg_trace_msg(uint32_t actor, uint32_t type, int32_t from_rank, uint32_t from_id,
                  uint32_t size)
{
    dg_trf_msg_t *e = dg_rec_event(DG_TRE_MSG, type, sizeof(*e));
    if (!e)
        return;
    e->t = dg_trace_now();
    e->from_rank = from_rank;
    e->from_id = from_id;
    e->actor = actor;
    e->size = size;
}

void dg_trace_named(uint32_t kind, uint32_t id, const char *name)
{
    dg_trf_name_t *e = dg_rec_event((dg_trf_type_t)kind, id, sizeof(*e));
    if (e)
        snprintf(e->name, sizeof(e->name), "%s", name);
}
