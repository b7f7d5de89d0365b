/* Tiles: the common refinement of the block grids of several arrays over
 * one index space. Where every operand has the same blocks the tiles are
 * the blocks; where they differ, each tile lies inside exactly one block of
 * every operand, so one task per tile sees one view per operand. */
#ifndef DG_ARRAY_TILES_H
#define DG_ARRAY_TILES_H

#include "core/array/array_internal.h"

#define DG_ARR_MAX_OPS DAGGER_MAX_ARGS

typedef struct dg_arr_tiles {
    int nops;
    const dagger_array_t *ops[DG_ARR_MAX_OPS];  /* ops[0] spans the index space */
    int dim_of[DG_ARR_MAX_OPS][DAGGER_MAX_DIMS]; /* operand dimension of index dim k */
    size_t *cuts[DAGGER_MAX_DIMS];               /* nseg[k] + 1 boundaries per dim */
    size_t nseg[DAGGER_MAX_DIMS];
    size_t count;
} dg_arr_tiles_t;

typedef struct dg_arr_tile {
    size_t off[DAGGER_MAX_DIMS];   /* global box in the index space (ops[0]'s) */
    size_t ext[DAGGER_MAX_DIMS];
} dg_arr_tile_t;

/* dim_of NULL = identity for every operand. box_off/box_ext NULL = all of
 * ops[0]; otherwise the tiles cover only that box. The operands' dims must
 * already have been checked to match. */
dagger_status_t dg_arr_tiles_init(dg_arr_tiles_t *t, int nops, const dagger_array_t *const ops[],
                                  const int (*dim_of)[DAGGER_MAX_DIMS], const size_t *box_off,
                                  const size_t *box_ext);
void dg_arr_tiles_cleanup(dg_arr_tiles_t *t);

/* Tile n (0 .. count-1, column-major over the tile grid). */
void dg_arr_tile_get(const dg_arr_tiles_t *t, size_t n, dg_arr_tile_t *tile);
/* The view of the tile inside operand i's block that holds it. */
dagger_view_t dg_arr_tile_view(const dg_arr_tiles_t *t, int i, const dg_arr_tile_t *tile);

/* The block of operand i's root array that holds the tile, and the tile's
 * offset in it (off). */
size_t dg_arr_tile_block(const dg_arr_tiles_t *t, int i, const dg_arr_tile_t *tile,
                         size_t off[DAGGER_MAX_DIMS]);

/* The rank that owns the block of operand i holding the tile. */
int dg_arr_tile_owner(const dg_arr_tiles_t *t, int i, const dg_arr_tile_t *tile);

/* Checks that b's dims equal a's (permuted by dim_of when not NULL: b's
 * dimension dim_of[k] has a's dims[k]) and that the dtypes match. */
dagger_status_t dg_arr_check_match(const dagger_array_t *a, const dagger_array_t *b,
                                   const int *dim_of, const char *fn);

/* One task per tile: argument 0 the output tile (out_mode), then one In
 * view per input, then the by-value bytes when len > 0. patch, when set,
 * rewrites a copy of the bytes for each tile (for parameters that depend on
 * where the tile is). Submits into user, or a region of its own when NULL. */
typedef struct dg_arr_job {
    dg_arr_cl_t codelet;
    dagger_array_t *out;
    dagger_access_t out_mode;
    int nin;
    dagger_array_t *const *in;
    const int (*dim_of)[DAGGER_MAX_DIMS]; /* NULL = identity; else one row per operand */
    const void *value;
    size_t len;
    void (*patch)(void *value, const dg_arr_tile_t *tile);
    const dagger_codelet_t *user_cl;       /* a user codelet instead of `codelet` */
} dg_arr_job_t;

dagger_status_t dg_arr_run_job(dagger_region_t *user, const dg_arr_job_t *job, const char *fn);

#endif
