/* What planning costs a rank for the tasks that other ranks run. Every rank
 * plans every task (the SPMD planner, DESIGN.md section 1), so at P ranks a
 * rank's submitting thread spends on a step's tasks what their number says,
 * not what its own share says; this measures the per-task price of a task
 * another rank runs against one the rank runs itself.
 *
 *   tools/dagger-run -n P build/tools/bench/bench_region_share [results-file] [regions] [tasks]
 *
 * regions (default 2000) regions of tasks (default 64, at most 4096) tasks
 * each, the same every time, so all but the first replay (docs/planner.md,
 * section 11). Task i has its chunk InOut (8 doubles, incremented), chunk
 * i + 1 In and an int by value. Cases:
 *   rank0   every chunk, so every task, on rank 0: rank 0 plans and runs
 *           its tasks, every other rank only plans them
 *   spread  chunk i, so task i, on rank i mod P
 * BENCH_CASES=rank0 or spread runs one (under callgrind the instructions per
 * dagger_submit call are then that case's; docs/planner.md, "Left out").
 * Each rank times its submission loop in thread CPU time
 * (CLOCK_THREAD_CPUTIME_ID: waiting is not counted, so a shared machine's
 * other load matters less) and reports it per submitted task, with the share
 * of tasks that were its own and of those that replayed. Region ends
 * (running the tasks, the agreement) are outside the timing. Every chunk is
 * checked at the end (each task incremented it once per region): a wrong
 * run times nothing and exits 1. */
#include <dagger.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TASKS 4096
#define ELEMS 8

static int bump(dagger_task_t *t)
{
    double *x = dagger_task_data(t, 0);
    const double *y = dagger_task_data(t, 1);
    if (!x || !y)
        return dagger_task_fail(t, "bench_region_share: missing argument data");
    for (int i = 0; i < ELEMS; i++)
        x[i] += 1.0;
    return DAGGER_OK;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct result {
    double ns_per_task; /* submission loop, thread CPU time */
    double own;         /* share of the tasks this rank ran */
    double replayed;    /* share of the submitted tasks that replayed */
} result_t;

static int fail(const char *what)
{
    fprintf(stderr, "bench_region_share: %s: %s\n", what, dagger_error_detail());
    return 1;
}

/* One case (spread 0: every chunk on rank 0; 1: chunk i on rank i mod P),
 * regions x ntasks submissions. */
static int run_case(dagger_runtime_t *rt, dagger_codelet_t cl, int spread, int regions, int ntasks,
                    result_t *out)
{
    int P = dagger_nranks(rt), me = dagger_rank(rt);
    dagger_chunk_t c[MAX_TASKS];
    for (int i = 0; i < ntasks; i++) {
        dagger_chunk_desc_t d = {.dtype = DAGGER_F64, .ndims = 1, .dims = {ELEMS},
                                 .owner = spread ? i % P : 0};
        if (dagger_chunk_create(rt, &d, &c[i]) != DAGGER_OK)
            return fail("dagger_chunk_create");
    }
    double cpu = 0;
    long replayed = 0, submitted = 0;
    for (int r = 0; r < regions; r++) {
        dagger_region_t *reg;
        if (dagger_region_begin(rt, NULL, &reg) != DAGGER_OK)
            return fail("dagger_region_begin");
        double t0 = thread_cpu_s();
        for (int i = 0; i < ntasks; i++) {
            int v = r;
            dagger_arg_t a[3] = {DAGGER_INOUT_CHUNK(c[i]), DAGGER_IN_CHUNK(c[(i + 1) % ntasks]),
                                 DAGGER_VALUE(&v, sizeof(v))};
            if (dagger_submit(reg, cl, 3, a, NULL, NULL, NULL) != DAGGER_OK)
                return fail("dagger_submit");
        }
        cpu += thread_cpu_s() - t0;
        if (dagger_region_end(reg) != DAGGER_OK)
            return fail("dagger_region_end");
        dagger_region_stats_t st;
        if (dagger_region_stats(rt, &st) == DAGGER_OK)
            replayed += (long)st.tasks_replayed;
        submitted += ntasks;
    }
    int bad = 0;
    for (int i = 0; i < ntasks && !bad; i++) {
        double x[ELEMS];
        size_t len;
        if (dagger_fetch_chunk(rt, c[i], x, sizeof(x), &len) != DAGGER_OK)
            return fail("dagger_fetch_chunk");
        for (int k = 0; k < ELEMS; k++)
            bad |= x[k] != (double)regions;
        if (bad && me == 0)
            fprintf(stderr, "bench_region_share: chunk %d holds %g after %d regions\n", i, x[0],
                    regions);
    }
    for (int i = 0; i < ntasks; i++)
        dagger_chunk_free(rt, c[i]);
    int own = 0;
    for (int i = 0; i < ntasks; i++)
        own += (spread ? i % P : 0) == me;
    *out = (result_t){.ns_per_task = cpu / (double)submitted * 1e9,
                      .own = (double)own / (double)ntasks,
                      .replayed = (double)replayed / (double)submitted};
    return bad;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "/tmp/bench_region_share.txt";
    int regions = argc > 2 ? atoi(argv[2]) : 2000, ntasks = argc > 3 ? atoi(argv[3]) : 64;
    if (regions < 1 || ntasks < 2 || ntasks > MAX_TASKS) {
        fprintf(stderr, "bench_region_share: regions at least 1, tasks 2 to %d\n", MAX_TASKS);
        return 2;
    }
    dagger_runtime_t *rt;
    if (dagger_init(&argc, &argv, NULL, &rt) != DAGGER_OK)
        return fail("dagger_init");
    dagger_codelet_t cl;
    if (dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "bench.share.bump",
                                                             .cpu = bump},
                                &cl) != DAGGER_OK)
        return fail("dagger_codelet_register");
    int P = dagger_nranks(rt), me = dagger_rank(rt), rc = 0;
    FILE *out = me == 0 ? fopen(path, "w") : NULL;
    if (me == 0 && !out)
        fprintf(stderr, "bench_region_share: cannot open %s; printing only\n", path);
    static const char *names[2] = {"rank0", "spread"};
    if (me == 0) {
        printf("planning a rank's share: %d ranks, %d regions of %d tasks; ns per submitted "
               "task (thread CPU time of the submission loop)\n", P, regions, ntasks);
        printf("%-7s %5s %12s %8s %9s\n", "case", "rank", "ns/task", "own", "replayed");
        if (out)
            fprintf(out, "# bench_region_share: %d ranks, %d regions of %d tasks\n"
                    "case rank ns_per_task own replayed\n", P, regions, ntasks);
    }
    const char *sel = getenv("BENCH_CASES");
    for (int k = 0; k < 2 && !rc; k++) {
        if (sel && !strstr(sel, names[k]))
            continue;
        result_t mine;
        rc = run_case(rt, cl, k, regions, ntasks, &mine);
        /* every rank learns whether one failed, so all stop alike */
        int64_t f = rc;
        if (dagger_allreduce(rt, &f, 1, DAGGER_I64, DAGGER_OP_MAX) != DAGGER_OK)
            return fail("dagger_allreduce");
        if (f) {
            rc = 1;
            break;
        }
        void *all = NULL;
        size_t *lens = calloc((size_t)P, sizeof(size_t));
        if (!lens || dagger_allgather(rt, &mine, sizeof(mine), &all, lens) != DAGGER_OK) {
            free(lens);
            return fail("dagger_allgather");
        }
        const result_t *res = all;
        for (int r = 0; me == 0 && r < P; r++) {
            printf("%-7s %5d %12.0f %8.2f %9.3f\n", names[k], r, res[r].ns_per_task, res[r].own,
                   res[r].replayed);
            if (out)
                fprintf(out, "%s %d %.0f %.3f %.4f\n", names[k], r, res[r].ns_per_task,
                        res[r].own, res[r].replayed);
        }
        free(all);
        free(lens);
    }
    if (out)
        fclose(out);
    dagger_status_t st = dagger_finalize(rt);
    return rc ? 1 : st == DAGGER_OK ? 0 : 1;
}
