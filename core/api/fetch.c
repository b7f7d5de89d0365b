/* dagger_fetch: the value of a future, the same bytes on every rank; and
 * dagger_future_free. */
#include <dagger/region.h>
#include <string.h>

#include "core/api/tasks.h"
#include "core/status_internal.h"

dagger_status_t dagger_fetch(dagger_runtime_t *rt, dagger_future_t f, void *buf, size_t cap,
                             size_t *len)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_fetch");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    int owner;
    size_t size;
    if (!dg_tasks_future_find(t, f.id, &owner, &size))
        return dg_error(DAGGER_ERR_BAD_HANDLE, "dagger_fetch: future %llu was returned by no task",
                        (unsigned long long)f.id);
    DG_CHECK_ARG(buf || !size, "dagger_fetch: NULL buffer");
    if (cap < size)
        return dg_error(DAGGER_ERR_OVERFLOW, "dagger_fetch: the value has %zu bytes, the buffer %zu",
                        size, cap);
    /* Inside a region the producing task may still run: wait for this
     * rank's planned work (every rank does, so waits never cross). */
    if (t->region)
        dg_exec_wait_all(t->exec);
    if (owner == t->rank) {
        dg_buf_entry_t *e = dg_bufs_find(&t->exec->bufs, f.id, 0);
        if (e)
            memcpy(buf, e->ptr, size);
        else
            memset(buf, 0, size);
    }
    dagger_status_t st = dg_tasks_bcast(t, buf, size, owner);
    if (st == DAGGER_OK && len)
        *len = size;
    return st;
}

dagger_status_t dagger_future_free(dagger_runtime_t *rt, dagger_future_t f)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_future_free");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    int owner;
    size_t size;
    if (!dg_tasks_future_find(t, f.id, &owner, &size))
        return dg_error(DAGGER_ERR_BAD_HANDLE, "dagger_future_free: future %llu was returned by no "
                        "task, or was freed already", (unsigned long long)f.id);
    dagger_status_t st = dg_plan_chunk_free(t->plan, f.id);
    if (st == DAGGER_OK)
        dg_tasks_future_remove(t, f.id);
    return st;
}
