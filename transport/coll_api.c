/* The public collectives (dagger/coll.h): the runtime's transport with the
 * handle checked first. */
#include "core/runtime.h"
#include "core/status_internal.h"
#include "transport/coll.h"

static dagger_status_t tx_of(dagger_runtime_t *rt, const char *fn, dg_tx_t **tx)
{
    if (!dg_runtime_ok(rt))
        return dg_error(DAGGER_ERR_BAD_HANDLE, "%s: not a live runtime handle (NULL or finalized)",
                        fn);
    *tx = rt->tx;
    return DAGGER_OK;
}

dagger_status_t dagger_barrier(dagger_runtime_t *rt)
{
    dg_tx_t *tx;
    dagger_status_t st = tx_of(rt, "dagger_barrier", &tx);
    return st == DAGGER_OK ? dg_coll_barrier(tx) : st;
}

dagger_status_t dagger_bcast(dagger_runtime_t *rt, void *buf, size_t len, int root)
{
    dg_tx_t *tx;
    dagger_status_t st = tx_of(rt, "dagger_bcast", &tx);
    return st == DAGGER_OK ? dg_coll_bcast(tx, buf, len, root) : st;
}

dagger_status_t dagger_allgather(dagger_runtime_t *rt, const void *mine, size_t len, void **all,
                                 size_t *lens)
{
    dg_tx_t *tx;
    dagger_status_t st = tx_of(rt, "dagger_allgather", &tx);
    return st == DAGGER_OK ? dg_coll_allgather(tx, mine, len, all, lens) : st;
}

dagger_status_t dagger_allreduce(dagger_runtime_t *rt, void *buf, size_t count,
                                 dagger_reduce_type_t type, dagger_reduce_op_t op)
{
    dg_tx_t *tx;
    dagger_status_t st = tx_of(rt, "dagger_allreduce", &tx);
    return st == DAGGER_OK ? dg_coll_allreduce(tx, buf, count, type, op) : st;
}

dagger_status_t dagger_allreduce_bytes(dagger_runtime_t *rt, void *buf, size_t len,
                                       dagger_combine_fn fn, void *ctx)
{
    dg_tx_t *tx;
    dagger_status_t st = tx_of(rt, "dagger_allreduce_bytes", &tx);
    return st == DAGGER_OK ? dg_coll_allreduce_bytes(tx, buf, len, fn, ctx) : st;
}
