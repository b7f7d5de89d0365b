/* Helpers shared by the whole-library multi-rank tests: every rank runs the
 * same test in the same order, so everything here is collective. */
#ifndef DG_TEST_MR_UTIL_H
#define DG_TEST_MR_UTIL_H

#include <criterion/criterion.h>
#include <dagger.h>
#include <stdlib.h>
#include <string.h>

#include "mr_tag.h"

#define MR_OK(call)                                                                   \
    do {                                                                              \
        dagger_status_t st_ = (call);                                                 \
        cr_assert_eq(st_, DAGGER_OK, "%s -> %s: %s", #call, dagger_strerror(st_),     \
                     dagger_error_detail());                                          \
    } while (0)

static inline dagger_runtime_t *mr_init(void)
{
    mr_tag_test();
    dagger_runtime_t *rt = NULL;
    MR_OK(dagger_init(NULL, NULL, NULL, &rt));
    return rt;
}

/* Registers a CPU codelet returning ret bytes (0: none). */
static inline dagger_codelet_t mr_reg(dagger_runtime_t *rt, const char *name, dagger_impl_fn fn,
                                      size_t ret)
{
    dagger_codelet_desc_t d = {.name = name, .cpu = fn, .return_size = ret};
    dagger_codelet_t cl;
    MR_OK(dagger_codelet_register(rt, &d, &cl));
    return cl;
}

/* Submits a task scoped to one rank. */
static inline dagger_status_t mr_spawn_on(dagger_region_t *r, dagger_codelet_t cl, int rank,
                                          int nargs, const dagger_arg_t *args,
                                          dagger_future_t *fut)
{
    dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(rank)};
    return dagger_submit(r, cl, nargs, args, &o, NULL, fut);
}

/* A 2-D chunk of doubles owned by owner, filled with f(i, j) on the owner. */
static inline dagger_chunk_t mr_chunk2(dagger_runtime_t *rt, size_t m, size_t n, int owner,
                                       double (*f)(size_t, size_t))
{
    dagger_chunk_desc_t d = {.dtype = DAGGER_F64, .ndims = 2, .dims = {m, n}, .owner = owner};
    dagger_chunk_t c;
    MR_OK(dagger_chunk_create(rt, &d, &c));
    double *p;
    MR_OK(dagger_chunk_data(rt, c, (void **)&p, NULL));
    if (p && f)
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < m; i++)
                p[i + j * m] = f(i, j);
    return c;
}

/* The contents of a chunk on every rank (bytes bytes into out). */
static inline void mr_gather(dagger_runtime_t *rt, dagger_chunk_t c, void *out, size_t bytes)
{
    void *p;
    MR_OK(dagger_chunk_data(rt, c, &p, NULL));
    if (p)
        memcpy(out, p, bytes);
    MR_OK(dagger_bcast(rt, out, bytes, dagger_chunk_owner(rt, c)));
}

/* st is DAGGER_ERR_DIVERGENCE and the error's detail says text. */
#define MR_DIVERGED(st, me, text)                                                     \
    do {                                                                              \
        cr_assert_eq((st), DAGGER_ERR_DIVERGENCE, "rank %d: %s: %s", (me),            \
                     dagger_strerror(st), dagger_error_detail());                     \
        cr_assert(strstr(dagger_error_detail(), (text)), "rank %d: %s", (me),         \
                  dagger_error_detail());                                             \
    } while (0)

#endif
