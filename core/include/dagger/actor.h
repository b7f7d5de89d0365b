/* Actors: typed messages between single-threaded state machines, on the
 * runtime's worker threads.
 *
 * An actor is a piece of private state plus one handler per message type. The
 * runtime runs an actor's handlers one message at a time (never on two
 * threads at once), in the order each sender sent them. Actors have an
 * address (rank, id); sending is asynchronous and never blocks. Handlers must
 * not block either: a question to another actor is a request whose reply
 * comes back later as a message (dagger_ask), and a delay is a timer.
 *
 * Lifecycle:  dagger_init -> dagger_msg_type_register -> dagger_actor_spawn
 *             -> dagger_send / dagger_request / dagger_timer_start ...
 *             -> dagger_actor_stop -> dagger_actor_join -> dagger_finalize
 * dagger_finalize stops and joins every actor that is still alive.
 *
 * Errors: every call that can fail returns a dagger_status_t; the calling
 * thread's dagger_error_detail() then says what went wrong and what to
 * change. Calls from inside a handler that would block (dagger_request,
 * dagger_actor_join, dagger_finalize, waits with a timeout) return
 * DAGGER_ERR_STATE instead; so do the task runtime's SPMD calls (submissions,
 * collectives, regions, fetches, chunks, arrays, registrations), which belong
 * to the program's own thread.
 *
 * Durations are in microseconds; DAGGER_WAIT_FOREVER waits without limit.
 * docs/actors.md is the guide, with a complete example service. */
#ifndef DAGGER_ACTOR_H
#define DAGGER_ACTOR_H

#include <dagger/export.h>
#include <dagger/runtime.h>
#include <dagger/status.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- addresses */

/* An actor's address: the rank it lives on and an id that rank gave it. Ids
 * are opaque and are not reused soon after the actor is joined. */
typedef struct dagger_actor_addr {
    int32_t rank;
    uint32_t id;
} dagger_actor_addr_t;

/* "No actor" (for example the sender of a message sent by a plain thread). */
static inline dagger_actor_addr_t dagger_actor_none(void)
{
    dagger_actor_addr_t a = {-1, 0};
    return a;
}

static inline int dagger_actor_addr_eq(dagger_actor_addr_t a, dagger_actor_addr_t b)
{
    return a.rank == b.rank && a.id == b.id;
}

/* 1 if a is an actor address (not dagger_actor_none()). */
static inline int dagger_actor_addr_valid(dagger_actor_addr_t a)
{
    return a.rank >= 0 && a.id != 0;
}

#define DAGGER_WAIT_FOREVER ((int64_t)-1)

/* ------------------------------------------------------------ message types */

/* A message type id: the 32-bit hash of the type's name, so every rank and
 * every build derives the same id from the same name. */
typedef uint32_t dagger_msg_type_t;

typedef enum dagger_msg_encoding {
    DAGGER_MSG_FIXED = 1, /* the payload is exactly `size` bytes (a C struct) */
    DAGGER_MSG_BYTES = 2  /* the payload is 0 .. `size` bytes */
} dagger_msg_encoding_t;

typedef struct dagger_msg_type_desc {
    const char *name;               /* unique name, e.g. "kv.put"; copied */
    dagger_msg_encoding_t encoding;
    size_t size;                    /* FIXED: exact size; BYTES: maximum size */
} dagger_msg_type_desc_t;

/* Registers a message type and returns its id in *type. Registering the same
 * name again with the same encoding and size returns the same id (so every
 * module may register the types it uses).
 * Errors: DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_INVALID_ARG (NULL desc, name
 * or type; empty name or longer than 127 bytes; unknown encoding; a size
 * above 4 GiB - 1), DAGGER_ERR_TYPE_CONFLICT (the name is registered with
 * another encoding or size, or another name hashes to the same id: the detail
 * names both; rename one). */
DAGGER_API
dagger_status_t dagger_msg_type_register(dagger_runtime_t *rt, const dagger_msg_type_desc_t *desc,
                                         dagger_msg_type_t *type);

/* The id of a registered type name. Errors: DAGGER_ERR_BAD_HANDLE,
 * DAGGER_ERR_INVALID_ARG (NULL name or type), DAGGER_ERR_NOT_FOUND. */
DAGGER_API
dagger_status_t dagger_msg_type_find(dagger_runtime_t *rt, const char *name,
                                     dagger_msg_type_t *type);

/* ------------------------------------------------------------------- actors */

/* The context of one handler call: which actor runs, which message it
 * handles. Valid only during the call. */
typedef struct dagger_ctx dagger_ctx_t;

/* A message handler. A non-OK return is counted (dagger_actor_stats_t.failed)
 * and logged; if the message was a request of a plain thread (dagger_request,
 * dagger_request_start) and the handler did not reply, the requester gets
 * this status. */
typedef dagger_status_t (*dagger_handler_fn)(dagger_ctx_t *ctx);

typedef struct dagger_handler {
    dagger_msg_type_t type;
    dagger_handler_fn fn;
} dagger_handler_t;

typedef struct dagger_actor_desc {
    const char *name;                  /* for diagnostics; copied (63 bytes kept) */
    void *state;                       /* private state, dagger_ctx_state() */
    const dagger_handler_t *handlers;  /* one per message type; copied */
    size_t nhandlers;
    /* Optional: called once on the actor's thread after it stopped, when its
     * remaining messages have been dropped (free the state here). The
     * context has no message (dagger_ctx_type() is 0). */
    void (*on_stop)(dagger_ctx_t *ctx);
    int pin;                           /* 1: always run on worker `worker` */
    int worker;                        /* 0 .. dagger_num_threads() - 1, if pin */
} dagger_actor_desc_t;

/* Starts an actor and returns its address. Handlers may run as soon as this
 * returns. Errors: DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_INVALID_ARG (NULL
 * desc or addr; handlers NULL with nhandlers > 0; a NULL handler function; two
 * handlers for one type; pin with a worker out of range), DAGGER_ERR_MSG_TYPE
 * (a handler for an unregistered type), DAGGER_ERR_OVERFLOW (too many live
 * actors: about one million per rank), DAGGER_ERR_NO_MEMORY. */
DAGGER_API
dagger_status_t dagger_actor_spawn(dagger_runtime_t *rt, const dagger_actor_desc_t *desc,
                                   dagger_actor_addr_t *addr);

/* Stops an actor: the handler running now (if any) finishes, messages still
 * queued are dropped and counted, later sends fail with
 * DAGGER_ERR_ACTOR_STOPPED, then on_stop runs. Returns at once (the actor
 * finishes stopping on its own thread); an actor may stop itself.
 * A plain thread's request dropped this way fails with DAGGER_ERR_ACTOR_STOPPED.
 * Errors: DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_NO_SUCH_ACTOR (never
 * existed, or on another rank), DAGGER_ERR_ACTOR_STOPPED (already stopped,
 * or stopped and joined). */
DAGGER_API
dagger_status_t dagger_actor_stop(dagger_runtime_t *rt, dagger_actor_addr_t addr);

typedef struct dagger_actor_stats {
    uint64_t handled;   /* messages given to a handler */
    uint64_t failed;    /* handler calls that returned an error */
    uint64_t dropped;   /* messages discarded because the actor was stopped */
    uint64_t unhandled; /* messages from other ranks of a type it has no handler for */
} dagger_actor_stats_t;

/* Waits until the actor has stopped (by dagger_actor_stop from any thread,
 * itself included), frees it and, if stats is not NULL, reports its counts.
 * The address stays invalid afterwards (sends fail with
 * DAGGER_ERR_ACTOR_STOPPED). Errors: DAGGER_ERR_BAD_HANDLE (rt),
 * DAGGER_ERR_NO_SUCH_ACTOR (never existed, or on another rank),
 * DAGGER_ERR_STATE (already joined, being joined by another thread, or
 * called from a handler), DAGGER_ERR_TIMEOUT (still running at the deadline:
 * it stays joinable). */
DAGGER_API
dagger_status_t dagger_actor_join(dagger_runtime_t *rt, dagger_actor_addr_t addr,
                                  int64_t timeout_us, dagger_actor_stats_t *stats);

/* ------------------------------------------------------------------ sending */

/* Sends a message: copies the payload and returns; the destination's handler
 * runs later on a worker. From a handler the sender is the running actor,
 * otherwise dagger_actor_none(). Messages of one sender to one actor arrive
 * in the order sent.
 * Errors: DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_INVALID_ARG (payload NULL
 * with size > 0), DAGGER_ERR_MSG_TYPE (unregistered type, or a local
 * destination without a handler for it), DAGGER_ERR_MSG_SIZE (size does not
 * fit the type), DAGGER_ERR_NO_SUCH_ACTOR (no such actor; or its rank is not
 * reachable), DAGGER_ERR_ACTOR_STOPPED (the actor was stopped),
 * DAGGER_ERR_NO_MEMORY. */
DAGGER_API
dagger_status_t dagger_send(dagger_runtime_t *rt, dagger_actor_addr_t to, dagger_msg_type_t type,
                            const void *payload, size_t size);

/* Answers the message being handled (which must come from an actor or a
 * request: dagger_request, dagger_request_start, dagger_ask) with a message
 * of a registered type. A request from a plain thread completes its wait;
 * a request from an actor arrives there as an ordinary message of this type
 * with dagger_ctx_corr() equal to the request's id.
 * Errors: DAGGER_ERR_INVALID_ARG (ctx NULL or not the current handler's,
 * payload NULL with size > 0), DAGGER_ERR_STATE (the message has no sender to
 * answer, or was already answered), DAGGER_ERR_MSG_TYPE, DAGGER_ERR_MSG_SIZE,
 * and the errors of dagger_send for the destination actor. */
DAGGER_API
dagger_status_t dagger_reply(dagger_ctx_t *ctx, dagger_msg_type_t type, const void *payload,
                             size_t size);

/* Where to send the answer to the message being handled, for a handler that
 * answers later (from another message or a timer) with dagger_reply_later. */
typedef struct dagger_reply_to {
    dagger_actor_addr_t addr;
    uint64_t corr;
} dagger_reply_to_t;

DAGGER_API
dagger_reply_to_t dagger_ctx_reply_to(const dagger_ctx_t *ctx);

/* Answers a message whose dagger_reply_to_t was saved earlier; each one may be
 * answered once. Errors: as dagger_reply, plus DAGGER_ERR_INVALID_ARG for a
 * reply_to without a sender. */
DAGGER_API
dagger_status_t dagger_reply_later(dagger_runtime_t *rt, dagger_reply_to_t to,
                                   dagger_msg_type_t type, const void *payload, size_t size);

/* ---------------------------------------------------------- request / reply */

/* The reply of a request, copied into a buffer the caller provides. */
typedef struct dagger_reply {
    void *buf;               /* in: where to copy the reply's payload (may be NULL if capacity 0) */
    size_t capacity;         /* in: bytes available at buf */
    size_t size;             /* out: the reply's payload size */
    dagger_msg_type_t type;  /* out: the reply's message type */
    dagger_actor_addr_t from; /* out: the actor that replied */
} dagger_reply_t;

/* A pending request of a plain (non-actor) thread: a future for its reply. */
typedef uint64_t dagger_request_t;

/* From a plain thread: sends a request and waits for its reply.
 * Errors: those of dagger_send; DAGGER_ERR_STATE (called from a handler: use
 * dagger_ask); DAGGER_ERR_INVALID_ARG (reply NULL); DAGGER_ERR_TIMEOUT (no
 * reply within timeout_us; a late reply is discarded); DAGGER_ERR_OVERFLOW
 * (the reply is larger than reply->capacity: reply->size says how large; the
 * reply is discarded); DAGGER_ERR_ACTOR_STOPPED (the actor was stopped
 * before handling it); any status the handler returned without replying. */
DAGGER_API
dagger_status_t dagger_request(dagger_runtime_t *rt, dagger_actor_addr_t to,
                               dagger_msg_type_t type, const void *payload, size_t size,
                               int64_t timeout_us, dagger_reply_t *reply);

/* The future form: sends a request and returns at once. Wait for the reply
 * with dagger_request_wait, then release the handle with
 * dagger_request_free. Errors: those of dagger_send; DAGGER_ERR_STATE
 * (from a handler); DAGGER_ERR_INVALID_ARG (req NULL). */
DAGGER_API
dagger_status_t dagger_request_start(dagger_runtime_t *rt, dagger_actor_addr_t to,
                                     dagger_msg_type_t type, const void *payload, size_t size,
                                     dagger_request_t *req);

/* Waits up to timeout_us (0: just look) for the reply and copies it into
 * *reply. The request stays valid until freed, so a timed-out wait may be
 * repeated and an oversized reply read again with a larger buffer.
 * Errors: DAGGER_ERR_BAD_HANDLE (rt, or a request that is unknown or
 * freed), DAGGER_ERR_INVALID_ARG (reply NULL), DAGGER_ERR_TIMEOUT,
 * DAGGER_ERR_OVERFLOW (see dagger_request), DAGGER_ERR_STATE (a non-zero
 * timeout from a handler, or another thread is waiting on it), and the
 * request's failure status (see dagger_request). */
DAGGER_API
dagger_status_t dagger_request_wait(dagger_runtime_t *rt, dagger_request_t req, int64_t timeout_us,
                                    dagger_reply_t *reply);

/* Releases a request handle; a reply arriving later is discarded. Errors:
 * DAGGER_ERR_BAD_HANDLE (rt, or an unknown or already freed request),
 * DAGGER_ERR_STATE (another thread is waiting on it). */
DAGGER_API
dagger_status_t dagger_request_free(dagger_runtime_t *rt, dagger_request_t req);

/* From a handler: sends a request without waiting. The reply arrives later
 * as an ordinary message to the calling actor (which needs a handler for the
 * reply's type), with dagger_ctx_corr() equal to *corr (may be NULL).
 * Errors: those of dagger_send; DAGGER_ERR_STATE (not called from a handler:
 * use dagger_request or dagger_request_start). */
DAGGER_API
dagger_status_t dagger_ask(dagger_ctx_t *ctx, dagger_actor_addr_t to, dagger_msg_type_t type,
                           const void *payload, size_t size, uint64_t *corr);

/* ------------------------------------------------------------------- timers */

typedef uint64_t dagger_timer_t;

/* Sends a message (type and payload copied now) to `to` after delay_us, then
 * every period_us if period_us > 0. The sender is the calling actor when
 * called from a handler. A timer whose destination is gone ends itself.
 * Errors: those of dagger_send (checked now); DAGGER_ERR_INVALID_ARG (timer
 * NULL). */
DAGGER_API
dagger_status_t dagger_timer_start(dagger_runtime_t *rt, dagger_actor_addr_t to,
                                   dagger_msg_type_t type, const void *payload, size_t size,
                                   uint64_t delay_us, uint64_t period_us, dagger_timer_t *timer);

/* Cancels a timer: it sends nothing after this returns (a message it already
 * sent may still be in the mailbox). Errors: DAGGER_ERR_BAD_HANDLE (rt),
 * DAGGER_ERR_NOT_FOUND (not pending: a one-shot that fired, a timer already
 * cancelled or ended, or an unknown id). */
DAGGER_API
dagger_status_t dagger_timer_cancel(dagger_runtime_t *rt, dagger_timer_t timer);

/* ------------------------------------------------- inside a handler: context */

/* For a NULL ctx these return the sentinels of dagger.h. A ctx is valid
 * only during its handler call: one kept past it cannot be detected. */
DAGGER_API
dagger_actor_addr_t dagger_ctx_self(const dagger_ctx_t *ctx);
DAGGER_API
dagger_actor_addr_t dagger_ctx_sender(const dagger_ctx_t *ctx); /* none: a plain thread */
DAGGER_API
dagger_msg_type_t dagger_ctx_type(const dagger_ctx_t *ctx);
DAGGER_API
const void *dagger_ctx_payload(const dagger_ctx_t *ctx);
DAGGER_API
size_t dagger_ctx_size(const dagger_ctx_t *ctx);
DAGGER_API
uint64_t dagger_ctx_corr(const dagger_ctx_t *ctx); /* request id, or the id a reply answers */
DAGGER_API
int dagger_ctx_is_reply(const dagger_ctx_t *ctx);
DAGGER_API
void *dagger_ctx_state(const dagger_ctx_t *ctx);
DAGGER_API
dagger_runtime_t *dagger_ctx_runtime(const dagger_ctx_t *ctx);
DAGGER_API
int dagger_ctx_worker(const dagger_ctx_t *ctx); /* index of the worker thread running it */

#ifdef __cplusplus
}
#endif
#endif
