/* Stencils, internal: a prepared sweep is a list of phases; each phase
 * runs one task per block that evaluates the phase's expressions in order.
 * The inputs it reads with a window have padded per-block buffers (the
 * block plus its halo, boundary conditions applied): a fused phase's task
 * builds only their frame, in scratch memory of its own, from its own
 * block and the halo strips it gets as arguments, and reads the rest of the
 * block in place; otherwise pack (and extend) tasks fill whole buffers,
 * chunks of their own, first. */
#ifndef DG_ARRAY_STENCIL_INTERNAL_H
#define DG_ARRAY_STENCIL_INTERNAL_H

#include "core/array/array_internal.h"
#include "core/base/nopad.h"

#define DG_ST_MAGIC 0x5354454eu /* "STEN" */
#define DG_ST_MAX_OPERANDS (DAGGER_MAX_ARGS - 1) /* one argument carries the parameters */

/* A padded copy of one input: the same array read with the same boundary
 * conditions shares one (with the widest window). */
typedef struct dg_st_pack {
    dagger_array_t *src;
    size_t dist[DAGGER_MAX_DIMS];
    dagger_boundary_t bc[DAGGER_MAX_DIMS];  /* normalised: kind 0 where dist is 0 */
    dagger_chunk_t *pad;                    /* one per block */
    size_t nblocks;                         /* kept: src may be destroyed before the sweep */
} dg_st_pack_t;

/* An argument of a phase's sweep tasks: an array's own block, or a pack. */
typedef struct dg_st_operand {
    dagger_array_t *arr;                    /* own block of arr, or NULL for a pack */
    int pack;                               /* index into the sweep's packs, or -1 */
    dagger_access_t mode;
} dg_st_operand_t;

/* What a phase's sweep task of one block gets, worked out once when the
 * stencil is created (the arrays' chunks never change): its arguments but
 * the parameters, and, fused, its halo pieces and the block's offset. */
typedef struct dg_st_block {
    int nargs;
    uint32_t npieces;
    size_t off[DAGGER_MAX_DIMS];
    dagger_arg_t *args;                     /* nargs (one allocation with pieces) */
    struct dg_st_piece_param *pieces;       /* npieces */
} dg_st_block_t;

typedef struct dg_st_phase {
    int first, count;                       /* its expressions */
    int fused;                              /* 1: no pack tasks; the sweep reads its own blocks
                                               in place, gets the halo strips as arguments and
                                               builds only the frame of each padded buffer,
                                               in task scratch (no pad chunks) */
    int nops;
    dg_st_operand_t ops[DG_ST_MAX_OPERANDS];
    dg_st_block_t *blocks;                  /* per block of the output's shape */
    size_t nblocks;                         /* kept: the shape may be destroyed first */
    void *tmpl;                             /* sweep parameters (dg_st_sweep_hdr_t first) */
    size_t tmpl_len;
} dg_st_phase_t;

struct dagger_stencil {
    uint32_t magic;
    dagger_runtime_t *rt;
    const dagger_array_t *shape;            /* exprs[0].out: dims and blocks of every array */
    int nexpr;
    dagger_stencil_expr_t *exprs;           /* copies; args copied too */
    uint32_t *lhs;                          /* per expression: 0, or the dagger_op_t
                                               that combines in[nin] (an element-wise
                                               operand) with the kernel's value */
    int nphases;
    dg_st_phase_t *phases;
    int npacks;
    dg_st_pack_t *packs;
};

/* ---- parameters of the sweep codelet ---- */

DG_NOPAD_BEGIN
typedef struct dg_st_sweep_hdr {
    uint32_t nexpr;
    uint32_t ndims;
    uint32_t fused;                         /* the phase's dg_st_phase_t.fused */
    uint32_t npieces;                       /* fused: the halo pieces after the template */
    uint64_t pieces_off;                    /* fused: where they start in the parameters */
    uint64_t off[DAGGER_MAX_DIMS];          /* the block's global offset (patched per block) */
} dg_st_sweep_hdr_t;

typedef struct dg_st_in_param {
    int32_t arg;                            /* task argument holding the data */
    uint32_t padded;                        /* 1: a pack (halo of width halo[k]) */
    uint64_t dist[DAGGER_MAX_DIMS];
    uint64_t halo[DAGGER_MAX_DIMS];
} dg_st_in_param_t;

typedef struct dg_st_expr_param {
    uint32_t out_arg;
    uint32_t assign;
    uint32_t kernel;
    uint32_t nin;
    double value;
    uint32_t args_off;                      /* user bytes: offset from the block start */
    uint32_t args_len;
    uint32_t lhs_op;                        /* 0, or value = in[nin] lhs_op kernel value */
    uint32_t pad_;                          /* 0 (was implicit padding) */
    dg_st_in_param_t in[DAGGER_STENCIL_MAX_IN];
} dg_st_expr_param_t;
DG_NOPAD_END

/* The sweep task's parameters (its last argument): the header into *h and
 * the length into *bytes, the header and its sizes checked against the
 * length. NULL, with the task failed, when they are malformed. */
const unsigned char *dg_st_sweep_params(dagger_task_t *t, dg_st_sweep_hdr_t *h, size_t *bytes);

/* ---- parameters of the pack codelet ---- */

DG_NOPAD_BEGIN
typedef struct dg_st_pack_param {
    int8_t dir[DAGGER_MAX_DIMS];            /* +1 forward, -1 reversed, 0 one element repeated */
    uint32_t fill;                          /* 1: no source, write pad */
    double pad;
} dg_st_pack_param_t;
DG_NOPAD_END

/* One piece of a padded buffer: the box [doff, doff + dext) of it, copied
 * from the sub-view src of one block (or filled with the pad value). The
 * centre piece is the block's own range of its own block. */
typedef struct dg_st_piece {
    dg_st_pack_param_t pp;
    size_t doff[DAGGER_MAX_DIMS], dext[DAGGER_MAX_DIMS];
    dagger_view_t src;                      /* unset when pp.fill */
    int centre;
} dg_st_piece_t;

typedef dagger_status_t (*dg_st_piece_fn)(void *ctx, const dg_st_piece_t *pc);

/* Calls fn for every piece of pack p's buffer for block b, in a fixed order. */
dagger_status_t dg_st_for_pieces(const dg_st_pack_t *p, size_t b,
                                 dg_st_piece_fn fn, void *ctx);

/* A fused sweep's piece: which padded input (by the argument of its own
 * block) it belongs to, and the argument holding its strip (-1: fill). */
#define DG_ST_MAX_PIECES 64
DG_NOPAD_BEGIN
typedef struct dg_st_piece_param {
    int32_t op;
    int32_t arg;
    dg_st_pack_param_t pp;
    uint64_t doff[DAGGER_MAX_DIMS], dext[DAGGER_MAX_DIMS];
} dg_st_piece_param_t;
DG_NOPAD_END

/* ---- parameters of the extend codelet (stencil_extend.c) ---- */

/* The ghosts of one side of one dimension, inside a box of a padded buffer
 * that holds them and their sources: ghost j (1..count) is at edge + side*j. */
DG_NOPAD_BEGIN
typedef struct dg_st_extend_param {
    uint32_t kind;                          /* an affine dagger_boundary_kind_t */
    uint32_t dim;
    int32_t side;                           /* -1 low edge, +1 high edge */
    uint32_t count;
    uint64_t edge;                          /* the edge element's position in the box */
} dg_st_extend_param_t;
DG_NOPAD_END

/* 1 for the boundary kinds whose ghosts are combinations of the array's own
 * values near the edge rather than copies of elements (so no halo moves). */
static inline int dg_st_bc_affine(dagger_boundary_kind_t k)
{
    return k == DAGGER_BC_ANTIREFLECT_SYMMETRIC || k == DAGGER_BC_ANTIREFLECT_MIRROR ||
           k == DAGGER_BC_LINEAR_EXTRAPOLATE;
}

/* Submits the extend tasks of one pack for every block: after its pack
 * tasks, one per affine dimension and edge the block's padded range crosses. */
dagger_status_t dg_st_submit_extends(dagger_region_t *r, dagger_codelet_t cl,
                                     const dagger_stencil_t *s, const dg_st_pack_t *p);

/* Built-in kernel ids (public: DAGGER_STENCIL_CONST, _COPY, _SUM). */
enum { DG_ST_CONST = 1, DG_ST_COPY = 2, DG_ST_SUM = 3 };

/* dagger_stencil_create with, per expression, lhs[e] = 0 or the operation
 * that combines the element-wise operand exprs[e].in[nin] (no window) with
 * the kernel's value before it meets the output (lhs NULL: none). */
dagger_status_t dg_st_create(dagger_runtime_t *rt, int nexpr, const dagger_stencil_expr_t *exprs,
                             const uint32_t *lhs, dagger_stencil_t **out);

/* The codelets' CUDA implementations (core/array/cuda), with the CUDA backend. */
#ifdef DAGGER_HAVE_CUDA
int dg_arr_pack_cuda(dagger_task_t *t);
int dg_arr_sweep_cuda(dagger_task_t *t);
int dg_arr_extend_cuda(dagger_task_t *t);
#endif

/* Submits the pack tasks of one pack for every block (stencil_pack.c). */
dagger_status_t dg_st_submit_packs(dagger_region_t *r, dagger_codelet_t cl, const dagger_stencil_t *s,
                                   const dg_st_pack_t *p);
/* Checks a window's width against its boundary condition; fn starts each
 * message (the call, and which expression's input). */
dagger_status_t dg_st_check_window(const dagger_array_t *a, const dagger_stencil_input_t *in,
                                   const char *fn);

#endif
