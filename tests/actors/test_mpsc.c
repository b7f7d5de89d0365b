/* The mailbox queue: FIFO, empty/busy states, and no lost or duplicated
 * node under contention. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "actors/mpsc.h"

typedef struct item {
    dg_mpsc_node_t node;
    int producer;
    long seq;
} item_t;

static item_t *pop_item(dg_mpsc_t *q, dg_mpsc_pop_t *r)
{
    dg_mpsc_node_t *n = NULL;
    *r = dg_mpsc_pop(q, &n);
    return *r == DG_MPSC_ITEM ? DG_CONTAINER_OF(n, item_t, node) : NULL;
}

Test(mpsc, fifo_and_empty_single_thread)
{
    dg_mpsc_t q;
    dg_mpsc_init(&q);
    dg_mpsc_pop_t r;
    cr_assert(dg_mpsc_is_empty(&q));
    cr_assert_null(pop_item(&q, &r));
    cr_assert_eq(r, DG_MPSC_EMPTY);
    item_t items[100];
    for (int round = 0; round < 3; round++) { /* the stub goes round and round */
        for (int i = 0; i < 100; i++) {
            items[i].seq = i;
            dg_mpsc_push(&q, &items[i].node);
            cr_assert_not(dg_mpsc_is_empty(&q));
        }
        for (int i = 0; i < 100; i++) {
            item_t *it = pop_item(&q, &r);
            cr_assert_not_null(it, "pop %d of round %d: result %d", i, round, r);
            cr_assert_eq(it->seq, i);
        }
        cr_assert(dg_mpsc_is_empty(&q));
        cr_assert_null(pop_item(&q, &r));
        cr_assert_eq(r, DG_MPSC_EMPTY);
    }
}

/* A producer stopped between its two steps: the consumer must say BUSY (not
 * EMPTY, or an actor would be put to sleep with mail pending), must not skip
 * anything, and must deliver both in order once the link lands. (The node
 * before the half-pushed one cannot come out either: it is the last linked
 * node and the queue cannot yet tell what follows it.) */
Test(mpsc, half_done_push_is_busy_not_empty)
{
    dg_mpsc_t q;
    dg_mpsc_init(&q);
    item_t a = {.seq = 1}, b = {.seq = 2};
    dg_mpsc_push(&q, &a.node);
    atomic_store(&b.node.next, NULL);
    dg_mpsc_node_t *prev = atomic_exchange(&q.in, &b.node); /* step 1 only */
    dg_mpsc_pop_t r;
    cr_assert_null(pop_item(&q, &r));
    cr_assert_eq(r, DG_MPSC_BUSY);
    cr_assert_not(dg_mpsc_is_empty(&q));
    atomic_store(&prev->next, &b.node); /* step 2 */
    cr_assert_eq(pop_item(&q, &r), &a);
    cr_assert_eq(pop_item(&q, &r), &b);
    cr_assert_null(pop_item(&q, &r));
    cr_assert_eq(r, DG_MPSC_EMPTY);
}

#define PRODUCERS 4
#define PER_PRODUCER 100000

typedef struct {
    dg_mpsc_t *q;
    item_t *items;
    int producer;
} producer_arg_t;

static void *producer(void *p)
{
    producer_arg_t *a = p;
    for (long i = 0; i < PER_PRODUCER; i++) {
        a->items[i].producer = a->producer;
        a->items[i].seq = i;
        dg_mpsc_push(a->q, &a->items[i].node);
    }
    return NULL;
}

/* Several producers, one consumer, sequence numbers per producer: every
 * node arrives exactly once and each producer's nodes arrive in order. */
Test(mpsc, contention_keeps_fifo_per_producer_and_exact_counts, .timeout = 60)
{
    dg_mpsc_t q;
    dg_mpsc_init(&q);
    pthread_t t[PRODUCERS];
    producer_arg_t args[PRODUCERS];
    for (int p = 0; p < PRODUCERS; p++) {
        args[p] = (producer_arg_t){&q, calloc(PER_PRODUCER, sizeof(item_t)), p};
        cr_assert_not_null(args[p].items);
        pthread_create(&t[p], NULL, producer, &args[p]);
    }
    long next[PRODUCERS] = {0}, total = 0, busy = 0;
    while (total < (long)PRODUCERS * PER_PRODUCER) {
        dg_mpsc_pop_t r;
        item_t *it = pop_item(&q, &r);
        if (!it) {
            busy += r == DG_MPSC_BUSY;
            sched_yield();
            continue;
        }
        cr_assert(it->producer >= 0 && it->producer < PRODUCERS);
        cr_assert_eq(it->seq, next[it->producer], "producer %d: got seq %ld, expected %ld",
                     it->producer, it->seq, next[it->producer]);
        next[it->producer]++;
        total++;
    }
    for (int p = 0; p < PRODUCERS; p++) {
        pthread_join(t[p], NULL);
        cr_assert_eq(next[p], PER_PRODUCER);
        free(args[p].items);
    }
    dg_mpsc_pop_t r;
    cr_assert_null(pop_item(&q, &r), "nothing extra (no duplicate)");
    cr_assert_eq(r, DG_MPSC_EMPTY);
    cr_log_info("busy pops seen: %ld", busy);
}
