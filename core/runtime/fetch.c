/* dagger_fetch: the value of a future, the same bytes on every rank;
 * dagger_fetch_view / _chunk: a view's current elements the same way; and
 * dagger_future_free. */
#include <dagger/region.h>
#include <string.h>

#include "core/runtime/planner.h"
#include "core/runtime/tasks.h"
#include "core/base/spmd_caller.h"
#include "core/base/status_internal.h"

/* Makes the current contents of chunk (or future) id be at its owner's home
 * storage, the same decision on every rank, or returns the failure of the
 * task that wrote them. Inside a region the data may still be computed, or
 * live elsewhere (a task updated it on another rank): it is brought home,
 * then every rank waits for its planned work (all do, so waits never cross). */
static dagger_status_t bring_home(dg_tasks_t *t, uint64_t id, const char *fn, const char *what)
{
    if (t->region) {
        dagger_status_t st = dg_planner_sync_home(t, id);
        if (st != DAGGER_OK)
            return st;
        dg_exec_wait_all(t->exec);
    }
    return dg_tasks_data_status(t, id, fn, what);
}

const unsigned char *dg_tasks_home_bytes(dg_tasks_t *t, uint64_t id)
{
    dg_buf_entry_t *e = dg_bufs_find(&t->exec->bufs, id, 0);
    return e ? e->ptr : NULL;
}

dagger_status_t dagger_fetch(dagger_runtime_t *rt, dagger_future_t f, void *buf, size_t cap,
                             size_t *len)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_fetch");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t in_task = dg_spmd_allowed("dagger_fetch");
    if (in_task != DAGGER_OK)
        return in_task;
    int owner;
    size_t size;
    if (!dg_tasks_future_find(t, f.id, &owner, &size))
        return dg_error(DAGGER_ERR_BAD_HANDLE, "dagger_fetch: future %llu was returned by no task",
                        (unsigned long long)f.id);
    DG_CHECK_ARG(buf || !size, "dagger_fetch: NULL buffer");
    if (cap < size)
        return dg_error(DAGGER_ERR_OVERFLOW, "dagger_fetch: the value has %zu bytes, the buffer %zu",
                        size, cap);
    dagger_status_t st = bring_home(t, f.id, "dagger_fetch", "future");
    if (st != DAGGER_OK)
        return st;
    /* Carried by the last region's end agreement (carry.c): every rank has
     * it, so none broadcasts. */
    if (dg_carry_fetch(t, f.id, buf, size)) {
        if (len)
            *len = size;
        return DAGGER_OK;
    }
    if (owner == t->rank) {
        const unsigned char *home = dg_tasks_home_bytes(t, f.id);
        if (home)
            memcpy(buf, home, size);
        else
            memset(buf, 0, size);
    }
    st = dg_tasks_bcast(t, buf, size, owner);
    if (st == DAGGER_OK && len)
        *len = size;
    return st;
}

/* Copies the box of v out of the chunk's storage, column-major. */
static void pack_box(const dg_plan_geom_t *g, const dg_plan_view_t *v, const unsigned char *base,
                     unsigned char *out)
{
    uint64_t st[DAGGER_MAX_DIMS] = {0}, off[4] = {0, 0, 0, 0}, ext[4] = {1, 1, 1, 1}, s = 1;
    for (uint32_t k = 0; k < g->ndims; k++) {
        st[k] = g->strides[k] ? g->strides[k] : s;
        s *= g->dims[k];
        off[k] = v->off[k];
        ext[k] = v->ext[k];
    }
    size_t es = g->elsize;
    for (uint64_t k3 = 0; k3 < ext[3]; k3++)
        for (uint64_t k2 = 0; k2 < ext[2]; k2++)
            for (uint64_t j = 0; j < ext[1]; j++) {
                uint64_t o = off[0] * st[0] + (off[1] + j) * st[1] + (off[2] + k2) * st[2] +
                             (off[3] + k3) * st[3];
                if (st[0] == 1) { /* a column is one run */
                    memcpy(out, base + o * es, ext[0] * es);
                    out += ext[0] * es;
                    continue;
                }
                for (uint64_t i = 0; i < ext[0]; i++, out += es)
                    memcpy(out, base + (o + i * st[0]) * es, es);
            }
}

dagger_status_t dagger_fetch_view(dagger_runtime_t *rt, dagger_view_t v, void *buf, size_t cap,
                                  size_t *len)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_fetch_view");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t in_task = dg_spmd_allowed("dagger_fetch_view");
    if (in_task != DAGGER_OK)
        return in_task;
    const dg_plan_geom_t *g = dg_plan_chunk_geom(t->plan, v.chunk.id);
    int32_t owner;
    if (!g || dg_plan_chunk_owner(t->plan, v.chunk.id, &owner) != DAGGER_OK)
        return dg_error(DAGGER_ERR_BAD_HANDLE, "dagger_fetch_view: chunk %llu does not exist "
                        "(never created, or freed)", (unsigned long long)v.chunk.id);
    dg_plan_view_t pv = dg_view_to_plan(v);
    char why[256];
    if (v.ndims < 1 || dg_plan_view_check(g, &pv, why, sizeof(why)) != DAGGER_OK)
        return dg_error(DAGGER_ERR_BAD_VIEW,
                        "dagger_fetch_view: not a valid view of chunk %llu%s%s",
                        (unsigned long long)v.chunk.id, v.ndims < 1 ? "" : ": ",
                        v.ndims < 1 ? " (a bad handle, or a sub-view that did not fit)" : why);
    size_t bytes = g->elsize;
    for (uint32_t k = 0; k < pv.ndims; k++)
        bytes *= (size_t)pv.ext[k];
    DG_CHECK_ARG(buf, "dagger_fetch_view: NULL buffer");
    if (cap < bytes)
        return dg_error(DAGGER_ERR_OVERFLOW, "dagger_fetch_view: the view has %zu bytes, the "
                        "buffer %zu", bytes, cap);
    dagger_status_t st = bring_home(t, v.chunk.id, "dagger_fetch_view", "chunk");
    if (st != DAGGER_OK)
        return st;
    if (owner == t->rank) {
        const unsigned char *home = dg_tasks_home_bytes(t, v.chunk.id);
        if (home)
            pack_box(g, &pv, home, buf);
        else
            memset(buf, 0, bytes);
    }
    st = dg_tasks_bcast(t, buf, bytes, owner);
    if (st == DAGGER_OK && len)
        *len = bytes;
    return st;
}

dagger_status_t dagger_fetch_chunk(dagger_runtime_t *rt, dagger_chunk_t c, void *buf, size_t cap,
                                   size_t *len)
{
    dagger_status_t in_task = dg_spmd_allowed("dagger_fetch_chunk");
    if (in_task != DAGGER_OK)
        return in_task;
    dagger_view_t v = dagger_view(rt, c);
    if (v.ndims < 1 && dg_tasks_get(rt, "dagger_fetch_chunk"))
        return dg_error(DAGGER_ERR_BAD_HANDLE, "dagger_fetch_chunk: chunk %llu does not exist "
                        "(never created, or freed)", (unsigned long long)c.id);
    return v.ndims < 1 ? DAGGER_ERR_BAD_HANDLE : dagger_fetch_view(rt, v, buf, cap, len);
}

dagger_status_t dagger_future_free(dagger_runtime_t *rt, dagger_future_t f)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_future_free");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t in = dg_spmd_allowed("dagger_future_free");
    if (in != DAGGER_OK)
        return in;
    int owner;
    size_t size;
    if (!dg_tasks_future_find(t, f.id, &owner, &size))
        return dg_error(DAGGER_ERR_BAD_HANDLE, "dagger_future_free: future %llu was returned by no "
                        "task, or was freed already", (unsigned long long)f.id);
    dagger_status_t st = dg_planner_chunk_free(t, f.id);
    if (st == DAGGER_OK)
        dg_tasks_future_remove(t, f.id);
    return st;
}
