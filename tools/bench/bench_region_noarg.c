/* Empty tasks without arguments in one region, for instruction counts
 * (callgrind) rather than times: the submission path and the launch path
 * of the runtime and nothing else.
 *
 *   bench_region_noarg [tasks=100000]
 *   valgrind --tool=callgrind --toggle-collect=dagger_submit build/tools/bench/bench_region_noarg
 *
 * With --toggle-collect=dagger_submit, callgrind counts the instructions of
 * the submitting thread inside dagger_submit (planning, the planner actor's
 * turn, and the tasks that thread runs while the window is full); without
 * it, everything. Running it with two task counts and taking the
 * difference removes start-up and finalize from the whole-program count.
 * Prints tasks, seconds and tasks per second. */
#include <dagger.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int empty_task(dagger_task_t *t)
{
    (void)t;
    return DAGGER_OK;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    dagger_runtime_t *rt;
    if (dagger_init(NULL, NULL, NULL, &rt) != DAGGER_OK) {
        fprintf(stderr, "dagger_init: %s\n", dagger_error_detail());
        return 1;
    }
    dagger_codelet_desc_t d = {.name = "empty", .cpu = empty_task};
    dagger_codelet_t cl;
    dagger_region_t *r;
    if (dagger_codelet_register(rt, &d, &cl) != DAGGER_OK ||
        dagger_region_begin(rt, NULL, &r) != DAGGER_OK) {
        fprintf(stderr, "setup: %s\n", dagger_error_detail());
        return 1;
    }
    double t0 = now();
    for (long i = 0; i < n; i++)
        if (dagger_submit(r, cl, 0, NULL, NULL, NULL, NULL) != DAGGER_OK) {
            fprintf(stderr, "dagger_submit: %s\n", dagger_error_detail());
            return 1;
        }
    dagger_status_t st = dagger_region_end(r);
    double t = now() - t0;
    printf("tasks %ld seconds %.4f tasks/s %.0f\n", n, t, (double)n / t);
    dagger_finalize(rt);
    return st == DAGGER_OK ? 0 : 1;
}
