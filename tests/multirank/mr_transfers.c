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
