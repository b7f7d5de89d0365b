/* Launch argument blocks past 1 KiB (core/exec/blobpool.h, the executor's
 * big pool): a region that has many such tasks in flight at once gives its
 * blocks back to the pool, and the next region like it takes them from
 * there instead of allocating new ones. With a cap of 512 spare blocks, a
 * stencil sweep of 1024 blocks freed half its argument blocks at every
 * region's end and allocated them again in the next one, page faults
 * included, on the submitting thread (docs/benchmarks.md, "The argument
 * blocks of a 1024-task sweep"). */
#include <criterion/criterion.h>
#include <dagger.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "core/exec/exec.h"
#include "core/runtime/runtime.h"
#include "core/runtime/tasks.h"

#define NTASKS 1500       /* more than the old cap of 512 */
#define VALUE_BYTES 1536  /* with its slot, past the small pool's 1 KiB */

static atomic_int released;
static atomic_int ran;

/* Waits until every task of the region is submitted, so that all of them
 * are in flight at once; checks its value. */
static int hold(dagger_task_t *t)
{
    while (!atomic_load(&released))
        sched_yield();
    const unsigned char *v = dagger_task_data(t, 0);
    for (int i = 0; i < VALUE_BYTES; i++)
        if (v[i] != (unsigned char)i)
            return dagger_task_fail(t, "byte %d of the value is %d", i, v[i]);
    atomic_fetch_add(&ran, 1);
    return DAGGER_OK;
}

static void run_region(dagger_runtime_t *rt, dagger_codelet_t cl, const unsigned char *value)
{
    atomic_store(&released, 0);
    dagger_region_t *r;
    cr_assert_eq(dagger_region_begin(rt, NULL, &r), DAGGER_OK, "%s", dagger_error_detail());
    dagger_arg_t arg = DAGGER_VALUE(value, VALUE_BYTES);
    for (int i = 0; i < NTASKS; i++)
        cr_assert_eq(dagger_submit(r, cl, 1, &arg, NULL, NULL, NULL), DAGGER_OK, "%s",
                     dagger_error_detail());
    atomic_store(&released, 1);
    cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
}

static long spare_big_blocks(dagger_runtime_t *rt)
{
    return atomic_load(&rt->tasks->exec->blobs_big.kept);
}

Test(arg_blocks, a_repeated_region_reuses_its_argument_blocks, .timeout = 120)
{
    dagger_runtime_t *rt;
    cr_assert_eq(dagger_init(NULL, NULL, &(dagger_params_t){.num_threads = 1}, &rt), DAGGER_OK,
                 "%s", dagger_error_detail());
    dagger_codelet_t cl;
    cr_assert_eq(dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "arg_blocks_hold",
                                                                      .cpu = hold}, &cl),
                 DAGGER_OK, "%s", dagger_error_detail());
    static unsigned char value[VALUE_BYTES];
    for (int i = 0; i < VALUE_BYTES; i++)
        value[i] = (unsigned char)i;
    long before = spare_big_blocks(rt);
    run_region(rt, cl, value);
    long after1 = spare_big_blocks(rt);
    /* All NTASKS were in flight at once, each with a block of its own. */
    cr_assert_geq(after1 - before, NTASKS, "%ld spare big blocks after a region of %d tasks "
                  "in flight at once (%ld before): the rest were freed", after1, NTASKS, before);
    run_region(rt, cl, value);
    cr_assert_eq(spare_big_blocks(rt), after1, "the second region allocated %ld new blocks",
                 spare_big_blocks(rt) - after1);
    cr_assert_eq(atomic_load(&ran), 2 * NTASKS);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK, "%s", dagger_error_detail());
}
