/* dagger-trace perfetto: Chrome/Perfetto trace-event JSON. One process per
 * rank; in it a track per worker (tasks, copies), one for the submitting
 * thread (planning, region phases, checks) and one per memory space
 * (transfers; and a counter of the bytes allocated in it). Transfers are
 * flows from the sender's slice to the receiver's, task dependencies flows
 * from a producer to its consumer. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

#define TID_PLANNER 100000
#define TID_SPACE 200000
#define TID_ACTOR 300000

typedef struct json_out {
    FILE *f;
    int first;
    uint64_t flow_id;
} json_out_t;

static void begin_event(json_out_t *j)
{
    fputs(j->first ? "\n  {" : ",\n  {", j->f);
    j->first = 0;
}

static double us(int64_t ns)
{
    return (double)ns / 1000.0;
}

static void name_track(json_out_t *j, int pid, int tid, const char *name, int sort)
{
    begin_event(j);
    fprintf(j->f, "\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"",
            pid, tid);
    tr_put_json(j->f, name);
    fputs("\"}}", j->f);
    begin_event(j);
    fprintf(j->f, "\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_sort_index\","
            "\"args\":{\"sort_index\":%d}}", pid, tid, sort);
}

/* The track a runtime actor shares with what it runs on, or -1. */
static int own_track(const char *name)
{
    if (strncmp(name, "mem:", 4) == 0)
        return TID_SPACE;
    if (strcmp(name, "cpu:submit") == 0)
        return TID_PLANNER;
    if (strncmp(name, "cpu:", 4) == 0)
        return atoi(name + 4) + 1;
    return -1;
}

static void metadata(const tr_trace_t *tr, json_out_t *j)
{
    for (int r = 0; r < tr->nranks; r++) {
        const tr_rank_t *rk = &tr->ranks[r];
        char name[96];
        int pid = r + 1;
        snprintf(name, sizeof(name), "rank %d (%s)", r, rk->hdr.host);
        begin_event(j);
        fprintf(j->f, "\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"", pid);
        tr_put_json(j->f, name);
        fputs("\"}}", j->f);
        begin_event(j);
        fprintf(j->f, "\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":"
                "{\"sort_index\":%d}}", pid, r);
        name_track(j, pid, TID_PLANNER, "planner (submitting thread)", 0);
        for (uint32_t w = 0; w < rk->hdr.nworkers; w++) {
            snprintf(name, sizeof(name), "worker %u", w); /* processor actor cpu:w */
            name_track(j, pid, (int)w + 1, name, 1 + (int)w);
        }
        for (uint32_t s = 0; s < rk->hdr.nspaces; s++) {
            snprintf(name, sizeof(name), "memory space %u (%s)%s", s, s ? "device" : "host",
                     s ? "" : ": memory-space actor mem:host");
            name_track(j, pid, TID_SPACE + (int)s, name, 100000 + (int)s);
        }
        for (size_t a = 0; a < rk->actor_names.n; a++) {
            const tr_name_t *n = TR_AT(&rk->actor_names, tr_name_t, a);
            if (own_track(n->name) >= 0)
                continue; /* processor and memory-space actors: their thread's or space's */
            snprintf(name, sizeof(name), "actor %s (%u)", n->name, n->id);
            name_track(j, pid, TID_ACTOR + (int)a, name, 200000 + (int)a);
        }
    }
}

/* A complete slice; args is a JSON object body (may be empty). */
static void slice(json_out_t *j, int pid, int tid, int64_t t0, int64_t t1, const char *cat,
                  const char *name, const char *args)
{
    begin_event(j);
    fprintf(j->f, "\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"%s\","
            "\"name\":\"", pid, tid, us(t0), us(t1 > t0 ? t1 - t0 : 0), cat);
    tr_put_json(j->f, name);
    fprintf(j->f, "\",\"args\":{%s}}", args);
}

static void flow(json_out_t *j, const char *cat, int pid0, int tid0, int64_t t0, int pid1, int tid1,
                 int64_t t1)
{
    uint64_t id = ++j->flow_id;
    begin_event(j);
    fprintf(j->f, "\"ph\":\"s\",\"id\":%" PRIu64 ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"cat\":\"%s\","
            "\"name\":\"%s\"}", id, pid0, tid0, us(t0), cat, cat);
    begin_event(j);
    fprintf(j->f, "\"ph\":\"f\",\"bp\":\"e\",\"id\":%" PRIu64 ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
            "\"cat\":\"%s\",\"name\":\"%s\"}", id, pid1, tid1, us(t1), cat, cat);
}

static void tasks(const tr_trace_t *tr, json_out_t *j)
{
    char args[160];
    for (uint64_t i = 1; i < tr->ntasks; i++) {
        const tr_task_t *t = &tr->tasks[i];
        if (!t->ran)
            continue;
        snprintf(args, sizeof(args), "\"task\":%" PRIu64 ",\"region\":%" PRIu64 ",\"deps\":%u%s",
                 t->id, t->region, t->ndeps, t->failed ? ",\"region_failed\":true" : "");
        slice(j, t->rank + 1, t->worker + 1, t->t0, t->t1, "task", tr_codelet_name(tr, t->codelet),
              args);
    }
    /* Dependencies: from inside the producer's slice to the consumer's start. */
    for (uint64_t i = 1; i < tr->ntasks; i++) {
        const tr_task_t *t = &tr->tasks[i];
        const uint64_t *deps = tr_task_deps(tr, t);
        for (uint32_t k = 0; t->ran && k < t->ndeps; k++) {
            const tr_task_t *d = deps[k] < tr->ntasks ? &tr->tasks[deps[k]] : NULL;
            if (d && d->ran)
                flow(j, "dependency", d->rank + 1, d->worker + 1, d->t1 > d->t0 ? d->t1 - 1 : d->t0,
                     t->rank + 1, t->worker + 1, t->t0);
        }
    }
}

static void transfers(const tr_trace_t *tr, json_out_t *j)
{
    char name[96], args[200];
    for (size_t i = 0; i < tr->xfers.n; i++) {
        const tr_xfer_t *x = TR_AT(&tr->xfers, tr_xfer_t, i);
        snprintf(args, sizeof(args), "\"tag\":\"%" PRIx64 ":%" PRIu64 "\",\"bytes\":%" PRIu64
                 ",\"chunk\":%" PRIu64, x->tag >> 32, x->tag & 0xffffffffu, x->bytes, x->chunk);
        int have_send = x->send_t0 != TR_NONE && x->send_t1 != TR_NONE;
        int have_recv = x->post != TR_NONE && x->recv_t1 != TR_NONE;
        if (have_send) {
            snprintf(name, sizeof(name), "send to rank %d", x->dst);
            slice(j, x->src + 1, TID_SPACE, x->send_t0, x->send_t1, "transfer", name, args);
        }
        if (have_recv) {
            snprintf(name, sizeof(name), "recv from rank %d", x->src);
            slice(j, x->dst + 1, TID_SPACE, x->post, x->recv_t1, "transfer", name, args);
        }
        if (have_send && have_recv)
            flow(j, "transfer", x->src + 1, TID_SPACE, x->send_t0, x->dst + 1, TID_SPACE,
                 x->recv_t1 > x->post ? x->recv_t1 - 1 : x->post);
    }
}

static const char *phase_name(uint32_t kind)
{
    switch (kind) {
    case DG_TRP_CLOCK_SYNC: return "clock sync";
    case DG_TRP_REGION_BEGIN: return "region begin";
    case DG_TRP_REGION_PLAN_END: return "region end: copy-back planning";
    case DG_TRP_REGION_WAIT: return "region end: waiting";
    case DG_TRP_REGION_AGREE: return "region end: agreeing on the status";
    }
    return "phase";
}

static void rank_tracks(const tr_trace_t *tr, int r, json_out_t *j)
{
    const tr_rank_t *rk = &tr->ranks[r];
    int pid = r + 1;
    char args[96];
    for (size_t i = 0; i < rk->phases.n; i++) {
        const tr_span_t *s = TR_AT(&rk->phases, tr_span_t, i);
        snprintf(args, sizeof(args), "\"region\":%" PRIu64 ",\"status\":%d", s->a, s->status);
        slice(j, pid, TID_PLANNER, s->t0, s->t1, "phase", phase_name(s->kind), args);
    }
    for (size_t i = 0; i < rk->checks.n; i++) {
        const tr_span_t *s = TR_AT(&rk->checks, tr_span_t, i);
        snprintf(args, sizeof(args), "\"task\":%" PRIu64 ",\"status\":%d", s->a, s->status);
        slice(j, pid, TID_PLANNER, s->t0, s->t1, "check", "uniformity check", args);
    }
    for (size_t i = 0; i < rk->copies.n; i++) {
        const tr_span_t *s = TR_AT(&rk->copies, tr_span_t, i);
        snprintf(args, sizeof(args), "\"bytes\":%" PRIu64, s->a);
        slice(j, pid, (int)s->kind + 1, s->t0, s->t1, "copy", "copy", args);
    }
    /* Memory in use per space, as a counter. */
    int64_t *inuse = tr_alloc((rk->hdr.nspaces + 1) * sizeof(int64_t));
    for (size_t i = 0; i < rk->mem.n; i++) {
        const tr_mem_t *m = TR_AT(&rk->mem, tr_mem_t, i);
        uint32_t s = m->space < rk->hdr.nspaces ? m->space : rk->hdr.nspaces;
        inuse[s] += m->delta;
        begin_event(j);
        fprintf(j->f, "\"ph\":\"C\",\"pid\":%d,\"ts\":%.3f,\"name\":\"memory space %u in use\","
                "\"args\":{\"bytes\":%" PRId64 "}}", pid, us(m->t), s, inuse[s]);
    }
    free(inuse);
}

/* The track of actor id on rank r: its memory space's for the host
 * memory-space actor, its worker's for a CPU processor actor (the
 * submitting thread's for cpu:submit), its own otherwise. */
static int actor_tid(const tr_rank_t *rk, uint32_t id)
{
    for (size_t a = 0; a < rk->actor_names.n; a++) {
        const tr_name_t *n = TR_AT(&rk->actor_names, tr_name_t, a);
        if (n->id == id)
            return own_track(n->name) >= 0 ? own_track(n->name) : TID_ACTOR + (int)a;
    }
    return TID_ACTOR + (int)rk->actor_names.n; /* unnamed */
}

/* Every handled message: an instant on the handling actor's track. */
static void messages(const tr_trace_t *tr, int r, json_out_t *j)
{
    const tr_rank_t *rk = &tr->ranks[r];
    for (size_t i = 0; i < rk->msgs.n; i++) {
        const tr_msg_t *m = TR_AT(&rk->msgs, tr_msg_t, i);
        begin_event(j);
        fprintf(j->f, "\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
                "\"cat\":\"message\",\"name\":\"", r + 1, actor_tid(rk, m->actor), us(m->t));
        tr_put_json(j->f, tr_type_name(tr, m->type));
        fprintf(j->f, "\",\"args\":{\"from_rank\":%d,\"from_actor\":%u}}", m->from_rank,
                m->from_id);
    }
}

static void planning(const tr_trace_t *tr, json_out_t *j)
{
    /* Every rank plans every task; each task's planning shows on the rank
     * that runs it (the summary has every rank's totals). */
    char name[96], args[64];
    for (uint64_t i = 1; i < tr->ntasks; i++) {
        const tr_task_t *t = &tr->tasks[i];
        if (t->planned_at == TR_NONE)
            continue;
        snprintf(name, sizeof(name), "plan %s", tr_codelet_name(tr, t->codelet));
        snprintf(args, sizeof(args), "\"task\":%" PRIu64, t->id);
        slice(j, t->rank + 1, TID_PLANNER, t->plan_t0, t->planned_at, "plan", name, args);
    }
}

int tr_cmd_perfetto(const tr_trace_t *tr, FILE *out)
{
    json_out_t j = {out, 1, 0};
    fprintf(out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"job\":\"%016" PRIx64 "\","
            "\"ranks\":%d},\n\"traceEvents\":[", tr->job_id, tr->nranks);
    metadata(tr, &j);
    tasks(tr, &j);
    transfers(tr, &j);
    for (int r = 0; r < tr->nranks; r++) {
        rank_tracks(tr, r, &j);
        messages(tr, r, &j);
    }
    planning(tr, &j);
    fputs("\n]}\n", out);
    return 0;
}
