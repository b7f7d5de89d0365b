/* Logical dependency rules: RAW, WAR, WAW on overlapping elements only;
 * reads never wait for reads; the accesses of one task never depend on each
 * other; pruning keeps histories small; explicit dependencies. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "core/plan/hist.h"
#include "tests/core/plan/plan_fixture.h"

static world_t *w;
static uint32_t cl;

static void setup(void)
{
    w = w_create(1);
    cl = w_codelet(w, "k", DG_PLAN_KIND_BIT(DG_PLAN_CPU), 0);
}

static void teardown(void)
{
    w_destroy(w);
}

TestSuite(deps, .init = setup, .fini = teardown);

/* A task with views (chunk, row range of a 1-D chunk, mode). */
static uint64_t task1(uint64_t c, uint64_t off, uint64_t ext, dagger_access_t mode)
{
    dg_plan_arg_t a = {.kind = DG_PLAN_ARG_VIEW, .mode = mode,
                       .view = {.chunk = c, .ndims = 1, .off = {off}, .ext = {ext}}};
    return w_task(w, cl, &a, 1, NULL).task;
}

static void expect_deps(uint64_t task, const uint64_t *want, uint32_t n)
{
    const w_task_t *t = &w->tasks[task];
    cr_assert_eq(t->ndeps, n, "task %llu has %u deps, want %u", (unsigned long long)task,
                 t->ndeps, n);
    for (uint32_t i = 0; i < n; i++)
        cr_assert_eq(t->deps[i], want[i], "task %llu dep %u", (unsigned long long)task, i);
}

Test(deps, raw_war_waw_and_read_read)
{
    uint64_t c = w_chunk1(w, 0, 100);
    w_region_begin(w, NULL);
    uint64_t w1 = task1(c, 0, 50, DAGGER_MODE_OUT);
    uint64_t r1 = task1(c, 10, 10, DAGGER_MODE_IN);  /* RAW on w1 */
    uint64_t r2 = task1(c, 15, 10, DAGGER_MODE_IN);  /* RAW on w1, not on r1 */
    uint64_t r3 = task1(c, 60, 10, DAGGER_MODE_IN);  /* nothing written there */
    uint64_t w2 = task1(c, 18, 1, DAGGER_MODE_INOUT); /* WAR on r1 r2, WAW on w1 */
    uint64_t w3 = task1(c, 50, 50, DAGGER_MODE_OUT); /* WAR on r3 only */
    uint64_t r4 = task1(c, 0, 100, DAGGER_MODE_IN);  /* RAW on w1 (rest), w2, w3 */
    expect_deps(w1, NULL, 0);
    expect_deps(r1, (uint64_t[]){w1}, 1);
    expect_deps(r2, (uint64_t[]){w1}, 1);
    expect_deps(r3, NULL, 0);
    expect_deps(w2, (uint64_t[]){w1, r1, r2}, 3);
    expect_deps(w3, (uint64_t[]){r3}, 1);
    expect_deps(r4, (uint64_t[]){w1, w2, w3}, 3);
    w_region_end(w);
}

Test(deps, same_task_accesses_do_not_depend_on_each_other)
{
    uint64_t c = w_chunk1(w, 0, 10);
    w_region_begin(w, NULL);
    uint64_t t0 = task1(c, 0, 10, DAGGER_MODE_OUT);
    dg_plan_arg_t a[3] = {
        {.kind = DG_PLAN_ARG_VIEW, .mode = DAGGER_MODE_IN, .view = {.chunk = c, .ndims = 1, .off = {0}, .ext = {5}}},
        {.kind = DG_PLAN_ARG_VIEW, .mode = DAGGER_MODE_OUT, .view = {.chunk = c, .ndims = 1, .off = {3}, .ext = {5}}},
        {.kind = DG_PLAN_ARG_VIEW, .mode = DAGGER_MODE_INOUT, .view = {.chunk = c, .ndims = 1, .off = {0}, .ext = {10}}}};
    uint64_t t1 = w_task(w, cl, a, 3, NULL).task;
    expect_deps(t1, (uint64_t[]){t0}, 1);
    uint64_t t2 = task1(c, 9, 1, DAGGER_MODE_IN);
    expect_deps(t2, (uint64_t[]){t1}, 1);
    w_region_end(w);
}

Test(deps, triangles_of_one_tile_do_not_conflict)
{
    uint64_t c = w_chunk2(w, 0, 6, 6);
    w_region_begin(w, NULL);
    dg_plan_arg_t up = w_view(w, c, DAGGER_MODE_INOUT), lo = up, dg = up;
    up.view.mod = DAGGER_UNIT_UPPER;
    lo.view.mod = DAGGER_UNIT_LOWER;
    dg.view.mod = DAGGER_DIAGONAL;
    uint64_t t1 = w_task(w, cl, &up, 1, NULL).task;
    uint64_t t2 = w_task(w, cl, &lo, 1, NULL).task;
    uint64_t t3 = w_task(w, cl, &dg, 1, NULL).task;
    expect_deps(t1, NULL, 0);
    expect_deps(t2, NULL, 0);
    expect_deps(t3, NULL, 0);
    dg_plan_arg_t full = w_view(w, c, DAGGER_MODE_IN);
    uint64_t t4 = w_task(w, cl, &full, 1, NULL).task;
    expect_deps(t4, (uint64_t[]){t1, t2, t3}, 3);
    lo.view.mod = DAGGER_LOWER; /* meets the diagonal (t3) and the strict lower (t2) */
    lo.mode = DAGGER_MODE_IN;
    uint64_t t5 = w_task(w, cl, &lo, 1, NULL).task;
    expect_deps(t5, (uint64_t[]){t2, t3}, 2);
    w_region_end(w);
}

Test(deps, explicit_dependencies_and_regions)
{
    uint64_t a = w_chunk1(w, 0, 4), b = w_chunk1(w, 0, 4);
    w_region_begin(w, NULL);
    uint64_t t1 = task1(a, 0, 4, DAGGER_MODE_INOUT);
    dg_plan_arg_t arg = w_view(w, b, DAGGER_MODE_INOUT);
    dg_plan_task_desc_t t = {.codelet = cl, .args = &arg, .nargs = 1, .deps = &t1, .ndeps = 1};
    dg_plan_submitted_t s;
    cr_assert_eq(w_submit(w, &t, &s), DAGGER_OK);
    expect_deps(s.task, (uint64_t[]){t1}, 1);
    w_region_end(w);
    /* a task of a finished region is already satisfied */
    w_region_begin(w, NULL);
    cr_assert_eq(w_submit(w, &t, &s), DAGGER_OK);
    expect_deps(s.task, NULL, 0);
    /* the task never depends on the previous region's writers either */
    uint64_t t3 = task1(a, 0, 4, DAGGER_MODE_IN);
    expect_deps(t3, NULL, 0);
    w_region_end(w);
}

/* One history with its planner memory, scratch and a span set. */
typedef struct hx {
    dg_plan_mem_t m;
    dg_plan_hctx_t c;
    dg_plan_hist_t h;
    dg_plan_spans_t s;
} hx_t;

static void hx_init(hx_t *x)
{
    dg_plan_mem_init(&x->m);
    dg_plan_hctx_init(&x->c, &x->m);
    dg_plan_hist_init(&x->h);
    dg_plan_spans_init(&x->s);
}

/* Frees it all and checks that the history gave back all its memory. */
static void hx_done(hx_t *x)
{
    dg_plan_hist_clear(&x->c, &x->h);
    dg_plan_spans_release(&x->m, &x->s);
    dg_plan_hctx_cleanup(&x->c);
    cr_assert_eq(x->m.st.in_use, 0, "histories give back all their memory");
    dg_plan_mem_cleanup(&x->m);
}

/* Histories stay pruned: a chain of writers keeps one entry; a write that
 * covers many readers replaces them. */
static void count_entry(void *ctx, uint64_t id, int write, const dg_plan_spans_t *s)
{
    (void)id;
    (void)write;
    (void)s;
    (*(int *)ctx)++;
}

Test(deps, histories_are_pruned)
{
    hx_t x;
    hx_init(&x);
    dg_plan_u64vec_t deps = {0};
    dg_plan_spans_append(&x.m, &x.s, 0, 100);
    for (uint64_t i = 1; i <= 1000; i++)
        dg_plan_hist_add(&x.c, &x.h, &x.s, 1, i);
    cr_assert_eq(x.h.n, 1);
    for (uint64_t i = 1001; i <= 2000; i++)
        dg_plan_hist_add(&x.c, &x.h, &x.s, 0, i);
    cr_assert_eq(x.h.n, 1001);
    dg_plan_hist_deps(&x.c, &x.h, &x.s, 1, &deps);
    cr_assert_eq(deps.n, 1001);
    dg_plan_hist_add(&x.c, &x.h, &x.s, 1, 3000);
    cr_assert_eq(x.h.n, 1);
    /* element-wise writers: disjoint entries, each query finds only its own */
    for (uint64_t i = 0; i < 100; i++) {
        dg_plan_spans_clear(&x.s);
        dg_plan_spans_append(&x.m, &x.s, i, i + 1);
        dg_plan_hist_add(&x.c, &x.h, &x.s, 1, 4000 + i);
    }
    cr_assert_eq(x.h.n, 100, "the writer of [0,100) was cut to nothing");
    int n = 0;
    dg_plan_hist_foreach(&x.h, count_entry, &n);
    cr_assert_eq(n, 100);
    dg_plan_spans_clear(&x.s);
    dg_plan_spans_append(&x.m, &x.s, 40, 43);
    deps.n = 0;
    dg_plan_hist_deps(&x.c, &x.h, &x.s, 0, &deps);
    dg_plan_u64vec_sort_unique(&deps);
    cr_assert_eq(deps.n, 3);
    cr_assert_eq(deps.v[0], 4040);
    cr_assert_eq(deps.v[2], 4042);
    dg_plan_u64vec_release(&x.m, &deps);
    hx_done(&x);
}

/* A write of one range removes the entries inside it and cuts the ones it
 * only meets, in both trees (the prune's fast paths keep the general rule). */
typedef struct entries {
    uint32_t n;
    uint64_t id[8], lo[8], hi[8], nspans[8];
    int write[8];
} entries_t;

static void note_entry(void *ctx, uint64_t id, int write, const dg_plan_spans_t *s)
{
    entries_t *e = ctx;
    cr_assert_lt(e->n, 8);
    e->id[e->n] = id;
    e->write[e->n] = write;
    e->lo[e->n] = dg_plan_spans_lo(s);
    e->hi[e->n] = dg_plan_spans_hi(s);
    e->nspans[e->n++] = s->n;
}

static void add_range(hx_t *x, uint64_t b, uint64_t e, int write, uint64_t id)
{
    dg_plan_spans_clear(&x->s);
    dg_plan_spans_append(&x->m, &x->s, b, e);
    dg_plan_hist_add(&x->c, &x->h, &x->s, write, id);
}

Test(deps, a_write_removes_what_it_covers_and_cuts_what_it_meets)
{
    hx_t x;
    hx_init(&x);
    add_range(&x, 0, 10, 1, 1);   /* cut to [0, 8) */
    add_range(&x, 5, 20, 0, 2);   /* cut to [5, 8) */
    add_range(&x, 12, 30, 0, 3);  /* covered: gone */
    add_range(&x, 30, 40, 0, 4);  /* cut to [35, 40) */
    add_range(&x, 50, 60, 1, 5);  /* untouched */
    dg_plan_spans_clear(&x.s); /* a two-span read: [20, 22) and [36, 38), cut to [36, 38) */
    dg_plan_spans_append(&x.m, &x.s, 20, 22);
    dg_plan_spans_append(&x.m, &x.s, 36, 38);
    dg_plan_hist_add(&x.c, &x.h, &x.s, 0, 6);
    add_range(&x, 8, 35, 1, 7);
    cr_assert_eq(x.h.n, 6);
    entries_t e = {0};
    dg_plan_hist_foreach(&x.h, note_entry, &e);
    cr_assert_eq(e.n, 6);
    /* writes first, then reads, each by start */
    const uint64_t id[6] = {1, 7, 5, 2, 4, 6}, lo[6] = {0, 8, 50, 5, 35, 36},
                   hi[6] = {8, 35, 60, 8, 40, 38};
    for (uint32_t i = 0; i < 6; i++) {
        cr_assert_eq(e.id[i], id[i], "entry %u is access %llu", i, (unsigned long long)e.id[i]);
        cr_assert_eq(e.lo[i], lo[i], "access %llu starts at %llu", (unsigned long long)id[i],
                     (unsigned long long)e.lo[i]);
        cr_assert_eq(e.hi[i], hi[i], "access %llu ends at %llu", (unsigned long long)id[i],
                     (unsigned long long)e.hi[i]);
        cr_assert_eq(e.nspans[i], 1);
    }
    /* a write over everything leaves only itself */
    add_range(&x, 0, 100, 1, 8);
    cr_assert_eq(x.h.n, 1);
    hx_done(&x);
}

static int cmp_ref(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Dependency lists sort and lose their repeats at every length (the short
 * ones by insertion, the long ones by qsort). */
Test(deps, dependency_lists_sort_and_drop_repeats)
{
    dg_plan_mem_t m;
    dg_plan_mem_init(&m);
    uint64_t x = 12345;
    for (uint32_t n = 0; n <= 64; n++)
        for (int rep = 0; rep < 20; rep++) {
            dg_plan_u64vec_t v = {0};
            uint64_t ref[64];
            for (uint32_t i = 0; i < n; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                ref[i] = (x >> 33) % (rep % 2 ? 8 : 1000); /* many repeats, or few */
                dg_plan_u64vec_push(&m, &v, ref[i]);
            }
            qsort(ref, n, sizeof(ref[0]), cmp_ref);
            uint32_t k = 0;
            for (uint32_t i = 0; i < n; i++)
                if (!k || ref[i] != ref[k - 1])
                    ref[k++] = ref[i];
            dg_plan_u64vec_sort_unique(&v);
            cr_assert_eq(v.n, k, "length %u: %u ids left, want %u", n, v.n, k);
            for (uint32_t i = 0; i < k; i++)
                cr_assert_eq(v.v[i], ref[i], "length %u, id %u", n, i);
            dg_plan_u64vec_release(&m, &v);
        }
    dg_plan_mem_cleanup(&m);
}

/* One program: readers of chunk a on both ranks, each returning a future
 * computed from a, then a writer of a; twice (`reads` readers, then ten times
 * as many). The futures of the first KEEP readers of each burst are kept (the
 * readers most likely to be forgotten), the others freed at once. Planners and
 * sim share retire window `win`. Returns the planner memory of rank 1 after
 * each burst, the dependency count of the second writer's launch and the
 * kept futures' values. */
#define KEEP 50
typedef struct reread {
    uint64_t mem[2];
    uint32_t writer_deps;
    uint64_t kept[2][KEEP];
} reread_t;

static void reread_program(uint64_t win, uint64_t sim_win, uint32_t reads, reread_t *res)
{
    world_t *v = w_create_ex(2, 1, NULL, NULL, 0, win);
    cl_table_t t = {.n = 2, .ret = {8, 0}};
    t.ids[0] = w_codelet(v, "read_a", DG_PLAN_KIND_BIT(DG_PLAN_CPU), 8);
    t.ids[1] = w_codelet(v, "write_a", DG_PLAN_KIND_BIT(DG_PLAN_CPU), 0);
    uint64_t a = w_chunk1(v, 0, 16);
    dg_plan_submitted_t kept[2][KEEP];
    w_region_begin(v, NULL);
    for (int round = 0; round < 2; round++) {
        for (uint32_t i = 0; i < (round ? 10 * reads : reads); i++) {
            int32_t r = (int32_t)(i % 2);
            dg_plan_scope_t s = {.ranks = &r, .nranks = 1};
            dg_plan_arg_t arg = w_view(v, a, DAGGER_MODE_IN);
            dg_plan_submitted_t f = w_task(v, t.ids[0], &arg, 1, &s);
            if (i < KEEP)
                kept[round][i] = f;
            else
                w_free(v, f.future);
        }
        dg_plan_stats_t st;
        dg_plan_get_stats(v->pl[1], &st); /* rank 0 keeps logical histories for w_on_task */
        res->mem[round] = st.mem_in_use;
        int32_t r0 = 0;
        dg_plan_scope_t s0 = {.ranks = &r0, .nranks = 1};
        dg_plan_arg_t wa = w_view(v, a, DAGGER_MODE_INOUT);
        w_task(v, t.ids[1], &wa, 1, &s0);
    }
    for (uint64_t i = dg_plan_sim_nops(v->sim, 0); i-- > 0;) {
        const dg_plan_op_t *op = dg_plan_sim_op(v->sim, 0, i);
        if (op->kind == DG_PLAN_OP_LAUNCH) {
            res->writer_deps = op->ndeps;
            break;
        }
    }
    w_region_end(v);
    dg_plan_sim_opts_t o = {.seed = 7, .launch = cl_sim_launch, .ctx = &t, .window = sim_win};
    cr_assert_eq(dg_plan_sim_run(v->sim, &o), DAGGER_OK, "%s", dagger_error_detail());
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < KEEP; i++) {
            size_t bytes;
            const void *got = dg_plan_sim_buffer(v->sim, kept[round][i].rank,
                                                 (dg_plan_buf_t){kept[round][i].future, 0}, &bytes);
            cr_assert(got && bytes == 8, "future %d of burst %d is missing", i, round);
            memcpy(&res->kept[round][i], got, 8);
        }
    w_destroy(v);
}

Test(deps, reads_older_than_the_retire_window_are_forgotten)
{
    reread_t all, windowed;
    reread_program(0, 0, 400, &all);
    reread_program(64, 64, 400, &windowed);
    cr_assert(!memcmp(all.kept, windowed.kept, sizeof(all.kept)),
              "a retire window changed what the readers saw");
    /* without a window the writer waits for every reader since the last write
     * on its rank; with one, only for those the executor may still run */
    cr_assert_geq(all.writer_deps, 2000, "writer deps without a window: %u", all.writer_deps);
    cr_assert_leq(windowed.writer_deps, 64, "writer deps with a window: %u",
                  windowed.writer_deps);
    /* ten times the reads: history memory grows without a window (+258 kB
     * when written), not with one (+26 kB of pool growth, the same at 50x) */
    cr_assert_gt(all.mem[1], all.mem[0] + 100000, "in use %llu -> %llu without a window",
                 (unsigned long long)all.mem[0], (unsigned long long)all.mem[1]);
    cr_assert_leq(windowed.mem[1], windowed.mem[0] + 65536, "in use %llu -> %llu with a window",
                  (unsigned long long)windowed.mem[0], (unsigned long long)windowed.mem[1]);
}
