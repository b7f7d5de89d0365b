/* Between real ranks (1..4): explicit `after` dependencies, the move_rewrap
 * header check of a transfer, and where a chunk's bytes live. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "core/runtime/tasks.h"
#include "core/runtime/runtime.h"
#include "mr_codelets.h"
#include "mr_util.h"

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* one clock for every process of the host */
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Takes 300 ms, then stamps its end. */
static int stamp_end(dagger_task_t *t)
{
    int64_t until = mono_ns() + 300 * 1000000ll;
    while (mono_ns() < until)
        usleep(5000);
    *(int64_t *)dagger_task_arg(t, 0).data = mono_ns();
    return DAGGER_OK;
}

static int stamp_start(dagger_task_t *t)
{
    *(int64_t *)dagger_task_arg(t, 0).data = mono_ns();
    return DAGGER_OK;
}

static dagger_codelet_t reg(dagger_runtime_t *rt, const char *name, dagger_impl_fn fn)
{
    dagger_codelet_t cl;
    MR_OK(dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = name, .cpu = fn}, &cl));
    return cl;
}

static dagger_chunk_t stamp_chunk(dagger_runtime_t *rt, int owner)
{
    dagger_chunk_desc_t d = {.dtype = DAGGER_I64, .ndims = 1, .dims = {1}, .owner = owner};
    dagger_chunk_t c;
    MR_OK(dagger_chunk_create(rt, &d, &c));
    return c;
}

/* A task on the last rank that shares no data with a slow task on rank 0
 * but names it in `after` starts only once the slow one has ended. */
Test(transfers, after_orders_tasks_across_ranks)
{
    dagger_runtime_t *rt = mr_init();
    int n = dagger_nranks(rt);
    dagger_codelet_t slow = reg(rt, "t_stamp_end", stamp_end);
    dagger_codelet_t quick = reg(rt, "t_stamp_start", stamp_start);
    dagger_chunk_t a = stamp_chunk(rt, 0), b = stamp_chunk(rt, n - 1);
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    uint64_t first;
    dagger_arg_t aa = DAGGER_OUT(dagger_view(rt, a)), ab = DAGGER_OUT(dagger_view(rt, b));
    dagger_task_opts_t o0 = {.scope = &DAGGER_SCOPE_RANK(0)};
    MR_OK(dagger_submit(r, slow, 1, &aa, &o0, &first, NULL));
    dagger_task_opts_t o1 = {.scope = &DAGGER_SCOPE_RANK(n - 1), .after = &first, .nafter = 1};
    MR_OK(dagger_submit(r, quick, 1, &ab, &o1, NULL, NULL));
    MR_OK(dagger_region_end(r));
    int64_t end_of_first, start_of_second;
    mr_gather(rt, a, &end_of_first, sizeof(end_of_first));
    mr_gather(rt, b, &start_of_second, sizeof(start_of_second));
    cr_assert_geq(start_of_second, end_of_first,
                  "the task after task %llu started %lld ns before that one ended",
                  (unsigned long long)first, (long long)(end_of_first - start_of_second));
    MR_OK(dagger_finalize(rt));
}

/* Ranks that planned different views of one transfer (uniformity checking
 * off): the region's end finds that they planned different work
 * (DAGGER_ERR_DIVERGENCE on every rank; the receiver's header check, which
 * once reported it as DAGGER_ERR_PROTOCOL naming both views, still guards
 * against a header that does not match the plan, and the fuzzers feed it). */
Test(transfers, different_views_of_one_transfer_are_a_divergence)
{
    dagger_runtime_t *rt = mr_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    dagger_codelet_t touch = reg(rt, "t_touch", mr_touch);
    dagger_chunk_t c = mr_chunk2(rt, 8, 1, 0, NULL);
    dagger_view_t v = dagger_view(rt, c);
    if (me == n - 1) /* the receiver plans half of what the sender sends */
        v = dagger_view_sub(v, (size_t[]){0, 0}, (size_t[]){4, 1});
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    dagger_arg_t arg = DAGGER_IN(v);
    dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(n - 1)};
    MR_OK(dagger_submit(r, touch, 1, &arg, &o, NULL, NULL));
    dagger_status_t st = dagger_region_end(r);
    if (n == 1)
        cr_assert_eq(st, DAGGER_OK, "%s", dagger_error_detail());
    else
        MR_DIVERGED(st, me, "the ranks submitted different work");
    MR_OK(dagger_finalize(rt));
}

/* Bytes this rank's buffers hold for a chunk, in any memory space. */
static size_t bytes_held(dagger_runtime_t *rt, dagger_chunk_t c)
{
    const dg_bufs_t *b = &rt->tasks->exec->bufs;
    size_t sum = 0;
    for (size_t i = 0; i < b->cap; i++)
        if (b->slots[i].chunk == c.id)
            sum += b->slots[i].bytes;
    return sum;
}

/* Only the owner holds a chunk's bytes; elsewhere it is metadata (type,
 * shape, owner). A region that reads it elsewhere leaves nothing behind. */
Test(transfers, non_owners_hold_no_bytes_of_a_chunk)
{
    dagger_runtime_t *rt = mr_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    dagger_codelet_t touch = reg(rt, "t_touch", mr_touch);
    dagger_chunk_t c = mr_chunk2(rt, 16, 16, 0, NULL);
    const size_t full = 16 * 16 * sizeof(double);
    for (int pass = 0; pass < 2; pass++) {
        void *data;
        MR_OK(dagger_chunk_data(rt, c, &data, NULL));
        cr_assert_eq(data != NULL, me == 0, "rank %d: data %p (pass %d)", me, data, pass);
        cr_assert_eq(bytes_held(rt, c), me == 0 ? full : 0, "rank %d holds %zu bytes (pass %d)",
                     me, bytes_held(rt, c), pass);
        cr_assert_eq(dagger_chunk_owner(rt, c), 0);
        dagger_region_t *r;
        MR_OK(dagger_region_begin(rt, NULL, &r));
        dagger_arg_t arg = DAGGER_IN(dagger_view(rt, c));
        dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(n - 1)};
        MR_OK(dagger_submit(r, touch, 1, &arg, &o, NULL, NULL));
        MR_OK(dagger_region_end(r));
    }
    MR_OK(dagger_finalize(rt));
}

/* Writes 1 into every element after 300 ms. */
static int slow_ones(dagger_task_t *t)
{
    usleep(300 * 1000);
    mr_fill(dagger_task_arg(t, 0), 1.0);
    return DAGGER_OK;
}

static int quick_twos(dagger_task_t *t)
{
    mr_fill(dagger_task_arg(t, 0), 2.0);
    return DAGGER_OK;
}

/* Copies its In argument (m x 1) into its Out argument. */
static int copy_col(dagger_task_t *t)
{
    dagger_slot_t in = dagger_task_arg(t, 0), out = dagger_task_arg(t, 1);
    for (size_t i = 0; i < in.dims[0]; i++)
        ((double *)out.data)[i * out.strides[0]] = ((const double *)in.data)[i * in.strides[0]];
    return DAGGER_OK;
}

/* Sums its In argument (m x 1) into element 0 of its InOut argument. */
static int add_into(dagger_task_t *t)
{
    dagger_slot_t in = dagger_task_arg(t, 0), out = dagger_task_arg(t, 1);
    double s = 0;
    for (size_t i = 0; i < in.dims[0]; i++)
        s += ((const double *)in.data)[i * in.strides[0]];
    ((double *)out.data)[0] += s;
    return DAGGER_OK;
}

/* Two rendezvous transfers from rank 0 to the last rank, the one planned
 * first ready last (its producer waits 300 ms for data from the last
 * rank): with one send in flight per peer the second, ready at once, is
 * posted first and completes only when the receiver has planned its
 * receive, while the receiver's op window (64, the smallest) fills up
 * behind the first receive, whose send was queued behind it. The transport
 * lets a send planned before every send in flight to the same peer start
 * past the bound (docs/transport.md, "Flow control"); before, this hung. */
Test(transfers, a_send_planned_earlier_overtakes_one_stuck_in_flight, .timeout = 120)
{
    setenv("DAGGER_TASK_WINDOW", "64", 1);
    setenv("DAGGER_EAGER_LIMIT", "64", 1);
    setenv("DAGGER_PEER_INFLIGHT", "1", 1);
    dagger_runtime_t *rt = mr_init();
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    dagger_codelet_t slow = reg(rt, "t_slow_ones", slow_ones);
    dagger_codelet_t quick = reg(rt, "t_quick_twos", quick_twos);
    dagger_codelet_t copy = reg(rt, "t_copy_col", copy_col);
    dagger_codelet_t add = reg(rt, "t_add_into", add_into);
    dagger_codelet_t add1 = reg(rt, "t_add1", mr_add1);
    dagger_chunk_t z = mr_chunk2(rt, 32, 1, n - 1, NULL);
    dagger_chunk_t x1 = mr_chunk2(rt, 32, 1, 0, NULL), x2 = mr_chunk2(rt, 32, 1, 0, NULL);
    dagger_chunk_t acc = mr_chunk2(rt, 1, 1, n - 1, NULL);
    if (me == n - 1) {
        double *a;
        MR_OK(dagger_chunk_data(rt, acc, (void **)&a, NULL));
        a[0] = 0;
    }
    dagger_region_t *r;
    MR_OK(dagger_region_begin(rt, NULL, &r));
    dagger_arg_t wz = DAGGER_OUT(dagger_view(rt, z));
    MR_OK(mr_spawn_on(r, slow, n - 1, 1, &wz, NULL));
    dagger_arg_t c1[2] = {DAGGER_IN(dagger_view(rt, z)), DAGGER_OUT(dagger_view(rt, x1))};
    MR_OK(mr_spawn_on(r, copy, 0, 2, c1, NULL));
    dagger_arg_t w2 = DAGGER_OUT(dagger_view(rt, x2));
    MR_OK(mr_spawn_on(r, quick, 0, 1, &w2, NULL));
    dagger_arg_t a1[2] = {DAGGER_IN(dagger_view(rt, x1)), DAGGER_INOUT(dagger_view(rt, acc))};
    MR_OK(mr_spawn_on(r, add, n - 1, 2, a1, NULL)); /* the first receive */
    for (int i = 0; i < 100; i++) { /* fill the receiver's window behind it */
        dagger_arg_t one = DAGGER_INOUT(dagger_view(rt, acc));
        MR_OK(mr_spawn_on(r, add1, n - 1, 1, &one, NULL));
    }
    dagger_arg_t a2[2] = {DAGGER_IN(dagger_view(rt, x2)), DAGGER_INOUT(dagger_view(rt, acc))};
    MR_OK(mr_spawn_on(r, add, n - 1, 2, a2, NULL)); /* the second */
    MR_OK(dagger_region_end(r));
    double sum;
    mr_gather(rt, acc, &sum, sizeof(sum));
    cr_assert_eq(sum, 32 * 1.0 + 100 + 32 * 2.0, "the last rank summed %g", sum);
    MR_OK(dagger_finalize(rt));
    unsetenv("DAGGER_PEER_INFLIGHT");
    unsetenv("DAGGER_EAGER_LIMIT");
    unsetenv("DAGGER_TASK_WINDOW");
}
