/* Launch order: Kahn's algorithm with a FIFO frontier seeded in submission
 * order. Nodes that are ready from the start are all exposed before any node
 * they unlock, so independent producers run before the consumers that wait
 * on them (the Dagger.jl #773 lesson: a depth-first walk stalls on a
 * consumer while independent branches are still unsubmitted). */
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/plan/plan.h"
#include "core/base/status_internal.h"

dagger_status_t dg_plan_launch_order(uint32_t n, const uint32_t *dep_off, const uint32_t *deps,
                                     uint32_t *order)
{
    DG_CHECK_ARG(!n || (dep_off && order), "dg_plan_launch_order: NULL argument");
    DG_CHECK_ARG(!n || !dep_off[n] || deps, "dg_plan_launch_order: NULL dependency array");
    uint32_t m = n ? dep_off[n] : 0;
    uint32_t *indeg = dg_calloc(n + 1, sizeof(uint32_t));
    uint32_t *out_off = dg_calloc(n + 2, sizeof(uint32_t));
    uint32_t *out = dg_malloc((m + 1) * sizeof(uint32_t));
    if (!indeg || !out_off || !out) {
        free(indeg);
        free(out_off);
        free(out);
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan_launch_order: out of memory");
    }
    dagger_status_t st = DAGGER_OK;
    /* Reverse edges in CSR form: who each node unlocks, in node order. */
    for (uint32_t i = 0; i < n && st == DAGGER_OK; i++)
        for (uint32_t k = dep_off[i]; k < dep_off[i + 1]; k++) {
            if (deps[k] >= n) {
                st = dg_error(DAGGER_ERR_INVALID_ARG, "dg_plan_launch_order: node %u depends on "
                              "node %u of %u", i, deps[k], n);
                break;
            }
            out_off[deps[k] + 2]++;
            indeg[i]++;
        }
    if (st == DAGGER_OK) {
        for (uint32_t i = 0; i < n; i++)
            out_off[i + 2] += out_off[i + 1];
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t k = dep_off[i]; k < dep_off[i + 1]; k++)
                out[out_off[deps[k] + 1]++] = i;
        /* The frontier is the order array itself: a FIFO queue. */
        uint32_t head = 0, tail = 0;
        for (uint32_t i = 0; i < n; i++)
            if (!indeg[i])
                order[tail++] = i;
        while (head < tail) {
            uint32_t v = order[head++];
            for (uint32_t k = out_off[v]; k < out_off[v + 1]; k++)
                if (--indeg[out[k]] == 0)
                    order[tail++] = out[k];
        }
        if (tail < n)
            st = dg_error(DAGGER_ERR_CYCLE, "dg_plan_launch_order: %u of %u nodes are on or "
                          "behind a dependency cycle", n - tail, n);
    }
    free(indeg);
    free(out_off);
    free(out);
    return st;
}
