/* Monotonic time and deadlines for the waits of the actor kernel. */
#ifndef DG_ACT_CLOCK_H
#define DG_ACT_CLOCK_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t dg_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline struct timespec dg_timespec_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    return ts;
}

/* The absolute deadline (CLOCK_MONOTONIC ns) of a timeout in microseconds;
 * UINT64_MAX for a negative timeout (wait forever). */
static inline uint64_t dg_deadline_ns(int64_t timeout_us)
{
    if (timeout_us < 0)
        return UINT64_MAX;
    uint64_t now = dg_now_ns(), add = (uint64_t)timeout_us * 1000ull;
    return add > UINT64_MAX - now ? UINT64_MAX : now + add;
}

/* One wait on cond (created with CLOCK_MONOTONIC) until deadline_ns, or
 * without limit for UINT64_MAX. Returns ETIMEDOUT once the deadline passed;
 * callers loop on their condition as usual. */
static inline int dg_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *lock, uint64_t deadline_ns)
{
    if (deadline_ns == UINT64_MAX)
        return pthread_cond_wait(cond, lock);
    struct timespec ts = dg_timespec_ns(deadline_ns);
    return pthread_cond_timedwait(cond, lock, &ts);
}

#endif
