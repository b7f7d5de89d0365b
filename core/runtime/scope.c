/* Public scopes to planner scopes, and their hash for uniformity checks. */
#include "core/runtime/scope.h"

#include <string.h>

#include "core/base/hash.h"
#include "core/base/status_internal.h"

/* One conjunction: its lists go to b->words from *w on. */
static dagger_status_t convert_one(const dagger_scope_t *in, dg_plan_scope_t *out,
                                   dg_scope_buf_t *b, size_t *w, const char *fn)
{
    DG_CHECK_ARG(in->nranks >= 0 && (in->ranks || !in->nranks) && in->nprocs >= 0 &&
                 (in->procs || !in->nprocs),
                 "%s: a scope lists %d ranks and %d processors (counts >= 0, with non-NULL "
                 "arrays)", fn, in->nranks, in->nprocs);
    size_t need = (size_t)in->nranks + (size_t)in->nprocs + (in->has_proc ? 1 : 0);
    DG_CHECK_ARG(*w + need <= DG_SCOPE_WORDS, "%s: the scope lists more than %d ranks and "
                 "processors in all; name kinds or fewer ranks", fn, DG_SCOPE_WORDS);
    memset(out, 0, sizeof(*out));
    out->kinds = in->kinds; /* dagger_proc_kind_t bits equal DG_PLAN_KIND_BIT bits */
    if (in->nranks) {
        out->ranks = (const int32_t *)&b->words[*w];
        for (int i = 0; i < in->nranks; i++)
            b->words[(*w)++] = (uint32_t)in->ranks[i];
        out->nranks = (uint32_t)in->nranks;
    }
    if (need > (size_t)in->nranks) {
        /* Negative ids become ids no processor has: the planner names them. */
        out->procs = &b->words[*w];
        for (int i = 0; i < in->nprocs; i++)
            b->words[(*w)++] = (uint32_t)in->procs[i];
        if (in->has_proc)
            b->words[(*w)++] = (uint32_t)in->proc;
        out->nprocs = (uint32_t)(need - (size_t)in->nranks);
    }
    return DAGGER_OK;
}

dagger_status_t dg_scope_convert(const dagger_scope_t *in, dg_scope_buf_t *b, const char *fn)
{
    memset(&b->s, 0, sizeof(b->s));
    if (!in)
        return DAGGER_OK;
    size_t w = 0;
    dagger_status_t st = convert_one(in, &b->s, b, &w, fn);
    if (st != DAGGER_OK)
        return st;
    DG_CHECK_ARG(in->nparts >= 0 && in->nparts <= DG_PLAN_MAX_PARTS && (in->parts || !in->nparts),
                 "%s: a scope is a union of %d parts (0 to %d, with a non-NULL array)", fn,
                 in->nparts, DG_PLAN_MAX_PARTS);
    for (int i = 0; i < in->nparts; i++) {
        DG_CHECK_ARG(!in->parts[i].nparts, "%s: part %d of the scope's union has parts of its "
                     "own; list them all in one union", fn, i);
        st = convert_one(&in->parts[i], &b->parts[i], b, &w, fn);
        if (st != DAGGER_OK)
            return st;
    }
    b->s.parts = in->nparts ? b->parts : NULL;
    b->s.nparts = (uint32_t)in->nparts;
    return DAGGER_OK;
}

static uint64_t hash_one(uint64_t h, const dg_plan_scope_t *s)
{
    h = dg_hash_u64(h, ((uint64_t)s->kinds << 32) | s->nranks);
    h = dg_hash_bytes(h, s->ranks, s->nranks * sizeof(int32_t));
    h = dg_hash_u64(h, s->nprocs);
    return dg_hash_bytes(h, s->procs, s->nprocs * sizeof(uint32_t));
}

uint64_t dg_scope_hash(uint64_t h, const dg_plan_scope_t *s)
{
    h = hash_one(h, s);
    h = dg_hash_u64(h, s->nparts);
    for (uint32_t i = 0; i < s->nparts; i++)
        h = hash_one(h, &s->parts[i]);
    return h;
}
