/* A device's memory-space actor ("mem:test device 0"): owns the device's
 * memory (a caching allocator: released blocks are kept by exact size up to
 * the pool limit, then given back), pinned host staging buffers (cached the
 * same way), the copies between host and device memory of the rank, and the
 * host-staged transfers of device buffers to and from other ranks. Strided,
 * sub-view and triangular data move packed: one pack (or unpack) kernel of
 * the backend gathers the spans on the device, one copy moves them, and the
 * host side is one gather or scatter in host memory. All work is queued on
 * the actor's copy stream; an event after it finishes the op in a later
 * dagger.dev.poll turn (dev_pending.c). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/system.h"
#include "core/base/alloc.h"
#include "core/exec/exec.h"
#include "core/exec/xfer.h"
#include "core/base/status_internal.h"
#include "core/exec/msgs.h"
#include "core/trace/trace.h"
#include "core/exec/exec_trace.h"
#include "devices/dev.h"

/* ------------------------------------------------------------ caches */

dagger_status_t dg_dev_cache_get(dg_dev_t *d, dg_dev_cache_t *c, size_t bytes, void **ptr)
{
    pthread_mutex_lock(&c->lock);
    for (dg_dev_block_t **pp = &c->blocks; *pp; pp = &(*pp)->next)
        if ((*pp)->bytes == bytes) {
            dg_dev_block_t *b = *pp;
            *pp = b->next;
            c->bytes -= bytes;
            pthread_mutex_unlock(&c->lock);
            *ptr = b->ptr;
            free(b);
            return DAGGER_OK;
        }
    pthread_mutex_unlock(&c->lock);
    atomic_fetch_add_explicit(&c->misses, 1, memory_order_relaxed);
    if (c == &d->pinned)
        return d->be->host_alloc(bytes, ptr);
    if (c == &d->ipcmem && d->be->ipc_alloc)
        return d->be->ipc_alloc(d->index, bytes, ptr);
    return d->be->mem_alloc(d->index, bytes, ptr);
}

static void cache_release(dg_dev_t *d, dg_dev_cache_t *c, void *ptr)
{
    if (c == &d->pinned)
        d->be->host_free(ptr);
    else if (c == &d->ipcmem && d->be->ipc_free)
        d->be->ipc_free(d->index, ptr);
    else
        d->be->mem_free(d->index, ptr);
}

void dg_dev_cache_put(dg_dev_t *d, dg_dev_cache_t *c, void *ptr, size_t bytes)
{
    dg_dev_block_t *b = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->bytes + bytes <= c->limit && (b = dg_malloc(sizeof(*b)))) {
        *b = (dg_dev_block_t){c->blocks, ptr, bytes};
        c->blocks = b;
        c->bytes += bytes;
    }
    pthread_mutex_unlock(&c->lock);
    if (!b)
        cache_release(d, c, ptr);
}

void dg_dev_cache_cleanup(dg_dev_t *d, dg_dev_cache_t *c)
{
    for (dg_dev_block_t *b = c->blocks, *n; b; b = n) {
        n = b->next;
        cache_release(d, c, b->ptr);
        free(b);
    }
    c->blocks = NULL;
    c->bytes = 0;
}

/* The buffer table's view of the device's memory (core/exec/bufs.c). */
static void *ms_alloc(dg_memspace_t *ms, size_t bytes)
{
    dg_dev_t *d = ms->impl;
    void *p = NULL;
    return dg_dev_cache_get(d, &d->mem, bytes, &p) == DAGGER_OK ? p : NULL;
}

static void ms_free(dg_memspace_t *ms, void *ptr, size_t bytes)
{
    dg_dev_t *d = ms->impl;
    dg_dev_cache_put(d, &d->mem, ptr, bytes);
}

/* Waits for the copy stream (only for requests whose sender waits anyway:
 * zeroing a new block, and the synchronous copy below): yields between
 * looks, never a blocking device synchronisation. */
static dagger_status_t drain(dg_dev_t *d)
{
    dg_dev_event_t *e;
    dagger_status_t st = d->be->event_create(d->index, &e);
    if (st != DAGGER_OK)
        return st;
    st = d->be->event_record(e, d->copy_stream);
    int q = 0;
    while (st == DAGGER_OK && (q = d->be->event_query(e)) == 0)
        sched_yield();
    d->be->event_destroy(e);
    return st == DAGGER_OK && q != 1 ? DAGGER_ERR_SYSTEM : st;
}

static dagger_status_t ms_copy(dg_memspace_t *ms, void *dst, int dst_host, const void *src,
                               int src_host, size_t bytes)
{
    dg_dev_t *d = ms->impl;
    dg_dev_copy_dir_t dir = src_host ? DG_DEV_H2D : (dst_host ? DG_DEV_D2H : DG_DEV_D2D);
    dagger_status_t st = d->be->copy(d->copy_stream, dst, src, bytes, dir);
    return st == DAGGER_OK ? drain(d) : st;
}

const dg_memspace_ops_t dg_dev_memspace_ops = {
    .name = "device",
    .kind = DG_DEV_TEST, /* the backend's kind is in the device (ms->impl) */
    .alloc = ms_alloc,
    .free = ms_free,
    .copy = ms_copy,
};

/* ------------------------------------------------------------ spans */

size_t dg_dev_span_bytes(const dg_plan_span_t *sp, uint32_t n, uint32_t elsize)
{
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += (size_t)(sp[i].end - sp[i].begin) * elsize;
    return total;
}

/* The spans of a buffer (element ranges) as byte spans (dev.h). */
dg_dev_span_t *dg_dev_byte_spans(const dg_plan_span_t *sp, uint32_t n, uint32_t elsize)
{
    dg_dev_span_t *out = dg_malloc((n ? n : 1) * sizeof(*out));
    for (uint32_t i = 0; out && i < n; i++) {
        out[i].offset = sp[i].begin * elsize;
        out[i].bytes = (sp[i].end - sp[i].begin) * elsize;
    }
    return out;
}

/* Host side of a packed copy: gathers base's spans into packed, or with
 * unpack scatters packed into them. */
static void host_spans(unsigned char *base, unsigned char *packed, const dg_plan_span_t *sp,
                       uint32_t n, uint32_t elsize, int unpack)
{
    for (uint32_t i = 0; i < n; i++) {
        size_t len = (size_t)(sp[i].end - sp[i].begin) * elsize;
        unsigned char *at = base + (size_t)sp[i].begin * elsize;
        if (unpack)
            memcpy(at, packed, len);
        else
            memcpy(packed, at, len);
        packed += len;
    }
}

/* Queues, on the copy stream, the move of a buffer's spans between device
 * memory dev and a contiguous buffer flat (pinned host memory) in direction
 * dir (H2D: flat to dev's spans). One span is one copy; several are packed
 * on the device in scratch (*scratch, which the caller releases after the
 * stream passed it). */
static dagger_status_t queue_packed(dg_dev_t *d, unsigned char *dev, unsigned char *flat,
                                    const dg_plan_span_t *sp, uint32_t n, uint32_t elsize,
                                    dg_dev_copy_dir_t dir, void **scratch)
{
    dg_dev_stream_t *s = d->copy_stream;
    *scratch = NULL;
    if (n == 1) {
        size_t off = (size_t)sp[0].begin * elsize, len = (size_t)(sp[0].end - sp[0].begin) * elsize;
        return dir == DG_DEV_H2D ? d->be->copy(s, dev + off, flat, len, dir)
                                 : d->be->copy(s, flat, dev + off, len, dir);
    }
    size_t total = dg_dev_span_bytes(sp, n, elsize);
    dg_dev_span_t *spans = dg_dev_byte_spans(sp, n, elsize);
    dagger_status_t st = spans ? dg_dev_cache_get(d, &d->mem, total, scratch)
                               : dg_error(DAGGER_ERR_NO_MEMORY, "out of memory packing spans");
    if (st == DAGGER_OK && dir == DG_DEV_H2D) {
        st = d->be->copy(s, *scratch, flat, total, DG_DEV_H2D);
        if (st == DAGGER_OK)
            st = d->be->pack(s, dev, *scratch, spans, n, 1);
    } else if (st == DAGGER_OK) {
        st = d->be->pack(s, *scratch, dev, spans, n, 0);
        if (st == DAGGER_OK)
            st = d->be->copy(s, flat, *scratch, total, DG_DEV_D2H);
    }
    free(spans);
    return st;
}

/* ------------------------------------------------------------ handlers */

/* The turn's device, made current on this thread (device.h: before the
 * first call of each turn; a failure shows in the calls that follow). */
static dg_dev_t *dev_of(dagger_ctx_t *ctx)
{
    dg_dev_t *d = dagger_ctx_state(ctx);
    d->be->set_current(d->index);
    return d;
}

static dg_xop_t *op_of(dagger_ctx_t *ctx)
{
    return ((const dg_mem_op_msg_t *)dagger_ctx_payload(ctx))->op;
}

static void fail_now(dg_dev_t *d, dg_xop_t *op, dagger_status_t st, const char *what)
{
    char msg[400];
    snprintf(msg, sizeof(msg), "%s on %s of rank %d: %s", what, d->label, d->ex->rank,
             dagger_error_detail());
    dg_exec_fail(d->ex, UINT64_MAX - 1, st, msg);
    if (op)
        dg_exec_finish(d->ex, op);
}

/* dagger.dev.staged (on_staged): a host-staged SEND left, or a RECV's bytes
 * arrived in its staging buffer (core/exec/xfer.c), or the source's half
 * of a copy between devices packed its bytes. */
typedef struct dg_dev_staged_msg {
    dg_xop_t *op;
} dg_dev_staged_msg_t;

dagger_status_t dg_dev_staged_type(dg_devs_t *ds)
{
    return dg_devs_type(ds, "dagger.dev.staged", sizeof(dg_dev_staged_msg_t), &ds->msg.staged);
}

/* Sends op to the memory-space actor of device `to` (dagger.dev.staged). */
static dagger_status_t post_staged(dg_dev_t *to, dg_xop_t *op, const char *what)
{
    dg_dev_staged_msg_t m = {op};
    dg_dev_side_t *sd = &to->side[DG_DEV_SIDE_SPACE];
    dg_act_post_t p = {.to = sd->addr, .type = to->all->msg.staged, .payload = &m,
                       .size = sizeof(m), .what = what};
    int direct;
    return dg_act_post_local(to->ex->actors, sd->obj, &p, &direct);
}

/* dagger.mem.alloc: a block of device memory for a chunk's buffer. */
static dagger_status_t on_alloc(dagger_ctx_t *ctx)
{
    dg_dev_t *d = dev_of(ctx);
    const dg_mem_alloc_msg_t *m = dagger_ctx_payload(ctx);
    dg_mem_reply_t *r = m->reply;
    size_t bytes = dg_bufs_block_size((size_t)m->bytes);
    r->status = dg_bufs_mem_get(&d->ex->bufs, m->space, (size_t)m->bytes, 0, &r->ptr);
    if (r->status == DAGGER_OK && m->zero) {
        r->status = d->be->memset0(d->copy_stream, r->ptr, bytes);
        if (r->status == DAGGER_OK)
            r->status = drain(d); /* the requester waits for the block anyway */
    }
    if (r->status != DAGGER_OK)
        snprintf(r->detail, sizeof(r->detail), "%s: %s", d->label, dagger_error_detail());
    atomic_store_explicit(&r->done, 1, memory_order_release);
    return DAGGER_OK;
}

/* dagger.mem.free: the block goes back to the cache (its readers are done). */
static dagger_status_t on_free(dagger_ctx_t *ctx)
{
    dg_dev_t *d = dev_of(ctx);
    dg_xop_t *op = op_of(ctx);
    dg_bufs_release(&d->ex->bufs, op->free_space, op->u.free_ptr, op->free_bytes);
    dg_exec_finish(d->ex, op);
    return DAGGER_OK;
}

void dg_dev_op_done(dg_dev_t *d, dg_dev_pending_t *p, int ok)
{
    (void)ok;
    dg_exec_finish(d->ex, p->op);
}

/* A device-to-host copy of several spans landed packed in staging. */
static void d2h_done(dg_dev_t *d, dg_dev_pending_t *p, int ok)
{
    const dg_xcopy_t *c = &p->op->u.copy;
    if (ok)
        host_spans(c->dst, p->staging, c->spans, c->nspans, c->elsize, 1);
    dg_exec_finish(d->ex, p->op);
}

/* The source device's half of a copy between two devices is done: the
 * packed bytes go to the destination's memory-space actor. */
static void d2d_staged(dg_dev_t *d, dg_dev_pending_t *p, int ok)
{
    (void)ok;
    dg_xcopy_t *c = &p->op->u.copy;
    c->staged = p->staging;
    p->staging = NULL; /* the destination gives it back */
    dg_dev_t *to = &d->all->dev[c->dst_space - 1];
    if (post_staged(to, p->op, "copy between devices") != DAGGER_OK) {
        dg_dev_cache_put(d, &d->pinned, c->staged, dg_dev_span_bytes(c->spans, c->nspans, c->elsize));
        fail_now(d, p->op, DAGGER_ERR_INTERNAL, "a copy between devices lost its second half");
    }
}

/* A COPY into this device from a device whose memory its streams reach
 * (dg_dev_t.peers): on its copy stream, one span copied, several gathered
 * from the source into scratch here and scattered into the destination
 * (the two buffers have the same spans). The source's last writer has
 * finished (the op is ready) and its next one waits for this op. */
static void from_peer(dg_dev_t *d, dg_xop_t *op)
{
    const dg_xcopy_t *c = &op->u.copy;
    dg_dev_pending_t what = {.op = op, .done = dg_dev_op_done};
    dagger_status_t st;
    if (c->nspans == 1) {
        size_t off = (size_t)c->spans[0].begin * c->elsize;
        size_t len = (size_t)(c->spans[0].end - c->spans[0].begin) * c->elsize;
        st = d->be->copy(d->copy_stream, (unsigned char *)c->dst + off,
                         (const unsigned char *)c->src + off, len, DG_DEV_D2D);
    } else {
        what.scratch_bytes = dg_dev_span_bytes(c->spans, c->nspans, c->elsize);
        dg_dev_span_t *spans = dg_dev_byte_spans(c->spans, c->nspans, c->elsize);
        st = spans ? dg_dev_cache_get(d, &d->mem, what.scratch_bytes, &what.scratch)
                   : dg_error(DAGGER_ERR_NO_MEMORY, "out of memory packing spans");
        if (st == DAGGER_OK)
            st = d->be->pack(d->copy_stream, what.scratch, c->src, spans, c->nspans, 0);
        if (st == DAGGER_OK)
            st = d->be->pack(d->copy_stream, c->dst, what.scratch, spans, c->nspans, 1);
        free(spans);
    }
    if (st != DAGGER_OK)
        dg_exec_fail(d->ex, UINT64_MAX - 1, st, "a copy between devices failed");
    atomic_fetch_add_explicit(&d->peer_copies, 1, memory_order_relaxed);
    dg_dev_pend(d, DG_DEV_SIDE_SPACE, d->copy_stream, &what);
}

/* A COPY between two devices of the rank: device to device on the
 * destination where it reaches the source's memory (from_peer); otherwise
 * host-staged in two halves, each in a turn of its own device's
 * memory-space actor (only it calls its device): packed to pinned memory on
 * the source, unpacked from there on the destination (on_staged). */
static void between_devices(dg_dev_t *d, dg_xop_t *op)
{
    const dg_xcopy_t *c = &op->u.copy;
    dg_dev_t *to = &d->all->dev[c->dst_space - 1];
    if (to->peers & (1u << (c->src_space - 1))) {
        if (d != to) /* the source's actor got it: the destination copies */
            dg_exec_post_op(d->ex, d->ex->msg.copy, c->dst_space, op);
        else
            from_peer(d, op);
        return;
    }
    if (d->space != c->src_space) { /* the destination's actor got it: the source starts */
        dg_exec_post_op(d->ex, d->ex->msg.copy, c->src_space, op);
        return;
    }
    size_t total = dg_dev_span_bytes(c->spans, c->nspans, c->elsize);
    dg_dev_pending_t what = {.op = op, .done = d2d_staged, .staging_bytes = total,
                             .scratch_bytes = total};
    dagger_status_t st = dg_dev_cache_get(d, &d->pinned, total, &what.staging);
    if (st == DAGGER_OK)
        st = queue_packed(d, c->src, what.staging, c->spans, c->nspans, c->elsize, DG_DEV_D2H,
                          &what.scratch);
    if (st != DAGGER_OK) {
        if (what.staging)
            dg_dev_cache_put(d, &d->pinned, what.staging, total);
        if (what.scratch)
            dg_dev_cache_put(d, &d->mem, what.scratch, total);
        fail_now(d, op, st, "a copy between devices");
        return;
    }
    dg_dev_pend(d, DG_DEV_SIDE_SPACE, d->copy_stream, &what);
}

/* dagger.mem.copy: a COPY between host memory and this device. */
static dagger_status_t on_copy(dagger_ctx_t *ctx)
{
    dg_dev_t *d = dev_of(ctx);
    dg_xop_t *op = op_of(ctx);
    const dg_xcopy_t *c = &op->u.copy;
    if (!c->src || !c->dst || !c->nspans) {
        dg_exec_finish(d->ex, op);
        return DAGGER_OK;
    }
    if (c->src_space && c->dst_space) {
        between_devices(d, op);
        return DAGGER_OK;
    }
    int worker = dagger_ctx_worker(ctx);
    uint64_t t0 = DG_TRACE_ON() ? dg_trace_run_begin(op, worker) : 0;
    dg_dev_pending_t what = {.op = op, .done = dg_dev_op_done};
    int h2d = c->src_space == 0;
    dagger_status_t st = DAGGER_OK;
    unsigned char *flat = h2d ? c->src : c->dst;
    if (c->nspans > 1) { /* packed: through pinned staging */
        what.staging_bytes = dg_dev_span_bytes(c->spans, c->nspans, c->elsize);
        st = dg_dev_cache_get(d, &d->pinned, what.staging_bytes, &what.staging);
        if (st == DAGGER_OK && h2d)
            host_spans(c->src, what.staging, c->spans, c->nspans, c->elsize, 0);
        flat = what.staging;
        what.done = h2d ? dg_dev_op_done : d2h_done;
    } else {
        flat += (size_t)c->spans[0].begin * c->elsize; /* same offsets on both sides */
    }
    if (st == DAGGER_OK)
        st = queue_packed(d, h2d ? c->dst : c->src, flat, c->spans, c->nspans, c->elsize,
                          h2d ? DG_DEV_H2D : DG_DEV_D2H, &what.scratch);
    if (what.scratch)
        what.scratch_bytes = what.staging_bytes;
    if (DG_TRACE_ON())
        dg_trace_run_end(d->ex, op, worker, t0);
    if (st != DAGGER_OK) {
        dg_exec_fail(d->ex, UINT64_MAX - 1, st, "a copy between host and device memory failed");
        what.done = dg_dev_op_done;
    }
    dg_dev_pend(d, DG_DEV_SIDE_SPACE, d->copy_stream, &what);
    return DAGGER_OK;
}

/* ------------------------------------------------------------ other ranks */

/* Whether a transfer of this buffer goes straight between device memory
 * and the wire: with direct transfers on (DAGGER_GPU_DIRECT), any view of
 * a test device (its memory is host-addressable); for GPU memory only sends
 * of one span: the transport packs several spans in host memory, and a
 * receive may arrive eagerly, as bytes the transport copies with memcpy. */
static int goes_direct(const dg_dev_t *d, const dg_xxfer_t *x, int send)
{
    if (!x->bytes || !x->base)
        return 1;
    if (!d->direct)
        return 0;
    return d->be->kind == DG_DEV_TEST || (send && x->nspans == 1);
}

/* A staged SEND's bytes are in pinned memory: they leave now. */
static void send_staged(dg_dev_t *d, dg_dev_pending_t *p, int ok)
{
    if (!ok) { /* the failure is recorded; the receiver still gets bytes */
        memset(p->op->u.xfer.staged, 0, p->op->u.xfer.bytes);
    }
    dg_xfer_send(d->ex->xfer, p->op);
}

/* dagger.mem.send: a SEND of a device buffer. Host-staged: packed on the
 * device, copied to pinned memory, then the move_rewrap message leaves. */
static dagger_status_t on_send(dagger_ctx_t *ctx)
{
    dg_dev_t *d = dev_of(ctx);
    dg_xop_t *op = op_of(ctx);
    dg_xxfer_t *x = &op->u.xfer;
    if (dg_dev_ipc_send(d, op))
        return DAGGER_OK;
    if (goes_direct(d, x, 1)) {
        dg_xfer_send(d->ex->xfer, op);
        return DAGGER_OK;
    }
    if (dg_dev_pipe_send(d, op))
        return DAGGER_OK;
    void *staged = NULL;
    dg_dev_pending_t what = {.op = op, .done = send_staged};
    dagger_status_t st = dg_dev_cache_get(d, &d->pinned, x->bytes, &staged);
    if (st == DAGGER_OK)
        st = queue_packed(d, x->base, staged, x->spans, x->nspans, x->elsize, DG_DEV_D2H,
                          &what.scratch);
    what.scratch_bytes = x->bytes;
    if (st != DAGGER_OK) {
        if (staged)
            dg_dev_cache_put(d, &d->pinned, staged, x->bytes);
        if (what.scratch)
            dg_dev_cache_put(d, &d->mem, what.scratch, x->bytes);
        fail_now(d, NULL, st, "staging a transfer");
        dg_xfer_send(d->ex->xfer, op); /* the receiver still waits for it */
        return DAGGER_OK;
    }
    x->staged = staged; /* kept until the wire is done (dagger.dev.staged) */
    atomic_fetch_add_explicit(&d->staged, 1, memory_order_relaxed);
    dg_dev_pend(d, DG_DEV_SIDE_SPACE, d->copy_stream, &what);
    return DAGGER_OK;
}

/* dagger.mem.recv: a RECV into a device buffer. Host-staged: the bytes
 * land packed in pinned memory; dagger.dev.staged unpacks them. */
static dagger_status_t on_recv(dagger_ctx_t *ctx)
{
    dg_dev_t *d = dev_of(ctx);
    dg_xop_t *op = op_of(ctx);
    dg_xxfer_t *x = &op->u.xfer;
    if (!dg_dev_ipc_recv(d, op) && !goes_direct(d, x, 0) && !dg_dev_pipe_recv(d, op)) {
        void *staged = NULL;
        if (dg_dev_cache_get(d, &d->pinned, x->bytes, &staged) == DAGGER_OK)
            x->staged = staged;
        else
            fail_now(d, NULL, DAGGER_ERR_NO_MEMORY, "no staging memory for a transfer");
        atomic_fetch_add_explicit(&d->staged, 1, memory_order_relaxed);
    }
    dg_xfer_recv(d->ex->xfer, op);
    return DAGGER_OK;
}

/* The destination's half of a copy between two devices: unpack the pinned
 * bytes into this device's buffer. */
static void copy_second_half(dg_dev_t *d, dg_xop_t *op)
{
    dg_xcopy_t *c = &op->u.copy;
    size_t total = dg_dev_span_bytes(c->spans, c->nspans, c->elsize);
    dg_dev_pending_t what = {.op = op, .done = dg_dev_op_done, .staging = c->staged,
                             .staging_bytes = total, .scratch_bytes = total};
    c->staged = NULL;
    dagger_status_t st = queue_packed(d, c->dst, what.staging, c->spans, c->nspans, c->elsize,
                                      DG_DEV_H2D, &what.scratch);
    if (st != DAGGER_OK)
        dg_exec_fail(d->ex, UINT64_MAX - 1, st, "a copy between devices failed");
    dg_dev_pend(d, DG_DEV_SIDE_SPACE, d->copy_stream, &what);
}

/* dagger.dev.staged: a staged SEND is off the wire (its staging buffer goes
 * back), or a staged RECV's bytes are in (they go to the device). */
static dagger_status_t on_staged(dagger_ctx_t *ctx)
{
    dg_dev_t *d = dev_of(ctx);
    dg_xop_t *op = ((const dg_dev_staged_msg_t *)dagger_ctx_payload(ctx))->op;
    if (op->kind == DG_PLAN_OP_COPY) {
        copy_second_half(d, op);
        return DAGGER_OK;
    }
    dg_xxfer_t *x = &op->u.xfer;
    if (x->pipe) {
        dg_dev_pipe_abort(d, op);
        return DAGGER_OK;
    }
    if (x->ipc) {
        dg_dev_ipc_staged(d, op);
        return DAGGER_OK;
    }
    dg_dev_pending_t what = {.op = op, .done = dg_dev_op_done, .staging = x->staged,
                             .staging_bytes = x->bytes, .scratch_bytes = x->bytes};
    x->staged = NULL;
    if (op->kind == DG_PLAN_OP_SEND) {
        dg_dev_cache_put(d, &d->pinned, what.staging, what.staging_bytes);
        dg_exec_finish(d->ex, op);
        return DAGGER_OK;
    }
    dagger_status_t st = queue_packed(d, x->base, what.staging, x->spans, x->nspans, x->elsize,
                                      DG_DEV_H2D, &what.scratch);
    if (st != DAGGER_OK)
        dg_exec_fail(d->ex, UINT64_MAX - 1, st, "unpacking a transfer into device memory failed");
    dg_dev_pend(d, DG_DEV_SIDE_SPACE, d->copy_stream, &what);
    return DAGGER_OK;
}

void dg_devs_staged(void *ctx, dg_xop_t *op)
{
    dg_devs_t *ds = ctx;
    dg_dev_t *d = &ds->dev[op->u.xfer.space - 1];
    dagger_status_t st = post_staged(d, op, "staged transfer");
    if (st != DAGGER_OK)
        fail_now(d, op, st, "the memory-space actor did not take a staged transfer");
}

dagger_status_t dg_dev_space_spawn(dg_dev_t *d)
{
    dg_exec_t *ex = d->ex;
    const dagger_handler_t h[] = {
        {ex->msg.alloc, on_alloc}, {ex->msg.free, on_free},           {ex->msg.copy, on_copy},
        {ex->msg.send, on_send},   {ex->msg.recv, on_recv},           {d->all->msg.staged, on_staged},
        {d->all->msg.poll, dg_dev_on_poll}, {d->all->msg.piece, dg_dev_on_piece},
        {d->all->msg.ipc_done, dg_dev_on_ipc_done},
    };
    char name[80];
    snprintf(name, sizeof(name), "mem:%s", d->label);
    dagger_actor_desc_t desc = {.name = name, .state = d, .handlers = h,
                                .nhandlers = sizeof(h) / sizeof(h[0])};
    dg_dev_side_t *sd = &d->side[DG_DEV_SIDE_SPACE];
    dagger_status_t st = dg_act_spawn(ex->actors, &desc, &sd->addr);
    if (st != DAGGER_OK)
        return st;
    sd->obj = dg_act_local(ex->actors, sd->addr);
    ex->space_actor[d->space] = sd->addr;
    ex->space[d->space] = sd->obj;
    ex->bufs.owner[d->space][0] = sd->addr;
    ex->bufs.spaces[d->space] = (dg_memspace_t){&dg_dev_memspace_ops, d->index, d, 0};
    return DAGGER_OK;
}
