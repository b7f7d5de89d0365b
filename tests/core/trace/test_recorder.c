/* Recording through the runtime and reading back with the tool's reader:
 * what a traced program did is what the trace says, the hooks are off
 * without DAGGER_TRACE, and hang dumps land in the file. */
#include <criterion/criterion.h>
#include <dagger.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/trace/trace.h"
#include "model.h"
#include "multirank/mr_codelets.h"
#include "tmpdir.h"

#define OK(call)                                                                          \
    do {                                                                                  \
        dagger_status_t st_ = (call);                                                     \
        cr_assert_eq(st_, DAGGER_OK, "%s -> %s: %s", #call, dagger_strerror(st_),         \
                     dagger_error_detail());                                              \
    } while (0)

static char dir[64];

static void trace_to_tmp(void)
{
    cr_assert(tmpdir_make(dir, "dg-trace-test"));
    setenv("DAGGER_TRACE", dir, 1);
}

static void cleanup(void)
{
    if (dir[0])
        tmpdir_remove(dir);
}

TestSuite(recorder, .fini = cleanup);
TestSuite(reader, .fini = cleanup);

static _Atomic int seen_on, seen_off;

static int probe(dagger_task_t *t)
{
    (void)t;
    if (DG_TRACE_ON())
        seen_on++;
    else
        seen_off++;
    return DAGGER_OK;
}

/* A long task that asks for a dump of its own (SIGUSR1) while it runs: the
 * timeout's dump may come before a loaded machine started it, the signal's
 * comes while it sleeps. */
static int nap(dagger_task_t *t)
{
    (void)t;
    kill(getpid(), SIGUSR1);
    struct timespec ts = {1, 500 * 1000 * 1000};
    nanosleep(&ts, NULL);
    return DAGGER_OK;
}

static dagger_codelet_t reg(dagger_runtime_t *rt, const char *name, dagger_impl_fn fn)
{
    dagger_codelet_desc_t d = {.name = name, .cpu = fn};
    dagger_codelet_t cl;
    OK(dagger_codelet_register(rt, &d, &cl));
    return cl;
}

static dagger_chunk_t vec(dagger_runtime_t *rt, size_t n)
{
    dagger_chunk_desc_t d = {.dtype = DAGGER_F64, .ndims = 1, .dims = {n}, .owner = 0};
    dagger_chunk_t c;
    OK(dagger_chunk_create(rt, &d, &c));
    return c;
}

/* x: add1 three times in a chain; y: probe, independent of x. */
static void small_program(void)
{
    dagger_runtime_t *rt;
    OK(dagger_init(NULL, NULL, NULL, &rt));
    dagger_codelet_t add1 = reg(rt, "add1", mr_add1), pr = reg(rt, "probe", probe);
    dagger_chunk_t x = vec(rt, 64), y = vec(rt, 8);
    dagger_region_t *r;
    OK(dagger_region_begin(rt, NULL, &r));
    for (int i = 0; i < 3; i++)
        OK(dagger_spawn(r, add1, DAGGER_INOUT(dagger_view(rt, x)), DAGGER_END));
    OK(dagger_spawn(r, pr, DAGGER_IN(dagger_view(rt, y)), DAGGER_END));
    OK(dagger_region_end(r));
    OK(dagger_finalize(rt));
}

static void load(tr_trace_t *tr)
{
    int rc = tr_load(tr, dir);
    cr_assert_eq(rc, 0, "loading the trace: %s", tr->error);
}

Test(recorder, records_what_ran)
{
    trace_to_tmp();
    small_program();
    cr_assert_eq(seen_on, 1, "the hooks are on while DAGGER_TRACE is set");
    tr_trace_t tr;
    load(&tr);
    cr_assert_eq(tr.nranks, 1);
    cr_assert(tr.ranks[0].complete, "the end record is there");
    cr_assert_eq(tr.ranks[0].dropped, 0);
    cr_assert_eq(tr.planned, 4);
    cr_assert_eq(tr.ran, 4);
    for (uint64_t i = 1; i <= 4; i++) {
        const tr_task_t *t = &tr.tasks[i];
        cr_assert_str_eq(tr_codelet_name(&tr, t->codelet), i < 4 ? "add1" : "probe");
        cr_assert(t->worker >= 0 && t->worker < (int)tr.ranks[0].hdr.nworkers, "task %llu "
                  "ran on worker %d", (unsigned long long)i, t->worker);
        /* A worker may start a task before dg_plan_submit returns. */
        cr_assert(t->t0 <= t->t1 && t->plan_t0 <= t->planned_at && t->plan_t0 <= t->t0,
                  "task %llu: planned [%lld, %lld], ran [%lld, %lld]", (unsigned long long)i,
                  (long long)t->plan_t0, (long long)t->planned_at, (long long)t->t0,
                  (long long)t->t1);
    }
    /* The chain on x: each add1 depends on the one before; probe on nothing. */
    cr_assert_eq(tr.tasks[1].ndeps, 0);
    for (uint64_t i = 2; i <= 3; i++) {
        cr_assert_eq(tr.tasks[i].ndeps, 1);
        cr_assert_eq(tr_task_deps(&tr, &tr.tasks[i])[0], i - 1);
        cr_assert_geq(tr.tasks[i].t0, tr.tasks[i - 1].t1, "dependent tasks ran in order");
    }
    cr_assert_eq(tr.tasks[4].ndeps, 0);
    /* Two chunks' home storage, and the region's phases. */
    uint64_t allocated = 0;
    for (size_t i = 0; i < tr.ranks[0].mem.n; i++) {
        const tr_mem_t *m = TR_AT(&tr.ranks[0].mem, tr_mem_t, i);
        allocated += m->delta > 0 && m->home ? (uint64_t)m->delta : 0;
    }
    cr_assert_eq(allocated, (64 + 8) * sizeof(double));
    int phases[8] = {0};
    for (size_t i = 0; i < tr.ranks[0].phases.n; i++)
        phases[TR_AT(&tr.ranks[0].phases, tr_span_t, i)->kind & 7]++;
    cr_assert(phases[DG_TRP_REGION_BEGIN] == 1 && phases[DG_TRP_REGION_PLAN_END] == 1 &&
              phases[DG_TRP_REGION_WAIT] == 1 && phases[DG_TRP_REGION_AGREE] == 1);
    cr_assert(tr.t_begin < tr.t_end);
    tr_free(&tr);
}

Test(recorder, off_without_the_setting)
{
    unsetenv("DAGGER_TRACE");
    small_program();
    cr_assert_eq(seen_on, 0, "no hook fired without DAGGER_TRACE");
    cr_assert_eq(seen_off, 1);
}

Test(recorder, unwritable_directory_is_an_error)
{
    setenv("DAGGER_TRACE", "/proc/dagger-trace-test/sub", 1);
    dagger_runtime_t *rt = NULL;
    dagger_status_t st = dagger_init(NULL, NULL, NULL, &rt);
    cr_assert_eq(st, DAGGER_ERR_CONFIG, "got %s", dagger_strerror(st));
    cr_assert(strstr(dagger_error_detail(), "/proc/dagger-trace-test/sub"),
              "the error names the directory: %s", dagger_error_detail());
    cr_assert_null(rt);
}

Test(recorder, hang_dump_lands_in_the_trace)
{
    trace_to_tmp();
    setenv("DAGGER_HANG_TIMEOUT", "0.2", 1);
    setenv("DAGGER_LOG_LEVEL", "-1", 1); /* the printed dump is not what is tested here */
    dagger_runtime_t *rt;
    OK(dagger_init(NULL, NULL, NULL, &rt));
    dagger_codelet_t slow = reg(rt, "nap", nap), add1 = reg(rt, "add1", mr_add1);
    dagger_chunk_t x = vec(rt, 16);
    dagger_region_t *r;
    OK(dagger_region_begin(rt, NULL, &r));
    OK(dagger_spawn(r, slow, DAGGER_INOUT(dagger_view(rt, x)), DAGGER_END));
    OK(dagger_spawn(r, add1, DAGGER_INOUT(dagger_view(rt, x)), DAGGER_END));
    OK(dagger_region_end(r));
    OK(dagger_finalize(rt));
    tr_trace_t tr;
    load(&tr);
    cr_assert_geq(tr.ranks[0].hangs.n, 1, "a hang dump was recorded");
    const tr_hang_t *h = NULL;
    int timeout_dump = 0;
    for (size_t i = 0; i < tr.ranks[0].hangs.n; i++) {
        const tr_hang_t *d = TR_AT(&tr.ranks[0].hangs, tr_hang_t, i);
        cr_assert(d->complete, "dump %zu (%s) is complete", i, d->why);
        timeout_dump |= strstr(d->why, "DAGGER_HANG_TIMEOUT") != NULL;
        if (!h && d->running.n)
            h = d;
    }
    cr_assert(timeout_dump, "DAGGER_HANG_TIMEOUT's dump was recorded");
    cr_assert(h, "a dump was taken while the task ran");
    cr_assert_eq(h->running.n, 1, "one task was running");
    const tr_hang_op_t *run = TR_AT(&h->running, tr_hang_op_t, 0);
    cr_assert_eq(run->task, 1);
    cr_assert_str_eq(tr_codelet_name(&tr, run->codelet), "nap");
    uint64_t launch_of_1 = 0, launch_of_2 = 0;
    for (size_t i = 0; i < h->ops.n; i++) {
        const tr_hang_op_t *o = TR_AT(&h->ops, tr_hang_op_t, i);
        if (o->kind == 1 && o->task == 1)
            launch_of_1 = o->seq;
        if (o->kind == 1 && o->task == 2)
            launch_of_2 = o->seq;
    }
    cr_assert(launch_of_1 && launch_of_2, "both launches were unfinished");
    int edge = 0;
    for (size_t i = 0; i < h->edges.n; i++) {
        const tr_hang_edge_t *e = TR_AT(&h->edges, tr_hang_edge_t, i);
        edge |= e->waiter == launch_of_2 && e->op == launch_of_1;
    }
    cr_assert(edge, "the dump says task 2's launch waits for task 1's");
    tr_free(&tr);
}

/* Damaged files: every truncation and many flipped bytes either load or
 * fail with a message naming the file and an offset; nothing crashes. */
Test(reader, damaged_files_fail_cleanly)
{
    trace_to_tmp();
    small_program();
    char path[128];
    snprintf(path, sizeof(path), "%s/rank-0.dgt", dir);
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    static unsigned char data[1 << 20];
    size_t size = fread(data, 1, sizeof(data), f);
    fclose(f);
    cr_assert_gt(size, sizeof(dg_trf_header_t));
    srand(7);
    for (int trial = 0; trial < 300; trial++) {
        size_t len = size, flip = 0;
        unsigned char old = 0;
        if (trial % 2)
            len = (size_t)rand() % size;
        else {
            flip = (size_t)rand() % size;
            old = data[flip];
            data[flip] ^= (unsigned char)(1 + rand() % 255);
        }
        f = fopen(path, "wb");
        fwrite(data, 1, len, f);
        fclose(f);
        if (!(trial % 2))
            data[flip] = old;
        tr_trace_t tr;
        if (tr_load(&tr, dir) != 0) {
            cr_assert(strstr(tr.error, "rank-0.dgt") && strstr(tr.error, "offset "),
                      "trial %d: '%s' names the file and an offset", trial, tr.error);
        }
        tr_free(&tr);
    }
}
