/* Access histories: for one chunk (logical task dependencies) or one buffer
 * (op dependencies), the accesses that later accesses may conflict with.
 *
 * Writes are kept disjoint: a new write removes what it covers from earlier
 * entries (later accesses reach those through the write, which depends on
 * them), so each element has at most one write entry (its last writer) plus
 * the reads since. Reads and writes live in two treaps keyed by the start of
 * their bounding box and augmented with the largest end in each subtree, so
 * an overlap query costs O(log n + matches) and a read never visits reads. */
#ifndef DG_PLAN_HIST_H
#define DG_PLAN_HIST_H

#include <stdint.h>

#include "core/plan/spans.h"

typedef struct dg_plan_hnode dg_plan_hnode_t;

typedef struct dg_plan_hist {
    dg_plan_hnode_t *writes, *reads;
    uint32_t n;        /* live entries */
    uint32_t sweep_at; /* dg_plan_hist_forget looks at the entries once n reaches this */
} dg_plan_hist_t;

/* A growable list of 64-bit ids (dependencies). */
typedef struct dg_plan_u64vec {
    uint64_t *v;
    uint32_t n, cap;
} dg_plan_u64vec_t;

/* Doubles v's room (at least 16); -1 when out of memory (m records it). */
int dg_plan_u64vec_grow(dg_plan_mem_t *m, dg_plan_u64vec_t *v);

/* Inline: the planner pushes a few ids per op, and a replayed op's
 * dependencies are all it copies one by one. Dropped when out of memory. */
static inline void dg_plan_u64vec_push(dg_plan_mem_t *m, dg_plan_u64vec_t *v, uint64_t x)
{
    if (__builtin_expect(v->n == v->cap, 0) && dg_plan_u64vec_grow(m, v))
        return;
    v->v[v->n++] = x;
}
void dg_plan_u64vec_release(dg_plan_mem_t *m, dg_plan_u64vec_t *v);
/* Sorts and removes duplicates. */
void dg_plan_u64vec_sort_unique(dg_plan_u64vec_t *v);

/* Shared scratch of all histories of one planner. */
typedef struct dg_plan_hctx {
    dg_plan_mem_t *mem;
    uint64_t next_key;           /* unique tie-breaker for equal bounding boxes */
    dg_plan_hnode_t **hits;      /* nodes found by a query */
    uint32_t nhits, caphits;
    dg_plan_spans_t tmp;
} dg_plan_hctx_t;

void dg_plan_hctx_init(dg_plan_hctx_t *c, dg_plan_mem_t *m);
void dg_plan_hctx_cleanup(dg_plan_hctx_t *c);

enum { DG_PLAN_HIST_SWEEP_MIN = 32 };

static inline void dg_plan_hist_init(dg_plan_hist_t *h)
{
    h->writes = h->reads = 0;
    h->n = 0;
    h->sweep_at = DG_PLAN_HIST_SWEEP_MIN;
}
void dg_plan_hist_clear(dg_plan_hctx_t *c, dg_plan_hist_t *h);

/* Appends to deps the ids of entries that an access of s conflicts with:
 * overlapping writes, and for a write also overlapping reads. */
void dg_plan_hist_deps(dg_plan_hctx_t *c, const dg_plan_hist_t *h, const dg_plan_spans_t *s,
                       int write, dg_plan_u64vec_t *deps);

/* Records an access (after its dependencies were taken). A write prunes
 * what it covers from earlier entries. */
void dg_plan_hist_add(dg_plan_hctx_t *c, dg_plan_hist_t *h, const dg_plan_spans_t *s, int write,
                      uint64_t id);

/* Forgets the entries with id < below (accesses known to be finished before
 * any later access starts, so depending on them is useless). Looks only when
 * the history has doubled since the last look, so the cost is amortised O(1)
 * per dg_plan_hist_add and a history holds O(accesses since `below`). */
void dg_plan_hist_forget(dg_plan_hctx_t *c, dg_plan_hist_t *h, uint64_t below);

/* Calls fn for every entry (tests, diagnostics). */
void dg_plan_hist_foreach(const dg_plan_hist_t *h,
                          void (*fn)(void *ctx, uint64_t id, int write, const dg_plan_spans_t *s),
                          void *ctx);

#endif
