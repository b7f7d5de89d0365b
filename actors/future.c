/* Futures of plain-thread requests (see future.h). */
#include "actors/future.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "actors/clock.h"
#include "core/base/alloc.h"
#include "core/base/cond.h"
#include "core/base/status_internal.h"

struct dg_future {
    uint64_t id;
    int waiting;     /* a thread is inside dg_future_wait */
    dg_msg_t *reply; /* NULL until the reply arrives */
    _Atomic int ready;                /* reply set: what a helping waiter reads */
    const dg_future_helper_t *helper; /* the waiter's, while it helps */
    pthread_cond_t cond;
    dg_future_t *next;
};

static dg_future_t **find(dg_futures_t *fs, uint64_t id)
{
    dg_future_t **p = &fs->bucket[id % DG_FUTURE_BUCKETS];
    while (*p && (*p)->id != id)
        p = &(*p)->next;
    return p;
}

void dg_futures_init(dg_futures_t *fs)
{
    pthread_mutex_init(&fs->lock, NULL);
    memset(fs->bucket, 0, sizeof(fs->bucket));
    fs->late = 0;
}

static void future_free(dg_future_t *f)
{
    dg_msg_free(f->reply);
    pthread_cond_destroy(&f->cond);
    free(f);
}

void dg_futures_cleanup(dg_futures_t *fs)
{
    for (size_t b = 0; b < DG_FUTURE_BUCKETS; b++)
        for (dg_future_t *f = fs->bucket[b], *next; f; f = next) {
            next = f->next;
            future_free(f);
        }
    pthread_mutex_destroy(&fs->lock);
}

dagger_status_t dg_future_create(dg_futures_t *fs, uint64_t id)
{
    dg_future_t *f = dg_calloc(1, sizeof(*f));
    if (!f)
        return dg_error(DAGGER_ERR_NO_MEMORY, "no memory for a request future");
    dg_cond_init_monotonic(&f->cond);
    f->id = id;
    pthread_mutex_lock(&fs->lock);
    dg_future_t **p = find(fs, id);
    DG_ASSERT(!*p);
    *p = f;
    pthread_mutex_unlock(&fs->lock);
    return DAGGER_OK;
}

void dg_futures_complete(dg_futures_t *fs, dg_msg_t *msg)
{
    pthread_mutex_lock(&fs->lock);
    dg_future_t *f = *find(fs, msg->hdr.corr);
    if (f && !f->reply) {
        f->reply = msg;
        msg = NULL;
        atomic_store_explicit(&f->ready, 1, memory_order_seq_cst);
        pthread_cond_broadcast(&f->cond);
        if (f->helper)
            f->helper->wake(f->helper->arg);
    } else {
        fs->late++; /* timed out, destroyed, or a second answer */
    }
    pthread_mutex_unlock(&fs->lock);
    dg_msg_free(msg);
}

/* Copies a reply into the caller's buffer; an error reply becomes the
 * returned status with its detail. */
static dagger_status_t copy_reply(const dg_msg_t *msg, dagger_reply_t *reply)
{
    if (msg->hdr.flags & DG_MSG_ERROR) {
        const dg_msg_error_t *e = (const dg_msg_error_t *)msg->payload;
        int len = (int)(msg->hdr.size - sizeof(*e));
        return dg_error((dagger_status_t)e->status, "%.*s", len, e->detail);
    }
    reply->size = msg->hdr.size;
    reply->type = msg->hdr.type;
    reply->from = msg->hdr.from;
    if (msg->hdr.size > reply->capacity)
        return dg_error(DAGGER_ERR_OVERFLOW,
                        "reply of %u bytes does not fit the %zu-byte reply buffer (reply->size "
                        "says how much is needed)",
                        msg->hdr.size, reply->capacity);
    if (msg->hdr.size)
        memcpy(reply->buf, msg->payload, msg->hdr.size);
    return DAGGER_OK;
}

dagger_status_t dg_future_wait(dg_futures_t *fs, uint64_t id, uint64_t deadline_ns,
                               dagger_reply_t *reply, const dg_future_helper_t *help)
{
    dagger_status_t st = DAGGER_OK;
    pthread_mutex_lock(&fs->lock);
    dg_future_t *f = *find(fs, id);
    if (!f) {
        pthread_mutex_unlock(&fs->lock);
        return dg_error(DAGGER_ERR_BAD_HANDLE,
                        "request %llu is unknown or was freed (dagger_request_free)",
                        (unsigned long long)id);
    }
    if (f->waiting) {
        pthread_mutex_unlock(&fs->lock);
        return dg_error(DAGGER_ERR_STATE, "another thread is already waiting on request %llu",
                        (unsigned long long)id);
    }
    f->waiting = 1;
    if (help && !f->reply) {
        /* f stays: dg_future_destroy refuses a future that is waited on. */
        f->helper = help;
        pthread_mutex_unlock(&fs->lock);
        help->wait(help->arg, &f->ready, deadline_ns);
        pthread_mutex_lock(&fs->lock);
        f->helper = NULL;
    }
    while (!f->reply && st == DAGGER_OK)
        if (dg_cond_wait_until(&f->cond, &fs->lock, deadline_ns) == ETIMEDOUT && !f->reply)
            st = dg_error(DAGGER_ERR_TIMEOUT, "no reply to request %llu before the deadline",
                          (unsigned long long)id);
    f->waiting = 0;
    if (f->reply)
        st = copy_reply(f->reply, reply);
    pthread_mutex_unlock(&fs->lock);
    return st;
}

dagger_status_t dg_future_destroy(dg_futures_t *fs, uint64_t id)
{
    pthread_mutex_lock(&fs->lock);
    dg_future_t **p = find(fs, id), *f = *p;
    if (!f || f->waiting) {
        pthread_mutex_unlock(&fs->lock);
        return f ? dg_error(DAGGER_ERR_STATE, "a thread is waiting on request %llu",
                            (unsigned long long)id)
                 : dg_error(DAGGER_ERR_BAD_HANDLE, "request %llu is unknown or already freed",
                            (unsigned long long)id);
    }
    *p = f->next;
    pthread_mutex_unlock(&fs->lock);
    future_free(f);
    return DAGGER_OK;
}
