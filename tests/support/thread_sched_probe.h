/* Looking at the runtime's threads from a test: find one by its name (the
 * workers name themselves dagger-w<index>, actors/thread_sched.h) and ask
 * whether this kernel keeps the scheduler slice a normal thread asks for
 * (Linux 6.12 and later). Header-only; Criterion asserts. */
#ifndef DG_TEST_THREAD_SCHED_PROBE_H
#define DG_TEST_THREAD_SCHED_PROBE_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actors/thread_sched.h"

/* The thread id of this process's thread named name, or 0 after 10 s
 * without one (a worker names itself as it starts). */
static inline pid_t dgt_find_thread(const char *name)
{
    for (int tries = 0; tries < 1000; tries++) {
        DIR *d = opendir("/proc/self/task");
        cr_assert_not_null(d);
        pid_t found = 0;
        for (struct dirent *e; !found && (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            char path[300], comm[32] = "";
            snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
            FILE *f = fopen(path, "r");
            if (!f)
                continue;
            if (fgets(comm, sizeof(comm), f))
                comm[strcspn(comm, "\n")] = 0;
            fclose(f);
            if (!strcmp(comm, name))
                found = (pid_t)atoi(e->d_name);
        }
        closedir(d);
        if (found)
            return found;
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    return 0;
}

/* A new thread's slice before and after it asks for slice_us. */
typedef struct dgt_slice_probe {
    uint32_t slice_us;
    uint64_t before, after;
    int rc;
} dgt_slice_probe_t;

static inline void *dgt_slice_probe_main(void *arg)
{
    dgt_slice_probe_t *p = arg;
    dg_thread_slice_ns(0, &p->before);
    p->rc = dg_thread_set_slice(p->slice_us);
    dg_thread_slice_ns(0, &p->after);
    return NULL;
}

static inline dgt_slice_probe_t dgt_slice_probe(uint32_t slice_us)
{
    dgt_slice_probe_t p = {.slice_us = slice_us};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, dgt_slice_probe_main, &p), 0);
    pthread_join(t, NULL);
    return p;
}

/* Whether this kernel keeps a slice asked for by a normal thread. */
static inline int dgt_kernel_keeps_slices(void)
{
    dgt_slice_probe_t p = dgt_slice_probe(DG_SLICE_MIN_US);
    cr_assert_eq(p.rc, 0, "sched_setattr refused a %d us slice: %s", DG_SLICE_MIN_US,
                 strerror(p.rc));
    return p.after == DG_SLICE_MIN_US * 1000ull;
}

/* Threads dagger-w0 .. dagger-w<n-1> exist and, where the kernel keeps
 * slices (keeps), each has slice_us. */
static inline void dgt_expect_worker_slices(int n, uint32_t slice_us, int keeps)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "dagger-w%d", i);
        pid_t tid = dgt_find_thread(name);
        cr_assert_neq(tid, 0, "no thread named %s", name);
        uint64_t ns = 0;
        cr_assert_eq(dg_thread_slice_ns(tid, &ns), 0);
        if (keeps)
            cr_expect_eq(ns, slice_us * 1000ull, "%s's slice is %llu ns, not %u us", name,
                         (unsigned long long)ns, slice_us);
    }
}

#endif
