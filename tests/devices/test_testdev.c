/* The test device backend (devices/testdev): the device.h contract the
 * device actors rely on, on a machine without a GPU. */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "devices/testdev/testdev.h"

static const dg_dev_backend_t *be;

static void setup(void)
{
    dg_testdev_configure(2);
    be = dg_dev_backend(DG_DEV_TEST);
    cr_assert_eq(be->set_current(0), DAGGER_OK);
}

static void teardown(void)
{
    dg_testdev_configure(0);
}

/* Polls e (as the actors do) until it completes. */
static void wait_event(dg_dev_event_t *e)
{
    int q;
    while ((q = be->event_query(e)) == 0)
        sched_yield();
    cr_assert_eq(q, 1);
}

TestSuite(testdev, .init = setup, .fini = teardown);

static void stream_and_event(int dev, dg_dev_stream_t **s, dg_dev_event_t **e)
{
    cr_assert_eq(be->stream_create(dev, s), DAGGER_OK);
    cr_assert_eq(be->event_create(dev, e), DAGGER_OK);
}

/* Records e on s, waits for it, then frees both. */
static void finish(dg_dev_stream_t *s, dg_dev_event_t *e)
{
    cr_assert_eq(be->event_record(e, s), DAGGER_OK);
    wait_event(e);
    be->event_destroy(e);
    be->stream_destroy(s);
}

Test(testdev, discovery_counts_and_names_test_devices)
{
    char why[128] = "";
    cr_assert_eq(be->count(why, sizeof(why)), 2);
    dg_dev_info_t info;
    cr_assert_eq(be->info(1, &info), DAGGER_OK);
    cr_assert_str_eq(info.name, "test device 1");
    cr_assert_str_eq(be->label, "test device");
    cr_assert_eq(be->info(2, &info), DAGGER_ERR_INVALID_ARG);
    dg_testdev_configure(0);
    cr_assert_eq(be->count(why, sizeof(why)), 0);
    cr_assert(strstr(why, "DAGGER_TEST_DEVICES"), "%s", why);
}

Test(testdev, memory_is_its_own_allocation_and_counted)
{
    int64_t b0, n0, b1, n1;
    dg_testdev_stats(&b0, &n0);
    void *p;
    cr_assert_eq(be->mem_alloc(0, 1000, &p), DAGGER_OK);
    cr_assert_eq((uintptr_t)p % 64, 0u);
    memset(p, 1, 1000);
    dg_testdev_stats(&b1, &n1);
    cr_assert_eq(n1, n0 + 1);
    cr_assert_geq(b1 - b0, 1000);
    be->mem_free(0, p);
    dg_testdev_stats(&b1, &n1);
    cr_assert_eq(n1, n0);
    cr_assert_eq(b1, b0);
}

/* The stream's thread runs the copy after the call returned: the event is
 * not complete before a gate on the stream opens. */
static _Atomic int gate;
static void hold(void *arg)
{
    (void)arg;
    while (!atomic_load(&gate))
        sched_yield();
}

Test(testdev, streams_run_asynchronously_in_order)
{
    dg_dev_stream_t *s;
    dg_dev_event_t *e;
    stream_and_event(0, &s, &e);
    cr_assert_eq(be->event_query(e), 1, "an event never recorded is complete");
    char *d, src[64], back[64] = {0};
    for (int i = 0; i < 64; i++)
        src[i] = (char)(i + 1);
    cr_assert_eq(be->mem_alloc(0, 64, (void **)&d), DAGGER_OK);
    atomic_store(&gate, 0);
    cr_assert_eq(be->launch_host_fn(s, hold, NULL), DAGGER_OK);
    cr_assert_eq(be->copy(s, d, src, 64, DG_DEV_H2D), DAGGER_OK);
    cr_assert_eq(be->copy(s, back, d, 64, DG_DEV_D2H), DAGGER_OK);
    cr_assert_eq(be->event_record(e, s), DAGGER_OK);
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    cr_assert_eq(be->event_query(e), 0, "the work waits behind the gate");
    cr_assert_eq(back[0], 0);
    atomic_store(&gate, 1);
    wait_event(e);
    cr_assert_arr_eq(back, src, 64);
    be->mem_free(0, d);
    be->event_destroy(e);
    be->stream_destroy(s);
}

Test(testdev, stream_wait_orders_two_streams)
{
    dg_dev_stream_t *a, *b;
    dg_dev_event_t *ea, *eb;
    cr_assert_eq(be->set_current(1), DAGGER_OK);
    cr_assert_eq(be->stream_create(1, &a), DAGGER_OK);
    cr_assert_eq(be->stream_create(1, &b), DAGGER_OK);
    cr_assert_eq(be->event_create(1, &ea), DAGGER_OK);
    cr_assert_eq(be->event_create(1, &eb), DAGGER_OK);
    int x = 0, y = 0;
    atomic_store(&gate, 0);
    cr_assert_eq(be->launch_host_fn(a, hold, NULL), DAGGER_OK);
    int seven = 7;
    cr_assert_eq(be->copy(a, &x, &seven, sizeof(x), DG_DEV_D2D), DAGGER_OK);
    cr_assert_eq(be->event_record(ea, a), DAGGER_OK);
    cr_assert_eq(be->stream_wait(b, ea), DAGGER_OK);
    cr_assert_eq(be->copy(b, &y, &x, sizeof(y), DG_DEV_D2D), DAGGER_OK);
    cr_assert_eq(be->event_record(eb, b), DAGGER_OK);
    atomic_store(&gate, 1);
    wait_event(eb);
    cr_assert_eq(y, 7, "b's copy ran after a's");
    be->event_destroy(ea);
    be->event_destroy(eb);
    be->stream_destroy(a);
    be->stream_destroy(b);
}

Test(testdev, pack_gathers_and_unpack_scatters_spans)
{
    dg_dev_stream_t *s;
    dg_dev_event_t *e;
    stream_and_event(0, &s, &e);
    unsigned char src[32], packed[12] = {0}, out[32];
    for (int i = 0; i < 32; i++)
        src[i] = (unsigned char)i;
    memset(out, 0xff, sizeof(out));
    dg_dev_span_t spans[3] = {{2, 4}, {10, 3}, {27, 5}};
    cr_assert_eq(be->pack(s, packed, src, spans, 3, 0), DAGGER_OK);
    memset(spans, 0, sizeof(spans)); /* reusable once the call returned */
    dg_dev_span_t again[3] = {{2, 4}, {10, 3}, {27, 5}};
    cr_assert_eq(be->pack(s, out, packed, again, 3, 1), DAGGER_OK);
    finish(s, e);
    const unsigned char want[12] = {2, 3, 4, 5, 10, 11, 12, 27, 28, 29, 30, 31};
    cr_assert_arr_eq(packed, want, 12);
    for (int i = 0; i < 32; i++) {
        int in = (i >= 2 && i < 6) || (i >= 10 && i < 13) || i >= 27;
        cr_assert_eq(out[i], in ? i : 0xff, "byte %d", i);
    }
}

Test(testdev, memset0_and_staging_memory)
{
    dg_dev_stream_t *s;
    dg_dev_event_t *e;
    stream_and_event(0, &s, &e);
    void *d, *h;
    cr_assert_eq(be->mem_alloc(0, 256, &d), DAGGER_OK);
    cr_assert_eq(be->host_alloc(256, &h), DAGGER_OK);
    memset(d, 0xab, 256);
    memset(h, 0xcd, 256);
    cr_assert_eq(be->memset0(s, d, 256), DAGGER_OK);
    cr_assert_eq(be->copy(s, h, d, 256, DG_DEV_D2H), DAGGER_OK);
    finish(s, e);
    static const unsigned char zero[256];
    cr_assert_arr_eq(h, zero, 256);
    be->host_free(h);
    be->mem_free(0, d);
}

Test(testdev, calls_for_a_device_that_does_not_exist_fail)
{
    dg_dev_stream_t *s = NULL;
    cr_assert_eq(be->stream_create(5, &s), DAGGER_ERR_INVALID_ARG);
    cr_assert_null(s);
    void *p = NULL;
    cr_assert_eq(be->mem_alloc(-1, 8, &p), DAGGER_ERR_INVALID_ARG);
    cr_assert_eq(be->set_current(2), DAGGER_ERR_INVALID_ARG);
    cr_assert_eq(be->set_current(1), DAGGER_OK);
    cr_assert_null(dg_dev_backend((dg_dev_kind_t)99));
}

/* As on a GPU runtime, work goes to the thread's current device only. */
Test(testdev, work_for_a_device_that_is_not_current_is_refused)
{
    dg_dev_stream_t *s;
    dg_dev_event_t *e;
    stream_and_event(0, &s, &e);
    void *p = NULL;
    cr_assert_eq(be->set_current(1), DAGGER_OK);
    cr_assert_eq(be->mem_alloc(0, 8, &p), DAGGER_ERR_INTERNAL);
    cr_assert(strstr(dagger_error_detail(), "current device is 1"), "%s", dagger_error_detail());
    char x = 0, y = 1;
    cr_assert_eq(be->copy(s, &x, &y, 1, DG_DEV_D2D), DAGGER_ERR_INTERNAL);
    cr_assert_eq(be->set_current(0), DAGGER_OK);
    finish(s, e);
}

/* IPC: a block of exportable memory is opened by another process (a child
 * here) as the same pages; a process cannot open its own handle, and a
 * handle of a freed block is refused, never mapped to whatever took its
 * descriptor. */
Test(testdev, an_ipc_handle_opens_the_same_memory_in_another_process)
{
    cr_assert(be->ipc_export && be->ipc_open && be->ipc_close && be->ipc_alloc && be->ipc_free);
    cr_assert_leq(be->ipc_handle_bytes, 128u);
    double *p;
    cr_assert_eq(be->ipc_alloc(0, 1000 * sizeof(double), (void **)&p), DAGGER_OK);
    for (int i = 0; i < 1000; i++)
        p[i] = i * 0.5;
    unsigned char h[128];
    cr_assert_eq(be->ipc_export(0, p, h), DAGGER_OK);
    void *mine;
    cr_assert_neq(be->ipc_open(0, h, &mine), DAGGER_OK, "a process's own handle is refused");
    cr_assert_neq(be->ipc_export(0, p + 1, h + 64), DAGGER_OK, "only whole blocks export");
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        double *q = NULL;
        int bad = be->ipc_open(0, h, (void **)&q) != DAGGER_OK;
        for (int i = 0; !bad && i < 1000; i++)
            bad = q[i] != i * 0.5;
        if (!bad)
            q[999] = -1; /* the parent sees it */
        if (q)
            be->ipc_close(0, q);
        _exit(bad);
    }
    int status = 0;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child read the block");
    cr_assert_eq(p[999], -1, "the child wrote the same memory");
    /* freed: a later opener must not map it (nor another block on its fd) */
    unsigned char stale[128];
    memcpy(stale, h, sizeof(stale));
    be->ipc_free(0, p);
    double *other;
    cr_assert_eq(be->ipc_alloc(0, 1000 * sizeof(double), (void **)&other), DAGGER_OK);
    fflush(NULL);
    child = fork();
    if (child == 0) {
        void *q = NULL;
        _exit(be->ipc_open(0, stale, &q) == DAGGER_OK);
    }
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a freed block's handle is refused");
    be->ipc_free(0, other);
}
