/* Critical path, waits, occupancy and codelet run times (see analysis.h). */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

static int64_t run_time(const tr_task_t *t)
{
    return t->ran && t->t1 > t->t0 ? t->t1 - t->t0 : 0;
}

void tr_critpath(const tr_trace_t *tr, tr_critpath_t *cp)
{
    memset(cp, 0, sizeof(*cp));
    uint64_t n = tr->ntasks;
    if (n < 2)
        return;
    /* Task ids grow in submission order and dependencies name earlier
     * tasks, so one pass in id order is a topological order. */
    int64_t *finish = tr_alloc(n * sizeof(int64_t));
    uint64_t *pred = tr_alloc(n * sizeof(uint64_t));
    uint64_t last = 0;
    for (uint64_t i = 1; i < n; i++) {
        const tr_task_t *t = &tr->tasks[i];
        const uint64_t *deps = tr_task_deps(tr, t);
        int64_t best = 0;
        for (uint32_t k = 0; k < t->ndeps; k++)
            if (deps[k] < i && finish[deps[k]] > best) {
                best = finish[deps[k]];
                pred[i] = deps[k];
            }
        finish[i] = best + run_time(t);
        if (finish[i] > cp->length) {
            cp->length = finish[i];
            last = i;
        }
    }
    for (uint64_t i = last; i; i = pred[i])
        cp->ntasks++;
    cp->tasks = tr_alloc((cp->ntasks ? cp->ntasks : 1) * sizeof(uint64_t));
    size_t k = cp->ntasks;
    for (uint64_t i = last; i; i = pred[i])
        cp->tasks[--k] = i;
    free(finish);
    free(pred);
}

void tr_critpath_free(tr_critpath_t *cp)
{
    free(cp->tasks);
    memset(cp, 0, sizeof(*cp));
}

int64_t tr_task_ready(const tr_trace_t *tr, const tr_task_t *t, uint64_t *limiter)
{
    int64_t ready = t->planned_at != TR_NONE ? t->planned_at : t->t0;
    *limiter = 0;
    const uint64_t *deps = tr_task_deps(tr, t);
    for (uint32_t k = 0; k < t->ndeps; k++) {
        if (deps[k] >= tr->ntasks)
            continue;
        const tr_task_t *d = &tr->tasks[deps[k]];
        if (d->ran && d->t1 > ready) {
            ready = d->t1;
            *limiter = deps[k];
        }
    }
    return ready;
}

/* Keeps the n longest in out (sorted descending); returns the new count. */
static size_t keep(tr_wait_t *out, size_t have, size_t n, const tr_wait_t *w)
{
    if (w->ns <= 0 || (have == n && out[n - 1].ns >= w->ns))
        return have;
    size_t i = have < n ? have++ : n - 1;
    while (i > 0 && out[i - 1].ns < w->ns) {
        out[i] = out[i - 1];
        i--;
    }
    out[i] = *w;
    return have;
}

size_t tr_top_waits(const tr_trace_t *tr, tr_wait_t *out, size_t n)
{
    size_t have = 0;
    if (!n)
        return 0;
    for (uint64_t i = 1; i < tr->ntasks; i++) {
        const tr_task_t *t = &tr->tasks[i];
        if (!t->ran)
            continue;
        tr_wait_t w = {.kind = TR_WAIT_TASK, .task = i};
        w.ns = t->t0 - tr_task_ready(tr, t, &w.limiter);
        have = keep(out, have, n, &w);
    }
    for (size_t i = 0; i < tr->xfers.n; i++) {
        const tr_xfer_t *x = TR_AT(&tr->xfers, tr_xfer_t, i);
        if (x->post == TR_NONE || x->recv_t1 == TR_NONE)
            continue;
        tr_wait_t w = {.kind = TR_WAIT_RECV, .ns = x->recv_t1 - x->post, .xfer = x};
        have = keep(out, have, n, &w);
    }
    return have;
}

/* A change of the count of running tasks (+1, -1) or of the waiting state
 * (wait +1 at a wait's start, -1 at its end) at time t. */
typedef struct occ_point {
    int64_t t;
    int tasks, wait;
} occ_point_t;

static int by_time(const void *a, const void *b)
{
    int64_t x = ((const occ_point_t *)a)->t, y = ((const occ_point_t *)b)->t;
    return x < y ? -1 : x > y;
}

static void occ_add(tr_vec_t *v, int64_t t0, int64_t t1, int tasks, int wait, int64_t lo,
                    int64_t hi)
{
    t0 = t0 > lo ? t0 : lo;
    t1 = t1 < hi ? t1 : hi;
    if (t1 <= t0)
        return;
    *(occ_point_t *)tr_vec_push(v) = (occ_point_t){t0, tasks, wait};
    *(occ_point_t *)tr_vec_push(v) = (occ_point_t){t1, -tasks, -wait};
}

void tr_occupancy(const tr_trace_t *tr, int rank, tr_occupancy_t *o)
{
    memset(o, 0, sizeof(*o));
    int64_t lo = tr->t_begin, hi = tr->t_end;
    if (rank < 0 || rank >= tr->nranks || hi <= lo)
        return;
    tr_vec_t v;
    tr_vec_init(&v, sizeof(occ_point_t));
    for (uint64_t i = 1; i < tr->ntasks; i++) {
        const tr_task_t *t = &tr->tasks[i];
        if (t->ran && t->rank == rank)
            occ_add(&v, t->t0, t->t1, 1, 0, lo, hi);
    }
    const tr_rank_t *rk = &tr->ranks[rank];
    for (size_t i = 0; i < rk->phases.n; i++) {
        const tr_span_t *s = TR_AT(&rk->phases, tr_span_t, i);
        if (s->kind == DG_TRP_REGION_WAIT)
            occ_add(&v, s->t0, s->t1, 0, 1, lo, hi);
    }
    if (v.n)
        qsort(v.data, v.n, sizeof(occ_point_t), by_time);
    int64_t at = lo;
    int tasks = 0, wait = 0;
    for (size_t i = 0; i <= v.n; i++) {
        int64_t t = i < v.n ? TR_AT(&v, occ_point_t, i)->t : hi;
        int k = wait > 0; /* waits of one rank do not overlap; counted, to be sure */
        double d = (double)(t - at);
        o->ns[k] += d;
        o->task_ns[k] += d * tasks;
        if (!tasks)
            o->none_ns[k] += d;
        at = t;
        if (i < v.n) {
            tasks += TR_AT(&v, occ_point_t, i)->tasks;
            wait += TR_AT(&v, occ_point_t, i)->wait;
        }
    }
    tr_vec_free(&v);
}

static int by_ns(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* One region of a rank: its begin, its region-end wait, its tasks there. */
typedef struct sub_region {
    int64_t begin, wait0, wait1;
    uint64_t tasks, ended;
} sub_region_t;

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void tr_submit_share(const tr_trace_t *tr, int rank, tr_submit_share_t *o)
{
    memset(o, 0, sizeof(*o));
    if (rank < 0 || rank >= tr->nranks)
        return;
    const tr_rank_t *rk = &tr->ranks[rank];
    tr_vec_t regs;
    tr_map_t at;
    tr_vec_init(&regs, sizeof(sub_region_t));
    tr_map_init(&at);
    for (size_t i = 0; i < rk->phases.n; i++) {
        const tr_span_t *s = TR_AT(&rk->phases, tr_span_t, i);
        if (s->kind != DG_TRP_REGION_BEGIN && s->kind != DG_TRP_REGION_WAIT)
            continue;
        uint32_t k;
        if (!tr_map_get(&at, s->a, &k)) {
            k = (uint32_t)regs.n;
            *(sub_region_t *)tr_vec_push(&regs) =
                (sub_region_t){.begin = TR_NONE, .wait0 = TR_NONE, .wait1 = TR_NONE};
            tr_map_put(&at, s->a, k);
        }
        sub_region_t *g = TR_AT(&regs, sub_region_t, k);
        if (s->kind == DG_TRP_REGION_BEGIN) {
            g->begin = s->t0;
        } else {
            g->wait0 = s->t0;
            g->wait1 = s->t1;
        }
    }
    for (uint64_t i = 1; i < tr->ntasks; i++) {
        const tr_task_t *t = &tr->tasks[i];
        uint32_t k;
        if (!t->ran || t->rank != rank || !tr_map_get(&at, t->region, &k))
            continue;
        sub_region_t *g = TR_AT(&regs, sub_region_t, k);
        g->tasks++;
        g->ended += g->wait0 != TR_NONE && t->t1 <= g->wait0;
    }
    double *share = tr_alloc((regs.n + 1) * sizeof(double));
    for (size_t k = 0; k < regs.n; k++) {
        const sub_region_t *g = TR_AT(&regs, sub_region_t, k);
        if (!g->tasks || g->begin == TR_NONE || g->wait0 == TR_NONE || g->wait0 < g->begin ||
            g->wait1 <= g->begin)
            continue;
        share[o->nregions++] = (double)(g->wait0 - g->begin) / (double)(g->wait1 - g->begin);
        o->tasks += g->tasks;
        o->ended += g->ended;
    }
    if (o->nregions) {
        size_t n = (size_t)o->nregions;
        qsort(share, n, sizeof(double), by_double);
        o->share = n % 2 ? share[n / 2] : 0.5 * (share[n / 2 - 1] + share[n / 2]);
    }
    free(share);
    tr_map_free(&at);
    tr_vec_free(&regs);
}

void tr_codelet_times(const tr_trace_t *tr, tr_cl_times_t *out)
{
    size_t n = tr->codelets.n + 1;
    memset(out, 0, n * sizeof(*out));
    /* Each codelet's run times in a segment of one array, then sorted. */
    size_t *at = tr_alloc((n + 1) * sizeof(size_t));
    for (uint64_t i = 1; i < tr->ntasks; i++)
        if (tr->tasks[i].ran)
            out[tr_codelet_index(tr, tr->tasks[i].codelet)].count++;
    for (size_t k = 0; k < n; k++)
        at[k + 1] = at[k] + (size_t)out[k].count;
    int64_t *ns = tr_alloc(at[n] * sizeof(int64_t));
    size_t *fill = tr_alloc(n * sizeof(size_t));
    for (uint64_t i = 1; i < tr->ntasks; i++) {
        const tr_task_t *t = &tr->tasks[i];
        if (!t->ran)
            continue;
        size_t k = tr_codelet_index(tr, t->codelet);
        ns[at[k] + fill[k]++] = run_time(t);
    }
    for (size_t k = 0; k < n; k++) {
        size_t c = (size_t)out[k].count;
        if (!c)
            continue;
        int64_t *v = ns + at[k];
        qsort(v, c, sizeof(*v), by_ns);
        for (size_t j = 0; j < c; j++)
            out[k].total += (double)v[j];
        out[k].median = c % 2 ? (double)v[c / 2] : ((double)v[c / 2 - 1] + (double)v[c / 2]) / 2;
        out[k].p90 = (double)v[(9 * c + 9) / 10 - 1]; /* the ceil(0.9 c)-th smallest */
        out[k].max = (double)v[c - 1];
    }
    free(fill);
    free(ns);
    free(at);
}
