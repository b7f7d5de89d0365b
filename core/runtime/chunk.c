/* Public chunk and view calls. */
#include <dagger/chunk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/runtime/planner.h"
#include "core/runtime/tasks.h"
#include "core/base/hash.h"
#include "core/base/spmd_caller.h"
#include "core/base/status_internal.h"

#define DG_CHUNK_MAX_DIM (1ull << 40)
#define DG_CHUNK_MAX_ELEMS (1ull << 50)

/* The geometry of a user's chunk, or NULL (with the error set) for an id
 * that is not one: never created, freed, or a future's value (futures live
 * in the planner as chunks, but only dagger_fetch and dagger_future_free
 * may touch them). */
static const dg_plan_geom_t *user_chunk(dg_tasks_t *t, dagger_chunk_t c, const char *fn)
{
    const dg_plan_geom_t *g = dg_plan_data_chunk_geom(t->plan, c.id);
    if (!g) {
        dg_error(DAGGER_ERR_BAD_HANDLE, "%s: chunk %llu does not exist (never created, already "
                 "freed, or a future)", fn, (unsigned long long)c.id);
        return NULL;
    }
    return g;
}

/* The memory space of a chunk's home (dagger_chunk_desc_t.home) on its
 * owner: 0 for host memory, else the owner's first device of the kind
 * (dagger_proc_kind_t bits are the planner's kind bits). */
static dagger_status_t home_space(dg_tasks_t *t, dagger_proc_kind_t home, int32_t owner,
                                  uint32_t *space)
{
    *space = 0;
    if (home == 0 || home == DAGGER_PROC_CPU)
        return DAGGER_OK;
    if (home != DAGGER_PROC_CUDA && home != DAGGER_PROC_HIP && home != DAGGER_PROC_TESTDEV)
        return dg_error(DAGGER_ERR_INVALID_ARG, "dagger_chunk_create: home %d is not one kind; "
                        "use 0 (host memory), DAGGER_PROC_CUDA, DAGGER_PROC_HIP or "
                        "DAGGER_PROC_TESTDEV", (int)home);
    dg_plan_kind_t kind = home == DAGGER_PROC_CUDA ? DG_PLAN_CUDA
                        : home == DAGGER_PROC_HIP  ? DG_PLAN_HIP
                                                   : DG_PLAN_TESTDEV;
    if (dg_plan_device_space(t->plan, owner, kind, space) == DAGGER_OK)
        return DAGGER_OK;
    char why[160]; /* the planner's message, copied out of the buffer dg_error writes */
    snprintf(why, sizeof why, "%s", dagger_error_detail());
    return dg_error(DAGGER_ERR_SCOPE, "dagger_chunk_create: the home is the owner's first "
                        "%s, but %s; give home 0 (host memory) or a kind the owner has",
                        kind == DG_PLAN_TESTDEV ? "test device" : kind == DG_PLAN_CUDA
                                                                      ? "CUDA device"
                                                                      : "HIP device",
                        why);
}

/* The checks of one description that need no other rank (the same result
 * on every rank: the inputs are). d is filled. */
static dagger_status_t check_desc(dg_tasks_t *t, const dagger_chunk_desc_t *desc,
                                  dg_plan_chunk_desc_t *d, const char *fn)
{
    DG_CHECK_ARG(desc->ndims >= 1 && desc->ndims <= DAGGER_MAX_DIMS,
                 "%s: ndims is %d; it must be 1 to %d", fn, desc->ndims, DAGGER_MAX_DIMS);
    if (!dagger_dtype_size(desc->dtype))
        return dg_error(DAGGER_ERR_DTYPE, "%s: unknown dtype %d", fn, (int)desc->dtype);
    DG_CHECK_ARG(desc->owner < t->nranks, "%s: owner rank %d, but the job has %d ranks", fn,
                 desc->owner, t->nranks);
    *d = (dg_plan_chunk_desc_t){.owner = desc->owner, .home_space = 0};
    d->geom.dtype = desc->dtype;
    d->geom.ndims = (uint32_t)desc->ndims;
    uint64_t elems = 1;
    for (int k = 0; k < desc->ndims; k++) {
        DG_CHECK_ARG(desc->dims[k] > 0, "%s: dimension %d is 0", fn, k);
        /* The planner's limits: 2^40 per dimension, 2^50 elements in all. */
        if (desc->dims[k] > DG_CHUNK_MAX_DIM || elems > DG_CHUNK_MAX_ELEMS / desc->dims[k])
            return dg_error(DAGGER_ERR_OVERFLOW, "%s: dimension %d of %zu makes the chunk too "
                            "large (at most 2^40 per dimension, 2^50 elements)", fn, k,
                            desc->dims[k]);
        elems *= desc->dims[k];
        d->geom.dims[k] = desc->dims[k];
    }
    return DAGGER_OK;
}

/* One chunk into the planner (and its uniformity check); *bytes its size. */
static dagger_status_t plan_one(dg_tasks_t *t, const dagger_chunk_desc_t *desc,
                                dg_plan_chunk_desc_t *d, uint64_t *id, size_t *bytes)
{
    if (d->owner < 0)
        d->owner = (int32_t)(t->default_owner % (uint64_t)t->nranks);
    dagger_status_t st = home_space(t, desc->home, d->owner, &d->home_space);
    if (st != DAGGER_OK)
        return st;
    dg_check_point_t cp = {.kind = DG_CHECK_CHUNK};
    cp.hash = dg_hash_bytes(dg_plan_hash(t->plan), d, sizeof(*d));
    if ((st = dg_tasks_check(t, &cp)) != DAGGER_OK ||
        (st = dg_planner_chunk_create(t, d, id)) != DAGGER_OK)
        return st;
    if (desc->owner < 0)
        t->default_owner++;
    const dg_plan_geom_t *g = dg_plan_chunk_geom(t->plan, *id);
    *bytes = (size_t)(g->extent * g->elsize);
    return DAGGER_OK;
}

/* Every rank learns whether an owner's allocation failed, the first one by
 * rank then chunk: an owner whose memory ran out fails the call on every
 * rank, with the same detail, instead of on itself alone (2026-12-06).
 * key: UINT64_MAX, or rank << 40 | -status << 32 | index of this rank's
 * failure (statuses are negative). One broadcast or allreduce, on jobs of
 * more than one rank: a non-owner waits for the owner's allocation. */
static dagger_status_t agree_allocs(dg_tasks_t *t, uint64_t key, int one_owner, size_t n,
                                    const dagger_chunk_desc_t *descs, const size_t *bytes,
                                    const char *fn)
{
    /* One owner (a single chunk, or all of the call's on one rank): it
     * tells the others, who wait one message; else the lowest key wins. */
    dagger_status_t st = one_owner >= 0 ? dg_tasks_bcast(t, &key, sizeof(key), one_owner)
                                        : dg_tasks_allreduce_u64(t, &key, 1, DAGGER_OP_MIN);
    if (st != DAGGER_OK || key == UINT64_MAX)
        return st;
    int rank = (int)(key >> 40);
    dagger_status_t why = (dagger_status_t)(-(int)((key >> 32) & 0xff));
    size_t i = (size_t)(key & 0xffffffffu);
    int dev = descs[i].home != 0 && descs[i].home != DAGGER_PROC_CPU;
    char which[48] = "the chunk";
    if (n > 1)
        snprintf(which, sizeof(which), "chunk %zu of the call", i);
    return dg_error(why, "%s: rank %d, the owner of %s, cannot allocate its %zu bytes of %s "
                    "memory (%s); make the chunks smaller or spread them over more ranks "
                    "(nothing was created)", fn, rank, which, bytes[i], dev ? "device" : "host",
                    dagger_strerror(why));
}

/* Creates n chunks with one agreement on their allocations; all or none. */
static dagger_status_t create_chunks(dagger_runtime_t *rt, size_t n,
                                     const dagger_chunk_desc_t *descs, dagger_chunk_t *out,
                                     const char *fn)
{
    dg_tasks_t *t = dg_tasks_get(rt, fn);
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    DG_CHECK_ARG((descs && out) || n == 0, "%s: NULL descriptions or output", fn);
    DG_CHECK_ARG(n <= UINT32_MAX, "%s: %zu chunks in one call; at most 2^32 - 1", fn, n);
    for (size_t i = 0; i < n; i++)
        out[i].id = 0;
    dagger_status_t st = dg_spmd_allowed(fn);
    if (st != DAGGER_OK)
        return st;
    if (t->region)
        return dg_error(DAGGER_ERR_STATE, "%s: a region is open; create chunks before "
                        "dagger_region_begin or after dagger_region_end", fn);
    dg_plan_chunk_desc_t d;
    for (size_t i = 0; i < n; i++)
        if ((st = check_desc(t, &descs[i], &d, fn)) != DAGGER_OK)
            return st;
    size_t *bytes = dg_calloc(n ? n : 1, sizeof(*bytes));
    if (!bytes)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn);
    uint64_t owner0 = t->default_owner, key = UINT64_MAX;
    int one_owner = -1;
    size_t made = 0;
    for (; made < n; made++) {
        check_desc(t, &descs[made], &d, fn); /* passed above: fills d */
        if ((st = plan_one(t, &descs[made], &d, &out[made].id, &bytes[made])) != DAGGER_OK)
            break;
        one_owner = made == 0 || one_owner == d.owner ? d.owner : -2;
        if (d.owner != t->rank || key != UINT64_MAX)
            continue;
        dagger_status_t a = dg_exec_alloc(t->exec, out[made].id, d.home_space, bytes[made], 1);
        if (a != DAGGER_OK)
            key = (uint64_t)t->rank << 40 | (uint64_t)(-a & 0xff) << 32 | made;
    }
    /* A planning error is the same on every rank (its inputs are); the
     * allocations are not. */
    if (st == DAGGER_OK && n > 0)
        st = agree_allocs(t, key, one_owner, n, descs, bytes, fn);
    if (st != DAGGER_OK) {
        char why[512]; /* the detail outlives the frees below */
        snprintf(why, sizeof(why), "%s", dagger_error_detail());
        for (size_t i = 0; i < made; i++) {
            dg_planner_chunk_free(t, out[i].id);
            out[i].id = 0;
        }
        t->default_owner = owner0;
        dg_error(st, "%s", why);
    }
    free(bytes);
    return st;
}

dagger_status_t dagger_chunk_create(dagger_runtime_t *rt, const dagger_chunk_desc_t *desc,
                                    dagger_chunk_t *out)
{
    if (!desc || !out) { /* named as before: one chunk */
        if (!dg_tasks_get(rt, "dagger_chunk_create"))
            return DAGGER_ERR_BAD_HANDLE;
        return dg_error(DAGGER_ERR_INVALID_ARG, "dagger_chunk_create: NULL description or "
                        "output");
    }
    return create_chunks(rt, 1, desc, out, "dagger_chunk_create");
}

dagger_status_t dagger_chunk_create_many(dagger_runtime_t *rt, size_t n,
                                         const dagger_chunk_desc_t *descs, dagger_chunk_t *out)
{
    return create_chunks(rt, n, descs, out, "dagger_chunk_create_many");
}

dagger_status_t dagger_chunk_free(dagger_runtime_t *rt, dagger_chunk_t c)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_chunk_free");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t in = dg_spmd_allowed("dagger_chunk_free");
    if (in != DAGGER_OK)
        return in;
    if (!user_chunk(t, c, "dagger_chunk_free"))
        return DAGGER_ERR_BAD_HANDLE;
    dg_check_point_t cp = {.kind = DG_CHECK_CHUNK};
    cp.hash = dg_hash_u64(dg_plan_hash(t->plan), c.id);
    dagger_status_t st = dg_tasks_check(t, &cp);
    if (st != DAGGER_OK)
        return st;
    return dg_planner_chunk_free(t, c.id);
}

int dagger_chunk_owner(dagger_runtime_t *rt, dagger_chunk_t c)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_chunk_owner");
    if (!t)
        return -1;
    /* The owner lives in the planner; the home buffer tells us only for this rank. */
    int32_t owner = -1;
    if (!user_chunk(t, c, "dagger_chunk_owner") ||
        dg_plan_chunk_owner(t->plan, c.id, &owner) != DAGGER_OK)
        return -1;
    return owner;
}

dagger_status_t dagger_chunk_data(dagger_runtime_t *rt, dagger_chunk_t c, void **data,
                                  size_t strides[DAGGER_MAX_DIMS])
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_chunk_data");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    DG_CHECK_ARG(data, "dagger_chunk_data: NULL data pointer");
    *data = NULL;
    const dg_plan_geom_t *g = user_chunk(t, c, "dagger_chunk_data");
    if (!g)
        return DAGGER_ERR_BAD_HANDLE;
    if (t->region)
        return dg_error(DAGGER_ERR_STATE, "dagger_chunk_data: a region is open and the chunk's "
                        "data may be elsewhere; read it after dagger_region_end");
    if (strides) {
        size_t s = 1;
        for (uint32_t k = 0; k < DAGGER_MAX_DIMS; k++) {
            strides[k] = k < g->ndims ? (g->strides[k] ? (size_t)g->strides[k] : s) : 0;
            if (k < g->ndims)
                s *= (size_t)g->dims[k];
        }
    }
    dg_buf_entry_t *e = dg_bufs_find(&t->exec->bufs, c.id, 0);
    if (e && e->home)
        *data = e->ptr;
    return DAGGER_OK;
}

/* ------------------------------------------------------------ views */

dg_plan_view_t dg_view_to_plan(dagger_view_t v)
{
    dg_plan_view_t p;
    memset(&p, 0, sizeof(p));
    p.chunk = v.chunk.id;
    p.ndims = v.ndims > 0 ? (uint32_t)v.ndims : 0;
    p.mod = v.mod;
    for (int k = 0; k < v.ndims && k < DAGGER_MAX_DIMS; k++) {
        p.off[k] = v.off[k];
        p.ext[k] = v.ext[k];
    }
    return p;
}

static dagger_view_t from_plan(const dg_plan_view_t *p)
{
    dagger_view_t v;
    memset(&v, 0, sizeof(v));
    v.chunk.id = p->chunk;
    v.ndims = (int)p->ndims;
    v.mod = p->mod;
    for (uint32_t k = 0; k < p->ndims; k++) {
        v.off[k] = (size_t)p->off[k];
        v.ext[k] = (size_t)p->ext[k];
    }
    return v;
}

dagger_view_t dagger_view(dagger_runtime_t *rt, dagger_chunk_t c)
{
    /* Filled here rather than through dg_plan_view_full and from_plan:
     * a task's views are built per submission (Task Bench: 3-4 a task). */
    dagger_view_t v = {.chunk = c, .mod = DAGGER_FULL};
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_view");
    const dg_plan_geom_t *g = t ? user_chunk(t, c, "dagger_view") : NULL;
    if (!g)
        return v; /* ndims 0: rejected when used, naming the chunk */
    v.ndims = (int)g->ndims;
    for (uint32_t k = 0; k < g->ndims; k++)
        v.ext[k] = (size_t)g->dims[k];
    return v;
}

dagger_view_t dagger_view_sub(dagger_view_t v, const size_t off[], const size_t ext[])
{
    dagger_view_t bad = v;
    bad.ndims = 0;
    if (v.ndims < 1 || v.ndims > DAGGER_MAX_DIMS || !off || !ext)
        return bad;
    uint64_t o[DAGGER_MAX_DIMS] = {0}, e[DAGGER_MAX_DIMS] = {0};
    for (int k = 0; k < v.ndims; k++) {
        o[k] = off[k];
        e[k] = ext[k];
    }
    dg_plan_view_t parent = dg_view_to_plan(v), out;
    if (dg_plan_view_sub(&parent, o, e, DAGGER_FULL, &out) != DAGGER_OK)
        return bad;
    return from_plan(&out);
}

dagger_view_t dagger_view_mod(dagger_view_t v, dagger_modifier_t mod)
{
    dagger_view_t bad = v;
    bad.ndims = 0;
    if (v.ndims < 1 || v.ndims > DAGGER_MAX_DIMS)
        return bad;
    uint64_t o[DAGGER_MAX_DIMS] = {0}, e[DAGGER_MAX_DIMS] = {0};
    for (int k = 0; k < v.ndims; k++)
        e[k] = v.ext[k];
    dg_plan_view_t parent = dg_view_to_plan(v), out;
    if (dg_plan_view_sub(&parent, o, e, mod, &out) != DAGGER_OK)
        return bad;
    return from_plan(&out);
}
