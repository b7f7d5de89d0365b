/* collect's bundles: the small tiles a rank owns travel to each collecting
 * rank packed into a few chunks (bundles: up to DG_ARR_PUT_TILES tiles and
 * about DG_ARR_BUNDLE_BYTES each) instead of in one transfer per tile. A task on the owner packs the
 * tiles (DG_ARR_CL_BUNDLE); on each other collecting rank one task reads the
 * bundle and copies its tiles into the host buffer (DG_ARR_CL_UNBUNDLE).
 * Tiles larger than DG_ARR_BUNDLE_TILE_MAX, and tiles a rank collects from
 * itself, are put directly (DG_ARR_CL_PUT, up to DG_ARR_PUT_TILES tiles and
 * DG_ARR_PUT_BYTES a task, so that large collects keep many tasks).
 *
 * A collect's bundle chunks go when it ends, unless it repeats the array's
 * previous collect (the same box and root): then they stay with the array
 * (a->bundles) while its collects keep repeating, so a repeated collect is
 * the same region again (and is replayed). Kept, they cost each owner the
 * bytes of its bundled tiles, until another collect of the array or
 * dagger_array_destroy. A one-off collect keeps nothing. Every decision here
 * depends only on the array's geometry, its owners, the box and the root:
 * the same on every rank. */
#ifndef DG_ARRAY_COLLECT_BUNDLE_H
#define DG_ARRAY_COLLECT_BUNDLE_H

#include "core/array/params.h"
#include "core/array/tiles.h"

/* Tiles of at most this many bytes travel in bundles. Above it a tile's own
 * transfer is large enough that its fixed cost is small, and packing would
 * only add a copy. */
#define DG_ARR_BUNDLE_TILE_MAX ((size_t)256 << 10)

/* An owner's small tiles make at least as many bundles as this divides
 * their bytes into (more, smaller bundles overlap the packing, the wire and
 * the unpacking better); tiles are shared out evenly by count. */
#define DG_ARR_BUNDLE_BYTES ((size_t)1 << 20)

/* A put task takes tiles while their bytes stay within this (always at
 * least one). */
#define DG_ARR_PUT_BYTES ((size_t)256 << 10)

typedef struct dg_arr_bundle {
    int owner;
    uint32_t ntiles;                /* 2 .. DG_ARR_PUT_TILES */
    size_t tile[DG_ARR_PUT_TILES];  /* tile numbers, ascending */
    dagger_chunk_t chunk;           /* owned by `owner`: the tiles, packed */
} dg_arr_bundle_t;

typedef struct dg_arr_bundles {
    int root;                       /* the collect's root, or DAGGER_ALL_RANKS */
    int keep;                       /* the chunks stay after the collect (a repeat) */
    size_t off[DAGGER_MAX_DIMS];    /* its box (0 past the array's dimensions) */
    size_t ext[DAGGER_MAX_DIMS];
    size_t ntiles;                  /* tiles of the box */
    int *via;                       /* per tile: the owner when it travels bundled, else -1 */
    size_t count;                   /* 0 after dg_arr_bundles_after dropped them (key only) */
    dg_arr_bundle_t *b;
} dg_arr_bundles_t;

/* The bundles for collecting the box [off, off + ext) of a (tiled as t) on
 * root: a's kept ones when its last collect had the same box and root and
 * kept them, else new ones (chunks created, the old ones freed), to be kept
 * when the last collect had the same box and root. *out is NULL when no tile
 * travels bundled (one rank; no rank owns two small tiles another collects). */
dagger_status_t dg_arr_bundles_get(dagger_array_t *a, const dg_arr_tiles_t *t, const size_t off[],
                                   const size_t ext[], int root, const dg_arr_bundles_t **out);

/* After the collect's region: frees the chunks unless they are kept,
 * remembering the collect's box and root. */
void dg_arr_bundles_after(dagger_array_t *a);

/* Frees a's bundle chunks and what it remembers (dagger_array_destroy). */
void dg_arr_bundles_free(dagger_array_t *a);

#endif
