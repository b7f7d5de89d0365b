/* Planner lifecycle, chunks and regions. */
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/common.h"

#include "core/base/hash.h"
#include "core/plan/uhash.h"
#include "core/plan/planner_internal.h"
#include "core/plan/replay.h"
#include "core/base/status_internal.h"

#define DEFAULT_DEP_WINDOW 65536u

static dagger_status_t check_params(const dg_plan_params_t *prm)
{
    DG_CHECK_ARG(prm->nranks >= 1 && prm->nranks <= (1 << 20),
                 "dg_plan_create: %d ranks (use 1 to 2^20)", prm->nranks);
    DG_CHECK_ARG(prm->my_rank >= 0 && prm->my_rank < prm->nranks,
                 "dg_plan_create: my_rank %d is not a rank of %d", prm->my_rank, prm->nranks);
    DG_CHECK_ARG(prm->ranks, "dg_plan_create: the processor table (ranks) is NULL");
    DG_CHECK_ARG(prm->emit, "dg_plan_create: the emit callback is NULL");
    return DAGGER_OK;
}

dagger_status_t dg_plan_create(const dg_plan_params_t *params, dg_plan_t **out)
{
    DG_CHECK_ARG(params && out, "dg_plan_create: NULL argument");
    *out = NULL;
    dagger_status_t st = check_params(params);
    if (st != DAGGER_OK)
        return st;
    dg_plan_t *p = dg_calloc(1, sizeof(*p));
    if (!p)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan_create: out of memory");
    p->prm = *params;
    dg_plan_mem_init(&p->mem);
    dg_plan_hctx_init(&p->hc, &p->mem);
    dg_plan_idmap_init(&p->chunks);
    dg_plan_idmap_init(&p->codelets);
    p->shash = DG_HASH_SEED;
    p->vhash = 0;
    st = dg_plan_procs_init(p);
    if (st == DAGGER_OK) {
        uint32_t w = params->dep_window ? params->dep_window : DEFAULT_DEP_WINDOW;
        p->ring_cap = 1;
        while (p->ring_cap < w)
            p->ring_cap *= 2;
        const dg_plan_prank_t *me = &p->ranks[params->my_rank];
        p->nspaces = 1 + dg_plan_rank_nprocs(me) - me->n[DG_PLAN_CPU];
        p->ring = dg_plan_mem_alloc_zeroed(&p->mem, p->ring_cap * sizeof(*p->ring));
        p->cache = dg_plan_mem_alloc_zeroed(&p->mem, p->nspaces * sizeof(*p->cache));
        if (!p->ring || !p->cache)
            st = dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan_create: out of memory");
    }
    if (st == DAGGER_OK)
        st = dg_plan_rp_create(p);
    if (st != DAGGER_OK) {
        dg_plan_mem_cleanup(&p->mem);
        free(p);
        return st;
    }
    /* The processor table is a planning input. */
    p->shash = dg_plan_hmix(p->shash, (uint64_t)params->nranks);
    for (int32_t r = 0; r < params->nranks; r++) {
        const dg_plan_prank_t *pr = &p->ranks[r];
        p->shash = dg_plan_hmix(p->shash, ((uint64_t)pr->n[DG_PLAN_CPU] << 40) ^
                                           ((uint64_t)pr->n[DG_PLAN_CUDA] << 20) ^
                                           pr->n[DG_PLAN_HIP]);
        if (pr->n[DG_PLAN_TESTDEV]) /* so a table without test devices hashes as before */
            p->shash = dg_plan_hmix(p->shash, 0x7e57de7000000000ull ^ pr->n[DG_PLAN_TESTDEV]);
    }
    *out = p;
    return DAGGER_OK;
}

void dg_plan_destroy(dg_plan_t *p)
{
    if (!p)
        return;
    /* Every structure but the recordings lives in the planner's allocator. */
    dg_plan_rp_destroy(p);
    dg_plan_mem_cleanup(&p->mem);
    free(p);
}

const dg_plan_geom_t *dg_plan_chunk_geom(const dg_plan_t *p, uint64_t id)
{
    const dg_plan_chunk_t *c = p ? dg_plan_chunk_get(p, id) : NULL;
    return c ? &c->g : p && p->rp ? dg_plan_rp_vgeom(p, id, NULL) : NULL;
}

const dg_plan_geom_t *dg_plan_data_chunk_geom(const dg_plan_t *p, uint64_t id)
{
    const dg_plan_chunk_t *c = p ? dg_plan_chunk_get(p, id) : NULL;
    return c && !c->is_future ? &c->g : NULL;
}

static dagger_status_t usable(const dg_plan_t *p, const char *fn)
{
    if (!p)
        return dg_error(DAGGER_ERR_INVALID_ARG, "%s: NULL planner", fn);
    if (p->mem.failed)
        return dg_error(DAGGER_ERR_NO_MEMORY,
                        "%s: the planner ran out of memory earlier and its state is lost; "
                        "destroy it", fn);
    return DAGGER_OK;
}

static dagger_status_t finish(const dg_plan_t *p, const char *fn)
{
    if (DG_UNLIKELY(p->mem.failed))
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory while planning", fn);
    return DAGGER_OK;
}

dagger_status_t dg_plan_chunk_create(dg_plan_t *p, const dg_plan_chunk_desc_t *d, uint64_t *id)
{
    dagger_status_t st = usable(p, __func__);
    if (st != DAGGER_OK)
        return st;
    DG_CHECK_ARG(d && id, "dg_plan_chunk_create: NULL argument");
    if (dg_plan_rp_settle(p, 1))
        return finish(p, __func__);
    DG_CHECK_ARG(d->owner >= 0 && d->owner < p->prm.nranks,
                 "dg_plan_chunk_create: owner rank %d of %d ranks", d->owner, p->prm.nranks);
    const dg_plan_prank_t *pr = &p->ranks[d->owner];
    uint32_t ndev = dg_plan_rank_nprocs(pr) - pr->n[DG_PLAN_CPU];
    DG_CHECK_ARG(d->home_space <= ndev,
                 "dg_plan_chunk_create: home space %u, but rank %d has spaces 0 (host) to %u",
                 d->home_space, d->owner, ndev);
    dg_plan_geom_t g = d->geom;
    char why[256];
    st = dg_plan_geom_check(&g, why, sizeof(why));
    if (st != DAGGER_OK)
        return dg_error(st, "dg_plan_chunk_create: chunk %llu: %s",
                        (unsigned long long)p->next_chunk + 1, why);
    dg_plan_chunk_t *c = dg_plan_chunk_new(p, d->owner, d->home_space, &g, 0);
    if (!c)
        return finish(p, __func__);
    p->shash = dg_plan_hmix(p->shash, 0xc4u);
    p->shash = dg_plan_hmix(p->shash, c->id);
    p->shash = dg_plan_hmix(p->shash, ((uint64_t)(uint32_t)d->owner << 32) | d->home_space);
    p->shash = dg_plan_hmix(p->shash, ((uint64_t)g.dtype << 8) | g.ndims);
    p->shash = dg_plan_hbytes(p->shash, g.dims, sizeof(g.dims));
    p->shash = dg_plan_hbytes(p->shash, g.strides, sizeof(g.strides));
    *id = c->id;
    return finish(p, __func__);
}

dagger_status_t dg_plan_chunk_free(dg_plan_t *p, uint64_t id)
{
    dagger_status_t st = usable(p, __func__);
    if (st != DAGGER_OK)
        return st;
    /* A replayed future has no chunk yet (replay.c); then c stays NULL. */
    int chunkless = p->rp && dg_plan_rp_vgeom(p, id, NULL);
    dg_plan_chunk_t *c = chunkless ? NULL : dg_plan_chunk_get(p, id);
    if (!c && !chunkless)
        return dg_error(DAGGER_ERR_NOT_FOUND,
                        "dg_plan_chunk_free: chunk %llu is unknown or already freed",
                        (unsigned long long)id);
    /* Inside a region: a replayed free, or recorded, or a catch-up first. */
    int replayed = p->rp ? dg_plan_rp_free(p, id) : 0;
    if (replayed)
        return finish(p, __func__);
    if (!(c = dg_plan_chunk_again(p, id, __func__)))
        return DAGGER_ERR_INTERNAL;
    dg_plan_free_now(p, c);
    if (p->rp)
        dg_plan_rp_free_end(p);
    return finish(p, __func__);
}

void dg_plan_hash_free(dg_plan_t *p, uint64_t id)
{
    p->shash = dg_plan_hmix(p->shash, 0xf4eeu);
    p->shash = dg_plan_hmix(p->shash, id);
}

void dg_plan_free_now(dg_plan_t *p, dg_plan_chunk_t *c)
{
    dg_plan_hash_free(p, c->id);
    /* The owner releases the storage once every op on it is done; slots
     * elsewhere likewise. Nothing is copied back: the contents die. */
    if (c->owner == p->prm.my_rank)
        dg_plan_buf_get(p, c, c->home_space);
    dg_plan_release_bufs(p, c, 1);
    dg_plan_chunk_delete(p, c);
}

dagger_status_t dg_plan_region_begin(dg_plan_t *p, const dg_plan_scope_t *scope)
{
    dagger_status_t st = usable(p, __func__);
    if (st != DAGGER_OK)
        return st;
    if (p->in_region)
        return dg_error(DAGGER_ERR_STATE,
                        "dg_plan_region_begin: region %llu is still open; end it first "
                        "(regions do not nest)", (unsigned long long)p->region);
    char why[256];
    st = dg_plan_scope_region(p, scope, why, sizeof(why));
    if (st != DAGGER_OK)
        return dg_error(st, "region scope: %s", why);
    st = dg_plan_scope_copy(p, &p->rscope, scope);
    if (st != DAGGER_OK)
        return st;
    p->in_region = 1;
    p->region++;
    p->region_first_task = p->next_task + 1;
    p->xfer_index = 0;
    p->region_nops = 0;
    p->shash = dg_plan_hmix(p->shash, 0x4e610u);
    p->shash = dg_plan_hmix(p->shash, p->region);
    dg_plan_scope_hash(&p->shash, scope);
    if (p->rp)
        dg_plan_rp_region_begin(p);
    return finish(p, __func__);
}

/* Copy back what changed, in the order chunks were first touched, then free
 * or keep the slots: every rank walks the same list. */
static void end_region(dg_plan_t *p)
{
    for (dg_plan_chunk_t *c = p->touched_head; c; c = c->tnext)
        dg_plan_copy_home(p, c);
    while (p->touched_head) {
        dg_plan_chunk_t *c = p->touched_head;
        dg_plan_release_bufs(p, c, 0);
        dg_plan_hist_clear(&p->hc, &c->logical);
        dg_plan_chunk_untouch(p, c);
    }
    dg_plan_op_t op = {.kind = DG_PLAN_OP_REGION_END};
    op.u.region.region = p->region;
    op.u.region.nops = p->region_nops;
    dg_plan_emit(p, &op, NULL);
}

dagger_status_t dg_plan_region_end(dg_plan_t *p)
{
    dagger_status_t st = usable(p, __func__);
    if (st != DAGGER_OK)
        return st;
    if (!p->in_region)
        return dg_error(DAGGER_ERR_STATE, "dg_plan_region_end: no region is open");
    int replayed = p->rp ? dg_plan_rp_region_end(p) : 0;
    if (replayed < 0)
        p->mem.failed = 1;
    if (!replayed) {
        end_region(p);
        if (p->rp)
            dg_plan_rp_region_ended(p);
    }
    p->region_nops = 0;
    dg_plan_scope_copy_release(p, &p->rscope);
    p->in_region = 0;
    p->shash = dg_plan_hmix(p->shash, 0xe4du);
    return finish(p, __func__);
}

uint64_t dg_plan_shape_hash(const dg_plan_t *p)
{
    return p ? p->shash : 0;
}

uint64_t dg_plan_hash(const dg_plan_t *p)
{
    return p ? dg_plan_hmix(p->shash, p->vhash) : 0;
}

void dg_plan_get_stats(const dg_plan_t *p, dg_plan_stats_t *st)
{
    *st = p->st;
    st->mem_in_use = p->mem.st.in_use;
    st->mem_peak = p->mem.st.peak_in_use;
    st->mem_reserved = p->mem.st.reserved;
    st->mem_sys_bytes = p->mem.st.sys_bytes;
    st->mem_sys_calls = p->mem.st.sys_calls;
    if (p->rp)
        dg_plan_rp_counts(p, &st->replayed_tasks, &st->replay_replanned, &st->replay_switches);
}
