/* Collectives over all ranks: barrier, broadcast, allgather, allreduce.
 *
 * Every rank calls the same collectives in the same order (they are
 * numbered). Results are bit-identical on every rank: reductions combine
 * contributions in a fixed order (a binomial tree over ranks 0..n-1, lower
 * ranks on the left): at rank 0, which then broadcasts the result, or, on
 * at most 8 ranks, on every rank from every rank's part (the same order,
 * one message deep; docs/transport.md). A rank
 * that calls a different collective, or the same one with a different
 * root, count, type or operation, makes the call fail on every rank with
 * DAGGER_ERR_DIVERGENCE and a detail naming both ranks and both calls,
 * instead of hanging. A lost rank makes it fail with DAGGER_ERR_PEER_LOST.
 *
 * Call them from one thread at a time (the thread that submits work), not
 * from an actor's handler (they wait for the other ranks).
 *
 * Errors of every call here: DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_INVALID_ARG
 * (a NULL buffer with a length > 0, a root that is not a rank, an unknown
 * type or operation, BOR of doubles, a NULL combine function or output, a
 * count whose bytes overflow), DAGGER_ERR_DIVERGENCE, DAGGER_ERR_PEER_LOST,
 * DAGGER_ERR_TRANSPORT (the transport failed to send), DAGGER_ERR_NO_MEMORY. */
#ifndef DAGGER_COLL_H
#define DAGGER_COLL_H

#include <dagger/export.h>
#include <stddef.h>

#include <dagger/runtime.h>
#include <dagger/status.h>
#include <dagger/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Combines two contributions of len bytes: acc = acc (+) in, where acc holds
 * the lower ranks' part and in the higher ranks' part. It must be
 * associative; it need not be commutative. ctx is the pointer given to
 * dagger_allreduce_bytes on the calling rank. */
typedef void (*dagger_combine_fn)(void *acc, const void *in, size_t len, void *ctx);

/* Returns on every rank once every rank has called it. */
DAGGER_API
dagger_status_t dagger_barrier(dagger_runtime_t *rt);

/* Copies len bytes at buf on rank root into buf on every rank. */
DAGGER_API
dagger_status_t dagger_bcast(dagger_runtime_t *rt, void *buf, size_t len, int root);

/* Gathers len bytes from every rank (lengths may differ between ranks).
 * On success *all is a malloc'ed buffer (release it with free()) holding
 * every rank's bytes in rank order, and lens[r] (lens has dagger_nranks
 * entries) is the length rank r gave. */
DAGGER_API
dagger_status_t dagger_allgather(dagger_runtime_t *rt, const void *mine, size_t len, void **all,
                                 size_t *lens);

/* Reduces count elements of type (DAGGER_I64, DAGGER_U64 or DAGGER_F64) at
 * buf over all ranks with op (DAGGER_OP_ADD, _MIN, _MAX, or _BOR for the
 * integer types: see dagger_op_t in dagger/types.h); the result replaces
 * buf on every rank. */
DAGGER_API
dagger_status_t dagger_allreduce(dagger_runtime_t *rt, void *buf, size_t count,
                                 dagger_dtype_t type, dagger_op_t op);

/* Reduces len bytes at buf over all ranks with fn (see dagger_combine_fn);
 * the result replaces buf on every rank. */
DAGGER_API
dagger_status_t dagger_allreduce_bytes(dagger_runtime_t *rt, void *buf, size_t len,
                                       dagger_combine_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
