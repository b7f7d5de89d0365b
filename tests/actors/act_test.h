/* Helpers for the actor kernel's unit tests: a system with a few workers,
 * type registration, and bounded waits (no test may hang). */
#ifndef DG_ACT_TEST_H
#define DG_ACT_TEST_H

#include <criterion/criterion.h>
#include <sched.h>
#include <string.h>
#include <stdatomic.h>
#include <time.h>

#include "actors/msgtype.h"
#include "actors/system.h"
#include "core/base/handles.h"
#include "core/runtime/runtime.h"

static inline dg_act_system_t *act_test_system_ranked(int nthreads, void *owner, int rank, int nranks)
{
    dg_act_params_t p = {.rank = rank, .nranks = nranks, .num_threads = nthreads, .bind = 0,
                         .owner = owner};
    dg_act_system_t *sys = NULL;
    dagger_status_t st = dg_act_system_create(&p, &sys);
    cr_assert_eq(st, DAGGER_OK, "dg_act_system_create: %s", dagger_error_detail());
    return sys;
}

static inline dg_act_system_t *act_test_system_owned(int nthreads, void *owner)
{
    return act_test_system_ranked(nthreads, owner, 0, 1);
}

static inline dg_act_system_t *act_test_system(int nthreads)
{
    return act_test_system_owned(nthreads, NULL);
}

/* A runtime handle over a kernel-level system, so the public dagger_* actor
 * calls can be tested without the rest of the runtime (and its layers). */
static inline dg_act_system_t *act_test_runtime_ranked(dagger_runtime_t *rt, int nthreads, int rank,
                                                      int nranks)
{
    memset(rt, 0, sizeof(*rt));
    rt->rank = rank;
    rt->nranks = nranks;
    rt->actors = act_test_system_ranked(nthreads, rt, rank, nranks);
    rt->num_threads = dg_act_system_num_workers(rt->actors);
    cr_assert_eq(dg_handle_add(rt), 0);
    return rt->actors;
}

static inline dg_act_system_t *act_test_runtime(dagger_runtime_t *rt, int nthreads)
{
    return act_test_runtime_ranked(rt, nthreads, 0, 1);
}

static inline void act_test_runtime_done(dagger_runtime_t *rt)
{
    dg_handle_remove(rt);
    dg_act_system_destroy(rt->actors);
    rt->actors = NULL;
}

static inline uint32_t act_test_type(dg_act_system_t *sys, const char *name,
                                     dagger_msg_encoding_t enc, size_t size)
{
    dagger_msg_type_desc_t d = {name, enc, size};
    uint32_t id = 0;
    dagger_status_t st = dg_msgtypes_register(dg_act_system_types(sys), &d, &id);
    cr_assert_eq(st, DAGGER_OK, "register %s: %s", name, dagger_error_detail());
    return id;
}

static inline double act_test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void act_test_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits (up to 10 s) until *counter reaches at least want. */
#define ACT_WAIT_FOR(counter, want)                                                   \
    do {                                                                              \
        double t0_ = act_test_now();                                                  \
        while ((long long)atomic_load(counter) < (long long)(want) &&                 \
               act_test_now() - t0_ < 10.0)                                           \
            act_test_sleep_ms(1);                                                     \
        cr_assert_geq((long long)atomic_load(counter), (long long)(want),             \
                      "timed out waiting for %s to reach %lld", #counter,             \
                      (long long)(want));                                             \
    } while (0)

#endif
