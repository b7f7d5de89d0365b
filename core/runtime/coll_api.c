/* The public collectives (dagger/coll.h): the runtime's transport with the
 * handle checked first. */
#include "core/runtime/runtime.h"
#include "core/base/status_internal.h"
#include "transport/coll.h"

/* The runtime's transport, or NULL (with the error detail set) for a
 * handle that is not live. */
static dg_tx_t *tx_of(dagger_runtime_t *rt, const char *fn)
{
    if (dg_runtime_ok(rt))
        return rt->tx;
    dg_error(DAGGER_ERR_BAD_HANDLE, "%s: not a live runtime handle (NULL or finalized)", fn);
    return NULL;
}

dagger_status_t dagger_barrier(dagger_runtime_t *rt)
{
    dg_tx_t *tx = tx_of(rt, "dagger_barrier");
    return tx ? dg_coll_barrier(tx) : DAGGER_ERR_BAD_HANDLE;
}

dagger_status_t dagger_bcast(dagger_runtime_t *rt, void *buf, size_t len, int root)
{
    dg_tx_t *tx = tx_of(rt, "dagger_bcast");
    return tx ? dg_coll_bcast(tx, buf, len, root) : DAGGER_ERR_BAD_HANDLE;
}

dagger_status_t dagger_allgather(dagger_runtime_t *rt, const void *mine, size_t len, void **all,
                                 size_t *lens)
{
    dg_tx_t *tx = tx_of(rt, "dagger_allgather");
    return tx ? dg_coll_allgather(tx, mine, len, all, lens) : DAGGER_ERR_BAD_HANDLE;
}

dagger_status_t dagger_allreduce(dagger_runtime_t *rt, void *buf, size_t count,
                                 dagger_dtype_t type, dagger_op_t op)
{
    dg_tx_t *tx = tx_of(rt, "dagger_allreduce");
    return tx ? dg_coll_allreduce(tx, buf, count, type, op) : DAGGER_ERR_BAD_HANDLE;
}

dagger_status_t dagger_allreduce_bytes(dagger_runtime_t *rt, void *buf, size_t len,
                                       dagger_combine_fn fn, void *ctx)
{
    dg_tx_t *tx = tx_of(rt, "dagger_allreduce_bytes");
    return tx ? dg_coll_allreduce_bytes(tx, buf, len, fn, ctx) : DAGGER_ERR_BAD_HANDLE;
}
