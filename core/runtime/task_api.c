/* The calls a running task makes (dagger/task.h): its arguments, its
 * result, its failure, where it runs. The task's context is the executor's
 * (core/exec/task_ctx.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base/status_internal.h"
#include "core/exec/exec.h"
#include "core/exec/task_ctx.h"

dagger_slot_t dagger_task_arg(dagger_task_t *t, int i)
{
    if (!t || i < 0 || (uint32_t)i >= t->op->u.launch.nargs)
        return (dagger_slot_t){0};
    /* An initializer rather than memset and then each field: the compiler
     * zeroes the slot with a few stores (a Task Bench point reads four
     * arguments; this was 125 instructions each). */
    const dg_xarg_t *a = &t->op->u.launch.args[i];
    dagger_slot_t s = {.data = a->data, .dtype = a->dtype, .ndims = (int)a->ndims, .mod = a->mod,
                       .count = a->ndims ? 1 : 0};
    for (uint32_t k = 0; k < a->ndims && k < DAGGER_MAX_DIMS; k++) {
        s.dims[k] = a->dims[k];
        s.strides[k] = a->strides[k];
        s.count *= a->dims[k];
    }
    s.bytes = a->kind == DG_PLAN_ARG_VIEW ? s.count * dagger_dtype_size(a->dtype) : a->bytes;
    return s;
}

void *dagger_task_data(dagger_task_t *t, int i)
{
    if (!t || i < 0 || (uint32_t)i >= t->op->u.launch.nargs)
        return NULL;
    return t->op->u.launch.args[i].data;
}

int dagger_task_nargs(dagger_task_t *t)
{
    return t ? (int)t->op->u.launch.nargs : -1; /* the int sentinel (dagger.h) */
}

dagger_status_t dagger_task_return(dagger_task_t *t, const void *value, size_t len)
{
    DG_CHECK_ARG(t, "dagger_task_return: NULL task");
    DG_CHECK_ARG(value || !len, "dagger_task_return: %zu bytes at NULL", len);
    const dg_xlaunch_t *l = &t->op->u.launch;
    if (!l->ret)
        return dg_error(DAGGER_ERR_STATE, "dagger_task_return: codelet %s declares no return value "
                        "(set return_size in its description)",
                        dg_exec_codelet(t->ex, l->codelet)->name);
    if (len > l->ret_size) {
        /* A result larger than declared cannot be planned: the task fails. */
        char msg[300];
        snprintf(msg, sizeof(msg), "task %llu (%s) on rank %d returned %zu bytes, but its result "
                 "holds %u; declare a larger return_size (at registration or in "
                 "dagger_task_opts_t)", (unsigned long long)l->task,
                 dg_exec_codelet(t->ex, l->codelet)->name, t->ex->rank, len, l->ret_size);
        dg_exec_fail(t->ex, l->task, DAGGER_ERR_OVERFLOW, msg);
        t->failed = 1;
        return dg_error(DAGGER_ERR_OVERFLOW, "dagger_task_return: %s", msg);
    }
    memcpy(l->ret, value, len);
    return DAGGER_OK;
}

void *dagger_task_result(dagger_task_t *t, size_t *size)
{
    void *ret = t ? t->op->u.launch.ret : NULL;
    if (size)
        *size = ret ? t->op->u.launch.ret_size : 0;
    return ret;
}

int dagger_task_fail(dagger_task_t *t, const char *fmt, ...)
{
    if (!t)
        return DAGGER_ERR_TASK_FAILED;
    char detail[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    dg_exec_fail_task(t->ex, t->op, detail);
    t->failed = 1;
    return DAGGER_ERR_TASK_FAILED;
}

uint64_t dagger_task_seq(dagger_task_t *t)
{
    return t ? t->op->u.launch.task : 0;
}

int dagger_task_rank(dagger_task_t *t)
{
    return t ? t->ex->rank : -1;
}

int dagger_task_proc(dagger_task_t *t)
{
    uint32_t id;
    if (t && t->proc >= 0)
        return t->proc; /* a device's processor */
    if (!t || t->worker < 0 || t->worker >= t->ex->nworkers ||
        dg_plan_proc_id(t->ex->plan, t->ex->rank, DG_PLAN_CPU, (uint32_t)t->worker, &id) != DAGGER_OK)
        return -1; /* the submitting thread, helping while it waits */
    return (int)id;
}

void *dagger_task_stream(dagger_task_t *t)
{
    return t ? t->stream : NULL;
}

dagger_status_t dagger_task_after(dagger_task_t *t, dagger_task_check_fn fn, void *arg)
{
    DG_CHECK_ARG(t, "dagger_task_after: NULL task");
    t->op->u.launch.after = fn;
    t->op->u.launch.after_arg = fn ? arg : NULL;
    return DAGGER_OK;
}
