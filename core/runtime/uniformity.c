/* Uniformity checking switches and the user-value check. */
#include <dagger/region.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/runtime/tasks.h"
#include "core/base/hash.h"
#include "core/base/spmd_caller.h"
#include "core/base/status_internal.h"
#include "transport/coll.h"

/* What each rank says when the switch is thrown. */
typedef struct dg_switch {
    uint64_t plan_hash; /* everything planned so far */
    uint32_t on;
    uint32_t pad_;
} dg_switch_t;

/* " 0 2" for the ranks whose on equals want. */
static size_t ranks_with(const dg_switch_t *all, int n, uint32_t want, char *buf, size_t cap)
{
    size_t k = 0;
    for (int r = 0; r < n && k < cap; r++)
        if (all[r].on == want)
            k += (size_t)snprintf(buf + k, cap - k, " %d", r);
    return k;
}

/* The same verdict on every rank, from the gathered switches only; *mixed
 * when the ranks passed different values (nothing changes then). */
static dagger_status_t judge(const dg_switch_t *all, int n, uint32_t was, int *mixed)
{
    int history = 0;
    *mixed = 0;
    for (int r = 1; r < n; r++) {
        *mixed |= all[r].on != all[0].on;
        history |= all[r].plan_hash != all[0].plan_hash;
    }
    char on[256] = "", off[256] = "";
    if (*mixed) {
        ranks_with(all, n, 1, on, sizeof(on));
        ranks_with(all, n, 0, off, sizeof(off));
        return dg_error(DAGGER_ERR_DIVERGENCE, "dagger_check_uniformity is collective, but ranks%s "
                        "pass 1 and ranks%s pass 0; every rank must pass the same value (checking "
                        "stays %s on every rank)", on, off, was ? "on" : "off");
    }
    if (all[0].on && !was && history)
        return dg_error(DAGGER_ERR_DIVERGENCE, "dagger_check_uniformity: checking is on now, but the "
                        "ranks already planned different things while it was off (submissions, "
                        "chunks, regions or codelet descriptions differ): every later check "
                        "would fail; turn checking on earlier to find the first difference");
    return DAGGER_OK;
}

/* Collective (region.h): the ranks agree on the switch, and on what they
 * planned before it, so that a difference shows here and not as a puzzling
 * failure of the next identical call. */
dagger_status_t dagger_check_uniformity(dagger_runtime_t *rt, int on)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_check_uniformity");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t in = dg_spmd_allowed("dagger_check_uniformity");
    if (in != DAGGER_OK)
        return in;
    dg_switch_t mine = {.plan_hash = dg_plan_hash(t->plan), .on = on != 0};
    if (!t->tx) {
        t->uniformity = (int)mine.on;
        return DAGGER_OK;
    }
    void *all = NULL;
    size_t *lens = dg_calloc((size_t)t->nranks, sizeof(size_t));
    if (!lens)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_check_uniformity: out of memory");
    dagger_status_t st = dg_coll_allgather(t->tx, &mine, sizeof(mine), &all, lens);
    for (int r = 0; st == DAGGER_OK && r < t->nranks; r++)
        if (lens[r] != sizeof(mine))
            st = dg_error(DAGGER_ERR_PROTOCOL, "dagger_check_uniformity: rank %d sent %zu bytes, "
                          "not %zu", r, lens[r], sizeof(mine));
    int mixed = 1;
    if (st == DAGGER_OK)
        st = judge(all, t->nranks, (uint32_t)t->uniformity, &mixed);
    if (!mixed)
        t->uniformity = (int)mine.on;
    free(all);
    free(lens);
    return st;
}

dagger_status_t dagger_check_uniform(dagger_runtime_t *rt, const void *bytes, size_t len)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_check_uniform");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t in = dg_spmd_allowed("dagger_check_uniform");
    if (in != DAGGER_OK)
        return in;
    DG_CHECK_ARG(bytes || !len, "dagger_check_uniform: NULL bytes");
    if (!t->uniformity)
        return DAGGER_OK;
    dg_check_point_t cp = {.kind = DG_CHECK_USER, .task = t->checks + 1};
    cp.hash = dg_hash_bytes(dg_hash_u64(DG_HASH_SEED, len), bytes, len);
    return dg_tasks_check(t, &cp);
}
