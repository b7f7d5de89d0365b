/* A job that goes wrong on purpose, for check_faults.sh:
 *   fault_prog DIR hang   rank 0 runs a task that never returns, and the
 *                         last rank a task that needs its output: the last
 *                         rank waits for a send that never comes, rank 0
 *                         for its own task. (A plan that differs between
 *                         the ranks is no longer a hang: the runtime finds
 *                         the divergence, transport/coll_foresee.c.)
 * Every rank writes DIR/rank<r>.pid just before it starts to wait, so the
 * script knows the job has reached its hang and which processes to watch. */
#include <dagger.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int endless(dagger_task_t *t)
{
    (void)t;
    for (;;) {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    return DAGGER_OK;
}

static int add1(dagger_task_t *t)
{
    dagger_slot_t x = dagger_task_arg(t, 0);
    ((double *)x.data)[0] += 1.0;
    return DAGGER_OK;
}

static void check(const char *what, dagger_status_t st)
{
    if (st == DAGGER_OK)
        return;
    fprintf(stderr, "fault_prog: %s: %s: %s\n", what, dagger_strerror(st), dagger_error_detail());
    exit(1);
}

static void write_pid(const char *dir, int rank)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof(path), "%s/rank%d.pid", dir, rank);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) || rename(tmp, path)) {
        fprintf(stderr, "fault_prog: cannot write %s\n", path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[2], "hang") != 0) {
        fprintf(stderr, "usage: fault_prog DIR hang\n");
        return 2;
    }
    dagger_runtime_t *rt;
    check("dagger_init", dagger_init(&argc, &argv, NULL, &rt));
    int me = dagger_rank(rt), n = dagger_nranks(rt);
    dagger_codelet_t cl, stuck;
    check("register", dagger_codelet_register(rt, &(dagger_codelet_desc_t){.name = "add1", .cpu = add1},
                                              &cl));
    check("register", dagger_codelet_register(
                          rt, &(dagger_codelet_desc_t){.name = "endless", .cpu = endless}, &stuck));
    dagger_chunk_t c;
    check("chunk", dagger_chunk_create(rt, &(dagger_chunk_desc_t){.dtype = DAGGER_F64, .ndims = 1,
                                                                   .dims = {8}, .owner = 0}, &c));
    dagger_region_t *r;
    check("region_begin", dagger_region_begin(rt, NULL, &r));
    dagger_arg_t a = DAGGER_INOUT(dagger_view(rt, c));
    dagger_task_opts_t o0 = {.scope = &DAGGER_SCOPE_RANK(0)}, o1 = {.scope = &DAGGER_SCOPE_RANK(n - 1)};
    check("submit", dagger_submit(r, stuck, 1, &a, &o0, NULL, NULL));
    check("submit", dagger_submit(r, cl, 1, &a, &o1, NULL, NULL));
    write_pid(argv[1], me);
    dagger_status_t st = dagger_region_end(r);
    fprintf(stderr, "fault_prog: rank %d: the region ended with %s\n", me, dagger_strerror(st));
    dagger_finalize(rt);
    return st == DAGGER_OK ? 0 : 1;
}
