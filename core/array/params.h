/* The by-value parameter blocks of the array codelets: what the submitting
 * side writes and the implementation reads. No pointers, so the bytes are
 * identical on every rank (the uniformity hash covers them). */
#ifndef DG_ARRAY_PARAMS_H
#define DG_ARRAY_PARAMS_H

#include <stdint.h>

#include <dagger/task.h>
#include <dagger/types.h>

#include "core/base/nopad.h"

DG_NOPAD_BEGIN

/* ---- element-wise (DG_ARR_CL_EWISE) ---- */

enum { DG_EW_FILL = 1, DG_EW_COPY = 2, DG_EW_TRANSPOSE = 3, DG_EW_ARITH = 4 };
enum { DG_EW_AB = 0, DG_EW_AS = 1, DG_EW_SA = 2 }; /* a op b, a op s, s op a */

/* Outputs at least this large are written with non-temporal stores: they
 * cannot stay in cache anyway, and skipping the read-for-ownership of every
 * output line saves a third of the memory traffic. A constant, not the
 * cache size of this machine, because the choice is part of the parameters
 * every rank must agree on. */
#define DG_EW_STREAM_BYTES ((size_t)32 << 20)

typedef struct dg_arr_ew {
    uint8_t kind;     /* DG_EW_* */
    uint8_t op;       /* ARITH: dagger_op_t */
    uint8_t form;     /* ARITH: DG_EW_AB / _AS / _SA */
    uint8_t alias;    /* bit i: input i is argument 0 (the output) and is not passed */
    uint8_t stream;   /* 1: write the output with non-temporal stores (large arrays) */
    uint8_t pad_[3];
    uint32_t nin;     /* inputs of the operation, aliased ones included */
    uint32_t pad2_;   /* 0 (was implicit padding: ranks hashed different bytes) */
    double s;         /* the scalar (FILL, _AS, _SA) */
} dg_arr_ew_t;

/* ---- generators (DG_ARR_CL_GEN): argument 0 Out, then this, then args ---- */

enum { DG_GEN_RAND = 1, DG_GEN_RANDN = 2, DG_GEN_FN = 3 };

typedef struct dg_arr_gen {
    uint32_t kind;
    uint32_t fn;                        /* FN: the index function's id */
    uint64_t seed;
    uint64_t dims[DAGGER_MAX_DIMS];     /* the whole array's dims */
    uint64_t off[DAGGER_MAX_DIMS];      /* global index of the tile's first element */
    uint32_t ndims;
    uint32_t args_len;                  /* FN: user bytes following this block */
} dg_arr_gen_t;

/* ---- scatter (DG_ARR_CL_TAKE): a tile and a host box ---- */

typedef struct dg_arr_xfer {
    uint64_t key;                       /* the bound host buffer */
    uint64_t off[DAGGER_MAX_DIMS];      /* where the tile sits in the host box */
    uint64_t box[DAGGER_MAX_DIMS];      /* the host box's dims */
} dg_arr_xfer_t;

/* ---- collect (DG_ARR_CL_PUT, _UNBUNDLE): tiles into a host box ----
 * The value is this header followed by ntiles dg_arr_put_tile_t. PUT's
 * arguments are the ntiles tiles (In), then the value; UNBUNDLE's are one
 * bundle (In: the tiles packed one after another, each dense and
 * column-major, in the entries' order), then the value. */

#define DG_ARR_PUT_TILES (DAGGER_MAX_ARGS - 1) /* tiles per task (the bundle task's In arguments) */

typedef struct dg_arr_puts {
    uint64_t key;                       /* the bound host buffer */
    uint64_t box[DAGGER_MAX_DIMS];      /* the host box's dims */
    uint64_t ntiles;                    /* 1 .. DG_ARR_PUT_TILES */
} dg_arr_puts_t;

typedef struct dg_arr_put_tile {
    uint64_t off[DAGGER_MAX_DIMS];      /* where the tile sits in the host box */
    uint64_t ext[DAGGER_MAX_DIMS];      /* its extents (1 past its dimensions) */
} dg_arr_put_tile_t;

/* ---- collect by pulling (DG_ARR_CL_PULL, collect_pull.h) ----
 * Argument 0 is the probe (In: one element of the owner's first block in
 * the task), argument 1 the value: this header, then ntiles
 * dg_arr_pull_tile_t. */

typedef struct dg_arr_pulls {
    uint64_t key;                       /* the bound host buffer */
    uint64_t peers;                     /* the bound peer table (dg_arr_peers_t) */
    uint64_t box[DAGGER_MAX_DIMS];      /* the host box's dims */
    uint64_t owner;                     /* the rank whose blocks are read */
    uint64_t elsize;
    uint64_t ntiles;                    /* 1 .. DG_ARR_PULL_TILES */
} dg_arr_pulls_t;

typedef struct dg_arr_pull_tile {
    uint64_t off[DAGGER_MAX_DIMS];      /* where the tile sits in the host box */
    uint64_t ext[DAGGER_MAX_DIMS];      /* its extents (1 past its dimensions) */
    uint64_t block;                     /* the block that holds it (of the root array) */
    uint64_t boff[DAGGER_MAX_DIMS];     /* its offset in that block */
    uint64_t bdim[DAGGER_MAX_DIMS];     /* the block's extents (its storage is dense) */
} dg_arr_pull_tile_t;

/* ---- reductions ---- */

enum { DG_RED_SUM = 1, DG_RED_MIN = 2, DG_RED_MAX = 3, DG_RED_NRM2 = 4, DG_RED_DOT = 5 };

typedef struct dg_arr_red {
    uint32_t kind;                      /* DG_RED_* */
    uint32_t is_int;                    /* COMBINE: the values are int64_t */
} dg_arr_red_t;

/* ---- reductions along one dimension ---- */

typedef struct dg_arr_reddim {
    uint32_t kind;                      /* DG_RED_SUM, _MIN, _MAX, _NRM2 */
    uint32_t dim;
    uint32_t first;                     /* 1: set the output; 0: combine with it */
    uint32_t pad_;
} dg_arr_reddim_t;

DG_NOPAD_END

#endif
