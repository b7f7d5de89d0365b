/* Collectives' private state: call signatures, the message header, the
 * inbox of arrived messages and the tree algorithm (see coll.h). */
#ifndef DG_COLL_INTERNAL_H
#define DG_COLL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "transport/coll.h"
#include "transport/coll_wire.h"
#include "transport/tx_internal.h"

typedef struct dg_coll dg_coll_t;

typedef struct dg_coll_msg {
    struct dg_coll_msg *next;
    dg_coll_t *coll;
    dg_coll_hdr_t hdr;
    int src;
    unsigned char *data;        /* malloc'ed payload */
    size_t len;
    int ready;                  /* payload complete (rendezvous done) */
    dagger_status_t status;     /* of the rendezvous receive */
} dg_coll_msg_t;

struct dg_coll {
    dg_tx_t *tx;
    pthread_mutex_t lock;       /* inbox and the messages' ready flags */
    dg_coll_msg_t *inbox;       /* arrived, not yet taken; any order */
    _Atomic uint64_t seq;       /* the next collective's number (caller thread; read by
                                   coll_foresee.c's checks) */
    dg_coll_sig_t expect;       /* with expect_set: this rank's next call (dg_coll_expect) */
    int expect_set;
    int flat_max;               /* the flat exchange up to this many ranks (DG_COLL_FLAT_MAX) */
    /* The message the caller waits for now, for the hang limit (watchdog). */
    _Atomic uint64_t wait_seq;
    _Atomic int wait_src;
    _Atomic long long wait_since_ms; /* CLOCK_MONOTONIC; 0: not waiting */
    dg_tx_planned_t planned;    /* for probes (coll.h); its ring NULL on one rank */
};

/* chan_coll.c: the COLL channel's handler and waiting for one message. */
int dg_coll_on_msg(void *ctx, const dg_tx_msg_t *msg);
dagger_status_t dg_coll_take(dg_coll_t *c, uint64_t seq, int phase, int src, dg_coll_msg_t **out);
void dg_coll_msg_free(dg_coll_msg_t *m);
/* coll_foresee.c: a message just put in the inbox (m: a copy of its header
 * and sender) arrived: marks the divergence when it proves one. Without
 * c->lock. */
void dg_coll_foresee_msg(dg_coll_t *c, const dg_coll_msg_t *m);
/* A NOTE from src: it found the programs diverged, saying how in text. */
void dg_coll_foresee_note(dg_coll_t *c, int src, const void *text, size_t len);
/* coll_probe.c: a PROBE or ANSWER from src (owner thread); the planned
 * tasks' ring (DG_TX_PLANNED entries, zeroed). */
void dg_coll_probe_on_msg(dg_coll_t *c, int src, const dg_coll_hdr_t *h);
dagger_status_t dg_coll_planned_init(dg_coll_t *c);
/* coll.c: whether two calls match; what s calls, in words, with the
 * details in which it differs from other (NULL: none but its own). */
int dg_coll_same_sig(const dg_coll_sig_t *a, const dg_coll_sig_t *b);
void dg_coll_describe(const dg_coll_sig_t *s, const dg_coll_sig_t *other, char *buf, size_t cap);

/* A growable byte buffer. */
typedef struct dg_coll_buf {
    unsigned char *p;
    size_t len, cap;
} dg_coll_buf_t;
dagger_status_t dg_coll_buf_append(dg_coll_buf_t *b, const void *src, size_t len);
void dg_coll_buf_free(dg_coll_buf_t *b);

/* One collective call on this rank. */
typedef struct dg_coll_call dg_coll_call_t;
struct dg_coll_call {
    dg_tx_t *tx;
    dg_coll_sig_t sig;
    uint64_t seq;
    dagger_status_t local;      /* this rank's own argument error: it still takes part */
    /* Folds a child subtree's part (higher ranks) into acc (lower ranks). */
    dagger_status_t (*merge)(dg_coll_call_t *call, dg_coll_buf_t *acc, const void *in,
                             size_t len);
    dagger_combine_fn combine;  /* allreduce_bytes */
    void *combine_ctx;
    _Atomic(int) sends_left;
    _Atomic(int) send_failed;
    /* A part held back by dg_tx_inject_late_part (tx_inject.h): sent by
     * dg_coll_finish_sends. */
    const dg_coll_buf_t *late_buf;
    int late_dest, late_phase, late_fail, late_ms; /* late_ms: the hold after a loss */
};

/* coll.c: runs a collective: the tree's up and down phases, or on at most
 * DG_COLL_FLAT_MAX ranks the flat exchange (coll_flat.c). acc holds this
 * rank's part and is consumed; on success *result holds the tree's result
 * at rank 0 (caller frees it). */
dagger_status_t dg_coll_run(dg_coll_call_t *call, dg_coll_buf_t *acc, dg_coll_buf_t *result);
/* Starts a call: numbers it and fills the common fields. */
void dg_coll_call_init(dg_coll_call_t *call, dg_tx_t *tx, const dg_coll_sig_t *sig);

/* coll.c, shared by both algorithms: the failure every rank reports (set
 * once), folding the part src sent to node into acc as the tree's node does
 * (or recording why the call failed), and this call's sends. */
void dg_coll_fail_with(dagger_status_t st, dg_coll_buf_t *text, int *fail, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void dg_coll_absorb(dg_coll_call_t *call, int node, const dg_coll_sig_t *node_sig, int src,
                    const dg_coll_hdr_t *h, const void *data, size_t len, dg_coll_buf_t *acc,
                    int *fail, dg_coll_buf_t *text);
void dg_coll_send_part(dg_coll_call_t *call, int dest, int phase, int fail, const dg_coll_buf_t *b);
/* Waits for this call's sends; st, or the first send error. */
dagger_status_t dg_coll_finish_sends(dg_coll_call_t *call, dagger_status_t st);
/* What the caller gets: st, else the agreed verdict's error with text's
 * bytes as its detail, else res moved into *result. Frees the rest (text
 * and res may be the same buffer). */
dagger_status_t dg_coll_outcome(dagger_status_t st, int verdict, dg_coll_buf_t *text,
                                dg_coll_buf_t *res, dg_coll_buf_t *result);

/* coll_flat.c: the one-round exchange for small rank counts (coll.h). Each rank
 * sends its own part to every other rank and replays the tree's folds over
 * all the parts, so it returns what the tree would: the same status, text
 * and bytes on every rank, folded in the same order. Depth 1 message
 * instead of 2*ceil(log2 n); n*(n-1) messages instead of 2*(n-1). */
dagger_status_t dg_coll_run_flat(dg_coll_call_t *call, dg_coll_buf_t *acc, dg_coll_buf_t *result);

/* coll_reduce.c: element-wise reductions. */
size_t dg_coll_type_size(dagger_dtype_t type);
int dg_coll_op_valid(dagger_dtype_t type, dagger_op_t op);
void dg_coll_reduce(dagger_dtype_t type, dagger_op_t op, void *acc, const void *in,
                    size_t count);
const char *dg_coll_type_name(int type);
const char *dg_coll_op_name(int op);

#endif
