/* A condition variable whose timed waits count on CLOCK_MONOTONIC, so that a
 * change of the wall clock neither ends a wait early nor stretches it: every
 * timed wait of the runtime computes its deadline on that clock. */
#ifndef DG_BASE_COND_H
#define DG_BASE_COND_H

#include <pthread.h>
#include <time.h>

static inline int dg_cond_init_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(c, &attr);
    pthread_condattr_destroy(&attr);
    return rc;
}

#endif
