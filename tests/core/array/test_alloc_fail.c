/* The allocation-failure sweep (tests/support/alloc_sweep.h) over the array
 * library's create/destroy pairs that tests/runtime/test_alloc_fail.c does
 * not cover: every constructor (zeros, full, ones, randn, from_fn,
 * from_host, similar) with dagger_array_destroy, the QR factor array, the
 * name registries of index functions and stencil kernels, and collecting an
 * array to the host. Every failure must be DAGGER_ERR_NO_MEMORY (or a task's
 * "out of memory", which is the same thing for a call that runs tasks on
 * this thread), leave *out NULL and leak nothing (ASan build: each attempt
 * ends with a leak check). */
#include <criterion/criterion.h>
#include <dagger.h>
#include <string.h>

#include "support/alloc_sweep.h"

static const dagger_array_desc_t desc = {.dtype = DAGGER_F64, .ndims = 2, .dims = {8, 6},
                                         .block = {4, 4}};
static double host[48];
static dagger_index_fn_id_t the_fn;
static dagger_array_t *made, *base;

enum { ZEROS, FULL, ONES, RANDN, FROM_FN, FROM_HOST, SIMILAR, QR_T };

static dagger_status_t make(int how)
{
    switch (how) {
    case ZEROS: return dagger_array_zeros(RT, &desc, &made);
    case FULL: return dagger_array_full(RT, &desc, 2.5, &made);
    case ONES: return dagger_array_ones(RT, &desc, &made);
    case RANDN: return dagger_array_randn(RT, &desc, 11, &made);
    case FROM_FN: return dagger_array_from_fn(RT, &desc, the_fn, "ab", 2, &made);
    case FROM_HOST: return dagger_array_from_host(RT, &desc, host, &made);
    case SIMILAR: return dagger_array_similar(base, &made);
    default: return dagger_linalg_qr_t_create(base, &made);
    }
}

static dagger_status_t try_make(void *ctx)
{
    made = (dagger_array_t *)&desc; /* must come back NULL on failure */
    dagger_status_t st = oom_in_task(make(*(int *)ctx));
    if (st != DAGGER_OK)
        cr_expect_null(made, "a failed constructor leaves *out NULL");
    return st;
}

static void undo_make(void *ctx)
{
    (void)ctx;
    cr_assert_eq(dagger_array_destroy(made), DAGGER_OK);
}

static double index_sum(const size_t index[], int ndims, const void *args)
{
    (void)args;
    double s = 0;
    for (int k = 0; k < ndims; k++)
        s += (double)index[k];
    return s;
}

static dagger_status_t try_index_fn(void *ctx)
{
    (void)ctx;
    return dagger_index_fn_register(RT, "af.index_sum", index_sum, &the_fn);
}

static double window_first(const dagger_window_t *in, int nin, const size_t index[],
                           const void *args)
{
    (void)in, (void)nin, (void)index, (void)args;
    return 1;
}

static dagger_status_t try_kernel(void *ctx)
{
    dagger_stencil_kernel_t k;
    (void)ctx;
    return dagger_stencil_kernel_register(RT, "af.window_first", window_first, &k);
}

static dagger_status_t try_collect(void *ctx)
{
    static double out[48];
    (void)ctx;
    return oom_in_task(dagger_array_collect(base, out));
}

Test(array_alloc_fail, constructors_and_registries, .init = init_rt, .fini = fini_rt,
     .timeout = 600)
{
    for (int i = 0; i < 48; i++)
        host[i] = i;
    sweep_t fn = {"dagger_index_fn_register", try_index_fn, undo_nothing, NULL};
    run_sweep(&fn);
    sweep_t kern = {"dagger_stencil_kernel_register", try_kernel, undo_nothing, NULL};
    run_sweep(&kern);
    static const char *names[] = {"dagger_array_zeros", "dagger_array_full", "dagger_array_ones",
                                  "dagger_array_randn", "dagger_array_from_fn",
                                  "dagger_array_from_host"};
    static int hows[] = {ZEROS, FULL, ONES, RANDN, FROM_FN, FROM_HOST, SIMILAR, QR_T};
    for (int i = ZEROS; i <= FROM_HOST; i++) {
        sweep_t s = {names[i], try_make, undo_make, &hows[i]};
        run_sweep(&s);
    }
    cr_assert_eq(dagger_array_rand(RT, &desc, 3, &base), DAGGER_OK);
    sweep_t similar = {"dagger_array_similar", try_make, undo_make, &hows[SIMILAR]};
    run_sweep(&similar);
    sweep_t collect = {"dagger_array_collect", try_collect, undo_nothing, NULL};
    run_sweep(&collect);
    cr_assert_eq(dagger_array_destroy(base), DAGGER_OK);
    dagger_array_desc_t sq = {.dtype = DAGGER_F64, .ndims = 2, .dims = {8, 8}, .block = {4, 4}};
    cr_assert_eq(dagger_array_rand(RT, &sq, 3, &base), DAGGER_OK);
    sweep_t qr = {"dagger_linalg_qr_t_create", try_make, undo_make, &hows[QR_T]};
    run_sweep(&qr);
    cr_assert_eq(dagger_array_destroy(base), DAGGER_OK);
}
