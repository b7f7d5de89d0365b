/* Element types, access modes and dependency modifiers shared by the task,
 * chunk and array APIs. */
#ifndef DAGGER_TYPES_H
#define DAGGER_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Chunks and arrays have 1 to DAGGER_MAX_DIMS dimensions, column-major:
 * dimension 0 varies fastest (as in BLAS/LAPACK). */
#define DAGGER_MAX_DIMS 4

typedef enum dagger_dtype {
    DAGGER_U8 = 1,  /* raw bytes */
    DAGGER_I32 = 2,
    DAGGER_I64 = 3,
    DAGGER_F32 = 4,
    DAGGER_F64 = 5
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
    }
    return 0;
}

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
