/* Span-set algebra: linear merges over sorted ranges, after a bounding-box
 * test that settles the common disjoint case in O(1). */
#include "core/plan/spans.h"

#include <string.h>

#include "core/base/common.h"

void dg_plan_spans_release(dg_plan_mem_t *m, dg_plan_spans_t *s)
{
    if (s->cap) /* cap 0: storage borrowed from the owner (dg_plan_spans_borrow) */
        dg_plan_mem_free(m, s->v, (size_t)s->cap * sizeof(dg_plan_span_t));
    dg_plan_spans_init(s);
}

int dg_plan_spans_reserve(dg_plan_mem_t *m, dg_plan_spans_t *s, uint32_t n)
{
    if (n <= s->cap)
        return 0;
    uint32_t cap = s->cap ? s->cap : 1;
    while (cap < n)
        cap *= 2;
    dg_plan_span_t *v;
    if (s->cap) {
        v = dg_plan_mem_realloc(m, s->v, (size_t)s->cap * sizeof(*v), (size_t)cap * sizeof(*v));
    } else { /* borrowed or empty: take owned storage, keep the contents */
        v = dg_plan_mem_alloc(m, (size_t)cap * sizeof(*v));
        if (v && s->n)
            memcpy(v, s->v, (size_t)s->n * sizeof(*v));
    }
    if (!v)
        return -1;
    s->v = v;
    s->cap = cap;
    return 0;
}

/* dg_plan_spans_append's path when the storage is full (or borrowed). */
void dg_plan_spans_append_grow(dg_plan_mem_t *m, dg_plan_spans_t *s, uint64_t b, uint64_t e)
{
    if (dg_plan_spans_reserve(m, s, s->n + 1))
        return;
    s->v[s->n].begin = b;
    s->v[s->n].end = e;
    s->n++;
}

void dg_plan_spans_copy(dg_plan_mem_t *m, dg_plan_spans_t *dst, const dg_plan_spans_t *src)
{
    dst->n = 0;
    if (dg_plan_spans_reserve(m, dst, src->n))
        return;
    if (src->n)
        memcpy(dst->v, src->v, (size_t)src->n * sizeof(dg_plan_span_t));
    dst->n = src->n;
}

void dg_plan_spans_shrink(dg_plan_mem_t *m, dg_plan_spans_t *s)
{
    uint32_t cap = 1;
    while (cap < s->n)
        cap *= 2;
    if (cap >= s->cap || s->n == 0 || s->cap == 0)
        return;
    dg_plan_span_t *v = dg_plan_mem_realloc(m, s->v, (size_t)s->cap * sizeof(*v),
                                            (size_t)cap * sizeof(*v));
    if (v) {
        s->v = v;
        s->cap = cap;
    }
}

uint64_t dg_plan_spans_count(const dg_plan_spans_t *s)
{
    uint64_t c = 0;
    for (uint32_t i = 0; i < s->n; i++)
        c += s->v[i].end - s->v[i].begin;
    return c;
}

int dg_plan_spans_equal(const dg_plan_spans_t *a, const dg_plan_spans_t *b)
{
    return a->n == b->n && (a->n == 0 || !memcmp(a->v, b->v, (size_t)a->n * sizeof(*a->v)));
}

static int boxes_disjoint(const dg_plan_spans_t *a, const dg_plan_spans_t *b)
{
    return !a->n || !b->n || dg_plan_spans_hi(a) <= dg_plan_spans_lo(b) ||
           dg_plan_spans_hi(b) <= dg_plan_spans_lo(a);
}

int dg_plan_spans_overlap(const dg_plan_spans_t *a, const dg_plan_spans_t *b)
{
    if (boxes_disjoint(a, b))
        return 0;
    uint32_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        if (a->v[i].end <= b->v[j].begin)
            i++;
        else if (b->v[j].end <= a->v[i].begin)
            j++;
        else
            return 1;
    }
    return 0;
}

int dg_plan_spans_subset(const dg_plan_spans_t *a, const dg_plan_spans_t *b)
{
    if (!a->n)
        return 1;
    if (!b->n || dg_plan_spans_lo(a) < dg_plan_spans_lo(b) || dg_plan_spans_hi(a) > dg_plan_spans_hi(b))
        return 0;
    if (b->n == 1)
        return 1; /* one range holding a's bounding box (a whole chunk's copy, mostly) */
    uint32_t j = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        while (j < b->n && b->v[j].end <= a->v[i].begin)
            j++;
        /* b's spans are non-adjacent, so a span of a lies inside one span of b. */
        if (j == b->n || b->v[j].begin > a->v[i].begin || b->v[j].end < a->v[i].end)
            return 0;
    }
    return 1;
}

void dg_plan_spans_union(dg_plan_mem_t *m, dg_plan_spans_t *out, const dg_plan_spans_t *a,
                         const dg_plan_spans_t *b)
{
    out->n = 0;
    if (dg_plan_spans_reserve(m, out, a->n + b->n))
        return;
    uint32_t i = 0, j = 0;
    while (i < a->n || j < b->n) {
        const dg_plan_span_t *s;
        if (j == b->n || (i < a->n && a->v[i].begin <= b->v[j].begin))
            s = &a->v[i++];
        else
            s = &b->v[j++];
        if (out->n && out->v[out->n - 1].end >= s->begin) {
            if (s->end > out->v[out->n - 1].end)
                out->v[out->n - 1].end = s->end;
        } else {
            out->v[out->n++] = *s;
        }
    }
}

void dg_plan_spans_inter(dg_plan_mem_t *m, dg_plan_spans_t *out, const dg_plan_spans_t *a,
                         const dg_plan_spans_t *b)
{
    out->n = 0;
    if (boxes_disjoint(a, b))
        return;
    uint32_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        uint64_t lo = DG_MAX(a->v[i].begin, b->v[j].begin);
        uint64_t hi = DG_MIN(a->v[i].end, b->v[j].end);
        if (lo < hi)
            dg_plan_spans_append(m, out, lo, hi);
        if (a->v[i].end < b->v[j].end)
            i++;
        else
            j++;
    }
}

void dg_plan_spans_diff(dg_plan_mem_t *m, dg_plan_spans_t *out, const dg_plan_spans_t *a,
                        const dg_plan_spans_t *b)
{
    out->n = 0;
    if (boxes_disjoint(a, b)) {
        dg_plan_spans_copy(m, out, a);
        return;
    }
    uint32_t j = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        uint64_t cur = a->v[i].begin, end = a->v[i].end;
        while (j < b->n && b->v[j].end <= cur)
            j++;
        uint32_t k = j;
        while (cur < end && k < b->n && b->v[k].begin < end) {
            if (b->v[k].begin > cur)
                dg_plan_spans_append(m, out, cur, b->v[k].begin);
            cur = DG_MAX(cur, b->v[k].end);
            k++;
        }
        if (cur < end)
            dg_plan_spans_append(m, out, cur, end);
    }
}

uint64_t dg_plan_spans_inter_count(const dg_plan_spans_t *a, const dg_plan_spans_t *b)
{
    if (boxes_disjoint(a, b))
        return 0;
    uint64_t c = 0;
    uint32_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        uint64_t lo = DG_MAX(a->v[i].begin, b->v[j].begin);
        uint64_t hi = DG_MIN(a->v[i].end, b->v[j].end);
        if (lo < hi)
            c += hi - lo;
        if (a->v[i].end < b->v[j].end)
            i++;
        else
            j++;
    }
    return c;
}
