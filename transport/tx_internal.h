/* The transport's private state, shared by the tx_*.c files. */
#ifndef DG_TX_INTERNAL_H
#define DG_TX_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <ucp/api/ucp.h>

#include "core/base/spares.h"
#include "transport/tx.h"
#include "transport/tx_proc.h"

struct dg_coll;
struct dg_tx_liveness;

typedef enum dg_tx_op_kind {
    DG_TX_OP_SEND,
    DG_TX_OP_RECV
} dg_tx_op_kind_t;

/* One operation from start to completion. Its header bytes live here, so
 * they stay valid until UCX completes the send (UCX 1.13 does not copy
 * active-message headers: a stack header is corrupted over tcp). */
typedef struct dg_tx_op {
    struct dg_tx_op *next;      /* outbox, pending or completed list */
    dg_tx_t *tx;
    dg_tx_op_kind_t kind;
    int peer;
    unsigned channel;
    int large;                  /* counts against DG_TX_LARGE_INFLIGHT */
    int posted;                 /* counts against the peer's in-flight bound */
    uint64_t order;             /* a send's place in the plan (0: none; dg_tx_send_ordered) */
    struct dg_tx_op *fprev, *fnext; /* the peer's posted ordered sends (owner) */
    dagger_status_t status;
    const void *buf;            /* payload, or the receive buffer */
    size_t len;
    void *rndv;                 /* receive: the rendezvous descriptor */
    dg_tx_done_fn done;
    void *arg;
    size_t hdr_len;             /* frame + channel header */
    int spare;                  /* of DG_TX_OP_SPARE_BYTES: goes back to tx->spare_ops */
    unsigned char hdr[];        /* then the copied payload with DG_TX_COPY */
} dg_tx_op_t;

/* Operations whose header and copied payload are small (the runtime's
 * control messages, a task's few-byte result) are recycled through
 * tx->spare_ops instead of calloc and free: the two were a tenth of the
 * instructions of a cross-rank Task Bench step (docs/transport.md,
 * "Messages"). At most DG_TX_OP_SPARE_KEEP are kept. */
#define DG_TX_OP_SPARE_BYTES 384
#define DG_TX_OP_SPARE_KEEP 256

/* A FIFO of operations touched by the owner only. */
typedef struct dg_tx_queue {
    dg_tx_op_t *head, *tail;
} dg_tx_queue_t;

typedef struct dg_tx_peer {
    dg_tx_t *tx;
    int rank;
    ucp_ep_h ep;
    int inflight;               /* posted operations not yet complete */
    int large_inflight;         /* of which large ones */
    dg_tx_queue_t pending;      /* operations waiting for room, in order */
    dg_tx_op_t *flying;         /* posted sends with an order (fprev/fnext) */
    uint64_t order_lo;          /* the lowest order among them (when flying) */
    int rescan;                 /* pending may hold a send that can overtake now */
    const char *hostname;       /* points into the start-up exchange */
    const void *inventory;
    size_t inventory_len;
    dg_proc_id_t proc;          /* to tell whether the process is still there */
    int local;                  /* same host as this rank */
    /* Start-up handshake: its hello arrived (set by the owner after proc is
     * final; the liveness thread looks at proc only once it is set). */
    _Atomic(int) said_hello;
    int stale;                  /* owner: a hello came from another process than the record's */
    dg_proc_id_t hello_proc;    /* owner: the process that said hello (when stale) */
    double gone_since;          /* owner: the record's process found gone, silent since */
    _Atomic(int) gone;          /* found lost by a detector, also after the first loss */
    void *record;               /* a record read again (hostname, inventory point into it) */
} dg_tx_peer_t;

/* Large operations in flight to one peer at once: many large transfers in
 * flight over tcp collapse throughput (ENVIRONMENT.md). */
#define DG_TX_LARGE_INFLIGHT 4

struct dg_tx {
    int rank, size;
    dg_boot_t *boot;
    size_t eager_limit;
    int peer_inflight;
    int peer_errors;
    ucp_context_h ucp;
    ucp_worker_h worker;
    int efd;
    dg_tx_peer_t *peers;
    void *exchange;             /* every rank's start-up record (peers point into it) */
    struct dg_tx_chan {
        dg_tx_t *tx;
        unsigned channel;
        dg_tx_handler_fn fn;
        void *ctx;
    } chans[DG_TX_NCHANNELS];
    /* Owner: the rendezvous descriptor on_am is handing to a channel now,
     * and whether the handler dropped it (tx_recv.c). */
    void *cb_rndv;
    int cb_dropped;

    _Atomic(uintptr_t) owner;   /* thread tag of the owner (progress.c) */
    _Atomic(dg_tx_op_t *) outbox; /* LIFO of operations from other threads */
    dg_tx_queue_t completed;    /* owner: finished, done callbacks not yet run */
    long queued_ops;            /* owner: operations in the peers' pending queues */
    _Atomic(long) live_ops;     /* started and not yet completed */
    void (*wake)(void *ctx);
    void *wake_ctx;
    _Atomic(int) woken_by_wake; /* 1: the owner sleeps where wake() reaches it (progress_worker0.c) */
    _Atomic(int) wake_off;      /* 1 once the engine left the actor kernel: the lost-peer
                                   path (tx_lost.c), which runs on threads of its own, no
                                   longer calls wake(), whose kernel is about to go */
    _Atomic(int) lost_waking;   /* such threads inside wake() (dg_tx_engine_stop waits) */

    dg_spares_t spare_ops;      /* recycled operations (DG_TX_OP_SPARE_BYTES each) */

    pthread_mutex_t lock;       /* with cond: non-owner threads in dg_tx_wait */
    pthread_cond_t cond;
    _Atomic(int) waiters;
    _Atomic(int) flush_waiters; /* of which in dg_tx_flush */

    _Atomic(int) lost_rank;     /* first lost rank, -1 while all are there */
    char lost_why[384];         /* written once by whoever set lost_rank */
    _Atomic(int) lost_ready;    /* lost_why is complete */
    _Atomic(int) closing;       /* in the closing barrier: peers that have every part go
                                   (progress_wait.c, dg_tx_wait_from) */
    _Atomic(int) closing_said;  /* a wait there failed on a loss and said so */
    _Atomic(int) leaving;       /* past the closing barrier: peers may go */
    double lost_grace_s;
    struct dg_tx_liveness *liveness;
    _Atomic(uint64_t) regions;  /* regions this rank began (coll_foresee.c) */
    _Atomic(uint64_t) agreeing; /* regions begun when it last called dg_coll_allreduce_plan:
                                   equal to regions while in a region end's agreement */
    uint64_t (*probe_sent)(void *ctx, int peer); /* coll_probe.c (dg_tx_set_probe) */
    void (*probe_answer)(void *ctx, int peer, uint64_t sent);
    void *probe_ctx;
    _Atomic(int) diverged;      /* the ranks' programs diverged (dg_tx_mark_diverged) */
    _Atomic(int) diverged_ready; /* diverged_why is complete */
    char diverged_why[768];

    int hellos;                 /* owner: handshake messages received */
    /* Owner: the hellos that came before this rank had everyone's record
     * (a rank whose PMIx Get went unanswered takes the sender's record from
     * its hello: tx_startup.c), one per sender, the first kept. */
    struct dg_tx_early_hello {
        int seen;
        dg_proc_id_t proc;
        void *record;           /* the record the hello carried; NULL: none */
        size_t record_len;
        int used;               /* the exchange took the record */
    } *early;
    int records_ready;          /* owner: peers[] hold everyone's record */
    void *my_record;            /* this rank's record (its hellos carry it) */
    size_t my_record_len;
    _Atomic(int) handshaking;   /* the liveness thread leaves silent peers to the handshake */
    struct dg_coll *coll;
    dg_tx_stats_t stats;        /* owner */
};

/* tx_ops.c: operation life cycle. */
dg_tx_op_t *dg_tx_op_new(dg_tx_t *tx, dg_tx_op_kind_t kind, int peer, size_t extra);
/* Frees a finished operation; any thread. */
void dg_tx_op_free(dg_tx_t *tx, dg_tx_op_t *op);
void dg_tx_queue_push(dg_tx_queue_t *q, dg_tx_op_t *op);
dg_tx_op_t *dg_tx_queue_pop(dg_tx_queue_t *q);
/* Hands op to the owner: directly when called by the owner, else through
 * the outbox (and wakes the owner). */
dagger_status_t dg_tx_submit(dg_tx_t *tx, dg_tx_op_t *op);
/* Owner: starts op now or queues it behind the peer's earlier operations. */
void dg_tx_start_or_queue(dg_tx_t *tx, dg_tx_op_t *op);
/* Owner: records that op finished with status (from a UCX callback or at once). */
void dg_tx_op_finished(dg_tx_op_t *op, dagger_status_t status);
/* Owner: runs done callbacks of finished operations, starts queued ones. */
int dg_tx_run_completions(dg_tx_t *tx);
/* Owner: takes what other threads put in the outbox. */
int dg_tx_drain_outbox(dg_tx_t *tx);
/* Converts a UCX status into ours, with a detail naming what failed. */
dagger_status_t dg_tx_ucs_error(ucs_status_t st, const char *what, int peer);

/* tx_post.c: posting to UCX, per kind. */
void dg_tx_post(dg_tx_t *tx, dg_tx_op_t *op);

/* tx_recv.c */
dagger_status_t dg_tx_register_channels(dg_tx_t *tx);

/* tx_startup.c: contributes this rank's record (an empty address and the
 * error text when opened is an error: the rank still takes part, so nobody
 * waits for it) and reads everyone's; fills peers and recs, and checks that
 * every rank opened UCX and runs the same build. */
struct dg_tx_record;
dagger_status_t dg_tx_exchange(dg_tx_t *tx, const dg_tx_params_t *prm, dagger_status_t opened,
                               struct dg_tx_record *recs);

/* tx_startup.c: rank r's record read again, when the one of the exchange
 * named a process that is gone; *buf (free it) holds what rec points to. */
dagger_status_t dg_tx_reread_record(dg_tx_t *tx, int r, double wait_s, struct dg_tx_record *rec,
                                    void **buf);

/* tx_lifecycle.c: an endpoint to rank r at address (replacing one there). */
dagger_status_t dg_tx_connect_peer(dg_tx_t *tx, int r, const void *address);

/* tx_lifecycle.c: a singleton's endpoint to itself, made by its first send
 * to itself (post_send, on the owner thread), not at start-up: most
 * singletons never send one, and their dagger_init and dagger_finalize then
 * skip UCP's wire-up and closing of an endpoint (issue 17). Ranks of a job
 * connect to themselves at start-up, as to every other rank. */
dagger_status_t dg_tx_connect_self(dg_tx_t *tx);

/* chan_ctrl.c: the CTRL channel, the start-up handshake (listen before the
 * exchange). */
dagger_status_t dg_tx_listen_hello(dg_tx_t *tx);
dagger_status_t dg_tx_handshake(dg_tx_t *tx);

/* tx_liveness.c: local peers' processes, the launcher's events, SIGTERM. */
dagger_status_t dg_tx_liveness_start(dg_tx_t *tx);
void dg_tx_liveness_stop(dg_tx_t *tx);
/* Installs the SIGTERM handler (once the start-up guard has let go of it). */
void dg_tx_liveness_arm_sigterm(dg_tx_t *tx);

/* progress_wait.c: dg_tx_wait for a message from rank src (-1: from no one
 * in particular). Outside the closing barrier the same as dg_tx_wait. In it
 * (tx->closing) a loss ends the wait only when src is the rank lost, or
 * the closing grace (dg_tx_closing_grace_s, tx_inject.h: 10 s) after a
 * loss was first seen by this wait: a peer
 * that has every part leaves, and its exit is no loss to a rank still
 * waiting for a live rank's part. */
dagger_status_t dg_tx_wait_from(dg_tx_t *tx, int (*done)(void *arg), void *arg, double timeout_s,
                                int src);

/* chan_coll.c: the COLL channel's state and handler. */
dagger_status_t dg_coll_create(dg_tx_t *tx);
void dg_coll_destroy(dg_tx_t *tx);

/* Wakes the owner (any thread), whether it sleeps on the worker's fd or
 * somewhere else. The runtime's worker 0 sleeps on both its own fd and the
 * UCX worker's, and wake() reaches it (deduplicated: one write per sleep);
 * while it owns the engine, the UCX worker's fd is not signalled as well
 * (ucp_worker_signal writes it at every call: one system call per send
 * from another thread). */
static inline void dg_tx_wake_owner(dg_tx_t *tx)
{
    if (!tx->wake || !atomic_load_explicit(&tx->woken_by_wake, memory_order_seq_cst))
        ucp_worker_signal(tx->worker);
    if (tx->wake)
        tx->wake(tx->wake_ctx);
}

#endif
