/* The executor's trace hooks: a worker runs a task or a copy, the planner
 * emitted a transfer, a transfer starts, its data arrives, it ends. Each
 * builds one event with the recorder (core/trace/recorder.h). */
#include "core/exec/exec_trace.h"

#include "core/exec/exec.h"
#include "core/trace/recorder.h"
#include "core/trace/trace.h"

uint64_t dg_trace_run_begin(const struct dg_xop *op, int worker)
{
    uint64_t t0 = dg_trace_now();
    dg_trace_thread_t *th = dg_rec_thread();
    if (th) {
        th->worker = worker;
        dg_rec_idle_ends(th, t0);
    }
    if (op->kind == DG_PLAN_OP_LAUNCH)
        dg_rec_running_set(worker, op->u.launch.task, op->u.launch.codelet, t0);
    return t0;
}

static uint64_t copy_bytes(const dg_xcopy_t *c)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < c->nspans; i++)
        n += (c->spans[i].end - c->spans[i].begin) * (uint64_t)c->elsize;
    return n;
}

void dg_trace_run_end(const struct dg_exec *ex, const struct dg_xop *op, int worker, uint64_t t0)
{
    uint64_t t1 = dg_trace_now();
    if (op->kind == DG_PLAN_OP_COPY) {
        dg_trf_copy_t *e = dg_rec_event(DG_TRE_COPY, (uint32_t)worker, sizeof(*e));
        if (e) {
            e->t0 = t0;
            e->t1 = t1;
            e->bytes = copy_bytes(&op->u.copy);
        }
        return;
    }
    dg_rec_running_set(worker, 0, 0, 0);
    dg_trf_task_t *e = dg_rec_event(DG_TRE_TASK, (uint32_t)worker, sizeof(*e));
    if (!e)
        return;
    e->t0 = t0;
    e->t1 = t1;
    e->task = op->u.launch.task;
    e->codelet = op->u.launch.codelet;
    e->failed = ex ? (uint32_t)atomic_load_explicit(&ex->failed, memory_order_relaxed) : 0;
}

static void xfer_event(dg_trf_xfer_kind_t kind, uint64_t seq, uint64_t tag, uint64_t bytes,
                       uint64_t chunk, int peer, int is_send)
{
    uint64_t t = dg_trace_now();
    dg_trf_xfer_t *e = dg_rec_event(DG_TRE_XFER, kind, sizeof(*e));
    if (e)
        *e = (dg_trf_xfer_t){e->h, t, seq, tag, bytes, chunk, peer, (uint32_t)is_send};
}

void dg_trace_emit(const struct dg_plan_op *p)
{
    if (p->kind == DG_PLAN_OP_SEND || p->kind == DG_PLAN_OP_RECV)
        xfer_event(DG_TRX_PLANNED, p->seq, p->u.xfer.tag, p->u.xfer.bytes, p->u.xfer.buf.chunk,
                   p->u.xfer.peer, p->kind == DG_PLAN_OP_SEND);
}

void dg_trace_xfer_start(const struct dg_xop *op)
{
    const dg_xxfer_t *x = &op->u.xfer;
    int send = op->kind == DG_PLAN_OP_SEND;
    xfer_event(send ? DG_TRX_SEND_START : DG_TRX_RECV_POST, op->seq, x->tag, x->bytes, x->chunk,
               x->peer, send);
}

void dg_trace_xfer_arrive(uint64_t tag, int src, size_t bytes)
{
    xfer_event(DG_TRX_RECV_ARRIVE, 0, tag, bytes, 0, src, 0);
}

void dg_trace_finish(const struct dg_xop *op)
{
    if (op->kind != DG_PLAN_OP_SEND && op->kind != DG_PLAN_OP_RECV)
        return;
    const dg_xxfer_t *x = &op->u.xfer;
    int send = op->kind == DG_PLAN_OP_SEND;
    xfer_event(send ? DG_TRX_SEND_DONE : DG_TRX_RECV_DONE, op->seq, x->tag, x->bytes, x->chunk,
               x->peer, send);
}
