/* Start-up and shutdown: a whole process that runs dagger_init +
 * dagger_finalize against its floor, or any commands against each other
 * (tools/bench/bench_startup_ranks.sh: a launcher's own `true` against a
 * multi-rank Dagger-C job), alternated in one run.
 *
 *   bench_startup [--reps N] [--out FILE]           singleton: floor vs dagger
 *   bench_startup [--reps N] [--out FILE] NAME=CMD ...  each CMD run by /bin/sh -c
 *   bench_startup --child                           one dagger_init + dagger_finalize
 *
 * FILE defaults to /tmp/bench_startup.txt (bench_startup_ranks.sh: /tmp/bench_startup_ranksN.txt).
 *
 * Each run is a fresh process, timed from fork to its exit (wall) and by
 * wait4's CPU time (user + system, its waited-for descendants included), so
 * library loading, thread start and exit are in it as a user sees them. The
 * singleton floor is startup_floor (hwloc topology, UCP context and one
 * worker up and down; no PMIx, which a singleton never calls). Prints per
 * variant the median [min, max] of wall and CPU, and the first variant's
 * ratio and difference against each other one. */
#include <dagger.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_VARIANTS 8

typedef struct {
    const char *name;
    char *argv[4];
    double *wall, *cpu;
} variant_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int child(void)
{
    dagger_runtime_t *rt = NULL;
    dagger_status_t st = dagger_init(NULL, NULL, NULL, &rt);
    if (st == DAGGER_OK)
        st = dagger_finalize(rt);
    if (st != DAGGER_OK)
        fprintf(stderr, "bench_startup --child: %s\n", dagger_error_detail());
    return st == DAGGER_OK ? 0 : 1;
}

/* One run of v: 0, or -1 when it could not start or failed. */
static int run_once(variant_t *v, int i)
{
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execv(v->argv[0], v->argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR)
            return -1;
    v->wall[i] = now() - t0;
    v->cpu[i] = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    if (!WIFEXITED(status) || WEXITSTATUS(status)) {
        fprintf(stderr, "bench_startup: %s failed (status %d)\n", v->name, status);
        return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts xs (n of them) and returns the median. */
static double median(double *xs, int n)
{
    qsort(xs, (size_t)n, sizeof(*xs), cmp_double);
    return n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

static void report(FILE *f, variant_t *vs, int nv, int reps)
{
    double mw[MAX_VARIANTS], mc[MAX_VARIANTS];
    fprintf(f, "%-10s %10s %21s %10s %21s\n", "variant", "wall_s", "[min, max]", "cpu_s", "[min, max]");
    for (int k = 0; k < nv; k++) {
        mw[k] = median(vs[k].wall, reps);
        mc[k] = median(vs[k].cpu, reps);
        fprintf(f, "%-10s %10.4f [%8.4f, %8.4f] %10.4f [%8.4f, %8.4f]\n", vs[k].name, mw[k],
                vs[k].wall[0], vs[k].wall[reps - 1], mc[k], vs[k].cpu[0], vs[k].cpu[reps - 1]);
    }
    for (int k = 1; k < nv; k++)
        fprintf(f, "%s / %s: wall %.2fx (+%.4f s), cpu %.2fx (+%.4f s)\n", vs[k].name, vs[0].name,
                mw[k] / mw[0], mw[k] - mw[0], mc[k] / mc[0], mc[k] - mc[0]);
}

/* The floor beside this program (both are built into one directory). */
static int floor_path(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash || (size_t)(slash - buf) + sizeof("/startup_floor") > size)
        return -1;
    strcpy(slash + 1, "startup_floor");
    return 0;
}

static int add_shell(variant_t *v, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec)
        return -1;
    v->name = strndup(spec, (size_t)(eq - spec));
    v->argv[0] = "/bin/sh";
    v->argv[1] = "-c";
    v->argv[2] = (char *)eq + 1;
    return v->name ? 0 : -1;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_startup [--reps N] [--out FILE] [NAME=CMD ...] | --child\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--child"))
        return child();
    int reps = 15, nv = 0;
    const char *out = "/tmp/bench_startup.txt";
    static char self[PATH_MAX], floor_exe[PATH_MAX];
    variant_t vs[MAX_VARIANTS] = {{0}};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else if (nv < MAX_VARIANTS && argv[i][0] != '-' && add_shell(&vs[nv], argv[i]) == 0)
            nv++;
        else
            return usage();
    }
    if (reps < 1)
        return usage();
    if (!nv) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0 || floor_path(floor_exe, sizeof(floor_exe)))
            return usage();
        self[n] = '\0';
        vs[0] = (variant_t){.name = "floor", .argv = {floor_exe, NULL}};
        vs[1] = (variant_t){.name = "dagger", .argv = {self, "--child", NULL}};
        nv = 2;
    }
    for (int k = 0; k < nv; k++) {
        vs[k].wall = calloc((size_t)reps, sizeof(double));
        vs[k].cpu = calloc((size_t)reps, sizeof(double));
        if (!vs[k].wall || !vs[k].cpu)
            return 1;
    }
    /* One warm-up round (page cache, first exec), then the variants in
     * turn, the order reversed every other round. */
    for (int k = 0; k < nv; k++)
        if (run_once(&vs[k], 0))
            return 1;
    for (int i = 0; i < reps; i++)
        for (int j = 0; j < nv; j++)
            if (run_once(&vs[i % 2 ? nv - 1 - j : j], i))
                return 1;
    FILE *f = fopen(out, "w");
    printf("%d runs of each, alternated\n", reps);
    report(stdout, vs, nv, reps);
    if (f) {
        report(f, vs, nv, reps);
        fclose(f);
        printf("written to %s\n", out);
    }
    return 0;
}
