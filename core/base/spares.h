/* A list of freed blocks of one size kept for reuse, for records made and
 * freed at a high rate on different threads (a transfer's receive record, a
 * transport operation), where calloc and free were a tenth of a cross-rank
 * step's instructions. A mutex guards it: uncontended, a lock and an unlock
 * cost less than malloc's paths, and any thread may take or give back. A
 * kept block holds the link in its first pointer-sized bytes. */
#ifndef DG_BASE_SPARES_H
#define DG_BASE_SPARES_H

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"

typedef struct dg_spares {
    pthread_mutex_t lock;
    void *head;
    int n;     /* blocks kept */
    int keep;  /* at most */
} dg_spares_t;

static inline void dg_spares_init(dg_spares_t *s, int keep)
{
    pthread_mutex_init(&s->lock, NULL);
    s->head = NULL;
    s->n = 0;
    s->keep = keep;
}

/* A kept block, or NULL when there is none. */
static inline void *dg_spares_take(dg_spares_t *s)
{
    pthread_mutex_lock(&s->lock);
    void *b = s->head;
    if (b) {
        memcpy(&s->head, b, sizeof(void *));
        s->n--;
    }
    pthread_mutex_unlock(&s->lock);
    return b;
}

/* A zeroed block of size bytes (the size of every block of the list): a
 * kept one, else a fresh one; NULL when out of memory. */
static inline void *dg_spares_new(dg_spares_t *s, size_t size)
{
    void *b = dg_spares_take(s);
    if (!b)
        return dg_calloc(1, size);
    memset(b, 0, size);
    return b;
}

/* Keeps b, or frees it when the list is full; NULL is ignored. */
static inline void dg_spares_give(dg_spares_t *s, void *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&s->lock);
    int kept = s->n < s->keep;
    if (kept) {
        memcpy(b, &s->head, sizeof(void *));
        s->head = b;
        s->n++;
    }
    pthread_mutex_unlock(&s->lock);
    if (!kept)
        free(b);
}

/* Frees every kept block; no other thread may use the list. */
static inline void dg_spares_destroy(dg_spares_t *s)
{
    while (s->head) {
        void *next;
        memcpy(&next, s->head, sizeof(void *));
        free(s->head);
        s->head = next;
    }
    s->n = 0;
    pthread_mutex_destroy(&s->lock);
}

#endif
