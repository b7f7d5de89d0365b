/* Which device pairs of two ranks go through IPC handles (devices.h,
 * dg_dev_ipc_map_t): the published domains and nodes, when the start-up
 * probe has pairs to try, and how its pairs decide the rest. */
#include <criterion/criterion.h>
#include <string.h>

#include "devices/devices.h"
#include "devices/testdev/testdev.h"

#define NR 4

typedef struct table {
    uint64_t dom[NR * DG_DEV_MAX], node[NR * DG_DEV_MAX];
    dg_dev_ipc_map_t m;
} table_t;

/* Rank r's device d: on node `node` (0: no IPC), physical device `dom`. */
static void put(table_t *t, int r, int d, uint64_t node, uint64_t dom)
{
    t->node[r * DG_DEV_MAX + d] = node;
    t->dom[r * DG_DEV_MAX + d] = dom;
}

static void init(table_t *t, int nranks)
{
    memset(t, 0, sizeof(*t));
    t->m = (dg_dev_ipc_map_t){.nranks = nranks, .domains = t->dom, .nodes = t->node};
}

Test(ipc_map, the_probe_runs_only_for_different_devices_of_one_node_on_two_ranks)
{
    table_t t;
    init(&t, 2); /* two ranks share one GPU */
    put(&t, 0, 0, 7, 100);
    put(&t, 1, 0, 7, 100);
    cr_assert_eq(dg_dev_ipc_probe_needed(&t.m), 0);
    put(&t, 1, 0, 7, 101); /* one GPU each */
    cr_assert_eq(dg_dev_ipc_probe_needed(&t.m), 1);
    put(&t, 1, 0, 8, 101); /* on two nodes */
    cr_assert_eq(dg_dev_ipc_probe_needed(&t.m), 0);

    init(&t, 3); /* rank 0 alone on its node with two GPUs; ranks 1 and 2 share one */
    put(&t, 0, 0, 7, 100);
    put(&t, 0, 1, 7, 101);
    put(&t, 1, 0, 8, 200);
    put(&t, 2, 0, 8, 200);
    cr_assert_eq(dg_dev_ipc_probe_needed(&t.m), 0, "a rank's own devices are no pair");
    put(&t, 2, 0, 7, 100); /* rank 2 joins rank 0's node, on its GPU 0 */
    cr_assert_eq(dg_dev_ipc_probe_needed(&t.m), 1, "rank 2's GPU 0 and rank 0's GPU 1");
    put(&t, 0, 1, 0, 0); /* without IPC (DAGGER_GPU_IPC=0 there) */
    cr_assert_eq(dg_dev_ipc_probe_needed(&t.m), 0);
}

Test(ipc_map, the_same_device_always_and_different_ones_only_where_the_probe_passed)
{
    table_t t;
    init(&t, 3);
    put(&t, 0, 0, 7, 100);
    put(&t, 0, 1, 7, 101);
    put(&t, 1, 0, 7, 100);
    put(&t, 1, 1, 7, 101);
    put(&t, 2, 0, 8, 300); /* another node */
    /* rank 1's device 0 read rank 0's device 1 (keys of dev_ipc_probe.c) */
    uint64_t opened[1] = {(uint64_t)1 << 36 | (uint64_t)0 << 32 | (uint64_t)0 << 4 | 1};
    t.m.opened = opened;
    t.m.nopened = 1;
    cr_assert(dg_dev_ipc_map_can(&t.m, 0, 0, 1, 0), "the same GPU");
    cr_assert(dg_dev_ipc_map_can(&t.m, 1, 1, 0, 1), "the same GPU");
    cr_assert(dg_dev_ipc_map_can(&t.m, 0, 1, 1, 0), "probed: rank 0's GPU 1 to rank 1's GPU 0");
    cr_assert(!dg_dev_ipc_map_can(&t.m, 1, 0, 0, 1), "the other direction was not probed");
    cr_assert(!dg_dev_ipc_map_can(&t.m, 0, 0, 1, 1), "not probed");
    cr_assert(!dg_dev_ipc_map_can(&t.m, 0, 0, 2, 0), "another node");
    cr_assert(!dg_dev_ipc_map_can(&t.m, 0, 0, 0, 3), "a device rank 0 does not have");
    cr_assert(!dg_dev_ipc_map_can(&t.m, 0, 0, 5, 0), "a rank out of range");
    cr_assert(!dg_dev_ipc_map_can(NULL, 0, 0, 1, 0), "no map: no IPC");
}

Test(ipc_map, test_devices_of_one_index_are_one_device_of_the_node)
{
    dg_testdev_configure(2);
    dg_dev_table_t devs;
    cr_assert_eq(dg_dev_discover(2, &devs), DAGGER_OK);
    cr_assert_eq(devs.n, 2);
    const dg_dev_found_t *a = &devs.dev[0], *b = &devs.dev[1];
    cr_assert_eq(dg_dev_ipc_node(a, "h", 1), dg_dev_ipc_node(b, "h", 1), "one node");
    cr_assert_neq(dg_dev_ipc_domain(a, "h", 1), dg_dev_ipc_domain(b, "h", 1), "two devices");
    cr_assert_neq(dg_dev_ipc_node(a, "h", 1), dg_dev_ipc_node(a, "g", 1), "another host");
    cr_assert_eq(dg_dev_ipc_node(a, "h", 0), 0, "DAGGER_GPU_IPC=0");
    cr_assert_eq(dg_dev_ipc_domain(a, "h", 0), 0, "DAGGER_GPU_IPC=0");
    dg_testdev_configure(0);
}
