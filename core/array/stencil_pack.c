/* Packing: the padded buffer of a block covers the global range
 * [lo - d, hi + d) along each dimension. Each dimension's range is cut into
 * pieces that come from one source block each (forward, reversed, or one
 * element repeated) or from the pad value; every combination of one piece
 * per dimension is one pack task reading a sub-view of one neighbour block.
 * So only halo strips cross ranks, never whole neighbour blocks. */
#include <stddef.h>

#include "core/array/stencil_internal.h"
#include "core/base/common.h"
#include "core/base/status_internal.h"

#define MAX_PIECES 64

typedef struct piece {
    size_t dst, len;     /* range in the padded buffer */
    int fill;            /* 1: pad value, no source */
    size_t src;          /* lowest source index (dir 0: the repeated one) */
    int dir;             /* +1, -1 (reversed), 0 (repeated) */
} piece_t;

typedef struct pieces {
    piece_t p[MAX_PIECES];
    int n;
} pieces_t;

static void push(pieces_t *ps, piece_t p)
{
    DG_ASSERT(ps->n < MAX_PIECES);
    if (ps->n < MAX_PIECES)
        ps->p[ps->n++] = p;
}

/* Splits a source range at block boundaries. */
static void split(pieces_t *ps, size_t dst, size_t len, size_t src, int dir, size_t blk)
{
    if (dir == 0) {
        push(ps, (piece_t){dst, len, 0, src, 0});
        return;
    }
    for (size_t s = src; s < src + len;) {
        size_t e = (s / blk + 1) * blk;
        e = e < src + len ? e : src + len;
        size_t d = dir > 0 ? dst + (s - src) : dst + (src + len - e);
        push(ps, (piece_t){d, e - s, 0, s, dir});
        s = e;
    }
}

/* Global positions [a, b), all inside the array or all on one side of it,
 * landing at dst in the padded buffer. */
static void add_zone(pieces_t *ps, ptrdiff_t a, ptrdiff_t b, size_t dst, ptrdiff_t n, size_t blk,
                     dagger_boundary_kind_t bc)
{
    size_t len = (size_t)(b - a);
    if (a >= 0 && b <= n) {
        split(ps, dst, len, (size_t)a, 1, blk);
        return;
    }
    int left = a < 0;
    if (dg_st_bc_affine(bc))
        return; /* computed from the padded buffer itself (stencil_extend.c) */
    switch (bc) {
    case DAGGER_BC_PAD:
        push(ps, (piece_t){dst, len, 1, 0, 0});
        return;
    case DAGGER_BC_CLAMP:
        split(ps, dst, len, left ? 0 : (size_t)(n - 1), 0, blk);
        return;
    case DAGGER_BC_WRAP:
        split(ps, dst, len, (size_t)(left ? a + n : a - n), 1, blk);
        return;
    case DAGGER_BC_REFLECT_SYMMETRIC: /* g -> -g-1 or 2n-1-g */
        split(ps, dst, len, (size_t)(left ? -b : 2 * n - b), -1, blk);
        return;
    default: /* MIRROR: g -> -g or 2n-2-g */
        split(ps, dst, len, (size_t)(left ? 1 - b : 2 * n - 1 - b), -1, blk);
        return;
    }
}

/* The pieces of dimension k for the block at [lo, hi). */
static void dim_pieces(pieces_t *ps, size_t lo, size_t hi, const dg_st_pack_t *p,
                       const dagger_array_t *a, int k)
{
    ps->n = 0;
    ptrdiff_t d = (ptrdiff_t)p->dist[k], n = (ptrdiff_t)a->dims[k];
    ptrdiff_t L = (ptrdiff_t)lo, H = (ptrdiff_t)hi;
    /* Zone cuts: the range [L-d, H+d) split at 0 and n. */
    ptrdiff_t cuts[4] = {L - d, L - d < 0 && 0 < H + d ? 0 : L - d,
                         L - d < n && n < H + d ? n : H + d, H + d};
    for (int z = 0; z < 3; z++)
        if (cuts[z] < cuts[z + 1])
            add_zone(ps, cuts[z], cuts[z + 1], (size_t)(cuts[z] - (L - d)), n, a->block[k],
                     p->bc[k].kind);
}

/* The piece for the combination pick[] of pieces of block b. */
static void make_piece(const dg_st_pack_t *p, size_t b,
                       const pieces_t *ps, const int pick[DAGGER_MAX_DIMS], dg_st_piece_t *pc)
{
    const dagger_array_t *a = p->src;
    size_t sidx[DAGGER_MAX_DIMS] = {0}, soff[DAGGER_MAX_DIMS] = {0}, sext[DAGGER_MAX_DIMS] = {0};
    *pc = (dg_st_piece_t){.pp = {.pad = 0}, .centre = 1};
    for (int k = DAGGER_MAX_DIMS - 1; k >= 0; k--) {
        const piece_t *q = &ps[k].p[pick[k]];
        pc->doff[k] = q->dst;
        pc->dext[k] = q->len;
        if (q->fill) {
            pc->pp.fill = 1;
            pc->pp.pad = p->bc[k].pad; /* the lowest padded dimension wins */
        }
        pc->pp.dir[k] = (int8_t)q->dir;
        sidx[k] = q->src / a->block[k];
        soff[k] = q->src - sidx[k] * a->block[k];
        sext[k] = q->dir ? q->len : 1;
        pc->centre &= !q->fill && q->dir > 0 && q->dst == p->dist[k];
    }
    if (pc->pp.fill)
        return;
    size_t sb = dg_arr_block_at(a, sidx);
    pc->centre &= sb == b; /* the block's own range, read from itself */
    pc->src = dg_arr_sub_view(a, sb, soff, sext);
}

dagger_status_t dg_st_for_pieces(const dg_st_pack_t *p, size_t b,
                                 dg_st_piece_fn fn, void *ctx)
{
    const dagger_array_t *a = p->src;
    pieces_t ps[DAGGER_MAX_DIMS];
    size_t idx[DAGGER_MAX_DIMS], off[DAGGER_MAX_DIMS], ext[DAGGER_MAX_DIMS];
    dg_arr_block_box(a, b, idx, off, ext);
    size_t combos = 1;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        dim_pieces(&ps[k], off[k], off[k] + ext[k], p, a, k);
        combos *= (size_t)ps[k].n;
    }
    for (size_t c = 0; c < combos; c++) {
        int pick[DAGGER_MAX_DIMS];
        size_t rest = c;
        for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
            pick[k] = (int)(rest % (size_t)ps[k].n);
            rest /= (size_t)ps[k].n;
        }
        dg_st_piece_t pc;
        make_piece(p, b, ps, pick, &pc);
        dagger_status_t st = fn(ctx, &pc);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}

typedef struct pack_ctx {
    dagger_region_t *r;
    dagger_codelet_t cl;
    dagger_view_t pad;
} pack_ctx_t;

/* One pack task per piece. */
static dagger_status_t submit_piece(void *ctx, const dg_st_piece_t *pc)
{
    pack_ctx_t *x = ctx;
    dagger_view_t dst = dagger_view_sub(x->pad, pc->doff, pc->dext);
    dagger_arg_t args[3] = {DAGGER_OUT(dst)};
    int na = 1;
    if (!pc->pp.fill)
        args[na++] = DAGGER_IN(pc->src);
    args[na++] = DAGGER_VALUE(&pc->pp, sizeof(pc->pp));
    return dagger_submit(x->r, x->cl, na, args, NULL, NULL, NULL);
}

dagger_status_t dg_st_submit_packs(dagger_region_t *r, dagger_codelet_t cl, const dagger_stencil_t *s,
                                   const dg_st_pack_t *p)
{
    for (size_t b = 0; b < p->src->nblocks; b++) {
        pack_ctx_t x = {r, cl, dagger_view(s->rt, p->pad[b])};
        dagger_status_t st = dg_st_for_pieces(p, b, submit_piece, &x);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}

dagger_status_t dg_st_check_window(const dagger_array_t *a, const dagger_stencil_input_t *in,
                                   const char *fn)
{
    uint64_t padded = 1; /* elements of a block plus its halo */
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        size_t d = in->dist[k], n = a->dims[k];
        if (k < a->ndims) {
            /* The padded block obeys a chunk's limits (2^40 per dimension,
             * 2^50 elements), whether it is a chunk or a task's scratch. */
            DG_CHECK_ARG(a->block[k] <= (1ull << 40) && d <= ((1ull << 40) - a->block[k]) / 2 &&
                             padded <= (1ull << 50) / (a->block[k] + 2 * d),
                         "%s: a window of width %zu along dimension %d makes a block plus its "
                         "halo too large (at most 2^40 elements per dimension, 2^50 in all)",
                         fn, d, k);
            padded *= a->block[k] + 2 * d;
        }
        if (!d)
            continue;
        DG_CHECK_ARG(k < a->ndims, "%s: a window of width %zu along dimension %d of a %d-D array",
                     fn, d, k, a->ndims);
        dagger_boundary_kind_t bc = in->bc[k].kind;
        DG_CHECK_ARG(bc >= DAGGER_BC_WRAP && bc <= DAGGER_BC_LINEAR_EXTRAPOLATE,
                     "%s: unknown boundary condition %d for dimension %d (use DAGGER_BC_WRAP, "
                     "_CLAMP, _PAD, _REFLECT_SYMMETRIC, _REFLECT_MIRROR, _ANTIREFLECT_SYMMETRIC, "
                     "_ANTIREFLECT_MIRROR or _LINEAR_EXTRAPOLATE)", fn, (int)bc, k);
        DG_CHECK_ARG(bc != DAGGER_BC_LINEAR_EXTRAPOLATE || n >= 2,
                     "%s: DAGGER_BC_LINEAR_EXTRAPOLATE along dimension %d needs at least 2 "
                     "elements to draw its line; the dimension has 1 (use DAGGER_BC_CLAMP)", fn, k);
        int mirror = bc == DAGGER_BC_REFLECT_MIRROR || bc == DAGGER_BC_ANTIREFLECT_MIRROR;
        int sym = bc == DAGGER_BC_WRAP || bc == DAGGER_BC_REFLECT_SYMMETRIC ||
                  bc == DAGGER_BC_ANTIREFLECT_SYMMETRIC;
        size_t most = mirror ? n - 1 : sym ? n : SIZE_MAX;
        static const char *const names[] = {"", "WRAP", "CLAMP", "PAD", "REFLECT_SYMMETRIC",
                                            "REFLECT_MIRROR", "ANTIREFLECT_SYMMETRIC",
                                            "ANTIREFLECT_MIRROR", "LINEAR_EXTRAPOLATE"};
        DG_CHECK_ARG(d <= most, "%s: a window reaching %zu elements past the edge of dimension %d "
                     "(%zu long) with DAGGER_BC_%s, whose ghosts are elements of the array: at "
                     "most %zu (narrow the window, or use DAGGER_BC_CLAMP, _PAD or "
                     "_LINEAR_EXTRAPOLATE, which allow any width)", fn, d, k, n, names[bc], most);
    }
    return DAGGER_OK;
}
