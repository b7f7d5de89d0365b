/* Loading a trace directory: job.meta, every rank's header (for the common
 * clock origin), then every rank's events; and the model's look-ups. */
#include <stdlib.h>
#include <string.h>

#include "model.h"

tr_task_t *tr_task_slot(tr_trace_t *tr, uint64_t id)
{
    if (id >= tr->ntasks) {
        uint64_t n = tr->ntasks ? tr->ntasks : 1024;
        while (n <= id)
            n *= 2;
        tr->tasks = tr_realloc(tr->tasks, n * sizeof(tr_task_t));
        for (uint64_t i = tr->ntasks; i < n; i++)
            tr->tasks[i] = (tr_task_t){.id = i, .worker = -1, .rank = -1, .t0 = TR_NONE,
                                       .t1 = TR_NONE, .plan_t0 = TR_NONE,
                                       .planned_at = TR_NONE};
        tr->ntasks = n;
    }
    return &tr->tasks[id];
}

tr_xfer_t *tr_xfer_slot(tr_trace_t *tr, uint64_t tag)
{
    uint32_t i;
    if (tr_map_get(&tr->xfer_by_tag, tag + 1, &i))
        return TR_AT(&tr->xfers, tr_xfer_t, i);
    tr_xfer_t *x = tr_vec_push(&tr->xfers);
    *x = (tr_xfer_t){.tag = tag, .src = -1, .dst = -1, .planned_send = TR_NONE,
                     .planned_recv = TR_NONE, .send_t0 = TR_NONE, .send_t1 = TR_NONE,
                     .post = TR_NONE, .arrive = TR_NONE, .recv_t1 = TR_NONE};
    tr_map_put(&tr->xfer_by_tag, tag + 1, (uint32_t)(tr->xfers.n - 1));
    return x;
}

const tr_xfer_t *tr_xfer_find(const tr_trace_t *tr, uint64_t tag)
{
    uint32_t i;
    return tr_map_get(&tr->xfer_by_tag, tag + 1, &i) ? TR_AT(&tr->xfers, tr_xfer_t, i) : NULL;
}

const char *tr_codelet_name(const tr_trace_t *tr, uint32_t id)
{
    uint32_t i;
    return tr_map_get(&tr->codelet_by_id, id, &i) ? TR_AT(&tr->codelets, tr_codelet_t, i)->name
                                                  : "?";
}

uint32_t tr_codelet_index(const tr_trace_t *tr, uint32_t id)
{
    uint32_t i;
    return tr_map_get(&tr->codelet_by_id, id, &i) ? TR_AT(&tr->codelets, tr_codelet_t, i)->index
                                                  : (uint32_t)tr->codelets.n;
}

static const char *name_in(const tr_vec_t *v, uint32_t id)
{
    for (size_t i = 0; i < v->n; i++)
        if (TR_AT(v, tr_name_t, i)->id == id)
            return TR_AT(v, tr_name_t, i)->name;
    return "?";
}

const char *tr_type_name(const tr_trace_t *tr, uint32_t id)
{
    return name_in(&tr->type_names, id);
}

const char *tr_actor_name(const tr_trace_t *tr, int r, uint32_t id)
{
    return r >= 0 && r < tr->nranks ? name_in(&tr->ranks[r].actor_names, id) : "?";
}

static int by_name(const void *a, const void *b)
{
    const tr_codelet_t *x = *(tr_codelet_t *const *)a, *y = *(tr_codelet_t *const *)b;
    return strcmp(x->name, y->name);
}

/* Legend order: codelets sorted by name, so colours do not depend on ids. */
static void order_codelets(tr_trace_t *tr)
{
    size_t n = tr->codelets.n;
    tr_codelet_t **v = tr_alloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = TR_AT(&tr->codelets, tr_codelet_t, i);
    qsort(v, n, sizeof(*v), by_name);
    for (size_t i = 0; i < n; i++)
        v[i]->index = (uint32_t)i;
    free(v);
}

/* The traced work: from the first region begin to the last region end;
 * without regions, the span of the tasks. */
static void work_span(tr_trace_t *tr)
{
    tr->t_begin = INT64_MAX;
    tr->t_end = INT64_MIN;
    for (int r = 0; r < tr->nranks; r++) {
        const tr_vec_t *ph = &tr->ranks[r].phases;
        for (size_t i = 0; i < ph->n; i++) {
            const tr_span_t *s = TR_AT(ph, tr_span_t, i);
            if (s->kind == DG_TRP_REGION_BEGIN && s->t0 < tr->t_begin)
                tr->t_begin = s->t0;
            if (s->kind >= DG_TRP_REGION_PLAN_END && s->t1 > tr->t_end)
                tr->t_end = s->t1;
        }
    }
    for (uint64_t i = 1; i < tr->ntasks; i++) {
        const tr_task_t *t = &tr->tasks[i];
        if (!t->ran)
            continue;
        if (t->t0 < tr->t_begin)
            tr->t_begin = t->t0;
        if (t->t1 > tr->t_end)
            tr->t_end = t->t1;
    }
    if (tr->t_begin > tr->t_end)
        tr->t_begin = tr->t_end = 0;
}

void tr_finish_load(tr_trace_t *tr)
{
    while (tr->ntasks > 1 && !tr->tasks[tr->ntasks - 1].planned && !tr->tasks[tr->ntasks - 1].ran)
        tr->ntasks--;
    for (uint64_t i = 1; i < tr->ntasks; i++) {
        tr->planned += tr->tasks[i].planned;
        tr->ran += tr->tasks[i].ran;
    }
    order_codelets(tr);
    work_span(tr);
}

void tr_rank_init(tr_rank_t *rk)
{
    tr_vec_init(&rk->idle, sizeof(tr_span_t));
    tr_vec_init(&rk->copies, sizeof(tr_span_t));
    tr_vec_init(&rk->phases, sizeof(tr_span_t));
    tr_vec_init(&rk->checks, sizeof(tr_span_t));
    tr_vec_init(&rk->mem, sizeof(tr_mem_t));
    tr_vec_init(&rk->actors, sizeof(tr_count_t));
    tr_vec_init(&rk->msgs, sizeof(tr_msg_t));
    tr_vec_init(&rk->actor_names, sizeof(tr_name_t));
    tr_vec_init(&rk->hangs, sizeof(tr_hang_t));
}

void tr_load_begin(tr_trace_t *tr, const char *dir)
{
    memset(tr, 0, sizeof(*tr));
    tr->dir = tr_strdup(dir);
    tr_vec_init(&tr->deps, sizeof(uint64_t));
    tr_vec_init(&tr->xfers, sizeof(tr_xfer_t));
    tr_vec_init(&tr->codelets, sizeof(tr_codelet_t));
    tr_vec_init(&tr->type_names, sizeof(tr_name_t));
}

int tr_load_events(tr_trace_t *tr)
{
    tr->origin = INT64_MAX;
    for (int r = 0; r < tr->nranks; r++) {
        const dg_trf_header_t *h = &tr->ranks[r].hdr;
        int64_t s = (int64_t)h->start_ns + h->clock_offset_ns;
        if (s < tr->origin)
            tr->origin = s;
    }
    int rc = 0;
    for (int r = 0; !rc && r < tr->nranks; r++)
        rc = tr_parse_rank(tr, r);
    if (rc)
        return -1;
    tr_finish_load(tr);
    return 0;
}

int tr_load(tr_trace_t *tr, const char *dir)
{
    tr_load_begin(tr, dir);
    size_t n = strlen(dir) + 32;
    char *meta = tr_alloc(n);
    snprintf(meta, n, "%s/%s", dir, DG_TRF_META_NAME);
    int rc = tr_read_meta(tr, meta);
    free(meta);
    for (int r = 0; !rc && r < tr->nranks; r++)
        rc = tr_read_rank(tr, r, tr->ranks[r].path);
    return rc ? -1 : tr_load_events(tr);
}

static void free_hang(tr_hang_t *h)
{
    tr_vec_free(&h->ops);
    tr_vec_free(&h->edges);
    tr_vec_free(&h->running);
    tr_vec_free(&h->recv_wait);
    tr_vec_free(&h->early);
}

void tr_free(tr_trace_t *tr)
{
    for (int r = 0; tr->ranks && r < tr->nranks; r++) {
        tr_rank_t *rk = &tr->ranks[r];
        for (size_t i = 0; i < rk->hangs.n; i++)
            free_hang(TR_AT(&rk->hangs, tr_hang_t, i));
        tr_vec_t *vs[] = {&rk->idle, &rk->copies, &rk->phases, &rk->checks, &rk->mem,
                          &rk->actors, &rk->hangs, &rk->msgs, &rk->actor_names};
        for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++)
            tr_vec_free(vs[i]);
        free(rk->raw);
        free(rk->path);
    }
    free(tr->ranks);
    free(tr->tasks);
    tr_vec_free(&tr->deps);
    tr_vec_free(&tr->xfers);
    tr_vec_free(&tr->codelets);
    tr_vec_free(&tr->type_names);
    tr_map_free(&tr->xfer_by_tag);
    tr_map_free(&tr->codelet_by_id);
    free(tr->dir);
    memset(tr, 0, sizeof(*tr));
}
