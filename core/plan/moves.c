/* Data movement: currency per location, transfers of only the stale
 * elements, slots, copy-back and buffer release. Currency is kept for every
 * location on every rank (it decides the plan); buffers and their op
 * histories only for this rank (they decide this rank's op dependencies). */
#include <string.h>

#include "core/base/common.h"
#include "core/plan/planner_internal.h"

static int is_me(const dg_plan_t *p, int32_t rank)
{
    return rank == p->prm.my_rank;
}

dg_plan_bufst_t *dg_plan_buf_find(dg_plan_chunk_t *c, uint32_t space)
{
    for (uint32_t i = 0; i < c->nbufs; i++)
        if (c->bufs[i].space == space)
            return &c->bufs[i];
    return NULL;
}

static uint64_t buf_bytes(const dg_plan_chunk_t *c)
{
    return c->g.extent * c->g.elsize;
}

/* A kept allocation of this size in this space, if the cache has one. */
static int cache_take(dg_plan_t *p, uint32_t space, uint64_t bytes)
{
    if (space >= p->nspaces)
        return 0;
    dg_plan_cache_t *k = &p->cache[space];
    for (uint32_t i = 0; i < k->n; i++)
        if (k->sizes[i] == bytes && k->counts[i]) {
            k->counts[i]--;
            k->bytes -= bytes;
            return 1;
        }
    return 0;
}

static int cache_put(dg_plan_t *p, uint32_t space, uint64_t bytes)
{
    if (space >= p->nspaces)
        return 0;
    dg_plan_cache_t *k = &p->cache[space];
    if (k->bytes + bytes > p->prm.slot_cache_bytes)
        return 0;
    uint32_t i = 0;
    while (i < k->n && k->sizes[i] != bytes)
        i++;
    if (i == k->n) {
        if (k->n == k->cap) {
            uint32_t cap = k->cap ? k->cap * 2 : 8;
            uint64_t *s = dg_plan_mem_realloc(&p->mem, k->sizes, k->cap * 8, cap * 8);
            if (!s)
                return 0;
            k->sizes = s;
            uint32_t *c = dg_plan_mem_realloc(&p->mem, k->counts, k->cap * 4, cap * 4);
            if (!c)
                return 0;
            k->counts = c;
            k->cap = cap;
        }
        k->sizes[k->n] = bytes;
        k->counts[k->n++] = 0;
    }
    k->counts[i]++;
    k->bytes += bytes;
    return 1;
}

/* Everything a buffer can hold, as one span (ALLOC and FREE touch it all). */
static const dg_plan_spans_t *whole(dg_plan_t *p, const dg_plan_chunk_t *c)
{
    dg_plan_spans_clear(&p->s_all);
    dg_plan_spans_append(&p->mem, &p->s_all, 0, c->g.extent);
    return &p->s_all;
}

/* A new buffer state of chunk c in space, without history. */
static dg_plan_bufst_t *buf_add(dg_plan_t *p, dg_plan_chunk_t *c, uint32_t space)
{
    void *nv = dg_plan_mem_grow(&p->mem, c->bufs, &c->capbufs, c->nbufs, sizeof(*c->bufs));
    if (!nv)
        return NULL;
    c->bufs = nv;
    dg_plan_bufst_t *b = &c->bufs[c->nbufs++];
    memset(b, 0, sizeof(*b));
    b->space = space;
    dg_plan_hist_init(&b->hist);
    b->home = dg_plan_loc_is_home(c, (dg_plan_loc_t){p->prm.my_rank, space});
    return b;
}

/* This rank's buffer of c in `space`, created on first use: the home
 * storage needs no op (futures get theirs at submission), a slot an ALLOC. */
dg_plan_bufst_t *dg_plan_buf_get(dg_plan_t *p, dg_plan_chunk_t *c, uint32_t space)
{
    dg_plan_bufst_t *b = dg_plan_buf_find(c, space);
    if (b)
        return b;
    if (!(b = buf_add(p, c, space)))
        return NULL;
    if (!b->home || c->is_future) {
        dg_plan_op_t op = {.kind = DG_PLAN_OP_ALLOC};
        op.u.mem.buf = (dg_plan_buf_t){c->id, space};
        op.u.mem.bytes = buf_bytes(c);
        op.u.mem.home = (int)b->home;
        op.u.mem.cached = !b->home && cache_take(p, space, op.u.mem.bytes);
        uint64_t seq = dg_plan_emit(p, &op, NULL);
        dg_plan_buf_access(p, b, whole(p, c), 1, seq);
    }
    return b;
}

dg_plan_bufst_t *dg_plan_buf_restore(dg_plan_t *p, dg_plan_chunk_t *c, uint32_t space)
{
    dg_plan_bufst_t *b = dg_plan_buf_find(c, space);
    return b ? b : buf_add(p, c, space);
}

/* Records an access to a local buffer by op seq; ops the executor has
 * surely retired before it starts any later op leave the history. */
void dg_plan_buf_access(dg_plan_t *p, dg_plan_bufst_t *b, const dg_plan_spans_t *s, int write,
                        uint64_t seq)
{
    dg_plan_hist_add(&p->hc, &b->hist, s, write, seq);
    uint64_t w = p->prm.retire_window;
    if (w && p->next_seq > w)
        dg_plan_hist_forget(&p->hc, &b->hist, p->next_seq - w + 1);
}

static void buf_deps(dg_plan_t *p, dg_plan_bufst_t *b, const dg_plan_spans_t *s, int write)
{
    dg_plan_hist_deps(&p->hc, &b->hist, s, write, &p->deps);
}

/* A COPY between two spaces of this rank. */
static void copy_local(dg_plan_t *p, dg_plan_chunk_t *c, uint32_t src, uint32_t dst,
                       const dg_plan_spans_t *piece, uint64_t bytes)
{
    /* Creating one buffer may move the other: look both up afterwards. */
    if (!dg_plan_buf_get(p, c, src) || !dg_plan_buf_get(p, c, dst))
        return;
    dg_plan_bufst_t *bs = dg_plan_buf_find(c, src);
    dg_plan_bufst_t *bd = dg_plan_buf_find(c, dst);
    p->deps.n = 0;
    buf_deps(p, bs, piece, 0);
    buf_deps(p, bd, piece, 1);
    dg_plan_op_t op = {.kind = DG_PLAN_OP_COPY};
    op.u.copy.src = (dg_plan_buf_t){c->id, src};
    op.u.copy.dst = (dg_plan_buf_t){c->id, dst};
    op.u.copy.elsize = c->g.elsize;
    op.u.copy.nspans = piece->n;
    op.u.copy.spans = piece->v;
    op.u.copy.bytes = bytes;
    uint64_t seq = dg_plan_emit(p, &op, &p->deps);
    dg_plan_buf_access(p, bs, piece, 0, seq);
    dg_plan_buf_access(p, bd, piece, 1, seq);
    p->st.copies++;
    p->st.bytes_moved += bytes;
}

/* This rank's half of a transfer between ranks: the SEND that reads the
 * piece of its buffer in `space` (kind SEND) or the RECV that writes it
 * (kind RECV), towards `peer`'s buffer in peer_space. Returns 1 when the
 * op was emitted. */
static int transfer_half(dg_plan_t *p, dg_plan_chunk_t *c, dg_plan_op_kind_t kind,
                         uint32_t space, int32_t peer, uint32_t peer_space, uint64_t tag,
                         const dg_plan_spans_t *piece)
{
    int write = kind == DG_PLAN_OP_RECV;
    dg_plan_bufst_t *b = dg_plan_buf_get(p, c, space);
    if (!b)
        return 0;
    p->deps.n = 0;
    buf_deps(p, b, piece, write);
    dg_plan_op_t op = {.kind = kind};
    op.u.xfer.tag = tag;
    op.u.xfer.peer = peer;
    op.u.xfer.peer_space = peer_space;
    op.u.xfer.buf = (dg_plan_buf_t){c->id, space};
    op.u.xfer.version = c->version;
    op.u.xfer.elsize = c->g.elsize;
    op.u.xfer.nspans = piece->n;
    op.u.xfer.spans = piece->v;
    op.u.xfer.bytes = dg_plan_spans_count(piece) * c->g.elsize;
    dg_plan_buf_access(p, b, piece, write, dg_plan_emit(p, &op, &p->deps));
    p->st.transfers++;
    return 1;
}

/* Moves `piece` of c from src to dst: one COPY on a rank, or a SEND on the
 * source rank and a RECV on the destination rank with a tag both derive
 * from the transfer's index in the region. */
static void transfer(dg_plan_t *p, dg_plan_chunk_t *c, dg_plan_loc_t src, dg_plan_loc_t dst,
                     const dg_plan_spans_t *piece)
{
    uint64_t bytes = dg_plan_spans_count(piece) * c->g.elsize;
    if (src.rank == dst.rank) {
        p->st.planned_copies++;
        if (is_me(p, src.rank))
            copy_local(p, c, src.space, dst.space, piece, bytes);
        return;
    }
    uint64_t tag = (p->region << 32) | (p->xfer_index++ & 0xffffffffu);
    p->st.planned_transfers++;
    /* src.rank != dst.rank: at most one half is this rank's. */
    if (is_me(p, src.rank) &&
        transfer_half(p, c, DG_PLAN_OP_SEND, src.space, dst.rank, dst.space, tag, piece))
        p->st.bytes_moved += bytes;
    if (is_me(p, dst.rank))
        transfer_half(p, c, DG_PLAN_OP_RECV, dst.space, src.rank, src.space, tag, piece);
}

/* Source preference: same rank as dst, then the home location, then the
 * lowest (rank, space). Returns 1 when a should be tried before b. */
static int prefer(const dg_plan_chunk_t *c, dg_plan_loc_t dst, const dg_plan_cur_t *a,
                  const dg_plan_cur_t *b)
{
    int la = a->loc.rank == dst.rank, lb = b->loc.rank == dst.rank;
    if (la != lb)
        return la;
    int ha = dg_plan_loc_is_home(c, a->loc), hb = dg_plan_loc_is_home(c, b->loc);
    if (ha != hb)
        return ha;
    if (a->loc.rank != b->loc.rank)
        return a->loc.rank < b->loc.rank;
    return a->loc.space < b->loc.space;
}

/* Copies the elements of `need` that are not current at dst from where they
 * are, piece by piece in preference order. */
static void fetch(dg_plan_t *p, dg_plan_chunk_t *c, dg_plan_loc_t dst, dg_plan_spans_t *need)
{
    uint32_t tried = 0; /* bit i: c->cur[i] used (chunks have few locations) */
    while (need->n) {
        dg_plan_cur_t *best = NULL;
        uint32_t bi = 0;
        for (uint32_t i = 0; i < c->ncur && i < 32; i++) {
            dg_plan_cur_t *cu = &c->cur[i];
            if ((tried >> i) & 1 || (cu->loc.rank == dst.rank && cu->loc.space == dst.space))
                continue;
            if (!best || prefer(c, dst, cu, best)) {
                best = cu;
                bi = i;
            }
        }
        if (!best)
            break; /* unreachable: every element is current somewhere */
        tried |= 1u << bi;
        dg_plan_spans_inter(&p->mem, &p->s_piece, need, &best->cur);
        if (!p->s_piece.n)
            continue;
        transfer(p, c, best->loc, dst, &p->s_piece);
        dg_plan_spans_diff(&p->mem, &p->s_tmp, need, &p->s_piece);
        dg_plan_spans_copy(&p->mem, need, &p->s_tmp);
    }
    DG_ASSERT(need->n == 0);
}

void dg_plan_make_current(dg_plan_t *p, dg_plan_chunk_t *c, dg_plan_loc_t loc,
                          const dg_plan_spans_t *want)
{
    dg_plan_cur_t *cu = dg_plan_cur_find(c, loc);
    if (cu && dg_plan_spans_subset(want, &cu->cur))
        return;
    if (cu)
        dg_plan_spans_diff(&p->mem, &p->s_stale, want, &cu->cur);
    else
        dg_plan_spans_copy(&p->mem, &p->s_stale, want);
    fetch(p, c, loc, &p->s_stale);
    cu = dg_plan_cur_get(p, c, loc);
    if (!cu)
        return;
    dg_plan_spans_union(&p->mem, &p->s_tmp, &cu->cur, want);
    dg_plan_spans_copy(&p->mem, &cu->cur, &p->s_tmp);
}

void dg_plan_note_write(dg_plan_t *p, dg_plan_chunk_t *c, dg_plan_loc_t loc,
                        const dg_plan_spans_t *s)
{
    if (c->ncur == 1 && c->cur[0].loc.rank == loc.rank && c->cur[0].loc.space == loc.space &&
        dg_plan_spans_subset(s, &c->cur[0].cur))
        return; /* the only copy, already current there: nothing changes */
    uint32_t k = 0;
    for (uint32_t i = 0; i < c->ncur; i++) {
        dg_plan_cur_t *cu = &c->cur[i];
        if (cu->loc.rank == loc.rank && cu->loc.space == loc.space) {
            dg_plan_spans_union(&p->mem, &p->s_tmp, &cu->cur, s);
            dg_plan_spans_copy(&p->mem, &cu->cur, &p->s_tmp);
        } else if (dg_plan_spans_overlap(&cu->cur, s)) {
            dg_plan_spans_diff(&p->mem, &p->s_tmp, &cu->cur, s);
            dg_plan_spans_copy(&p->mem, &cu->cur, &p->s_tmp);
        }
        if (!cu->cur.n) { /* nothing current there any more */
            dg_plan_spans_release(&p->mem, &cu->cur);
            continue;
        }
        c->cur[k++] = *cu;
    }
    c->ncur = k;
    dg_plan_cur_t *cu = dg_plan_cur_get(p, c, loc);
    if (cu && !cu->cur.n)
        dg_plan_spans_copy(&p->mem, &cu->cur, s);
}

void dg_plan_copy_home(dg_plan_t *p, dg_plan_chunk_t *c)
{
    dg_plan_loc_t home = {c->owner, c->home_space};
    dg_plan_make_current(p, c, home, &c->all);
    /* Only the home copy stays current; slots are about to go. */
    uint32_t k = 0;
    for (uint32_t i = 0; i < c->ncur; i++) {
        if (dg_plan_loc_is_home(c, c->cur[i].loc))
            c->cur[k++] = c->cur[i];
        else
            dg_plan_spans_release(&p->mem, &c->cur[i].cur);
    }
    c->ncur = k;
}

void dg_plan_release_bufs(dg_plan_t *p, dg_plan_chunk_t *c, int chunk_gone)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < c->nbufs; i++) {
        dg_plan_bufst_t *b = &c->bufs[i];
        if (b->home && !chunk_gone) {
            dg_plan_hist_clear(&p->hc, &b->hist); /* the region barrier orders the rest */
            c->bufs[k++] = *b;
            continue;
        }
        p->deps.n = 0;
        buf_deps(p, b, whole(p, c), 1);
        dg_plan_op_t op = {.kind = DG_PLAN_OP_FREE};
        op.u.mem.buf = (dg_plan_buf_t){c->id, b->space};
        op.u.mem.bytes = buf_bytes(c);
        op.u.mem.home = (int)b->home;
        op.u.mem.cached = !b->home && cache_put(p, b->space, op.u.mem.bytes);
        dg_plan_emit(p, &op, &p->deps);
        dg_plan_hist_clear(&p->hc, &b->hist);
    }
    c->nbufs = k;
}

uint64_t dg_plan_signal(dg_plan_t *p, int32_t from, int32_t to, uint64_t after_seq)
{
    uint64_t tag = (p->region << 32) | (p->xfer_index++ & 0xffffffffu);
    dg_plan_op_t op = {.kind = is_me(p, from) ? DG_PLAN_OP_SEND : DG_PLAN_OP_RECV};
    if (!is_me(p, from) && !is_me(p, to))
        return 0;
    op.u.xfer.tag = tag;
    op.u.xfer.peer = is_me(p, from) ? to : from;
    p->deps.n = 0;
    if (is_me(p, from) && after_seq)
        dg_plan_u64vec_push(&p->mem, &p->deps, after_seq);
    return dg_plan_emit(p, &op, &p->deps);
}
