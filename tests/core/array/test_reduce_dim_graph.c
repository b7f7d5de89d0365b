/* dagger_array_reduce_dim's task graph, read back from a trace of the run:
 * the blocks along the reduced dimension are reduced by tasks that do not
 * depend on each other (no chain through the output tile), and one task per
 * run of at most DAGGER_MAX_ARGS - 2 results stores them into the tile, the
 * runs in order. Values are tested in tests/multirank/mr_array_reduce_dim.c. */
#include <stdlib.h>
#include <string.h>

#include "core/trace/tmpdir.h"
#include "model.h"
#include "multirank/array_util.h"

static char dir[64];

static void cleanup(void)
{
    if (dir[0])
        tmpdir_remove(dir);
}

TestSuite(reduce_dim_graph, .fini = cleanup);

/* Row sums of a 64 x (8 nblk) matrix in 64 x 8 blocks (nblk blocks along
 * dimension 1) into one output tile, traced into dir. */
static void traced_row_sums(size_t nblk)
{
    cr_assert(tmpdir_make(dir, "dg-reduce-dim-graph"));
    setenv("DAGGER_TRACE", dir, 1);
    dagger_runtime_t *rt;
    AR_OK(dagger_init(NULL, NULL, NULL, &rt));
    dagger_array_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {64, 8 * nblk},
                             .block = {64, 8}};
    dagger_array_desc_t od = {.dtype = DAGGER_F64, .ndims = 2, .dims = {64, 1}, .block = {64, 1}};
    dagger_array_t *a, *out;
    AR_OK(dagger_array_rand(rt, &d, 3, &a));
    AR_OK(dagger_array_zeros(rt, &od, &out));
    AR_OK(dagger_array_reduce_dim(NULL, DAGGER_OP_ADD, a, 1, out));
    AR_OK(dagger_array_destroy(out));
    AR_OK(dagger_array_destroy(a));
    AR_OK(dagger_finalize(rt));
    unsetenv("DAGGER_TRACE");
}

static int named(const tr_trace_t *tr, uint64_t id, const char *name)
{
    return strcmp(tr_codelet_name(tr, tr->tasks[id].codelet), name) == 0;
}

/* The tasks of the reduction: the block reductions (parts) and the tasks
 * that store their results (combs); each part depends on no reduce_dim
 * task, and the c-th comb on the parts of its run and on the comb before. */
static void check_graph(size_t nblk, size_t ncomb)
{
    tr_trace_t tr;
    cr_assert_eq(tr_load(&tr, dir), 0, "loading the trace: %s", tr.error);
    cr_assert(tr.deps_recorded, "the trace has the dependencies");
    uint64_t parts[64], combs[4];
    size_t np = 0, nc = 0;
    for (uint64_t id = 1; id < tr.ntasks; id++) {
        if (!tr.tasks[id].planned)
            continue;
        if (named(&tr, id, "dagger.array.reduce_dim_part") && np < 64)
            parts[np++] = id;
        else if (named(&tr, id, "dagger.array.reduce_dim_comb") && nc < 4)
            combs[nc++] = id;
        else
            cr_assert(!named(&tr, id, "dagger.array.reduce_dim"), "a chain task (%llu)",
                      (unsigned long long)id);
    }
    cr_assert_eq(np, nblk, "%zu block reductions, expected %zu", np, nblk);
    cr_assert_eq(nc, ncomb, "%zu storing tasks, expected %zu", nc, ncomb);
    for (size_t i = 0; i < np; i++) {
        const tr_task_t *t = &tr.tasks[parts[i]];
        const uint64_t *dep = tr_task_deps(&tr, t);
        for (uint32_t k = 0; k < t->ndeps; k++)
            cr_assert(!named(&tr, dep[k], "dagger.array.reduce_dim_part") &&
                          !named(&tr, dep[k], "dagger.array.reduce_dim_comb"),
                      "block reduction %llu waits for reduce_dim task %llu",
                      (unsigned long long)parts[i], (unsigned long long)dep[k]);
    }
    const size_t run = DAGGER_MAX_ARGS - 2;
    for (size_t c = 0; c < nc; c++) {
        const tr_task_t *t = &tr.tasks[combs[c]];
        const uint64_t *dep = tr_task_deps(&tr, t);
        size_t lo = c * run, hi = lo + run < np ? lo + run : np, seen = 0;
        int after_prev = c == 0;
        for (uint32_t k = 0; k < t->ndeps; k++) {
            for (size_t i = lo; i < hi; i++)
                seen += dep[k] == parts[i];
            after_prev |= c > 0 && dep[k] == combs[c - 1];
        }
        cr_assert_eq(seen, hi - lo, "storing task %zu waits for %zu of its %zu results", c, seen,
                     hi - lo);
        cr_assert(after_prev, "storing task %zu does not follow the one before", c);
    }
    tr_free(&tr);
}

Test(reduce_dim_graph, blocks_along_the_dimension_are_reduced_independently)
{
    traced_row_sums(8);
    check_graph(8, 1);
}

Test(reduce_dim_graph, more_results_than_a_task_takes_go_in_runs)
{
    traced_row_sums(20);
    check_graph(20, 2);
}
