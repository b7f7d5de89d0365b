/* The public collectives (dagger/coll.h): the runtime's transport with the
 * handle checked first. */
#include "core/runtime/runtime.h"
#include "core/base/spmd_caller.h"
#include "core/base/status_internal.h"
#include "transport/coll.h"

/* The runtime's transport, or NULL (with *st and the error detail set) for
 * a handle that is not live or a call from a task's codelet. */
static dg_tx_t *tx_of(dagger_runtime_t *rt, const char *fn, dagger_status_t *st)
{
    *st = DAGGER_ERR_BAD_HANDLE;
    if (!dg_runtime_ok(rt)) {
        dg_error(DAGGER_ERR_BAD_HANDLE, "%s: not a live runtime handle (NULL or finalized)", fn);
        return NULL;
    }
    if ((*st = dg_spmd_allowed(fn)) != DAGGER_OK)
        return NULL;
    return rt->tx;
}

dagger_status_t dagger_barrier(dagger_runtime_t *rt)
{
    dagger_status_t st;
    dg_tx_t *tx = tx_of(rt, "dagger_barrier", &st);
    return tx ? dg_coll_barrier(tx) : st;
}

dagger_status_t dagger_bcast(dagger_runtime_t *rt, void *buf, size_t len, int root)
{
    dagger_status_t st;
    dg_tx_t *tx = tx_of(rt, "dagger_bcast", &st);
    return tx ? dg_coll_bcast(tx, buf, len, root) : st;
}

dagger_status_t dagger_allgather(dagger_runtime_t *rt, const void *mine, size_t len, void **all,
                                 size_t *lens)
{
    dagger_status_t st;
    dg_tx_t *tx = tx_of(rt, "dagger_allgather", &st);
    return tx ? dg_coll_allgather(tx, mine, len, all, lens) : st;
}

dagger_status_t dagger_allreduce(dagger_runtime_t *rt, void *buf, size_t count,
                                 dagger_dtype_t type, dagger_op_t op)
{
    dagger_status_t st;
    dg_tx_t *tx = tx_of(rt, "dagger_allreduce", &st);
    return tx ? dg_coll_allreduce(tx, buf, count, type, op) : st;
}

dagger_status_t dagger_allreduce_bytes(dagger_runtime_t *rt, void *buf, size_t len,
                                       dagger_combine_fn fn, void *ctx)
{
    dagger_status_t st;
    dg_tx_t *tx = tx_of(rt, "dagger_allreduce_bytes", &st);
    return tx ? dg_coll_allreduce_bytes(tx, buf, len, fn, ctx) : st;
}
