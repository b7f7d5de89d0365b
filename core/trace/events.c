/* The hooks of the layers under the executor (the runtime's phases and
 * checks, memory, the workers' idle spans): each builds one event in the
 * calling thread's buffer. The executor's own hooks: core/exec/exec_trace.c. */
#include <string.h>

#include "core/trace/recorder.h"
#include "core/trace/trace.h"

/* Idle spans shorter than this are the worker loop's own breathing, not
 * idleness worth a record. */
#define DG_TRACE_MIN_IDLE_NS 1000u

void dg_trace_codelet(uint32_t id, const char *name)
{
    dg_trf_name_t *e = dg_rec_event(DG_TRE_CODELET, id, sizeof(*e));
    if (e)
        snprintf(e->name, sizeof(e->name), "%s", name);
}

uint64_t dg_trace_phase(dg_trf_phase_t phase, uint64_t region, uint64_t t0, int status)
{
    uint64_t t1 = dg_trace_now();
    dg_trf_phase_ev_t *e = dg_rec_event(DG_TRE_PHASE, phase, sizeof(*e));
    if (e) {
        e->t0 = t0 ? t0 : t1;
        e->t1 = t1;
        e->region = region;
        e->status = status;
    }
    /* Before each wait of a region's end (for its ops, then for the other
     * ranks) the submitting thread's events go to the file: a rank that
     * never comes back still shows what it planned and where it waits
     * (dagger-trace hang relies on it). Twice per region: cheap. */
    if (phase == DG_TRP_REGION_PLAN_END || phase == DG_TRP_REGION_WAIT)
        dg_rec_flush_mine();
    return dg_trace_now();
}

void dg_trace_check(uint32_t kind, uint64_t task, uint32_t codelet, uint64_t hash, uint64_t t0,
                    int status)
{
    uint64_t t1 = dg_trace_now();
    dg_trf_check_t *e = dg_rec_event(DG_TRE_CHECK, kind, sizeof(*e));
    if (!e)
        return;
    *e = (dg_trf_check_t){e->h, t0 ? t0 : t1, t1, task, hash, codelet, status};
}

/* ------------------------------------------------------------ tasks and copies */

void dg_rec_idle_ends(dg_trace_thread_t *th, uint64_t t)
{
    if (!th->idle_since)
        return;
    uint64_t since = th->idle_since;
    th->idle_since = 0;
    if (t < since + DG_TRACE_MIN_IDLE_NS)
        return;
    dg_trf_span_t *e = dg_rec_event(DG_TRE_IDLE, (uint32_t)th->worker, sizeof(*e));
    if (e) {
        e->t0 = since;
        e->t1 = t;
    }
}

void dg_trace_mem(dg_trf_mem_kind_t kind, uint64_t chunk, uint32_t space, size_t bytes, int home)
{
    uint64_t t = dg_trace_now();
    dg_trf_mem_t *e = dg_rec_event(DG_TRE_MEM, kind, sizeof(*e));
    if (e)
        *e = (dg_trf_mem_t){e->h, t, chunk, bytes, space, (uint32_t)home};
}

/* ------------------------------------------------------------ workers */

void dg_trace_worker_idle(int worker)
{
    dg_trace_thread_t *th = dg_rec_thread();
    if (!th || th->idle_since)
        return;
    th->worker = worker;
    th->idle_since = dg_trace_now();
    /* Actor turns are counted, not recorded one by one: written when the
     * worker runs out of work, so a busy worker writes nothing extra. */
    if (th->actor_turns != th->actor_turns_written) {
        dg_trf_count_t *e = dg_rec_event(DG_TRE_ACTOR, (uint32_t)worker, sizeof(*e));
        if (e) {
            e->t = th->idle_since;
            e->count = th->actor_turns;
        }
        th->actor_turns_written = th->actor_turns;
    }
}

void dg_trace_worker_busy(int ran_actor)
{
    dg_trace_thread_t *th = dg_rec_thread();
    if (!th)
        return;
    th->actor_turns += ran_actor != 0;
    if (th->idle_since)
        dg_rec_idle_ends(th, dg_trace_now());
}
