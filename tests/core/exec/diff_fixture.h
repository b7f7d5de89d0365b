/* The differential test of the executor (test_exec_diff.c on one rank,
 * mr_exec_diff.c on 1..4 ranks under the launcher): random programs planned
 * by the tests/planner fixture for P ranks; every rank runs its own recorded
 * op stream on its real executor, all ranks' streams also run in the
 * reference executor (tests/support/plan_sim.c) in this process, and every
 * chunk and future must end byte-identical in both.
 *
 * The executor's codelets get dagger_task_arg slots, which carry no access
 * mode: each test codelet has a fixed signature (shapes[] below), so its
 * implementation knows its arguments' kinds and modes. */
#ifndef DG_TEST_DIFF_FIXTURE_H
#define DG_TEST_DIFF_FIXTURE_H

#include <criterion/criterion.h>
#include <dagger.h>
#include <stdio.h>

#include "core/runtime/tasks.h"
#include "core/runtime/runtime.h"
#include "tests/core/plan/plan_fixture.h"

#define NSHAPES 6
#define MAXARGS 3
#define MAXC 128

typedef struct shape {
    const char *name;
    uint32_t nargs, ret;
    dg_plan_arg_kind_t kind[MAXARGS];
    dagger_access_t mode[MAXARGS];
} shape_t;

static const shape_t shapes[NSHAPES] = {
    {"xd.update", 1, 0, {DG_PLAN_ARG_VIEW}, {DAGGER_MODE_INOUT}},
    {"xd.axpy", 2, 0, {DG_PLAN_ARG_VIEW, DG_PLAN_ARG_VIEW}, {DAGGER_MODE_IN, DAGGER_MODE_INOUT}},
    {"xd.add3", 3, 0, {DG_PLAN_ARG_VIEW, DG_PLAN_ARG_VIEW, DG_PLAN_ARG_VIEW},
     {DAGGER_MODE_IN, DAGGER_MODE_IN, DAGGER_MODE_OUT}},
    {"xd.scale", 2, 0, {DG_PLAN_ARG_VALUE, DG_PLAN_ARG_VIEW}, {DAGGER_MODE_IN, DAGGER_MODE_INOUT}},
    {"xd.dot", 1, 8, {DG_PLAN_ARG_VIEW}, {DAGGER_MODE_IN}},
    {"xd.use", 2, 0, {DG_PLAN_ARG_FUTURE, DG_PLAN_ARG_VIEW}, {DAGGER_MODE_IN, DAGGER_MODE_INOUT}},
};

/* ------------------------------------------------------------ the executor's codelets */

/* Runs test codelet k (plan_fixture.h's cl_run, the same body the reference
 * executor runs) on the executor's argument slots. */
static int run_shape(uint32_t k, dagger_task_t *t)
{
    const shape_t *sh = &shapes[k];
    cl_arg_t args[MAXARGS];
    dg_plan_geom_t g[MAXARGS];
    for (uint32_t i = 0; i < sh->nargs; i++) {
        dagger_slot_t s = dagger_task_arg(t, (int)i);
        args[i] = (cl_arg_t){.kind = sh->kind[i], .mode = sh->mode[i], .base = s.data,
                             .value = s.data, .len = s.bytes, .g = &g[i]};
        memset(&g[i], 0, sizeof(g[i]));
        if (sh->kind[i] != DG_PLAN_ARG_VIEW)
            continue;
        /* the slot is the view: its origin, extents and strides */
        g[i].dtype = s.dtype;
        g[i].elsize = (uint32_t)dagger_dtype_size(s.dtype);
        g[i].ndims = (uint32_t)s.ndims;
        args[i].v = (dg_plan_view_t){.ndims = (uint32_t)s.ndims, .mod = s.mod};
        for (int d = 0; d < s.ndims; d++) {
            g[i].strides[d] = s.strides[d];
            args[i].v.ext[d] = s.dims[d];
        }
    }
    size_t ret_size = 0;
    unsigned char *ret = dagger_task_result(t, &ret_size);
    cl_run(k, args, sh->nargs, ret, (uint32_t)ret_size);
    return DAGGER_OK;
}

#define SHAPE_FN(k) static int shape_##k(dagger_task_t *t) { return run_shape(k, t); }
SHAPE_FN(0)
SHAPE_FN(1)
SHAPE_FN(2)
SHAPE_FN(3)
SHAPE_FN(4)
SHAPE_FN(5)
static const dagger_impl_fn shape_fns[NSHAPES] = {shape_0, shape_1, shape_2,
                                                  shape_3, shape_4, shape_5};

/* ------------------------------------------------------------ random programs */

typedef struct xprog {
    uint64_t rng, seed;
    world_t *w;
    cl_table_t cl;
    int P;                     /* ranks */
    int live[MAXC];            /* by chunk id: 1 chunk, 2 future */
    int32_t rank_of[MAXC];     /* a chunk's owner, a future's rank */
    uint64_t ntasks;
    uint64_t region_first;
} xprog_t;

static uint64_t rnd(xprog_t *p)
{
    return w_rnd(&p->rng);
}

static uint64_t below(xprog_t *p, uint64_t n)
{
    return w_below(&p->rng, n);
}

static void new_chunk(xprog_t *p)
{
    static const dagger_dtype_t dts[] = {DAGGER_F64, DAGGER_I32, DAGGER_U8};
    dg_plan_geom_t g = {.dtype = dts[below(p, 3)], .ndims = 1 + (uint32_t)below(p, 2)};
    for (uint32_t k = 0; k < g.ndims; k++)
        g.dims[k] = 1 + below(p, g.ndims == 1 ? 24 : 8);
    int32_t owner = (int32_t)below(p, (uint64_t)p->P);
    uint64_t id = w_chunk_geom(p->w, owner, 0, &g, NULL);
    cr_assert_lt(id, MAXC, "seed %llu: chunk ids past the test's table", (unsigned long long)p->seed);
    p->live[id] = 1;
    p->rank_of[id] = owner;
}

/* A live chunk (want 1) or future (want 2), or 0. */
static uint64_t pick(xprog_t *p, int want)
{
    uint64_t n = 0, ids[MAXC];
    for (uint64_t id = 1; id < MAXC; id++)
        if (p->live[id] == want)
            ids[n++] = id;
    return n ? ids[below(p, n)] : 0;
}

static void rnd_view(xprog_t *p, uint64_t id, dg_plan_view_t *v)
{
    w_rnd_view(&p->rng, dg_plan_chunk_geom(p->w->pl[0], id), id, v);
}

static void one_task(xprog_t *p)
{
    uint32_t k = (uint32_t)below(p, NSHAPES);
    if (k == 5 && !pick(p, 2))
        k = 4; /* no future to read yet: make one */
    const shape_t *sh = &shapes[k];
    dg_plan_arg_t args[MAXARGS];
    unsigned char value[8];
    for (uint32_t i = 0; i < sh->nargs; i++) {
        args[i] = (dg_plan_arg_t){.kind = sh->kind[i], .mode = sh->mode[i]};
        if (sh->kind[i] == DG_PLAN_ARG_VIEW) {
            rnd_view(p, pick(p, 1), &args[i].view);
        } else if (sh->kind[i] == DG_PLAN_ARG_VALUE) {
            for (int b = 0; b < 8; b++)
                value[b] = (unsigned char)rnd(p);
            args[i].value = value;
            args[i].len = 1 + below(p, 8);
        } else {
            args[i].future = pick(p, 2);
        }
    }
    uint64_t deps[2];
    uint32_t nd = 0;
    if (p->ntasks >= p->region_first && below(p, 4) == 0)
        for (; nd < 1 + below(p, 2); nd++)
            deps[nd] = 1 + below(p, p->ntasks);
    dg_plan_task_desc_t t = {.codelet = p->cl.ids[k], .args = args, .nargs = sh->nargs,
                             .priority = (int32_t)below(p, 5) - 2, .deps = deps, .ndeps = nd};
    dg_plan_submitted_t s;
    cr_assert_eq(w_submit(p->w, &t, &s), DAGGER_OK, "seed %llu: %s", (unsigned long long)p->seed,
                 dagger_error_detail());
    p->ntasks = s.task;
    if (s.future) {
        cr_assert_lt(s.future, MAXC);
        p->live[s.future] = 2;
        p->rank_of[s.future] = s.rank;
    }
}

static void plan_program(xprog_t *p)
{
    p->w = w_create_ex(p->P, 2, NULL, NULL, below(p, 2) ? 1 << 20 : 0, 0);
    for (uint32_t k = 0; k < NSHAPES; k++)
        p->cl.ids[k] = w_codelet(p->w, shapes[k].name, DG_PLAN_KIND_BIT(DG_PLAN_CPU),
                                 shapes[k].ret);
    p->cl.n = NSHAPES;
    for (int i = 0, n = 1 + (int)below(p, 4); i < n; i++)
        new_chunk(p);
    for (int reg = 0, nreg = 1 + (int)below(p, 3); reg < nreg; reg++) {
        w_region_begin(p->w, NULL);
        p->region_first = p->ntasks + 1;
        for (int i = 0, n = 1 + (int)below(p, 40); i < n; i++) {
            uint64_t r = below(p, 20);
            if (r == 0)
                new_chunk(p);
            else if (r == 1 && pick(p, 1)) {
                uint64_t id = pick(p, 1);
                w_free(p->w, id);
                p->live[id] = 0;
                if (!pick(p, 1))
                    new_chunk(p);
            } else
                one_task(p);
        }
        w_region_end(p->w);
    }
}

/* ------------------------------------------------------------ the two executors */

/* Runs this rank's recorded op stream on the real executor of rt, with the
 * home storage of every chunk it owns made first from the bytes it started
 * with (init[id], NULL for the others). */
static void run_real(xprog_t *p, dagger_runtime_t *rt, unsigned char **init, size_t *bytes)
{
    int32_t me = dagger_rank(rt);
    dg_exec_t *ex = rt->tasks->exec;
    for (uint32_t k = 0; k < NSHAPES; k++)
        cr_assert_eq(dg_exec_codelet_add(ex, p->cl.ids[k], shapes[k].name, shape_fns[k], NULL,
                                         NULL), DAGGER_OK);
    for (uint64_t id = 1; id < MAXC; id++) {
        if (!init[id])
            continue;
        cr_assert_eq(dg_exec_alloc(ex, id, 0, bytes[id], 1), DAGGER_OK, "%s",
                     dagger_error_detail());
        memcpy(dg_bufs_find(&ex->bufs, id, 0)->ptr, init[id], bytes[id]);
    }
    dg_exec_region_reset(ex);
    uint64_t n = dg_plan_sim_nops(p->w->sim, me), kinds[8] = {0};
    for (uint64_t i = 0; i < n; i++) {
        const dg_plan_op_t *op = dg_plan_sim_op(p->w->sim, me, i);
        dg_exec_emit(ex, op);
        kinds[op->kind & 7]++;
        /* what dagger_region_end does: the next region's ops come after all
         * of this one's (the planner relies on it: it forgets a region's
         * accesses to home buffers at its end) */
        if (op->kind == DG_PLAN_OP_REGION_END) {
            cr_assert_eq(dg_exec_wait_all(ex), DAGGER_OK, "%s", dagger_error_detail());
            cr_assert_eq(dagger_barrier(rt), DAGGER_OK, "%s", dagger_error_detail());
        }
    }
    cr_assert_eq(dg_exec_wait_all(ex), DAGGER_OK, "seed %llu: %s", (unsigned long long)p->seed,
                 dagger_error_detail());
    cr_assert_not(atomic_load(&ex->failed), "seed %llu: the executor failed: %s",
                  (unsigned long long)p->seed, ex->fail_msg);
    if (getenv("DG_EXEC_DIFF_VERBOSE"))
        fprintf(stderr, "exec diff: seed %llu rank %d: %llu ops, %llu launches, %llu sends, "
                "%llu receives, %llu copies\n", (unsigned long long)p->seed, me,
                (unsigned long long)n, (unsigned long long)kinds[DG_PLAN_OP_LAUNCH],
                (unsigned long long)kinds[DG_PLAN_OP_SEND],
                (unsigned long long)kinds[DG_PLAN_OP_RECV],
                (unsigned long long)kinds[DG_PLAN_OP_COPY]);
}

/* Every live chunk this rank owns and future it holds, against the
 * reference executor's copy on the same rank. */
static void compare(xprog_t *p, dagger_runtime_t *rt)
{
    dg_exec_t *ex = rt->tasks->exec;
    int32_t me = dagger_rank(rt);
    for (uint64_t id = 1; id < MAXC; id++) {
        if (!p->live[id] || p->rank_of[id] != me)
            continue;
        size_t want_bytes = 0;
        const unsigned char *want =
            dg_plan_sim_buffer(p->w->sim, me, (dg_plan_buf_t){id, 0}, &want_bytes);
        dg_buf_entry_t *e = dg_bufs_find(&ex->bufs, id, 0);
        cr_assert(want && e, "seed %llu: %s %llu has no home buffer (reference %p, executor %p)",
                  (unsigned long long)p->seed, p->live[id] == 2 ? "future" : "chunk",
                  (unsigned long long)id, (void *)want, (void *)e);
        cr_assert(!memcmp(e->ptr, want, want_bytes), "seed %llu: %s %llu differs between the "
                  "executor and the reference executor", (unsigned long long)p->seed,
                  p->live[id] == 2 ? "future" : "chunk", (unsigned long long)id);
    }
}

static uint64_t g_seed;
static int g_running;

/* Plans program seed for rt's ranks, runs it on both executors, compares. */
static void run_program(uint64_t seed, dagger_runtime_t *rt)
{
    xprog_t *p = calloc(1, sizeof(*p));
    p->seed = g_seed = seed;
    p->P = dagger_nranks(rt);
    p->rng = seed * 0x9e3779b97f4a7c15ull + 1;
    plan_program(p);
    /* the bytes every chunk starts with, before the reference runs */
    unsigned char *init[MAXC] = {0};
    size_t bytes[MAXC] = {0};
    for (uint64_t id = 1; id < MAXC; id++) {
        if (p->live[id] == 2 || p->rank_of[id] != dagger_rank(rt))
            continue; /* futures and other ranks' chunks */
        const void *b = dg_plan_sim_buffer(p->w->sim, p->rank_of[id], (dg_plan_buf_t){id, 0},
                                           &bytes[id]);
        if (b && (init[id] = malloc(bytes[id])))
            memcpy(init[id], b, bytes[id]);
    }
    dg_plan_sim_opts_t o = {.seed = seed, .fifo = (int)(seed % 4 == 0), .launch = cl_sim_launch,
                            .ctx = &p->cl};
    cr_assert_eq(dg_plan_sim_run(p->w->sim, &o), DAGGER_OK, "seed %llu: %s",
                 (unsigned long long)seed, dagger_error_detail());
    run_real(p, rt, init, bytes);
    compare(p, rt);
    for (uint64_t id = 1; id < MAXC; id++)
        free(init[id]);
    w_destroy(p->w);
    free(p);
}

static void report(void)
{
    if (g_running)
        fprintf(stderr, "exec diff: failing seed %llu\n", (unsigned long long)g_seed);
}

#endif
