/* The executor's ready queues (core/exec/readyq.c): higher priority first,
 * then the order in which work became ready; priority-0 work through the
 * lock-free ring, prioritised work and the ring's overflow through the heap;
 * several threads pushing and popping at once (every op comes out exactly
 * once). Runs under tools/tsan-tests too. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "core/exec/readyq.h"

static dg_xop_t *ops_new(size_t n)
{
    dg_xop_t *ops = calloc(n, sizeof(*ops));
    cr_assert(ops);
    for (size_t i = 0; i < n; i++) {
        ops[i].kind = DG_PLAN_OP_LAUNCH;
        ops[i].ready_order = i;
    }
    return ops;
}

/* Pops everything; returns how many came out, in out[]. */
static size_t drain(dg_readyq_t *q, dg_xop_t **out, size_t cap)
{
    size_t n = 0;
    for (dg_xop_t *op; n < cap && (op = dg_readyq_pop(q));)
        out[n++] = op;
    return n;
}

/* Priorities 3, -2, 0, 5, 0, 3, -2, 0 ... pushed in ready order: they come out
 * by priority, equal priorities by ready order; with and without the ring. */
static void check_priority_order(size_t fifo_cap)
{
    enum { N = 600 }; /* more than the heap's first 256 slots: it grows */
    static const int32_t prios[] = {3, -2, 0, 5, 0, 3, -2, 0};
    dg_xop_t *ops = ops_new(N);
    dg_readyq_t q;
    cr_assert_eq(dg_readyq_init(&q, fifo_cap), 0);
    cr_assert_not(dg_readyq_busy(&q));
    cr_assert_eq(dg_readyq_depth(&q), 0);
    for (size_t i = 0; i < N; i++) {
        ops[i].u.launch.priority = prios[i % 8];
        cr_assert_eq(dg_readyq_push(&q, &ops[i]), 0);
        cr_assert_eq(dg_readyq_depth(&q), i + 1, "ring %zu: depth after %zu pushes", fifo_cap,
                     i + 1);
    }
    cr_assert(dg_readyq_busy(&q));
    dg_xop_t *out[N + 1];
    cr_assert_eq(drain(&q, out, N + 1), N, "every op comes out once");
    for (size_t i = 1; i < N; i++) {
        int32_t pa = out[i - 1]->u.launch.priority, pb = out[i]->u.launch.priority;
        cr_assert(pa > pb || (pa == pb && out[i - 1]->ready_order < out[i]->ready_order),
                  "ring %zu: op %zu (priority %d, ready %llu) before op %zu (priority %d, "
                  "ready %llu)", fifo_cap, i - 1, pa, (unsigned long long)out[i - 1]->ready_order,
                  i, pb, (unsigned long long)out[i]->ready_order);
    }
    cr_assert_not(dg_readyq_busy(&q));
    dg_readyq_cleanup(&q);
    free(ops);
}

/* The depth hint counts the ring and the heap, down as ops come out. */
Test(readyq, depth_follows_pushes_and_pops)
{
    enum { N = 40 };
    dg_xop_t *ops = ops_new(N);
    dg_readyq_t q;
    cr_assert_eq(dg_readyq_init(&q, 16), 0); /* 16 slots: the rest overflows to the heap */
    for (size_t i = 0; i < N; i++) {
        ops[i].u.launch.priority = i % 3 == 0 ? 2 : 0;
        cr_assert_eq(dg_readyq_push(&q, &ops[i]), 0);
        cr_assert_eq(dg_readyq_depth(&q), i + 1);
    }
    for (size_t left = N; left > 0; left--) {
        cr_assert_not_null(dg_readyq_pop(&q));
        cr_assert_eq(dg_readyq_depth(&q), left - 1);
    }
    cr_assert_null(dg_readyq_pop(&q));
    dg_readyq_cleanup(&q);
    free(ops);
}

Test(readyq, priority_then_ready_order_heap_only)
{
    check_priority_order(0);
}

Test(readyq, priority_then_ready_order_with_ring)
{
    check_priority_order(1024);
}

/* Only LAUNCH ops carry a priority: a ready COPY or SEND is priority 0 and
 * takes the ring, in FIFO order, between prioritised and negative work. */
Test(readyq, other_ops_are_priority_zero)
{
    dg_xop_t *ops = ops_new(3);
    ops[0].kind = DG_PLAN_OP_COPY;
    ops[0].u.launch.priority = 9; /* the union's bytes: not read for a COPY */
    ops[1].u.launch.priority = -1;
    ops[2].u.launch.priority = 1;
    dg_readyq_t q;
    cr_assert_eq(dg_readyq_init(&q, 16), 0);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(dg_readyq_push(&q, &ops[i]), 0);
    cr_assert_eq(dg_readyq_pop(&q), &ops[2]);
    cr_assert_eq(dg_readyq_pop(&q), &ops[0]);
    cr_assert_eq(dg_readyq_pop(&q), &ops[1]);
    cr_assert_null(dg_readyq_pop(&q));
    dg_readyq_cleanup(&q);
    free(ops);
}

/* More priority-0 work than the ring holds spills into the heap: none is
 * lost and the ring's share keeps its FIFO order. (The executor sizes its
 * ring to the window of ops in flight, so it never overflows there.) */
Test(readyq, ring_overflow_goes_to_the_heap)
{
    enum { N = 40 };
    dg_xop_t *ops = ops_new(N);
    dg_readyq_t q;
    cr_assert_eq(dg_readyq_init(&q, 8), 0);
    for (size_t i = 0; i < N; i++)
        cr_assert_eq(dg_readyq_push(&q, &ops[i]), 0);
    dg_xop_t *out[N + 1];
    cr_assert_eq(drain(&q, out, N + 1), N);
    int seen[N] = {0};
    size_t last_ring = 0;
    for (size_t i = 0; i < N; i++) {
        size_t k = (size_t)(out[i] - ops);
        seen[k]++;
        if (k < 8) { /* the ring's ops */
            cr_assert(k == 0 || k > last_ring, "ring op %zu out of order", k);
            last_ring = k;
        }
    }
    for (size_t i = 0; i < N; i++)
        cr_assert_eq(seen[i], 1, "op %zu came out %d times", i, seen[i]);
    dg_readyq_cleanup(&q);
    free(ops);
}

#define THREADS 4
#define PER_THREAD 20000

typedef struct stress {
    dg_readyq_t q;
    dg_xop_t *ops;
    _Atomic size_t popped;
    _Atomic unsigned char *seen;
    _Atomic int push_failed;
} stress_t;

typedef struct worker {
    stress_t *s;
    size_t id;
} worker_t;

static void take_one(stress_t *s)
{
    dg_xop_t *op = dg_readyq_pop(&s->q);
    if (!op) {
        sched_yield();
        return;
    }
    atomic_fetch_add(&s->seen[op - s->ops], 1);
    atomic_fetch_add(&s->popped, 1);
}

/* Each thread pushes its share (a third of it prioritised, some negative)
 * and pops as it goes, then helps drain. */
static void *push_and_pop(void *arg)
{
    worker_t *w = arg;
    stress_t *s = w->s;
    for (size_t i = 0; i < PER_THREAD; i++) {
        dg_xop_t *op = &s->ops[w->id * PER_THREAD + i];
        op->u.launch.priority = i % 3 == 0 ? (int32_t)(i % 7) - 3 : 0;
        if (dg_readyq_push(&s->q, op)) { /* asserts belong to the test's thread */
            atomic_store(&s->push_failed, 1);
            atomic_fetch_add(&s->popped, 1);
        }
        if (i % 2)
            take_one(s);
    }
    while (atomic_load(&s->popped) < (size_t)THREADS * PER_THREAD)
        take_one(s);
    return NULL;
}

Test(readyq, pushes_and_pops_on_threads, .timeout = 120)
{
    stress_t *s = calloc(1, sizeof(*s));
    s->ops = ops_new((size_t)THREADS * PER_THREAD);
    s->seen = calloc((size_t)THREADS * PER_THREAD, 1);
    cr_assert(s->seen);
    cr_assert_eq(dg_readyq_init(&s->q, 256), 0); /* small ring: overflow happens too */
    pthread_t th[THREADS];
    worker_t w[THREADS];
    for (size_t i = 0; i < THREADS; i++) {
        w[i] = (worker_t){s, i};
        cr_assert_eq(pthread_create(&th[i], NULL, push_and_pop, &w[i]), 0);
    }
    for (size_t i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    cr_assert_not(s->push_failed, "a push failed");
    cr_assert_null(dg_readyq_pop(&s->q));
    cr_assert_not(dg_readyq_busy(&s->q));
    for (size_t i = 0; i < (size_t)THREADS * PER_THREAD; i++)
        cr_assert_eq(s->seen[i], 1, "op %zu came out %d times", i, s->seen[i]);
    dg_readyq_cleanup(&s->q);
    free((void *)s->seen);
    free(s->ops);
    free(s);
}
