/* The element types and operators of the whole API (chunks, tasks, arrays,
 * stencils and collectives use these two enums and no others), access modes
 * and dependency modifiers. */
#ifndef DAGGER_TYPES_H
#define DAGGER_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Processor kinds, usable as a mask in scopes (dagger/task.h) and as the
 * home of chunks and arrays (dagger/chunk.h). DAGGER_PROC_TESTDEV is the
 * test device kind (DAGGER_TEST_DEVICES=N gives each rank N of them, for
 * machines without a GPU): a device with memory of its own and
 * asynchronous streams, whose tasks run the codelet's cpu implementation on
 * that memory (it is host-addressable) with the device's stream current. */
typedef enum dagger_proc_kind {
    DAGGER_PROC_CPU = 1,
    DAGGER_PROC_CUDA = 2,
    DAGGER_PROC_HIP = 4,
    DAGGER_PROC_TESTDEV = 8
} dagger_proc_kind_t;

/* Chunks and arrays have 1 to DAGGER_MAX_DIMS dimensions, column-major:
 * dimension 0 varies fastest (as in BLAS/LAPACK). */
#define DAGGER_MAX_DIMS 4

/* Element types. Chunks and task arguments take any of them; arrays and
 * stencils take F32, F64, I32 and I64; dagger_allreduce takes I64, U64 and
 * F64. Another one where a call does not take it is DAGGER_ERR_DTYPE for
 * arrays and DAGGER_ERR_INVALID_ARG for the others. */
typedef enum dagger_dtype {
    DAGGER_U8 = 1,  /* raw bytes */
    DAGGER_I32 = 2, /* int32_t */
    DAGGER_I64 = 3, /* int64_t */
    DAGGER_F32 = 4, /* float */
    DAGGER_F64 = 5, /* double */
    DAGGER_U64 = 6  /* uint64_t */
} dagger_dtype_t;

/* Size in bytes of one element of dtype, 0 for an unknown dtype. */
static inline size_t dagger_dtype_size(dagger_dtype_t t)
{
    switch (t) {
    case DAGGER_U8: return 1;
    case DAGGER_I32: return 4;
    case DAGGER_I64: return 8;
    case DAGGER_F32: return 4;
    case DAGGER_F64: return 8;
    case DAGGER_U64: return 8;
    }
    return 0;
}

/* Operators. Which call takes which (any other is DAGGER_ERR_INVALID_ARG):
 *   element-wise (dagger_array_binop, _scalar, _rscalar,
 *                 dagger_stencil_apply_binop)        ADD SUB MUL DIV
 *   stencil assignment (dagger_stencil_expr_t.assign) SET ADD SUB MUL DIV
 *   array reductions (dagger_array_reduce, _reduce_dim) ADD MIN MAX NORM2
 *   dagger_allreduce                                  ADD MIN MAX BOR
 * As a reduction, ADD is the sum. Integer arithmetic wraps around (two's
 * complement); MIN and MAX of floating-point values propagate NaN. */
typedef enum dagger_op {
    DAGGER_OP_SET = 0,  /* out = v (assignment only; the zero value) */
    DAGGER_OP_ADD = 1,  /* a + b; reduced: the sum */
    DAGGER_OP_SUB = 2,  /* a - b */
    DAGGER_OP_MUL = 3,  /* a * b */
    DAGGER_OP_DIV = 4,  /* a / b (integer division by zero fails the task) */
    DAGGER_OP_MIN = 5,
    DAGGER_OP_MAX = 6,
    DAGGER_OP_BOR = 7,  /* bitwise or, integer types only */
    DAGGER_OP_NORM2 = 8 /* reduced: sqrt of the sum of squares (floating point only) */
} dagger_op_t;

/* How a task accesses an argument. Out promises to overwrite every element of
 * the view without reading it, so no data is moved in for it. */
typedef enum dagger_access {
    DAGGER_MODE_IN = 1,
    DAGGER_MODE_OUT = 2,
    DAGGER_MODE_INOUT = 3
} dagger_access_t;

/* Which elements of a view's box (dimensions 0 and 1, relative to the box's
 * origin: i = row, j = column) a task touches. Higher dimensions are whole. */
typedef enum dagger_modifier {
    DAGGER_FULL = 0,       /* every element */
    DAGGER_UPPER = 1,      /* i <= j */
    DAGGER_LOWER = 2,      /* i >= j */
    DAGGER_UNIT_UPPER = 3, /* i <  j (strict upper) */
    DAGGER_UNIT_LOWER = 4, /* i >  j (strict lower) */
    DAGGER_DIAGONAL = 5    /* i == j */
} dagger_modifier_t;

#ifdef __cplusplus
}
#endif
#endif
