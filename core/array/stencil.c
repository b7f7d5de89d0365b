/* Prepared stencil sweeps: checking the expressions, grouping them into
 * phases, allocating the padded buffers, and submitting a sweep. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/spmd_caller.h"
#include "core/array/stencil_internal.h"
#include "core/base/status_internal.h"

static const char fn_create[] = "dagger_stencil_create";

/* ------------------------------------------------------------ checks */

static int same_grid(const dagger_array_t *a, const dagger_array_t *b)
{
    if (a->rt != b->rt || a->ndims != b->ndims)
        return 0;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        if (a->dims[k] != b->dims[k] || a->block[k] != b->block[k])
            return 0;
    return 1;
}

static dagger_status_t check_array(const dagger_array_t *shape, dagger_array_t *a, int e,
                                   const char *what)
{
    if (!dg_arr_get(a, fn_create))
        return dg_error(DAGGER_ERR_BAD_HANDLE, "%s: expression %d: %s is not a live array",
                        fn_create, e, what);
    dagger_status_t st = dg_arr_no_view(a, fn_create);
    if (st != DAGGER_OK)
        return st;
    DG_CHECK_ARG(same_grid(shape, a), "%s: expression %d: %s differs from the first output in "
                 "dims or block sizes; every array of a sweep has the same dims and blocks",
                 fn_create, e, what);
    return DAGGER_OK;
}

/* The inputs of expression x: the kernel's, then the element-wise operand
 * (in[nin]) when lhs, its operation, is not 0. */
static int nall(const dagger_stencil_expr_t *x, uint32_t lhs)
{
    return x->nin + (lhs != 0);
}

static dagger_status_t check_expr(const dagger_array_t *shape, const dagger_stencil_expr_t *x, int e,
                                  uint32_t lhs)
{
    dagger_status_t st = check_array(shape, x->out, e, "the output");
    if (st != DAGGER_OK)
        return st;
    DG_CHECK_ARG(x->assign >= DAGGER_OP_SET && x->assign <= DAGGER_OP_DIV,
                 "%s: expression %d: unknown assignment %d", fn_create, e, (int)x->assign);
    DG_CHECK_ARG(x->nin >= 0 && x->nin <= DAGGER_STENCIL_MAX_IN,
                 "%s: expression %d has %d inputs (0 to %d)", fn_create, e, x->nin,
                 DAGGER_STENCIL_MAX_IN);
    DG_CHECK_ARG(x->args || !x->args_len, "%s: expression %d: %zu argument bytes at NULL",
                 fn_create, e, x->args_len);
    DG_CHECK_ARG(x->args_len <= 65536, "%s: expression %d: %zu argument bytes; at most 65536",
                 fn_create, e, x->args_len);
    uint32_t k = x->kernel.id;
    if (k > DG_ST_SUM && !dg_arr_fn_find(DG_ARR_FN_STENCIL, k))
        return dg_error(DAGGER_ERR_NOT_FOUND, "%s: expression %d uses stencil kernel %u, which is "
                        "not registered (dagger_stencil_kernel_register)", fn_create, e, k);
    DG_CHECK_ARG(k != 0, "%s: expression %d has no kernel (use DAGGER_STENCIL_CONST for a "
                 "constant)", fn_create, e);
    DG_CHECK_ARG(x->nin >= 1 || k == DG_ST_CONST || k > DG_ST_SUM,
                 "%s: expression %d: DAGGER_STENCIL_COPY and _SUM read input 0, but it has none",
                 fn_create, e);
    for (int i = 0; i < nall(x, lhs); i++) {
        char what[32];
        snprintf(what, sizeof(what), "input %d", i);
        st = check_array(shape, x->in[i].array, e, what);
        char where[96];
        snprintf(where, sizeof(where), "%s: expression %d, input %d", fn_create, e, i);
        if (st == DAGGER_OK)
            st = dg_st_check_window(x->in[i].array, &x->in[i], where);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}

/* ------------------------------------------------------------ phases */

static int has_window(const dagger_stencil_input_t *in)
{
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        if (in->dist[k])
            return 1;
    return 0;
}

/* The same array with boundary conditions that agree wherever both read. */
static int pack_fits(const dg_st_pack_t *p, const dagger_stencil_input_t *in)
{
    if (p->src != in->array)
        return 0;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        if (p->dist[k] && in->dist[k] &&
            (p->bc[k].kind != in->bc[k].kind ||
             (in->bc[k].kind == DAGGER_BC_PAD && p->bc[k].pad != in->bc[k].pad)))
            return 0;
    return 1;
}

static void pack_merge(dg_st_pack_t *p, const dagger_stencil_input_t *in)
{
    p->src = in->array;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        if (in->dist[k] > p->dist[k]) {
            p->dist[k] = in->dist[k];
            p->bc[k] = in->bc[k];
        }
}

/* The operand of the phase for an array's own block or a pack, added when
 * missing. Returns its index, or -1 when the phase is full. */
static int operand(dg_st_phase_t *ph, dagger_array_t *arr, int pack, dagger_access_t mode)
{
    for (int i = 0; i < ph->nops; i++) {
        dg_st_operand_t *o = &ph->ops[i];
        if (o->arr != arr || o->pack != pack)
            continue;
        if (o->mode == DAGGER_MODE_IN && mode != DAGGER_MODE_IN)
            o->mode = DAGGER_MODE_INOUT; /* read earlier in the phase, written now */
        return i;
    }
    if (ph->nops == DG_ST_MAX_OPERANDS)
        return -1;
    ph->ops[ph->nops] = (dg_st_operand_t){arr, pack, mode};
    return ph->nops++;
}

typedef struct builder {
    dagger_stencil_t *s;
    int cap_packs;
} builder_t;

/* The pack for input in within phase ph (operands from `first_op` on are
 * this phase's), created when missing. */
static int phase_pack(builder_t *b, dg_st_phase_t *ph, const dagger_stencil_input_t *in)
{
    dagger_stencil_t *s = b->s;
    for (int i = 0; i < ph->nops; i++) {
        int p = ph->ops[i].pack;
        if (p >= 0 && pack_fits(&s->packs[p], in)) {
            pack_merge(&s->packs[p], in);
            return i;
        }
    }
    if (s->npacks == b->cap_packs) {
        int cap = b->cap_packs ? 2 * b->cap_packs : 8;
        dg_st_pack_t *n = dg_realloc(s->packs, (size_t)cap * sizeof(*n));
        if (!n)
            return -2;
        s->packs = n;
        b->cap_packs = cap;
    }
    int p = s->npacks;
    memset(&s->packs[p], 0, sizeof(s->packs[p]));
    pack_merge(&s->packs[p], in);
    int i = operand(ph, NULL, p, DAGGER_MODE_IN);
    if (i >= 0)
        s->npacks++;
    return i;
}

/* Adds expression x to phase ph; -1 if the phase has no room, -2 if out of memory. */
static int add_expr(builder_t *b, dg_st_phase_t *ph, const dagger_stencil_expr_t *x, uint32_t lhs)
{
    for (int i = 0; i < nall(x, lhs); i++) {
        int r = has_window(&x->in[i]) ? phase_pack(b, ph, &x->in[i])
                                      : operand(ph, x->in[i].array, -1, DAGGER_MODE_IN);
        if (r < 0)
            return r;
    }
    dagger_access_t m = x->assign == DAGGER_OP_SET ? DAGGER_MODE_OUT : DAGGER_MODE_INOUT;
    return operand(ph, x->out, -1, m) < 0 ? -1 : 0;
}

/* An expression needs a new phase when it reads a window of an array an
 * earlier expression of the phase wrote (the padded copy would be stale). */
static int needs_new_phase(const dagger_stencil_t *s, const dg_st_phase_t *ph, int e)
{
    const dagger_stencil_expr_t *x = &s->exprs[e];
    for (int i = 0; i < x->nin; i++)
        for (int w = ph->first; w < e && has_window(&x->in[i]); w++)
            if (s->exprs[w].out == x->in[i].array)
                return 1;
    return 0;
}

static dagger_status_t build_phases(dagger_stencil_t *s)
{
    builder_t b = {s, 0};
    s->phases = dg_calloc((size_t)s->nexpr, sizeof(*s->phases));
    if (!s->phases)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn_create);
    dg_st_phase_t *ph = NULL;
    for (int e = 0; e < s->nexpr; e++) {
        if (!ph || needs_new_phase(s, ph, e)) {
            ph = &s->phases[s->nphases++];
            ph->first = e;
        }
        dg_st_phase_t saved = *ph;
        int saved_packs = s->npacks;
        int r = add_expr(&b, ph, &s->exprs[e], s->lhs[e]);
        if (r == -1 && ph->first < e) { /* full: start a new phase with e */
            *ph = saved;
            s->npacks = saved_packs;
            ph = &s->phases[s->nphases++];
            ph->first = e;
            r = add_expr(&b, ph, &s->exprs[e], s->lhs[e]);
        }
        if (r == -2)
            return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn_create);
        DG_CHECK_ARG(r == 0, "%s: expression %d touches more than %d arrays and padded copies; a "
                     "task takes at most %d", fn_create, e, DG_ST_MAX_OPERANDS, DG_ST_MAX_OPERANDS);
        ph->count = e - ph->first + 1;
    }
    return DAGGER_OK;
}

/* ------------------------------------------------------------ buffers and parameters */

static dagger_status_t alloc_pack(dagger_stencil_t *s, dg_st_pack_t *p, const dagger_array_t *home)
{
    const dagger_array_t *a = p->src;
    p->pad = dg_calloc(a->nblocks, sizeof(*p->pad));
    if (!p->pad)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn_create);
    dagger_chunk_desc_t *d = dg_calloc(a->nblocks, sizeof(*d));
    if (!d)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn_create);
    for (size_t b = 0; b < a->nblocks; b++) {
        size_t idx[DAGGER_MAX_DIMS], off[DAGGER_MAX_DIMS], ext[DAGGER_MAX_DIMS];
        dg_arr_block_box(a, b, idx, off, ext);
        /* It lives where the block's sweep task runs: with the phase's output. */
        d[b] = (dagger_chunk_desc_t){.dtype = a->dtype, .ndims = a->ndims,
                                     .owner = home->owners[b]};
        for (int k = 0; k < a->ndims; k++)
            d[b].dims[k] = ext[k] + 2 * p->dist[k];
    }
    /* All or none, with one agreement on the allocations. */
    dagger_status_t st = dagger_chunk_create_many(s->rt, a->nblocks, d, p->pad);
    free(d);
    if (st == DAGGER_OK)
        p->nblocks = a->nblocks;
    return st;
}

static int op_of(const dg_st_phase_t *ph, const dagger_array_t *arr, int pack)
{
    for (int i = 0; i < ph->nops; i++)
        if (ph->ops[i].arr == arr && ph->ops[i].pack == pack)
            return i;
    return -1;
}

static int pack_op(const dagger_stencil_t *s, const dg_st_phase_t *ph, const dagger_stencil_input_t *in)
{
    for (int i = 0; i < ph->nops; i++)
        if (ph->ops[i].pack >= 0 && pack_fits(&s->packs[ph->ops[i].pack], in))
            return i;
    return -1;
}

/* The sweep parameters of a phase (the block offset is patched per task). */
static dagger_status_t build_template(dagger_stencil_t *s, dg_st_phase_t *ph)
{
    size_t fixed = sizeof(dg_st_sweep_hdr_t) + (size_t)ph->count * sizeof(dg_st_expr_param_t);
    size_t len = fixed;
    for (int e = ph->first; e < ph->first + ph->count; e++)
        len += (s->exprs[e].args_len + 7) & ~(size_t)7;
    unsigned char *t = dg_calloc(1, len);
    if (!t)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn_create);
    dg_st_sweep_hdr_t h = {.nexpr = (uint32_t)ph->count, .ndims = (uint32_t)s->shape->ndims,
                           .fused = (uint32_t)ph->fused, .pieces_off = len};
    memcpy(t, &h, sizeof(h));
    size_t at = fixed;
    for (int e = ph->first; e < ph->first + ph->count; e++) {
        const dagger_stencil_expr_t *x = &s->exprs[e];
        dg_st_expr_param_t p = {
            .out_arg = (uint32_t)op_of(ph, x->out, -1), .assign = (uint32_t)x->assign,
            .kernel = x->kernel.id, .nin = (uint32_t)x->nin, .value = x->value,
            .args_off = (uint32_t)at, .args_len = (uint32_t)x->args_len,
            .lhs_op = s->lhs[e],
        };
        for (int i = 0; i < nall(x, s->lhs[e]); i++) {
            const dagger_stencil_input_t *in = &x->in[i];
            int w = has_window(in);
            int arg = w ? pack_op(s, ph, in) : op_of(ph, in->array, -1);
            p.in[i].arg = arg;
            p.in[i].padded = (uint32_t)w;
            for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
                p.in[i].dist[k] = in->dist[k];
                p.in[i].halo[k] = w ? s->packs[ph->ops[arg].pack].dist[k] : 0;
            }
        }
        memcpy(t + sizeof(h) + (size_t)(e - ph->first) * sizeof(p), &p, sizeof(p));
        if (x->args_len)
            memcpy(t + at, x->args, x->args_len);
        at += (x->args_len + 7) & ~(size_t)7;
    }
    ph->tmpl = t;
    ph->tmpl_len = len;
    return DAGGER_OK;
}

/* The first array a phase writes: its blocks' owners host the padded copies. */
static const dagger_array_t *phase_home(const dg_st_phase_t *ph)
{
    for (int i = 0; i < ph->nops; i++)
        if (ph->ops[i].arr && ph->ops[i].mode != DAGGER_MODE_IN)
            return ph->ops[i].arr;
    return NULL;
}

typedef struct fuse_count {
    int args, pieces;
} fuse_count_t;

static dagger_status_t count_piece(void *ctx, const dg_st_piece_t *pc)
{
    fuse_count_t *c = ctx;
    if (!pc->centre) {
        c->pieces++;
        c->args += !pc->pp.fill;
    }
    return DAGGER_OK;
}

/* A phase runs fused (one task per block, no pack tasks) when reading
 * its windowed inputs in place is safe and its strips fit in one task's
 * arguments: no affine boundary (their ghosts are computed by extend
 * tasks), and no array of the phase both written and read through a window
 * (a neighbour's sweep could overwrite a strip before it is read). */
static int phase_fusable(const dagger_stencil_t *s, const dg_st_phase_t *ph)
{
    for (int i = 0; i < ph->nops; i++) {
        const dg_st_operand_t *o = &ph->ops[i];
        for (int j = 0; o->pack < 0 && o->mode != DAGGER_MODE_IN && j < ph->nops; j++)
            if (ph->ops[j].pack >= 0 && s->packs[ph->ops[j].pack].src == o->arr)
                return 0;
        for (int k = 0; o->pack >= 0 && k < DAGGER_MAX_DIMS; k++)
            if (s->packs[o->pack].dist[k] && dg_st_bc_affine(s->packs[o->pack].bc[k].kind))
                return 0;
    }
    for (size_t b = 0; b < s->shape->nblocks; b++) {
        fuse_count_t c = {ph->nops + 1, 0};
        for (int i = 0; i < ph->nops; i++)
            if (ph->ops[i].pack >= 0)
                dg_st_for_pieces(&s->packs[ph->ops[i].pack], b, count_piece, &c);
        if (c.args > DAGGER_MAX_ARGS || c.pieces > DG_ST_MAX_PIECES)
            return 0;
    }
    return 1;
}

/* The arguments and piece parameters a fused sweep task gets for its strips. */
typedef struct fuse_args {
    dagger_arg_t *args;
    int nargs, op;
    dg_st_piece_param_t *pieces;
    uint32_t npieces;
} fuse_args_t;

static dagger_status_t add_piece(void *ctx, const dg_st_piece_t *pc)
{
    fuse_args_t *f = ctx;
    if (pc->centre)
        return DAGGER_OK; /* read in place */
    dg_st_piece_param_t q = {.op = f->op, .arg = -1, .pp = pc->pp};
    if (!pc->pp.fill) {
        q.arg = f->nargs;
        f->args[f->nargs++] = DAGGER_IN(pc->src);
    }
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        q.doff[k] = pc->doff[k];
        q.dext[k] = pc->dext[k];
    }
    memcpy(&f->pieces[f->npieces++], &q, sizeof(q));
    return DAGGER_OK;
}

/* Works out the arguments (but the parameters) and pieces of every sweep
 * task of phase ph. */
static dagger_status_t build_blocks(dagger_stencil_t *s, dg_st_phase_t *ph)
{
    ph->blocks = dg_calloc(s->shape->nblocks, sizeof(*ph->blocks));
    if (!ph->blocks)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn_create);
    ph->nblocks = s->shape->nblocks;
    dagger_arg_t args[DAGGER_MAX_ARGS];
    dg_st_piece_param_t pieces[DG_ST_MAX_PIECES];
    for (size_t b = 0; b < s->shape->nblocks; b++) {
        dg_st_block_t *k = &ph->blocks[b];
        size_t idx[DAGGER_MAX_DIMS], ext[DAGGER_MAX_DIMS];
        dg_arr_block_box(s->shape, b, idx, k->off, ext);
        fuse_args_t f = {args, ph->nops, 0, pieces, 0};
        for (int i = 0; i < ph->nops; i++) {
            const dg_st_operand_t *o = &ph->ops[i];
            const dg_st_pack_t *p = o->pack >= 0 ? &s->packs[o->pack] : NULL;
            dagger_chunk_t c = o->arr ? o->arr->chunks[b] : ph->fused ? p->src->chunks[b] : p->pad[b];
            args[i] = (dagger_arg_t){.kind = DAGGER_ARG_VIEW, .mode = o->mode,
                                     .view = dagger_view(s->rt, c)};
        }
        for (int i = 0; i < ph->nops && ph->fused; i++)
            if (ph->ops[i].pack >= 0) {
                f.op = i;
                dg_st_for_pieces(&s->packs[ph->ops[i].pack], b, add_piece, &f);
            }
        k->args = dg_malloc((size_t)f.nargs * sizeof(*args) + f.npieces * sizeof(*pieces));
        if (!k->args)
            return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn_create);
        k->nargs = f.nargs;
        k->npieces = f.npieces;
        k->pieces = (dg_st_piece_param_t *)(void *)(k->args + f.nargs);
        memcpy(k->args, args, (size_t)f.nargs * sizeof(*args));
        if (f.npieces)
            memcpy(k->pieces, pieces, f.npieces * sizeof(*pieces));
    }
    return DAGGER_OK;
}

static dagger_status_t prepare(dagger_stencil_t *s)
{
    dagger_status_t st = build_phases(s);
    for (int f = 0; f < s->nphases && st == DAGGER_OK; f++) {
        dg_st_phase_t *ph = &s->phases[f];
        ph->fused = phase_fusable(s, ph);
        for (int i = 0; i < ph->nops && st == DAGGER_OK && !ph->fused; i++)
            if (ph->ops[i].pack >= 0)
                st = alloc_pack(s, &s->packs[ph->ops[i].pack], phase_home(ph));
        if (st == DAGGER_OK)
            st = build_template(s, ph);
        if (st == DAGGER_OK)
            st = build_blocks(s, ph);
    }
    return st;
}

/* ------------------------------------------------------------ lifecycle */

static void free_stencil(dagger_stencil_t *s)
{
    for (int p = 0; p < s->npacks; p++) {
        for (size_t b = 0; s->packs[p].pad && b < s->packs[p].nblocks; b++)
            if (s->packs[p].pad[b].id)
                dagger_chunk_free(s->rt, s->packs[p].pad[b]);
        free(s->packs[p].pad);
    }
    for (int f = 0; f < s->nphases; f++) {
        free(s->phases[f].tmpl);
        for (size_t b = 0; s->phases[f].blocks && b < s->phases[f].nblocks; b++)
            free(s->phases[f].blocks[b].args);
        free(s->phases[f].blocks);
    }
    for (int e = 0; s->exprs && e < s->nexpr; e++)
        free((void *)s->exprs[e].args);
    free(s->exprs);
    free(s->lhs);
    free(s->phases);
    free(s->packs);
    s->magic = 0;
    free(s);
}

static dagger_status_t copy_exprs(dagger_stencil_t *s, int nexpr, const dagger_stencil_expr_t *x,
                                  const uint32_t *lhs)
{
    s->exprs = dg_calloc((size_t)nexpr, sizeof(*s->exprs));
    s->lhs = dg_calloc((size_t)nexpr, sizeof(*s->lhs));
    if (!s->exprs || !s->lhs)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn_create);
    for (int e = 0; e < nexpr; e++, s->nexpr++) {
        s->exprs[e] = x[e];
        s->lhs[e] = lhs ? lhs[e] : 0;
        s->exprs[e].args = NULL;
        if (!x[e].args_len)
            continue;
        void *a = dg_malloc(x[e].args_len);
        if (!a)
            return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn_create);
        memcpy(a, x[e].args, x[e].args_len);
        s->exprs[e].args = a;
    }
    return DAGGER_OK;
}

dagger_status_t dagger_stencil_create(dagger_runtime_t *rt, int nexpr,
                                      const dagger_stencil_expr_t *exprs, dagger_stencil_t **out)
{
    return dg_st_create(rt, nexpr, exprs, NULL, out);
}

dagger_status_t dg_st_create(dagger_runtime_t *rt, int nexpr, const dagger_stencil_expr_t *exprs,
                             const uint32_t *lhs, dagger_stencil_t **out)
{
    DG_CHECK_ARG(out, "%s: NULL output", fn_create);
    *out = NULL;
    dagger_status_t in = dg_spmd_allowed(fn_create);
    if (in != DAGGER_OK)
        return in;
    dagger_region_t *open;
    if (dagger_region_current(rt, &open) != DAGGER_OK)
        return dg_error(DAGGER_ERR_BAD_HANDLE, "%s: not a live runtime handle (NULL or finalized)",
                        fn_create);
    if (open) /* its padded buffers are chunks, created between regions */
        return dg_error(DAGGER_ERR_STATE, "%s: a region is open; prepare stencils before "
                        "dagger_region_begin (dagger_stencil_run may then run inside it)", fn_create);
    DG_CHECK_ARG(nexpr >= 1 && exprs, "%s: %d expressions (at least 1, non-NULL)", fn_create, nexpr);
    const dagger_array_t *shape = dg_arr_get(exprs[0].out, fn_create);
    if (!shape)
        return DAGGER_ERR_BAD_HANDLE;
    DG_CHECK_ARG(shape->rt == rt, "%s: the arrays belong to another runtime", fn_create);
    for (int e = 0; e < nexpr; e++) {
        dagger_status_t st = check_expr(shape, &exprs[e], e, lhs ? lhs[e] : 0);
        if (st != DAGGER_OK)
            return st;
    }
    dagger_stencil_t *s = dg_calloc(1, sizeof(*s));
    if (!s)
        return dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn_create);
    s->magic = DG_ST_MAGIC;
    s->rt = rt;
    s->shape = shape;
    dagger_status_t st = copy_exprs(s, nexpr, exprs, lhs);
    if (st == DAGGER_OK)
        st = prepare(s);
    if (st == DAGGER_OK && dg_arr_live_add(s))
        st = dg_error(DAGGER_ERR_NO_MEMORY, "%s: out of memory", fn_create);
    if (st != DAGGER_OK) {
        free_stencil(s);
        return st;
    }
    *out = s;
    return DAGGER_OK;
}

static dagger_stencil_t *get_stencil(dagger_stencil_t *s, const char *fn)
{
    if (!dg_arr_live(s) || s->magic != DG_ST_MAGIC) {
        dg_error(DAGGER_ERR_BAD_HANDLE, "%s: not a live stencil (NULL or destroyed)", fn);
        return NULL;
    }
    return s;
}

dagger_status_t dagger_stencil_destroy(dagger_stencil_t *s)
{
    if (!get_stencil(s, "dagger_stencil_destroy"))
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t in = dg_spmd_allowed("dagger_stencil_destroy");
    if (in != DAGGER_OK)
        return in;
    dg_arr_live_remove(s);
    free_stencil(s);
    return DAGGER_OK;
}

/* ------------------------------------------------------------ run */

typedef struct st_codelets {
    dagger_codelet_t pack, extend, sweep;
} st_codelets_t;

/* One sweep task of block b; scratch holds the template (its header is
 * patched) and, for a fused phase, room for the pieces after it. */
static dagger_status_t submit_block(dagger_region_t *r, const dg_st_phase_t *ph, dagger_codelet_t cl,
                                    size_t b, unsigned char *scratch)
{
    const dg_st_block_t *k = &ph->blocks[b];
    dg_st_sweep_hdr_t h;
    memcpy(&h, scratch, sizeof(h));
    memcpy(h.off, k->off, sizeof(h.off));
    h.npieces = k->npieces;
    memcpy(scratch, &h, sizeof(h));
    if (k->npieces)
        memcpy(scratch + ph->tmpl_len, k->pieces, k->npieces * sizeof(*k->pieces));
    dagger_arg_t args[DAGGER_MAX_ARGS];
    memcpy(args, k->args, (size_t)k->nargs * sizeof(*args));
    args[k->nargs] = DAGGER_VALUE(scratch, ph->tmpl_len + k->npieces * sizeof(dg_st_piece_param_t));
    return dagger_submit(r, cl, k->nargs + 1, args, NULL, NULL, NULL);
}

static dagger_status_t submit_phase(dagger_region_t *r, const dagger_stencil_t *s,
                                    const dg_st_phase_t *ph, const st_codelets_t *cl,
                                    unsigned char *scratch)
{
    dagger_status_t st = DAGGER_OK;
    for (int i = 0; i < ph->nops && st == DAGGER_OK && !ph->fused; i++)
        if (ph->ops[i].pack >= 0) {
            st = dg_st_submit_packs(r, cl->pack, s, &s->packs[ph->ops[i].pack]);
            if (st == DAGGER_OK)
                st = dg_st_submit_extends(r, cl->extend, s, &s->packs[ph->ops[i].pack]);
        }
    memcpy(scratch, ph->tmpl, ph->tmpl_len);
    for (size_t b = 0; b < s->shape->nblocks && st == DAGGER_OK; b++)
        st = submit_block(r, ph, cl->sweep, b, scratch);
    return st;
}

static dagger_status_t check_alive(const dagger_stencil_t *s)
{
    for (int e = 0; e < s->nexpr; e++) {
        if (!dg_arr_get(s->exprs[e].out, "dagger_stencil_run"))
            return DAGGER_ERR_BAD_HANDLE;
        for (int i = 0; i < nall(&s->exprs[e], s->lhs[e]); i++)
            if (!dg_arr_get(s->exprs[e].in[i].array, "dagger_stencil_run"))
                return DAGGER_ERR_BAD_HANDLE;
    }
    return DAGGER_OK;
}

static dagger_status_t submit_all(dagger_region_t *r, const dagger_stencil_t *s)
{
    st_codelets_t cl;
    dagger_status_t st = dg_arr_codelet(s->rt, DG_ARR_CL_PACK, &cl.pack);
    if (st == DAGGER_OK)
        st = dg_arr_codelet(s->rt, DG_ARR_CL_EXTEND, &cl.extend);
    if (st == DAGGER_OK)
        st = dg_arr_codelet(s->rt, DG_ARR_CL_SWEEP, &cl.sweep);
    for (int f = 0; f < s->nphases && st == DAGGER_OK; f++) {
        unsigned char *scratch =
            dg_malloc(s->phases[f].tmpl_len + DG_ST_MAX_PIECES * sizeof(dg_st_piece_param_t));
        if (!scratch)
            return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_stencil_run: out of memory");
        st = submit_phase(r, s, &s->phases[f], &cl, scratch);
        free(scratch);
    }
    return st;
}

dagger_status_t dagger_stencil_run(dagger_region_t *r, dagger_stencil_t *st_)
{
    dagger_stencil_t *s = get_stencil(st_, "dagger_stencil_run");
    if (!s)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t st = check_alive(s);
    if (st != DAGGER_OK)
        return st;
    dg_arr_sub_t sub;
    st = dg_arr_open(s->rt, r, &sub, "dagger_stencil_run");
    if (st != DAGGER_OK)
        return st;
    return dg_arr_close(&sub, submit_all(sub.r, s));
}

dagger_status_t dagger_stencil_apply(dagger_runtime_t *rt, int nexpr,
                                     const dagger_stencil_expr_t *exprs)
{
    dagger_stencil_t *s;
    dagger_status_t st = dagger_stencil_create(rt, nexpr, exprs, &s);
    if (st != DAGGER_OK)
        return st;
    st = dagger_stencil_run(NULL, s);
    dagger_status_t st2 = dagger_stencil_destroy(s);
    return st != DAGGER_OK ? st : st2;
}
