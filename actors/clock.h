/* Monotonic time and deadlines for the waits of the actor kernel. */
#ifndef DG_ACT_CLOCK_H
#define DG_ACT_CLOCK_H

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

#endif
