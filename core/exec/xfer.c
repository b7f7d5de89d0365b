/* SEND and RECV ops over the transport's data channel (see xfer.h). */
#include "core/exec/xfer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/system.h"
#include "core/base/alloc.h"
#include "core/base/common.h"
#include "core/exec/rewrap.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"
#include "core/exec/exec_trace.h"
#include "devices/dev.h"
#include "transport/tx.h"

/* A tag's meeting point: whichever of the RECV op and the data comes first
 * waits here for the other. */
typedef struct dg_rv {
    struct dg_rv *next;
    uint64_t tag;
    dg_xop_t *op;              /* the posted RECV, or NULL */
    dg_rewrap_hdr_t hdr;       /* the arrived header (when op is NULL) */
    int src;
    void *eager;               /* arrived eager bytes (a copy) */
    void *rndv;                /* arrived rendezvous descriptor */
    size_t len;
} dg_rv_t;

#define DG_RV_BUCKETS 1024

/* A RECV whose rendezvous data the owner must pull (dg_xfer_poll). */
typedef struct dg_pull {
    struct dg_pull *next;
    dg_xop_t *op;
    void *rndv;
    size_t len;
} dg_pull_t;

struct dg_xfer {
    dg_exec_t *ex;
    dg_tx_t *tx;
    pthread_mutex_t lock;      /* guards buckets and pulls */
    dg_rv_t *buckets[DG_RV_BUCKETS];
    dg_pull_t *pulls;
    int lost_seen;             /* the receives waiting when a peer was lost have failed */
};

/* A packed receive: the staging buffer and where its bytes go. */
typedef struct dg_unpack {
    dg_xfer_t *xf;
    dg_xop_t *op;
    void *staging;
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
    if (op->u.xfer.staged)
        dg_devs_staged(xf->ex, op);
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

static void send_done(void *arg, dagger_status_t st)
{
    dg_send_ctx_t *s = arg;
    if (st != DAGGER_OK) {
        char msg[160];
        snprintf(msg, sizeof(msg), "sending transfer tag %llx to rank %d failed: %s",
                 (unsigned long long)s->op->u.xfer.tag, s->op->u.xfer.peer, dagger_strerror(st));
        fail_xfer(s->xf, s->op, st, msg);
    }
    free(s->packed);
    xfer_done(s->xf, s->op);
    free(s);
}

void dg_xfer_send(dg_xfer_t *xf, dg_xop_t *op)
{
    if (DG_TRACE_ON())
        dg_trace_xfer_start(op);
    const dg_xxfer_t *x = &op->u.xfer;
    dg_send_ctx_t *s = dg_calloc(1, sizeof(*s));
    const void *payload = NULL;
    if (s && x->bytes && x->staged) {
        payload = x->staged; /* packed by the device's memory-space actor */
    } else if (s && x->bytes && x->base) {
        if (x->nspans == 1) {
            payload = x->base + (size_t)x->spans[0].begin * x->elsize;
        } else {
            s->packed = dg_malloc(x->bytes);
            if (s->packed)
                gather(x, s->packed);
            payload = s->packed;
        }
    }
    if (!s || (x->bytes && !payload)) {
        free(s ? s->packed : NULL);
        free(s);
        fail_xfer(xf, op, DAGGER_ERR_NO_MEMORY, "out of memory packing a transfer");
        xfer_done(xf, op);
        return;
    }
    s->xf = xf;
    s->op = op;
    /* The message header of dagger.mem.rewrap from this rank's memory-space
     * actor to the peer's (the same id on every rank: each spawns it first),
     * then the move_rewrap header as its payload; the children follow. */
    unsigned char hdr[sizeof(dg_msg_hdr_t) + DG_REWRAP_HDR_LEN];
    dagger_actor_addr_t self = xf->ex->space_actor[0];
    dg_msg_hdr_t mh = {.from = self, .to = {x->peer, self.id}, .type = xf->ex->msg.rewrap,
                       .size = DG_REWRAP_HDR_LEN};
    memcpy(hdr, &mh, sizeof(mh));
    dg_rewrap_hdr_t h;
    dg_rewrap_describe(&h, x->tag, x->chunk, x->version, x->elsize, x->spans, x->nspans);
    dg_rewrap_encode(&h, hdr + sizeof(mh));
    dagger_status_t st = dg_tx_send(xf->tx, x->peer, DG_TX_CH_DATA, hdr, sizeof(hdr), payload,
                                    x->bytes, 0, send_done, s);
    if (st != DAGGER_OK)
        send_done(s, st);
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
    if (match && src == x->peer && len == x->bytes)
        return 1;
    if (src != x->peer)
        snprintf(why, sizeof(why), "transfer tag %llx arrived from rank %d, the plan says rank %d",
                 (unsigned long long)x->tag, src, x->peer);
    else if (match)
        snprintf(why, sizeof(why), "transfer tag %llx: %zu bytes arrived, its header and the "
                 "plan say %llu", (unsigned long long)x->tag, len, (unsigned long long)x->bytes);
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
    free(u->staging);
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
        else if (x->nspans == 1 && x->base)
            dst = x->base + (size_t)x->spans[0].begin * x->elsize;
        else
            dst = u->staging = dg_malloc(len);
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
static void queue_pull(dg_xfer_t *xf, dg_xop_t *op, void *rndv, size_t len)
{
    dg_pull_t *p = dg_malloc(sizeof(*p));
    if (!p) {
        fail_xfer(xf, op, DAGGER_ERR_NO_MEMORY, "out of memory receiving a transfer");
        if (op)
            xfer_done(xf, op);
        return; /* the descriptor stays with the transport until it closes */
    }
    *p = (dg_pull_t){NULL, op, rndv, len};
    pthread_mutex_lock(&xf->lock);
    p->next = xf->pulls;
    /* Atomic, though under the lock: dg_xfer_poll peeks without it. */
    __atomic_store_n(&xf->pulls, p, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&xf->lock);
    dg_act_system_wake(xf->ex->actors, 0);
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
    if (!header_ok(xf, op, h, src, len)) {
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

/* Data channel handler (owner thread): checks that the message is a
 * dagger.mem.rewrap for this rank's memory-space actor and hands it over
 * as that message; the actor's turn usually runs right here. */
static int on_data(void *ctx, const dg_tx_msg_t *msg)
{
    dg_xfer_t *xf = ctx;
    dg_msg_hdr_t mh;
    dg_xfer_arrival_t a = {.src = msg->src, .eager = msg->data, .len = msg->len, .rndv = msg->rndv};
    const unsigned char *hb = msg->hdr;
    dagger_actor_addr_t mine = xf->ex->space_actor[0];
    if (msg->hdr_len >= sizeof(mh))
        memcpy(&mh, hb, sizeof(mh));
    if (msg->hdr_len < sizeof(mh) ||
        dg_rewrap_decode(hb + sizeof(mh), msg->hdr_len - sizeof(mh), &a.hdr) ||
        mh.type != xf->ex->msg.rewrap || !dagger_actor_addr_eq(mh.to, mine) ||
        mh.from.rank != msg->src) {
        dg_log(DG_LOG_ERROR, "dropped a data message from rank %d: not a dagger.mem.rewrap "
               "message with a move_rewrap header for this rank's memory-space actor", msg->src);
        if (msg->rndv)
            dg_tx_drop(xf->tx, msg->rndv);
        return 0;
    }
    if (DG_TRACE_ON())
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

void dg_xfer_arrived(dg_xfer_t *xf, const dg_xfer_arrival_t *a)
{
    pthread_mutex_lock(&xf->lock);
    dg_rv_t *rv = rv_take(xf, a->hdr.tag);
    if (rv) {
        pthread_mutex_unlock(&xf->lock);
        dg_xop_t *op = rv->op;
        free(rv);
        complete_recv(xf, op, &a->hdr, a->src, a->eager, a->rndv, a->len, a->settled);
        if (a->owned)
            free((void *)a->eager);
        return;
    }
    rv = dg_calloc(1, sizeof(*rv));
    void *copy = a->owned ? (void *)a->eager : NULL;
    if (!copy && a->eager && a->len && (copy = dg_malloc(a->len)))
        memcpy(copy, a->eager, a->len);
    if (!rv || (a->eager && a->len && !copy)) {
        pthread_mutex_unlock(&xf->lock);
        free(rv);
        free(copy);
        dg_log(DG_LOG_ERROR, "out of memory keeping early transfer tag %llx",
               (unsigned long long)a->hdr.tag);
        if (a->rndv)
            complete_drop(xf, a);
        return;
    }
    *rv = (dg_rv_t){.tag = a->hdr.tag, .hdr = a->hdr, .src = a->src, .eager = copy,
                    .rndv = a->rndv, .len = a->len};
    rv_put(xf, rv);
    pthread_mutex_unlock(&xf->lock);
}

/* A receive that can no longer complete: a rank was lost (the sender, or
 * another rank whose loss ends the job and may hold back the sender). */
static void fail_unreachable(dg_xfer_t *xf, dg_xop_t *op)
{
    dg_tx_health(xf->tx);
    char msg[700];
    snprintf(msg, sizeof(msg), "rank %d: transfer tag %llx from rank %d cannot arrive: %s",
             xf->ex->rank, (unsigned long long)op->u.xfer.tag, op->u.xfer.peer,
             dagger_error_detail());
    fail_xfer(xf, op, DAGGER_ERR_PEER_LOST, msg);
    xfer_done(xf, op); /* a staged device receive gives its staging buffer back */
}

/* Once a rank is lost the job cannot go on: every posted receive still
 * waiting for its data fails now, naming its tag and sender, instead of
 * waiting until the transport's lost_grace_s ends the process. Owner
 * thread; a relaxed load while nobody is lost. */
static void fail_waiting_recvs(dg_xfer_t *xf)
{
    if (DG_LIKELY(xf->lost_seen || dg_tx_lost_rank(xf->tx) < 0))
        return;
    xf->lost_seen = 1;
    dg_rv_t *waiting = NULL;
    pthread_mutex_lock(&xf->lock);
    for (int b = 0; b < DG_RV_BUCKETS; b++)
        for (dg_rv_t **pp = &xf->buckets[b]; *pp;) {
            dg_rv_t *rv = *pp;
            if (!rv->op) {
                pp = &rv->next;
                continue;
            }
            *pp = rv->next;
            rv->next = waiting;
            waiting = rv;
        }
    pthread_mutex_unlock(&xf->lock);
    while (waiting) {
        dg_rv_t *next = waiting->next;
        fail_unreachable(xf, waiting->op);
        free(waiting);
        waiting = next;
    }
}

void dg_xfer_recv(dg_xfer_t *xf, dg_xop_t *op)
{
    if (DG_TRACE_ON())
        dg_trace_xfer_start(op);
    pthread_mutex_lock(&xf->lock);
    dg_rv_t *rv = rv_take(xf, op->u.xfer.tag);
    if (!rv && dg_tx_lost_rank(xf->tx) >= 0) {
        pthread_mutex_unlock(&xf->lock);
        fail_unreachable(xf, op);
        return;
    }
    if (!rv) {
        rv = dg_calloc(1, sizeof(*rv));
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
    pthread_mutex_unlock(&xf->lock);
    complete_recv(xf, op, &rv->hdr, rv->src, rv->eager, rv->rndv, rv->len, NULL);
    free(rv->eager);
    free(rv);
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
        if (p->op)
            pull(xf, p->op, p->rndv, p->len);
        else
            dg_tx_drop(xf->tx, p->rndv);
        free(p);
        p = next;
        n++;
    }
    return n;
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
    dagger_status_t st = dg_tx_set_handler(tx, DG_TX_CH_DATA, on_data, xf);
    if (st != DAGGER_OK) {
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
            if (rv->rndv)
                dg_tx_drop(xf->tx, rv->rndv);
            free(rv->eager);
            free(rv);
        }
    pthread_mutex_destroy(&xf->lock);
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
            if (rv->op)
                dg_log(DG_LOG_ERROR, "  waiting for transfer tag %llx from rank %d (chunk %llu, "
                       "%llu bytes): never arrived", (unsigned long long)rv->tag,
                       rv->op->u.xfer.peer, (unsigned long long)rv->op->u.xfer.chunk,
                       (unsigned long long)rv->op->u.xfer.bytes);
            else
                dg_log(DG_LOG_ERROR, "  transfer tag %llx arrived from rank %d (chunk %llu) but "
                       "this rank has not planned its receive yet", (unsigned long long)rv->tag,
                       rv->src, (unsigned long long)rv->hdr.chunk);
        }
    pthread_mutex_unlock(&xf->lock);
}
