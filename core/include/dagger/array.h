/* Distributed arrays: blocked N-dimensional arrays spread over the ranks,
 * with constructors, collect, element-wise operations, reductions and
 * stencils. Everything runs as tasks in regions (dagger/region.h): an array
 * is a grid of chunks, one per block, and every operation submits one task
 * per block (or per tile where two block grids differ).
 *
 * Layout: column-major like the rest of Dagger-C. Element (i0, i1, ...) of an
 * array of dims (n0, n1, ...) is at linear index i0 + n0*(i1 + n1*(i2 + ...)),
 * and blocks are numbered the same way over the block grid. Block sizes need
 * not divide the dims: the last block along a dimension is then smaller.
 *
 * Every call here is collective: every rank makes the same calls in the same
 * order with the same arguments (SPMD); host buffers are the exception and
 * are named as such. Calls that take a `dagger_region_t *r` submit their tasks
 * into that open region when r is not NULL (so several operations pipeline
 * and the region's end waits for them), or open and end a region of their
 * own when r is NULL (the call then returns once the work is done, with the
 * region's status). docs/arrays.md has examples.
 *
 * Stencils over arrays are in dagger/stencil.h.
 *
 * Errors every call here may return, besides those listed at each call:
 * DAGGER_ERR_BAD_HANDLE (a runtime, array or region that is NULL,
 * destroyed or of another kind; r must be NULL or an open region),
 * DAGGER_ERR_INVALID_ARG (r belongs to another runtime than the arrays),
 * DAGGER_ERR_NO_MEMORY, and for calls that run tasks DAGGER_ERR_TASK_FAILED
 * (a task of the call failed: the same on every rank, the detail names the
 * rank and why; a NULL host buffer on the rank that reads or writes it fails
 * this way, since only that rank can see it). */
#ifndef DAGGER_ARRAY_H
#define DAGGER_ARRAY_H

#include <dagger/export.h>
#include <dagger/chunk.h>
#include <dagger/region.h>
#include <dagger/runtime.h>
#include <dagger/status.h>
#include <dagger/task.h>
#include <dagger/types.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dagger_array dagger_array_t;

/* ------------------------------------------------------------ distribution */

/* Which rank owns which block. Every rank must compute the same answer. */
typedef enum dagger_dist_kind {
    DAGGER_DIST_DEFAULT = 0,   /* blocks dealt cyclically, in block order, over the CPU
                                  processors of all ranks (dagger_procs): a rank with two
                                  worker threads gets two consecutive blocks per round */
    DAGGER_DIST_CYCLIC_2D = 1, /* 2-D block-cyclic over a prows x pcols grid of ranks (the
                                  layout of tiled linear algebra): block (i, j) goes to rank
                                  (i mod prows) + prows * (j mod pcols); higher block
                                  dimensions do not change the owner */
    DAGGER_DIST_MAP = 2,       /* a user function block index -> rank */
    DAGGER_DIST_TABLE = 3      /* a user table: the rank of every block, in block order */
} dagger_dist_kind_t;

/* A block -> rank function for DAGGER_DIST_MAP: block[] holds the block's
 * index along each of the ndims dimensions. It must return a rank in
 * 0 .. nranks-1 and the same value on every rank (no rank-dependent state). */
typedef int (*dagger_block_map_fn)(const size_t block[], int ndims, int nranks, void *ctx);

typedef struct dagger_dist {
    dagger_dist_kind_t kind;
    int prows, pcols;          /* CYCLIC_2D: the rank grid; 0, 0 = the squarest grid with
                                  prows <= pcols and prows * pcols = the number of ranks */
    dagger_block_map_fn map;   /* MAP */
    void *map_ctx;
    const int *table;          /* TABLE: one rank per block, in block order... */
    size_t ntable;             /* ...and its length (the number of blocks) */
} dagger_dist_t;

/* Shape of an array. Zero-initialise, then fill in. */
typedef struct dagger_array_desc {
    dagger_dtype_t dtype;          /* DAGGER_F32, DAGGER_F64, DAGGER_I32 or DAGGER_I64 */
    int ndims;                     /* 1 .. DAGGER_MAX_DIMS */
    size_t dims[DAGGER_MAX_DIMS];  /* each > 0 */
    size_t block[DAGGER_MAX_DIMS]; /* each > 0; larger than dims[k] means one block */
    const dagger_dist_t *dist;     /* NULL = DAGGER_DIST_DEFAULT */
    /* Where every block lives between regions (dagger_chunk_desc_t.home):
     * 0 the owners' host memory, or a device kind (DAGGER_PROC_CUDA, ...):
     * each owner's first device of it, so that routines on those devices
     * (a region scoped to them) reuse the blocks in place region after
     * region. DAGGER_ERR_SCOPE where an owner has no such device. */
    dagger_proc_kind_t home;
} dagger_array_desc_t;

/* ------------------------------------------------------------ construction */

/* Creates an array of zeros. Collective; not inside a region.
 * Errors: DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_INVALID_ARG (ndims, a zero
 * dimension or block size, a distribution that names a rank out of range or
 * a table of the wrong length), DAGGER_ERR_DTYPE (not f32/f64/i32/i64),
 * DAGGER_ERR_STATE (a region is open). */
DAGGER_API
dagger_status_t dagger_array_zeros(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                   dagger_array_t **out);

/* Creates an array with every element equal to value (converted to the
 * dtype; for integer arrays value must be an integer the dtype holds).
 * Errors: those of dagger_array_zeros; DAGGER_ERR_INVALID_ARG (a value an
 * integer dtype does not hold: fractional, out of range or NaN). */
DAGGER_API
dagger_status_t dagger_array_full(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                  double value, dagger_array_t **out);

/* dagger_array_full with value 1. Errors: those of dagger_array_zeros. */
DAGGER_API
dagger_status_t dagger_array_ones(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                  dagger_array_t **out);

/* Uniform random numbers: [0, 1) for f32/f64, the whole range of the type
 * for i32/i64. Element i (its column-major linear index) gets
 * dagger_rand_bits(seed, i) mapped to the type, so the array is the same
 * whatever the number of ranks, the block sizes and the distribution.
 * Errors: those of dagger_array_zeros. */
DAGGER_API
dagger_status_t dagger_array_rand(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                  uint64_t seed, dagger_array_t **out);

/* Standard normal numbers (f32/f64 only; DAGGER_ERR_DTYPE otherwise), also a
 * pure function of (seed, linear index): dagger_rand_normal(seed, i).
 * Errors: those of dagger_array_zeros. */
DAGGER_API
dagger_status_t dagger_array_randn(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                   uint64_t seed, dagger_array_t **out);

/* The random streams themselves, for checking or reproducing an array. */
DAGGER_API
uint64_t dagger_rand_bits(uint64_t seed, uint64_t index);
DAGGER_API
double dagger_rand_uniform(uint64_t seed, uint64_t index);  /* [0, 1), 53 bits */
DAGGER_API
double dagger_rand_normal(uint64_t seed, uint64_t index);

/* A function of the global index, for dagger_array_from_fn. index[] has
 * ndims entries; args are the bytes given at the call (possibly unaligned:
 * memcpy them out). Runs on the ranks that own blocks, concurrently on
 * worker threads: it must be pure. */
typedef double (*dagger_index_fn)(const size_t index[], int ndims, const void *args);

/* Index functions are registered by name, like codelets, so that every rank
 * names the same function (function pointers differ between processes).
 * Registering the same name again with the same function is a no-op.
 * Errors: DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_INVALID_ARG (no name,
 * function or output, a name longer than 63), DAGGER_ERR_EXISTS (the name is
 * registered with another function), DAGGER_ERR_TYPE_CONFLICT (two names with
 * the same hash). */
typedef struct dagger_index_fn_id {
    uint32_t id;
} dagger_index_fn_id_t;
DAGGER_API
dagger_status_t dagger_index_fn_register(dagger_runtime_t *rt, const char *name,
                                         dagger_index_fn fn, dagger_index_fn_id_t *out);

/* Creates an array with element idx = fn(idx, ndims, args) (converted to the
 * dtype). args (len bytes, may be 0) are copied and passed to every call.
 * Errors: those of dagger_array_zeros; DAGGER_ERR_NOT_FOUND (fn is not
 * registered), DAGGER_ERR_INVALID_ARG (args NULL with len > 0). */
DAGGER_API
dagger_status_t dagger_array_from_fn(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                     dagger_index_fn_id_t fn, const void *args, size_t len,
                                     dagger_array_t **out);

/* Creates an array from rank 0's host buffer (prod(dims) elements of the
 * dtype, column-major). Only rank 0's `host` is read; other ranks may pass
 * NULL. The blocks reach their owners through the planner. Errors: those of
 * dagger_array_zeros; DAGGER_ERR_TASK_FAILED (host NULL on rank 0). */
DAGGER_API
dagger_status_t dagger_array_from_host(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                       const void *host, dagger_array_t **out);

/* An array of zeros with the shape, blocks and distribution of a.
 * Errors: DAGGER_ERR_BAD_HANDLE (a), DAGGER_ERR_INVALID_ARG (out NULL),
 * DAGGER_ERR_STATE (a region is open). */
DAGGER_API
dagger_status_t dagger_array_similar(const dagger_array_t *a, dagger_array_t **out);

/* Frees the array's chunks (collective). The handle is invalid afterwards;
 * a second call is DAGGER_ERR_BAD_HANDLE. */
DAGGER_API
dagger_status_t dagger_array_destroy(dagger_array_t *a);

/* ------------------------------------------------------------ queries */

/* The array's shape; desc->dist is set to NULL. Errors: DAGGER_ERR_BAD_HANDLE. */
DAGGER_API
dagger_status_t dagger_array_info(const dagger_array_t *a, dagger_array_desc_t *desc);

/* Number of blocks. */
DAGGER_API
size_t dagger_array_nblocks(const dagger_array_t *a);

/* Where block b (0 .. nblocks-1, column-major over the block grid) is.
 * Errors: DAGGER_ERR_BAD_HANDLE (a), DAGGER_ERR_INVALID_ARG (b >= nblocks,
 * info NULL). */
typedef struct dagger_array_block {
    dagger_chunk_t chunk;
    int owner;
    size_t index[DAGGER_MAX_DIMS];  /* position in the block grid */
    size_t offset[DAGGER_MAX_DIMS]; /* global index of its first element */
    size_t extent[DAGGER_MAX_DIMS]; /* its dims (smaller at the edges) */
} dagger_array_block_t;
DAGGER_API
dagger_status_t dagger_array_block_info(const dagger_array_t *a, size_t b,
                                        dagger_array_block_t *info);

/* The whole of block b as a view, for tasks of your own; a view with ndims
 * 0 (rejected by dagger_submit) for a bad handle or index. */
DAGGER_API
dagger_view_t dagger_array_block(const dagger_array_t *a, size_t b);

/* ------------------------------------------------------------ views */

/* A view of the sub-box [off, off + ext) of a (off[k] + ext[k] <= dims[k],
 * ext[k] >= 1): an array handle whose dims are ext, sharing a's blocks.
 * Element-wise operations (including fill, copy, map and transpose),
 * reductions (dagger_array_reduce, _dot) and collects accept views
 * wherever they accept arrays, mixed with arrays and other views of the
 * same dims: the work is cut at the box's edges, and each task reads or
 * writes only the part of a block inside the box (a sub-view of its chunk),
 * so only those elements move and dependencies are exact. The random and
 * index-function refills treat a view as an array of its own dims. A view
 * of a view is a view of the same array (the offsets add up). Creating a
 * view makes no task and no message; it may be done inside a region. A
 * view's blocks (dagger_array_nblocks, _block_info, _block) are its
 * parent's. Reductions along a dimension take views too (input and output);
 * stencils, dagger_array_scatter and the linear algebra (dagger/linalg.h)
 * take none (DAGGER_ERR_INVALID_ARG). Destroy views with dagger_array_destroy
 * before their array (destroying an array with live views is
 * DAGGER_ERR_STATE). Errors: DAGGER_ERR_BAD_HANDLE, DAGGER_ERR_INVALID_ARG
 * (a box outside the array or of extent 0). */
DAGGER_API
dagger_status_t dagger_array_view(dagger_array_t *a, const size_t off[], const size_t ext[],
                                  dagger_array_t **out);

/* ------------------------------------------------------------ collect and scatter */

#define DAGGER_ALL_RANKS (-1)

/* Gathers the whole array into out (prod(dims) elements, column-major) on
 * every rank: the same bytes everywhere. Collective; not inside a region.
 * Errors: DAGGER_ERR_BAD_HANDLE (a), DAGGER_ERR_STATE (a region is open),
 * DAGGER_ERR_TASK_FAILED (out NULL on some rank). */
DAGGER_API
dagger_status_t dagger_array_collect(dagger_array_t *a, void *out);

/* Gathers it on rank root only; out is not touched (and may be NULL) on the
 * other ranks, and nothing is sent to them. Errors: those of
 * dagger_array_collect; DAGGER_ERR_INVALID_ARG (root is not a rank). */
DAGGER_API
dagger_status_t dagger_array_collect_to(dagger_array_t *a, int root, void *out);

/* Gathers the sub-box [off, off + ext) (prod(ext) elements, column-major)
 * on rank root, or on every rank with root = DAGGER_ALL_RANKS. Only the
 * elements inside the box travel. Errors: those of dagger_array_collect;
 * DAGGER_ERR_BAD_VIEW (box outside the array, or off + ext overflows),
 * DAGGER_ERR_INVALID_ARG (off or ext NULL, root neither a rank nor
 * DAGGER_ALL_RANKS), DAGGER_ERR_TASK_FAILED (out NULL where it is written). */
DAGGER_API
dagger_status_t dagger_array_collect_box(dagger_array_t *a, const size_t off[], const size_t ext[],
                                         int root, void *out);

/* Overwrites the array with rank 0's host buffer (only rank 0's is read).
 * Errors: DAGGER_ERR_BAD_HANDLE (a), DAGGER_ERR_STATE (a region is open),
 * DAGGER_ERR_TASK_FAILED (host NULL on rank 0). */
DAGGER_API
dagger_status_t dagger_array_scatter(dagger_array_t *a, const void *host);

/* ------------------------------------------------------------ element-wise */

/* Operands of one element-wise call must have the same dims (the transposed
 * dims for dagger_array_transpose) and the same dtype. Their blocks and
 * distributions may differ: the work is then split into the tiles where the
 * block grids overlap, and only those parts move. The output may be one of
 * the inputs (in-place: out = a op b with out == a, or views of the same
 * box), except for transpose; an output and an input that are views of one
 * array whose boxes overlap otherwise are DAGGER_ERR_INVALID_ARG.
 * Integer arithmetic wraps around (two's complement); integer division by
 * zero fails the task (DAGGER_ERR_TASK_FAILED at the region's end). Scalars
 * are doubles; for integer arrays they must be integers the dtype holds.
 * op is DAGGER_OP_ADD, _SUB, _MUL or _DIV (dagger_op_t, dagger/types.h).
 * Errors of every call below: DAGGER_ERR_BAD_HANDLE (an array or r),
 * DAGGER_ERR_INVALID_ARG (another op; operands of other dims; a scalar an
 * integer dtype does not hold), DAGGER_ERR_DTYPE (operands of different
 * dtypes), DAGGER_ERR_TASK_FAILED (integer division by zero). */

/* out = a op b, element by element. */
DAGGER_API
dagger_status_t dagger_array_binop(dagger_region_t *r, dagger_op_t op, dagger_array_t *out,
                                   dagger_array_t *a, dagger_array_t *b);
/* out = a op s (the scalar broadcast to every element). */
DAGGER_API
dagger_status_t dagger_array_scalar(dagger_region_t *r, dagger_op_t op, dagger_array_t *out,
                                    dagger_array_t *a, double s);
/* out = s op a. */
DAGGER_API
dagger_status_t dagger_array_rscalar(dagger_region_t *r, dagger_op_t op, dagger_array_t *out,
                                     double s, dagger_array_t *a);

static inline dagger_status_t dagger_array_add(dagger_region_t *r, dagger_array_t *out,
                                               dagger_array_t *a, dagger_array_t *b)
{
    return dagger_array_binop(r, DAGGER_OP_ADD, out, a, b);
}
static inline dagger_status_t dagger_array_sub(dagger_region_t *r, dagger_array_t *out,
                                               dagger_array_t *a, dagger_array_t *b)
{
    return dagger_array_binop(r, DAGGER_OP_SUB, out, a, b);
}
static inline dagger_status_t dagger_array_mul(dagger_region_t *r, dagger_array_t *out,
                                               dagger_array_t *a, dagger_array_t *b)
{
    return dagger_array_binop(r, DAGGER_OP_MUL, out, a, b);
}
static inline dagger_status_t dagger_array_div(dagger_region_t *r, dagger_array_t *out,
                                               dagger_array_t *a, dagger_array_t *b)
{
    return dagger_array_binop(r, DAGGER_OP_DIV, out, a, b);
}

/* out = in (any blocks and distributions: this is also how to re-block or
 * redistribute an array). */
DAGGER_API
dagger_status_t dagger_array_copy(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in);

/* Every element of out = value. */
DAGGER_API
dagger_status_t dagger_array_fill(dagger_region_t *r, dagger_array_t *out, double value);

/* out = in^T for 2-D arrays (out dims = in dims swapped). out must not be in. */
DAGGER_API
dagger_status_t dagger_array_transpose(dagger_region_t *r, dagger_array_t *out, dagger_array_t *in);

/* Runs codelet cl once per tile: argument 0 is the output tile (DAGGER_OUT,
 * or DAGGER_INOUT when out is also one of the inputs), arguments 1..nin the
 * input tiles (DAGGER_IN; the same data as argument 0 for an input that is
 * out), then, when len > 0, args by value. All tiles of one task have the
 * same dims; use the slots' strides. Inputs need the output's dims, not its
 * dtype. 0 <= nin <= DAGGER_MAX_ARGS - 2. Errors: DAGGER_ERR_BAD_HANDLE (an
 * array or r), DAGGER_ERR_NOT_FOUND (cl is not registered),
 * DAGGER_ERR_INVALID_ARG (nin out of range, in NULL with nin > 0, args NULL
 * with len > 0, inputs of other dims), and those of dagger_submit. */
DAGGER_API
dagger_status_t dagger_array_map(dagger_region_t *r, dagger_codelet_t cl, dagger_array_t *out,
                                 int nin, dagger_array_t *const in[], const void *args, size_t len);

/* Refills out in place, as the constructors of the same names do. Errors:
 * DAGGER_ERR_BAD_HANDLE (out or r), DAGGER_ERR_DTYPE (fill_randn of an
 * integer array), DAGGER_ERR_NOT_FOUND (fill_fn: fn not registered),
 * DAGGER_ERR_INVALID_ARG (fill_fn: args NULL with len > 0). */
DAGGER_API
dagger_status_t dagger_array_fill_rand(dagger_region_t *r, dagger_array_t *out, uint64_t seed);
DAGGER_API
dagger_status_t dagger_array_fill_randn(dagger_region_t *r, dagger_array_t *out, uint64_t seed);
DAGGER_API
dagger_status_t dagger_array_fill_fn(dagger_region_t *r, dagger_array_t *out,
                                     dagger_index_fn_id_t fn, const void *args, size_t len);

/* ------------------------------------------------------------ reductions */

/* A reduction is a tree of tasks: one partial result per tile (elements in
 * column-major order), then pairs combined in tile order. The order depends
 * only on the block layout, so the result is bit-identical whatever the
 * number of ranks. *out is a future (dagger_fetch it, or pass it to a later
 * task): a double for f32/f64 arrays and for NORM2, an int64_t for i32/i64
 * arrays (integer sums wrap around). f32 elements are accumulated in double.
 * MIN and MAX of floating-point arrays return NaN if any element is NaN.
 * Errors: DAGGER_ERR_BAD_HANDLE (an array or r), DAGGER_ERR_INVALID_ARG (an
 * op not listed below, out NULL; dot: arrays of other dims), DAGGER_ERR_DTYPE
 * (dot: arrays of different dtypes). */
/* op is DAGGER_OP_ADD (the sum), DAGGER_OP_MIN, DAGGER_OP_MAX or
 * DAGGER_OP_NORM2: sqrt of the sum of squares, overflow- and
 * underflow-safe: squares of huge (> 2^486) and tiny (< 2^-511) elements
 * are summed scaled by powers of two, as LAPACK's dnrm2 (Blue's algorithm);
 * without such elements the result is the plain square root of the plain
 * sum, bit for bit. */

DAGGER_API
dagger_status_t dagger_array_reduce(dagger_region_t *r, dagger_op_t op,
                                    dagger_array_t *a, dagger_future_t *out);

/* Reduces a along dimension dim (0 .. ndims-1) into out (either may be a
 * view), which has a's dims except extent 1 along dim (the dimension is kept, so out lines up
 * with a: sum over dim 1 of an m x n matrix is m x 1), and a's dtype; its
 * blocks and distribution are free. Element values: SUM, MIN, MAX as for
 * dagger_array_reduce (f32 accumulates in double within a block and is
 * stored in f32 between blocks; integer sums wrap around); NORM2 (f32/f64
 * arrays only) overflow-safe within a block and combined between blocks
 * with hypot. Blocks of a are combined in block order along dim, so the
 * result does not depend on the number of ranks. Each block's partial
 * result is computed on the rank that owns the block, those of one output
 * tile at once: only values of the output's size (one element thick along
 * dim) move.
 * Errors: DAGGER_ERR_BAD_HANDLE, DAGGER_ERR_INVALID_ARG (dim out of range,
 * out of the wrong shape, unknown op), DAGGER_ERR_DTYPE (out's dtype is
 * not a's, NORM2 of an integer array). */
DAGGER_API
dagger_status_t dagger_array_reduce_dim(dagger_region_t *r, dagger_op_t op,
                                        dagger_array_t *a, int dim, dagger_array_t *out);

/* sum(a .* b) over arrays of the same dims and dtype. */
DAGGER_API
dagger_status_t dagger_array_dot(dagger_region_t *r, dagger_array_t *a, dagger_array_t *b,
                                 dagger_future_t *out);

#ifdef __cplusplus
}
#endif
#endif
