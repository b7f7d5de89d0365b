/* The device tests' view of the runtime's own device state (devices/dev.h):
 * counters and settings the tests check. */
#ifndef DG_TEST_MR_GPU_DEV_H
#define DG_TEST_MR_GPU_DEV_H

#include "core/runtime/runtime.h"
#include "core/runtime/tasks.h"
#include "devices/dev.h"
#include "gpu/mr_gpu_util.h"

/* The rank's first device of the kind under test (a GPU machine's
 * test-device run has its CUDA device too); a test failure naming what is
 * missing when there is none. */
static inline dg_dev_t *gpu_dev_under_test(dagger_runtime_t *rt)
{
    dg_devs_t *ds = dg_devs_of(rt->tasks->exec);
    const char *be = gpu_kind() == DAGGER_PROC_CUDA ? "cuda" : "testdev";
    for (int d = 0; d < ds->n; d++)
        if (strcmp(ds->dev[d].be->name, be) == 0)
            return &ds->dev[d];
    cr_assert_fail("rank %d has no %s", dagger_rank(rt), gpu_kind_name());
    return NULL;
}

#endif
