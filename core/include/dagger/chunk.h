/* Chunks and views: the data tasks work on.
 *
 * A chunk is an N-dimensional block of elements (column-major: dimension 0
 * varies fastest) owned by exactly one rank. Every rank creates the same chunks
 * in the same order (SPMD): on the owner the chunk has memory, elsewhere it is
 * metadata only. A view is a chunk plus a sub-box plus a dependency modifier;
 * tasks access views. */
#ifndef DAGGER_CHUNK_H
#define DAGGER_CHUNK_H

#include <dagger/export.h>
#include <dagger/runtime.h>
#include <dagger/status.h>
#include <dagger/types.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A chunk handle: a value, identical on every rank. id 0 is never a chunk. */
typedef struct dagger_chunk {
    uint64_t id;
} dagger_chunk_t;

/* Description of a new chunk. owner < 0 picks the default owner (chunks are
 * dealt round-robin over ranks in creation order). */
typedef struct dagger_chunk_desc {
    dagger_dtype_t dtype;
    int ndims;                      /* 1 .. DAGGER_MAX_DIMS */
    size_t dims[DAGGER_MAX_DIMS];
    int owner;                      /* owning rank, or -1 for the default */
    /* Where the chunk lives between regions: 0 (or DAGGER_PROC_CPU) the
     * owner's host memory; DAGGER_PROC_CUDA, _HIP or _TESTDEV the memory of
     * the owner's first device of that kind, so that tasks on that device
     * find it there region after region instead of copying it in and back. */
    dagger_proc_kind_t home;
} dagger_chunk_desc_t;

/* Creates a chunk (collective: every rank calls it in the same order). On the
 * owner the memory is allocated and zeroed; on a job of several ranks the
 * owner then tells the others whether that worked (one message each, which
 * they wait for), so that an owner out of memory fails the call on every
 * rank with the same detail, naming the owner. Not allowed inside a region.
 * Errors: DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_INVALID_ARG (desc or out
 * NULL, ndims, zero dims, owner >= nranks), DAGGER_ERR_DTYPE (unknown
 * dtype), DAGGER_ERR_OVERFLOW (a dimension above 2^40 or more than 2^50
 * elements), DAGGER_ERR_STATE (inside a region), DAGGER_ERR_NO_MEMORY,
 * DAGGER_ERR_SCOPE (home names a device kind the owner has none of; the
 * same on every rank). */
DAGGER_API
dagger_status_t dagger_chunk_create(dagger_runtime_t *rt, const dagger_chunk_desc_t *desc,
                                    dagger_chunk_t *out);

/* Creates n chunks (out[i] from descs[i]) as n dagger_chunk_create calls
 * would, with one agreement on the allocations instead of n: all are
 * created, or none (every out[i].id is then 0). The arrays' constructors
 * make their blocks this way. n may be 0. Errors: those of
 * dagger_chunk_create (descs or out NULL with n > 0 is
 * DAGGER_ERR_INVALID_ARG; a description's error names no index: the same
 * checks run on each). */
DAGGER_API
dagger_status_t dagger_chunk_create_many(dagger_runtime_t *rt, size_t n,
                                         const dagger_chunk_desc_t *descs, dagger_chunk_t *out);

/* Frees a chunk (collective). Inside a region the memory is released after the
 * last task that uses it. Errors: DAGGER_ERR_BAD_HANDLE (rt, or a chunk that
 * was never created, was freed, or is a future's id). */
DAGGER_API
dagger_status_t dagger_chunk_free(dagger_runtime_t *rt, dagger_chunk_t c);

/* The owner's memory of a chunk, for reading and writing between regions.
 * *data is NULL on ranks that do not own it, and where its home is a
 * device (read it with a task, or dagger_array_collect). The strides (in elements) are
 * written to strides when not NULL. Errors: DAGGER_ERR_BAD_HANDLE (rt or c,
 * as for dagger_chunk_free), DAGGER_ERR_INVALID_ARG (data NULL),
 * DAGGER_ERR_STATE (inside a region: the data may be elsewhere). */
DAGGER_API
dagger_status_t dagger_chunk_data(dagger_runtime_t *rt, dagger_chunk_t c, void **data,
                                  size_t strides[DAGGER_MAX_DIMS]);

/* The owning rank of a chunk. */
DAGGER_API
int dagger_chunk_owner(dagger_runtime_t *rt, dagger_chunk_t c);

/* A view: part of a chunk a task accesses. Build views with the functions
 * below; they check bounds when the view is used. */
typedef struct dagger_view {
    dagger_chunk_t chunk;
    int ndims;
    dagger_modifier_t mod;
    size_t off[DAGGER_MAX_DIMS];
    size_t ext[DAGGER_MAX_DIMS];
} dagger_view_t;

/* The whole chunk (ext = dims, off = 0, FULL). A bad handle gives a view with
 * ndims 0, which is rejected when used. */
DAGGER_API
dagger_view_t dagger_view(dagger_runtime_t *rt, dagger_chunk_t c);

/* A sub-box of a view: off is relative to v's box. ext entries must fit; a
 * box that does not (or overflows), NULL off or ext, or a bad v give a view
 * with ndims 0. */
DAGGER_API
dagger_view_t dagger_view_sub(dagger_view_t v, const size_t off[], const size_t ext[]);

/* The same box with a dependency modifier (dimensions 0 and 1); an unknown
 * modifier or a bad v gives a view with ndims 0. */
DAGGER_API
dagger_view_t dagger_view_mod(dagger_view_t v, dagger_modifier_t mod);

/* Collective: the current elements of a view, the same bytes on every rank,
 * without a hand-written gather: the view's box packed column-major
 * (ext[0] x ext[1] x ... elements of the chunk's dtype; a modifier does not
 * change what is returned: the whole box comes back). *len gets the byte
 * count. Outside a region, or inside one: the current data is then brought
 * to the owner first (planned alike on every rank) after the work submitted
 * so far. After a failure, as dagger_fetch: when the task that last wrote
 * the chunk failed or ran after its region's first failure, that failure is
 * returned on every rank. Errors: DAGGER_ERR_BAD_HANDLE (no such chunk),
 * DAGGER_ERR_BAD_VIEW, DAGGER_ERR_OVERFLOW (cap too small). */
DAGGER_API
dagger_status_t dagger_fetch_view(dagger_runtime_t *rt, dagger_view_t v, void *buf, size_t cap,
                                  size_t *len);
/* The same for the whole chunk (dagger_view(rt, c)). */
DAGGER_API
dagger_status_t dagger_fetch_chunk(dagger_runtime_t *rt, dagger_chunk_t c, void *buf, size_t cap,
                                   size_t *len);

#ifdef __cplusplus
}
#endif
#endif
