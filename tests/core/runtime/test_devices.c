/* Device settings and test devices in one process: DAGGER_TEST_DEVICES
 * gives the rank test devices (and only then), bad values of it and of
 * DAGGER_GPU_DIRECT stop dagger_init with a message naming the setting, and
 * a task failing on a test device fails the region like a CPU task. */
#include <criterion/criterion.h>
#include <dagger.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/runtime/runtime.h"
#include "core/runtime/tasks.h"
#include "devices/dev.h"

static void init_with(const char *ndev, const char *direct, dagger_status_t want,
                      dagger_runtime_t **rt)
{
    setenv("DAGGER_NUM_THREADS", "2", 1);
    setenv("DAGGER_TEST_DEVICES", ndev, 1);
    if (direct)
        setenv("DAGGER_GPU_DIRECT", direct, 1);
    cr_assert_eq(dagger_init(NULL, NULL, NULL, rt), want, "%s", dagger_error_detail());
}

static int count_kind(dagger_runtime_t *rt, dagger_proc_kind_t k)
{
    dagger_proc_info_t p[64];
    int n = dagger_procs(rt, p, 64), c = 0;
    for (int i = 0; i < n && i < 64; i++)
        c += p[i].kind == k;
    return c;
}

Test(devices, test_devices_only_when_asked)
{
    dagger_runtime_t *rt;
    init_with("0", NULL, DAGGER_OK, &rt);
    cr_assert_eq(count_kind(rt, DAGGER_PROC_TESTDEV), 0);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
    init_with("3", NULL, DAGGER_OK, &rt);
    cr_assert_eq(count_kind(rt, DAGGER_PROC_TESTDEV), 3);
    cr_assert_eq(count_kind(rt, DAGGER_PROC_CPU), 2);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

Test(devices, bad_settings_stop_init_naming_them)
{
    dagger_runtime_t *rt = NULL;
    init_with("16", NULL, DAGGER_ERR_CONFIG, &rt);
    cr_assert(strstr(dagger_error_detail(), "DAGGER_TEST_DEVICES=16"), "%s", dagger_error_detail());
    cr_assert_null(rt);
    init_with("1", "5", DAGGER_ERR_CONFIG, &rt);
    cr_assert(strstr(dagger_error_detail(), "DAGGER_GPU_DIRECT=5"), "%s", dagger_error_detail());
}

/* The host memory space's pinned allocator (DAGGER_GPU_PIN_HOST), or NULL. */
static const dg_host_pin_t *host_pin(dagger_runtime_t *rt)
{
    return rt->tasks->exec->bufs.spaces[0].impl;
}

/* DAGGER_GPU_PIN_HOST: on a rank with devices, host buffers from 256 KiB
 * up (by default) come from the device runtime's pinned allocator; without
 * devices, or with the setting 0, plain memory. */
Test(devices, large_host_buffers_are_pinned_only_with_devices)
{
    dagger_runtime_t *rt;
    init_with("1", NULL, DAGGER_OK, &rt);
    cr_assert_not_null(host_pin(rt));
    cr_assert_eq(host_pin(rt)->min_bytes, 262144u);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
    init_with("0", NULL, DAGGER_OK, &rt);
    cr_assert_null(host_pin(rt), "no devices: nothing pinned");
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
    setenv("DAGGER_GPU_PIN_HOST", "0", 1);
    init_with("1", NULL, DAGGER_OK, &rt);
    unsetenv("DAGGER_GPU_PIN_HOST");
    cr_assert_null(host_pin(rt), "DAGGER_GPU_PIN_HOST=0: nothing pinned");
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

/* Registers fn, creates n chunks of len doubles on rank 0 and opens a
 * region scoped to test devices. */
static dagger_codelet_t dev_region(dagger_runtime_t *rt, const char *name, dagger_impl_fn fn,
                                   int n, size_t len, dagger_chunk_t *c, dagger_region_t **r)
{
    dagger_codelet_desc_t d = {.name = name, .cpu = fn};
    dagger_codelet_t cl;
    cr_assert_eq(dagger_codelet_register(rt, &d, &cl), DAGGER_OK);
    dagger_chunk_desc_t cd = {.dtype = DAGGER_F64, .ndims = 1, .dims = {len}, .owner = 0};
    for (int i = 0; i < n; i++)
        cr_assert_eq(dagger_chunk_create(rt, &cd, &c[i]), DAGGER_OK);
    dagger_scope_t dev = {.kinds = DAGGER_PROC_TESTDEV};
    cr_assert_eq(dagger_region_begin(rt, &dev, r), DAGGER_OK);
    return cl;
}

static int fails_on_device(dagger_task_t *t)
{
    if (dagger_task_stream(t))
        return dagger_task_fail(t, "no luck on this test device");
    return DAGGER_OK;
}

Test(devices, a_task_failing_on_a_test_device_fails_the_region)
{
    dagger_runtime_t *rt;
    init_with("1", NULL, DAGGER_OK, &rt);
    dagger_chunk_t c;
    dagger_region_t *r;
    dagger_codelet_t cl = dev_region(rt, "fails_on_device", fails_on_device, 1, 4, &c, &r);
    dagger_arg_t a = DAGGER_INOUT(dagger_view(rt, c));
    cr_assert_eq(dagger_submit(r, cl, 1, &a, NULL, NULL, NULL), DAGGER_OK);
    cr_assert_eq(dagger_region_end(r), DAGGER_ERR_TASK_FAILED);
    cr_assert(strstr(dagger_error_detail(), "no luck on this test device"), "%s",
              dagger_error_detail());
    /* outside a device scope the same codelet runs on a CPU and succeeds */
    cr_assert_eq(dagger_region_begin(rt, NULL, &r), DAGGER_OK);
    cr_assert_eq(dagger_submit(r, cl, 1, &a, NULL, NULL, NULL), DAGGER_OK);
    cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

/* 200 small dependent tasks over two test devices: every completion is
 * seen (polled in the actors' turns, woken by the stream threads). */
static int bump(dagger_task_t *t)
{
    double *x = dagger_task_arg(t, 0).data;
    x[0] += 1;
    return DAGGER_OK;
}

/* Two test devices, four one-double chunks, and n bump tasks on them in an
 * open region scoped to the devices. */
static dagger_region_t *bumps(dagger_runtime_t **rt, dagger_chunk_t c[4], int n)
{
    init_with("2", NULL, DAGGER_OK, rt);
    dagger_region_t *r;
    dagger_codelet_t cl = dev_region(*rt, "bump", bump, 4, 1, c, &r);
    for (int k = 0; k < n; k++) {
        dagger_arg_t a = DAGGER_INOUT(dagger_view(*rt, c[k % 4]));
        cr_assert_eq(dagger_submit(r, cl, 1, &a, NULL, NULL, NULL), DAGGER_OK);
    }
    return r;
}

/* 200 bumps over two test devices, then every chunk holds 50 (and the
 * runtime is finalized). */
static void bumps_all_seen(void)
{
    dagger_runtime_t *rt;
    dagger_chunk_t c[4];
    dagger_region_t *r = bumps(&rt, c, 200);
    cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
    for (int i = 0; i < 4; i++) {
        double *x;
        cr_assert_eq(dagger_chunk_data(rt, c[i], (void **)&x, NULL), DAGGER_OK);
        cr_assert_eq(x[0], 50.0);
    }
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

Test(devices, every_device_completion_is_seen)
{
    bumps_all_seen();
}

/* A device task's return value and a later device task reading it as a
 * future: results live in host memory, wherever the task ran. */
static int sum_on_device(dagger_task_t *t)
{
    dagger_slot_t x = dagger_task_arg(t, 0);
    double s = 0;
    for (size_t i = 0; i < x.dims[0]; i++)
        s += ((double *)x.data)[i];
    if (!dagger_task_stream(t))
        return dagger_task_fail(t, "expected to run on a test device");
    return dagger_task_return(t, &s, sizeof(s));
}

static int scale_by_future(dagger_task_t *t)
{
    double *x = dagger_task_arg(t, 0).data, f = *(const double *)dagger_task_arg(t, 1).data;
    for (size_t i = 0; i < dagger_task_arg(t, 0).dims[0]; i++)
        x[i] *= f;
    return DAGGER_OK;
}

Test(devices, results_of_device_tasks_are_futures_like_any)
{
    dagger_runtime_t *rt;
    setenv("DAGGER_GPU_CHAIN", "1", 1);
    init_with("1", NULL, DAGGER_OK, &rt);
    unsetenv("DAGGER_GPU_CHAIN");
    dagger_codelet_desc_t ds = {.name = "sum_on_device", .cpu = sum_on_device,
                                .return_size = sizeof(double)};
    dagger_codelet_desc_t dm = {.name = "scale_by_future", .cpu = scale_by_future};
    dagger_codelet_t sum, scale;
    cr_assert_eq(dagger_codelet_register(rt, &ds, &sum), DAGGER_OK);
    cr_assert_eq(dagger_codelet_register(rt, &dm, &scale), DAGGER_OK);
    dagger_chunk_desc_t cd = {.dtype = DAGGER_F64, .ndims = 1, .dims = {4}, .owner = 0};
    dagger_chunk_t c;
    cr_assert_eq(dagger_chunk_create(rt, &cd, &c), DAGGER_OK);
    double *x;
    cr_assert_eq(dagger_chunk_data(rt, c, (void **)&x, NULL), DAGGER_OK);
    for (int i = 0; i < 4; i++)
        x[i] = i + 1; /* sum 10 */
    dagger_region_t *r;
    dagger_scope_t dev = {.kinds = DAGGER_PROC_TESTDEV};
    cr_assert_eq(dagger_region_begin(rt, &dev, &r), DAGGER_OK);
    dagger_future_t f;
    dagger_arg_t a = DAGGER_IN(dagger_view(rt, c));
    cr_assert_eq(dagger_submit(r, sum, 1, &a, NULL, NULL, &f), DAGGER_OK);
    dagger_arg_t b[2] = {DAGGER_INOUT(dagger_view(rt, c)), DAGGER_FUTURE(f)};
    cr_assert_eq(dagger_submit(r, scale, 2, b, NULL, NULL, NULL), DAGGER_OK);
    cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
    double got = 0;
    cr_assert_eq(dagger_fetch(rt, f, &got, sizeof(got), NULL), DAGGER_OK, "%s",
                 dagger_error_detail());
    cr_assert_eq(got, 10.0);
    cr_assert_eq(dagger_chunk_data(rt, c, (void **)&x, NULL), DAGGER_OK);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(x[i], (i + 1) * 10.0);
    /* with DAGGER_GPU_CHAIN=1 (below): a task reading a future is never
     * queued before the task giving it has finished */
    cr_assert_eq(atomic_load(&dg_devs_of(rt->tasks->exec)->dev[0].chained), 0);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

/* Finalize with device tasks still queued in an open region: it ends the
 * region (its tasks run, the device work completes) and reports the open
 * region; it never hangs. */
Test(devices, finalize_with_device_work_in_flight_drains_it)
{
    dagger_runtime_t *rt;
    dagger_chunk_t c[4];
    bumps(&rt, c, 100);
    cr_assert_eq(dagger_finalize(rt), DAGGER_ERR_STATE);
    cr_assert(strstr(dagger_error_detail(), "was still open"), "%s", dagger_error_detail());
}

/* DAGGER_GPU_STREAMS: the tasks of a device spread over that many streams
 * (round robin); out of range stops init naming it. */
static void *seen_streams[16];
static _Atomic int nseen;

static int note_stream(dagger_task_t *t)
{
    int i = atomic_fetch_add(&nseen, 1);
    if (i < 16)
        seen_streams[i] = dagger_task_stream(t);
    return DAGGER_OK;
}

Test(devices, a_device_runs_its_tasks_on_gpu_streams_streams)
{
    dagger_runtime_t *rt = NULL;
    setenv("DAGGER_GPU_STREAMS", "9", 1);
    init_with("1", NULL, DAGGER_ERR_CONFIG, &rt);
    cr_assert(strstr(dagger_error_detail(), "DAGGER_GPU_STREAMS=9"), "%s", dagger_error_detail());
    setenv("DAGGER_GPU_STREAMS", "0", 1);
    init_with("1", NULL, DAGGER_ERR_CONFIG, &rt);
    setenv("DAGGER_GPU_STREAMS", "4", 1);
    init_with("1", NULL, DAGGER_OK, &rt);
    dagger_chunk_t c[8];
    dagger_region_t *r;
    dagger_codelet_t cl = dev_region(rt, "note_stream", note_stream, 8, 1, c, &r);
    for (int k = 0; k < 8; k++) {
        dagger_arg_t a = DAGGER_INOUT(dagger_view(rt, c[k]));
        cr_assert_eq(dagger_submit(r, cl, 1, &a, NULL, NULL, NULL), DAGGER_OK);
    }
    cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(atomic_load(&nseen), 8);
    int distinct = 0;
    for (int i = 0; i < 8; i++) {
        int first = 1;
        for (int j = 0; j < i; j++)
            first &= seen_streams[j] != seen_streams[i];
        cr_assert_not_null(seen_streams[i]);
        distinct += first;
    }
    cr_assert_eq(distinct, 4, "8 tasks on %d streams, want 4", distinct);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
}

/* DAGGER_GPU_PRIORITY: a task with a priority above 0 runs on the
 * device's urgent streams, never on those of priority-0 tasks (with 2
 * streams: 4 in all); with DAGGER_GPU_PRIORITY=0 all run on the 2 streams. */
static void *stream_of_task[8];

static int note_own_stream(dagger_task_t *t)
{
    const int *k = dagger_task_arg(t, 1).data;
    stream_of_task[*k] = dagger_task_stream(t);
    return DAGGER_OK;
}

/* The distinct streams of the 8 tasks, and whether a priority-0 task (even
 * k) and a prioritised one (odd k) shared one. */
static int distinct_streams(int *shared)
{
    int distinct = 0;
    *shared = 0;
    for (int i = 0; i < 8; i++) {
        int first = 1;
        cr_assert_not_null(stream_of_task[i]);
        for (int j = 0; j < i; j++) {
            first &= stream_of_task[j] != stream_of_task[i];
            *shared |= (i - j) % 2 && stream_of_task[j] == stream_of_task[i];
        }
        distinct += first;
    }
    return distinct;
}

static void priority_round(const char *setting, int want_streams)
{
    dagger_runtime_t *rt = NULL;
    setenv("DAGGER_GPU_STREAMS", "2", 1);
    setenv("DAGGER_GPU_PRIORITY", setting, 1);
    init_with("1", NULL, DAGGER_OK, &rt);
    dagger_chunk_t c[8];
    dagger_region_t *r;
    memset(stream_of_task, 0, sizeof stream_of_task);
    dagger_codelet_t cl = dev_region(rt, "note_own_stream", note_own_stream, 8, 1, c, &r);
    for (int k = 0; k < 8; k++) {
        dagger_arg_t a[2] = {DAGGER_INOUT(dagger_view(rt, c[k])), DAGGER_VALUE(&k, sizeof k)};
        dagger_task_opts_t o = {.priority = k % 2 ? 3 : 0};
        cr_assert_eq(dagger_submit(r, cl, 2, a, &o, NULL, NULL), DAGGER_OK);
    }
    cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
    int shared, distinct = distinct_streams(&shared);
    cr_assert_eq(distinct, want_streams, "DAGGER_GPU_PRIORITY=%s: the tasks ran on %d streams, "
                 "want %d", setting, distinct, want_streams);
    cr_assert(want_streams == 2 || !shared, "DAGGER_GPU_PRIORITY=%s: prioritised tasks shared "
              "the streams of the others", setting);
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
    unsetenv("DAGGER_GPU_PRIORITY");
}

Test(devices, prioritised_tasks_run_on_urgent_streams)
{
    priority_round("1", 4);
    priority_round("0", 2);
}

/* DAGGER_GPU_CHAIN=1: a task whose dependencies on its device are queued
 * goes onto a stream at once, behind their events. These codelets queue
 * their work on the test device's stream as a kernel would (a host
 * function), the add slowly: a task queued without waiting for the one
 * before it would scale first and give 2 x + 1 instead of 2 (x + 1). */
static dagger_runtime_t *chain_rt;

typedef struct queued_affine {
    double *x, a, b;
    int slow;
} queued_affine_t;

static void run_affine(void *arg)
{
    queued_affine_t *q = arg;
    if (q->slow)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    q->x[0] = q->a * q->x[0] + q->b;
    free(q);
}

static int queue_affine(dagger_task_t *t, double a, double b, int slow)
{
    dg_dev_stream_t *s = dagger_task_stream(t);
    queued_affine_t *q = malloc(sizeof(*q));
    if (!s || !q) {
        free(q);
        return dagger_task_fail(t, "expected a test device's stream");
    }
    *q = (queued_affine_t){dagger_task_arg(t, 0).data, a, b, slow};
    const dg_dev_backend_t *be = dg_devs_of(chain_rt->tasks->exec)->dev[0].be;
    return be->launch_host_fn(s, run_affine, q) == DAGGER_OK
               ? DAGGER_OK
               : dagger_task_fail(t, "the test device did not take the work");
}

static int slow_add1(dagger_task_t *t)
{
    return queue_affine(t, 1, 1, 1);
}

static int scale2(dagger_task_t *t)
{
    return queue_affine(t, 2, 0, 0);
}

/* Four chunks holding k, each given add 1, scale 2, add 1 on one test
 * device with 2 streams: 2 (k + 1) + 1 whatever the setting; returns how
 * many tasks were chained and how many stream waits they needed. */
static void chain_round(const char *setting, uint64_t *chained, uint64_t *waits)
{
    setenv("DAGGER_GPU_STREAMS", "2", 1);
    setenv("DAGGER_GPU_PRIORITY", "0", 1);
    setenv("DAGGER_GPU_CHAIN", setting, 1);
    init_with("1", NULL, DAGGER_OK, &chain_rt);
    dagger_codelet_desc_t ad = {.name = "slow_add1", .cpu = slow_add1};
    dagger_codelet_desc_t sd = {.name = "scale2", .cpu = scale2};
    dagger_codelet_t add, scale;
    cr_assert_eq(dagger_codelet_register(chain_rt, &ad, &add), DAGGER_OK);
    cr_assert_eq(dagger_codelet_register(chain_rt, &sd, &scale), DAGGER_OK);
    dagger_chunk_desc_t cd = {.dtype = DAGGER_F64, .ndims = 1, .dims = {1}, .owner = 0};
    dagger_chunk_t c[4];
    for (int k = 0; k < 4; k++) {
        double *x;
        cr_assert_eq(dagger_chunk_create(chain_rt, &cd, &c[k]), DAGGER_OK);
        cr_assert_eq(dagger_chunk_data(chain_rt, c[k], (void **)&x, NULL), DAGGER_OK);
        x[0] = k;
    }
    dagger_region_t *r;
    dagger_scope_t dev = {.kinds = DAGGER_PROC_TESTDEV};
    cr_assert_eq(dagger_region_begin(chain_rt, &dev, &r), DAGGER_OK);
    for (int k = 0; k < 4; k++) {
        dagger_arg_t a = DAGGER_INOUT(dagger_view(chain_rt, c[k]));
        cr_assert_eq(dagger_submit(r, add, 1, &a, NULL, NULL, NULL), DAGGER_OK);
        cr_assert_eq(dagger_submit(r, scale, 1, &a, NULL, NULL, NULL), DAGGER_OK);
        cr_assert_eq(dagger_submit(r, add, 1, &a, NULL, NULL, NULL), DAGGER_OK);
    }
    cr_assert_eq(dagger_region_end(r), DAGGER_OK, "%s", dagger_error_detail());
    for (int k = 0; k < 4; k++) {
        double *x;
        cr_assert_eq(dagger_chunk_data(chain_rt, c[k], (void **)&x, NULL), DAGGER_OK);
        cr_assert_eq(x[0], 2.0 * (k + 1) + 1, "DAGGER_GPU_CHAIN=%s: chunk %d holds %g, want %g",
                     setting, k, x[0], 2.0 * (k + 1) + 1);
    }
    const dg_dev_t *d = &dg_devs_of(chain_rt->tasks->exec)->dev[0];
    *chained = atomic_load(&d->chained);
    *waits = atomic_load(&d->chain_waits);
    cr_assert_eq(dagger_finalize(chain_rt), DAGGER_OK);
    unsetenv("DAGGER_GPU_CHAIN");
    unsetenv("DAGGER_GPU_PRIORITY");
}

Test(devices, chained_tasks_wait_on_the_device_for_the_tasks_before)
{
    uint64_t chained, waits;
    chain_round("1", &chained, &waits);
    /* Up to 8 (each chunk's second and third task); fewer when the planner
     * emits a task only after the one before it finished (a loaded machine).
     * The results above are the test; this says it chained at all. */
    cr_assert_geq(chained, 1, "DAGGER_GPU_CHAIN=1: no task chained (%llu stream waits)",
                  (unsigned long long)waits);
    chain_round("0", &chained, &waits);
    cr_assert_eq(chained, 0, "DAGGER_GPU_CHAIN=0: %llu tasks chained", (unsigned long long)chained);
}

/* DAGGER_GPU_WAKE=each: a wake-up queued after every op (the default,
 * armed, queues at most one per stream, queued again by the poll: the
 * tests above); every completion is still seen (200 dependent tasks over
 * two test devices), and a value other than armed or each stops init
 * naming it. */
Test(devices, wake_ups_after_each_op_see_every_completion)
{
    dagger_runtime_t *rt = NULL;
    setenv("DAGGER_GPU_WAKE", "sometimes", 1);
    init_with("1", NULL, DAGGER_ERR_CONFIG, &rt);
    cr_assert(strstr(dagger_error_detail(), "DAGGER_GPU_WAKE=sometimes"), "%s",
              dagger_error_detail());
    setenv("DAGGER_GPU_WAKE", "each", 1);
    bumps_all_seen();
    unsetenv("DAGGER_GPU_WAKE");
}
