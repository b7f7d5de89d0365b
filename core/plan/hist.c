/* Access histories on augmented treaps (see hist.h). */
#include "core/plan/hist.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/common.h"

struct dg_plan_hnode {
    dg_plan_hnode_t *l, *r;
    uint64_t lo, hi, maxhi; /* bounding box [lo, hi), max hi in the subtree */
    uint64_t key;           /* tie-breaker: unique per node */
    uint64_t id;
    uint32_t prio;
    uint32_t write;
    dg_plan_spans_t spans;
    dg_plan_span_t one; /* a one-span set lives here, without an allocation */
};

/* Sets a node's spans; one span is stored inline (most accesses are one). */
static void node_set(dg_plan_hctx_t *c, dg_plan_hnode_t *n, const dg_plan_spans_t *s)
{
    if (s->n == 1) {
        dg_plan_spans_release(c->mem, &n->spans);
        n->one = s->v[0];
        n->spans.v = &n->one;
        n->spans.n = 1;
        n->spans.cap = 0;
        return;
    }
    if (!n->spans.cap)
        dg_plan_spans_init(&n->spans);
    dg_plan_spans_copy(c->mem, &n->spans, s);
    dg_plan_spans_shrink(c->mem, &n->spans);
}

int dg_plan_u64vec_grow(dg_plan_mem_t *m, dg_plan_u64vec_t *v)
{
    uint32_t cap = v->cap ? v->cap * 2 : 16;
    uint64_t *nv = dg_plan_mem_realloc(m, v->v, (size_t)v->cap * 8, (size_t)cap * 8);
    if (!nv)
        return -1;
    v->v = nv;
    v->cap = cap;
    return 0;
}

void dg_plan_u64vec_release(dg_plan_mem_t *m, dg_plan_u64vec_t *v)
{
    dg_plan_mem_free(m, v->v, (size_t)v->cap * 8);
    v->v = NULL;
    v->n = v->cap = 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A task's dependency lists hold a handful of ids: an insertion sort costs
 * a few instructions per element where qsort's merge sort cost ~600 per
 * call (callgrind, Task Bench stencil_1d). */
enum { SORT_SMALL = 24 };

void dg_plan_u64vec_sort_unique(dg_plan_u64vec_t *v)
{
    if (v->n < 2)
        return;
    uint64_t *a = v->v;
    if (v->n <= SORT_SMALL) {
        for (uint32_t i = 1; i < v->n; i++) {
            uint64_t x = a[i];
            uint32_t j = i;
            for (; j && a[j - 1] > x; j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
    } else {
        qsort(a, v->n, sizeof(uint64_t), cmp_u64);
    }
    uint32_t k = 1;
    for (uint32_t i = 1; i < v->n; i++)
        if (a[i] != a[k - 1])
            a[k++] = a[i];
    v->n = k;
}

void dg_plan_hctx_init(dg_plan_hctx_t *c, dg_plan_mem_t *m)
{
    memset(c, 0, sizeof(*c));
    c->mem = m;
}

void dg_plan_hctx_cleanup(dg_plan_hctx_t *c)
{
    dg_plan_mem_free(c->mem, c->hits, (size_t)c->caphits * sizeof(*c->hits));
    dg_plan_spans_release(c->mem, &c->tmp);
    memset(c, 0, sizeof(*c));
}

/* ---- treap primitives ---- */

static inline uint64_t maxhi(const dg_plan_hnode_t *t)
{
    return t ? t->maxhi : 0;
}

static inline void update(dg_plan_hnode_t *t)
{
    t->maxhi = DG_MAX(t->hi, DG_MAX(maxhi(t->l), maxhi(t->r)));
}

static inline int less(const dg_plan_hnode_t *a, uint64_t lo, uint64_t key)
{
    return a->lo < lo || (a->lo == lo && a->key < key);
}

/* Splits t into nodes ordered before (lo, key) and the rest. */
static void split(dg_plan_hnode_t *t, uint64_t lo, uint64_t key, dg_plan_hnode_t **a,
                  dg_plan_hnode_t **b)
{
    if (!t) {
        *a = *b = NULL;
        return;
    }
    if (less(t, lo, key)) {
        split(t->r, lo, key, &t->r, b);
        *a = t;
    } else {
        split(t->l, lo, key, a, &t->l);
        *b = t;
    }
    update(t);
}

static dg_plan_hnode_t *merge(dg_plan_hnode_t *a, dg_plan_hnode_t *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (a->prio > b->prio) {
        a->r = merge(a->r, b);
        update(a);
        return a;
    }
    b->l = merge(a, b->l);
    update(b);
    return b;
}

static dg_plan_hnode_t *insert(dg_plan_hnode_t *t, dg_plan_hnode_t *n)
{
    if (!t)
        return n;
    if (n->prio > t->prio) {
        split(t, n->lo, n->key, &n->l, &n->r);
        update(n);
        return n;
    }
    if (less(n, t->lo, t->key))
        t->l = insert(t->l, n);
    else
        t->r = insert(t->r, n);
    update(t);
    return t;
}

static dg_plan_hnode_t *erase(dg_plan_hnode_t *t, const dg_plan_hnode_t *n)
{
    DG_ASSERT(t);
    if (t == n)
        return merge(t->l, t->r);
    if (less(n, t->lo, t->key))
        t->l = erase(t->l, n);
    else
        t->r = erase(t->r, n);
    update(t);
    return t;
}

static void push_hit(dg_plan_hctx_t *c, dg_plan_hnode_t *n)
{
    if (DG_UNLIKELY(c->nhits == c->caphits)) {
        uint32_t cap = c->caphits ? c->caphits * 2 : 32;
        void *nv = dg_plan_mem_realloc(c->mem, c->hits, (size_t)c->caphits * sizeof(*c->hits),
                                       (size_t)cap * sizeof(*c->hits));
        if (!nv)
            return;
        c->hits = nv;
        c->caphits = cap;
    }
    c->hits[c->nhits++] = n;
}

/* Collects nodes whose bounding box meets [lo, hi) and whose spans overlap s. */
static void query(dg_plan_hctx_t *c, dg_plan_hnode_t *t, uint64_t lo, uint64_t hi,
                  const dg_plan_spans_t *s)
{
    while (t && t->maxhi > lo) {
        query(c, t->l, lo, hi, s);
        if (t->lo >= hi)
            return;
        /* Two single ranges whose bounds meet overlap: no span walk. */
        if (t->hi > lo && ((t->spans.n == 1 && s->n == 1) || dg_plan_spans_overlap(&t->spans, s)))
            push_hit(c, t);
        t = t->r;
    }
}

static uint32_t node_prio(uint64_t key)
{
    uint64_t x = key * 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return (uint32_t)(x >> 32);
}

static void free_node(dg_plan_hctx_t *c, dg_plan_hnode_t *n)
{
    dg_plan_spans_release(c->mem, &n->spans);
    dg_plan_mem_free(c->mem, n, sizeof(*n));
}

/* Frees every node of t; returns how many. */
static uint32_t free_tree(dg_plan_hctx_t *c, dg_plan_hnode_t *t)
{
    uint32_t k = 0;
    while (t) {
        k += free_tree(c, t->l);
        dg_plan_hnode_t *r = t->r;
        free_node(c, t);
        t = r;
        k++;
    }
    return k;
}

static uint64_t min_lo(const dg_plan_hnode_t *t)
{
    while (t->l)
        t = t->l;
    return t->lo;
}

/* ---- histories ---- */

void dg_plan_hist_clear(dg_plan_hctx_t *c, dg_plan_hist_t *h)
{
    free_tree(c, h->writes);
    free_tree(c, h->reads);
    dg_plan_hist_init(h);
}

void dg_plan_hist_deps(dg_plan_hctx_t *c, const dg_plan_hist_t *h, const dg_plan_spans_t *s,
                       int write, dg_plan_u64vec_t *deps)
{
    if (!s->n || !h->n)
        return;
    uint64_t lo = dg_plan_spans_lo(s), hi = dg_plan_spans_hi(s);
    c->nhits = 0;
    query(c, h->writes, lo, hi, s);
    if (write)
        query(c, h->reads, lo, hi, s);
    for (uint32_t i = 0; i < c->nhits; i++)
        dg_plan_u64vec_push(c->mem, deps, c->hits[i]->id);
}

/* Removes the elements of s from every entry of *root (a write covers them). */
static void prune(dg_plan_hctx_t *c, dg_plan_hist_t *h, dg_plan_hnode_t **root,
                  const dg_plan_spans_t *s)
{
    if (!*root)
        return;
    uint64_t lo = dg_plan_spans_lo(s), hi = dg_plan_spans_hi(s);
    /* One range that holds every entry's bounding box (a task writing its
     * whole chunk): all of them go, without queries or differences. */
    if (s->n == 1 && (*root)->maxhi <= hi && min_lo(*root) >= lo) {
        h->n -= free_tree(c, *root);
        *root = NULL;
        return;
    }
    c->nhits = 0;
    query(c, *root, lo, hi, s);
    for (uint32_t i = 0; i < c->nhits; i++) {
        dg_plan_hnode_t *n = c->hits[i];
        *root = erase(*root, n);
        n->l = n->r = NULL;
        if (s->n == 1 && n->lo >= lo && n->hi <= hi) { /* covered: nothing is left */
            free_node(c, n);
            h->n--;
            continue;
        }
        dg_plan_spans_diff(c->mem, &c->tmp, &n->spans, s);
        if (!c->tmp.n) {
            free_node(c, n);
            h->n--;
            continue;
        }
        node_set(c, n, &c->tmp);
        n->lo = dg_plan_spans_lo(&n->spans);
        n->hi = n->maxhi = dg_plan_spans_hi(&n->spans);
        *root = insert(*root, n);
    }
}

void dg_plan_hist_add(dg_plan_hctx_t *c, dg_plan_hist_t *h, const dg_plan_spans_t *s, int write,
                      uint64_t id)
{
    if (!s->n)
        return;
    if (write) {
        prune(c, h, &h->writes, s);
        prune(c, h, &h->reads, s);
    }
    dg_plan_hnode_t *n = dg_plan_mem_alloc(c->mem, sizeof(*n));
    if (!n)
        return;
    memset(n, 0, sizeof(*n));
    node_set(c, n, s);
    n->lo = dg_plan_spans_lo(s);
    n->hi = n->maxhi = dg_plan_spans_hi(s);
    n->key = ++c->next_key;
    n->prio = node_prio(n->key);
    n->id = id;
    n->write = (uint32_t)write;
    if (write)
        h->writes = insert(h->writes, n);
    else
        h->reads = insert(h->reads, n);
    h->n++;
}

/* Keeps the nodes with id >= below: the survivors of both subtrees joined
 * under t, or merged when t goes (order and heap property both hold). */
static dg_plan_hnode_t *keep_recent(dg_plan_hctx_t *c, dg_plan_hist_t *h, dg_plan_hnode_t *t,
                                    uint64_t below)
{
    if (!t)
        return NULL;
    dg_plan_hnode_t *l = keep_recent(c, h, t->l, below), *r = keep_recent(c, h, t->r, below);
    if (t->id >= below) {
        t->l = l;
        t->r = r;
        update(t);
        return t;
    }
    free_node(c, t);
    h->n--;
    return merge(l, r);
}

void dg_plan_hist_forget(dg_plan_hctx_t *c, dg_plan_hist_t *h, uint64_t below)
{
    if (h->n < h->sweep_at || !below)
        return;
    h->writes = keep_recent(c, h, h->writes, below);
    h->reads = keep_recent(c, h, h->reads, below);
    h->sweep_at = DG_MAX((uint32_t)DG_PLAN_HIST_SWEEP_MIN, 2 * h->n);
}

static void walk(const dg_plan_hnode_t *t,
                 void (*fn)(void *ctx, uint64_t id, int write, const dg_plan_spans_t *s), void *ctx)
{
    for (; t; t = t->r) {
        walk(t->l, fn, ctx);
        fn(ctx, t->id, (int)t->write, &t->spans);
    }
}

void dg_plan_hist_foreach(const dg_plan_hist_t *h,
                          void (*fn)(void *ctx, uint64_t id, int write, const dg_plan_spans_t *s),
                          void *ctx)
{
    walk(h->writes, fn, ctx);
    walk(h->reads, fn, ctx);
}
