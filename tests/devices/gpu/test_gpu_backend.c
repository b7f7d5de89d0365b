/* A GPU backend (CUDA or HIP, chosen by DG_TEST_BACKEND at build time) as
 * the device actors use it. Without a device (CI, these build machines) it
 * must report none with the reason, and every entry point must fail cleanly
 * on a device that does not exist; with one, the data paths must move the
 * right bytes. The tests that need a device skip, saying so. */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devices/common/device.h"

#define B DG_TEST_BACKEND

/* The number of devices, and why there are none. */
static int devices(char *why, size_t cap)
{
    why[0] = '\0';
    return B.count(why, cap);
}

static void skip_without_device(void)
{
    char why[256];
    if (devices(why, sizeof why) == 0)
        cr_skip_test("needs a %s (%s: %s); tools/gpu-check runs this on one", B.label, B.name, why);
}

/* Polls e as the device actors do, yielding between queries. */
static void wait_event(dg_dev_event_t *e)
{
    int r;
    while ((r = B.event_query(e)) == 0)
        sched_yield();
    cr_assert_eq(r, 1, "event_query: %s", dagger_error_detail());
}

Test(gpu_backend, count_says_why_there_is_none)
{
    char why[256];
    int n = devices(why, sizeof why);
    cr_assert_geq(n, 0);
    if (n == 0) {
        cr_assert_neq(why[0], '\0', "no device and no reason");
        /* the call that found none, or the driver file whose absence
         * spared loading the runtime (devices/cuda/cuda_lib.h,
         * devices/hip/hip_lib.h) */
        cr_assert(strstr(why, "GetDeviceCount") || strstr(why, "/dev/kfd") ||
                      strstr(why, "/dev/nvidiactl"),
                  "the reason names the call or the missing driver: '%s'", why);
    }
    cr_assert_str_eq(B.name, DG_TEST_BACKEND_NAME);
    cr_assert_leq(B.ipc_handle_bytes, 128u);
}

/* dev = count: the first index with no device behind it (every index when
 * there is no driver). */
Test(gpu_backend, every_entry_point_fails_cleanly_on_a_missing_device)
{
    char why[256];
    int dev = devices(why, sizeof why);
    dg_dev_info_t info;
    dg_dev_stream_t *s = (dg_dev_stream_t *)1;
    dg_dev_event_t *e = (dg_dev_event_t *)1;
    void *p = (void *)1;
    unsigned char handle[128] = {0};

    cr_assert_neq(B.info(dev, &info), DAGGER_OK);
    cr_assert(strstr(dagger_error_detail(), B.label), "detail names the device: '%s'",
              dagger_error_detail());
    cr_assert_neq(B.set_current(dev), DAGGER_OK);
    cr_assert_neq(B.stream_create(dev, &s), DAGGER_OK);
    cr_assert_null(s);
    cr_assert_neq(B.event_create(dev, &e), DAGGER_OK);
    cr_assert_null(e);
    cr_assert_neq(B.mem_alloc(dev, 64, &p), DAGGER_OK);
    cr_assert_null(p);
    cr_assert_neq(B.ipc_export(dev, handle, handle), DAGGER_OK);
    p = (void *)1;
    cr_assert_neq(B.ipc_open(dev, handle, &p), DAGGER_OK);
    cr_assert_null(p);
    if (dev == 0) {
        /* no driver: not even pinned host memory */
        p = (void *)1;
        cr_assert_neq(B.host_alloc(4096, &p), DAGGER_OK);
        cr_assert_null(p);
        cr_assert_neq(dagger_error_detail()[0], '\0');
    }
    /* the release calls take what a failed call left */
    B.stream_destroy(NULL);
    B.event_destroy(NULL);
    B.mem_free(dev, NULL);
    B.host_free(NULL);
    B.ipc_close(dev, NULL);
    cr_assert_null(B.stream_native(NULL));
}

Test(gpu_backend, discovery_describes_each_device)
{
    char why[256];
    skip_without_device();
    int n = devices(why, sizeof why);
    for (int d = 0; d < n; d++) {
        dg_dev_info_t info;
        cr_assert_eq(B.info(d, &info), DAGGER_OK, "%s", dagger_error_detail());
        cr_assert_neq(info.name[0], '\0');
        cr_assert_gt(info.mem_bytes, 0u);
        /* sysfs's form: dddd:bb:dd.f */
        cr_assert_eq(strlen(info.pci_bus_id), 12u, "bus id '%s'", info.pci_bus_id);
        cr_assert_geq(info.numa_node, -1);
    }
}

typedef struct gpu_fixture {
    dg_dev_stream_t *s;
    dg_dev_event_t *e;
    unsigned char *host;     /* pinned */
    unsigned char *a, *b;    /* device */
    size_t bytes;
} gpu_fixture_t;

static void fixture_open(gpu_fixture_t *f, size_t bytes)
{
    memset(f, 0, sizeof *f);
    f->bytes = bytes;
    cr_assert_eq(B.set_current(0), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(B.stream_create(0, &f->s), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_not_null(B.stream_native(f->s));
    cr_assert_eq(B.event_create(0, &f->e), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(B.host_alloc(bytes, (void **)&f->host), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(B.mem_alloc(0, bytes, (void **)&f->a), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(B.mem_alloc(0, bytes, (void **)&f->b), DAGGER_OK, "%s", dagger_error_detail());
}

static void fixture_sync(gpu_fixture_t *f)
{
    cr_assert_eq(B.event_record(f->e, f->s), DAGGER_OK, "%s", dagger_error_detail());
    wait_event(f->e);
}

static void fixture_close(gpu_fixture_t *f)
{
    B.mem_free(0, f->b);
    B.mem_free(0, f->a);
    B.host_free(f->host);
    B.event_destroy(f->e);
    B.stream_destroy(f->s);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 131u + seed);
}

Test(gpu_backend, copies_and_memset_move_the_bytes)
{
    skip_without_device();
    gpu_fixture_t f;
    const size_t n = (1u << 20) + 13; /* odd, so no path is only whole words */
    fixture_open(&f, n);
    unsigned char *want = malloc(n);
    fill(want, n, 7);
    memcpy(f.host, want, n);
    cr_assert_eq(B.copy(f.s, f.a, f.host, n, DG_DEV_H2D), DAGGER_OK);
    cr_assert_eq(B.copy(f.s, f.b, f.a, n, DG_DEV_D2D), DAGGER_OK);
    cr_assert_eq(B.memset0(f.s, f.a, 100), DAGGER_OK);
    memset(f.host, 0xee, n);
    cr_assert_eq(B.copy(f.s, f.host, f.b, n, DG_DEV_D2H), DAGGER_OK);
    fixture_sync(&f);
    cr_assert_arr_eq(f.host, want, n);
    cr_assert_eq(B.copy(f.s, f.host, f.a, 200, DG_DEV_D2H), DAGGER_OK);
    fixture_sync(&f);
    for (size_t i = 0; i < 200; i++)
        cr_assert_eq(f.host[i], i < 100 ? 0 : want[i], "byte %zu", i);
    free(want);
    fixture_close(&f);
}

/* Span i of a strided layout: at i * stride + i % 5, of maxlen - (i * 7) %
 * maxlen bytes (odd sizes and offsets, a run each; span 0 is maxlen long);
 * regular: at i * stride, maxlen bytes (a strided sub-view: one run). */
static dg_dev_span_t span_at(uint32_t i, uint64_t stride, uint64_t maxlen, int regular)
{
    if (regular)
        return (dg_dev_span_t){.offset = i * stride, .bytes = maxlen};
    return (dg_dev_span_t){.offset = i * stride + i % 5, .bytes = maxlen - (i * 7) % maxlen};
}

/* Packs nspans spans of span_at's layout, then unpacks them into a zeroed
 * buffer, and checks both against the host's own gather and scatter. */
static void pack_roundtrip(uint32_t nspans, uint64_t stride, uint64_t maxlen, int regular)
{
    gpu_fixture_t f;
    size_t n = (size_t)(nspans * stride);
    fixture_open(&f, n);
    dg_dev_span_t *spans = malloc(nspans * sizeof *spans);
    unsigned char *src = malloc(n), *packed = calloc(1, n), *back = calloc(1, n);
    size_t total = 0;
    for (uint32_t i = 0; i < nspans; i++) {
        spans[i] = span_at(i, stride, maxlen, regular);
        total += spans[i].bytes;
    }
    fill(src, n, 3);
    for (uint32_t i = 0, at = 0; i < nspans; at += (uint32_t)spans[i].bytes, i++) {
        memcpy(packed + at, src + spans[i].offset, spans[i].bytes);
        memcpy(back + spans[i].offset, src + spans[i].offset, spans[i].bytes);
    }
    memcpy(f.host, src, n);
    cr_assert_eq(B.copy(f.s, f.a, f.host, n, DG_DEV_H2D), DAGGER_OK);
    cr_assert_eq(B.pack(f.s, f.b, f.a, spans, nspans, 0), DAGGER_OK, "%s", dagger_error_detail());
    memset(spans, 0xff, nspans * sizeof *spans); /* reusable once pack returns */
    cr_assert_eq(B.copy(f.s, f.host, f.b, total, DG_DEV_D2H), DAGGER_OK);
    fixture_sync(&f);
    cr_assert_arr_eq(f.host, packed, total, "pack of %u spans", nspans);
    for (uint32_t i = 0; i < nspans; i++)
        spans[i] = span_at(i, stride, maxlen, regular);
    cr_assert_eq(B.memset0(f.s, f.a, n), DAGGER_OK);
    cr_assert_eq(B.pack(f.s, f.a, f.b, spans, nspans, 1), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(B.copy(f.s, f.host, f.a, n, DG_DEV_D2H), DAGGER_OK);
    fixture_sync(&f);
    cr_assert_arr_eq(f.host, back, n, "unpack of %u spans", nspans);
    free(back);
    free(packed);
    free(src);
    free(spans);
    fixture_close(&f);
}

Test(gpu_backend, pack_in_the_launch_arguments)
{
    skip_without_device();
    pack_roundtrip(10, 4096, 3000, 0);
}

Test(gpu_backend, pack_with_a_device_table)
{
    skip_without_device();
    pack_roundtrip(5000, 64, 40, 0);
}

Test(gpu_backend, pack_one_long_span_across_blocks)
{
    skip_without_device();
    pack_roundtrip(2, (8u << 20) + 8, 8u << 20, 0);
}

/* A strided sub-view: one run of many rows (16-byte vectors), and rows of
 * 8-byte words with a tail. */
Test(gpu_backend, pack_a_strided_layout)
{
    skip_without_device();
    pack_roundtrip(20000, 8192, 2048, 1);
    pack_roundtrip(3000, 1000, 200, 1);
}

Test(gpu_backend, stream_wait_orders_two_streams)
{
    skip_without_device();
    gpu_fixture_t f;
    dg_dev_stream_t *s2;
    const size_t n = 64u << 20;
    fixture_open(&f, n);
    cr_assert_eq(B.stream_create(0, &s2), DAGGER_OK);
    fill(f.host, 4096, 9);
    cr_assert_eq(B.memset0(f.s, f.a, n), DAGGER_OK);
    cr_assert_eq(B.copy(f.s, f.a, f.host, 4096, DG_DEV_H2D), DAGGER_OK);
    cr_assert_eq(B.event_record(f.e, f.s), DAGGER_OK);
    cr_assert_eq(B.stream_wait(s2, f.e), DAGGER_OK);
    cr_assert_eq(B.copy(s2, f.b, f.a, n, DG_DEV_D2D), DAGGER_OK);
    cr_assert_eq(B.copy(s2, f.host, f.b, 8192, DG_DEV_D2H), DAGGER_OK);
    dg_dev_event_t *e2;
    cr_assert_eq(B.event_create(0, &e2), DAGGER_OK);
    cr_assert_eq(B.event_record(e2, s2), DAGGER_OK);
    wait_event(e2);
    for (size_t i = 0; i < 8192; i++)
        cr_assert_eq(f.host[i], i < 4096 ? (unsigned char)(i * 131u + 9) : 0, "byte %zu", i);
    B.event_destroy(e2);
    B.stream_destroy(s2);
    fixture_close(&f);
}

static void count_call(void *arg)
{
    __atomic_add_fetch((int *)arg, 1, __ATOMIC_SEQ_CST);
}

Test(gpu_backend, host_functions_run_after_the_work_before_them)
{
    skip_without_device();
    gpu_fixture_t f;
    int calls = 0;
    const size_t n = 64u << 20;
    fixture_open(&f, n);
    cr_assert_not_null(B.launch_host_fn);
    cr_assert_eq(B.memset0(f.s, f.a, n), DAGGER_OK);
    cr_assert_eq(B.launch_host_fn(f.s, count_call, &calls), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(B.event_record(f.e, f.s), DAGGER_OK);
    /* the event after the host function passes only once it has run */
    wait_event(f.e);
    cr_assert_eq(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), 1);
    fixture_close(&f);
}

Test(gpu_backend, ipc_export_of_device_memory)
{
    skip_without_device();
    void *p;
    unsigned char handle[128];
    cr_assert_eq(B.mem_alloc(0, 1u << 20, &p), DAGGER_OK);
    /* Opening needs another process (a 2-rank run of the device suite). */
    cr_assert_eq(B.ipc_export(0, p, handle), DAGGER_OK, "%s", dagger_error_detail());
    B.mem_free(0, p);
}
