/* The codelet registry: codelets are known by the hash of their name, never
 * by a function pointer, so every rank names them alike. */
#include <string.h>

#include "core/base/hash.h"
#include "core/plan/uhash.h"
#include "core/plan/planner_internal.h"
#include "core/base/status_internal.h"

static int same_desc(const dg_plan_codelet_t *c, const dg_plan_codelet_desc_t *d)
{
    if (strcmp(c->name, d->name) || c->kinds != d->kinds || c->ret_size != d->ret_size ||
        c->ndtypes != d->ndtypes || c->cost != d->cost)
        return 0;
    return !c->ndtypes || !memcmp(c->dtypes, d->dtypes, c->ndtypes * sizeof(*c->dtypes));
}

dagger_status_t dg_plan_codelet_register(dg_plan_t *p, const dg_plan_codelet_desc_t *d,
                                         uint32_t *id)
{
    DG_CHECK_ARG(p && d && id, "dg_plan_codelet_register: NULL argument");
    DG_CHECK_ARG(d->name && d->name[0], "dg_plan_codelet_register: the codelet needs a name");
    DG_CHECK_ARG(d->kinds && !(d->kinds & ~DG_PLAN_KINDS_ALL),
                 "dg_plan_codelet_register: codelet '%s' has implementation kinds 0x%x; give at "
                 "least one of DG_PLAN_KIND_BIT(DG_PLAN_CPU/CUDA/HIP)", d->name, d->kinds);
    DG_CHECK_ARG(d->ret_size <= DG_PLAN_MAX_RET,
                 "dg_plan_codelet_register: codelet '%s' returns %u bytes; at most %u (return "
                 "larger results through an Out argument)", d->name, d->ret_size, DG_PLAN_MAX_RET);
    DG_CHECK_ARG(!d->ndtypes || d->dtypes, "dg_plan_codelet_register: codelet '%s' declares %u "
                 "argument dtypes but gives none", d->name, d->ndtypes);
    for (uint32_t i = 0; i < d->ndtypes; i++)
        DG_CHECK_ARG(d->dtypes[i] == 0 || dagger_dtype_size(d->dtypes[i]),
                     "dg_plan_codelet_register: codelet '%s' argument %u has unknown dtype %d",
                     d->name, i, (int)d->dtypes[i]);
    uint32_t cid = dg_name_id(d->name);
    dg_plan_codelet_t *c = dg_plan_idmap_get(&p->codelets, cid);
    if (c) {
        if (!same_desc(c, d))
            return dg_error(DAGGER_ERR_EXISTS,
                            strcmp(c->name, d->name)
                                ? "dg_plan_codelet_register: codelet names '%s' and '%s' hash to "
                                  "the same id; rename one"
                                : "dg_plan_codelet_register: codelet '%s' is already registered "
                                  "with a different description%s; use another name",
                            d->name, strcmp(c->name, d->name) ? c->name : "");
        *id = cid;
        return DAGGER_OK;
    }
    c = dg_plan_mem_alloc(&p->mem, sizeof(*c));
    size_t len = strlen(d->name) + 1;
    char *name = dg_plan_mem_alloc(&p->mem, len);
    dagger_dtype_t *dt = d->ndtypes ? dg_plan_mem_alloc(&p->mem, d->ndtypes * sizeof(*dt)) : NULL;
    if (!c || !name || (d->ndtypes && !dt) || dg_plan_idmap_put(&p->mem, &p->codelets, cid, c))
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan_codelet_register: out of memory");
    memcpy(name, d->name, len);
    if (dt)
        memcpy(dt, d->dtypes, d->ndtypes * sizeof(*dt));
    *c = (dg_plan_codelet_t){.id = cid, .kinds = d->kinds, .ret_size = d->ret_size,
                             .ndtypes = d->ndtypes, .dtypes = dt, .cost = d->cost,
                             .name = name, .name_len = len};
    /* Not mixed into the running hash: ranks may register in any order
     * (names, not order, identify codelets); each task hashes its own. */
    c->hash = dg_plan_hbytes(dg_plan_hmix(0, 0xc0de1e7), name, len);
    c->hash = dg_plan_hmix(c->hash, ((uint64_t)d->kinds << 32) | d->ret_size);
    *id = cid;
    return DAGGER_OK;
}


uint64_t dg_plan_codelet_hash(const dg_plan_t *p, uint32_t id)
{
    const dg_plan_codelet_t *c = p ? dg_plan_idmap_get(&p->codelets, id) : NULL;
    return c ? c->hash : 0;
}
