/* The timer thread and its heap (see timer.h). */
#include "actors/timer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "actors/clock.h"
#include "actors/system.h"
#include "core/base/alloc.h"
#include "core/base/cond.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"

struct dg_timer {
    uint64_t id;
    uint64_t deadline; /* CLOCK_MONOTONIC ns */
    uint64_t period;   /* ns; 0 = one-shot */
    size_t pos;        /* index in the heap */
    int cancelled;     /* cancelled while firing */
    dg_timer_t *next;  /* bucket chain */
    dagger_actor_addr_t from, to;
    uint32_t type;
    size_t size;
    unsigned char payload[];
};

/* ---- heap (caller holds the lock) ---- */

static void heap_set(dg_timers_t *ts, size_t i, dg_timer_t *t)
{
    ts->heap[i] = t;
    t->pos = i;
}

static void heap_up(dg_timers_t *ts, size_t i)
{
    dg_timer_t *t = ts->heap[i];
    while (i > 0 && ts->heap[(i - 1) / 2]->deadline > t->deadline) {
        heap_set(ts, i, ts->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(ts, i, t);
}

static void heap_down(dg_timers_t *ts, size_t i)
{
    dg_timer_t *t = ts->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= ts->n)
            break;
        if (c + 1 < ts->n && ts->heap[c + 1]->deadline < ts->heap[c]->deadline)
            c++;
        if (ts->heap[c]->deadline >= t->deadline)
            break;
        heap_set(ts, i, ts->heap[c]);
        i = c;
    }
    heap_set(ts, i, t);
}

static int heap_push(dg_timers_t *ts, dg_timer_t *t)
{
    if (ts->n == ts->cap) {
        size_t cap = ts->cap ? ts->cap * 2 : 16;
        dg_timer_t **h = dg_realloc(ts->heap, cap * sizeof(*h));
        if (!h)
            return -1;
        ts->heap = h;
        ts->cap = cap;
    }
    heap_set(ts, ts->n++, t);
    heap_up(ts, t->pos);
    return 0;
}

static void heap_remove(dg_timers_t *ts, dg_timer_t *t)
{
    size_t i = t->pos;
    dg_timer_t *last = ts->heap[--ts->n];
    if (i == ts->n)
        return;
    heap_set(ts, i, last);
    heap_up(ts, i);
    heap_down(ts, last->pos);
}

/* ---- id map (caller holds the lock) ---- */

static dg_timer_t **find(dg_timers_t *ts, uint64_t id)
{
    dg_timer_t **p = &ts->bucket[id % DG_TIMER_BUCKETS];
    while (*p && (*p)->id != id)
        p = &(*p)->next;
    return p;
}

static void unlink_id(dg_timers_t *ts, dg_timer_t *t)
{
    dg_timer_t **p = find(ts, t->id);
    DG_ASSERT(*p == t);
    *p = t->next;
}

/* ---- the thread ---- */

/* Sends one firing of t without the lock held; 0 if the timer lives on. */
static int fire(dg_timers_t *ts, dg_timer_t *t)
{
    dagger_status_t st = dg_act_send(ts->sys, t->from, t->to, t->type, 0, 0, t->payload, t->size,
                                     "timer");
    if (st == DAGGER_OK)
        return 0;
    dg_log(st == DAGGER_ERR_ACTOR_STOPPED ? DG_LOG_DEBUG : DG_LOG_WARN,
           "timer %llu ends: %s (%s)", (unsigned long long)t->id, dagger_strerror(st),
           dagger_error_detail());
    return -1;
}

/* After a firing: re-arm a periodic timer or drop the timer. */
static void after_fire(dg_timers_t *ts, dg_timer_t *t, int failed, uint64_t now)
{
    ts->firing = NULL;
    pthread_cond_broadcast(&ts->fired);
    if (!t->cancelled && !failed && t->period) {
        t->deadline += t->period;
        if (t->deadline < now) /* fell behind: skip the missed periods */
            t->deadline = now + t->period;
        if (heap_push(ts, t) == 0)
            return;
        dg_log(DG_LOG_ERROR, "timer %llu ends: no memory to re-arm it", (unsigned long long)t->id);
    }
    if (!t->cancelled)
        unlink_id(ts, t);
    free(t);
}

static void *timer_main(void *arg)
{
    dg_timers_t *ts = arg;
    pthread_mutex_lock(&ts->lock);
    while (!ts->quit) {
        if (ts->n == 0) { /* nothing to do: sleep until a timer is added */
            pthread_cond_wait(&ts->cond, &ts->lock);
            continue;
        }
        uint64_t now = dg_now_ns();
        dg_timer_t *t = ts->heap[0];
        if (t->deadline > now) {
            dg_cond_wait_until(&ts->cond, &ts->lock, t->deadline);
            continue;
        }
        heap_remove(ts, t);
        ts->firing = t;
        pthread_mutex_unlock(&ts->lock);
        int failed = fire(ts, t);
        pthread_mutex_lock(&ts->lock);
        after_fire(ts, t, failed, dg_now_ns());
    }
    pthread_mutex_unlock(&ts->lock);
    return NULL;
}

dagger_status_t dg_timers_start(dg_timers_t *ts, struct dg_act_system *sys)
{
    memset(ts, 0, sizeof(*ts));
    ts->sys = sys;
    ts->next_id = 1;
    pthread_mutex_init(&ts->lock, NULL);
    dg_cond_init_monotonic(&ts->cond);
    pthread_cond_init(&ts->fired, NULL);
    int rc = pthread_create(&ts->thread, NULL, timer_main, ts);
    if (rc) {
        pthread_cond_destroy(&ts->fired);
        pthread_cond_destroy(&ts->cond);
        pthread_mutex_destroy(&ts->lock);
        return dg_error(DAGGER_ERR_SYSTEM, "cannot start the timer thread: %s", strerror(rc));
    }
    return DAGGER_OK;
}

void dg_timers_stop(dg_timers_t *ts)
{
    pthread_mutex_lock(&ts->lock);
    ts->quit = 1;
    pthread_cond_signal(&ts->cond);
    pthread_mutex_unlock(&ts->lock);
    pthread_join(ts->thread, NULL);
    for (size_t i = 0; i < ts->n; i++)
        free(ts->heap[i]);
    free(ts->heap);
    pthread_cond_destroy(&ts->fired);
    pthread_cond_destroy(&ts->cond);
    pthread_mutex_destroy(&ts->lock);
}

dagger_status_t dg_timers_add(dg_timers_t *ts, dagger_actor_addr_t from, dagger_actor_addr_t to,
                              uint32_t type, const void *payload, size_t size, uint64_t delay_ns,
                              uint64_t period_ns, uint64_t *id)
{
    dg_timer_t *t = dg_malloc(sizeof(*t) + size);
    if (!t)
        return dg_error(DAGGER_ERR_NO_MEMORY, "no memory for a timer with a %zu-byte payload", size);
    uint64_t now = dg_now_ns();
    t->deadline = delay_ns > UINT64_MAX - now ? UINT64_MAX : now + delay_ns;
    t->period = period_ns;
    t->cancelled = 0;
    t->from = from;
    t->to = to;
    t->type = type;
    t->size = size;
    if (size)
        memcpy(t->payload, payload, size);
    pthread_mutex_lock(&ts->lock);
    t->id = ts->next_id++;
    if (heap_push(ts, t)) {
        pthread_mutex_unlock(&ts->lock);
        free(t);
        return dg_error(DAGGER_ERR_NO_MEMORY, "no memory for the timer heap");
    }
    dg_timer_t **slot = find(ts, t->id);
    t->next = NULL;
    *slot = t;
    if (t->pos == 0) /* new earliest deadline: the thread must re-plan its sleep */
        pthread_cond_signal(&ts->cond);
    *id = t->id; /* before unlocking: a due timer may fire and be freed at once */
    pthread_mutex_unlock(&ts->lock);
    return DAGGER_OK;
}

dagger_status_t dg_timers_cancel(dg_timers_t *ts, uint64_t id)
{
    pthread_mutex_lock(&ts->lock);
    dg_timer_t **p = find(ts, id), *t = *p;
    if (!t) {
        pthread_mutex_unlock(&ts->lock);
        return dg_error(DAGGER_ERR_NOT_FOUND,
                        "timer %llu is not pending (it fired, ended or was cancelled)",
                        (unsigned long long)id);
    }
    *p = t->next;
    if (t == ts->firing) {
        t->cancelled = 1; /* the timer thread frees it after this firing */
        while (ts->firing == t)
            pthread_cond_wait(&ts->fired, &ts->lock);
    } else {
        heap_remove(ts, t);
        free(t);
    }
    pthread_mutex_unlock(&ts->lock);
    return DAGGER_OK;
}
