/* A check that runs once a device task's queued work is done. A device
 * implementation only queues work on the task's stream and returns; what
 * that work finds (cuSOLVER's info, in device memory) is known when the
 * processor actor sees the task's event pass. The implementation queues a
 * copy of it into host memory and registers a check here; the actor runs
 * the check before it finishes the task, so a failure it reports becomes the
 * task's failure, on every rank like any other (dagger_task_fail's message
 * form). Nothing waits for the device. */
#ifndef DG_EXEC_TASK_AFTER_H
#define DG_EXEC_TASK_AFTER_H

#include <stddef.h>

/* ok = 0: the device work itself failed (already recorded); the check then
 * only releases what it holds. Returns nonzero with a message in detail
 * (what dagger_task_fail would say) when the task failed. */
typedef int (*dg_task_after_fn)(void *arg, int ok, char *detail, size_t cap);

struct dagger_task;
/* At most one check per task (a second replaces the first: none needs two). */
void dg_task_after(struct dagger_task *t, dg_task_after_fn fn, void *arg);

#endif
