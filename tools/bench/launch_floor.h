/* The hardware floor of bench_region_launch's cases, measured in the same
 * run (issue 17): the 8-byte one-way latency and the bandwidth between ranks
 * 0 and 1 through the runtime's actor path (dagger_request from rank 0's
 * main thread to an echo actor on rank 1, which replies with 8 bytes), and
 * the region-end agreement (an empty region on all ranks, timed by the
 * caller). Included by bench_region_launch.c and bench_coll.c, which also
 * take their clock from here (launch_floor_now).
 *
 * One way = half the fastest 8-byte round trip. Bandwidth = (S - 8) bytes
 * over the difference of the fastest round trips of an S-byte request and
 * an 8-byte one (both replied with 8 bytes), so the fixed cost cancels.
 * The fastest, not the median: a floor is what the path allows, and on a
 * loaded machine (4 ranks on 2 cores) a median of the probes can be
 * inflated by a descheduled echo rank to above the cases themselves. Even
 * the fastest of 21 bandwidth probes came out 4x apart between runs there
 * (1.4 to 6 GB/s), so a caller measures before and after its case and takes
 * the better of the two (launch_floor_best). */
#ifndef LAUNCH_FLOOR_H
#define LAUNCH_FLOOR_H

#include <dagger.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FLOOR_BIG (1u << 20) /* bytes of the bandwidth probe */
#define FLOOR_LAT_ROUNDS 201
#define FLOOR_BW_ROUNDS 51

/* Seconds on the monotonic clock: the benchmarks' timer. */
static inline double launch_floor_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct launch_floor {
    double lat_ms; /* 8 B one way */
    double bw_bps; /* bytes per second, rank 0 -> rank 1 */
} launch_floor_t;

static dagger_msg_type_t floor_ping, floor_pong;

static dagger_status_t floor_echo(dagger_ctx_t *ctx)
{
    uint64_t v = 0;
    return dagger_reply(ctx, floor_pong, &v, sizeof(v));
}

static void floor_check(dagger_status_t st, const char *what)
{
    if (st != DAGGER_OK) {
        fprintf(stderr, "launch floor: %s: %s (%s)\n", what, dagger_strerror(st),
                dagger_error_detail());
        exit(1);
    }
}

/* Fastest round trip in seconds of `rounds` requests of `size` bytes. */
static double floor_rtt(dagger_runtime_t *rt, dagger_actor_addr_t to, const void *buf,
                        size_t size, int rounds, double (*clock_s)(void))
{
    double best = 1e30;
    uint64_t back;
    for (int i = 0; i < rounds; i++) {
        dagger_reply_t rep = {.buf = &back, .capacity = sizeof(back)};
        double t0 = clock_s();
        floor_check(dagger_request(rt, to, floor_ping, buf, size, DAGGER_WAIT_FOREVER, &rep),
                    "dagger_request");
        double dt = clock_s() - t0;
        best = dt < best ? dt : best;
    }
    return best;
}

/* Collective. Needs at least 2 ranks; the figures are rank 0's (the other
 * ranks get zeros, they only print on rank 0). */
static launch_floor_t launch_floor_measure(dagger_runtime_t *rt, double (*clock_s)(void))
{
    launch_floor_t f = {0, 0};
    dagger_msg_type_desc_t ping = {"bench.floor_ping", DAGGER_MSG_BYTES, FLOOR_BIG};
    dagger_msg_type_desc_t pong = {"bench.floor_pong", DAGGER_MSG_FIXED, sizeof(uint64_t)};
    floor_check(dagger_msg_type_register(rt, &ping, &floor_ping), "register ping");
    floor_check(dagger_msg_type_register(rt, &pong, &floor_pong), "register pong");
    dagger_actor_addr_t echo = dagger_actor_none();
    if (dagger_rank(rt) == 1) {
        dagger_handler_t h = {floor_ping, floor_echo};
        dagger_actor_desc_t d = {.name = "bench.floor_echo", .handlers = &h, .nhandlers = 1};
        floor_check(dagger_actor_spawn(rt, &d, &echo), "dagger_actor_spawn");
    }
    floor_check(dagger_bcast(rt, &echo, sizeof(echo), 1), "dagger_bcast");
    if (dagger_rank(rt) == 0) {
        unsigned char *big = calloc(1, FLOOR_BIG);
        floor_rtt(rt, echo, big, 8, 20, clock_s); /* warm-up, both sizes */
        floor_rtt(rt, echo, big, FLOOR_BIG, 3, clock_s);
        double small = floor_rtt(rt, echo, big, 8, FLOOR_LAT_ROUNDS, clock_s);
        double large = floor_rtt(rt, echo, big, FLOOR_BIG, FLOOR_BW_ROUNDS, clock_s);
        f.lat_ms = small / 2 * 1e3;
        f.bw_bps = large > small ? (double)(FLOOR_BIG - 8) / (large - small) : 0;
        free(big);
    }
    floor_check(dagger_barrier(rt), "dagger_barrier");
    if (dagger_rank(rt) == 1) {
        floor_check(dagger_actor_stop(rt, echo), "dagger_actor_stop");
        floor_check(dagger_actor_join(rt, echo, DAGGER_WAIT_FOREVER, NULL), "dagger_actor_join");
    }
    return f;
}

/* The better figures of two measurements: the lower latency, the higher
 * bandwidth (the floor of the path is what it allowed at its best). */
static inline launch_floor_t launch_floor_best(launch_floor_t a, launch_floor_t b)
{
    launch_floor_t f = a;
    if (b.lat_ms > 0 && (f.lat_ms <= 0 || b.lat_ms < f.lat_ms))
        f.lat_ms = b.lat_ms;
    if (b.bw_bps > f.bw_bps)
        f.bw_bps = b.bw_bps;
    return f;
}

/* The most bytes one rank receives when every rank gathers the whole
 * array: the blocks it does not own (ranks receive in parallel). */
static inline double floor_gather_bytes(const dagger_array_t *a, int nranks, size_t elem)
{
    dagger_array_desc_t d;
    if (dagger_array_info(a, &d) != DAGGER_OK)
        return 0;
    double most = 0;
    for (int r = 0; r < nranks; r++) {
        double in = 0;
        for (size_t b = 0; b < dagger_array_nblocks(a); b++) {
            dagger_array_block_t bi;
            if (dagger_array_block_info(a, b, &bi) != DAGGER_OK || bi.owner == r)
                continue;
            double n = (double)elem;
            for (int k = 0; k < d.ndims; k++)
                n *= (double)bi.extent[k];
            in += n;
        }
        most = in > most ? in : most;
    }
    return most;
}

#endif
