/* The collectives themselves: what each rank contributes, how two parts
 * fold into one, and what the caller gets back. The tree is in coll.c.
 *
 * An argument error on one rank (a NULL buffer, an unknown type) does not
 * leave the others waiting: that rank still takes part, carrying the
 * error, and every rank returns it. */
#include <stdlib.h>
#include <string.h>

#include "core/base/common.h"
#include "core/base/status_internal.h"
#include "transport/coll_internal.h"
#include "transport/wire.h"

dagger_status_t dg_coll_barrier(dg_tx_t *tx)
{
    DG_CHECK_ARG(tx, "dagger_barrier: NULL transport");
    dg_coll_call_t call;
    dg_coll_call_init(&call, tx, &(dg_coll_sig_t){.kind = DG_COLL_BARRIER});
    dg_coll_buf_t acc = {0}, out = {0};
    dagger_status_t st = dg_coll_run(&call, &acc, &out);
    dg_coll_buf_free(&out);
    return st;
}

/* Only the root's subtree carries bytes up; take them as they come. */
static dagger_status_t merge_bcast(dg_coll_call_t *call, dg_coll_buf_t *acc, const void *in,
                                   size_t len)
{
    (void)call;
    if (!len)
        return DAGGER_OK;
    acc->len = 0;
    return dg_coll_buf_append(acc, in, len);
}

dagger_status_t dg_coll_bcast(dg_tx_t *tx, void *buf, size_t len, int root)
{
    DG_CHECK_ARG(tx, "dagger_bcast: NULL transport");
    dg_coll_call_t call;
    dg_coll_call_init(&call, tx, &(dg_coll_sig_t){.kind = DG_COLL_BCAST, .root = root, .size = len});
    call.merge = merge_bcast;
    if (root < 0 || root >= tx->size)
        call.local = dg_error(DAGGER_ERR_INVALID_ARG, "dagger_bcast: root %d outside 0..%d", root,
                              tx->size - 1);
    else if (!buf && len)
        call.local = dg_error(DAGGER_ERR_INVALID_ARG, "dagger_bcast: NULL buffer of %zu bytes", len);
    dg_coll_buf_t acc = {0}, out = {0};
    dagger_status_t st = DAGGER_OK;
    if (call.local == DAGGER_OK && tx->rank == root)
        st = dg_coll_buf_append(&acc, buf, len);
    if (st != DAGGER_OK)
        call.local = st;
    st = dg_coll_run(&call, &acc, &out);
    if (st == DAGGER_OK && out.len != len)
        st = dg_error(DAGGER_ERR_INTERNAL, "dagger_bcast: %zu bytes arrived for %zu", out.len, len);
    if (st == DAGGER_OK && tx->rank != root && len)
        memcpy(buf, out.p, len);
    dg_coll_buf_free(&out);
    return st;
}

/* Parts are sequences of (u64 length, bytes), one per rank in rank order:
 * folding two is appending. */
static dagger_status_t merge_concat(dg_coll_call_t *call, dg_coll_buf_t *acc, const void *in,
                                    size_t len)
{
    (void)call;
    return dg_coll_buf_append(acc, in, len);
}

dagger_status_t dg_coll_allgather(dg_tx_t *tx, const void *mine, size_t len, void **all,
                                  size_t *lens)
{
    DG_CHECK_ARG(tx, "dagger_allgather: NULL transport");
    dg_coll_call_t call;
    dg_coll_call_init(&call, tx, &(dg_coll_sig_t){.kind = DG_COLL_ALLGATHER});
    call.merge = merge_concat;
    if (!all || !lens || (!mine && len))
        call.local = dg_error(DAGGER_ERR_INVALID_ARG, "dagger_allgather: NULL output, lengths, "
                              "or input of %zu bytes", len);
    else
        *all = NULL;
    dg_coll_buf_t acc = {0}, out = {0};
    unsigned char head[8];
    dg_wire_cursor_t c = dg_wire_cursor(head, sizeof(head));
    dg_wire_put_u64(&c, call.local == DAGGER_OK ? len : 0);
    dagger_status_t st = dg_coll_buf_append(&acc, head, sizeof(head));
    if (st == DAGGER_OK && call.local == DAGGER_OK)
        st = dg_coll_buf_append(&acc, mine, len);
    if (st != DAGGER_OK && call.local == DAGGER_OK)
        call.local = st;
    st = dg_coll_run(&call, &acc, &out);
    if (st == DAGGER_OK)
        st = dg_coll_unpack_gathered(out.p, out.len, tx->size, all, lens);
    dg_coll_buf_free(&out);
    return st;
}

static dagger_status_t merge_reduce(dg_coll_call_t *call, dg_coll_buf_t *acc, const void *in,
                                    size_t len)
{
    if (len != acc->len)
        return dg_error(DAGGER_ERR_PROTOCOL, "reduction part of %zu bytes, expected %zu", len,
                        acc->len);
    if (call->combine)
        call->combine(acc->p, in, len, call->combine_ctx);
    else
        dg_coll_reduce((dagger_dtype_t)call->sig.type, (dagger_op_t)call->sig.op,
                       acc->p, in, (size_t)call->sig.size);
    return DAGGER_OK;
}

/* Shared by both allreduce flavours once the call is described. */
static dagger_status_t reduce(dg_coll_call_t *call, void *buf, size_t bytes)
{
    dg_coll_buf_t acc = {0}, out = {0};
    dagger_status_t st = DAGGER_OK;
    if (call->local == DAGGER_OK)
        st = dg_coll_buf_append(&acc, buf, bytes);
    if (st != DAGGER_OK)
        call->local = st;
    call->merge = merge_reduce;
    st = dg_coll_run(call, &acc, &out);
    if (st == DAGGER_OK && out.len != bytes)
        st = dg_error(DAGGER_ERR_INTERNAL, "allreduce: %zu bytes arrived for %zu", out.len, bytes);
    if (st == DAGGER_OK && bytes)
        memcpy(buf, out.p, bytes);
    dg_coll_buf_free(&out);
    return st;
}

dagger_status_t dg_coll_allreduce(dg_tx_t *tx, void *buf, size_t count, dagger_dtype_t type,
                                  dagger_op_t op)
{
    return dg_coll_allreduce_plan(tx, buf, count, type, op, 0);
}

dagger_status_t dg_coll_allreduce_plan(dg_tx_t *tx, void *buf, size_t count, dagger_dtype_t type,
                                       dagger_op_t op, uint64_t plan)
{
    DG_CHECK_ARG(tx, "dagger_allreduce: NULL transport");
    if (plan) /* a region's end: every op of the region finished (coll_probe.c) */
        atomic_store(&tx->agreeing, atomic_load(&tx->regions));
    dg_coll_call_t call;
    dg_coll_call_init(&call, tx, &(dg_coll_sig_t){.kind = DG_COLL_ALLREDUCE, .op = (uint8_t)op,
                                                  .type = (uint8_t)type, .size = count,
                                                  .plan = plan});
    size_t esize = dg_coll_type_size(type);
    if (!esize || !dg_coll_op_valid(type, op))
        call.local = dg_error(DAGGER_ERR_INVALID_ARG, "dagger_allreduce: operation %d on type %d "
                              "(types: DAGGER_I64, _U64, _F64; operations: DAGGER_OP_ADD, _MIN, "
                              "_MAX, and _BOR on the integer types)",
                              (int)op, (int)type);
    else if (count > SIZE_MAX / esize || (!buf && count))
        call.local = dg_error(DAGGER_ERR_INVALID_ARG, "dagger_allreduce: NULL buffer or too many "
                              "elements (%zu)", count);
    return reduce(&call, buf, call.local == DAGGER_OK ? count * esize : 0);
}

dagger_status_t dg_coll_allreduce_bytes(dg_tx_t *tx, void *buf, size_t len, dagger_combine_fn fn,
                                        void *ctx)
{
    DG_CHECK_ARG(tx, "dagger_allreduce_bytes: NULL transport");
    dg_coll_call_t call;
    dg_coll_call_init(&call, tx, &(dg_coll_sig_t){.kind = DG_COLL_ALLREDUCE_BYTES, .size = len});
    call.combine = fn;
    call.combine_ctx = ctx;
    if (!fn || (!buf && len))
        call.local = dg_error(DAGGER_ERR_INVALID_ARG, "dagger_allreduce_bytes: NULL combine "
                              "function or NULL buffer of %zu bytes", len);
    return reduce(&call, buf, call.local == DAGGER_OK ? len : 0);
}
