/* SEND and RECV ops over the transport's data channel (see xfer.h). */
#include "core/exec/xfer.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/system.h"
#include "core/base/alloc.h"
#include "core/base/spares.h"
#include "core/base/common.h"
#include "core/exec/rewrap.h"
#include "core/exec/staging.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"
#include "core/exec/exec_trace.h"
#include "transport/coll.h"
#include "transport/tx.h"

/* A transfer in pieces whose RECV and header have met: where its pieces
 * go. Into host memory they land here (dst + offset), counted down by
 * `left`; into device memory (op->u.xfer.pipe) each goes to the device's
 * memory-space actor, which finishes the op (`left` counts the pieces not
 * handed over yet). */
typedef struct dg_rpipe {
    dg_xfer_t *xf;
    dg_xop_t *op;
    dg_rewrap_hdr_t hdr;       /* verified against the RECV */
    uint32_t count;            /* pieces (1: a whole message into a device pipe) */
    _Atomic uint32_t left;
    _Atomic uint64_t got;      /* bytes landed */
    _Atomic int bad;           /* a piece failed (recorded) */
    unsigned char *dst;        /* host: where offset 0 lands */
    unsigned char *packed;     /* host, several spans: a malloc'ed packed copy (dst) */
    unsigned char *seen;       /* a bit per piece index routed (under the xfer lock) */
    int whole;                 /* a whole message into a device pipe (its one piece) */
} dg_rpipe_t;

/* A tag's meeting point: whichever of the RECV op and the data comes first
 * waits here for the other. A transfer in pieces stays until its last
 * piece arrived: pieces before the meeting wait in `early`. */
typedef struct dg_rv {
    struct dg_rv *next;
    uint64_t tag;
    dg_xop_t *op;              /* the posted RECV, or NULL */
    int has_hdr;               /* the header arrived (hdr, src, eager, rndv, len) */
    dg_rewrap_hdr_t hdr;
    int src;
    void *eager;               /* arrived eager bytes (a copy) */
    void *rndv;                /* arrived rendezvous descriptor */
    size_t len;
    dg_xfer_piece_t *early;    /* pieces that came before the meeting */
    dg_rpipe_t *pipe;          /* met, in pieces: where pieces go */
    uint32_t routed;           /* pieces sent on to pipe */
} dg_rv_t;

#define DG_RV_BUCKETS 1024

/* A RECV whose rendezvous data the owner must pull (dg_xfer_poll), or a
 * piece's (done set: into buf), or data to drop (neither). */
typedef struct dg_pull {
    struct dg_pull *next;
    dg_xop_t *op;
    void *rndv;
    size_t len;
    void *buf;
    dg_tx_done_fn done;
    void *arg;
} dg_pull_t;

struct dg_xfer {
    dg_exec_t *ex;
    dg_tx_t *tx;
    pthread_mutex_t lock;      /* guards buckets and pulls */
    dg_rv_t *buckets[DG_RV_BUCKETS];
    dg_pull_t *pulls;
    int lost_seen;             /* the receives waiting when a peer was lost have failed */
    dg_spares_t spare_rv;      /* recycled receive records (dg_rv_t) */
    dg_spares_t spare_send;    /* recycled send contexts (dg_send_ctx_t) */
    dg_staging_t staging;      /* packed sends' and receives' host blocks (staging.h) */
    _Atomic int closed;        /* dg_xfer_close: arrivals are dropped from then on */
    _Atomic int arriving;      /* on_data calls under way (dg_xfer_close waits them out) */
    /* Per rank, for the probe (transport/coll_probe.c): transfers sent to it
     * (their move_rewrap headers; any thread) and arrived from it (lock). */
    _Atomic uint64_t *sent;
    uint64_t *arrived;
};

/* Every receive makes a record and frees it at the meeting, and every send
 * a context freed when the bytes are gone: with calloc and free those were
 * a tenth of a cross-rank Task Bench step's instructions. Freed ones are
 * kept for reuse, at most this many of each. */
#define DG_XFER_SPARE_KEEP 256

/* A packed receive: the staging buffer and where its bytes go. */
typedef struct dg_unpack {
    dg_xfer_t *xf;
    dg_xop_t *op;
    void *staging;             /* from xf->staging, of len bytes */
    size_t len;
} dg_unpack_t;

static dg_rv_t **bucket(dg_xfer_t *xf, uint64_t tag)
{
    uint64_t h = tag * 0x9e3779b97f4a7c15ull;
    return &xf->buckets[(h >> 40) % DG_RV_BUCKETS];
}

/* Unlinks and returns the entry of tag, or NULL. Lock held. */
static dg_rv_t *rv_take(dg_xfer_t *xf, uint64_t tag)
{
    for (dg_rv_t **pp = bucket(xf, tag); *pp; pp = &(*pp)->next)
        if ((*pp)->tag == tag) {
            dg_rv_t *rv = *pp;
            *pp = rv->next;
            return rv;
        }
    return NULL;
}

/* The entry of tag, left in place, or NULL. Lock held. */
static dg_rv_t *rv_find(dg_xfer_t *xf, uint64_t tag)
{
    for (dg_rv_t *rv = *bucket(xf, tag); rv; rv = rv->next)
        if (rv->tag == tag)
            return rv;
    return NULL;
}

static void rv_put(dg_xfer_t *xf, dg_rv_t *rv)
{
    dg_rv_t **b = bucket(xf, rv->tag);
    rv->next = *b;
    *b = rv;
}

static void fail_xfer(dg_xfer_t *xf, dg_xop_t *op, dagger_status_t st, const char *msg)
{
    /* Transfers carry no task; they sort after every task failure. */
    dg_exec_fail(xf->ex, UINT64_MAX - 1, st, msg);
    (void)op;
}

/* An op's end with the wire: a host-staged device transfer goes back to
 * its device's memory-space actor (which unpacks a receive and releases
 * the staging buffer), any other op is finished. */
static void xfer_done(dg_xfer_t *xf, dg_xop_t *op)
{
    if (op->u.xfer.staged || op->u.xfer.pipe)
        xf->ex->dev.staged(xf->ex->dev.ctx, op);
    else
        dg_exec_finish(xf->ex, op);
}

/* ------------------------------------------------------------ scatter/gather */

static void scatter(const dg_xxfer_t *x, const unsigned char *src)
{
    for (uint32_t i = 0; i < x->nspans; i++) {
        size_t len = (size_t)(x->spans[i].end - x->spans[i].begin) * x->elsize;
        memcpy(x->base + (size_t)x->spans[i].begin * x->elsize, src, len);
        src += len;
    }
}

static void gather(const dg_xxfer_t *x, unsigned char *dst)
{
    for (uint32_t i = 0; i < x->nspans; i++) {
        size_t len = (size_t)(x->spans[i].end - x->spans[i].begin) * x->elsize;
        memcpy(dst, x->base + (size_t)x->spans[i].begin * x->elsize, len);
        dst += len;
    }
}

/* ------------------------------------------------------------ sending */

typedef struct dg_send_ctx {
    dg_xfer_t *xf;
    dg_xop_t *op;
    void *packed;
} dg_send_ctx_t;

static void send_failed(const dg_send_ctx_t *s, dagger_status_t st, const char *what)
{
    char msg[200];
    snprintf(msg, sizeof(msg), "sending %s of transfer tag %llx to rank %d failed: %s", what,
             (unsigned long long)s->op->u.xfer.tag, s->op->u.xfer.peer, dagger_strerror(st));
    fail_xfer(s->xf, s->op, st, msg);
}

static void send_done(void *arg, dagger_status_t st)
{
    dg_send_ctx_t *s = arg;
    if (st != DAGGER_OK)
        send_failed(s, st, "the bytes");
    dg_xfer_t *xf = s->xf;
    dg_staging_put(&xf->staging, s->packed, s->op->u.xfer.bytes);
    s->packed = NULL;
    xfer_done(xf, s->op);
    dg_spares_give(&xf->spare_send, s);
}

/* A data-channel message: the message header of a dagger.mem.rewrap or
 * dagger.mem.piece from this rank's memory-space actor to the peer's (the
 * same id on every rank: each spawns it first), then body (the move_rewrap
 * header or the piece's), then the payload (eager or by rendezvous). Its
 * transfer's tag is its order (dg_tx_send_ordered): tags grow in the plan's
 * order, the same on both ranks, so a rendezvous that waits for its receive
 * to be planned cannot hold back, at the flow-control bound, the send of
 * data that an earlier op on the receiver waits for. */
static dagger_status_t send_data(dg_xfer_t *xf, int peer, uint64_t tag, uint32_t type,
                                 const void *body, size_t body_len, const void *payload,
                                 size_t len, dg_tx_done_fn done, void *arg)
{
    unsigned char hdr[sizeof(dg_msg_hdr_t) + DG_REWRAP_HDR_LEN];
    dagger_actor_addr_t self = xf->ex->space_actor[0];
    dg_msg_hdr_t mh = {.from = self, .to = {peer, self.id}, .type = type,
                       .size = (uint32_t)body_len};
    memcpy(hdr, &mh, sizeof(mh));
    memcpy(hdr + sizeof(mh), body, body_len);
    return dg_tx_send_ordered(xf->tx, peer, DG_TX_CH_DATA, hdr, sizeof(mh) + body_len, payload,
                              len, 0, tag, done, arg);
}

/* op's move_rewrap message: the header (pieces: how many piece messages
 * of `piece` bytes follow; 0: the children are its payload). */
static dagger_status_t send_rewrap(dg_xfer_t *xf, const dg_xop_t *op, uint32_t pieces,
                                   uint32_t piece, const void *payload, size_t len,
                                   dg_tx_done_fn done, void *arg)
{
    const dg_xxfer_t *x = &op->u.xfer;
    dg_rewrap_hdr_t h;
    dg_rewrap_describe(&h, x->tag, x->chunk, x->version, x->elsize, x->spans, x->nspans);
    h.pieces = pieces;
    h.piece = piece;
    unsigned char body[DG_REWRAP_HDR_LEN];
    dg_rewrap_encode(&h, body);
    if (xf->sent && x->peer >= 0 && x->peer < xf->ex->nranks)
        atomic_fetch_add_explicit(&xf->sent[x->peer], 1, memory_order_relaxed);
    return send_data(xf, x->peer, x->tag, xf->ex->msg.rewrap, body, sizeof(body), payload, len,
                     done, arg);
}

void dg_xfer_send(dg_xfer_t *xf, dg_xop_t *op)
{
    if (DG_TRACE_ON())
        dg_trace_xfer_start(op);
    const dg_xxfer_t *x = &op->u.xfer;
    dg_send_ctx_t *s = dg_spares_new(&xf->spare_send, sizeof(dg_send_ctx_t));
    const void *payload = NULL;
    size_t len = x->ipc ? x->ipc : x->bytes;
    if (s && len && x->staged) {
        payload = x->staged; /* packed by the device's memory-space actor, or its IPC handle */
    } else if (s && x->bytes && x->base) {
        if (x->nspans == 1) {
            payload = x->base + (size_t)x->spans[0].begin * x->elsize;
        } else {
            s->packed = dg_staging_get(&xf->staging, x->bytes);
            if (s->packed)
                gather(x, s->packed);
            payload = s->packed;
        }
    }
    if (!s || (len && !payload)) {
        if (s)
            dg_staging_put(&xf->staging, s->packed, x->bytes);
        dg_spares_give(&xf->spare_send, s);
        fail_xfer(xf, op, DAGGER_ERR_NO_MEMORY, "out of memory packing a transfer");
        xfer_done(xf, op);
        return;
    }
    s->xf = xf;
    s->op = op;
    dagger_status_t st = send_rewrap(xf, op, 0, 0, payload, len, send_done, s);
    if (st != DAGGER_OK)
        send_done(s, st);
}

static void head_done(void *arg, dagger_status_t st)
{
    dg_send_ctx_t *s = arg;
    if (st != DAGGER_OK)
        send_failed(s, st, "the header");
    dg_spares_give(&s->xf->spare_send, s);
}

void dg_xfer_send_head(dg_xfer_t *xf, dg_xop_t *op, uint32_t pieces, uint32_t piece)
{
    if (DG_TRACE_ON())
        dg_trace_xfer_start(op);
    dg_send_ctx_t *s = dg_spares_new(&xf->spare_send, sizeof(dg_send_ctx_t));
    if (!s) {
        fail_xfer(xf, op, DAGGER_ERR_NO_MEMORY, "out of memory sending a transfer's header");
        return;
    }
    s->xf = xf;
    s->op = op;
    dagger_status_t st = send_rewrap(xf, op, pieces, piece, NULL, 0, head_done, s);
    if (st != DAGGER_OK)
        head_done(s, st);
}

void dg_xfer_send_piece(dg_xfer_t *xf, const dg_xop_t *op, const dg_rewrap_piece_t *p,
                        const void *buf, dg_tx_done_fn done, void *arg)
{
    unsigned char body[DG_REWRAP_PIECE_LEN];
    dg_rewrap_piece_encode(p, body);
    dagger_status_t st = send_data(xf, op->u.xfer.peer, op->u.xfer.tag, xf->ex->msg.piece, body,
                                   sizeof(body), buf, p->bytes, done, arg);
    if (st != DAGGER_OK)
        done(arg, st);
}

/* ------------------------------------------------------------ receiving */

/* The header, the sender and the number of bytes that arrived must all be
 * what this rank planned (a mismatch used to finish the receive silently
 * when only the length differed). */
static int header_ok(dg_xfer_t *xf, dg_xop_t *op, const dg_rewrap_hdr_t *theirs, int src,
                     size_t len)
{
    const dg_xxfer_t *x = &op->u.xfer;
    dg_rewrap_hdr_t mine;
    dg_rewrap_describe(&mine, x->tag, x->chunk, x->version, x->elsize, x->spans, x->nspans);
    char why[400];
    int match = dg_rewrap_match(&mine, theirs, why, sizeof(why));
    size_t want = x->ipc ? x->ipc : x->bytes; /* IPC: the handle message */
    if (match && src == x->peer && len == want)
        return 1;
    if (src != x->peer)
        snprintf(why, sizeof(why), "transfer tag %llx arrived from rank %d, the plan says rank %d",
                 (unsigned long long)x->tag, src, x->peer);
    else if (match)
        snprintf(why, sizeof(why), "transfer tag %llx: %zu bytes arrived, %s %zu",
                 (unsigned long long)x->tag, len,
                 x->ipc ? "this rank expects an IPC handle message of" : "its header and the plan "
                 "say", want);
    char msg[480];
    snprintf(msg, sizeof(msg), "rank %d: %s", xf->ex->rank, why);
    fail_xfer(xf, op, DAGGER_ERR_PROTOCOL, msg);
    return 0;
}

static void unpack_done(void *arg, dagger_status_t st)
{
    dg_unpack_t *u = arg;
    if (st != DAGGER_OK)
        fail_xfer(u->xf, u->op, st, "receiving a transfer failed (a peer was lost?)");
    else if (u->staging)
        scatter(&u->op->u.xfer, u->staging);
    dg_staging_put(&u->xf->staging, u->staging, u->len);
    xfer_done(u->xf, u->op);
    free(u);
}

/* Owner thread: pull rendezvous data for op, straight into place when the
 * view is one span. */
static void pull(dg_xfer_t *xf, dg_xop_t *op, void *rndv, size_t len)
{
    const dg_xxfer_t *x = &op->u.xfer;
    dg_unpack_t *u = dg_calloc(1, sizeof(*u));
    void *dst = NULL;
    if (u) {
        u->xf = xf;
        u->op = op;
        if (x->staged)
            dst = x->staged; /* the device's memory-space actor unpacks it */
        else if (!x->base)
            dst = NULL; /* its buffer could not be allocated (the failure is recorded) */
        else if (x->nspans == 1)
            dst = x->base + (size_t)x->spans[0].begin * x->elsize;
        else
            dst = u->staging = dg_staging_get(&xf->staging, u->len = len);
    }
    if (!u || !dst) {
        dg_tx_drop(xf->tx, rndv);
        if (u)
            free(u);
        fail_xfer(xf, op, DAGGER_ERR_NO_MEMORY, "out of memory receiving a transfer");
        xfer_done(xf, op);
        return;
    }
    if (dg_tx_recv_into(xf->tx, rndv, dst, len, unpack_done, u) != DAGGER_OK)
        unpack_done(u, DAGGER_ERR_TRANSPORT);
}

/* Rendezvous data the owner must pull into op, or drop (op NULL): handed
 * to worker 0, which runs dg_xfer_poll. */
static void queue_pull_into(dg_xfer_t *xf, dg_xop_t *op, void *rndv, size_t len, void *buf,
                            dg_tx_done_fn done, void *arg)
{
    dg_pull_t *p = dg_malloc(sizeof(*p));
    if (!p) {
        fail_xfer(xf, op, DAGGER_ERR_NO_MEMORY, "out of memory receiving a transfer");
        if (done)
            done(arg, DAGGER_ERR_NO_MEMORY);
        else if (op)
            xfer_done(xf, op);
        return; /* the descriptor stays with the transport until it closes */
    }
    *p = (dg_pull_t){NULL, op, rndv, len, buf, done, arg};
    pthread_mutex_lock(&xf->lock);
    p->next = xf->pulls;
    /* Atomic, though under the lock: dg_xfer_poll peeks without it. */
    __atomic_store_n(&xf->pulls, p, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&xf->lock);
    dg_act_system_wake(xf->ex->actors, 0);
}

static void queue_pull(dg_xfer_t *xf, dg_xop_t *op, void *rndv, size_t len)
{
    queue_pull_into(xf, op, rndv, len, NULL, NULL, NULL);
}

void dg_xfer_pull(dg_xfer_t *xf, void *rndv, void *buf, size_t len, dg_tx_done_fn done,
                  void *arg)
{
    queue_pull_into(xf, NULL, rndv, len, buf, done, arg);
}

void dg_xfer_drop(dg_xfer_t *xf, void *rndv)
{
    /* Always by the owner's next poll, never now: this may run inside the
     * transport's callback, which keeps every piece's descriptor. */
    if (rndv)
        queue_pull(xf, NULL, rndv, 0);
}

/* Drops an arrival's rendezvous data (now on the owner, else by it). */
static void complete_drop(dg_xfer_t *xf, const dg_xfer_arrival_t *a)
{
    if (!dg_tx_is_owner(xf->tx)) {
        queue_pull(xf, NULL, a->rndv, a->len);
        return;
    }
    dg_tx_drop(xf->tx, a->rndv);
    if (a->settled)
        *a->settled = 1;
}

/* The RECV op and its data have met. eager: the bytes; otherwise rndv.
 * settled (may be NULL): set when rndv is received or dropped now. */
static void complete_recv(dg_xfer_t *xf, dg_xop_t *op, const dg_rewrap_hdr_t *h, int src,
                          const void *eager, void *rndv, size_t len, int *settled)
{
    /* An IPC receive whose handle message had no buffer (out of memory,
     * recorded): its bytes never go to the view, which is device memory. */
    int lost = op->u.xfer.ipc && !op->u.xfer.staged;
    if (lost || !header_ok(xf, op, h, src, len)) {
        if (rndv && dg_tx_is_owner(xf->tx)) {
            dg_tx_drop(xf->tx, rndv);
            if (settled)
                *settled = 1;
        } else if (rndv) {
            queue_pull(xf, NULL, rndv, len); /* the owner drops it */
        }
        xfer_done(xf, op);
        return;
    }
    if (!rndv) {
        if (len && op->u.xfer.staged)
            memcpy(op->u.xfer.staged, eager, len);
        else if (len && op->u.xfer.base)
            scatter(&op->u.xfer, eager);
        xfer_done(xf, op);
        return;
    }
    if (dg_tx_is_owner(xf->tx)) {
        pull(xf, op, rndv, len);
        if (settled)
            *settled = 1;
        return;
    }
    queue_pull(xf, op, rndv, len);
}

static dagger_status_t keep_eager(void *payload)
{
    dg_xfer_arrival_t *a = payload;
    a->settled = NULL; /* the transport's callback returns before this is handled */
    if (!a->eager || !a->len)
        return DAGGER_OK;
    void *copy = dg_malloc(a->len);
    if (!copy)
        return dg_error(DAGGER_ERR_NO_MEMORY, "out of memory keeping transfer tag %llx",
                        (unsigned long long)a->hdr.tag);
    memcpy(copy, a->eager, a->len);
    a->eager = copy;
    a->owned = 1;
    return DAGGER_OK;
}

/* ------------------------------------------------------------ pieces */

static void rpipe_free(dg_rpipe_t *rp)
{
    if (!rp)
        return;
    free(rp->packed);
    free(rp->seen);
    free(rp);
}

/* Marks p's index routed (xfer lock held): one seen before fails
 * (failed = 2: "arrived twice"); one out of range fails in route_piece. */
static void claim_index(dg_rpipe_t *rp, dg_xfer_piece_t *p)
{
    if (p->failed || p->p.index >= rp->count)
        return;
    unsigned char bit = (unsigned char)(1u << (p->p.index & 7));
    if (rp->seen[p->p.index >> 3] & bit)
        p->failed = 2;
    rp->seen[p->p.index >> 3] |= bit;
}

/* Drops a piece that will not land (its rendezvous bytes, its eager copy). */
static void piece_free(dg_xfer_t *xf, dg_xfer_piece_t *p)
{
    dg_xfer_drop(xf, p->rndv);
    free(p->eager);
    free(p);
}

/* One of rp's pieces landed in host memory (or failed, ok = 0); the last
 * one finishes the RECV. */
static void rpipe_landed(dg_rpipe_t *rp, uint64_t bytes, int ok)
{
    if (!ok)
        atomic_store(&rp->bad, 1);
    atomic_fetch_add(&rp->got, bytes);
    if (atomic_fetch_sub(&rp->left, 1) != 1)
        return;
    dg_xfer_t *xf = rp->xf;
    dg_xop_t *op = rp->op;
    uint64_t got = atomic_load(&rp->got);
    if (!atomic_load(&rp->bad) && got != op->u.xfer.bytes) {
        char msg[300];
        snprintf(msg, sizeof(msg), "rank %d: transfer tag %llx from rank %d: its %u pieces "
                 "brought %llu bytes, its header and the plan say %llu", xf->ex->rank,
                 (unsigned long long)rp->hdr.tag, op->u.xfer.peer, rp->count,
                 (unsigned long long)got, (unsigned long long)op->u.xfer.bytes);
        fail_xfer(xf, op, DAGGER_ERR_PROTOCOL, msg);
    } else if (!atomic_load(&rp->bad) && rp->packed) {
        scatter(&op->u.xfer, rp->packed);
    }
    rpipe_free(rp);
    xfer_done(xf, op);
}

typedef struct dg_land {
    dg_rpipe_t *rp;
    uint64_t bytes;
} dg_land_t;

static void piece_pulled(void *arg, dagger_status_t st)
{
    dg_land_t *l = arg;
    if (st != DAGGER_OK) {
        char msg[200];
        snprintf(msg, sizeof(msg), "receiving a piece of transfer tag %llx failed: %s",
                 (unsigned long long)l->rp->hdr.tag, dagger_strerror(st));
        fail_xfer(l->rp->xf, l->rp->op, st, msg);
    }
    rpipe_landed(l->rp, l->bytes, st == DAGGER_OK);
    free(l);
}

/* Sends piece p of rp's transfer where it goes (no lock held): into host
 * memory here, into device memory through the device's memory-space actor.
 * A piece that does not fit the header (or came from another rank) is a
 * protocol error naming the tag and the view, and counts as failed. */
static void route_piece(dg_xfer_t *xf, dg_rpipe_t *rp, dg_xfer_piece_t *p)
{
    dg_xop_t *op = rp->op;
    char why[400];
    if (p->failed == 2) {
        snprintf(why, sizeof(why), "transfer tag %llx: piece %u of %u arrived twice",
                 (unsigned long long)rp->hdr.tag, p->p.index, rp->count);
    } else if (!p->failed && p->src != op->u.xfer.peer) {
        snprintf(why, sizeof(why), "transfer tag %llx: piece %u arrived from rank %d, the plan "
                 "says rank %d", (unsigned long long)rp->hdr.tag, p->p.index, p->src,
                 op->u.xfer.peer);
        p->failed = 1;
    } else if (!p->failed && !rp->whole &&
               !dg_rewrap_piece_fits(&rp->hdr, &p->p, why, sizeof(why))) {
        p->failed = 1;
    } else {
        why[0] = '\0';
    }
    if (why[0]) {
        char msg[480];
        snprintf(msg, sizeof(msg), "rank %d: %s", xf->ex->rank, why);
        fail_xfer(xf, op, DAGGER_ERR_PROTOCOL, msg);
    }
    if (p->failed) {
        dg_xfer_drop(xf, p->rndv);
        free(p->eager);
        p->rndv = p->eager = NULL;
        p->failed = 1;
    }
    if (op->u.xfer.pipe) { /* the device lands it and finishes op */
        uint32_t count = rp->count;
        if (atomic_fetch_sub(&rp->left, 1) == 1)
            rpipe_free(rp); /* nothing else refers to it: its entry left the table */
        xf->ex->dev.piece(xf->ex->dev.ctx, op, p, count);
        return;
    }
    uint64_t bytes = p->p.bytes;
    if (p->failed) {
        free(p);
        rpipe_landed(rp, 0, 0);
        return;
    }
    unsigned char *dst = rp->dst + p->p.offset;
    if (p->eager) {
        memcpy(dst, p->eager, bytes);
        free(p->eager);
        free(p);
        rpipe_landed(rp, bytes, 1);
        return;
    }
    dg_land_t *l = dg_malloc(sizeof(*l));
    if (!l) {
        fail_xfer(xf, op, DAGGER_ERR_NO_MEMORY, "out of memory receiving a piece of a transfer");
        piece_free(xf, p);
        rpipe_landed(rp, 0, 0);
        return;
    }
    *l = (dg_land_t){rp, bytes};
    queue_pull_into(xf, NULL, p->rndv, bytes, dst, piece_pulled, l);
    free(p);
}

static void route_all(dg_xfer_t *xf, dg_rpipe_t *rp, dg_xfer_piece_t *list)
{
    while (list) {
        dg_xfer_piece_t *next = list->next;
        route_piece(xf, rp, list);
        list = next;
    }
}

/* Whether rv's transfer goes in pieces: announced by its header, or any
 * transfer into a device buffer that expects pieces (a whole message is
 * then its one piece). Lock held. */
static int rv_pieced(const dg_rv_t *rv)
{
    return rv->hdr.pieces || rv->early || rv->op->u.xfer.pipe;
}

/* What a meeting of a pieced transfer leaves to do once the lock is gone. */
typedef struct dg_meet {
    dg_rpipe_t *rp;            /* route `route` through it */
    dg_xfer_piece_t *route;
    dg_xfer_piece_t *drop;     /* pieces that cannot land */
    dg_xop_t *failed;          /* the header was wrong: op ends (xfer_done) */
    dg_rv_t *gone;             /* the entry, out of the table: free it */
} dg_meet_t;

/* The header is wrong for rv's RECV (lock held): why, or "" if it is right. */
static int pieced_header_ok(dg_xfer_t *xf, const dg_rv_t *rv)
{
    const dg_xxfer_t *x = &rv->op->u.xfer;
    char msg[300];
    msg[0] = '\0';
    if (rv->hdr.pieces && rv->len)
        snprintf(msg, sizeof(msg), "rank %d: transfer tag %llx: a header announcing %u pieces "
                 "carried %zu bytes itself", xf->ex->rank, (unsigned long long)x->tag,
                 rv->hdr.pieces, rv->len);
    else if (!rv->hdr.pieces && rv->early)
        snprintf(msg, sizeof(msg), "rank %d: transfer tag %llx: pieces arrived for a transfer "
                 "whose header says it comes whole", xf->ex->rank, (unsigned long long)x->tag);
    if (msg[0]) {
        fail_xfer(xf, rv->op, DAGGER_ERR_PROTOCOL, msg);
        return 0;
    }
    return header_ok(xf, rv->op, &rv->hdr, rv->src, rv->hdr.pieces ? x->bytes : rv->len);
}

/* The landing place of a pipelined RECV's pieces in host memory. */
static int rpipe_dst(dg_rpipe_t *rp)
{
    const dg_xxfer_t *x = &rp->op->u.xfer;
    if (x->pipe)
        return 1;
    if (x->staged)
        rp->dst = x->staged;
    else if (x->nspans == 1 && x->base)
        rp->dst = x->base + (size_t)x->spans[0].begin * x->elsize;
    else
        rp->dst = rp->packed = dg_malloc(x->bytes ? x->bytes : 1);
    return rp->dst != NULL;
}

/* rv's RECV and header have met, and the transfer goes in pieces (lock
 * held): verifies the header, makes rv->pipe, and collects what to route. */
static void meet_pieced(dg_xfer_t *xf, dg_rv_t *rv, dg_meet_t *m)
{
    *m = (dg_meet_t){0};
    dg_rpipe_t *rp = NULL;
    dg_xfer_piece_t *whole = NULL; /* a whole message into a device pipe: its one piece */
    int ok = pieced_header_ok(xf, rv);
    uint32_t count = rv->hdr.pieces ? rv->hdr.pieces : 1;
    if (ok && (!(rp = dg_calloc(1, sizeof(*rp))) || (rp->op = rv->op, !rpipe_dst(rp)) ||
               !(rp->seen = dg_calloc(count / 8 + 1, 1)) ||
               (!rv->hdr.pieces && !(whole = dg_calloc(1, sizeof(*whole)))))) {
        fail_xfer(xf, rv->op, DAGGER_ERR_NO_MEMORY, "out of memory receiving a transfer");
        rpipe_free(rp);
        ok = 0;
    }
    if (!ok) {
        m->failed = rv->op;
        m->drop = rv->early;
        if (rv->rndv) { /* the whole message's bytes, as a piece to drop */
            dg_xfer_piece_t *w = dg_calloc(1, sizeof(*w));
            if (w) {
                w->rndv = rv->rndv;
                w->next = m->drop;
                m->drop = w;
            }
        }
        rv->early = NULL;
        m->gone = rv_take(xf, rv->tag);
        return;
    }
    rp->xf = xf;
    rp->hdr = rv->hdr;
    rp->count = count;
    rp->hdr.pieces = count;
    rp->whole = !rv->hdr.pieces;
    atomic_store(&rp->left, rp->count);
    if (whole) {
        *whole = (dg_xfer_piece_t){.p = {rv->hdr.tag, 0, 1, 0, rv->len}, .src = rv->src,
                                   .failed = !rv->len, .eager = rv->eager, .rndv = rv->rndv,
                                   .next = rv->early};
        rv->eager = rv->rndv = NULL;
        rv->early = whole;
    }
    rv->pipe = rp;
    m->rp = rp;
    for (dg_xfer_piece_t *p = rv->early, *next; p; p = next) {
        next = p->next;
        dg_xfer_piece_t **to = rv->routed < rp->count ? &m->route : &m->drop;
        if (rv->routed < rp->count)
            claim_index(rp, p);
        rv->routed += rv->routed < rp->count;
        p->next = *to;
        *to = p;
    }
    rv->early = NULL;
    if (rv->routed >= rp->count)
        m->gone = rv_take(xf, rv->tag);
}

/* The rest of a meeting, without the lock. */
static void meet_finish(dg_xfer_t *xf, dg_meet_t *m)
{
    for (dg_xfer_piece_t *p = m->drop, *next; p; p = next) {
        next = p->next;
        piece_free(xf, p);
    }
    if (m->gone) {
        free(m->gone->eager);
        dg_spares_give(&xf->spare_rv, m->gone);
    }
    if (m->failed)
        xfer_done(xf, m->failed);
    else
        route_all(xf, m->rp, m->route);
}

void dg_xfer_piece_arrived(dg_xfer_t *xf, const dg_xfer_arrival_t *a)
{
    dg_xfer_piece_t *p = dg_calloc(1, sizeof(*p));
    void *eager = a->owned ? (void *)a->eager : NULL;
    if (p && !eager && a->eager && a->len && (eager = dg_malloc(a->len)))
        memcpy(eager, a->eager, a->len);
    if (!p || (a->eager && a->len && !eager)) {
        free(p);
        free(eager); /* a copy, or the arrival's own copy, which this handler owns */
        dg_log(DG_LOG_ERROR, "out of memory keeping a piece of transfer tag %llx",
               (unsigned long long)a->piece.tag);
        if (a->rndv)
            complete_drop(xf, a);
        return;
    }
    *p = (dg_xfer_piece_t){.p = a->piece, .src = a->src, .eager = a->eager ? eager : NULL,
                           .rndv = a->rndv, .failed = a->len != a->piece.bytes};
    if (p->failed) {
        char msg[300];
        snprintf(msg, sizeof(msg), "rank %d: piece %u of transfer tag %llx from rank %d carried "
                 "%zu bytes, its header says %llu", xf->ex->rank, a->piece.index,
                 (unsigned long long)a->piece.tag, a->src, a->len,
                 (unsigned long long)a->piece.bytes);
        fail_xfer(xf, NULL, DAGGER_ERR_PROTOCOL, msg);
    }
    pthread_mutex_lock(&xf->lock);
    dg_rv_t *rv = rv_find(xf, a->piece.tag);
    if (!rv && (rv = dg_spares_new(&xf->spare_rv, sizeof(dg_rv_t)))) {
        rv->tag = a->piece.tag;
        rv_put(xf, rv);
    }
    if (!rv) {
        pthread_mutex_unlock(&xf->lock);
        dg_log(DG_LOG_ERROR, "out of memory keeping a piece of transfer tag %llx",
               (unsigned long long)a->piece.tag);
        piece_free(xf, p);
        return;
    }
    dg_rpipe_t *rp = rv->pipe;
    if (!rp) {
        p->next = rv->early;
        rv->early = p;
        pthread_mutex_unlock(&xf->lock);
        return;
    }
    claim_index(rp, p);
    if (++rv->routed >= rp->count)
        free(rv_take(xf, rv->tag));
    pthread_mutex_unlock(&xf->lock);
    route_piece(xf, rp, p);
}

/* Keeps an arrived header (and its eager bytes, copied unless owned) in
 * rv. 0, or -1 out of memory. Lock held. */
static int rv_keep_header(dg_rv_t *rv, const dg_xfer_arrival_t *a)
{
    void *copy = a->owned ? (void *)a->eager : NULL;
    if (!copy && a->eager && a->len && (copy = dg_malloc(a->len)))
        memcpy(copy, a->eager, a->len);
    if (a->eager && a->len && !copy)
        return -1;
    rv->has_hdr = 1;
    rv->hdr = a->hdr;
    rv->src = a->src;
    rv->eager = a->eager && a->len ? copy : NULL;
    rv->rndv = a->rndv;
    rv->len = a->len;
    return 0;
}

void dg_xfer_arrived(dg_xfer_t *xf, const dg_xfer_arrival_t *a)
{
    pthread_mutex_lock(&xf->lock);
    /* Counted where the header becomes visible to waiting_from, under the
     * same lock: a count that includes it never meets its receive still
     * looking unanswered (probe_answer). */
    if (a->src >= 0 && a->src < xf->ex->nranks)
        xf->arrived[a->src]++;
    dg_rv_t *rv = rv_find(xf, a->hdr.tag);
    if (rv && rv->op && !rv->has_hdr && !rv->early && !a->hdr.pieces && !rv->op->u.xfer.pipe) {
        rv_take(xf, a->hdr.tag); /* the usual meeting: a whole message for its RECV */
        pthread_mutex_unlock(&xf->lock);
        dg_xop_t *op = rv->op;
        dg_spares_give(&xf->spare_rv, rv);
        complete_recv(xf, op, &a->hdr, a->src, a->eager, a->rndv, a->len, a->settled);
        if (a->owned)
            free((void *)a->eager);
        return;
    }
    int dup = rv && rv->has_hdr, fresh = !rv;
    if (fresh && (rv = dg_spares_new(&xf->spare_rv, sizeof(dg_rv_t))))
        rv->tag = a->hdr.tag;
    if (dup || !rv || rv_keep_header(rv, a)) {
        pthread_mutex_unlock(&xf->lock);
        if (fresh)
            dg_spares_give(&xf->spare_rv, rv);
        dg_log(DG_LOG_ERROR, dup ? "a second header of transfer tag %llx arrived: dropped"
                                 : "out of memory keeping early transfer tag %llx",
               (unsigned long long)a->hdr.tag);
        if (a->owned)
            free((void *)a->eager);
        if (a->rndv)
            complete_drop(xf, a);
        return;
    }
    if (fresh)
        rv_put(xf, rv);
    if (!rv->op) {
        pthread_mutex_unlock(&xf->lock);
        return;
    }
    dg_meet_t m;
    meet_pieced(xf, rv, &m);
    pthread_mutex_unlock(&xf->lock);
    meet_finish(xf, &m);
}

/* An arrival on the data channel (owner thread): checks that the message is
 * a dagger.mem.rewrap for this rank's memory-space actor and hands it over
 * as that message; the actor's turn usually runs right here. */
static int deliver(dg_xfer_t *xf, const dg_tx_msg_t *msg)
{
    if (DG_UNLIKELY(dg_tx_recvs_doomed(xf->tx)) && dg_tx_lost_rank(xf->tx) < 0) {
        /* Diverged: whatever comes was planned by a rank whose plan is not
         * this one's (fail_waiting_recvs). Its sender completes. */
        dg_tx_drop(xf->tx, msg->rndv);
        return 0;
    }
    dg_msg_hdr_t mh;
    dg_xfer_arrival_t a = {.src = msg->src, .eager = msg->data, .len = msg->len, .rndv = msg->rndv};
    const unsigned char *hb = msg->hdr;
    dagger_actor_addr_t mine = xf->ex->space_actor[0];
    int bad = msg->hdr_len < sizeof(mh);
    if (!bad) {
        memcpy(&mh, hb, sizeof(mh));
        a.is_piece = mh.type == xf->ex->msg.piece;
        if (a.is_piece)
            bad = dg_rewrap_piece_decode(hb + sizeof(mh), msg->hdr_len - sizeof(mh), &a.piece);
        else
            bad = mh.type != xf->ex->msg.rewrap ||
                  dg_rewrap_decode(hb + sizeof(mh), msg->hdr_len - sizeof(mh), &a.hdr);
    }
    if (bad || !dagger_actor_addr_eq(mh.to, mine) || mh.from.rank != msg->src) {
        dg_log(DG_LOG_ERROR, "dropped a data message from rank %d: not a dagger.mem.rewrap "
               "message with a move_rewrap header (or a dagger.mem.piece with a piece header) "
               "for this rank's memory-space actor", msg->src);
        if (msg->rndv)
            dg_tx_drop(xf->tx, msg->rndv);
        return 0;
    }
    if (a.is_piece)
        a.hdr.tag = a.piece.tag; /* for the messages below */
    else if (DG_TRACE_ON())
        dg_trace_xfer_arrive(a.hdr.tag, msg->src, msg->len);
    int settled = 0, direct;
    a.settled = &settled;
    dg_act_post_t p = {.from = mh.from, .from_set = 1, .to = mine, .type = mh.type,
                       .payload = &a, .size = sizeof(a), .keep = keep_eager,
                       .what = "move_rewrap arrival"};
    if (dg_exec_post_space(xf->ex, 0, &p, &direct) != DAGGER_OK) {
        char why[400];
        snprintf(why, sizeof(why), "rank %d: transfer tag %llx from rank %d was not delivered to "
                 "the memory-space actor: %s", xf->ex->rank, (unsigned long long)a.hdr.tag,
                 msg->src, dagger_error_detail());
        fail_xfer(xf, NULL, DAGGER_ERR_PROTOCOL, why);
        if (msg->rndv)
            dg_tx_drop(xf->tx, msg->rndv);
        return 0;
    }
    return msg->rndv && !settled ? DG_TX_KEEP : 0;
}

/* Data channel handler (owner thread). Once the layer is closed
 * (dg_xfer_close) an arrival is dropped, its sender completes: the
 * memory-space actors it would go to are stopping, or gone. */
static int on_data(void *ctx, const dg_tx_msg_t *msg)
{
    dg_xfer_t *xf = ctx;
    atomic_fetch_add_explicit(&xf->arriving, 1, memory_order_seq_cst);
    int rc = 0;
    if (DG_UNLIKELY(atomic_load_explicit(&xf->closed, memory_order_seq_cst))) {
        dg_log(DG_LOG_DEBUG, "dropped a data message from rank %d: this rank is finalizing",
               msg->src);
        if (msg->rndv)
            dg_tx_drop(xf->tx, msg->rndv);
    } else {
        rc = deliver(xf, msg);
    }
    atomic_fetch_sub_explicit(&xf->arriving, 1, memory_order_release);
    return rc;
}

void dg_xfer_close(dg_xfer_t *xf)
{
    /* Sequentially consistent on both sides: either on_data sees closed,
     * or this sees its arriving count and waits for the call to end. */
    atomic_store_explicit(&xf->closed, 1, memory_order_seq_cst);
    while (atomic_load_explicit(&xf->arriving, memory_order_seq_cst))
        sched_yield();
}

/* Why receives can no longer complete, in the detail: a rank was lost (the
 * sender, or another rank whose loss ends the job and may hold back the
 * sender), or the ranks' programs diverged (the sender never planned it). */
static dagger_status_t doom(dg_xfer_t *xf)
{
    dagger_status_t st = dg_tx_health(xf->tx);
    return st != DAGGER_OK ? st : dg_tx_divergence(xf->tx);
}

/* A receive that can no longer complete. */
static void fail_unreachable(dg_xfer_t *xf, dg_xop_t *op)
{
    dagger_status_t st = doom(xf);
    char msg[1000];
    snprintf(msg, sizeof(msg), "rank %d: transfer tag %llx from rank %d cannot arrive: %s",
             xf->ex->rank, (unsigned long long)op->u.xfer.tag, op->u.xfer.peer,
             dagger_error_detail());
    fail_xfer(xf, op, st, msg);
    xfer_done(xf, op); /* a staged device receive gives its staging buffer back */
}

/* A receive that waits when a rank was lost: fails now; a transfer in
 * pieces ends with its missing pieces failed (the device still finishes
 * what it holds). rv is out of the table. */
static void fail_waiting(dg_xfer_t *xf, dg_rv_t *rv)
{
    for (dg_xfer_piece_t *p = rv->early, *n; p; p = n) {
        n = p->next;
        piece_free(xf, p);
    }
    dg_rpipe_t *rp = rv->pipe;
    if (!rp) {
        fail_unreachable(xf, rv->op);
        free(rv->eager);
        dg_spares_give(&xf->spare_rv, rv);
        return;
    }
    dagger_status_t st = doom(xf);
    char msg[1000];
    snprintf(msg, sizeof(msg), "rank %d: transfer tag %llx from rank %d cannot arrive (%u of its "
             "%u pieces did): %s", xf->ex->rank, (unsigned long long)rv->tag, rv->op->u.xfer.peer,
             rv->routed, rp->count, dagger_error_detail());
    fail_xfer(xf, rv->op, st, msg);
    uint32_t missing = rp->count - rv->routed;
    dg_spares_give(&xf->spare_rv, rv);
    for (uint32_t i = 0; i < missing; i++) {
        dg_xfer_piece_t *p = dg_calloc(1, sizeof(*p));
        if (!p)
            return; /* out of memory: the op stays (the job ends anyway) */
        p->failed = 1;
        route_piece(xf, rp, p);
    }
}

/* Data that came before its receive was posted, dropped: its rendezvous
 * released (the sender's send completes). Owner thread. */
static void drop_early(dg_xfer_t *xf, dg_rv_t *rv)
{
    if (rv->rndv)
        dg_tx_drop(xf->tx, rv->rndv);
    for (dg_xfer_piece_t *p = rv->early, *pn; p; p = pn) {
        pn = p->next;
        if (p->rndv)
            dg_tx_drop(xf->tx, p->rndv);
        free(p->eager);
        free(p);
    }
    rpipe_free(rv->pipe);
    free(rv->eager);
    free(rv);
}

/* Once a rank is lost, or the ranks diverged, the job cannot go on: every
 * posted receive still waiting for its data fails now, naming its tag and
 * sender, instead of waiting until the transport's lost_grace_s ends the
 * process (or for ever: a sender that diverged never sends). After a
 * divergence the data that came early goes too, so that ranks that still
 * send to this one (their plans differ) are not held in their sends.
 * Owner thread; a relaxed load while neither happened. */
static void fail_waiting_recvs(dg_xfer_t *xf)
{
    if (DG_LIKELY(xf->lost_seen || !dg_tx_recvs_doomed(xf->tx)))
        return;
    xf->lost_seen = 1;
    int diverged = dg_tx_lost_rank(xf->tx) < 0;
    dg_rv_t *waiting = NULL, *early = NULL;
    pthread_mutex_lock(&xf->lock);
    for (int b = 0; b < DG_RV_BUCKETS; b++)
        for (dg_rv_t **pp = &xf->buckets[b]; *pp;) {
            dg_rv_t *rv = *pp;
            if (!rv->op && !diverged) {
                pp = &rv->next;
                continue;
            }
            *pp = rv->next;
            if (rv->op) {
                rv->next = waiting;
                waiting = rv;
            } else {
                rv->next = early;
                early = rv;
            }
        }
    pthread_mutex_unlock(&xf->lock);
    while (waiting) {
        dg_rv_t *next = waiting->next;
        fail_waiting(xf, waiting);
        waiting = next;
    }
    while (early) {
        dg_rv_t *next = early->next;
        drop_early(xf, early);
        early = next;
    }
}

void dg_xfer_recv(dg_xfer_t *xf, dg_xop_t *op)
{
    if (DG_TRACE_ON())
        dg_trace_xfer_start(op);
    pthread_mutex_lock(&xf->lock);
    dg_rv_t *rv = rv_find(xf, op->u.xfer.tag);
    if (!rv && dg_tx_recvs_doomed(xf->tx)) {
        pthread_mutex_unlock(&xf->lock);
        fail_unreachable(xf, op);
        return;
    }
    if (!rv) {
        rv = dg_spares_new(&xf->spare_rv, sizeof(dg_rv_t));
        if (!rv) {
            pthread_mutex_unlock(&xf->lock);
            fail_xfer(xf, op, DAGGER_ERR_NO_MEMORY, "out of memory posting a receive");
            xfer_done(xf, op);
            return;
        }
        rv->tag = op->u.xfer.tag;
        rv->op = op;
        rv_put(xf, rv);
        pthread_mutex_unlock(&xf->lock);
        return;
    }
    rv->op = op;
    if (!rv->has_hdr) { /* only pieces so far */
        pthread_mutex_unlock(&xf->lock);
        return;
    }
    if (rv_pieced(rv)) {
        dg_meet_t m;
        meet_pieced(xf, rv, &m);
        pthread_mutex_unlock(&xf->lock);
        meet_finish(xf, &m);
        return;
    }
    rv_take(xf, rv->tag);
    pthread_mutex_unlock(&xf->lock);
    complete_recv(xf, op, &rv->hdr, rv->src, rv->eager, rv->rndv, rv->len, NULL);
    free(rv->eager);
    dg_spares_give(&xf->spare_rv, rv);
}

int dg_xfer_poll(dg_xfer_t *xf)
{
    fail_waiting_recvs(xf);
    if (!__atomic_load_n(&xf->pulls, __ATOMIC_RELAXED) || !dg_tx_is_owner(xf->tx))
        return 0;
    pthread_mutex_lock(&xf->lock);
    dg_pull_t *p = xf->pulls;
    __atomic_store_n(&xf->pulls, NULL, __ATOMIC_RELAXED); /* see complete_recv */
    pthread_mutex_unlock(&xf->lock);
    int n = 0;
    while (p) {
        dg_pull_t *next = p->next;
        if (p->done) {
            if (dg_tx_recv_into(xf->tx, p->rndv, p->buf, p->len, p->done, p->arg) != DAGGER_OK)
                p->done(p->arg, DAGGER_ERR_TRANSPORT);
        } else if (p->op) {
            pull(xf, p->op, p->rndv, p->len);
        } else {
            dg_tx_drop(xf->tx, p->rndv);
        }
        free(p);
        p = next;
        n++;
    }
    return n;
}

/* ------------------------------------------------------------ waits that cannot end */

/* A receive from peer posted and still without its header. Lock held. */
static dg_rv_t *waiting_from(dg_xfer_t *xf, int peer)
{
    for (int b = 0; b < DG_RV_BUCKETS; b++)
        for (dg_rv_t *rv = xf->buckets[b]; rv; rv = rv->next)
            if (rv->op && !rv->has_hdr && rv->op->u.xfer.peer == peer)
                return rv;
    return NULL;
}

void dg_xfer_probe_stuck(dg_xfer_t *xf)
{
    int n = xf->ex->nranks;
    unsigned char *ask = dg_tx_recvs_doomed(xf->tx) ? NULL : dg_calloc((size_t)n, 1);
    if (!ask)
        return; /* (out of memory: asked again after the next second) */
    pthread_mutex_lock(&xf->lock);
    for (int b = 0; b < DG_RV_BUCKETS; b++)
        for (dg_rv_t *rv = xf->buckets[b]; rv; rv = rv->next)
            if (rv->op && !rv->has_hdr && rv->op->u.xfer.peer >= 0 &&
                rv->op->u.xfer.peer < n && rv->op->u.xfer.peer != xf->ex->rank)
                ask[rv->op->u.xfer.peer] = 1;
    pthread_mutex_unlock(&xf->lock);
    for (int r = 0; r < n; r++)
        if (ask[r])
            dg_tx_probe(xf->tx, r);
    free(ask);
}

static uint64_t probe_sent(void *ctx, int peer)
{
    dg_xfer_t *xf = ctx;
    return atomic_load_explicit(&xf->sent[peer], memory_order_relaxed);
}

/* peer waits at the end of this rank's current region, having sent this
 * rank `sent` transfers in all (owner thread). When every one of them has
 * arrived, a receive from it that still waits has no send: the ranks
 * planned different work. */
static void probe_answer(void *ctx, int peer, uint64_t sent)
{
    dg_xfer_t *xf = ctx;
    if (peer < 0 || peer >= xf->ex->nranks)
        return;
    char why[600];
    pthread_mutex_lock(&xf->lock);
    /* Fewer: some are still on their way (asked again later). */
    dg_rv_t *rv = xf->arrived[peer] == sent ? waiting_from(xf, peer) : NULL;
    if (rv)
        snprintf(why, sizeof(why), "rank %d waits for transfer tag %llx (chunk %llu) from rank %d, "
                 "but rank %d finished the region having sent rank %d %llu transfers, all of "
                 "which arrived: the ranks' programs diverged (they planned different work in "
                 "the same region; DAGGER_CHECK_UNIFORMITY=1 names the first submission that "
                 "differs)", xf->ex->rank, (unsigned long long)rv->tag,
                 (unsigned long long)rv->op->u.xfer.chunk, peer, peer, xf->ex->rank,
                 (unsigned long long)sent);
    pthread_mutex_unlock(&xf->lock);
    if (rv)
        dg_tx_diverge(xf->tx, why);
}

/* ------------------------------------------------------------ lifecycle */

dagger_status_t dg_xfer_create(dg_exec_t *ex, struct dg_tx *tx, dg_xfer_t **out)
{
    dg_xfer_t *xf = dg_calloc(1, sizeof(*xf));
    if (!xf)
        return DAGGER_ERR_NO_MEMORY;
    xf->ex = ex;
    xf->tx = tx;
    pthread_mutex_init(&xf->lock, NULL);
    dg_spares_init(&xf->spare_rv, DG_XFER_SPARE_KEEP);
    dg_spares_init(&xf->spare_send, DG_XFER_SPARE_KEEP);
    dg_staging_init(&xf->staging, ex->bufs.spaces[0].huge);
    int n = ex->nranks > 0 ? ex->nranks : 1;
    xf->sent = dg_calloc((size_t)n, sizeof(*xf->sent));
    xf->arrived = dg_calloc((size_t)n, sizeof(*xf->arrived));
    dagger_status_t st = xf->sent && xf->arrived
                             ? dg_tx_set_handler(tx, DG_TX_CH_DATA, on_data, xf)
                             : DAGGER_ERR_NO_MEMORY;
    if (st == DAGGER_OK)
        dg_tx_set_probe(tx, probe_sent, probe_answer, xf);
    if (st != DAGGER_OK) {
        free(xf->sent);
        free(xf->arrived);
        dg_spares_destroy(&xf->spare_rv);
        dg_spares_destroy(&xf->spare_send);
        dg_staging_cleanup(&xf->staging);
        pthread_mutex_destroy(&xf->lock);
        free(xf);
        return st;
    }
    *out = xf;
    return DAGGER_OK;
}

void dg_xfer_destroy(dg_xfer_t *xf)
{
    for (int b = 0; b < DG_RV_BUCKETS; b++)
        for (dg_rv_t *rv = xf->buckets[b], *n; rv; rv = n) {
            n = rv->next;
            drop_early(xf, rv);
        }
    dg_spares_destroy(&xf->spare_rv);
    dg_spares_destroy(&xf->spare_send);
    dg_staging_cleanup(&xf->staging);
    pthread_mutex_destroy(&xf->lock);
    free(xf->sent);
    free(xf->arrived);
    free(xf);
}

void dg_xfer_dump(dg_xfer_t *xf)
{
    pthread_mutex_lock(&xf->lock);
    int shown = 0;
    for (int b = 0; b < DG_RV_BUCKETS && shown < 32; b++)
        for (dg_rv_t *rv = xf->buckets[b]; rv && shown < 32; rv = rv->next, shown++) {
            if (DG_TRACE_ON())
                dg_trace_hang_rv(rv->op != NULL, rv->tag, rv->op ? rv->op->u.xfer.peer : rv->src,
                                 rv->op ? rv->op->u.xfer.chunk : rv->hdr.chunk,
                                 rv->op ? rv->op->u.xfer.bytes : rv->len);
            if (rv->op && rv->pipe)
                dg_log(DG_LOG_ERROR, "  waiting for transfer tag %llx from rank %d (chunk %llu, "
                       "%llu bytes): %u of its %u pieces arrived", (unsigned long long)rv->tag,
                       rv->op->u.xfer.peer, (unsigned long long)rv->op->u.xfer.chunk,
                       (unsigned long long)rv->op->u.xfer.bytes, rv->routed, rv->pipe->count);
            else if (rv->op)
                dg_log(DG_LOG_ERROR, "  waiting for transfer tag %llx from rank %d (chunk %llu, "
                       "%llu bytes): %s", (unsigned long long)rv->tag,
                       rv->op->u.xfer.peer, (unsigned long long)rv->op->u.xfer.chunk,
                       (unsigned long long)rv->op->u.xfer.bytes,
                       rv->early ? "its header never arrived (pieces did)" : "never arrived");
            else if (!rv->has_hdr)
                dg_log(DG_LOG_ERROR, "  pieces of transfer tag %llx arrived from rank %d but this "
                       "rank has not planned its receive yet", (unsigned long long)rv->tag,
                       rv->early->src);
            else
                dg_log(DG_LOG_ERROR, "  transfer tag %llx arrived from rank %d (chunk %llu) but "
                       "this rank has not planned its receive yet", (unsigned long long)rv->tag,
                       rv->src, (unsigned long long)rv->hdr.chunk);
        }
    pthread_mutex_unlock(&xf->lock);
}
