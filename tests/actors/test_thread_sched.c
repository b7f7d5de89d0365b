/* The worker threads' names and scheduler slice (actors/thread_sched.h):
 * each worker is named dagger-w<index> and asks for the slice the system
 * was given; 0 leaves the kernel's default; a slice the kernel would clamp
 * is refused with the range. Where the kernel keeps no slice for normal
 * threads (before Linux 6.12) the slice checks are skipped, the names are
 * not. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "actors/system.h"
#include "actors/thread_sched.h"
#include "core/base/status_internal.h"
#include "support/thread_sched_probe.h"

#define NWORKERS 2

static dg_act_system_t *start(int slice_us)
{
    dg_act_params_t p = {.rank = 0, .nranks = 1, .num_threads = NWORKERS, .slice_us = slice_us};
    dg_act_system_t *sys = NULL;
    cr_assert_eq(dg_act_system_create(&p, &sys), DAGGER_OK, "%s", dagger_error_detail());
    return sys;
}

Test(thread_sched, workers_are_named_and_ask_for_the_slice)
{
    dg_act_system_t *sys = start(250);
    int keeps = dgt_kernel_keeps_slices();
    dgt_expect_worker_slices(NWORKERS, 250, keeps);
    dg_act_system_destroy(sys);
    if (!keeps)
        cr_skip_test("this kernel keeps no slice for normal threads (Linux < 6.12): names only");
}

Test(thread_sched, zero_leaves_the_kernel_default)
{
    dgt_slice_probe_t fresh = dgt_slice_probe(0);
    cr_assert_eq(fresh.rc, 0);
    cr_assert_eq(fresh.before, fresh.after, "a slice of 0 asked for nothing");
    dg_act_system_t *sys = start(0);
    pid_t tid = dgt_find_thread("dagger-w1");
    cr_assert_neq(tid, 0);
    uint64_t ns = 1;
    cr_assert_eq(dg_thread_slice_ns(tid, &ns), 0);
    cr_expect_eq(ns, fresh.before, "worker 1's slice %llu ns is not a new thread's %llu",
                 (unsigned long long)ns, (unsigned long long)fresh.before);
    dg_act_system_destroy(sys);
}

Test(thread_sched, a_slice_the_kernel_would_clamp_is_refused)
{
    const int bad[] = {-1, 1, DG_SLICE_MIN_US - 1, DG_SLICE_MAX_US + 1};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        dg_act_params_t p = {.rank = 0, .nranks = 1, .num_threads = 1, .slice_us = bad[i]};
        dg_act_system_t *sys = NULL;
        cr_assert_eq(dg_act_system_create(&p, &sys), DAGGER_ERR_INVALID_ARG, "slice %d", bad[i]);
        cr_expect(strstr(dagger_error_detail(), "100 to 100000") != NULL, "%s",
                  dagger_error_detail());
    }
}

Test(thread_sched, names_are_cut_to_what_the_kernel_keeps)
{
    dg_thread_name("a-name-longer-than-fifteen");
    char name[32] = "";
    cr_assert_eq(pthread_getname_np(pthread_self(), name, sizeof(name)), 0);
    cr_expect_str_eq(name, "a-name-longer-t");
}
