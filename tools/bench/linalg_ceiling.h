/* The tile kernels' ceiling for bench_linalg_tiled: what the tiled routines'
 * one-thread BLAS tile kernels can deliver on this machine with no runtime
 * and the best cache reuse any schedule could give them. Plain threads, as
 * many as the job has CPU workers, each run one-thread dgemm tile products
 * C -= A B (tile x tile x tile) on tiles of their own (the bench: one A, B
 * and C each, so the operands stay in cache). Every thread starts at once;
 * the ceiling is the products' flops over the time from the first start to
 * the last end.
 *
 * Why: the budgets set the tiled routines against one multi-threaded
 * OpenBLAS call (gemm at 0.97x dgemm, Cholesky at 90 % of the dgemm rate).
 * One-thread tile products run slower per thread than that call's threads
 * do (packing and blocking amortised over the whole matrix), so the tiles'
 * own limit, measured in the same run, tells how much of a gap is the
 * runtime's and how much the kernels'. */
#ifndef DG_BENCH_LINALG_CEILING_H
#define DG_BENCH_LINALG_CEILING_H

#include <stddef.h>

typedef struct dg_ceiling {
    int tile;      /* tile edge (elements) */
    int threads;   /* plain threads, each with one BLAS thread */
    int ntiles;    /* tiles per operand (A, B, C) and thread; product p of a
                      thread uses A (5p + 1) % ntiles, B (7p + 2) % ntiles
                      and C p % ntiles */
    long products; /* tile products in all, split over the threads */
    /* After a run with keep set: each thread's 3 * ntiles tiles (A's, B's,
     * then C's), for tests; dg_ceiling_free releases them. */
    int keep;
    double ***tiles;
    long *done; /* per thread: products it ran */
} dg_ceiling_t;

/* Runs c->products products (thread t runs products / threads, one more
 * for t < products % threads) with every operand A and B set to 1 and C to
 * 0 at the start. Returns the wall seconds, or a negative value when the
 * memory or the threads could not be had (nothing is left allocated then). */
double dg_ceiling_run(dg_ceiling_t *c);

/* Releases the tiles a run with keep set left. */
void dg_ceiling_free(dg_ceiling_t *c);

#endif
