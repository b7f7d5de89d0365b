/* The executor's bounded MPMC ring (core/exec/mpmc.c): FIFO order, full and
 * empty answers, wrap-around of the sequence numbers, and producers and
 * consumers on several threads at once (every item popped exactly once, the
 * items of one producer in the order it pushed them). Runs under
 * tools/tsan-tests too. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/exec/mpmc.h"

#define ITEM(i) ((void *)(uintptr_t)((i) + 1)) /* never NULL: NULL means empty */
#define INDEX(p) ((size_t)(uintptr_t)(p) - 1)

Test(mpmc, fifo_order_full_and_empty)
{
    dg_mpmc_t q;
    cr_assert_eq(dg_mpmc_init(&q, 5), 0);
    cr_assert_eq(q.mask + 1, 8, "capacity 5 rounds up to 8");
    cr_assert_null(dg_mpmc_pop(&q), "a new ring is empty");
    for (size_t i = 0; i < 8; i++)
        cr_assert_eq(dg_mpmc_push(&q, ITEM(i)), 0, "push %zu of 8", i);
    cr_assert_eq(dg_mpmc_push(&q, ITEM(8)), -1, "the ninth push finds the ring full");
    for (size_t i = 0; i < 8; i++)
        cr_assert_eq(dg_mpmc_pop(&q), ITEM(i), "pop %zu comes out in push order", i);
    cr_assert_null(dg_mpmc_pop(&q));
    dg_mpmc_cleanup(&q);
    cr_assert_null(q.cells);
}

/* Many laps around a small ring: each cell's sequence number advances by
 * the capacity per lap, interleaved pushes and pops keep the order. */
Test(mpmc, wraps_around_many_times)
{
    dg_mpmc_t q;
    cr_assert_eq(dg_mpmc_init(&q, 4), 0);
    size_t pushed = 0, popped = 0;
    for (int round = 0; round < 1000; round++) {
        size_t n = 1 + (size_t)round % 4;
        while (pushed - popped + n > 4) /* make room for this round */
            cr_assert_eq(dg_mpmc_pop(&q), ITEM(popped++), "round %d", round);
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(dg_mpmc_push(&q, ITEM(pushed++)), 0, "round %d", round);
        for (size_t i = 0; i + (size_t)(round % 2) < n; i++) /* odd rounds leave one in */
            cr_assert_eq(dg_mpmc_pop(&q), ITEM(popped++), "round %d", round);
    }
    while (popped < pushed)
        cr_assert_eq(dg_mpmc_pop(&q), ITEM(popped++));
    cr_assert_null(dg_mpmc_pop(&q));
    dg_mpmc_cleanup(&q);
}

#define PRODUCERS 2
#define CONSUMERS 2
#define PER_PRODUCER 100000

typedef struct stress {
    dg_mpmc_t q;
    _Atomic size_t done;            /* items popped, all consumers */
    _Atomic unsigned char *seen;    /* per item: times popped */
    _Atomic int order_broken;
} stress_t;

typedef struct worker {
    stress_t *s;
    size_t id;
} worker_t;

static void *produce(void *arg)
{
    worker_t *w = arg;
    for (size_t i = 0; i < PER_PRODUCER; i++)
        while (dg_mpmc_push(&w->s->q, ITEM(w->id * PER_PRODUCER + i)))
            sched_yield(); /* full: let a consumer run */
    return NULL;
}

static void *consume(void *arg)
{
    worker_t *w = arg;
    stress_t *s = w->s;
    size_t last[PRODUCERS]; /* per producer: the last index this consumer saw, + 1 */
    for (size_t p = 0; p < PRODUCERS; p++)
        last[p] = 0;
    while (atomic_load(&s->done) < (size_t)PRODUCERS * PER_PRODUCER) {
        void *it = dg_mpmc_pop(&s->q);
        if (!it) {
            sched_yield();
            continue;
        }
        size_t i = INDEX(it), p = i / PER_PRODUCER, k = i % PER_PRODUCER;
        /* one producer's items leave the FIFO in its order, so one consumer
         * sees them in increasing order */
        if (k + 1 <= last[p])
            atomic_store(&s->order_broken, 1);
        last[p] = k + 1;
        atomic_fetch_add(&s->seen[i], 1);
        atomic_fetch_add(&s->done, 1);
    }
    return NULL;
}

Test(mpmc, producers_and_consumers_on_threads, .timeout = 120)
{
    stress_t *s = calloc(1, sizeof(*s));
    s->seen = calloc((size_t)PRODUCERS * PER_PRODUCER, 1);
    cr_assert(s->seen);
    cr_assert_eq(dg_mpmc_init(&s->q, 64), 0); /* small: it fills and empties often */
    pthread_t th[PRODUCERS + CONSUMERS];
    worker_t w[PRODUCERS + CONSUMERS];
    for (size_t i = 0; i < PRODUCERS + CONSUMERS; i++) {
        w[i] = (worker_t){s, i < PRODUCERS ? i : i - PRODUCERS};
        cr_assert_eq(pthread_create(&th[i], NULL, i < PRODUCERS ? produce : consume, &w[i]), 0);
    }
    for (size_t i = 0; i < PRODUCERS + CONSUMERS; i++)
        pthread_join(th[i], NULL);
    cr_assert_null(dg_mpmc_pop(&s->q), "nothing left over");
    for (size_t i = 0; i < (size_t)PRODUCERS * PER_PRODUCER; i++)
        cr_assert_eq(s->seen[i], 1, "item %zu popped %d times", i, s->seen[i]);
    cr_assert_not(s->order_broken, "a consumer saw one producer's items out of order");
    dg_mpmc_cleanup(&s->q);
    free((void *)s->seen);
    free(s);
}
