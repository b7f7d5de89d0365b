/* Placement (DESIGN.md section 7): the scope filters processors; the owner
 * of the most written bytes computes, then the owner of the most read bytes,
 * then the lowest rank; within the rank a GPU only when the scope opts in and
 * the codelet has that implementation. Inputs are the task's accesses
 * (p->acc), the scopes and the processor table only. */
#include <stdio.h>

#include "core/plan/planner_internal.h"

#define GPU_KINDS (DG_PLAN_KIND_BIT(DG_PLAN_CUDA) | DG_PLAN_KIND_BIT(DG_PLAN_HIP))

typedef struct scopes {
    const dg_plan_scope_t *s[2]; /* task scope, region scope (either may be NULL) */
    uint32_t kinds;              /* effective kinds, already limited to the codelet's */
} scopes_t;

static uint32_t scope_kinds(const dg_plan_scope_t *s)
{
    if (!s)
        return 0;
    /* Naming exact processors opts into their kinds; a union's parts say
     * which kinds they admit. */
    return s->kinds ? s->kinds : (s->nprocs || s->nparts ? DG_PLAN_KINDS_ALL : 0);
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
 * its union. Its own kinds are already in scopes_t.kinds. */
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

static dg_plan_kind_t kind_of(const dg_plan_prank_t *r, uint32_t local)
{
    if (local < r->ncpus)
        return DG_PLAN_CPU;
    return local < r->ncpus + r->ncuda ? DG_PLAN_CUDA : DG_PLAN_HIP;
}

static uint32_t kind_count(const dg_plan_prank_t *r, dg_plan_kind_t k)
{
    return k == DG_PLAN_CPU ? r->ncpus : (k == DG_PLAN_CUDA ? r->ncuda : r->nhip);
}

/* Processor q (local index of rank r) is allowed by every filter. */
static int proc_ok(const dg_plan_t *p, const scopes_t *sc, int32_t r, uint32_t local)
{
    const dg_plan_prank_t *pr = &p->ranks[r];
    uint32_t q = pr->first_proc + local;
    dg_plan_kind_t k = kind_of(pr, local);
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

static int both_class(const dg_plan_t *p, const scopes_t *sc, int32_t r, dg_plan_kind_t k)
{
    if (!(sc->kinds & DG_PLAN_KIND_BIT(k)) || !kind_count(&p->ranks[r], k))
        return NONE;
    int a = scope_class(sc->s[0], r, k), b = scope_class(sc->s[1], r, k);
    return a < b ? a : b;
}

static void push_listed(const dg_plan_t *p, const scopes_t *sc, int32_t r, dg_plan_kind_t k,
                        const dg_plan_scope_t *s, uint32_t *out, uint32_t *n, uint32_t cap)
{
    const dg_plan_prank_t *pr = &p->ranks[r];
    for (uint32_t i = 0; i < s->nprocs && *n < cap; i++) {
        uint32_t q = s->procs[i];
        if (q >= pr->first_proc && q < pr->first_proc + pr->ncpus + pr->ncuda + pr->nhip &&
            kind_of(pr, q - pr->first_proc) == k && proc_ok(p, sc, r, q - pr->first_proc))
            out[(*n)++] = q;
    }
}

/* The processors of kind k on rank r that some list names and every filter
 * allows, sorted and without repeats (so list order does not matter); at most
 * cap of them. */
static uint32_t listed(const dg_plan_t *p, const scopes_t *sc, int32_t r, dg_plan_kind_t k,
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

static int rank_ok(const dg_plan_t *p, const scopes_t *sc, int32_t r)
{
    for (int k = DG_PLAN_CPU; k <= DG_PLAN_HIP; k++) {
        int c = both_class(p, sc, r, (dg_plan_kind_t)k);
        uint32_t one;
        if (c == ALL || (c == SOME && listed(p, sc, r, (dg_plan_kind_t)k, &one, 1)))
            return 1;
    }
    return 0;
}

/* The lowest allowed rank among those scope s can name, when its lists bound
 * them (*bounded = 1): its rank list, else its processors, else its parts'. */
static int32_t lowest_in(const dg_plan_t *p, const scopes_t *sc, const dg_plan_scope_t *s,
                         int *bounded)
{
    int32_t best = -1;
    *bounded = 1;
    if (s->nranks) {
        for (uint32_t i = 0; i < s->nranks; i++)
            if ((best < 0 || s->ranks[i] < best) && rank_ok(p, sc, s->ranks[i]))
                best = s->ranks[i];
        return best;
    }
    if (s->nprocs) {
        for (uint32_t i = 0; i < s->nprocs; i++) {
            int32_t r;
            dg_plan_proc_info(p, s->procs[i], &r, NULL, NULL);
            if ((best < 0 || r < best) && rank_ok(p, sc, r))
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
static int32_t lowest_rank(const dg_plan_t *p, const scopes_t *sc)
{
    for (int k = 0; k < 2; k++) {
        int bounded;
        int32_t r = sc->s[k] ? lowest_in(p, sc, sc->s[k], &bounded) : -1;
        if (sc->s[k] && bounded)
            return r;
    }
    for (int32_t r = 0; r < p->prm.nranks; r++)
        if (rank_ok(p, sc, r))
            return r;
    return -1;
}

/* "CPU|CUDA" for a kind mask (buf holds 24 bytes). */
static const char *kinds_str(uint32_t kinds, char *buf)
{
    static const char *names[] = {"CPU", "CUDA", "HIP"};
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < 3; k++)
        if (kinds & DG_PLAN_KIND_BIT(k))
            n += (size_t)snprintf(buf + n, 24 - n, "%s%s", n ? "|" : "", names[k]);
    return n ? buf : "none";
}

/* Owner computes: among allowed owner ranks of the arguments, the one with
 * the most written bytes, then most read bytes, then the lowest rank. */
static int32_t owner_rank(const dg_plan_t *p, const scopes_t *sc)
{
    int32_t best = -1;
    uint64_t bw = 0, br = 0;
    for (uint32_t i = 0; i < p->nacc; i++) {
        const dg_plan_acc_t *a = &p->acc[i];
        int32_t r = a->c->owner;
        if (a->arg == UINT32_MAX || r == best)
            continue;
        uint64_t w = 0, rd = 0;
        int seen = 0;
        for (uint32_t j = 0; j < p->nacc; j++) {
            const dg_plan_acc_t *b = &p->acc[j];
            if (b->arg == UINT32_MAX || b->c->owner != r)
                continue;
            if (j < i) {
                seen = 1;
                break;
            }
            uint64_t bytes = dg_plan_spans_count(&b->spans) * b->c->g.elsize;
            w += b->write ? bytes : 0;
            rd += b->read ? bytes : 0;
        }
        if (seen || !rank_ok(p, sc, r))
            continue;
        if (best < 0 || w > bw || (w == bw && (rd > br || (rd == br && r < best)))) {
            best = r;
            bw = w;
            br = rd;
        }
    }
    return best >= 0 ? best : lowest_rank(p, sc);
}

/* Argument bytes already current in memory space `space` of rank r. */
static uint64_t bytes_current(dg_plan_t *p, int32_t r, uint32_t space)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < p->nacc; i++) {
        dg_plan_acc_t *a = &p->acc[i];
        if (a->arg == UINT32_MAX)
            continue;
        dg_plan_cur_t *cu = dg_plan_cur_find(a->c, (dg_plan_loc_t){r, space});
        if (cu)
            sum += dg_plan_spans_inter_count(&a->spans, &cu->cur) * a->c->g.elsize;
    }
    return sum;
}

/* Picks among the n allowed processors (local indices in cand) the one with
 * the most argument bytes current in its space, ties by task id. */
static uint32_t pick_device(dg_plan_t *p, int32_t r, uint64_t task, uint32_t *cand, uint32_t n)
{
    const dg_plan_prank_t *pr = &p->ranks[r];
    uint64_t best = 0;
    uint32_t ntied = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t b = bytes_current(p, r, 1 + cand[i] - pr->ncpus);
        if (i == 0 || b > best) {
            best = b;
            ntied = 0;
        }
        if (b == best)
            cand[ntied++] = cand[i];
    }
    return cand[task % ntied];
}

dagger_status_t dg_plan_place(dg_plan_t *p, uint64_t task, const dg_plan_codelet_t *cl,
                              const dg_plan_scope_t *scope, dg_plan_loc_t *loc, uint32_t *proc,
                              char *why, size_t len)
{
    scopes_t sc = {{scope, p->in_region ? &p->rscope.s : NULL}, 0};
    uint32_t a = scope_kinds(sc.s[0]), b = scope_kinds(sc.s[1]);
    uint32_t want = a && b ? a & b : (a ? a : (b ? b : DG_PLAN_KIND_BIT(DG_PLAN_CPU)));
    sc.kinds = want & cl->kinds;
    int32_t r = sc.kinds ? owner_rank(p, &sc) : -1;
    if (r < 0) {
        char k1[24], k2[24];
        snprintf(why, len,
                 "no processor satisfies the scope (kinds allowed: %s; the codelet implements: "
                 "%s%s%s); widen the task or region scope, or register the implementation",
                 kinds_str(want, k1), kinds_str(cl->kinds, k2),
                 scope && (scope->nranks || scope->nprocs || scope->nparts) ? "; the task scope "
                 "lists ranks/processors or is a union" : "", p->rscope.s.nranks ||
                 p->rscope.s.nprocs || p->rscope.s.nparts ? "; the region scope lists "
                 "ranks/processors or is a union" : "");
        return DAGGER_ERR_SCOPE;
    }
    const dg_plan_prank_t *pr = &p->ranks[r];
    uint32_t nloc = pr->ncpus + pr->ncuda + pr->nhip;
    uint32_t stack[256], n = 0; /* a rank has at most 256 devices (procs.c) */
    if (sc.kinds & GPU_KINDS)
        for (uint32_t l = pr->ncpus; l < nloc && n < 256; l++)
            if (proc_ok(p, &sc, r, l))
                stack[n++] = l;
    if (n) {
        uint32_t l = pick_device(p, r, task, stack, n);
        *loc = (dg_plan_loc_t){r, 1 + l - pr->ncpus};
        *proc = pr->first_proc + l;
        return DAGGER_OK;
    }
    *loc = (dg_plan_loc_t){r, 0};
    *proc = DG_PLAN_ANY_CPU;
    if (both_class(p, &sc, r, DG_PLAN_CPU) == SOME) {
        /* Only named CPU threads: the task id picks one, alike everywhere. */
        uint32_t k = listed(p, &sc, r, DG_PLAN_CPU, stack, 256);
        if (k)
            *proc = stack[task % k];
    }
    return DAGGER_OK;
}

dagger_status_t dg_plan_scope_region(const dg_plan_t *p, const dg_plan_scope_t *scope, char *why,
                                     size_t len)
{
    dagger_status_t st = dg_plan_scope_check(p, scope, why, len);
    if (st != DAGGER_OK || !scope)
        return st;
    /* Some processor of any kind must be in it: tasks opt into GPUs themselves. */
    uint32_t k = scope_kinds(scope);
    scopes_t sc = {{scope, NULL}, k ? k : DG_PLAN_KINDS_ALL};
    if (lowest_rank(p, &sc) >= 0)
        return DAGGER_OK;
    char k1[24];
    snprintf(why, len, "no processor satisfies it (kinds allowed: %s%s%s%s); widen it",
             kinds_str(sc.kinds, k1), scope->nranks ? ", on the ranks it lists" : "",
             scope->nprocs ? ", among the processors it lists" : "",
             scope->nparts ? ", in any part of its union" : "");
    return DAGGER_ERR_SCOPE;
}
