/* The processor table and scopes. Global processor ids sort processors by
 * (rank, kind, index); a rank's devices are memory spaces 1.. in the same
 * (kind, index) order, so every rank numbers them alike. */
#include <stdio.h>
#include <string.h>

#include "core/hash.h"
#include "core/plan/uhash.h"
#include "core/plan/planner_internal.h"
#include "core/status_internal.h"

dagger_status_t dg_plan_procs_init(dg_plan_t *p)
{
    p->ranks = dg_plan_mem_alloc(&p->mem, (size_t)p->prm.nranks * sizeof(*p->ranks));
    if (!p->ranks)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan_create: out of memory");
    uint32_t next = 0;
    for (int32_t r = 0; r < p->prm.nranks; r++) {
        const dg_plan_rank_desc_t *d = &p->prm.ranks[r];
        if (d->ncpus < 1 || d->ncpus > 65536 || d->ndevs > 256 || (d->ndevs && !d->devs))
            return dg_error(DAGGER_ERR_INVALID_ARG,
                            "dg_plan_create: rank %d has %u CPU threads and %u devices; every rank "
                            "needs 1..65536 threads and at most 256 devices (with their kinds)",
                            r, d->ncpus, d->ndevs);
        dg_plan_prank_t *pr = &p->ranks[r];
        memset(pr, 0, sizeof(*pr));
        pr->ncpus = d->ncpus;
        for (uint32_t i = 0; i < d->ndevs; i++) {
            if (d->devs[i] == DG_PLAN_CUDA)
                pr->ncuda++;
            else if (d->devs[i] == DG_PLAN_HIP)
                pr->nhip++;
            else
                return dg_error(DAGGER_ERR_INVALID_ARG,
                                "dg_plan_create: device %u of rank %d has kind %d; use "
                                "DG_PLAN_CUDA or DG_PLAN_HIP", i, r, (int)d->devs[i]);
        }
        pr->first_proc = next;
        next += pr->ncpus + pr->ncuda + pr->nhip;
    }
    p->nprocs = next;
    return DAGGER_OK;
}

uint32_t dg_plan_nprocs(const dg_plan_t *p)
{
    return p->nprocs;
}

dagger_status_t dg_plan_proc_id(const dg_plan_t *p, int32_t rank, dg_plan_kind_t kind,
                                uint32_t index, uint32_t *id)
{
    DG_CHECK_ARG(p && id, "dg_plan_proc_id: NULL argument");
    DG_CHECK_ARG(rank >= 0 && rank < p->prm.nranks, "dg_plan_proc_id: rank %d of %d", rank,
                 p->prm.nranks);
    const dg_plan_prank_t *r = &p->ranks[rank];
    uint32_t base = r->first_proc, n;
    switch (kind) {
    case DG_PLAN_CPU: n = r->ncpus; break;
    case DG_PLAN_CUDA: base += r->ncpus; n = r->ncuda; break;
    case DG_PLAN_HIP: base += r->ncpus + r->ncuda; n = r->nhip; break;
    default: return dg_error(DAGGER_ERR_INVALID_ARG, "dg_plan_proc_id: unknown kind %d", kind);
    }
    if (index >= n)
        return dg_error(DAGGER_ERR_NOT_FOUND,
                        "dg_plan_proc_id: rank %d has %u processors of kind %d, not index %u",
                        rank, n, kind, index);
    *id = base + index;
    return DAGGER_OK;
}

dagger_status_t dg_plan_proc_info(const dg_plan_t *p, uint32_t id, int32_t *rank,
                                  dg_plan_kind_t *kind, uint32_t *index)
{
    DG_CHECK_ARG(p, "dg_plan_proc_info: NULL planner");
    if (id >= p->nprocs)
        return dg_error(DAGGER_ERR_NOT_FOUND, "dg_plan_proc_info: processor %u of %u", id,
                        p->nprocs);
    int32_t lo = 0, hi = p->prm.nranks - 1;
    while (lo < hi) { /* the last rank whose first processor is <= id */
        int32_t mid = lo + (hi - lo + 1) / 2;
        if (p->ranks[mid].first_proc <= id)
            lo = mid;
        else
            hi = mid - 1;
    }
    const dg_plan_prank_t *r = &p->ranks[lo];
    uint32_t k = id - r->first_proc;
    dg_plan_kind_t kd = DG_PLAN_CPU;
    if (k >= r->ncpus + r->ncuda) {
        kd = DG_PLAN_HIP;
        k -= r->ncpus + r->ncuda;
    } else if (k >= r->ncpus) {
        kd = DG_PLAN_CUDA;
        k -= r->ncpus;
    }
    if (rank)
        *rank = lo;
    if (kind)
        *kind = kd;
    if (index)
        *index = k;
    return DAGGER_OK;
}

dagger_status_t dg_plan_scope_check(const dg_plan_t *p, const dg_plan_scope_t *s, char *why,
                                    size_t len)
{
    if (!s)
        return DAGGER_OK;
    if ((s->nranks && !s->ranks) || (s->nprocs && !s->procs)) {
        snprintf(why, len, "a scope list has a count but no entries");
        return DAGGER_ERR_INVALID_ARG;
    }
    if (s->kinds & ~DG_PLAN_KINDS_ALL) {
        snprintf(why, len, "scope kinds 0x%x has unknown bits (use DG_PLAN_KIND_BIT)", s->kinds);
        return DAGGER_ERR_INVALID_ARG;
    }
    /* Naming what does not exist is a scope nothing satisfies. */
    for (uint32_t i = 0; i < s->nranks; i++)
        if (s->ranks[i] < 0 || s->ranks[i] >= p->prm.nranks) {
            snprintf(why, len, "the scope names rank %d, but the job has %d ranks (0 to %d)",
                     s->ranks[i], p->prm.nranks, p->prm.nranks - 1);
            return DAGGER_ERR_SCOPE;
        }
    for (uint32_t i = 0; i < s->nprocs; i++)
        if (s->procs[i] >= p->nprocs) {
            snprintf(why, len, "the scope names processor %d, but the job has %u processors "
                     "(0 to %u)", (int)s->procs[i], p->nprocs, p->nprocs - 1);
            return DAGGER_ERR_SCOPE;
        }
    return DAGGER_OK;
}

void dg_plan_scope_hash(uint64_t *h, const dg_plan_scope_t *s)
{
    if (!s) {
        *h = dg_plan_hmix(*h, 0x5c09e);
        return;
    }
    *h = dg_plan_hmix(*h, ((uint64_t)s->nranks << 40) ^ ((uint64_t)s->nprocs << 8) ^ s->kinds);
    if (s->nranks)
        *h = dg_plan_hbytes(*h, s->ranks, s->nranks * sizeof(*s->ranks));
    if (s->nprocs)
        *h = dg_plan_hbytes(*h, s->procs, s->nprocs * sizeof(*s->procs));
}

dagger_status_t dg_plan_scope_copy(dg_plan_t *p, dg_plan_scope_copy_t *dst,
                                   const dg_plan_scope_t *src)
{
    memset(dst, 0, sizeof(*dst));
    if (!src)
        return DAGGER_OK;
    dst->s = *src;
    if (src->nranks) {
        dst->ranks = dg_plan_mem_alloc(&p->mem, src->nranks * sizeof(*dst->ranks));
        if (!dst->ranks)
            return dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan: out of memory");
        memcpy(dst->ranks, src->ranks, src->nranks * sizeof(*dst->ranks));
    }
    if (src->nprocs) {
        dst->procs = dg_plan_mem_alloc(&p->mem, src->nprocs * sizeof(*dst->procs));
        if (!dst->procs)
            return dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan: out of memory");
        memcpy(dst->procs, src->procs, src->nprocs * sizeof(*dst->procs));
    }
    dst->s.ranks = dst->ranks;
    dst->s.procs = dst->procs;
    return DAGGER_OK;
}

void dg_plan_scope_copy_release(dg_plan_t *p, dg_plan_scope_copy_t *c)
{
    dg_plan_mem_free(&p->mem, c->ranks, c->s.nranks * sizeof(*c->ranks));
    dg_plan_mem_free(&p->mem, c->procs, c->s.nprocs * sizeof(*c->procs));
    memset(c, 0, sizeof(*c));
}
