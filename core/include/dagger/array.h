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
 * Errors every call here may return, besides those listed at each call:
 * DAGGER_ERR_BAD_HANDLE (a runtime, array, stencil or region that is NULL,
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

/* Number of blocks (0 for a bad handle). */
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
 * stencils and dagger_array_scatter take none (DAGGER_ERR_INVALID_ARG). Destroy views with dagger_array_destroy
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
 * the inputs (in-place: out = a op b with out == a), except for transpose.
 * Integer arithmetic wraps around (two's complement); integer division by
 * zero fails the task (DAGGER_ERR_TASK_FAILED at the region's end). Scalars
 * are doubles; for integer arrays they must be integers the dtype holds.
 * Errors of every call below: DAGGER_ERR_BAD_HANDLE (an array or r),
 * DAGGER_ERR_INVALID_ARG (an unknown op; operands of other dims; a scalar an
 * integer dtype does not hold), DAGGER_ERR_DTYPE (operands of different
 * dtypes), DAGGER_ERR_TASK_FAILED (integer division by zero). */
typedef enum dagger_array_op {
    DAGGER_ARRAY_ADD = 1,
    DAGGER_ARRAY_SUB = 2,
    DAGGER_ARRAY_MUL = 3,
    DAGGER_ARRAY_DIV = 4
} dagger_array_op_t;

/* out = a op b, element by element. */
DAGGER_API
dagger_status_t dagger_array_binop(dagger_region_t *r, dagger_array_op_t op, dagger_array_t *out,
                                   dagger_array_t *a, dagger_array_t *b);
/* out = a op s (the scalar broadcast to every element). */
DAGGER_API
dagger_status_t dagger_array_scalar(dagger_region_t *r, dagger_array_op_t op, dagger_array_t *out,
                                    dagger_array_t *a, double s);
/* out = s op a. */
DAGGER_API
dagger_status_t dagger_array_rscalar(dagger_region_t *r, dagger_array_op_t op, dagger_array_t *out,
                                     double s, dagger_array_t *a);

static inline dagger_status_t dagger_array_add(dagger_region_t *r, dagger_array_t *out,
                                               dagger_array_t *a, dagger_array_t *b)
{
    return dagger_array_binop(r, DAGGER_ARRAY_ADD, out, a, b);
}
static inline dagger_status_t dagger_array_sub(dagger_region_t *r, dagger_array_t *out,
                                               dagger_array_t *a, dagger_array_t *b)
{
    return dagger_array_binop(r, DAGGER_ARRAY_SUB, out, a, b);
}
static inline dagger_status_t dagger_array_mul(dagger_region_t *r, dagger_array_t *out,
                                               dagger_array_t *a, dagger_array_t *b)
{
    return dagger_array_binop(r, DAGGER_ARRAY_MUL, out, a, b);
}
static inline dagger_status_t dagger_array_div(dagger_region_t *r, dagger_array_t *out,
                                               dagger_array_t *a, dagger_array_t *b)
{
    return dagger_array_binop(r, DAGGER_ARRAY_DIV, out, a, b);
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
 * unknown reduction, out NULL; dot: arrays of other dims), DAGGER_ERR_DTYPE
 * (dot: arrays of different dtypes). */
typedef enum dagger_array_reduction {
    DAGGER_ARRAY_SUM = 1,
    DAGGER_ARRAY_MIN = 2,
    DAGGER_ARRAY_MAX = 3,
    DAGGER_ARRAY_NORM2 = 4   /* sqrt of the sum of squares, overflow- and underflow-safe:
                                squares of huge (> 2^486) and tiny (< 2^-511) elements are
                                summed scaled by powers of two, as LAPACK's dnrm2 (Blue's
                                algorithm); without such elements the result is the plain
                                square root of the plain sum, bit for bit */
} dagger_array_reduction_t;

DAGGER_API
dagger_status_t dagger_array_reduce(dagger_region_t *r, dagger_array_reduction_t op,
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
 * result is computed on the rank that owns the block: only the output
 * (one element thick along dim) moves.
 * Errors: DAGGER_ERR_BAD_HANDLE, DAGGER_ERR_INVALID_ARG (dim out of range,
 * out of the wrong shape, unknown op), DAGGER_ERR_DTYPE (out's dtype is
 * not a's, NORM2 of an integer array). */
DAGGER_API
dagger_status_t dagger_array_reduce_dim(dagger_region_t *r, dagger_array_reduction_t op,
                                        dagger_array_t *a, int dim, dagger_array_t *out);

/* sum(a .* b) over arrays of the same dims and dtype. */
DAGGER_API
dagger_status_t dagger_array_dot(dagger_region_t *r, dagger_array_t *a, dagger_array_t *b,
                                 dagger_future_t *out);

/* ------------------------------------------------------------ stencils */

/* What a window sees beyond the array's edge along one dimension, for an
 * array n elements long (a b c d):
 *   WRAP              periodic:              c d | a b c d | a b
 *   CLAMP             the edge repeated:     a a | a b c d | d d
 *   PAD               a constant:            p p | a b c d | p p
 *   REFLECT_SYMMETRIC mirrored, edge kept:   b a | a b c d | d c
 *   REFLECT_MIRROR    mirrored about the edge element: c b | a b c d | c b
 *   ANTIREFLECT_SYMMETRIC  odd reflection, edge kept: 2a-b a | a b c d | d 2d-c
 *   ANTIREFLECT_MIRROR     odd reflection about the edge element:
 *                          2a-c 2a-b | a b c d | 2d-c 2d-b
 *   LINEAR_EXTRAPOLATE     the line through the two edge elements:
 *                          a-2(b-a) a-(b-a) | a b c d | d+(d-c) d+2(d-c)
 * (the last three: ghost = 2*edge - mirror image, and edge + j*(edge slope);
 * computed in the array's type, integers wrapping around). Where a window
 * leaves the array along several dimensions, each dimension is resolved on
 * its own, as if the array were padded one dimension after the other (for
 * the index kinds this is the same as resolving each index alone); an
 * element that lies in a PAD region of any dimension gets the pad value of
 * the lowest such dimension. */
typedef enum dagger_boundary_kind {
    DAGGER_BC_WRAP = 1,
    DAGGER_BC_CLAMP = 2,
    DAGGER_BC_PAD = 3,
    DAGGER_BC_REFLECT_SYMMETRIC = 4,
    DAGGER_BC_REFLECT_MIRROR = 5,
    DAGGER_BC_ANTIREFLECT_SYMMETRIC = 6,
    DAGGER_BC_ANTIREFLECT_MIRROR = 7,
    DAGGER_BC_LINEAR_EXTRAPOLATE = 8
} dagger_boundary_kind_t;

typedef struct dagger_boundary {
    dagger_boundary_kind_t kind;
    double pad;                    /* PAD: the value */
} dagger_boundary_t;

/* What a kernel sees of one input around the current element: the element
 * at offsets (o0, o1, ...) with |ok| <= dist[k] is at
 * data + (o0*stride[0] + o1*stride[1] + ...) elements, boundary conditions
 * already applied. Read it with the DAGGER_WIN macros. */
typedef struct dagger_window {
    const void *data;              /* the current element */
    ptrdiff_t stride[DAGGER_MAX_DIMS];
    size_t dist[DAGGER_MAX_DIMS];
    dagger_dtype_t dtype;
    int ndims;
} dagger_window_t;

#define DAGGER_WIN1(w, T, o0) (((const T *)(w)->data)[(ptrdiff_t)(o0) * (w)->stride[0]])
#define DAGGER_WIN2(w, T, o0, o1)                                                        \
    (((const T *)(w)->data)[(ptrdiff_t)(o0) * (w)->stride[0] + (ptrdiff_t)(o1) * (w)->stride[1]])
#define DAGGER_WIN3(w, T, o0, o1, o2)                                                    \
    (((const T *)(w)->data)[(ptrdiff_t)(o0) * (w)->stride[0] +                            \
                            (ptrdiff_t)(o1) * (w)->stride[1] + (ptrdiff_t)(o2) * (w)->stride[2]])

/* A stencil kernel: the new value of the current element (global index
 * index[]) from the windows of the expression's inputs. Pure, like
 * dagger_index_fn. The value is converted to the output's dtype (integers:
 * rounded toward zero and saturated at the type's limits; NaN gives 0). */
typedef double (*dagger_stencil_fn)(const dagger_window_t *in, int nin, const size_t index[],
                                    const void *args);

typedef struct dagger_stencil_kernel {
    uint32_t id;
} dagger_stencil_kernel_t;

/* Built-in kernels (no registration needed). */
#ifndef __cplusplus
#define DAGGER_STENCIL_KERNEL_(n) ((dagger_stencil_kernel_t){n})
#else
#define DAGGER_STENCIL_KERNEL_(n) (dagger_stencil_kernel_t{n})
#endif
#define DAGGER_STENCIL_CONST DAGGER_STENCIL_KERNEL_(1) /* the expression's value */
#define DAGGER_STENCIL_COPY DAGGER_STENCIL_KERNEL_(2)  /* input 0 at the element */
#define DAGGER_STENCIL_SUM DAGGER_STENCIL_KERNEL_(3)   /* the sum of input 0's window */

/* Registers a kernel by name (as dagger_index_fn_register, with its errors). */
DAGGER_API
dagger_status_t dagger_stencil_kernel_register(dagger_runtime_t *rt, const char *name,
                                               dagger_stencil_fn fn, dagger_stencil_kernel_t *out);

/* One input of an expression: an array and the half-width of its window
 * along each dimension (0 = the element itself), with the boundary
 * condition of each dimension (ignored where dist is 0). */
typedef struct dagger_stencil_input {
    dagger_array_t *array;
    size_t dist[DAGGER_MAX_DIMS];
    dagger_boundary_t bc[DAGGER_MAX_DIMS];
} dagger_stencil_input_t;

/* How an expression's value meets the output element: out = v, out += v... */
typedef enum dagger_stencil_assign {
    DAGGER_ST_SET = 0,
    DAGGER_ST_ADD = 1,
    DAGGER_ST_SUB = 2,
    DAGGER_ST_MUL = 3,
    DAGGER_ST_DIV = 4
} dagger_stencil_assign_t;

#define DAGGER_STENCIL_MAX_IN 4

/* out[idx] (assign)= kernel(windows of in[0..nin) around idx) for every idx. */
typedef struct dagger_stencil_expr {
    dagger_array_t *out;
    dagger_stencil_assign_t assign;
    dagger_stencil_kernel_t kernel;
    double value;                  /* DAGGER_STENCIL_CONST's value */
    int nin;
    dagger_stencil_input_t in[DAGGER_STENCIL_MAX_IN];
    const void *args;              /* bytes for a registered kernel (copied) */
    size_t args_len;
} dagger_stencil_expr_t;

/* A prepared sweep of expressions. Semantics: the expressions run one
 * after the other, each over every element, and each reads the values as
 * they were before it started (an expression that writes an array it reads
 * sees the old values). All arrays of a sweep have the same dims and block
 * sizes; distributions may differ. Execution: per block, one task copies
 * the block and only its halo strips (sub-views of the neighbour blocks:
 * only those bytes cross ranks) into a padded buffer, boundary conditions
 * included; then one task per block evaluates consecutive expressions
 * together, as long as none of them reads a window of an array an earlier
 * one of the group wrote. The padded buffers are allocated here, so a
 * prepared sweep can run many times, also inside a region of your own.
 * Errors: DAGGER_ERR_INVALID_ARG (shapes or blocks differ, a window wider
 * than the array allows for its boundary condition, too many arrays for one
 * task, unknown assign or boundary kind, nexpr < 1, exprs or out NULL, args
 * NULL with args_len > 0), DAGGER_ERR_BAD_HANDLE (rt, or an expression's
 * array), DAGGER_ERR_DTYPE, DAGGER_ERR_NOT_FOUND (an unregistered kernel),
 * DAGGER_ERR_STATE (a region is open). On error *out is NULL. */
typedef struct dagger_stencil dagger_stencil_t;
DAGGER_API
dagger_status_t dagger_stencil_create(dagger_runtime_t *rt, int nexpr,
                                      const dagger_stencil_expr_t *exprs, dagger_stencil_t **out);
/* Submits one sweep into region r (NULL: a region of its own). Errors:
 * DAGGER_ERR_BAD_HANDLE (s, or r neither NULL nor an open region), and those
 * of dagger_submit. */
DAGGER_API
dagger_status_t dagger_stencil_run(dagger_region_t *r, dagger_stencil_t *s);
/* Frees a prepared sweep. Errors: DAGGER_ERR_BAD_HANDLE (s NULL, destroyed or
 * not a stencil). */
DAGGER_API
dagger_status_t dagger_stencil_destroy(dagger_stencil_t *s);

/* create + run in a region of its own + destroy, with their errors. */
DAGGER_API
dagger_status_t dagger_stencil_apply(dagger_runtime_t *rt, int nexpr,
                                     const dagger_stencil_expr_t *exprs);

/* The allocating form: creates *out, an array of zeros with the dims,
 * blocks, distribution and dtype of e->in[0].array, and sets it to e's
 * value (e->out and e->assign are ignored). On failure *out is NULL and
 * nothing stays allocated. Collective; not inside a region.
 * Errors: those of dagger_stencil_create, DAGGER_ERR_INVALID_ARG (no input
 * to take the shape from). */
DAGGER_API
dagger_status_t dagger_stencil_apply_new(dagger_runtime_t *rt, const dagger_stencil_expr_t *e,
                                         dagger_array_t **out);

/* out = a op (e's value) element by element, e's value being its kernel
 * over its inputs' windows (e->out and e->assign are ignored): C = A +
 * stencil(B) with no temporary of yours. out may be a (in place) or one of
 * e's inputs. Fused when out and a have the dims and block sizes of e's
 * inputs (distributions may differ), are not views, and e has fewer than
 * DAGGER_STENCIL_MAX_IN inputs: then one sweep task per block reads a's
 * block with the windows and computes a op value line by line (in double,
 * as a kernel's value is, then stored in out's type). Otherwise one
 * temporary with the blocks of e's inputs is made and freed inside the call
 * (a op value fused into it when a has those blocks, then copied to out;
 * else the value, then out = a op temporary element-wise). Collective; not
 * inside a region. Errors: those of dagger_stencil_create and
 * dagger_array_binop (a and out of other dims or dtypes), DAGGER_ERR_INVALID_ARG
 * (out's dims are not those of e's inputs, unknown op). */
DAGGER_API
dagger_status_t dagger_stencil_apply_binop(dagger_runtime_t *rt, dagger_array_op_t op,
                                           dagger_array_t *out, dagger_array_t *a,
                                           const dagger_stencil_expr_t *e);

#ifdef __cplusplus
}
#endif
#endif
