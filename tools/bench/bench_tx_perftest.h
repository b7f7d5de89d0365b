/* The reference of the transport benchmarks: one ucx_perftest server and
 * client pair on this host, run from the benchmark itself so both are
 * measured in the same run on the same transports (UCX_TLS as set in the
 * environment). Header-only, shared by bench_tx_perf.c and bench_tx_actors.c. */
#ifndef BENCH_TX_PERFTEST_H
#define BENCH_TX_PERFTEST_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Columns of ucx_perftest's final line (-f): iterations, latency p50,
 * latency average (us, one way for *_lat tests), latency overall,
 * bandwidth average, bandwidth overall (MB/s), message rates. */
enum { PERFTEST_LAT_AVG = 2, PERFTEST_BW = 5 };

/* Runs `ucx_perftest -t test -s size -n iters` as server and client on
 * localhost; returns the column `col` of the client's final line, or -1. */
static inline double perftest_run(const char *test, size_t size, long iters, int col)
{
    static int port;
    if (!port)
        port = 20000 + (int)(getpid() % 20000);
    port++;
    char sport[16];
    snprintf(sport, sizeof(sport), "%d", port);
    pid_t server = fork();
    if (server == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            _exit(126);
        execlp("ucx_perftest", "ucx_perftest", "-p", sport, (char *)NULL);
        _exit(127);
    }
    double value = -1;
    for (int attempt = 0; attempt < 20 && value < 0; attempt++) {
        usleep(100000); /* until the server listens */
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "ucx_perftest 127.0.0.1 -p %s -t %s -s %zu -n %ld -f 2>&1",
                 sport, test, size, iters);
        FILE *p = popen(cmd, "r");
        if (!p)
            break;
        char line[512];
        while (fgets(line, sizeof(line), p)) {
            double v[8];
            if (sscanf(line, "%lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4],
                       &v[5], &v[6], &v[7]) == 8)
                value = v[col];
        }
        pclose(p);
    }
    kill(server, SIGTERM);
    waitpid(server, NULL, 0);
    return value;
}

/* The arguments both transport benchmarks take: [--tcp] [--quick] [results-file]. */
static inline void bench_tx_args(int argc, char **argv, int *tcp, int *quick, const char **results)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tcp"))
            *tcp = 1;
        else if (!strcmp(argv[i], "--quick"))
            *quick = 1;
        else
            *results = argv[i];
    }
}

#endif
