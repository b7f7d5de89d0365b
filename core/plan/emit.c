/* Hands one op of this rank to the executor: numbers it, sorts its
 * dependencies and counts it. The op lives on the caller's stack and in the
 * planner's scratch, valid only during the callback (no per-op malloc). */
#include "core/plan/planner_internal.h"
#include "core/plan/replay.h"

uint64_t dg_plan_emit(dg_plan_t *p, dg_plan_op_t *op, dg_plan_u64vec_t *deps)
{
    op->seq = ++p->next_seq;
    if (deps) {
        dg_plan_u64vec_sort_unique(deps);
        op->deps = deps->v;
        op->ndeps = deps->n;
    } else {
        op->deps = NULL;
        op->ndeps = 0;
    }
    p->st.ops++;
    p->region_nops++;
    if (p->rp)
        dg_plan_rp_op(p, op);
    if (!p->silent)
        p->prm.emit(p->prm.emit_ctx, op);
    return op->seq;
}
