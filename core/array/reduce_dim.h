/* The accumulators of reductions along one dimension (reduce_dim_kernel.c),
 * one per element of the output tile, and the typed loops that fill them
 * fast for the common cases (reduce_dim_fast.c). */
#ifndef DG_ARRAY_REDUCE_DIM_H
#define DG_ARRAY_REDUCE_DIM_H

#include <stddef.h>
#include <stdint.h>

#include <dagger.h>

#include "core/array/nrm2.h"

typedef struct dg_racc {
    dg_nrm2_t n;        /* NRM2 */
    double d;           /* float SUM, MIN, MAX */
    uint64_t u;         /* integer SUM (wraps) */
    int64_t lo, hi;     /* integer MIN, MAX */
    int nan;
} dg_racc_t;

/* Reduces block x (ext[k] elements along dimension k) along dim into the
 * nout accumulators acc (set up by the caller for kind), the output tile's
 * element (i0, i1, i2, i3) (i_dim = 0) at i0 + oext0 (i1 + oext1 (i2 +
 * oext2 i3)). Handles SUM, MIN and MAX of f32, f64, i32 and i64 blocks and
 * NRM2 of f32 and f64 ones whose elements are contiguous along dimension 0;
 * returns 0 (having done nothing) for anything else, which the caller's
 * general loop then reduces, or when out of memory. The values are the
 * general loop's, bit for bit,
 * except float sums along dimension 0: each line is summed in four
 * interleaved partial sums, (s0 + s1) + (s2 + s3), as dagger_array_reduce
 * sums its lines. */
int dg_arr_reddim_fast(const dagger_slot_t *x, uint32_t kind, uint32_t dim,
                       const size_t ext[DAGGER_MAX_DIMS], const size_t oext[DAGGER_MAX_DIMS],
                       size_t nout, dg_racc_t *acc);

#endif
