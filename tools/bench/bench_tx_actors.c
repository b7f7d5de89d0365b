/* Actor-to-actor latency between two ranks through the full actor path:
 * dagger_send on rank 0's actor -> the kernel's route -> the transport's
 * active message -> worker 0's progress on rank 1 -> dg_act_deliver -> the
 * mailbox -> rank 1's actor, which sends it back the same way. One way is
 * half the round trip (8-byte payload). Beside it, in the same run on the
 * same transports: ucx_perftest's UCP active-message latency (budget:
 * <= 2x) and the bare transport's ping-pong from bench_tx_perf (to show
 * what the actor layer adds).
 *
 *   dagger-run -n 2 bench_tx_actors [--tcp] [--quick] [results-file]
 *
 * Each rank runs one worker thread (worker 0: actors and the transport),
 * the runtime's layout for one core per rank. The actor system is built
 * here from its layers (the way dagger_init builds it) so that the
 * benchmark links the transport and actor layers only. Results go to
 * results-file (default /tmp/bench_tx_actors.txt) and stdout. */
#include <dagger.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "actors/system.h"
#include "bench_tx_perftest.h"
#include "core/base/handles.h"
#include "core/runtime/runtime.h"
#include "transport/chan_actor.h"
#include "transport/coll.h"
#include "transport/progress.h"
#include "transport/tx.h"

static void die(const char *what)
{
    fprintf(stderr, "bench_tx_actors: %s: %s\n", what, dagger_error_detail());
    exit(1);
}
#define CHECK(call) do { if ((call) != DAGGER_OK) die(#call); } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The runtime handle the public actor calls need, over our own layers. */
static dagger_runtime_t the_rt;
static dg_boot_t boot;

/* Rank 0 runs the reference first, while no thread of ours exists yet
 * (rank 1 waits in the bootstrap exchange, sleeping). */
static double reference_latency(long iters)
{
    double ref = boot.rank == 0 ? perftest_run("ucp_am_lat", 8, iters, PERFTEST_LAT_AVG) : 0;
    void *all;
    size_t offsets[3];
    CHECK(dg_boot_allgather(&boot, "", 0, NULL, NULL, &all, offsets));
    free(all);
    return ref;
}

static void bring_up(int tcp)
{
    if (tcp)
        setenv("UCX_TLS", "tcp", 1);
    the_rt.rank = boot.rank;
    the_rt.nranks = boot.size;
    dg_config_defaults(&the_rt.cfg);
    dg_act_params_t ap = {.rank = boot.rank, .nranks = boot.size, .num_threads = 1, .bind = 0,
                          .owner = &the_rt};
    CHECK(dg_act_system_create(&ap, &the_rt.actors));
    the_rt.num_threads = 1;
    dg_tx_params_t tp = {.boot = &boot, .wake = dg_tx_engine_wake, .wake_ctx = the_rt.actors};
    CHECK(dg_tx_create(&tp, &the_rt.tx));
    CHECK(dg_tx_actors_attach(the_rt.tx, the_rt.actors, &the_rt.txa));
    if (dg_handle_add(&the_rt))
        die("dg_handle_add");
    CHECK(dg_coll_barrier(the_rt.tx));
    dg_tx_engine_start(the_rt.tx, the_rt.actors);
}

static void take_down(void)
{
    dg_act_system_stop_all(the_rt.actors);
    dg_coll_barrier(the_rt.tx);
    dg_tx_engine_stop(the_rt.tx, the_rt.actors);
    dg_tx_actors_detach(the_rt.txa);
    dg_act_system_destroy(the_rt.actors);
    dg_handle_remove(&the_rt);
    dg_tx_destroy(the_rt.tx);
    dg_boot_finalize(&boot);
}

typedef struct player {
    dagger_actor_addr_t peer;
    long left;              /* rank 0: round trips still to start */
    volatile int done;
    double t0, t1;
} player_t;

static dagger_msg_type_t BALL;

static dagger_status_t on_ball(dagger_ctx_t *ctx)
{
    player_t *p = dagger_ctx_state(ctx);
    dagger_runtime_t *rt = dagger_ctx_runtime(ctx);
    if (rt->rank == 0) {
        if (p->left-- == 0) {
            p->t1 = now_s();
            __atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
            return DAGGER_OK;
        }
    }
    return dagger_send(rt, p->peer, BALL, dagger_ctx_payload(ctx), 8);
}

/* Round trips between rank 0's and rank 1's actors; returns one-way us. */
static double actor_latency(long iters)
{
    dagger_runtime_t *rt = &the_rt;
    dagger_msg_type_desc_t d = {"bench.ball", DAGGER_MSG_FIXED, 8};
    CHECK(dagger_msg_type_register(rt, &d, &BALL));
    static player_t p;
    dagger_handler_t h = {BALL, on_ball};
    dagger_actor_addr_t self, *all;
    CHECK(dagger_actor_spawn(rt, &(dagger_actor_desc_t){.name = "player", .state = &p,
                                                        .handlers = &h, .nhandlers = 1}, &self));
    size_t lens[2];
    CHECK(dg_coll_allgather(rt->tx, &self, sizeof(self), (void **)&all, lens));
    p.peer = all[1 - rt->rank];
    free(all);
    double us = 0;
    for (int round = 0; round < 2; round++) { /* the first round warms up */
        p.left = round ? iters : iters / 10;
        p.done = 0;
        CHECK(dg_coll_barrier(rt->tx));
        if (rt->rank == 0) {
            uint64_t ball = 7;
            p.t0 = now_s();
            CHECK(dagger_send(rt, self, BALL, &ball, 8));
            while (!__atomic_load_n(&p.done, __ATOMIC_ACQUIRE))
                usleep(1000);
            us = (p.t1 - p.t0) / (double)(round ? iters : iters / 10) / 2 * 1e6;
        }
    }
    CHECK(dg_coll_barrier(rt->tx));
    return us;
}

int main(int argc, char **argv)
{
    int tcp = 0, quick = 0;
    const char *results = "/tmp/bench_tx_actors.txt";
    bench_tx_args(argc, argv, &tcp, &quick, &results);
    CHECK(dg_boot_init(&boot));
    if (boot.size != 2) {
        fprintf(stderr, "bench_tx_actors: run it on 2 ranks (dagger-run -n 2 %s)\n", argv[0]);
        return 2;
    }
    if (tcp)
        setenv("UCX_TLS", "tcp", 1); /* for ucx_perftest and for us alike */
    long iters = quick ? 20000 : 100000;
    double ref = reference_latency(iters);
    bring_up(tcp);
    double lat = actor_latency(iters);
    if (boot.rank == 0) {
        const char *tls = tcp ? "tcp" : "UCX default (shared memory)";
        for (int f = 0; f < 2; f++) {
            FILE *out = f ? fopen(results, "w") : stdout;
            if (!out)
                continue;
            fprintf(out, "bench_tx_actors: transports %s, 1 worker per rank\n", tls);
            fprintf(out, "actor to actor, 8 B, one way: %.3f us; ucx_perftest ucp_am_lat %.3f us; "
                    "ratio %.2f (budget <= 2.00)\n", lat, ref, lat / ref);
            if (f)
                fclose(out);
        }
        printf("results written to %s\n", results);
    }
    take_down();
    return 0;
}
