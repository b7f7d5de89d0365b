/* Task failures as every rank sees them: agreeing on a region's first failed
 * task (at region end, and when fetch looks inside an open region), and the
 * record of failures that makes a fetch of data such a task spoiled return
 * that task's error instead of stale bytes. Which chunks are spoiled the
 * planner follows (dg_plan_taint): what tasks from the failed one on wrote,
 * and later what was computed from it, until overwritten whole. */
#include <dagger/coll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/runtime/planner.h"
#include "core/runtime/tasks.h"
#include "core/base/status_internal.h"
#include "transport/coll.h"

typedef struct dg_fail_rec {
    uint64_t first;                /* the failed task */
    dagger_status_t status;
    char msg[512];
} dg_fail_rec_t;

struct dg_fail_log {
    dg_fail_rec_t *v;
    size_t n, cap;
};

dagger_status_t dg_tasks_agree_failure(dg_tasks_t *t, uint64_t *task, dagger_status_t *status,
                                       char *msg, size_t len, uint64_t *carry, size_t ncarry)
{
    dg_exec_t *ex = t->exec;
    /* key[0] the failure, then the carried words (MIN too: carry.c). */
    uint64_t key[2 + DG_CARRY_WORDS] = {atomic_load(&ex->failed) ? ex->fail_task : UINT64_MAX, 0};
    if (ncarry > DG_CARRY_WORDS)
        ncarry = 0;
    if (ncarry)
        memcpy(key + 1, carry, ncarry * sizeof(*carry));
    /* Its signature carries the hash of what this rank planned: ranks that
     * submitted different work learn it here (transport/coll_foresee.c). */
    dagger_status_t st = t->tx ? dg_coll_allreduce_plan(t->tx, key, 1 + ncarry, DAGGER_U64,
                                                        DAGGER_OP_MIN, dg_plan_shape_hash(t->plan))
                               : DAGGER_OK;
    if (ncarry)
        memcpy(carry, key + 1, ncarry * sizeof(*carry));
    *task = key[0];
    if (st != DAGGER_OK || key[0] == UINT64_MAX)
        return st;
    /* The lowest rank among those that hold that failure tells the others. */
    key[1] = atomic_load(&ex->failed) && ex->fail_task == key[0] ? (uint64_t)t->rank : UINT64_MAX;
    st = dg_tasks_allreduce_u64(t, &key[1], 1, DAGGER_OP_MIN);
    if (st != DAGGER_OK)
        return st;
    struct {
        int32_t status;
        char msg[512];
    } f;
    memset(&f, 0, sizeof(f));
    if ((uint64_t)t->rank == key[1]) {
        f.status = (int32_t)ex->fail_status;
        snprintf(f.msg, sizeof(f.msg), "%s", ex->fail_msg);
    }
    st = dg_tasks_bcast(t, &f, sizeof(f), (int)key[1]);
    *status = (dagger_status_t)f.status;
    snprintf(msg, len, "%s", f.msg);
    return st;
}

dagger_status_t dg_tasks_note_failure(dg_tasks_t *t, uint64_t first, dagger_status_t status,
                                      const char *msg)
{
    if (first >= UINT64_MAX - 1)
        return DAGGER_OK; /* not a task (a copy or memory failure): no task's data to mark */
    struct dg_fail_log *l = t->fails;
    if (!l && !(l = t->fails = dg_calloc(1, sizeof(*l))))
        return DAGGER_ERR_NO_MEMORY;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4;
        dg_fail_rec_t *v = dg_realloc(l->v, cap * sizeof(*v));
        if (!v)
            return DAGGER_ERR_NO_MEMORY;
        l->v = v;
        l->cap = cap;
    }
    dg_fail_rec_t *r = &l->v[l->n++];
    r->first = first;
    r->status = status;
    snprintf(r->msg, sizeof(r->msg), "%s", msg);
    dg_planner_taint(t, first, (uint32_t)l->n); /* tag = record index + 1 */
    return DAGGER_OK;
}

void dg_tasks_fail_log_free(dg_tasks_t *t)
{
    if (t->fails)
        free(t->fails->v);
    free(t->fails);
    t->fails = NULL;
}

static dagger_status_t suspect(const char *fn, const char *what, uint64_t id, uint64_t writer,
                               uint64_t first, dagger_status_t status, const char *msg)
{
    if (writer == first)
        return dg_error(status, "%s: %s %llu holds no valid data: %s", fn, what,
                        (unsigned long long)id, msg);
    return dg_error(status, "%s: %s %llu holds no valid data: task %llu wrote it after task %llu "
                    "failed in its region, or from data that failure spoiled (%s)", fn, what,
                    (unsigned long long)id, (unsigned long long)writer,
                    (unsigned long long)first, msg);
}

dagger_status_t dg_tasks_data_status(dg_tasks_t *t, uint64_t id, const char *fn, const char *what)
{
    uint64_t writer = 0;
    uint32_t tag = 0;
    if (dg_plan_chunk_writer(t->plan, id, &writer) != DAGGER_OK || !writer)
        return DAGGER_OK;
    if (t->region) {
        /* The failure is not agreed yet: every rank has waited for its share
         * of the plan so far, so agreeing now gives every rank the same answer. */
        uint64_t first;
        dagger_status_t status;
        char msg[512];
        dagger_status_t st = dg_tasks_agree_failure(t, &first, &status, msg, sizeof(msg), NULL, 0);
        if (st != DAGGER_OK)
            return st;
        if (first != UINT64_MAX && writer >= first)
            return suspect(fn, what, id, writer, first, status, msg);
    }
    dg_plan_chunk_taint(t->plan, id, &tag);
    if (tag && t->fails && tag <= t->fails->n) {
        const dg_fail_rec_t *r = &t->fails->v[tag - 1];
        return suspect(fn, what, id, writer, r->first, r->status, r->msg);
    }
    return DAGGER_OK;
}
