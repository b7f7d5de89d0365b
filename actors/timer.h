/* Timers: one thread sleeps until the earliest deadline (a min-heap), then
 * sends the timer's message. It blocks on a condition variable when no timer
 * is pending, so an idle runtime costs nothing. Ids are handles: cancelling
 * an id that is no longer pending is an error, never a dereference. */
#ifndef DG_ACT_TIMER_H
#define DG_ACT_TIMER_H

#include <dagger/actor.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct dg_act_system;
typedef struct dg_timer dg_timer_t;

#define DG_TIMER_BUCKETS 256

typedef struct dg_timers {
    struct dg_act_system *sys;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;      /* wakes the timer thread */
    pthread_cond_t fired;     /* a firing finished (for cancel) */
    int quit;
    dg_timer_t **heap; /* min-heap on deadline */
    size_t n, cap;
    dg_timer_t *bucket[DG_TIMER_BUCKETS]; /* id -> timer */
    uint64_t next_id;
    dg_timer_t *firing; /* the timer being sent right now, outside the lock */
} dg_timers_t;

/* Starts the timer thread. DAGGER_ERR_SYSTEM when it cannot. */
dagger_status_t dg_timers_start(dg_timers_t *ts, struct dg_act_system *sys);
/* Stops the thread and frees every pending timer. */
void dg_timers_stop(dg_timers_t *ts);

/* Adds a timer; its message (checked by the caller) is copied. */
dagger_status_t dg_timers_add(dg_timers_t *ts, dagger_actor_addr_t from, dagger_actor_addr_t to,
                              uint32_t type, const void *payload, size_t size, uint64_t delay_ns,
                              uint64_t period_ns, uint64_t *id);

/* After it returns the timer sends nothing more (a firing in progress is
 * waited for). DAGGER_ERR_NOT_FOUND when id is not pending. */
dagger_status_t dg_timers_cancel(dg_timers_t *ts, uint64_t id);

#endif
