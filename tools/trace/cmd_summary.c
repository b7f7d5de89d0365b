/* dagger-trace summary: where the time of a run went. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "commands.h"

#define TOP_WAITS 10

static double wall_ns(const tr_trace_t *tr)
{
    return (double)(tr->t_end - tr->t_begin);
}

/* The ranks on rank r's host: their processors (each rank's workers and its
 * submitting thread, the threads that run tasks or plan) and the host's
 * online CPUs; 0 CPUs when job.meta does not say. Returns the rank count. */
static int host_load(const tr_trace_t *tr, int r, uint32_t *threads, uint32_t *online)
{
    int n = 0, unknown = 0;
    *threads = *online = 0;
    for (int q = 0; q < tr->nranks; q++) {
        const tr_rank_t *rk = &tr->ranks[q];
        if (strncmp(rk->hdr.host, tr->ranks[r].hdr.host, sizeof(rk->hdr.host)) != 0)
            continue;
        n++;
        *threads += rk->hdr.nworkers;
        unknown |= !rk->meta_online;
        if (rk->meta_online > *online)
            *online = rk->meta_online;
    }
    if (unknown)
        *online = 0;
    return n;
}

static int oversubscribed(const tr_trace_t *tr, int r)
{
    uint32_t threads, online;
    if (r < 0 || r >= tr->nranks) /* a peer named by a damaged file */
        return 0;
    host_load(tr, r, &threads, &online);
    return online && threads > online;
}

/* One line per host: its ranks' threads against its CPUs. Where there are
 * more, every time below includes waits for a CPU, which no event records. */
static void print_hosts(const tr_trace_t *tr, FILE *out)
{
    for (int r = 0; r < tr->nranks; r++) {
        int first = 1;
        for (int q = 0; q < r && first; q++)
            first = strncmp(tr->ranks[q].hdr.host, tr->ranks[r].hdr.host,
                            sizeof(tr->ranks[r].hdr.host)) != 0;
        uint32_t threads, online;
        int n = host_load(tr, r, &threads, &online);
        if (!first || !online)
            continue;
        fprintf(out, "  host %s: %d rank%s, %u threads that run tasks or plan (workers and "
                "submitting threads), %u online CPUs", tr->ranks[r].hdr.host, n, n == 1 ? "" : "s",
                threads, online);
        if (threads > online)
            fprintf(out, ": %.1f such threads a CPU, so the times below include time they "
                    "waited for one (a task that started late; a transfer \"in flight\" while "
                    "the receiving rank's worker 0, which drives its transport, was off its CPU)",
                    (double)threads / online);
        fputc('\n', out);
    }
}

static void print_ranks(const tr_trace_t *tr, FILE *out)
{
    int complete = 1;
    for (int r = 0; r < tr->nranks; r++)
        complete &= tr->ranks[r].complete;
    fprintf(out, "Trace %s: %d rank%s, job %016llx%s\n", tr->dir, tr->nranks,
            tr->nranks == 1 ? "" : "s", (unsigned long long)tr->job_id,
            complete ? "" : " (some ranks did not end normally)");
    for (int r = 0; r < tr->nranks; r++) {
        const tr_rank_t *rk = &tr->ranks[r];
        char a[32], b[32];
        fprintf(out, "  rank %d: host %s, pid %u, %u processors (workers, last: the submitting "
                "thread), clock offset %s%s (+- %s), %llu "
                "events%s", r, rk->hdr.host, rk->hdr.pid, rk->hdr.nworkers,
                rk->hdr.clock_offset_ns < 0 ? "-" : "",
                tr_fmt_time(a, (double)llabs(rk->hdr.clock_offset_ns)),
                tr_fmt_time(b, (double)rk->hdr.clock_uncert_ns), (unsigned long long)rk->events,
                rk->complete ? "" : ", no end record (the run did not finish)");
        if (rk->dropped)
            fprintf(out, ", %llu events lost", (unsigned long long)rk->dropped);
        if (rk->meta_cpus)
            fprintf(out, ", %u CPUs to run on", rk->meta_cpus);
        fputc('\n', out);
    }
    print_hosts(tr, out);
    char w[32];
    fprintf(out, "Wall time: %s (first region begin to last region end)\n",
            tr_fmt_time(w, wall_ns(tr)));
    fprintf(out, "Tasks: %llu planned, %llu ran\n", (unsigned long long)tr->planned,
            (unsigned long long)tr->ran);
}

static void print_codelets(const tr_trace_t *tr, FILE *out)
{
    size_t n = tr->codelets.n + 1; /* the last: codelets without a name record */
    tr_cl_times_t *s = tr_alloc(n * sizeof(*s));
    tr_codelet_times(tr, s);
    double busy = 0;
    for (size_t k = 0; k < n; k++)
        busy += s[k].total;
    fprintf(out, "Time by codelet:\n  %-20s %8s %12s %12s %12s %12s %12s %7s\n", "codelet",
            "tasks", "total", "mean", "median", "p90", "max", "share");
    for (size_t k = 0; k < n; k++) {
        if (!s[k].count)
            continue;
        const char *name = "?";
        for (size_t i = 0; i < tr->codelets.n; i++)
            if (TR_AT(&tr->codelets, tr_codelet_t, i)->index == k)
                name = TR_AT(&tr->codelets, tr_codelet_t, i)->name;
        char a[32], b[32], c[32], d[32], e[32];
        fprintf(out, "  %-20s %8llu %12s %12s %12s %12s %12s %6.1f%%\n", name,
                (unsigned long long)s[k].count, tr_fmt_time(a, s[k].total),
                tr_fmt_time(b, s[k].total / (double)s[k].count), tr_fmt_time(c, s[k].median),
                tr_fmt_time(d, s[k].p90), tr_fmt_time(e, s[k].max),
                busy > 0 ? 100 * s[k].total / busy : 0);
    }
    free(s);
}

/* Time of a worker's spans within the wall time. */
static double sum_spans(const tr_trace_t *tr, const tr_vec_t *v, int worker)
{
    double sum = 0;
    for (size_t i = 0; i < v->n; i++) {
        const tr_span_t *s = TR_AT(v, tr_span_t, i);
        int64_t t0 = s->t0 > tr->t_begin ? s->t0 : tr->t_begin;
        int64_t t1 = s->t1 < tr->t_end ? s->t1 : tr->t_end;
        if ((int)s->kind == worker && t1 > t0)
            sum += (double)(t1 - t0);
    }
    return sum;
}

static void print_processors(const tr_trace_t *tr, FILE *out)
{
    fprintf(out, "Processors (utilisation = task time / wall time):\n");
    double wall = wall_ns(tr);
    for (int r = 0; r < tr->nranks; r++) {
        const tr_rank_t *rk = &tr->ranks[r];
        for (uint32_t w = 0; w < rk->hdr.nworkers; w++) {
            double busy = 0;
            uint64_t n = 0, turns = 0;
            for (uint64_t i = 1; i < tr->ntasks; i++) {
                const tr_task_t *t = &tr->tasks[i];
                if (t->ran && t->rank == r && t->worker == (int32_t)w) {
                    busy += (double)(t->t1 - t->t0);
                    n++;
                }
            }
            for (size_t i = 0; i < rk->actors.n; i++) {
                const tr_count_t *c = TR_AT(&rk->actors, tr_count_t, i);
                if (c->worker == (int32_t)w && c->count > turns)
                    turns = c->count;
            }
            double copies = sum_spans(tr, &rk->copies, (int)w), other = wall - busy - copies;
            char a[32], b[32], c[32], d[32];
            /* A worker that slept since before the recording began records no
             * idle span: "without work" is the wall time it ran nothing. */
            fprintf(out, "  rank %d worker %u: %llu tasks, busy %s (%.1f%%), copies %s, without "
                    "work %s (idle spans recorded: %s), actor turns %llu\n", r, w,
                    (unsigned long long)n, tr_fmt_time(a, busy), wall > 0 ? 100 * busy / wall : 0,
                    tr_fmt_time(b, copies), tr_fmt_time(c, other > 0 ? other : 0),
                    tr_fmt_time(d, sum_spans(tr, &rk->idle, (int)w)), (unsigned long long)turns);
        }
    }
}

/* Tasks running at once per rank, while its submitting thread submits and
 * while it waits at region ends (tr_occupancy). */
static void print_occupancy(const tr_trace_t *tr, FILE *out)
{
    static const char *const part[2] = {"while submitting", "while waiting at region ends"};
    fprintf(out, "Tasks running at once, by what the submitting thread was doing (mean number "
                 "running; none: share of the time with no task of the rank running; "
                 "\"submitting\" is all but its region-end waits, the program's own code "
                 "between regions included):\n");
    for (int r = 0; r < tr->nranks; r++) {
        tr_occupancy_t o;
        tr_occupancy(tr, r, &o);
        const tr_rank_t *rk = &tr->ranks[r];
        fprintf(out, "  rank %d (%u processors", r, rk->hdr.nworkers);
        if (rk->meta_cpus)
            fprintf(out, ", %u CPUs to run on", rk->meta_cpus);
        fprintf(out, "):");
        for (int k = 0; k < 2; k++) {
            char a[32];
            fprintf(out, "%s %s %s: %.2f running, none %.1f%%", k ? ";" : "", part[k],
                    tr_fmt_time(a, o.ns[k]), o.ns[k] > 0 ? o.task_ns[k] / o.ns[k] : 0,
                    o.ns[k] > 0 ? 100 * o.none_ns[k] / o.ns[k] : 0);
        }
        fputc('\n', out);
    }
}

/* Each rank's regions against their submission (tr_submit_share). */
static void print_submission(const tr_trace_t *tr, FILE *out)
{
    fprintf(out, "Regions against their submission (per region with tasks on the rank: the time "
                 "from its begin to its region-end wait, in which the submitting thread submits "
                 "and the program's own code in the region runs, over the time to the wait's "
                 "end):\n");
    for (int r = 0; r < tr->nranks; r++) {
        tr_submit_share_t s;
        tr_submit_share(tr, r, &s);
        if (!s.nregions) {
            fprintf(out, "  rank %d: no region with its begin, its wait and tasks run here\n", r);
            continue;
        }
        double done = s.tasks ? (double)s.ended / (double)s.tasks : 0;
        fprintf(out, "  rank %d: %llu regions, before the region-end wait a median %.1f%% of a "
                "region's time; %llu of its %llu tasks (%.1f%%) ended before that wait began",
                r, (unsigned long long)s.nregions, 100 * s.share, (unsigned long long)s.ended,
                (unsigned long long)s.tasks, 100 * done);
        if (s.share >= 0.5 && done >= 0.5)
            fprintf(out, ": the submitting thread set the pace (its planning, its CPU time, or "
                         "the program's own code between submissions)");
        fputc('\n', out);
    }
}

static void print_transfers(const tr_trace_t *tr, FILE *out)
{
    int n = tr->nranks;
    uint64_t *msgs = tr_alloc((size_t)n * (size_t)n * sizeof(uint64_t));
    uint64_t *bytes = tr_alloc((size_t)n * (size_t)n * sizeof(uint64_t));
    double *time = tr_alloc((size_t)n * (size_t)n * sizeof(double));
    uint64_t tm = 0, tb = 0;
    for (size_t i = 0; i < tr->xfers.n; i++) {
        const tr_xfer_t *x = TR_AT(&tr->xfers, tr_xfer_t, i);
        if (x->src < 0 || x->dst < 0 || x->src >= n || x->dst >= n)
            continue;
        size_t k = (size_t)x->src * (size_t)n + (size_t)x->dst;
        msgs[k]++;
        bytes[k] += x->bytes;
        if (x->send_t0 != TR_NONE && x->recv_t1 != TR_NONE)
            time[k] += (double)(x->recv_t1 - x->send_t0);
        tm++;
        tb += x->bytes;
    }
    fprintf(out, "Transfers between ranks:\n");
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++) {
            size_t k = (size_t)s * (size_t)n + (size_t)d;
            if (!msgs[k])
                continue;
            char a[32], b[32];
            fprintf(out, "  %d -> %d: %llu messages, %s (%llu bytes), mean %s from send to "
                    "delivery\n", s, d, (unsigned long long)msgs[k],
                    tr_fmt_bytes(a, (double)bytes[k]), (unsigned long long)bytes[k],
                    tr_fmt_time(b, time[k] / (double)msgs[k]));
        }
    char a[32];
    fprintf(out, "  total: %llu messages, %s (%llu bytes)\n", (unsigned long long)tm,
            tr_fmt_bytes(a, (double)tb), (unsigned long long)tb);
    free(msgs);
    free(bytes);
    free(time);
}

static void print_memory(const tr_trace_t *tr, FILE *out)
{
    fprintf(out, "Memory (buffers allocated by the runtime):\n");
    for (int r = 0; r < tr->nranks; r++) {
        const tr_rank_t *rk = &tr->ranks[r];
        for (uint32_t s = 0; s < rk->hdr.nspaces; s++) {
            int64_t now = 0, peak = 0;
            uint64_t allocs = 0, slots = 0;
            for (size_t i = 0; i < rk->mem.n; i++) {
                const tr_mem_t *m = TR_AT(&rk->mem, tr_mem_t, i);
                if (m->space != s)
                    continue;
                now += m->delta;
                peak = now > peak ? now : peak;
                allocs += m->delta > 0;
                slots += m->delta > 0 && !m->home;
            }
            char a[32];
            fprintf(out, "  rank %d space %u: peak %s, %llu allocations (%llu temporary slots)\n",
                    r, s, tr_fmt_bytes(a, (double)peak), (unsigned long long)allocs,
                    (unsigned long long)slots);
        }
    }
}

static double phase_time(const tr_rank_t *rk, dg_trf_phase_t kind)
{
    double sum = 0;
    for (size_t i = 0; i < rk->phases.n; i++) {
        const tr_span_t *s = TR_AT(&rk->phases, tr_span_t, i);
        if (s->kind == (uint32_t)kind)
            sum += (double)(s->t1 - s->t0);
    }
    return sum;
}

static void print_planner(const tr_trace_t *tr, FILE *out)
{
    fprintf(out, "Planner (every rank plans every task; time in dg_plan_submit, emitting this "
            "rank's ops included):\n");
    for (int r = 0; r < tr->nranks; r++) {
        const tr_rank_t *rk = &tr->ranks[r];
        char a[32], b[32], c[32], d[32], e[32];
        fprintf(out, "  rank %d: %llu tasks, %s per task (total %s); region ends: copy-back "
                "planning %s, waiting %s, agreeing %s", r, (unsigned long long)rk->planned,
                tr_fmt_time(a, rk->planned ? rk->plan_ns / (double)rk->planned : 0),
                tr_fmt_time(b, rk->plan_ns), tr_fmt_time(c, phase_time(rk, DG_TRP_REGION_PLAN_END)),
                tr_fmt_time(d, phase_time(rk, DG_TRP_REGION_WAIT)),
                tr_fmt_time(e, phase_time(rk, DG_TRP_REGION_AGREE)));
        if (rk->checks.n) {
            double sum = 0;
            for (size_t i = 0; i < rk->checks.n; i++)
                sum += (double)(TR_AT(&rk->checks, tr_span_t, i)->t1 -
                                TR_AT(&rk->checks, tr_span_t, i)->t0);
            fprintf(out, "; %zu uniformity checks, %s", rk->checks.n, tr_fmt_time(a, sum));
        }
        fputc('\n', out);
    }
}

static void print_critpath(const tr_trace_t *tr, FILE *out)
{
    if (!tr->deps_recorded) {
        fprintf(out, "Critical path: not known (recorded with DAGGER_TRACE_DEPS=0: no task "
                     "dependencies)\n");
        return;
    }
    tr_critpath_t cp;
    tr_critpath(tr, &cp);
    double busy = 0;
    for (uint64_t i = 1; i < tr->ntasks; i++)
        if (tr->tasks[i].ran)
            busy += (double)(tr->tasks[i].t1 - tr->tasks[i].t0);
    char a[32], b[32];
    fprintf(out, "Critical path: %s over %zu tasks; wall time %s is %.2fx the critical path; "
            "average parallelism %.2f\n", tr_fmt_time(a, (double)cp.length), cp.ntasks,
            tr_fmt_time(b, wall_ns(tr)), cp.length ? wall_ns(tr) / (double)cp.length : 0,
            cp.length ? busy / (double)cp.length : 0);
    if (cp.ntasks) {
        fprintf(out, "  path:");
        size_t shown = cp.ntasks < 12 ? cp.ntasks : 12;
        for (size_t i = 0; i < shown; i++) {
            const tr_task_t *t = &tr->tasks[cp.tasks[i]];
            fprintf(out, "%s %s#%llu", i ? " ->" : "", tr_codelet_name(tr, t->codelet),
                    (unsigned long long)t->id);
        }
        fprintf(out, "%s\n", shown < cp.ntasks ? " -> ..." : "");
    }
    tr_critpath_free(&cp);
}

static void print_waits(const tr_trace_t *tr, FILE *out)
{
    tr_wait_t w[TOP_WAITS];
    size_t n = tr_top_waits(tr, w, TOP_WAITS);
    fprintf(out, "Top waits:\n");
    if (!n)
        fprintf(out, "  none\n");
    for (size_t i = 0; i < n; i++) {
        char a[32], b[32];
        if (w[i].kind == TR_WAIT_TASK) {
            const tr_task_t *t = &tr->tasks[w[i].task];
            fprintf(out, "  %2zu. %s: task %llu (%s) on rank %d worker %d started that long after "
                    "its inputs were ready", i + 1, tr_fmt_time(a, (double)w[i].ns),
                    (unsigned long long)t->id, tr_codelet_name(tr, t->codelet), t->rank, t->worker);
            if (w[i].limiter) {
                const tr_task_t *l = &tr->tasks[w[i].limiter];
                fprintf(out, " (last input: task %llu (%s) on rank %d%s)",
                        (unsigned long long)l->id, tr_codelet_name(tr, l->codelet), l->rank,
                        l->rank != t->rank ? ", data moved between ranks" : "");
            } else {
                /* Its inputs were done before it was planned: what it waited
                 * for came after, a worker or data from another rank. */
                int remote = -1;
                const uint64_t *deps = tr_task_deps(tr, t);
                for (uint32_t k = 0; k < t->ndeps; k++)
                    if (deps[k] < tr->ntasks && tr->tasks[deps[k]].rank != t->rank)
                        remote = tr->tasks[deps[k]].rank;
                if (remote >= 0)
                    fprintf(out, " (planned after its inputs were done; its data came from "
                            "rank %d)", remote);
                else
                    fprintf(out, " (after it was planned: waiting for a worker, or for data "
                            "from another rank)");
            }
            fputc('\n', out);
        } else {
            const tr_xfer_t *x = w[i].xfer;
            fprintf(out, "  %2zu. %s: rank %d waited for transfer tag %llx:%llu from rank %d (%s) "
                    "after posting its receive", i + 1, tr_fmt_time(a, (double)w[i].ns), x->dst,
                    (unsigned long long)(x->tag >> 32), (unsigned long long)(x->tag & 0xffffffffu),
                    x->src, tr_fmt_bytes(b, (double)x->bytes));
            if (x->send_t0 != TR_NONE) {
                /* Until the sender had the data, then on the way. */
                int64_t ready = x->send_t0 > x->post ? x->send_t0 : x->post;
                char c[32], d[32];
                int64_t flight = x->recv_t1 - ready;
                fprintf(out, ": %s until rank %d could send it, %s in flight",
                        tr_fmt_time(c, (double)(ready - x->post)), x->src,
                        tr_fmt_time(d, (double)flight));
                /* 20 times what 50 us and 1 GB/s would take. */
                if (flight > 20 * (50000 + (int64_t)x->bytes) && oversubscribed(tr, x->dst))
                    fprintf(out, " (far more than its bytes need; rank %d's host has more "
                            "threads than CPUs, above)", x->dst);
            }
            fputc('\n', out);
        }
    }
}

/* Messages counted by (handling actor, type, sender), per rank. */
typedef struct msg_count {
    uint32_t actor, type, from_id;
    int32_t from_rank;
    uint64_t count;
} msg_count_t;

static msg_count_t *count_of(tr_vec_t *v, const tr_msg_t *m)
{
    for (size_t i = 0; i < v->n; i++) {
        msg_count_t *c = TR_AT(v, msg_count_t, i);
        if (c->actor == m->actor && c->type == m->type && c->from_rank == m->from_rank &&
            c->from_id == m->from_id)
            return c;
    }
    msg_count_t *c = tr_vec_push(v);
    *c = (msg_count_t){m->actor, m->type, m->from_id, m->from_rank, 0};
    return c;
}

static void sender_name(const tr_trace_t *tr, int r, const msg_count_t *c, char *buf, size_t cap)
{
    if (c->from_id == 0 || c->from_id == UINT32_MAX)
        snprintf(buf, cap, "rank %d, %s", c->from_rank < 0 ? r : c->from_rank,
                 c->from_id ? "a waiting thread" : "no actor");
    else
        snprintf(buf, cap, "rank %d, %s", c->from_rank,
                 tr_actor_name(tr, c->from_rank, c->from_id));
}

static void print_messages(const tr_trace_t *tr, FILE *out)
{
    fprintf(out, "Messages by type and actor:\n  %-4s %-16s %-22s %-30s %10s\n", "rank", "actor",
            "type", "from", "count");
    for (int r = 0; r < tr->nranks; r++) {
        tr_vec_t v;
        tr_vec_init(&v, sizeof(msg_count_t));
        const tr_vec_t *ms = &tr->ranks[r].msgs;
        for (size_t i = 0; i < ms->n; i++)
            count_of(&v, TR_AT(ms, tr_msg_t, i))->count++;
        for (size_t i = 0; i < v.n; i++) {
            const msg_count_t *c = TR_AT(&v, msg_count_t, i);
            char from[96];
            sender_name(tr, r, c, from, sizeof(from));
            fprintf(out, "  %-4d %-16s %-22s %-30s %10llu\n", r, tr_actor_name(tr, r, c->actor),
                    tr_type_name(tr, c->type), from, (unsigned long long)c->count);
        }
        tr_vec_free(&v);
    }
}

int tr_cmd_summary(const tr_trace_t *tr, FILE *out)
{
    print_ranks(tr, out);
    print_codelets(tr, out);
    print_processors(tr, out);
    print_occupancy(tr, out);
    print_submission(tr, out);
    print_transfers(tr, out);
    print_memory(tr, out);
    print_messages(tr, out);
    print_planner(tr, out);
    print_critpath(tr, out);
    print_waits(tr, out);
    return 0;
}
