/* Host-staged transfers of device memory between ranks, in pieces
 * (DAGGER_GPU_PIPELINE_PIECE; docs/devices.md, "Between ranks"): so that
 * the copies between the device and pinned memory overlap the wire.
 *
 * Sender: the spans are packed on the device once (several spans: into
 * device scratch), the move_rewrap header leaves announcing the pieces,
 * and piece i is copied to a pinned buffer on the copy stream and sent as
 * soon as its event passed, while piece i + 1 is being copied. At most
 * DG_PIPE_DEPTH pinned buffers per transfer are in use (staging or on the
 * wire); a buffer whose piece left stages the next one.
 *
 * Receiver: xfer.c hands each piece over once the RECV met its header
 * (dagger.dev.piece, ARRIVED); it lands in a pinned buffer (pulled by the
 * transport's owner), is copied to the device (into place, or into scratch
 * that one unpack kernel scatters at the end), and its buffer goes back,
 * while the next pieces arrive. At most DG_PIPE_DEPTH buffers again: later
 * pieces wait with their bytes still at the sender.
 *
 * All state is the memory-space actor's, touched in its turns only: the
 * transport's completions come back as dagger.dev.piece messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/system.h"
#include "core/base/alloc.h"
#include "core/base/status_internal.h"
#include "core/exec/exec.h"
#include "core/exec/xfer.h"
#include "devices/dev.h"

#define DG_PIPE_DEPTH 3 /* pinned buffers in use per transfer */

typedef struct dg_pipe {
    unsigned char *flat;      /* the packed bytes on the device: the one span, or scratch */
    void *scratch;            /* device scratch of several spans (packed) */
    uint64_t piece;           /* sender: bytes per piece */
    uint32_t count;           /* pieces; receiver: 0 until the first one says */
    uint32_t next;            /* sender: the next piece to stage */
    uint32_t done;            /* pieces sent, or copied to the device */
    uint32_t copying;         /* pieces between device and pinned memory */
    uint32_t wire;            /* sender: pieces on the wire; receiver: pieces landing */
    dg_xfer_piece_t *waiting; /* receiver: pieces waiting for a buffer, in arrival order */
    dg_xfer_piece_t **tail;
} dg_pipe_t;

/* dagger.dev.piece: what happened to a piece outside the actor's turn. */
enum { DG_PIPE_SENT = 1, DG_PIPE_ARRIVED = 2, DG_PIPE_LANDED = 3 };

typedef struct dg_dev_piece_msg {
    dg_xop_t *op;
    int32_t what;             /* DG_PIPE_* */
    int32_t status;           /* SENT, LANDED: the transport's */
    uint32_t count;           /* ARRIVED: the transfer's pieces */
    uint32_t pad;
    dg_xfer_piece_t *piece;   /* ARRIVED */
    void *buf;                /* SENT, LANDED: the piece's pinned buffer... */
    uint64_t offset, bytes;   /* ...and where its bytes belong */
} dg_dev_piece_msg_t;

dagger_status_t dg_dev_piece_type(dg_devs_t *ds)
{
    return dg_devs_type(ds, "dagger.dev.piece", sizeof(dg_dev_piece_msg_t), &ds->msg.piece);
}

static dg_dev_t *dev_of_op(dg_devs_t *ds, const dg_xop_t *op)
{
    return &ds->dev[op->u.xfer.space - 1];
}

/* Any thread: m to the memory-space actor of op's device. */
static void post_piece(dg_dev_t *d, const dg_dev_piece_msg_t *m)
{
    dg_dev_side_t *sd = &d->side[DG_DEV_SIDE_SPACE];
    dg_act_post_t p = {.to = sd->addr, .type = d->all->msg.piece, .payload = m,
                       .size = sizeof(*m), .what = "transfer piece"};
    int direct;
    if (dg_act_post_local(d->ex->actors, sd->obj, &p, &direct) != DAGGER_OK) {
        char msg[300];
        snprintf(msg, sizeof(msg), "a piece of transfer tag %llx did not reach %s: %s",
                 (unsigned long long)m->op->u.xfer.tag, d->label, dagger_error_detail());
        dg_exec_fail(d->ex, UINT64_MAX - 1, DAGGER_ERR_INTERNAL, msg); /* the op stays */
    }
}

static void pipe_fail(dg_dev_t *d, const dg_xop_t *op, dagger_status_t st, const char *what)
{
    char msg[400];
    snprintf(msg, sizeof(msg), "%s (transfer tag %llx) on %s of rank %d: %s", what,
             (unsigned long long)op->u.xfer.tag, d->label, d->ex->rank, dagger_error_detail());
    dg_exec_fail(d->ex, UINT64_MAX - 1, st, msg);
}

/* The packed bytes' place on the device: the view's one span, or scratch. */
static dagger_status_t pipe_flat(dg_dev_t *d, dg_pipe_t *pp, const dg_xxfer_t *x)
{
    if (x->nspans == 1) {
        pp->flat = x->base + (size_t)x->spans[0].begin * x->elsize;
        return DAGGER_OK;
    }
    dagger_status_t st = dg_dev_cache_get(d, &d->mem, x->bytes, &pp->scratch);
    pp->flat = pp->scratch;
    return st;
}

/* Frees the pipe; the op is finished by the caller. */
static void pipe_free(dg_dev_t *d, dg_xop_t *op)
{
    dg_pipe_t *pp = op->u.xfer.pipe;
    if (pp->scratch)
        dg_dev_cache_put(d, &d->mem, pp->scratch, op->u.xfer.bytes);
    free(pp);
    op->u.xfer.pipe = NULL;
}

/* ------------------------------------------------------------ sending */

/* A piece the transport works on: what to tell the actor when it is done. */
typedef struct dg_pipe_wire {
    dg_dev_t *d;
    dg_dev_piece_msg_t m;
} dg_pipe_wire_t;

/* The transport's owner: a piece left (SENT) or landed (LANDED). */
static void wire_done(void *arg, dagger_status_t st)
{
    dg_pipe_wire_t *w = arg;
    w->m.status = st;
    post_piece(w->d, &w->m);
    free(w);
}

/* A piece's bytes are in pinned memory: it leaves now. */
static void piece_staged(dg_dev_t *d, dg_dev_pending_t *p, int ok)
{
    dg_xop_t *op = p->op;
    dg_pipe_t *pp = op->u.xfer.pipe;
    pp->copying--;
    if (!ok) /* recorded; the receiver still gets bytes */
        memset(p->buf, 0, p->bytes);
    dg_pipe_wire_t *s = dg_malloc(sizeof(*s));
    dg_rewrap_piece_t pc = {op->u.xfer.tag, p->index, pp->count, p->offset, p->bytes};
    if (s)
        *s = (dg_pipe_wire_t){d, {.op = op, .what = DG_PIPE_SENT, .buf = p->buf,
                                  .offset = p->offset, .bytes = p->bytes}};
    pp->wire++;
    atomic_fetch_add_explicit(&d->pieces, 1, memory_order_relaxed);
    if (!s) {
        pipe_fail(d, op, DAGGER_ERR_NO_MEMORY, "out of memory sending a piece");
        dg_pipe_wire_t now = {d, {.op = op, .what = DG_PIPE_SENT, .buf = p->buf,
                                  .bytes = p->bytes, .status = DAGGER_ERR_NO_MEMORY}};
        post_piece(d, &now.m);
        return;
    }
    dg_xfer_send_piece(d->ex->xfer, op, &pc, p->buf, wire_done, s);
}

/* A SEND whose pieces all left (or failed) ends. */
static void send_check(dg_dev_t *d, dg_xop_t *op)
{
    dg_pipe_t *pp = op->u.xfer.pipe;
    if (pp->done == pp->count && !pp->copying && !pp->wire) {
        pipe_free(d, op);
        dg_exec_finish(d->ex, op);
    }
}

/* Stages pieces while fewer than DG_PIPE_DEPTH buffers are in use. */
static void stage_more(dg_dev_t *d, dg_xop_t *op)
{
    dg_pipe_t *pp = op->u.xfer.pipe;
    while (pp->next < pp->count && pp->copying + pp->wire < DG_PIPE_DEPTH) {
        uint32_t i = pp->next++;
        uint64_t off = (uint64_t)i * pp->piece;
        uint64_t len = op->u.xfer.bytes - off < pp->piece ? op->u.xfer.bytes - off : pp->piece;
        dg_dev_pending_t what = {.op = op, .done = piece_staged, .index = i, .offset = off,
                                 .bytes = len};
        dagger_status_t st = dg_dev_cache_get(d, &d->pinned, len, &what.buf);
        if (st == DAGGER_OK && pp->wire) /* this copy runs while another piece is on the wire */
            atomic_fetch_add_explicit(&d->overlapped, 1, memory_order_relaxed);
        if (st == DAGGER_OK)
            st = d->be->copy(d->copy_stream, what.buf, pp->flat + off, len, DG_DEV_D2H);
        if (st != DAGGER_OK) {
            pipe_fail(d, op, st, "staging a piece of a transfer");
            if (!what.buf) { /* nothing to send it from: the receiver waits (the region fails) */
                pp->done++;
                continue;
            }
        }
        pp->copying++;
        dg_dev_pend(d, DG_DEV_SIDE_SPACE, d->copy_stream, &what);
    }
}

int dg_dev_pipe_send(dg_dev_t *d, dg_xop_t *op)
{
    dg_xxfer_t *x = &op->u.xfer;
    size_t piece = d->all->piece;
    if (!piece || x->bytes <= piece)
        return 0;
    dg_pipe_t *pp = dg_calloc(1, sizeof(*pp));
    dg_dev_span_t *spans = NULL;
    dagger_status_t st = pp ? pipe_flat(d, pp, x) : DAGGER_ERR_NO_MEMORY;
    if (st == DAGGER_OK && pp->scratch) { /* several spans: packed on the device once */
        spans = dg_dev_byte_spans(x->spans, x->nspans, x->elsize);
        st = spans ? d->be->pack(d->copy_stream, pp->scratch, x->base, spans, x->nspans, 0)
                   : DAGGER_ERR_NO_MEMORY;
        free(spans);
    }
    if (st != DAGGER_OK) { /* the whole path tries (and reports) */
        if (pp && pp->scratch)
            dg_dev_cache_put(d, &d->mem, pp->scratch, x->bytes);
        free(pp);
        return 0;
    }
    pp->piece = piece;
    pp->count = (uint32_t)((x->bytes + piece - 1) / piece);
    x->pipe = pp;
    atomic_fetch_add_explicit(&d->staged, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&d->piped, 1, memory_order_relaxed);
    dg_xfer_send_head(d->ex->xfer, op, pp->count, (uint32_t)pp->piece);
    stage_more(d, op);
    send_check(d, op); /* only when no piece could be staged at all */
    return 1;
}

/* SENT: a piece is off the wire; its buffer goes back, the next stages. */
static void on_sent(dg_dev_t *d, const dg_dev_piece_msg_t *m)
{
    dg_xop_t *op = m->op;
    dg_pipe_t *pp = op->u.xfer.pipe;
    if (m->status != DAGGER_OK) {
        char msg[200];
        snprintf(msg, sizeof(msg), "sending a piece of transfer tag %llx to rank %d failed: %s",
                 (unsigned long long)op->u.xfer.tag, op->u.xfer.peer,
                 dagger_strerror((dagger_status_t)m->status));
        dg_exec_fail(d->ex, UINT64_MAX - 1, (dagger_status_t)m->status, msg);
    }
    dg_dev_cache_put(d, &d->pinned, m->buf, m->bytes);
    pp->wire--;
    pp->done++;
    stage_more(d, op);
    send_check(d, op);
}

/* ------------------------------------------------------------ receiving */

int dg_dev_pipe_recv(dg_dev_t *d, dg_xop_t *op)
{
    dg_xxfer_t *x = &op->u.xfer;
    size_t piece = d->all->piece;
    if (!piece || x->bytes <= piece)
        return 0;
    dg_pipe_t *pp = dg_calloc(1, sizeof(*pp));
    if (!pp || pipe_flat(d, pp, x) != DAGGER_OK) {
        if (pp && pp->scratch)
            dg_dev_cache_put(d, &d->mem, pp->scratch, x->bytes);
        free(pp);
        return 0;
    }
    pp->tail = &pp->waiting;
    x->pipe = pp;
    atomic_fetch_add_explicit(&d->staged, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&d->piped, 1, memory_order_relaxed);
    return 1;
}

/* Every piece is on the device: unpack several spans, then the op ends. */
static void recv_finish(dg_dev_t *d, dg_xop_t *op)
{
    dg_pipe_t *pp = op->u.xfer.pipe;
    const dg_xxfer_t *x = &op->u.xfer;
    if (!pp->scratch) {
        pipe_free(d, op);
        dg_exec_finish(d->ex, op);
        return;
    }
    dg_dev_pending_t what = {.op = op, .done = dg_dev_op_done, .scratch = pp->scratch,
                             .scratch_bytes = x->bytes};
    pp->scratch = NULL; /* released after the unpack */
    dg_dev_span_t *spans = dg_dev_byte_spans(x->spans, x->nspans, x->elsize);
    dagger_status_t st = spans ? d->be->pack(d->copy_stream, x->base, what.scratch, spans,
                                             x->nspans, 1)
                               : DAGGER_ERR_NO_MEMORY;
    free(spans);
    if (st != DAGGER_OK)
        pipe_fail(d, op, st, "unpacking a transfer into device memory");
    pipe_free(d, op);
    dg_dev_pend(d, DG_DEV_SIDE_SPACE, d->copy_stream, &what);
}

static void piece_counted(dg_dev_t *d, dg_xop_t *op);

/* A piece is on the device: its buffer goes back (dg_dev_pend's settle). */
static void piece_copied(dg_dev_t *d, dg_dev_pending_t *p, int ok)
{
    (void)ok; /* recorded by the poll */
    dg_pipe_t *pp = p->op->u.xfer.pipe;
    pp->copying--;
    piece_counted(d, p->op);
}

/* LANDED, or an eager piece: the bytes are in m->buf; to the device. */
static void copy_in(dg_dev_t *d, dg_xop_t *op, void *buf, uint64_t offset, uint64_t bytes)
{
    dg_pipe_t *pp = op->u.xfer.pipe;
    if (pp->wire) /* this copy runs while another piece is still arriving */
        atomic_fetch_add_explicit(&d->overlapped, 1, memory_order_relaxed);
    dg_dev_pending_t what = {.op = op, .done = piece_copied, .staging = buf,
                             .staging_bytes = bytes};
    dagger_status_t st = d->be->copy(d->copy_stream, pp->flat + offset, buf, bytes, DG_DEV_H2D);
    if (st != DAGGER_OK)
        pipe_fail(d, op, st, "copying a piece of a transfer to the device");
    pp->copying++;
    dg_dev_pend(d, DG_DEV_SIDE_SPACE, d->copy_stream, &what);
}


/* Lands waiting pieces while fewer than DG_PIPE_DEPTH buffers are in use. */
static void land_more(dg_dev_t *d, dg_xop_t *op)
{
    dg_pipe_t *pp = op->u.xfer.pipe;
    while (pp->waiting && pp->copying + pp->wire < DG_PIPE_DEPTH) {
        dg_xfer_piece_t *p = pp->waiting;
        if (!(pp->waiting = p->next))
            pp->tail = &pp->waiting;
        uint64_t off = p->p.offset, len = p->p.bytes;
        void *buf = NULL;
        dg_pipe_wire_t *l = NULL;
        dagger_status_t st = dg_dev_cache_get(d, &d->pinned, len, &buf);
        if (st == DAGGER_OK && !p->eager && !(l = dg_malloc(sizeof(*l))))
            st = DAGGER_ERR_NO_MEMORY;
        atomic_fetch_add_explicit(&d->pieces, 1, memory_order_relaxed);
        if (st != DAGGER_OK) {
            pipe_fail(d, op, st, "no staging memory for a piece of a transfer");
            if (buf)
                dg_dev_cache_put(d, &d->pinned, buf, len);
            dg_xfer_drop(d->ex->xfer, p->rndv);
            free(p->eager);
            free(p);
            pp->done++;
            continue;
        }
        if (p->eager) {
            memcpy(buf, p->eager, len);
            free(p->eager);
            free(p);
            copy_in(d, op, buf, off, len);
            continue;
        }
        *l = (dg_pipe_wire_t){d, {.op = op, .what = DG_PIPE_LANDED, .buf = buf,
                                     .offset = off, .bytes = len}};
        pp->wire++;
        dg_xfer_pull(d->ex->xfer, p->rndv, buf, len, wire_done, l);
        free(p);
    }
}

/* Lands what waits; ends the RECV once every piece is in. */
static void recv_more(dg_dev_t *d, dg_xop_t *op)
{
    dg_pipe_t *pp = op->u.xfer.pipe;
    land_more(d, op);
    if (pp->count && pp->done == pp->count && !pp->copying && !pp->wire)
        recv_finish(d, op);
}

/* A piece finished (copied in, or failed). */
static void piece_counted(dg_dev_t *d, dg_xop_t *op)
{
    dg_pipe_t *pp = op->u.xfer.pipe;
    pp->done++;
    recv_more(d, op);
}

/* ARRIVED: a piece for this RECV (xfer.c verified it, or failed it). */
static void on_arrived(dg_dev_t *d, const dg_dev_piece_msg_t *m)
{
    dg_xop_t *op = m->op;
    dg_pipe_t *pp = op->u.xfer.pipe;
    dg_xfer_piece_t *p = m->piece;
    pp->count = m->count;
    if (p->failed) {
        free(p);
        piece_counted(d, op);
        return;
    }
    p->next = NULL;
    *pp->tail = p;
    pp->tail = &p->next;
    recv_more(d, op);
}

/* LANDED: a piece's bytes are in its pinned buffer. */
static void on_landed(dg_dev_t *d, const dg_dev_piece_msg_t *m)
{
    dg_xop_t *op = m->op;
    dg_pipe_t *pp = op->u.xfer.pipe;
    pp->wire--;
    if (m->status != DAGGER_OK) {
        pipe_fail(d, op, (dagger_status_t)m->status, "receiving a piece of a transfer");
        dg_dev_cache_put(d, &d->pinned, m->buf, m->bytes);
        piece_counted(d, op);
        return;
    }
    copy_in(d, op, m->buf, m->offset, m->bytes);
}

void dg_dev_pipe_abort(dg_dev_t *d, dg_xop_t *op)
{
    pipe_free(d, op);
    dg_exec_finish(d->ex, op);
}

/* dagger.dev.piece */
dagger_status_t dg_dev_on_piece(dagger_ctx_t *ctx)
{
    dg_dev_t *d = dagger_ctx_state(ctx);
    d->be->set_current(d->index);
    const dg_dev_piece_msg_t *m = dagger_ctx_payload(ctx);
    if (m->what == DG_PIPE_SENT)
        on_sent(d, m);
    else if (m->what == DG_PIPE_ARRIVED)
        on_arrived(d, m);
    else
        on_landed(d, m);
    return DAGGER_OK;
}

void dg_devs_piece(void *ctx, dg_xop_t *op, dg_xfer_piece_t *p, uint32_t count)
{
    dg_dev_t *d = dev_of_op(ctx, op);
    dg_dev_piece_msg_t m = {.op = op, .what = DG_PIPE_ARRIVED, .piece = p, .count = count};
    post_piece(d, &m);
}
