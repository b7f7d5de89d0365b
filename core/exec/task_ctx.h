/* What a running task's handle (dagger_task_t) points to: the executor, the
 * op, where it runs. Filled by the executor (run.c), read by the task calls
 * of the public API (core/runtime/task_api.c). */
#ifndef DG_EXEC_TASK_CTX_H
#define DG_EXEC_TASK_CTX_H

#include <stdint.h>

struct dg_exec;
struct dg_xop;

struct dagger_task {
    struct dg_exec *ex;
    struct dg_xop *op;
    int worker;
    int failed;
    void *stream;                     /* a device task's stream (stream_native) */
    int32_t proc;                     /* a device task's processor id; -1: a CPU task */
};

#endif
