/* Stencils over distributed arrays (dagger/array.h): each output element
 * computed from windows of its neighbourhood in the input arrays, boundary
 * conditions applied at the edges. Prepared sweeps (dagger_stencil_create,
 * _run, _destroy) and one-shot forms (dagger_stencil_apply, _apply_new,
 * _apply_binop). The collective rule, the region argument r and the errors
 * every call may return are those of dagger/array.h (a stencil handle counts
 * as an array handle there). */
#ifndef DAGGER_STENCIL_H
#define DAGGER_STENCIL_H

#include <dagger/export.h>
#include <dagger/array.h>
#include <dagger/region.h>
#include <dagger/runtime.h>
#include <dagger/status.h>
#include <dagger/types.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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


#define DAGGER_STENCIL_MAX_IN 4

/* out[idx] (assign)= kernel(windows of in[0..nin) around idx) for every idx. */
typedef struct dagger_stencil_expr {
    dagger_array_t *out;
    dagger_op_t assign;            /* how the value meets out: DAGGER_OP_SET (out = v, the
                                      zero value), or out += v, -=, *=, /= with
                                      DAGGER_OP_ADD, _SUB, _MUL, _DIV */
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
 * (out's dims are not those of e's inputs, an op other than DAGGER_OP_ADD, _SUB,
 * _MUL, _DIV). */
DAGGER_API
dagger_status_t dagger_stencil_apply_binop(dagger_runtime_t *rt, dagger_op_t op,
                                           dagger_array_t *out, dagger_array_t *a,
                                           const dagger_stencil_expr_t *e);

#ifdef __cplusplus
}
#endif
#endif
