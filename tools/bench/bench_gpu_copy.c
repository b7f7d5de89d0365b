/* Copies on one CUDA GPU through the CUDA device backend (devices/common/device.h,
 * what the device memory-space actor calls), each beside the plain CUDA
 * call that is its ceiling, measured alternately in the same run:
 *
 *   d2d      backend copy (stream + polled event)  vs cudaMemcpyAsync + cudaStreamSynchronize
 *   pack     backend pack kernel, strided spans     vs cudaMemcpy2DAsync of the same layout
 *   h2d/d2h  backend copy from/to pinned memory     vs cudaMemcpy of pinned memory
 *
 * The cudaMemcpy rows of pinned memory are the raw half of the host-staged
 * transfer benchmark of issue 13 (budget 80%); its runtime half, two ranks
 * through the public API on device data, is bench_region_xfer with the
 * argument cuda, which tools/gpu-check runs beside this one.
 * The d2d budget is 90%. Each figure is the median of ROUNDS rounds, with
 * the range; "result:" lines are the summary that tools/gpu-check prints.
 * Each line also gives the backend's host time per call until its work is
 * queued ("enqueue"), beside the time per call until it is done: where the
 * two are close, the host, not the device, sets the rate.
 *
 *   bench_gpu_copy [results-file]   (default /tmp/bench_gpu_copy.txt)
 *
 * Without a CUDA device it says so and exits 0. Not a test. */
#include <cuda_runtime_api.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devices/common/device.h"
#define BENCH_NAME "bench_gpu_copy"
#include "tools/bench/bench_gpu_common.h"

#define ROUNDS 9
#define B dg_cuda_backend

typedef struct bench {
    dg_dev_stream_t *s;      /* the backend's stream */
    dg_dev_event_t *e;
    cudaStream_t raw;        /* the plain CUDA side's own stream */
    char *a, *b;             /* device buffers */
    char *pinned;
    size_t bytes;
} bench_t;

/* Waits as the device actors do: polls the event, yielding. */
static void backend_wait(bench_t *bn)
{
    int r;
    OK(B.event_record(bn->e, bn->s));
    while ((r = B.event_query(bn->e)) == 0)
        sched_yield();
    if (r != 1)
        die("event_query", dagger_error_detail());
}

typedef enum variant { D2D, PACK, H2D, D2H } variant_t;

#define PACK_SPAN 2048u      /* a column of 2 KiB pieces, 8 KiB apart */
#define PACK_STRIDE 8192u

/* The last round's host time until its calls had queued their work (s). */
static double last_enqueue;

/* One round of variant v on the backend (raw = 0) or the plain CUDA call
 * (raw = 1); returns GB/s of payload moved. */
static double round_gbs(bench_t *bn, variant_t v, int raw, int reps, const dg_dev_span_t *spans,
                        uint32_t nspans)
{
    size_t moved = v == PACK ? (size_t)nspans * PACK_SPAN : bn->bytes;
    double t = mono();
    for (int i = 0; i < reps; i++) {
        if (raw && v == D2D)
            CU(cudaMemcpyAsync(bn->b, bn->a, bn->bytes, cudaMemcpyDeviceToDevice, bn->raw));
        else if (raw && v == PACK)
            CU(cudaMemcpy2DAsync(bn->b, PACK_SPAN, bn->a, PACK_STRIDE, PACK_SPAN, nspans,
                                 cudaMemcpyDeviceToDevice, bn->raw));
        else if (raw)
            CU(cudaMemcpy(v == H2D ? bn->a : bn->pinned, v == H2D ? bn->pinned : bn->a, bn->bytes,
                          v == H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
        else if (v == PACK)
            OK(B.pack(bn->s, bn->b, bn->a, spans, nspans, 0));
        else
            OK(B.copy(bn->s, v == D2H ? bn->pinned : bn->b, v == H2D ? bn->pinned : bn->a,
                      bn->bytes, v == D2D ? DG_DEV_D2D : v == H2D ? DG_DEV_H2D : DG_DEV_D2H));
    }
    last_enqueue = mono() - t;
    if (raw)
        CU(cudaStreamSynchronize(bn->raw));
    else
        backend_wait(bn);
    return (double)moved * reps / (mono() - t) / 1e9;
}

/* Alternates the two sides ROUNDS times after a warm-up; prints medians,
 * ranges and the ratio against the budget. */
static void compare(bench_t *bn, FILE *f, const char *name, variant_t v, int reps, double budget)
{
    uint32_t nspans = (uint32_t)(bn->bytes / PACK_STRIDE);
    dg_dev_span_t *spans = calloc(nspans, sizeof *spans);
    double g[2][ROUNDS], enq[ROUNDS], per[ROUNDS];
    for (uint32_t i = 0; i < nspans; i++)
        spans[i] = (dg_dev_span_t){.offset = (uint64_t)i * PACK_STRIDE, .bytes = PACK_SPAN};
    round_gbs(bn, v, 0, 1, spans, nspans);
    round_gbs(bn, v, 1, 1, spans, nspans);
    /* the order alternates from round to round */
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < 2; k++) {
            int raw = (k + r) % 2;
            g[raw][r] = round_gbs(bn, v, raw, reps, spans, nspans);
            if (!raw) {
                size_t moved = v == PACK ? (size_t)nspans * PACK_SPAN : bn->bytes;
                enq[r] = last_enqueue / reps * 1e6;
                per[r] = (double)moved / g[0][r] / 1e3; /* us per call */
            }
        }
    qsort(g[0], ROUNDS, sizeof(double), cmp_double);
    qsort(g[1], ROUNDS, sizeof(double), cmp_double);
    qsort(enq, ROUNDS, sizeof(double), cmp_double);
    qsort(per, ROUNDS, sizeof(double), cmp_double);
    double ratio = g[0][ROUNDS / 2] / g[1][ROUNDS / 2];
    char line[400];
    snprintf(line, sizeof line,
             "result: %-4s %4zu MiB: backend %7.1f GB/s (%.1f-%.1f), CUDA %7.1f GB/s (%.1f-%.1f), "
             "ratio %.2f (budget %.2f)%s; backend enqueue %.1f us/call (%.1f-%.1f), done %.1f "
             "(%.1f-%.1f)\n",
             name, bn->bytes >> 20, g[0][ROUNDS / 2], g[0][0], g[0][ROUNDS - 1], g[1][ROUNDS / 2],
             g[1][0], g[1][ROUNDS - 1], ratio, budget, ratio < budget ? " BELOW BUDGET" : "",
             enq[ROUNDS / 2], enq[0], enq[ROUNDS - 1], per[ROUNDS / 2], per[0], per[ROUNDS - 1]);
    fputs(line, stdout);
    if (f)
        fputs(line, f);
    free(spans);
}

static void bench_open(bench_t *bn, size_t bytes)
{
    memset(bn, 0, sizeof *bn);
    bn->bytes = bytes;
    OK(B.set_current(0));
    OK(B.stream_create(0, &bn->s));
    OK(B.event_create(0, &bn->e));
    CU(cudaStreamCreateWithFlags(&bn->raw, cudaStreamNonBlocking));
    OK(B.mem_alloc(0, bytes, (void **)&bn->a));
    OK(B.mem_alloc(0, bytes, (void **)&bn->b));
    OK(B.host_alloc(bytes, (void **)&bn->pinned));
    memset(bn->pinned, 1, bytes);
    CU(cudaMemset(bn->a, 2, bytes));
}

static void bench_close(bench_t *bn)
{
    B.host_free(bn->pinned);
    B.mem_free(0, bn->b);
    B.mem_free(0, bn->a);
    CU(cudaStreamDestroy(bn->raw));
    B.event_destroy(bn->e);
    B.stream_destroy(bn->s);
}

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1] : "/tmp/bench_gpu_copy.txt";
    char why[256] = "";
    if (B.count(why, sizeof why) == 0) {
        printf("result: skipped: no CUDA device (%s)\n", why);
        return 0;
    }
    dg_dev_info_t info;
    OK(B.info(0, &info));
    FILE *f = fopen(out, "w");
    printf("bench_gpu_copy on %s (%.0f GiB, PCI %s, NUMA %d, cores %s)\n", info.name,
           (double)info.mem_bytes / (1u << 30), info.pci_bus_id, info.numa_node, info.cpus);
    const size_t sizes[] = {1u << 20, 256u << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        bench_t bn;
        int reps = sizes[i] < (16u << 20) ? 50 : 20;
        bench_open(&bn, sizes[i]);
        compare(&bn, f, "d2d", D2D, reps, 0.90);
        compare(&bn, f, "pack", PACK, reps, 0.90);
        compare(&bn, f, "h2d", H2D, reps, 0.80);
        compare(&bn, f, "d2h", D2H, reps, 0.80);
        bench_close(&bn);
    }
    if (f)
        fclose(f);
    printf("results in %s\n", out);
    return 0;
}
