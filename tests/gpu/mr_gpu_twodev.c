/* Two test devices per rank (DAGGER_TEST_DEVICES=2): data moves between the
 * devices of one rank (device to device with peer access, else host-staged
 * in two halves) and placement over "all devices" uses both; between ranks, device i of every rank stands for GPU
 * i of one node, and the start-up probe decides which pairs of different
 * devices move data through IPC handles. */
#include <stdio.h>

#include "devices/testdev/testdev.h"
#include "gpu/mr_gpu_dev.h"
#include "gpu/mr_gpu_util.h"

static double ramp(size_t i, size_t j)
{
    return (double)(i + 100 * j);
}

/* The copies into this rank's devices that went device to device
 * (dg_dev_t.peer_copies). */
static void copy_counts(dagger_runtime_t *rt, uint64_t *peer)
{
    dg_devs_t *ds = dg_devs_of(rt->tasks->exec);
    *peer = 0;
    for (int d = 0; d < ds->n; d++)
        *peer += atomic_load(&ds->dev[d].peer_copies);
}

/* A chunk on the last rank: whole on its device 0, its lower triangle on
 * device 1 (a strided view), whole on device 0 again. With peer access
 * the two copies between the devices go device to device (the data the
 * same either way). */
static void between_devices_of_a_rank(int peers)
{
    dg_testdev_peers(peers);
    dagger_runtime_t *rt = mr_init();
    int last = dagger_nranks(rt) - 1;
    dagger_chunk_t c = mr_chunk2(rt, 8, 8, last, ramp);
    dagger_codelet_t add1 = GPU_REG(rt, gpu_add1);
    int a = gpu_proc(rt, last, 0), b = gpu_proc(rt, last, 1);
    cr_assert(a >= 0 && b >= 0, "two test devices on rank %d", last);
    if (dagger_rank(rt) == last) {
        dg_devs_t *ds = dg_devs_of(rt->tasks->exec);
        cr_assert_eq(ds->dev[0].peers, peers ? 2u : 0u, "device 0 reaches device 1: %d", peers);
        cr_assert_eq(ds->dev[1].peers, peers ? 1u : 0u, "device 1 reaches device 0: %d", peers);
    }
    uint64_t before, after;
    copy_counts(rt, &before);
    dagger_scope_t sa = gpu_scope(&a), sb = gpu_scope(&b), all = {.kinds = gpu_kind()};
    dagger_view_t v = dagger_view(rt, c);
    dagger_view_t lower = dagger_view_mod(v, DAGGER_LOWER);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, &all, &r));
    gpu_on(r, add1, v, &sa, 1);     /* whole chunk on device 0 */
    gpu_on(r, add1, lower, &sb, 1); /* its lower triangle on device 1 */
    gpu_on(r, add1, v, &sa, 1);     /* back on device 0 */
    MR_OK(dagger_region_end(r));
    double want[64];
    for (size_t k = 0; k < 64; k++)
        want[k] = ramp(k % 8, k / 8) + 2 + (k % 8 >= k / 8);
    gpu_expect(rt, c, want, 64);
    dagger_region_stats_t st;
    MR_OK(dagger_region_stats(rt, &st));
    cr_assert_gt(st.copies, 0, "copies between the rank's memory spaces");
    copy_counts(rt, &after);
    if (dagger_rank(rt) == last)
        cr_assert_eq(after - before, peers ? 2u : 0u, "peer access %d: %llu copies device to "
                     "device (to device 1 and back)", peers, (unsigned long long)(after - before));
    MR_OK(dagger_chunk_free(rt, c));
    MR_OK(dagger_finalize(rt));
}

Test(gpu_twodev, data_moves_between_the_devices_of_a_rank)
{
    between_devices_of_a_rank(1);
}

Test(gpu_twodev, without_peer_access_data_between_the_devices_of_a_rank_stages_through_host)
{
    between_devices_of_a_rank(0);
}

/* The IPC counters of this rank's devices, summed over every rank. */
static void ipc_counts(dagger_runtime_t *rt, uint64_t out[3])
{
    dg_devs_t *ds = dg_devs_of(rt->tasks->exec);
    uint64_t c[3] = {0, 0, 0};
    for (int d = 0; d < ds->n; d++) {
        c[0] += atomic_load(&ds->dev[d].ipc_received);
        c[1] += atomic_load(&ds->dev[d].staged);
        c[2] += atomic_load(&ds->dev[d].ipc_lent);
    }
    MR_OK(dagger_allreduce(rt, c, 3, DAGGER_U64, DAGGER_OP_ADD));
    memcpy(out, c, sizeof(c));
}

/* The start-up probe (devices/dev_ipc_probe.c) with the test devices' peer
 * access on or off (dg_testdev_peers): which pairs it lets through, and
 * a chunk moved from rank 0's device 1 to rank 1's device 0 (different
 * devices: through a handle only with peer access) and on to rank 0's
 * device 0 (the same device index: always through a handle). */
static void probe_and_move(int peers)
{
    dg_testdev_peers(peers);
    dagger_runtime_t *rt = mr_init();
    int nr = dagger_nranks(rt), me = dagger_rank(rt);
    if (nr == 1) {
        MR_OK(dagger_finalize(rt));
        cr_skip_test("needs 2+ ranks");
    }
    const dg_dev_ipc_map_t *m = dg_devs_of(rt->tasks->exec)->ipc;
    cr_assert(m, "rank %d: no IPC map", me);
    if (me <= 1) { /* a rank keeps the probe's pairs that concern it */
        cr_assert(dg_dev_ipc_map_can(m, 0, 0, 1, 0) && dg_dev_ipc_map_can(m, 1, 1, 0, 1),
                  "rank %d: the same device index of two ranks goes through handles", me);
        cr_assert_eq(dg_dev_ipc_map_can(m, 0, 1, 1, 0), peers, "rank %d: rank 0's device 1 to "
                     "rank 1's device 0, peer access %d", me, peers);
        cr_assert_eq(dg_dev_ipc_map_can(m, 1, 0, 0, 1), peers, "rank %d: rank 1's device 0 to "
                     "rank 0's device 1, peer access %d", me, peers);
        cr_assert(!dg_dev_ipc_map_can(m, 0, 0, 0, 1), "rank %d: a rank's own two devices", me);
    }
    /* each of this rank's devices tried the other index on every other rank */
    cr_assert_eq(m->probed, 2u * (uint32_t)(nr - 1), "rank %d probed %u pairs", me, m->probed);
    cr_assert_eq(m->failed, peers ? 0 : m->probed, "rank %d: %u pairs failed", me, m->failed);

    dagger_chunk_t c = mr_chunk2(rt, 8, 8, 0, ramp);
    dagger_codelet_t add1 = GPU_REG(rt, gpu_add1);
    int a = gpu_proc(rt, 0, 1), b = gpu_proc(rt, 1, 0), z = gpu_proc(rt, 0, 0);
    dagger_scope_t sa = gpu_scope(&a), sb = gpu_scope(&b), sz = gpu_scope(&z);
    dagger_scope_t all = {.kinds = gpu_kind()};
    dagger_view_t v = dagger_view(rt, c);
    uint64_t before[3], after[3];
    ipc_counts(rt, before);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, &all, &r));
    gpu_on(r, add1, v, &sa, 1);
    gpu_on(r, add1, v, &sb, 1);
    gpu_on(r, add1, v, &sz, 1);
    MR_OK(dagger_region_end(r));
    double want[64];
    for (size_t k = 0; k < 64; k++)
        want[k] = ramp(k % 8, k / 8) + 3;
    gpu_expect(rt, c, want, 64);
    for (int settled = 0; !settled;) { /* the receivers gave every block back */
        ipc_counts(rt, after);
        settled = after[2] == 0;
        if (!settled)
            sched_yield();
    }
    /* received through a handle; host-staged counts both ends of a transfer */
    cr_assert_eq(after[0] - before[0], peers ? 2u : 1u, "peer access %d: %llu transfers went "
                 "through handles", peers, (unsigned long long)(after[0] - before[0]));
    cr_assert_eq(after[1] - before[1], peers ? 0u : 2u, "peer access %d: %llu ends host-staged",
                 peers, (unsigned long long)(after[1] - before[1]));
    MR_OK(dagger_chunk_free(rt, c));
    MR_OK(dagger_finalize(rt));
}

Test(gpu_twodev, different_devices_of_a_node_go_through_handles_where_the_probe_read_them)
{
    probe_and_move(1);
}

Test(gpu_twodev, without_peer_access_different_devices_go_through_host_memory)
{
    probe_and_move(0);
}
