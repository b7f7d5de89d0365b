/* The allocation-failure sweep (Argobots' leak check is the model): for
 * k = 1, 2, ... the k-th allocation the calling thread makes fails
 * (core/base/alloc.h) until the call under test succeeds. Every failing call must
 * return DAGGER_ERR_NO_MEMORY with a detail and free what it took (under
 * ASan each attempt ends with a leak check). Used by
 * tests/runtime/test_alloc_fail.c and the per-folder sweeps (tests/core/...). */
#ifndef DG_TEST_ALLOC_SWEEP_H
#define DG_TEST_ALLOC_SWEEP_H

#include <criterion/criterion.h>
#include <dagger.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"

#if defined(__SANITIZE_ADDRESS__)
#define DG_HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DG_HAVE_LSAN 1
#endif
#endif
#ifdef DG_HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#endif

/* 1 if memory leaked since the last check (always 0 without ASan). */
static inline int leaked(void)
{
#ifdef DG_HAVE_LSAN
    return __lsan_do_recoverable_leak_check();
#else
    return 0;
#endif
}

typedef struct sweep {
    const char *what;
    dagger_status_t (*attempt)(void *ctx); /* the call under test */
    void (*undo)(void *ctx);               /* releases what a successful attempt made */
    void *ctx;
} sweep_t;

#define SWEEP_LIMIT 5000

/* Fails allocation k = 1, 2, ... of the attempt until it succeeds; returns
 * the number of allocations the successful attempt made. To debug one site:
 * AF_START=k starts the sweep there, AF_DEBUG=1 prints every attempt. */
static inline long run_sweep(const sweep_t *s)
{
    long first = getenv("AF_START") ? atol(getenv("AF_START")) : 1;
    for (long k = first; k <= SWEEP_LIMIT; k++) {
        dg_alloc_fail_at(k);
        dagger_status_t st = s->attempt(s->ctx);
        int fired = dg_alloc_failed();
        if (getenv("AF_DEBUG"))
            fprintf(stderr, "%s k=%ld st=%d fired=%d\n", s->what, k, st, fired);
        dg_alloc_fail_at(0);
        if (!fired) {
            cr_assert_eq(st, DAGGER_OK, "%s without a failed allocation: %s (%s)", s->what,
                         dagger_strerror(st), dagger_error_detail());
            s->undo(s->ctx);
            cr_assert_not(leaked(), "%s leaked after a successful attempt", s->what);
            cr_log_info("%s: %ld allocation sites, each failed once", s->what, k - 1);
            fprintf(stderr, "alloc sweep: %s: %ld allocations, each failed once\n", s->what, k - 1);
            return k - 1;
        }
        if (st == DAGGER_OK) /* the failure was absorbed (a fallback path) */
            s->undo(s->ctx);
        else
            cr_expect_eq(st, DAGGER_ERR_NO_MEMORY, "%s: allocation %ld failed and it returned %s "
                         "(%s)", s->what, k, dagger_strerror(st), dagger_error_detail());
        cr_assert(st == DAGGER_OK || dagger_error_detail()[0], "%s: no detail", s->what);
        cr_assert_not(leaked(), "%s leaked what it took when allocation %ld failed", s->what, k);
    }
    cr_assert_fail("%s still failing after %d allocations", s->what, SWEEP_LIMIT);
    return -1;
}

static inline void undo_nothing(void *ctx)
{
    (void)ctx;
}

/* The runtime a sweep runs on (Test .init = init_rt, .fini = fini_rt): each
 * attempt runs on the same runtime, which must stay usable. */
static dagger_runtime_t *RT;

static inline void init_rt(void)
{
    dagger_params_t p = {.num_threads = 2, .no_bind = 1};
    cr_assert_eq(dagger_init(NULL, NULL, &p, &RT), DAGGER_OK, "%s", dagger_error_detail());
}

static inline void fini_rt(void)
{
    cr_expect_eq(dagger_finalize(RT), DAGGER_OK, "%s", dagger_error_detail());
    cr_expect_not(leaked(), "the runtime leaked by the end");
}

/* Calls that run their tasks on this thread too: a task's own buffer that
 * cannot be had fails the task (DAGGER_ERR_TASK_FAILED, "out of memory"):
 * for the sweep that is the call running out of memory. */
static inline dagger_status_t oom_in_task(dagger_status_t st)
{
    int oom = st == DAGGER_ERR_TASK_FAILED && strstr(dagger_error_detail(), "out of memory");
    return oom ? DAGGER_ERR_NO_MEMORY : st;
}

#endif
