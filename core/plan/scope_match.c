/* Scope membership: which processors a task scope and a region scope admit
 * together (docs/planner.md section 3), decided per (rank, kind) without
 * looping over processors: each scope admits none, only the processors its
 * lists name, or all of that rank's processors of that kind. */
#include "core/plan/planner_internal.h"

uint32_t dg_plan_scope_kinds(const dg_plan_scope_t *s)
{
    if (!s)
        return 0;
    /* Naming exact processors opts into their kinds; a union's parts say
     * which kinds they admit. */
    return s->kinds ? s->kinds : (s->nprocs || s->nparts ? DG_PLAN_KINDS_ALL : 0);
}

static const dg_plan_scope_t *with_lists(const dg_plan_scope_t *s)
{
    return s && (s->nranks || s->nprocs || s->nparts) ? s : NULL;
}

/* The kinds one part of a union admits: on its own, a part means what a scope
 * alone would (no kinds: CPU only, unless it names processors). */
static uint32_t part_kinds(const dg_plan_scope_t *s)
{
    return s->kinds ? s->kinds : (s->nprocs ? DG_PLAN_KINDS_ALL : DG_PLAN_KIND_BIT(DG_PLAN_CPU));
}

static int in_ranks(const dg_plan_scope_t *s, int32_t r)
{
    if (!s->nranks)
        return 1;
    for (uint32_t i = 0; i < s->nranks; i++)
        if (s->ranks[i] == r)
            return 1;
    return 0;
}

static int in_procs(const dg_plan_scope_t *s, uint32_t q)
{
    if (!s->nprocs)
        return 1;
    for (uint32_t i = 0; i < s->nprocs; i++)
        if (s->procs[i] == q)
            return 1;
    return 0;
}

/* Processor q (rank r, kind k) is in scope s: its own lists, and one part of
 * its union. Its own kinds are already in dg_plan_scopes_t.kinds. */
static int in_scope(const dg_plan_scope_t *s, int32_t r, uint32_t q, dg_plan_kind_t k)
{
    if (!s)
        return 1;
    if (!in_ranks(s, r) || !in_procs(s, q))
        return 0;
    for (uint32_t i = 0; i < s->nparts; i++) {
        const dg_plan_scope_t *u = &s->parts[i];
        if ((part_kinds(u) & DG_PLAN_KIND_BIT(k)) && in_ranks(u, r) && in_procs(u, q))
            return 1;
    }
    return !s->nparts;
}

/* Processor q (local index of rank r) is allowed by every filter. */
int dg_plan_scopes_proc_ok(const dg_plan_t *p, const dg_plan_scopes_t *sc, int32_t r,
                           uint32_t local)
{
    const dg_plan_prank_t *pr = &p->ranks[r];
    uint32_t q = pr->first_proc + local;
    dg_plan_kind_t k = dg_plan_kind_of(pr, local);
    return (sc->kinds & DG_PLAN_KIND_BIT(k)) && in_scope(sc->s[0], r, q, k) &&
           in_scope(sc->s[1], r, q, k);
}

/* How much of (rank r, kind k) a scope admits, without looking at single
 * processors: NONE, SOME (only processors its lists name) or ALL. */
enum { NONE = 0, SOME = 1, ALL = 2 };

static int conj_class(const dg_plan_scope_t *s, int32_t r, uint32_t kinds, dg_plan_kind_t k)
{
    if (!(kinds & DG_PLAN_KIND_BIT(k)) || !in_ranks(s, r))
        return NONE;
    return s->nprocs ? SOME : ALL;
}

static int scope_class(const dg_plan_scope_t *s, int32_t r, dg_plan_kind_t k)
{
    if (!s)
        return ALL;
    int top = conj_class(s, r, DG_PLAN_KINDS_ALL, k);
    if (top == NONE || !s->nparts)
        return top;
    int any = NONE;
    for (uint32_t i = 0; i < s->nparts && any < ALL; i++) {
        int c = conj_class(&s->parts[i], r, part_kinds(&s->parts[i]), k);
        any = c > any ? c : any;
    }
    return any < top ? any : top;
}

static int both_class(const dg_plan_t *p, const dg_plan_scopes_t *sc, int32_t r, dg_plan_kind_t k)
{
    if (!(sc->kinds & DG_PLAN_KIND_BIT(k)) || !p->ranks[r].n[k])
        return NONE;
    int a = scope_class(sc->s[0], r, k), b = scope_class(sc->s[1], r, k);
    return a < b ? a : b;
}

static void push_listed(const dg_plan_t *p, const dg_plan_scopes_t *sc, int32_t r, dg_plan_kind_t k,
                        const dg_plan_scope_t *s, uint32_t *out, uint32_t *n, uint32_t cap)
{
    const dg_plan_prank_t *pr = &p->ranks[r];
    for (uint32_t i = 0; i < s->nprocs && *n < cap; i++) {
        uint32_t q = s->procs[i];
        if (q >= pr->first_proc && q < pr->first_proc + dg_plan_rank_nprocs(pr) &&
            dg_plan_kind_of(pr, q - pr->first_proc) == k &&
            dg_plan_scopes_proc_ok(p, sc, r, q - pr->first_proc))
            out[(*n)++] = q;
    }
}

/* The processors of kind k on rank r that some list names and every filter
 * allows, sorted and without repeats (so list order does not matter); at most
 * cap of them. */
static uint32_t listed(const dg_plan_t *p, const dg_plan_scopes_t *sc, int32_t r, dg_plan_kind_t k,
                       uint32_t *out, uint32_t cap)
{
    uint32_t n = 0;
    for (int j = 0; j < 2; j++) {
        const dg_plan_scope_t *s = sc->s[j];
        if (!s)
            continue;
        push_listed(p, sc, r, k, s, out, &n, cap);
        for (uint32_t i = 0; i < s->nparts; i++)
            push_listed(p, sc, r, k, &s->parts[i], out, &n, cap);
    }
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
            uint32_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!m || out[m - 1] != out[i])
            out[m++] = out[i];
    return m;
}

int dg_plan_scopes_rank_ok(const dg_plan_t *p, const dg_plan_scopes_t *sc, int32_t r)
{
    if (!sc->s[0] && !sc->s[1]) { /* no scope (the common case): only the kinds count */
        const dg_plan_prank_t *pr = &p->ranks[r];
        for (int k = 0; k < DG_PLAN_NKINDS; k++)
            if ((sc->kinds & DG_PLAN_KIND_BIT(k)) && pr->n[k])
                return 1;
        return 0;
    }
    for (int k = DG_PLAN_CPU; k < DG_PLAN_NKINDS; k++) {
        int c = both_class(p, sc, r, (dg_plan_kind_t)k);
        uint32_t one;
        if (c == ALL || (c == SOME && listed(p, sc, r, (dg_plan_kind_t)k, &one, 1)))
            return 1;
    }
    return 0;
}

/* The lowest allowed rank among those scope s can name, when its lists bound
 * them (*bounded = 1): its rank list, else its processors, else its parts'. */
static int32_t lowest_in(const dg_plan_t *p, const dg_plan_scopes_t *sc, const dg_plan_scope_t *s,
                         int *bounded)
{
    int32_t best = -1;
    *bounded = 1;
    if (s->nranks) {
        for (uint32_t i = 0; i < s->nranks; i++)
            if ((best < 0 || s->ranks[i] < best) && dg_plan_scopes_rank_ok(p, sc, s->ranks[i]))
                best = s->ranks[i];
        return best;
    }
    if (s->nprocs) {
        for (uint32_t i = 0; i < s->nprocs; i++) {
            int32_t r;
            dg_plan_proc_info(p, s->procs[i], &r, NULL, NULL);
            if ((best < 0 || r < best) && dg_plan_scopes_rank_ok(p, sc, r))
                best = r;
        }
        return best;
    }
    for (uint32_t i = 0; i < s->nparts; i++)
        if (!s->parts[i].nranks && !s->parts[i].nprocs)
            *bounded = 0;
    if (!s->nparts || !*bounded) {
        *bounded = 0;
        return -1;
    }
    for (uint32_t i = 0; i < s->nparts; i++) {
        int b;
        int32_t r = lowest_in(p, sc, &s->parts[i], &b);
        if (r >= 0 && (best < 0 || r < best))
            best = r;
    }
    return best;
}

/* The lowest allowed rank, walking the lists that bound it when there are. */
int32_t dg_plan_scopes_lowest_rank(const dg_plan_t *p, const dg_plan_scopes_t *sc)
{
    if (!sc->s[0] && !sc->s[1]) /* no lists: only the kinds count (dg_plan_procs_init) */
        return p->lowest_any[sc->kinds & DG_PLAN_KINDS_ALL];
    for (int k = 0; k < 2; k++) {
        int bounded;
        int32_t r = sc->s[k] ? lowest_in(p, sc, sc->s[k], &bounded) : -1;
        if (sc->s[k] && bounded)
            return r;
    }
    for (int32_t r = 0; r < p->prm.nranks; r++)
        if (dg_plan_scopes_rank_ok(p, sc, r))
            return r;
    return -1;
}

void dg_plan_scopes_init(dg_plan_scopes_t *sc, const dg_plan_scope_t *task,
                         const dg_plan_scope_t *region, uint32_t impl, uint32_t *want)
{
    /* Kinds are taken from both; for membership a scope without lists or
     * parts is no restriction (so the default path skips the class tests). */
    uint32_t a = dg_plan_scope_kinds(task), b = dg_plan_scope_kinds(region);
    *want = a && b ? a & b : (a ? a : (b ? b : DG_PLAN_KIND_BIT(DG_PLAN_CPU)));
    sc->s[0] = with_lists(task);
    sc->s[1] = with_lists(region);
    /* Test devices run the codelet's CPU implementation on their memory. */
    if (impl & DG_PLAN_KIND_BIT(DG_PLAN_CPU))
        impl |= DG_PLAN_KIND_BIT(DG_PLAN_TESTDEV);
    sc->kinds = *want & impl;
}

uint32_t dg_plan_scopes_cpus(const dg_plan_t *p, const dg_plan_scopes_t *sc, int32_t r,
                             uint32_t *out, uint32_t cap)
{
    if ((!sc->s[0] && !sc->s[1]) || both_class(p, sc, r, DG_PLAN_CPU) != SOME)
        return 0;
    return listed(p, sc, r, DG_PLAN_CPU, out, cap);
}
