/* Actor messages in the trace: one MSG event per handled message, and the
 * names of actors and message types, so dagger-trace shows each actor as a
 * track and counts messages by type and actor. */
#include <stdio.h>

#include "actors/msg.h"
#include "actors/system.h"
#include "core/trace/recorder.h"
#include "core/trace/trace.h"

void dg_trace_msg(uint32_t actor, const struct dg_msg_hdr *h)
{
    dg_trf_msg_t *e = dg_rec_event(DG_TRE_MSG, h->type, sizeof(*e));
    if (!e)
        return;
    e->t = dg_trace_now();
    e->from_rank = h->from.rank;
    e->from_id = h->from.id;
    e->actor = actor;
    e->size = h->size;
}

void dg_trace_named(uint32_t kind, uint32_t id, const char *name)
{
    dg_trf_name_t *e = dg_rec_event((dg_trf_type_t)kind, id, sizeof(*e));
    if (e)
        snprintf(e->name, sizeof(e->name), "%s", name);
}

static void name_type(void *arg, uint32_t id, const char *name)
{
    (void)arg;
    dg_trace_named(DG_TRE_TYPE_NAME, id, name);
}

static void name_actor(void *arg, uint32_t id, const char *name)
{
    (void)arg;
    dg_trace_named(DG_TRE_ACTOR_NAME, id, name);
}

void dg_trace_name_all(struct dg_act_system *sys)
{
    dg_act_system_each_type(sys, name_type, NULL);
    dg_act_system_each_actor(sys, name_actor, NULL);
}
