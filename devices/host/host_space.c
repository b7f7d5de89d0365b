/* The host memory-space actor of a rank: owns host memory (allocation, the
 * pool of released blocks), copies into it, and the move_rewrap transfers
 * to and from the other ranks' host memory-space actors. Its handlers are
 * the ones the message table of docs/design.md names; the transfer logic
 * they call (matching by tag, packing, the header check) is core/exec/xfer.c,
 * which every kind of memory space shares. */
#include <stdio.h>

#include "actors/system.h"
#include "core/exec/exec.h"
#include "core/exec/xfer.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"
#include "core/exec/exec_trace.h"
#include "core/exec/msgs.h"
#include "devices/host/host.h"

static dg_exec_t *exec_of(dagger_ctx_t *ctx)
{
    return dagger_ctx_state(ctx);
}

static dg_xop_t *op_of(dagger_ctx_t *ctx)
{
    return ((const dg_mem_op_msg_t *)dagger_ctx_payload(ctx))->op;
}

/* dagger.mem.alloc: a block for a chunk's buffer; the requester waits. */
static dagger_status_t on_alloc(dagger_ctx_t *ctx)
{
    const dg_mem_alloc_msg_t *m = dagger_ctx_payload(ctx);
    dg_mem_reply_t *r = m->reply;
    r->status = dg_bufs_mem_get(&exec_of(ctx)->bufs, m->space, (size_t)m->bytes, m->zero, &r->ptr);
    if (r->status != DAGGER_OK)
        snprintf(r->detail, sizeof(r->detail), "%s", dagger_error_detail());
    atomic_store_explicit(&r->done, 1, memory_order_release);
    return DAGGER_OK;
}

/* dagger.mem.free: a FREE op whose readers are done. */
static dagger_status_t on_free(dagger_ctx_t *ctx)
{
    dg_exec_t *ex = exec_of(ctx);
    dg_xop_t *op = op_of(ctx);
    dg_bufs_release(&ex->bufs, op->free_space, op->u.free_ptr, op->free_bytes);
    dg_exec_finish(ex, op);
    return DAGGER_OK;
}

/* dagger.mem.copy: a COPY op between two buffers of this rank. */
static dagger_status_t on_copy(dagger_ctx_t *ctx)
{
    dg_exec_t *ex = exec_of(ctx);
    dg_xop_t *op = op_of(ctx);
    int worker = dagger_ctx_worker(ctx);
    uint64_t t0 = DG_TRACE_ON() ? dg_trace_run_begin(op, worker) : 0;
    const dg_xcopy_t *c = &op->u.copy;
    for (uint32_t i = 0; c->src && c->dst && i < c->nspans; i++) {
        size_t off = (size_t)c->spans[i].begin * c->elsize;
        size_t len = (size_t)(c->spans[i].end - c->spans[i].begin) * c->elsize;
        dagger_status_t st = dg_bufs_copy(&ex->bufs, c->dst_space, c->dst + off, c->src_space,
                                          c->src + off, len);
        if (st != DAGGER_OK) {
            dg_exec_fail(ex, UINT64_MAX - 1, st, "a copy between memory spaces failed");
            break;
        }
    }
    if (DG_TRACE_ON())
        dg_trace_run_end(ex, op, worker, t0);
    dg_exec_finish(ex, op);
    return DAGGER_OK;
}

/* dagger.mem.send: a SEND op whose inputs are ready: the move_rewrap
 * message to the peer's memory-space actor leaves now. */
static dagger_status_t on_send(dagger_ctx_t *ctx)
{
    dg_xfer_send(exec_of(ctx)->xfer, op_of(ctx));
    return DAGGER_OK;
}

/* dagger.mem.recv: a RECV op whose destination is ready. */
static dagger_status_t on_recv(dagger_ctx_t *ctx)
{
    dg_xfer_recv(exec_of(ctx)->xfer, op_of(ctx));
    return DAGGER_OK;
}

/* dagger.mem.rewrap: a transfer from another rank's memory-space actor. */
static dagger_status_t on_rewrap(dagger_ctx_t *ctx)
{
    dg_xfer_arrived(exec_of(ctx)->xfer, dagger_ctx_payload(ctx));
    return DAGGER_OK;
}

/* dagger.mem.piece: a piece of a transfer sent in pieces. */
static dagger_status_t on_piece(dagger_ctx_t *ctx)
{
    dg_xfer_piece_arrived(exec_of(ctx)->xfer, dagger_ctx_payload(ctx));
    return DAGGER_OK;
}

dagger_status_t dg_host_space_start(dg_exec_t *ex)
{
    const dagger_handler_t handlers[] = {
        {ex->msg.alloc, on_alloc}, {ex->msg.free, on_free}, {ex->msg.copy, on_copy},
        {ex->msg.send, on_send},   {ex->msg.recv, on_recv}, {ex->msg.rewrap, on_rewrap},
        {ex->msg.piece, on_piece},
    };
    /* Unpinned: its turns run on whoever posts while it is idle (the
     * submitting thread for allocations, worker 0 for arrivals). */
    dagger_actor_desc_t d = {.name = "mem:host", .state = ex, .handlers = handlers,
                             .nhandlers = sizeof(handlers) / sizeof(handlers[0])};
    /* Lanes: one memory-space actor per thread that posts to it (the
     * workers and the submitting thread), interchangeable, sharing the
     * space's bookkeeping (the pool and the transfer matching keep their
     * own locks). A message goes to the first idle one, so a thread never
     * waits behind a holder that the OS descheduled mid-turn (4 ranks on 2
     * cores: a SEND queued behind a FREE turn waited for a time slice).
     * Lane 0 is spawned first (the same id on every rank): peers address
     * their move_rewrap messages to it. */
    int n = ex->nworkers + 1 < DG_MEM_LANES ? ex->nworkers + 1 : DG_MEM_LANES;
    dagger_status_t st = DAGGER_OK;
    for (int l = 0; l < n && st == DAGGER_OK; l++) {
        st = dg_act_spawn(ex->actors, &d, &ex->lane_addr[0][l]);
        if (st != DAGGER_OK)
            break;
        ex->bufs.owner[0][l] = ex->lane_addr[0][l];
        ex->lane[0][l] = dg_act_local(ex->actors, ex->lane_addr[0][l]);
        ex->nlanes[0] = l + 1;
    }
    if (st == DAGGER_OK) {
        ex->space_actor[0] = ex->lane_addr[0][0];
        ex->space[0] = ex->lane[0][0];
    }
    return st;
}
