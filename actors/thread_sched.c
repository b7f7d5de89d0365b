/* Scheduling attributes of the runtime's threads (thread_sched.h). */
#include "actors/thread_sched.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "actors/worker.h"

/* The kernel's struct sched_attr (include/uapi/linux/sched/types.h), which
 * glibc 2.36 does not declare. */
typedef struct dg_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
} dg_sched_attr_t;

static int get_attr(pid_t tid, dg_sched_attr_t *a)
{
#ifdef SYS_sched_getattr
    memset(a, 0, sizeof(*a));
    return syscall(SYS_sched_getattr, tid, a, (unsigned)sizeof(*a), 0u) == 0 ? 0 : errno;
#else
    (void)tid;
    (void)a;
    return ENOSYS;
#endif
}

int dg_thread_set_slice(uint32_t slice_us)
{
    if (!slice_us)
        return 0;
#ifdef SYS_sched_setattr
    dg_sched_attr_t a;
    int rc = get_attr(0, &a);
    if (rc)
        return rc;
    if (a.sched_policy != SCHED_OTHER && a.sched_policy != SCHED_BATCH)
        return 0; /* a real-time or idle policy the program chose: left alone */
    a.size = sizeof(a);
    a.sched_flags = 0;
    a.sched_runtime = (uint64_t)slice_us * 1000u;
    return syscall(SYS_sched_setattr, 0, &a, 0u) == 0 ? 0 : errno;
#else
    return ENOSYS;
#endif
}

int dg_thread_slice_ns(pid_t tid, uint64_t *ns)
{
    dg_sched_attr_t a;
    int rc = get_attr(tid, &a);
    *ns = rc ? 0 : a.sched_runtime;
    return rc;
}

static _Atomic int spin_yield = 1;

void dg_spin_set_yield(int on)
{
    atomic_store_explicit(&spin_yield, on != 0, memory_order_relaxed);
}

int dg_spin_yields(void)
{
    return atomic_load_explicit(&spin_yield, memory_order_relaxed);
}

void dg_spin_pause(void)
{
    if (atomic_load_explicit(&spin_yield, memory_order_relaxed)) {
        sched_yield();
        return;
    }
    for (int i = 0; i < 64; i++) /* about a microsecond: a yield's cost when nothing else runs */
        dg_cpu_relax();
}

void dg_thread_name(const char *name)
{
    char n[16];
    snprintf(n, sizeof(n), "%s", name);
    pthread_setname_np(pthread_self(), n);
}
