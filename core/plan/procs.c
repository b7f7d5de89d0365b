/* The processor table and scopes. Global processor ids sort processors by
 * (rank, kind, index); a rank's devices are memory spaces 1.. in the same
 * (kind, index) order, so every rank numbers them alike. */
#include <stdio.h>
#include <string.h>

#include "core/base/hash.h"
#include "core/plan/uhash.h"
#include "core/plan/planner_internal.h"
#include "core/base/status_internal.h"

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
        pr->n[DG_PLAN_CPU] = d->ncpus;
        for (uint32_t i = 0; i < d->ndevs; i++) {
            if (d->devs[i] <= DG_PLAN_CPU || d->devs[i] >= DG_PLAN_NKINDS)
                return dg_error(DAGGER_ERR_INVALID_ARG,
                                "dg_plan_create: device %u of rank %d has kind %d; use "
                                "DG_PLAN_CUDA, DG_PLAN_HIP or DG_PLAN_TESTDEV", i, r,
                                (int)d->devs[i]);
            pr->n[d->devs[i]]++;
        }
        pr->first_proc = next;
        next += dg_plan_rank_nprocs(pr);
    }
    p->nprocs = next;
    for (uint32_t k = 0; k <= DG_PLAN_KINDS_ALL; k++) {
        dg_plan_scopes_t sc = {{NULL, NULL}, k};
        p->lowest_any[k] = -1;
        for (int32_t r = p->prm.nranks - 1; r >= 0; r--)
            if (dg_plan_scopes_rank_ok(p, &sc, r))
                p->lowest_any[k] = r;
    }
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
    if ((int)kind < 0 || kind >= DG_PLAN_NKINDS)
        return dg_error(DAGGER_ERR_INVALID_ARG, "dg_plan_proc_id: unknown kind %d", kind);
    uint32_t base = r->first_proc + dg_plan_kind_first(r, kind), n = r->n[kind];
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
    dg_plan_kind_t kd = dg_plan_kind_of(r, k);
    k -= dg_plan_kind_first(r, kd);
    if (rank)
        *rank = lo;
    if (kind)
        *kind = kd;
    if (index)
        *index = k;
    return DAGGER_OK;
}

/* One conjunction's lists. */
static dagger_status_t check_lists(const dg_plan_t *p, const dg_plan_scope_t *s, char *why,
                                   size_t len)
{
    if ((s->nranks && !s->ranks) || (s->nprocs && !s->procs) || (s->nparts && !s->parts)) {
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

dagger_status_t dg_plan_scope_check(const dg_plan_t *p, const dg_plan_scope_t *s, char *why,
                                    size_t len)
{
    if (!s)
        return DAGGER_OK;
    dagger_status_t st = check_lists(p, s, why, len);
    if (st != DAGGER_OK)
        return st;
    if (s->nparts > DG_PLAN_MAX_PARTS) {
        snprintf(why, len, "the scope is a union of %u parts; at most %d", s->nparts,
                 DG_PLAN_MAX_PARTS);
        return DAGGER_ERR_INVALID_ARG;
    }
    for (uint32_t i = 0; i < s->nparts; i++) {
        if (s->parts[i].nparts) {
            snprintf(why, len, "part %u of the scope's union has parts of its own; list them "
                     "all in one union", i);
            return DAGGER_ERR_INVALID_ARG;
        }
        char sub[200];
        st = check_lists(p, &s->parts[i], sub, sizeof(sub));
        if (st != DAGGER_OK) {
            snprintf(why, len, "part %u of the union: %s", i, sub);
            return st;
        }
    }
    return DAGGER_OK;
}

static uint64_t hash_conj(uint64_t h, const dg_plan_scope_t *s)
{
    h = dg_plan_hmix(h, ((uint64_t)s->nranks << 40) ^ ((uint64_t)s->nprocs << 8) ^ s->kinds);
    if (s->nranks)
        h = dg_plan_hbytes(h, s->ranks, s->nranks * sizeof(*s->ranks));
    if (s->nprocs)
        h = dg_plan_hbytes(h, s->procs, s->nprocs * sizeof(*s->procs));
    return h;
}

void dg_plan_scope_hash(uint64_t *h, const dg_plan_scope_t *s)
{
    if (!s) {
        *h = dg_plan_hmix(*h, 0x5c09e);
        return;
    }
    *h = hash_conj(*h, s);
    if (!s->nparts)
        return;
    *h = dg_plan_hmix(*h, 0x0410000u + s->nparts);
    for (uint32_t i = 0; i < s->nparts; i++)
        *h = hash_conj(*h, &s->parts[i]);
}

/* Copies one conjunction's lists into words at *w. */
static void copy_lists(dg_plan_scope_t *dst, const dg_plan_scope_t *src, uint32_t *words,
                       size_t *w)
{
    *dst = *src;
    dst->parts = NULL;
    dst->nparts = 0;
    if (src->nranks) {
        memcpy(words + *w, src->ranks, src->nranks * sizeof(uint32_t));
        dst->ranks = (const int32_t *)(words + *w);
        *w += src->nranks;
    }
    if (src->nprocs) {
        memcpy(words + *w, src->procs, src->nprocs * sizeof(uint32_t));
        dst->procs = words + *w;
        *w += src->nprocs;
    }
}

dagger_status_t dg_plan_scope_copy(dg_plan_t *p, dg_plan_scope_copy_t *dst,
                                   const dg_plan_scope_t *src)
{
    memset(dst, 0, sizeof(*dst));
    if (!src)
        return DAGGER_OK;
    size_t n = (size_t)src->nranks + src->nprocs;
    for (uint32_t i = 0; i < src->nparts; i++)
        n += (size_t)src->parts[i].nranks + src->parts[i].nprocs;
    dst->words = n ? dg_plan_mem_alloc(&p->mem, n * sizeof(uint32_t)) : NULL;
    dst->parts = src->nparts ? dg_plan_mem_alloc(&p->mem, src->nparts * sizeof(*dst->parts))
                             : NULL;
    dst->nwords = n;
    if ((n && !dst->words) || (src->nparts && !dst->parts)) {
        dst->s.nparts = src->nparts; /* the size release frees */
        dg_plan_scope_copy_release(p, dst);
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan: out of memory");
    }
    size_t w = 0;
    copy_lists(&dst->s, src, dst->words, &w);
    for (uint32_t i = 0; i < src->nparts; i++)
        copy_lists(&dst->parts[i], &src->parts[i], dst->words, &w);
    dst->s.parts = dst->parts;
    dst->s.nparts = src->nparts;
    return DAGGER_OK;
}

void dg_plan_scope_copy_release(dg_plan_t *p, dg_plan_scope_copy_t *c)
{
    dg_plan_mem_free(&p->mem, c->words, c->nwords * sizeof(uint32_t));
    dg_plan_mem_free(&p->mem, c->parts, c->s.nparts * sizeof(*c->parts));
    memset(c, 0, sizeof(*c));
}

dagger_status_t dg_plan_device_space(const dg_plan_t *p, int32_t rank, dg_plan_kind_t kind,
                                     uint32_t *space)
{
    static const char *const names[DG_PLAN_NKINDS] = {"CPU", "CUDA", "HIP", "test"};
    DG_CHECK_ARG(p && space, "dg_plan_device_space: NULL argument");
    DG_CHECK_ARG(rank >= 0 && rank < p->prm.nranks, "dg_plan_device_space: rank %d of %d", rank,
                 p->prm.nranks);
    DG_CHECK_ARG(kind > DG_PLAN_CPU && kind < DG_PLAN_NKINDS,
                 "dg_plan_device_space: kind %d is not a device kind", (int)kind);
    const dg_plan_prank_t *r = &p->ranks[rank];
    if (!r->n[kind])
        return dg_error(DAGGER_ERR_SCOPE, "rank %d has no %s device (%u CPU threads, %u CUDA, %u "
                        "HIP and %u test devices)", rank, names[kind], r->n[DG_PLAN_CPU],
                        r->n[DG_PLAN_CUDA], r->n[DG_PLAN_HIP], r->n[DG_PLAN_TESTDEV]);
    *space = 1 + dg_plan_kind_first(r, kind) - r->n[DG_PLAN_CPU];
    return DAGGER_OK;
}
