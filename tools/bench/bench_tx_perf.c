/* Transport benchmark: message latency (8 B, one way = half the round
 * trip) and bandwidth (1 KiB .. 64 MiB, eager below DAGGER_EAGER_LIMIT,
 * rendezvous into the receiver's buffer above), each beside ucx_perftest
 * run in the same job on the same transports (UCP active-message latency,
 * UCP tag bandwidth), with the ratios against the budgets of DESIGN.md:
 * latency <= 2x, bandwidth >= 85% from 1 MiB up.
 *
 *   dagger-run -n 2 bench_tx_perf [--tcp] [--quick] [results-file]
 *
 * Like ucx_perftest, each bandwidth size gets an untimed warm-up round
 * (1/8 of its messages, at least 2) and the buffers are touched first.
 *
 * --tcp runs both sides with UCX_TLS=tcp; the default is UCX's choice
 * (shared memory here). Rank 0 runs the ucx_perftest pairs while rank 1
 * sleeps in a barrier. Results go to results-file (default
 * /tmp/bench_tx_perf.txt) and to stdout. Not a test: nothing is asserted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_tx_perftest.h"
#include "transport/coll.h"
#include "transport/tx.h"

enum { MSG_PING = 1, MSG_STOP = 2, MSG_DATA = 3, MSG_ACK = 4 };

typedef struct bench {
    dg_tx_t *tx;
    int rank;
    volatile long pongs;     /* rank 0: replies seen */
    volatile long received;  /* rank 1: data messages complete */
    volatile long acks;      /* rank 0: acknowledgements */
    volatile int stop;
    unsigned char *sink;     /* rank 1: where data lands */
} bench_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void send_kind(bench_t *b, int dest, unsigned char kind, const void *p, size_t len,
                      unsigned flags)
{
    if (dg_tx_send(b->tx, dest, DG_TX_CH_TEST, &kind, 1, p, len, flags, NULL, NULL) != DAGGER_OK) {
        fprintf(stderr, "bench_tx_perf: send failed: %s\n", dagger_error_detail());
        exit(1);
    }
}

static void data_landed(void *arg, dagger_status_t st)
{
    bench_t *b = arg;
    (void)st;
    b->received++;
}

static int on_msg(void *ctx, const dg_tx_msg_t *m)
{
    bench_t *b = ctx;
    unsigned char kind = m->hdr_len ? *(const unsigned char *)m->hdr : 0;
    switch (kind) {
    case MSG_PING:
        if (b->rank == 1)
            send_kind(b, 0, MSG_PING, m->data, m->len, DG_TX_COPY);
        else
            b->pongs++;
        break;
    case MSG_STOP: b->stop = 1; break;
    case MSG_ACK: b->acks++; break;
    case MSG_DATA:
        if (m->rndv) {
            dg_tx_recv_into(b->tx, m->rndv, b->sink, m->len, data_landed, b);
        } else {
            memcpy(b->sink, m->data, m->len); /* a receive delivers the bytes somewhere */
            data_landed(b, DAGGER_OK);
        }
        break;
    }
    return 0;
}

/* Busy progress, as ucx_perftest does: this measures the transport, not
 * the sleeping path. */
static void spin_until(bench_t *b, volatile long *counter, long target)
{
    while (*counter < target)
        dg_tx_progress(b->tx);
}

static double dagger_latency_us(bench_t *b, long iters)
{
    uint64_t word = 42;
    long warm = iters / 10;
    double t0 = 0;
    for (long i = 0; i < warm + iters; i++) {
        if (i == warm)
            t0 = now_s();
        send_kind(b, 1, MSG_PING, &word, sizeof(word), DG_TX_COPY);
        spin_until(b, &b->pongs, i + 1);
    }
    return (now_s() - t0) / (double)iters / 2 * 1e6;
}

static double dagger_bandwidth_mbs(bench_t *b, const unsigned char *src, size_t size, long iters)
{
    long target = b->acks + 1;
    double t0 = now_s();
    for (long i = 0; i < iters; i++)
        send_kind(b, 1, MSG_DATA, src, size, 0);
    spin_until(b, &b->acks, target);
    return (double)size * (double)iters / (now_s() - t0) / (1 << 20);
}

/* ---- the run ---- */

typedef struct row {
    size_t size;
    double ours, ref;
} row_t;

static void report(FILE *out, const char *tls, double lat, double lat_ref, const row_t *rows, int n)
{
    fprintf(out, "bench_tx_perf: transports %s\n", tls);
    fprintf(out, "latency 8 B one way: dagger %.3f us, ucx_perftest ucp_am_lat %.3f us, ratio "
            "%.2f (budget <= 2.00)\n", lat, lat_ref, lat / lat_ref);
    fprintf(out, "%10s %14s %14s %8s %s\n", "bytes", "dagger MB/s", "perftest MB/s", "ratio",
            "budget");
    for (int i = 0; i < n; i++)
        fprintf(out, "%10zu %14.1f %14.1f %8.2f %s\n", rows[i].size, rows[i].ours, rows[i].ref,
                rows[i].ours / rows[i].ref, rows[i].size >= (1 << 20) ? ">= 0.85" : "-");
}

int main(int argc, char **argv)
{
    int tcp = 0, quick = 0;
    const char *results = "/tmp/bench_tx_perf.txt";
    bench_tx_args(argc, argv, &tcp, &quick, &results);
    if (tcp)
        setenv("UCX_TLS", "tcp", 1); /* for ucx_perftest and for us alike */
    dg_boot_t boot;
    bench_t b = {0};
    dg_tx_params_t p = {.boot = &boot};
    if (dg_boot_init(&boot) != DAGGER_OK || dg_tx_create(&p, &b.tx) != DAGGER_OK) {
        fprintf(stderr, "bench_tx_perf: start-up failed: %s\n", dagger_error_detail());
        return 1;
    }
    b.rank = boot.rank;
    if (boot.size != 2) {
        fprintf(stderr, "bench_tx_perf: run it on 2 ranks (dagger-run -n 2 %s)\n", argv[0]);
        return 2;
    }
    static const size_t sizes[] = {1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10,
                                   1 << 20, 4 << 20, 16 << 20, 64 << 20};
    enum { NSIZES = sizeof(sizes) / sizeof(sizes[0]) };
    /* Touched before any timing, as ucx_perftest's buffers are: the first
     * pass over fresh pages would otherwise time the kernel's page faults. */
    unsigned char *buf = malloc(64 << 20);
    if (!buf) {
        fprintf(stderr, "bench_tx_perf: out of memory\n");
        return 1;
    }
    memset(buf, 0x5a, 64 << 20);
    b.sink = buf;
    dg_tx_set_handler(b.tx, DG_TX_CH_TEST, on_msg, &b);
    long lat_iters = quick ? 20000 : 200000;
    row_t rows[NSIZES];
    double lat_ref = 0;

    /* The reference first, while rank 1 sleeps in the barrier. */
    if (b.rank == 0) {
        lat_ref = perftest_run("ucp_am_lat", 8, lat_iters, PERFTEST_LAT_AVG);
        for (int i = 0; i < NSIZES; i++) {
            long iters = (long)((quick ? 256ull : 2048ull) << 20) / (long)sizes[i];
            rows[i].size = sizes[i];
            rows[i].ref = perftest_run("tag_bw", sizes[i], iters < 16 ? 16 : iters, PERFTEST_BW);
        }
    }
    dg_coll_barrier(b.tx);

    double lat = 0;
    if (b.rank == 0) {
        lat = dagger_latency_us(&b, lat_iters);
        send_kind(&b, 1, MSG_STOP, NULL, 0, 0);
        for (int i = 0; i < NSIZES; i++) {
            long iters = (long)((quick ? 256ull : 2048ull) << 20) / (long)sizes[i];
            if (iters < 16)
                iters = 16;
            /* A warm-up round first, as ucx_perftest warms up before it
             * times: the first large messages also pay UCX's registration
             * cache and the protocol's set-up. */
            int64_t n = iters / 8 < 2 ? 2 : iters / 8;
            dg_coll_bcast(b.tx, &n, sizeof(n), 0); /* tell rank 1 what to expect */
            (void)dagger_bandwidth_mbs(&b, buf, sizes[i], n);
            n = iters;
            dg_coll_bcast(b.tx, &n, sizeof(n), 0);
            rows[i].ours = dagger_bandwidth_mbs(&b, buf, sizes[i], iters);
        }
    } else {
        /* Answer the latency pings at full speed until rank 0 says stop,
         * then take each bandwidth round as announced. */
        while (!b.stop)
            dg_tx_progress(b.tx);
        long total = 0;
        for (int i = 0; i < 2 * NSIZES; i++) { /* each size: warm-up, then timed */
            int64_t n = 0;
            dg_coll_bcast(b.tx, &n, sizeof(n), 0);
            total += n; /* counted across rounds: data may beat the announcement */
            spin_until(&b, &b.received, total);
            send_kind(&b, 0, MSG_ACK, NULL, 0, 0);
        }
    }
    if (b.rank == 0) {
        report(stdout, tcp ? "tcp" : "UCX default (shared memory)", lat, lat_ref, rows, NSIZES);
        FILE *f = fopen(results, "w");
        if (f) {
            report(f, tcp ? "tcp" : "UCX default (shared memory)", lat, lat_ref, rows, NSIZES);
            fclose(f);
            printf("results written to %s\n", results);
        }
    }
    dg_tx_destroy(b.tx);
    dg_boot_finalize(&boot);
    free(buf);
    return 0;
}
