/* Device-to-device transfers between ranks of one node through IPC handles
 * (dev.h): the sender packs the view into an exportable block of its device
 * and sends the block's handle, not the bytes; the receiver opens the
 * handle (once per block: opened handles are kept, since opening costs far
 * more than a small copy), copies or unpacks the bytes from the sender's
 * memory into its view on its copy stream, and, once that copy passed,
 * tells the sender (dagger.dev.ipc_done), which takes the block back.
 *
 * The handle message (DG_IPC_MSG_LEN bytes, little-endian):
 *   u64 magic      DG_IPC_MAGIC
 *   u64 bytes      the packed bytes in the block (the transfer's)
 *   u64 cookie     the sender's name for the block (echoed by ipc_done)
 *   i32 rank, u32 id   the sender's memory-space actor
 *   u32 failed     1: the sender could not pack: nothing to copy
 *   u32 len        bytes of the handle that follow
 *   u8  handle[DG_IPC_HANDLE_MAX]
 * Everything here runs in turns of the device's memory-space actor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/clock.h"
#include "actors/system.h"
#include "core/base/alloc.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "core/exec/exec.h"
#include "core/exec/xfer.h"
#include "devices/dev.h"
#include "devices/discover.h"
#include "transport/wire.h"

#define DG_IPC_MAGIC 0x3130435049474144ull /* "DAGIPC01" */
#define DG_IPC_HANDLE_MAX 128
#define DG_IPC_MSG_LEN (8 + 8 + 8 + 4 + 4 + 4 + 4 + DG_IPC_HANDLE_MAX)
#define DG_IPC_KEEP_OPEN 64 /* handles kept open per device; beyond, unused ones close */

/* A block lent to a receiver. */
typedef struct dg_ipc_lent {
    struct dg_ipc_lent *next;
    uint64_t cookie;
    void *ptr;
    size_t bytes;
} dg_ipc_lent_t;

/* A handle this device opened. */
typedef struct dg_ipc_open {
    struct dg_ipc_open *next;
    int32_t rank;
    uint32_t len;
    unsigned char handle[DG_IPC_HANDLE_MAX];
    void *ptr;
    uint32_t uses;           /* copies queued from it and not yet passed */
    uint64_t last;           /* the use count when it was last used (for closing the oldest) */
} dg_ipc_open_t;

typedef struct dg_dev_ipc {
    dg_ipc_lent_t *lent;
    uint64_t next_cookie;
    dg_ipc_open_t *open;
    uint32_t nopen;
    uint64_t clock;
} dg_dev_ipc_t;

/* dagger.dev.ipc_done: the receiver copied the block named by cookie. */
typedef struct dg_dev_ipc_done_msg {
    uint64_t cookie;
} dg_dev_ipc_done_msg_t;

dagger_status_t dg_dev_ipc_done_type(dg_devs_t *ds)
{
    return dg_devs_type(ds, "dagger.dev.ipc_done", sizeof(dg_dev_ipc_done_msg_t),
                        &ds->msg.ipc_done);
}

static dg_dev_ipc_t *state(dg_dev_t *d)
{
    if (!d->ipc)
        d->ipc = dg_calloc(1, sizeof(*d->ipc));
    return d->ipc;
}

/* Whether this transfer goes through an IPC handle (devices.h,
 * dg_dev_ipc_map_can): send is 1 on the sending rank. Every input is the
 * plan's or the start-up's, the same on both ranks. */
static int ipc_pair(const dg_dev_t *d, const dg_xxfer_t *x, int send)
{
    if (!d->all->ipc || !d->be->ipc_export || !x->bytes || !x->base || !x->peer_space ||
        x->peer_space > DG_DEV_MAX || x->peer < 0)
        return 0;
    int me = d->ex->rank, dev = (int)d->space - 1, pdev = (int)x->peer_space - 1;
    return send ? dg_dev_ipc_map_can(d->all->ipc, me, dev, x->peer, pdev)
                : dg_dev_ipc_map_can(d->all->ipc, x->peer, pdev, me, dev);
}

static void spent(dg_dev_t *d, int what, uint64_t since)
{
    atomic_fetch_add_explicit(&d->ipc_ns[what], dg_now_ns() - since, memory_order_relaxed);
}

static void record(dg_dev_t *d, dagger_status_t st, const dg_xxfer_t *x, const char *what)
{
    char msg[480];
    snprintf(msg, sizeof(msg), "%s (transfer tag %llx, rank %d's %s and rank %d; set "
             "DAGGER_GPU_IPC=0 to stage such transfers through host memory): %s", what,
             (unsigned long long)x->tag, d->ex->rank, d->label, x->peer, dagger_error_detail());
    dg_exec_fail(d->ex, UINT64_MAX - 1, st, msg);
}

/* ------------------------------------------------------------ sending */

/* The handle message of a send that could not get memory for its own: only
 * the magic and the failed flag (offset 32) set. */
static unsigned char no_memory_msg[DG_IPC_MSG_LEN] = {'D', 'A', 'G', 'I', 'P', 'C', '0', '1',
                                                      [32] = 1};

static void put_msg(unsigned char *buf, uint64_t bytes, uint64_t cookie, dagger_actor_addr_t from,
                    uint32_t failed, const void *handle, uint32_t len)
{
    memset(buf, 0, DG_IPC_MSG_LEN);
    dg_wire_cursor_t c = dg_wire_cursor(buf, DG_IPC_MSG_LEN);
    dg_wire_put_u64(&c, DG_IPC_MAGIC);
    dg_wire_put_u64(&c, bytes);
    dg_wire_put_u64(&c, cookie);
    dg_wire_put_u32(&c, (uint32_t)from.rank);
    dg_wire_put_u32(&c, from.id);
    dg_wire_put_u32(&c, failed);
    dg_wire_put_u32(&c, len);
    if (len)
        dg_wire_put_bytes(&c, handle, len);
}

/* The block is packed (or the device failed): its handle goes on the wire;
 * the block stays lent until the receiver's ipc_done. */
static void packed(dg_dev_t *d, dg_dev_pending_t *p, int ok)
{
    dg_xxfer_t *x = &p->op->u.xfer;
    dg_dev_ipc_t *s = d->ipc;
    unsigned char handle[DG_IPC_HANDLE_MAX];
    spent(d, DG_IPC_NS_PACK, p->t0);
    uint64_t t0 = dg_now_ns();
    dagger_status_t st = ok ? d->be->ipc_export(d->index, p->buf, handle) : DAGGER_ERR_SYSTEM;
    spent(d, DG_IPC_NS_EXPORT, t0);
    dg_ipc_lent_t *l = st == DAGGER_OK ? dg_malloc(sizeof(*l)) : NULL;
    if (st == DAGGER_OK && !l)
        st = dg_error(DAGGER_ERR_NO_MEMORY, "out of memory");
    if (st != DAGGER_OK) {
        if (ok)
            record(d, st, x, "exporting a transfer's device block for IPC failed");
        dg_dev_cache_put(d, &d->ipcmem, p->buf, p->bytes);
        put_msg(x->staged, x->bytes, 0, d->side[DG_DEV_SIDE_SPACE].addr, 1, NULL, 0);
    } else {
        *l = (dg_ipc_lent_t){s->lent, ++s->next_cookie, p->buf, p->bytes};
        s->lent = l;
        atomic_fetch_add_explicit(&d->ipc_lent, 1, memory_order_relaxed);
        put_msg(x->staged, x->bytes, l->cookie, d->side[DG_DEV_SIDE_SPACE].addr, 0, handle,
                (uint32_t)d->be->ipc_handle_bytes);
        atomic_fetch_add_explicit(&d->ipc_sent, 1, memory_order_relaxed);
    }
    p->buf = NULL;
    dg_xfer_send(d->ex->xfer, p->op);
}

int dg_dev_ipc_send(dg_dev_t *d, dg_xop_t *op)
{
    dg_xxfer_t *x = &op->u.xfer;
    if (!ipc_pair(d, x, 1))
        return 0;
    x->ipc = DG_IPC_MSG_LEN;
    x->staged = dg_malloc(DG_IPC_MSG_LEN);
    if (!x->staged || !state(d)) { /* the receiver is told, without memory of our own */
        record(d, DAGGER_ERR_NO_MEMORY, x, "out of memory sending through IPC");
        free(x->staged);
        x->staged = no_memory_msg; /* only read; never freed */
        dg_xfer_send(d->ex->xfer, op);
        return 1;
    }
    dg_dev_pending_t what = {.op = op, .done = packed, .bytes = x->bytes, .t0 = dg_now_ns()};
    dagger_status_t st = dg_dev_cache_get(d, &d->ipcmem, x->bytes, &what.buf);
    if (st == DAGGER_OK && x->nspans == 1) {
        size_t off = (size_t)x->spans[0].begin * x->elsize;
        st = d->be->copy(d->copy_stream, what.buf, x->base + off, x->bytes, DG_DEV_D2D);
    } else if (st == DAGGER_OK) {
        dg_dev_span_t *spans = dg_dev_byte_spans(x->spans, x->nspans, x->elsize);
        st = spans ? d->be->pack(d->copy_stream, what.buf, x->base, spans, x->nspans, 0)
                   : dg_error(DAGGER_ERR_NO_MEMORY, "out of memory packing spans");
        free(spans);
    }
    if (st != DAGGER_OK) {
        record(d, st, x, "packing a transfer for IPC failed");
        if (what.buf)
            dg_dev_cache_put(d, &d->ipcmem, what.buf, x->bytes);
        put_msg(x->staged, x->bytes, 0, d->side[DG_DEV_SIDE_SPACE].addr, 1, NULL, 0);
        dg_xfer_send(d->ex->xfer, op); /* the receiver still waits for it */
        return 1;
    }
    dg_dev_pend(d, DG_DEV_SIDE_SPACE, d->copy_stream, &what);
    return 1;
}

/* dagger.dev.ipc_done: the receiver is done with a lent block. */
dagger_status_t dg_dev_on_ipc_done(dagger_ctx_t *ctx)
{
    dg_dev_t *d = dagger_ctx_state(ctx);
    uint64_t cookie = ((const dg_dev_ipc_done_msg_t *)dagger_ctx_payload(ctx))->cookie;
    for (dg_ipc_lent_t **pp = d->ipc ? &d->ipc->lent : NULL; pp && *pp; pp = &(*pp)->next)
        if ((*pp)->cookie == cookie) {
            dg_ipc_lent_t *l = *pp;
            *pp = l->next;
            d->be->set_current(d->index);
            dg_dev_cache_put(d, &d->ipcmem, l->ptr, l->bytes);
            free(l);
            atomic_fetch_sub_explicit(&d->ipc_lent, 1, memory_order_release);
            return DAGGER_OK;
        }
    dg_log(DG_LOG_ERROR, "%s of rank %d: dagger.dev.ipc_done for block %llu, which it did not "
           "lend (dropped)", d->label, d->ex->rank, (unsigned long long)cookie);
    return DAGGER_OK;
}

/* ------------------------------------------------------------ receiving */

int dg_dev_ipc_recv(dg_dev_t *d, dg_xop_t *op)
{
    dg_xxfer_t *x = &op->u.xfer;
    if (!ipc_pair(d, x, 0))
        return 0;
    x->ipc = DG_IPC_MSG_LEN;
    x->staged = dg_calloc(1, DG_IPC_MSG_LEN); /* zeros: a receive that failed copies nothing */
    if (!x->staged || !state(d)) { /* xfer.c drops the message (no buffer: nothing lands) */
        record(d, DAGGER_ERR_NO_MEMORY, x, "out of memory receiving through IPC");
        free(x->staged);
        x->staged = NULL;
    }
    return 1;
}

/* The opened pointer of (rank, handle): kept from an earlier transfer, or
 * opened now (the oldest unused ones close beyond DG_IPC_KEEP_OPEN). */
static dagger_status_t open_handle(dg_dev_t *d, int32_t rank, const unsigned char *h,
                                   uint32_t len, dg_ipc_open_t **out)
{
    dg_dev_ipc_t *s = d->ipc;
    s->clock++;
    for (dg_ipc_open_t *o = s->open; o; o = o->next)
        if (o->rank == rank && o->len == len && !memcmp(o->handle, h, len)) {
            o->last = s->clock;
            *out = o;
            return DAGGER_OK;
        }
    while (s->nopen >= DG_IPC_KEEP_OPEN) {
        dg_ipc_open_t **oldest = NULL;
        for (dg_ipc_open_t **pp = &s->open; *pp; pp = &(*pp)->next)
            if (!(*pp)->uses && (!oldest || (*pp)->last < (*oldest)->last))
                oldest = pp;
        if (!oldest)
            break; /* all in use: keep them */
        dg_ipc_open_t *o = *oldest;
        *oldest = o->next;
        d->be->ipc_close(d->index, o->ptr);
        free(o);
        s->nopen--;
    }
    dg_ipc_open_t *o = dg_calloc(1, sizeof(*o));
    if (!o)
        return dg_error(DAGGER_ERR_NO_MEMORY, "out of memory");
    uint64_t t0 = dg_now_ns();
    dagger_status_t st = d->be->ipc_open(d->index, h, &o->ptr);
    spent(d, DG_IPC_NS_OPEN, t0);
    if (st != DAGGER_OK) {
        free(o);
        return st;
    }
    o->rank = rank;
    o->len = len;
    memcpy(o->handle, h, len);
    o->last = s->clock;
    o->next = s->open;
    s->open = o;
    s->nopen++;
    atomic_fetch_add_explicit(&d->ipc_opened, 1, memory_order_relaxed);
    *out = o;
    return DAGGER_OK;
}

/* Tells the sender its block is free again (an actor message to its
 * memory-space actor, on the other rank). */
static void tell_sender(dg_dev_t *d, dagger_actor_addr_t to, uint64_t cookie, const dg_xxfer_t *x)
{
    dg_dev_ipc_done_msg_t m = {cookie};
    dg_act_post_t p = {.to = to, .type = d->all->msg.ipc_done, .payload = &m, .size = sizeof(m),
                       .what = "IPC block returned"};
    int direct;
    dagger_status_t st = dg_act_post(d->ex->actors, &p, &direct);
    if (st != DAGGER_OK)
        record(d, st, x, "telling the sender of an IPC transfer that its block is free failed");
}

/* The copy from the sender's block passed: the block goes back, the op ends. */
static void copied(dg_dev_t *d, dg_dev_pending_t *p, int ok)
{
    (void)ok; /* a failed copy is recorded by dev_pending.c; the block goes back anyway */
    dg_ipc_open_t *o = p->buf;
    o->uses--;
    spent(d, DG_IPC_NS_COPY, p->t0);
    tell_sender(d, p->lender, p->cookie, &p->op->u.xfer);
    p->buf = NULL;
    dg_exec_finish(d->ex, p->op);
}

/* Reads the handle message and queues the copy out of the sender's block. */
static void land(dg_dev_t *d, dg_xop_t *op, const unsigned char *msg)
{
    dg_xxfer_t *x = &op->u.xfer;
    dg_wire_cursor_t c = dg_wire_cursor(msg, DG_IPC_MSG_LEN);
    uint64_t magic = dg_wire_get_u64(&c), bytes = dg_wire_get_u64(&c);
    uint64_t cookie = dg_wire_get_u64(&c);
    dagger_actor_addr_t from = {(int32_t)dg_wire_get_u32(&c), 0};
    from.id = dg_wire_get_u32(&c);
    uint32_t failed = dg_wire_get_u32(&c), len = dg_wire_get_u32(&c);
    if (magic == 0 || (magic == DG_IPC_MAGIC && failed)) {
        /* the receive failed before its message came, or the sender could not
         * pack or export: recorded where it happened */
        dg_exec_finish(d->ex, op);
        return;
    }
    if (magic != DG_IPC_MAGIC || bytes != x->bytes || len > DG_IPC_HANDLE_MAX ||
        from.rank != x->peer) {
        char why[300];
        snprintf(why, sizeof(why), "rank %d: transfer tag %llx from rank %d: not an IPC handle "
                 "message for its %llu bytes (magic %llx, %llu bytes, %u handle bytes, from rank "
                 "%d)", d->ex->rank, (unsigned long long)x->tag, x->peer,
                 (unsigned long long)x->bytes, (unsigned long long)magic,
                 (unsigned long long)bytes, len, from.rank);
        dg_exec_fail(d->ex, UINT64_MAX - 1, DAGGER_ERR_PROTOCOL, why);
        dg_exec_finish(d->ex, op);
        return;
    }
    const unsigned char *h = dg_wire_get_bytes(&c, len);
    dg_ipc_open_t *o = NULL;
    dagger_status_t st = open_handle(d, from.rank, h, len, &o);
    if (st != DAGGER_OK) {
        record(d, st, x, "opening the sender's IPC handle failed");
        tell_sender(d, from, cookie, x);
        dg_exec_finish(d->ex, op);
        return;
    }
    uint64_t t_copy = dg_now_ns();
    if (x->nspans == 1) {
        size_t off = (size_t)x->spans[0].begin * x->elsize;
        st = d->be->copy(d->copy_stream, x->base + off, o->ptr, x->bytes, DG_DEV_D2D);
    } else {
        dg_dev_span_t *spans = dg_dev_byte_spans(x->spans, x->nspans, x->elsize);
        st = spans ? d->be->pack(d->copy_stream, x->base, o->ptr, spans, x->nspans, 1)
                   : dg_error(DAGGER_ERR_NO_MEMORY, "out of memory unpacking spans");
        free(spans);
    }
    if (st != DAGGER_OK)
        record(d, st, x, "copying from the sender's device memory failed");
    o->uses++;
    atomic_fetch_add_explicit(&d->ipc_received, 1, memory_order_relaxed);
    dg_dev_pending_t what = {.op = op, .done = copied, .buf = o, .cookie = cookie,
                             .lender = from, .t0 = t_copy};
    dg_dev_pend(d, DG_DEV_SIDE_SPACE, d->copy_stream, &what);
}

void dg_dev_ipc_staged(dg_dev_t *d, dg_xop_t *op)
{
    dg_xxfer_t *x = &op->u.xfer;
    unsigned char *msg = x->staged;
    x->staged = NULL;
    if (op->kind == DG_PLAN_OP_SEND || !msg) {
        if (msg != no_memory_msg)
            free(msg);
        dg_exec_finish(d->ex, op);
        return;
    }
    land(d, op, msg);
    free(msg);
}

/* ------------------------------------------------------------ cleanup */

void dg_dev_ipc_cleanup(dg_dev_t *d)
{
    dg_dev_ipc_t *s = d->ipc;
    if (!s)
        return;
    for (dg_ipc_open_t *o = s->open, *n; o; o = n) {
        n = o->next;
        d->be->ipc_close(d->index, o->ptr);
        free(o);
    }
    for (dg_ipc_lent_t *l = s->lent, *n; l; l = n) { /* their receivers have finished */
        n = l->next;
        dg_dev_cache_put(d, &d->ipcmem, l->ptr, l->bytes);
        free(l);
    }
    free(s);
    d->ipc = NULL;
}
