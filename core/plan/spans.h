/* Span sets: the exact set of storage elements a view touches, as a sorted
 * list of disjoint, non-adjacent [begin, end) ranges of element offsets in
 * the chunk's storage. Every rank computes the same sets from the same view,
 * so aliasing needs no messages; a transfer sends exactly these spans. */
#ifndef DG_PLAN_SPANS_H
#define DG_PLAN_SPANS_H

#include <stdint.h>

#include "core/base/common.h"
#include "core/plan/mem.h"

typedef struct dg_plan_span {
    uint64_t begin, end; /* element offsets, begin < end */
} dg_plan_span_t;

typedef struct dg_plan_spans {
    dg_plan_span_t *v;
    uint32_t n, cap; /* cap 0 with v set: borrowed storage of n spans, never freed */
} dg_plan_spans_t;

static inline void dg_plan_spans_init(dg_plan_spans_t *s)
{
    s->v = NULL;
    s->n = s->cap = 0;
}
static inline void dg_plan_spans_clear(dg_plan_spans_t *s)
{
    s->n = 0;
}
/* Bounding box [lo, hi) of a non-empty set. */
static inline uint64_t dg_plan_spans_lo(const dg_plan_spans_t *s)
{
    return s->v[0].begin;
}
static inline uint64_t dg_plan_spans_hi(const dg_plan_spans_t *s)
{
    return s->v[s->n - 1].end;
}

void dg_plan_spans_release(dg_plan_mem_t *m, dg_plan_spans_t *s);
/* Capacity for at least n spans; -1 when out of memory. */
int dg_plan_spans_reserve(dg_plan_mem_t *m, dg_plan_spans_t *s, uint32_t n);
/* Appends [b, e) (b >= the last end; merged with the last span when adjacent).
 * Inline: a strided view (a halo column) appends one span per element. */
void dg_plan_spans_append_grow(dg_plan_mem_t *m, dg_plan_spans_t *s, uint64_t b, uint64_t e);
static inline void dg_plan_spans_append(dg_plan_mem_t *m, dg_plan_spans_t *s, uint64_t b,
                                        uint64_t e)
{
    DG_ASSERT(b < e);
    if (s->n && s->v[s->n - 1].end >= b) {
        DG_ASSERT(s->v[s->n - 1].end == b);
        s->v[s->n - 1].end = e;
        return;
    }
    if (DG_LIKELY(s->n < s->cap)) {
        s->v[s->n].begin = b;
        s->v[s->n].end = e;
        s->n++;
        return;
    }
    dg_plan_spans_append_grow(m, s, b, e);
}
void dg_plan_spans_copy(dg_plan_mem_t *m, dg_plan_spans_t *dst, const dg_plan_spans_t *src);
/* Shrinks the storage to fit (for sets kept long). */
void dg_plan_spans_shrink(dg_plan_mem_t *m, dg_plan_spans_t *s);

uint64_t dg_plan_spans_count(const dg_plan_spans_t *s);
/* Elements in both a and b. */
uint64_t dg_plan_spans_inter_count(const dg_plan_spans_t *a, const dg_plan_spans_t *b);
int dg_plan_spans_equal(const dg_plan_spans_t *a, const dg_plan_spans_t *b);
int dg_plan_spans_overlap(const dg_plan_spans_t *a, const dg_plan_spans_t *b);
/* 1 when every element of a is in b. */
int dg_plan_spans_subset(const dg_plan_spans_t *a, const dg_plan_spans_t *b);

/* out = a op b; out must be a different set from a and b (it is cleared). */
void dg_plan_spans_union(dg_plan_mem_t *m, dg_plan_spans_t *out, const dg_plan_spans_t *a,
                         const dg_plan_spans_t *b);
void dg_plan_spans_inter(dg_plan_mem_t *m, dg_plan_spans_t *out, const dg_plan_spans_t *a,
                         const dg_plan_spans_t *b);
void dg_plan_spans_diff(dg_plan_mem_t *m, dg_plan_spans_t *out, const dg_plan_spans_t *a,
                        const dg_plan_spans_t *b);

#endif
