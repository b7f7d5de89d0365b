/* Placement (DESIGN.md section 7): the scope filters processors; the owner
 * of the most written bytes computes, then the owner of the most read bytes,
 * then the lowest rank; within the rank a GPU only when the scope opts in and
 * the codelet has that implementation. Inputs are the task's accesses
 * (p->acc), the scopes and the processor table only. */
#include <stdio.h>

#include "core/plan/planner_internal.h"

/* "CPU|CUDA" for a kind mask (buf holds 40 bytes). */
static const char *kinds_str(uint32_t kinds, char *buf)
{
    static const char *names[DG_PLAN_NKINDS] = {"CPU", "CUDA", "HIP", "test device"};
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < DG_PLAN_NKINDS; k++)
        if (kinds & DG_PLAN_KIND_BIT(k))
            n += (size_t)snprintf(buf + n, 40 - n, "%s%s", n ? "|" : "", names[k]);
    return n ? buf : "none";
}

/* "; no rank has a test device" when the allowed device kinds exist on no
 * rank, else "" (buf holds 160 bytes). */
static const char *missing_kinds(const dg_plan_t *p, uint32_t want, char *buf)
{
    char names[40];
    uint32_t have = 0;
    for (int32_t r = 0; r < p->prm.nranks; r++)
        for (int k = 0; k < DG_PLAN_NKINDS; k++)
            have |= p->ranks[r].n[k] ? DG_PLAN_KIND_BIT(k) : 0;
    uint32_t none = want & DG_PLAN_DEVICE_KINDS & ~have;
    if (!none)
        return "";
    snprintf(buf, 160, "; no rank has a device of kind %s%s", kinds_str(none, names),
             none & DG_PLAN_KIND_BIT(DG_PLAN_TESTDEV) ? " (DAGGER_TEST_DEVICES=N gives each "
             "rank N test devices)" : "");
    return buf;
}

/* Owner computes: among allowed owner ranks of the arguments, the one with
 * the most written bytes, then most read bytes, then the lowest rank. */
static int32_t owner_rank(const dg_plan_t *p, const dg_plan_scopes_t *sc)
{
    /* One owner for every argument (every task of a 1-rank run, most of a
     * distributed one): the loop below would pick it, if the scope allows. */
    int32_t one = -1;
    for (uint32_t i = 0; i < p->nacc && one != -2; i++)
        if (p->acc[i].arg != UINT32_MAX)
            one = one == -1 || one == p->acc[i].c->owner ? p->acc[i].c->owner : -2;
    if (one >= 0)
        return dg_plan_scopes_rank_ok(p, sc, one) ? one : dg_plan_scopes_lowest_rank(p, sc);
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
        if (seen || !dg_plan_scopes_rank_ok(p, sc, r))
            continue;
        if (best < 0 || w > bw || (w == bw && (rd > br || (rd == br && r < best)))) {
            best = r;
            bw = w;
            br = rd;
        }
    }
    return best >= 0 ? best : dg_plan_scopes_lowest_rank(p, sc);
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
        uint64_t b = bytes_current(p, r, 1 + cand[i] - pr->n[DG_PLAN_CPU]);
        if (i == 0 || b > best) {
            best = b;
            ntied = 0;
        }
        if (b == best)
            cand[ntied++] = cand[i];
    }
    return cand[task % ntied];
}

/* The common case, no task scope and a region scope without lists, on CPUs:
 * only the kinds and the accesses count, and the general path below gives
 * the same answer after scope tests that all pass (placement is on the
 * submission's critical path: tasks without arguments are planned at the
 * submitting thread's speed). 0: not that case, or nothing fits (the
 * general path explains). */
static int place_unscoped(const dg_plan_t *p, const dg_plan_codelet_t *cl,
                          const dg_plan_scope_t *scope, dg_plan_loc_t *loc, uint32_t *proc)
{
    const dg_plan_scope_t *rs = p->in_region ? &p->rscope.s : NULL;
    if (scope || (rs && (rs->nranks || rs->nprocs || rs->nparts)))
        return 0;
    uint32_t want = rs && rs->kinds ? rs->kinds : DG_PLAN_KIND_BIT(DG_PLAN_CPU);
    dg_plan_scopes_t sc = {{NULL, NULL}, want & cl->kinds};
    if (!sc.kinds || (sc.kinds & DG_PLAN_DEVICE_KINDS))
        return 0;
    int32_t r = p->nacc ? owner_rank(p, &sc) : p->lowest_any[sc.kinds];
    if (r < 0)
        return 0;
    *loc = (dg_plan_loc_t){r, 0};
    *proc = DG_PLAN_ANY_CPU;
    return 1;
}

dagger_status_t dg_plan_place(dg_plan_t *p, uint64_t task, const dg_plan_codelet_t *cl,
                              const dg_plan_scope_t *scope, dg_plan_loc_t *loc, uint32_t *proc,
                              char *why, size_t len)
{
    if (place_unscoped(p, cl, scope, loc, proc))
        return DAGGER_OK;
    dg_plan_scopes_t sc;
    uint32_t want;
    dg_plan_scopes_init(&sc, scope, p->in_region ? &p->rscope.s : NULL, cl->kinds, &want);
    int32_t r = sc.kinds ? owner_rank(p, &sc) : -1;
    if (r < 0) {
        char k1[40], k2[40], k3[160];
        snprintf(why, len,
                 "no processor satisfies the scope (kinds allowed: %s; the codelet implements: "
                 "%s%s%s%s); widen the task or region scope, or register the implementation",
                 kinds_str(want, k1), kinds_str(cl->kinds, k2), missing_kinds(p, want, k3),
                 scope && (scope->nranks || scope->nprocs || scope->nparts) ? "; the task scope "
                 "lists ranks/processors or is a union" : "", p->rscope.s.nranks ||
                 p->rscope.s.nprocs || p->rscope.s.nparts ? "; the region scope lists "
                 "ranks/processors or is a union" : "");
        return DAGGER_ERR_SCOPE;
    }
    const dg_plan_prank_t *pr = &p->ranks[r];
    uint32_t nloc = dg_plan_rank_nprocs(pr);
    uint32_t stack[256], n = 0; /* a rank has at most 256 devices (procs.c) */
    if (sc.kinds & DG_PLAN_DEVICE_KINDS)
        for (uint32_t l = pr->n[DG_PLAN_CPU]; l < nloc && n < 256; l++)
            if (dg_plan_scopes_proc_ok(p, &sc, r, l))
                stack[n++] = l;
    if (n) {
        uint32_t l = pick_device(p, r, task, stack, n);
        *loc = (dg_plan_loc_t){r, 1 + l - pr->n[DG_PLAN_CPU]};
        *proc = pr->first_proc + l;
        return DAGGER_OK;
    }
    *loc = (dg_plan_loc_t){r, 0};
    *proc = DG_PLAN_ANY_CPU;
    /* Only named CPU threads: the task id picks one, alike everywhere. */
    uint32_t k = dg_plan_scopes_cpus(p, &sc, r, stack, 256);
    if (k)
        *proc = stack[task % k];
    return DAGGER_OK;
}

dagger_status_t dg_plan_scope_region(const dg_plan_t *p, const dg_plan_scope_t *scope, char *why,
                                     size_t len)
{
    dagger_status_t st = dg_plan_scope_check(p, scope, why, len);
    if (st != DAGGER_OK || !scope)
        return st;
    /* Some processor of any kind must be in it: tasks opt into GPUs themselves. */
    uint32_t k = dg_plan_scope_kinds(scope);
    dg_plan_scopes_t sc = {{scope, NULL}, k ? k : DG_PLAN_KINDS_ALL};
    if (dg_plan_scopes_lowest_rank(p, &sc) >= 0)
        return DAGGER_OK;
    char k1[40];
    snprintf(why, len, "no processor satisfies it (kinds allowed: %s%s%s%s); widen it",
             kinds_str(sc.kinds, k1), scope->nranks ? ", on the ranks it lists" : "",
             scope->nprocs ? ", among the processors it lists" : "",
             scope->nparts ? ", in any part of its union" : "");
    return DAGGER_ERR_SCOPE;
}
