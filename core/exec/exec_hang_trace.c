/* Hang dumps in the trace: what this rank waits for, as data the tool can
 * join across ranks (dagger-trace hang). The dump is taken by the waiting
 * submitting thread while the rank makes no progress; like the printed
 * dump it reads the op ring without stopping the workers. */
#include <string.h>

#include "core/exec/exec.h"
#include "core/trace/recorder.h"
#include "core/exec/exec_trace.h"
#include "core/trace/trace.h"

_Static_assert(DG_TRF_OP_LAUNCH == (int)DG_PLAN_OP_LAUNCH && DG_TRF_OP_SEND == (int)DG_PLAN_OP_SEND &&
                   DG_TRF_OP_RECV == (int)DG_PLAN_OP_RECV && DG_TRF_OP_COPY == (int)DG_PLAN_OP_COPY &&
                   DG_TRF_OP_ALLOC == (int)DG_PLAN_OP_ALLOC && DG_TRF_OP_FREE == (int)DG_PLAN_OP_FREE &&
                   DG_TRF_OP_REGION_END == (int)DG_PLAN_OP_REGION_END,
               "the trace names ops by the planner's kinds");

/* Waiters recorded per unfinished op: enough to follow a chain. */
#define DG_HANG_MAX_WAITERS 64

static dg_trf_hang_t *hang_event(dg_trf_hang_kind_t kind, size_t extra)
{
    dg_trf_hang_t *e = dg_rec_event(DG_TRE_HANG, kind, sizeof(*e) + extra);
    if (e)
        e->t = dg_trace_now();
    return e;
}

static void record_op(const dg_xop_t *op)
{
    dg_trf_hang_t *e = hang_event(DG_TRH_OP, 0);
    if (!e)
        return;
    e->seq = op->seq;
    e->opkind = (uint32_t)op->kind;
    e->pending = atomic_load_explicit(&op->pending, memory_order_relaxed);
    if (op->kind == DG_PLAN_OP_SEND || op->kind == DG_PLAN_OP_RECV) {
        e->tag = op->u.xfer.tag;
        e->peer = op->u.xfer.peer;
        e->chunk = op->u.xfer.chunk;
        e->bytes = op->u.xfer.bytes;
    } else if (op->kind == DG_PLAN_OP_LAUNCH) {
        e->task = op->u.launch.task;
        e->codelet = op->u.launch.codelet;
        e->peer = op->u.launch.worker;
    }
}

/* Who waits for op: the successor edges it has not released yet. */
static void record_waiters(const dg_xop_t *op)
{
    dg_xedge_t *e = atomic_load_explicit(&((dg_xop_t *)op)->succ, memory_order_acquire);
    for (int n = 0; e && e != DG_XOP_CLOSED && n < DG_HANG_MAX_WAITERS; e = e->next, n++) {
        dg_trf_hang_t *w = hang_event(DG_TRH_WAITER, 0);
        if (w) {
            w->seq = dg_xedge_op(e)->seq;
            w->task = op->seq;
        }
    }
}

void dg_trace_hang_begin(const struct dg_exec *ex, const char *why)
{
    size_t len = strlen(why) + 1;
    if (len > 256)
        len = 256;
    dg_trf_hang_t *b = hang_event(DG_TRH_BEGIN, len);
    if (b) {
        b->seq = atomic_load(&((dg_exec_t *)ex)->retired);
        b->tag = atomic_load(&ex->emitted);
        memcpy(b + 1, why, len - 1);
    }
    for (uint64_t i = 0; i <= ex->mask; i++) {
        const dg_xop_t *op = &ex->ring[i];
        if (!op->seq || atomic_load_explicit(&op->retired, memory_order_acquire))
            continue;
        record_op(op);
        record_waiters(op);
    }
    for (int w = 0; w < dg_rec_nworkers(); w++) {
        uint64_t task, t0;
        uint32_t codelet;
        if (!dg_rec_running_get(w, &task, &codelet, &t0))
            continue;
        dg_trf_hang_t *e = hang_event(DG_TRH_RUNNING, 0);
        if (e) {
            e->peer = w;
            e->task = task;
            e->codelet = codelet;
            e->t0 = t0;
        }
    }
}

void dg_trace_hang_rv(int waiting, uint64_t tag, int peer, uint64_t chunk, uint64_t bytes)
{
    dg_trf_hang_t *e = hang_event(waiting ? DG_TRH_RECV_WAIT : DG_TRH_EARLY, 0);
    if (!e)
        return;
    e->tag = tag;
    e->peer = peer;
    e->chunk = chunk;
    e->bytes = bytes;
}

void dg_trace_hang_end(void)
{
    hang_event(DG_TRH_END, 0);
    dg_rec_flush_mine();
}
