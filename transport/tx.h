/* The messaging layer: one UCX context and worker per rank, an endpoint to
 * every rank (itself included), active messages on channels, rendezvous
 * straight into the receiver's buffer, flow control per peer, and failure
 * detection.
 *
 * Threads. The worker belongs to one thread at a time, the owner (in the
 * runtime: actor worker 0; in tests: the test thread). Only the owner calls
 * dg_tx_progress/arm, dg_tx_recv_into and dg_tx_drop. Any thread may call
 * dg_tx_send: from a non-owner it goes through a
 * lock-free outbox and the owner is woken (params.wake). Completion
 * callbacks and channel handlers run on the owner, inside dg_tx_progress,
 * never inside the call that started the operation. */
#ifndef DG_TX_H
#define DG_TX_H

#include <dagger/status.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/config.h"
#include "transport/bootstrap.h"

typedef struct dg_tx dg_tx_t;

/* Channels: one UCX active-message id each. Each line names the file of
 * the channel's handler and the handler, installed with dg_tx_set_handler
 * in that file (tests/transport/test_channels.c checks it). Every handler
 * runs inside the progress engine's round (progress.h). */
typedef enum dg_tx_channel {
    /* collectives: handler: `transport/chan_coll.c` `dg_coll_on_msg` */
    DG_TX_CH_COLL = 0,
    /* actor messages: handler: `transport/chan_actor.c` `on_actor_msg` */
    DG_TX_CH_ACTOR = 1,
    /* the executor's transfers (move_rewrap), owned by the executor:
     * handler: `core/exec/xfer.c` `on_data` */
    DG_TX_CH_DATA = 2,
    /* free for tests and benchmarks: handler: none in the library */
    DG_TX_CH_TEST = 3,
    /* the transport's own, the start-up connection handshake:
     * handler: `transport/chan_ctrl.c` `on_hello` */
    DG_TX_CH_CTRL = 4,
    DG_TX_NCHANNELS = 5
} dg_tx_channel_t;

/* Largest channel header (the bytes before the payload) a sender may give. */
#define DG_TX_MAX_HDR 192

/* A message as its channel handler sees it. */
typedef struct dg_tx_msg {
    int src;             /* sending rank */
    unsigned channel;
    const void *hdr;     /* the sender's channel header; valid during the call */
    size_t hdr_len;
    const void *data;    /* eager payload, valid during the call; NULL when rndv */
    size_t len;          /* payload length in bytes */
    void *rndv;          /* rendezvous: pass to dg_tx_recv_into or dg_tx_drop */
} dg_tx_msg_t;

/* A channel handler. Returns 0, or DG_TX_KEEP when it keeps msg->rndv to
 * call dg_tx_recv_into / dg_tx_drop later (on the owner thread). A
 * rendezvous message that is neither received nor kept is dropped. */
#define DG_TX_KEEP 1
typedef int (*dg_tx_handler_fn)(void *ctx, const dg_tx_msg_t *msg);

/* Completion of a send or receive: DAGGER_OK, or the error (for
 * example DAGGER_ERR_PEER_LOST). Called once, on the owner thread. */
typedef void (*dg_tx_done_fn)(void *arg, dagger_status_t status);

/* dg_tx_send flags. */
#define DG_TX_COPY 1u  /* copy the payload now: the caller may reuse it at once */
#define DG_TX_EAGER 2u /* send the payload eagerly whatever its size (DAGGER_EAGER_LIMIT
                          aside): for a receiver that cannot pull yet (a hello at start-up) */

typedef struct dg_tx_params {
    dg_boot_t *boot;            /* required: identity, start-up exchange, launcher events */
    const dg_config_t *cfg;     /* DAGGER_EAGER_LIMIT, _PEER_INFLIGHT, _PEER_ERRORS; NULL:
                                   read the environment */
    const void *inventory;      /* opaque bytes every rank learns about this rank */
    size_t inventory_len;
    uint64_t build_id;          /* 0: dg_tx_build_id() (other values are for tests) */
    const char *tls;            /* UCX transports (as UCX_TLS); NULL: environment/default */
    void (*wake)(void *ctx);    /* also called to wake the owner (the UCX worker's fd is
                                   always signalled too); NULL: the fd only */
    void *wake_ctx;
    double lost_grace_s;        /* once a peer is lost, end this process after this many
                                   seconds if it has not ended by itself; 0: never */
} dg_tx_params_t;

/* This build's identity: ranks must agree on it (DAGGER_ERR_BUILD_MISMATCH). */
uint64_t dg_tx_build_id(void);

/* Collective over all ranks: creates the UCX context and worker, exchanges
 * addresses, inventories and build ids through the bootstrap, connects to
 * every rank and starts the collectives. The calling thread becomes the
 * owner. Errors: DAGGER_ERR_BUILD_MISMATCH naming the ranks, DAGGER_ERR_TRANSPORT,
 * DAGGER_ERR_BOOTSTRAP, DAGGER_ERR_CONFIG. */
dagger_status_t dg_tx_create(const dg_tx_params_t *params, dg_tx_t **out);

/* Collective when healthy: completes this rank's operations, meets the
 * others in a final barrier, then closes everything (owner thread). After a
 * lost peer it closes without waiting for anyone. Never hangs on a peer
 * that has already left. In the final barrier a rank that has every part
 * leaves at once: the others go on waiting for a live rank's part, and fail
 * only if the rank they wait for is gone or 2 s after seeing a rank leave
 * (dg_tx_wait_from, tx_internal.h). */
dagger_status_t dg_tx_destroy(dg_tx_t *tx);

int dg_tx_rank(const dg_tx_t *tx);
int dg_tx_size(const dg_tx_t *tx);
/* The inventory bytes rank r gave at start-up (valid until destroy). */
const void *dg_tx_inventory(const dg_tx_t *tx, int r, size_t *len);
/* Rank r's host name as its launcher reported it. */
const char *dg_tx_hostname(const dg_tx_t *tx, int r);

/* Installs the handler of a channel. Do it on every rank before anything
 * is sent on that channel (for example before a barrier that precedes the
 * first message); a message for a channel without handler is dropped with
 * an error in the log. */
dagger_status_t dg_tx_set_handler(dg_tx_t *tx, unsigned channel, dg_tx_handler_fn fn, void *ctx);
/* From now on the channel's messages are dropped (their rendezvous data
 * released): for a layer about to go while ranks that diverged or lost a
 * peer may still send to it. Owner thread. */
dagger_status_t dg_tx_close_channel(dg_tx_t *tx, unsigned channel);

/* Sends hdr (hdr_len <= DG_TX_MAX_HDR, copied) and payload to rank dest on
 * channel. Payloads up to DAGGER_EAGER_LIMIT go eagerly, larger ones by
 * rendezvous (the receiver pulls them into its buffer) unless DG_TX_EAGER
 * says otherwise. Without DG_TX_COPY
 * the payload must stay valid until done runs. done may be NULL. Messages
 * from one sender to one receiver on one channel arrive in send order
 * (except ordered ones, below). */
dagger_status_t dg_tx_send(dg_tx_t *tx, int dest, unsigned channel, const void *hdr,
                           size_t hdr_len, const void *payload, size_t len, unsigned flags,
                           dg_tx_done_fn done, void *arg);

/* dg_tx_send with the send's place in a plan that sender and receiver
 * share (order > 0; the executor passes the transfer's tag), for sends
 * whose completion may wait on the receiver (a rendezvous pulled only once
 * the receive is planned). Past the per-peer bounds such a send still
 * starts when every ordered send in flight to the same peer has a higher
 * order, overtaking what waits in the queue: else those in flight, waiting
 * for receives the peer plans after this one's, and this one, held back by
 * them, wait for each other (docs/transport.md, "Flow control"). Ordered
 * sends of one order keep their send order; across orders, none. */
dagger_status_t dg_tx_send_ordered(dg_tx_t *tx, int dest, unsigned channel, const void *hdr,
                                   size_t hdr_len, const void *payload, size_t len,
                                   unsigned flags, uint64_t order, dg_tx_done_fn done,
                                   void *arg);

/* The owner's fast path for a small message: sends it now and returns 1
 * when UCX completed it at once (the payload may be reused or freed right
 * away, no callback follows), or returns 0 having done nothing (not the
 * owner, above the eager limit, no room now, earlier sends to dest queued):
 * then use dg_tx_send. dg_tx_send takes this path by itself when done is
 * NULL. */
int dg_tx_try_send(dg_tx_t *tx, int dest, unsigned channel, const void *hdr, size_t hdr_len,
                   const void *payload, size_t len);

/* Owner only: receives the rendezvous payload of a message into buf (of
 * exactly msg->len bytes), with no intermediate copy. done runs when the
 * bytes are in buf. */
dagger_status_t dg_tx_recv_into(dg_tx_t *tx, void *rndv, void *buf, size_t len,
                                dg_tx_done_fn done, void *arg);
/* Owner only: discards a kept rendezvous payload (the sender completes). */
void dg_tx_drop(dg_tx_t *tx, void *rndv);

/* The progress engine (progress.h says who drives it, on which thread).
 * Owner only: one round of progress. Returns >0 when something happened
 * (a message, a completion, a queued send went out), 0 when idle. */
int dg_tx_progress(dg_tx_t *tx);
/* Owner only: prepares to sleep on dg_tx_fd. 0: armed, the caller may block
 * in poll() on the fd; 1: work is pending, call dg_tx_progress again. */
int dg_tx_arm(dg_tx_t *tx);
/* The file descriptor that becomes readable when the owner has work. */
int dg_tx_fd(const dg_tx_t *tx);
/* Makes the calling thread the owner (a hand-over: the previous owner must
 * have stopped calling owner-only functions). */
void dg_tx_adopt(dg_tx_t *tx);
/* The owner gives the worker up; until a thread adopts it, every thread's
 * operations wait in the outbox and nothing makes progress. */
void dg_tx_release(dg_tx_t *tx);
/* 1 when the calling thread is the owner. */
int dg_tx_is_owner(const dg_tx_t *tx);

/* Waits until done(arg) returns non-zero. The owner makes progress while it
 * waits and sleeps on the fd when idle; another thread sleeps until the
 * owner's progress notifies it. timeout_s <= 0 waits without limit.
 * Errors: DAGGER_ERR_PEER_LOST (naming the rank), DAGGER_ERR_TIMEOUT. */
dagger_status_t dg_tx_wait(dg_tx_t *tx, int (*done)(void *arg), void *arg, double timeout_s);
/* Wakes threads blocked in dg_tx_wait on another thread than the owner.
 * Whoever changes what such a wait checks calls it (channel handlers, done
 * callbacks); the owner's progress does not, so that a sleeping waiter costs
 * the owner nothing. */
void dg_tx_notify(dg_tx_t *tx);

/* Waits until every operation this rank started has completed. */
dagger_status_t dg_tx_flush(dg_tx_t *tx);

/* DAGGER_OK while every peer is there; DAGGER_ERR_PEER_LOST with a detail
 * naming the lost rank afterwards. */
dagger_status_t dg_tx_health(dg_tx_t *tx);
/* The first rank found lost, -1 while none is, dg_tx_size() when the
 * launcher itself was lost. */
int dg_tx_lost_rank(const dg_tx_t *tx);
/* Reports rank r as lost (used by the detectors and by tests). */
void dg_tx_mark_lost(dg_tx_t *tx, int r, const char *why);
/* The ranks' programs diverged (coll_foresee.c): region data can no longer
 * be exchanged. Receives still waiting fail with DAGGER_ERR_DIVERGENCE and
 * why, data that arrives is dropped (so its senders complete); collectives
 * go on and report the divergence with their signatures. Returns 1 when
 * this call set it, 0 when it was set already. Any thread. */
int dg_tx_mark_diverged(dg_tx_t *tx, const char *why);
/* DAGGER_OK, or DAGGER_ERR_DIVERGENCE with the why in the detail. */
dagger_status_t dg_tx_divergence(dg_tx_t *tx);
/* Whether a receive still waiting can never complete: a rank was lost, or
 * the ranks diverged. A relaxed load while neither happened. */
int dg_tx_recvs_doomed(const dg_tx_t *tx);

/* Counters for tests and benchmarks. */
typedef struct dg_tx_stats {
    uint64_t sends, recvs, queued;   /* sends started, messages handled, sends that waited */
    uint64_t overtook;               /* ordered sends started past the bound (tx_ops.c) */
    uint64_t probes;                 /* PROBEs from peers handled (coll_probe.c) */
    int max_inflight;                /* most operations in flight to one peer at once */
} dg_tx_stats_t;
void dg_tx_get_stats(const dg_tx_t *tx, dg_tx_stats_t *out);

/* Whether UCX can send from and receive into device memory of this kind
 * (ucp_context_query's memory_types): DG_TX_MEM_CUDA or DG_TX_MEM_ROCM.
 * why (may be NULL) says what UCX reported. */
enum { DG_TX_MEM_CUDA = 1, DG_TX_MEM_ROCM = 2 };
int dg_tx_device_memory(dg_tx_t *tx, int kind, char *why, size_t cap);

#endif
