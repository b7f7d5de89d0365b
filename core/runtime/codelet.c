/* Public codelet registration: the planner learns the name, kinds and return
 * size; the executor the implementations. */
#include <dagger/task.h>
#include <stdlib.h>
#include <string.h>

#include "core/runtime/planner.h"
#include "core/runtime/tasks.h"
#include "core/base/spmd_caller.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"

dagger_status_t dagger_codelet_register(dagger_runtime_t *rt, const dagger_codelet_desc_t *desc,
                                        dagger_codelet_t *out)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_codelet_register");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t in = dg_spmd_allowed("dagger_codelet_register");
    if (in != DAGGER_OK)
        return in;
    DG_CHECK_ARG(desc && out, "dagger_codelet_register: NULL description or output");
    DG_CHECK_ARG(desc->name && desc->name[0], "dagger_codelet_register: the codelet has no name");
    DG_CHECK_ARG(strlen(desc->name) < 64, "dagger_codelet_register: name '%s' is longer than 63 "
                 "characters", desc->name);
    DG_CHECK_ARG(desc->cpu || desc->cuda || desc->hip,
                 "dagger_codelet_register: codelet '%s' has no implementation (set .cpu)", desc->name);
    DG_CHECK_ARG(desc->return_size <= DAGGER_MAX_RETURN,
                 "dagger_codelet_register: codelet '%s' returns %zu bytes; at most %d",
                 desc->name, desc->return_size, DAGGER_MAX_RETURN);
    DG_CHECK_ARG(desc->nargs >= 0 && desc->nargs <= DAGGER_MAX_ARGS,
                 "dagger_codelet_register: codelet '%s' declares %d arguments; at most %d",
                 desc->name, desc->nargs, DAGGER_MAX_ARGS);
    dagger_dtype_t any[DAGGER_MAX_ARGS] = {0};
    dg_plan_codelet_desc_t d = {
        .name = desc->name,
        .kinds = (desc->cpu ? DG_PLAN_KIND_BIT(DG_PLAN_CPU) : 0) |
                 (desc->cuda ? DG_PLAN_KIND_BIT(DG_PLAN_CUDA) : 0) |
                 (desc->hip ? DG_PLAN_KIND_BIT(DG_PLAN_HIP) : 0),
        .ret_size = (uint32_t)desc->return_size,
        .dtypes = desc->nargs ? (desc->arg_dtypes ? desc->arg_dtypes : any) : NULL,
        .ndtypes = (uint32_t)desc->nargs,
        .cost = desc->cost,
    };
    uint32_t id;
    dagger_status_t st = dg_planner_codelet(t, &d, &id);
    if (st != DAGGER_OK)
        return st;
    st = dg_exec_codelet_add(t->exec, id, desc->name, desc->cpu, desc->cuda, desc->hip);
    if (st == DAGGER_OK)
        out->id = id;
    if (st == DAGGER_OK && DG_TRACE_ON())
        dg_trace_codelet(id, desc->name);
    return st;
}
