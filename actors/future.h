/* Futures: requests sent by plain (non-actor) threads wait here for their
 * reply. A future's id is the request's correlation id; the reply is sent to
 * the rank's futures endpoint (actor id DG_ACT_ID_FUTURE) and matched by id.
 * Handles given to users are ids, so a destroyed future is recognised as
 * such instead of being dereferenced. */
#ifndef DG_ACT_FUTURE_H
#define DG_ACT_FUTURE_H

#include <dagger/actor.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "actors/msg.h"

#define DG_FUTURE_BUCKETS 256

typedef struct dg_future dg_future_t;

typedef struct dg_futures {
    pthread_mutex_t lock;
    dg_future_t *bucket[DG_FUTURE_BUCKETS];
    uint64_t late; /* replies that found no future (timed out or destroyed); under lock */
} dg_futures_t;

void dg_futures_init(dg_futures_t *fs);
/* Frees every future still pending (the runtime is going away). */
void dg_futures_cleanup(dg_futures_t *fs);

/* Creates the future of request id. DAGGER_ERR_NO_MEMORY. */
dagger_status_t dg_future_create(dg_futures_t *fs, uint64_t id);

/* Hands a reply (or an error reply) to its future; takes ownership of msg.
 * A reply without a future is counted in `late` and freed. */
void dg_futures_complete(dg_futures_t *fs, dg_msg_t *msg);

/* A waiter that does not sleep on the future's condition variable but
 * works while it waits (a worker thread inside a task: it runs actor turns,
 * dg_act_worker_help). wait(arg, ready, deadline_ns) returns once *ready is
 * set or the deadline has passed; the reply's arrival calls wake(arg) after
 * setting *ready (under the futures' lock; wake must not block). */
typedef struct dg_future_helper {
    void (*wait)(void *arg, const _Atomic int *ready, uint64_t deadline_ns);
    void (*wake)(void *arg);
    void *arg;
} dg_future_helper_t;

/* Waits for the reply of future id until deadline_ns (CLOCK_MONOTONIC),
 * copies it into reply: on the condition variable, or through help when
 * it is not NULL. Errors as dagger_future_wait. */
dagger_status_t dg_future_wait(dg_futures_t *fs, uint64_t id, uint64_t deadline_ns,
                               dagger_reply_t *reply, const dg_future_helper_t *help);

/* Errors: DAGGER_ERR_BAD_HANDLE (unknown id), DAGGER_ERR_STATE (waited on). */
dagger_status_t dg_future_destroy(dg_futures_t *fs, uint64_t id);

#endif
