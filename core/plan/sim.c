/* Reference executor (see sim.h). Test-speed code: plain malloc, linear
 * buffer lookup. */
#include "core/plan/sim.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/status_internal.h"

#define POISON 0xA5

typedef struct simop {
    dg_plan_op_t op;          /* pointers refer into this block */
    int32_t rank;
    int done;
    int parked;               /* dependencies met, outside the window (opts.window) */
    uint32_t pending;
    uint32_t *next;           /* dependents (global indices in the run) */
    uint32_t nnext, capnext;
    struct simop *match;      /* SEND <-> RECV */
    uint32_t gidx;            /* index in the current run */
    unsigned char *msg;       /* SEND: packed bytes once run */
} simop_t;

typedef struct simbuf {
    dg_plan_buf_t buf;
    size_t bytes;
    unsigned char *data;
} simbuf_t;

typedef struct simrank {
    dg_plan_sim_t *sim;
    int32_t rank;
    simop_t **ops;
    uint64_t nops, capops, first_unrun;
    simbuf_t *bufs;
    uint32_t nbufs, capbufs;
    int broken;               /* an emit could not be recorded */
} simrank_t;

struct dg_plan_sim {
    int32_t nranks;
    simrank_t *ranks;
};

dagger_status_t dg_plan_sim_create(int32_t nranks, dg_plan_sim_t **out)
{
    DG_CHECK_ARG(nranks > 0 && out, "dg_plan_sim_create: bad arguments");
    dg_plan_sim_t *s = dg_calloc(1, sizeof(*s));
    simrank_t *r = dg_calloc((size_t)nranks, sizeof(*r));
    if (!s || !r) {
        free(s);
        free(r);
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan_sim_create: out of memory");
    }
    s->nranks = nranks;
    s->ranks = r;
    for (int32_t i = 0; i < nranks; i++) {
        r[i].sim = s;
        r[i].rank = i;
    }
    *out = s;
    return DAGGER_OK;
}

void dg_plan_sim_destroy(dg_plan_sim_t *s)
{
    if (!s)
        return;
    for (int32_t i = 0; i < s->nranks; i++) {
        simrank_t *r = &s->ranks[i];
        for (uint64_t k = 0; k < r->nops; k++) {
            free(r->ops[k]->next);
            free(r->ops[k]->msg);
            free(r->ops[k]);
        }
        for (uint32_t k = 0; k < r->nbufs; k++)
            free(r->bufs[k].data);
        free(r->ops);
        free(r->bufs);
    }
    free(s->ranks);
    free(s);
}

void *dg_plan_sim_rank_ctx(dg_plan_sim_t *s, int32_t rank)
{
    return &s->ranks[rank];
}

uint64_t dg_plan_sim_nops(const dg_plan_sim_t *s, int32_t rank)
{
    return s->ranks[rank].nops;
}

const dg_plan_op_t *dg_plan_sim_op(const dg_plan_sim_t *s, int32_t rank, uint64_t index)
{
    return index < s->ranks[rank].nops ? &s->ranks[rank].ops[index]->op : NULL;
}

/* ---- recording: a deep copy of each op in one block ---- */

static size_t op_extra(const dg_plan_op_t *op)
{
    size_t n = op->ndeps * sizeof(uint64_t);
    if (op->kind == DG_PLAN_OP_LAUNCH) {
        n += op->u.launch.nargs * (sizeof(dg_plan_op_arg_t) + sizeof(dg_plan_geom_t));
        for (uint32_t i = 0; i < op->u.launch.nargs; i++)
            if (op->u.launch.args[i].kind == DG_PLAN_ARG_VALUE)
                n += op->u.launch.args[i].len;
    } else if (op->kind == DG_PLAN_OP_SEND || op->kind == DG_PLAN_OP_RECV) {
        n += op->u.xfer.nspans * sizeof(dg_plan_span_t);
    } else if (op->kind == DG_PLAN_OP_COPY) {
        n += op->u.copy.nspans * sizeof(dg_plan_span_t);
    }
    return n;
}

static void *take(unsigned char **at, const void *src, size_t len)
{
    void *dst = *at;
    if (len)
        memcpy(dst, src, len);
    *at += len;
    return dst;
}

static void copy_launch(simop_t *so, const dg_plan_op_t *op, unsigned char **at)
{
    uint32_t n = op->u.launch.nargs;
    dg_plan_op_arg_t *args = take(at, op->u.launch.args, n * sizeof(*args));
    dg_plan_geom_t *geoms = (dg_plan_geom_t *)*at;
    *at += n * sizeof(*geoms);
    for (uint32_t i = 0; i < n; i++) {
        if (args[i].geom) {
            geoms[i] = *args[i].geom;
            args[i].geom = &geoms[i];
        }
        if (args[i].kind == DG_PLAN_ARG_VALUE)
            args[i].value = take(at, args[i].value, args[i].len);
    }
    so->op.u.launch.args = args;
}

void dg_plan_sim_emit(void *rank_ctx, const dg_plan_op_t *op)
{
    simrank_t *r = rank_ctx;
    if (r->nops == r->capops) {
        uint64_t cap = r->capops ? r->capops * 2 : 256;
        simop_t **nv = dg_realloc(r->ops, cap * sizeof(*nv));
        if (!nv) {
            r->broken = 1;
            return;
        }
        r->ops = nv;
        r->capops = cap;
    }
    /* Align the tail for the 8-byte fields that follow the struct. */
    simop_t *so = dg_calloc(1, sizeof(*so) + op_extra(op) + 16);
    if (!so) {
        r->broken = 1;
        return;
    }
    so->op = *op;
    so->rank = r->rank;
    unsigned char *at = (unsigned char *)(so + 1);
    so->op.deps = take(&at, op->deps, op->ndeps * sizeof(uint64_t));
    if (op->kind == DG_PLAN_OP_LAUNCH)
        copy_launch(so, op, &at);
    else if (op->kind == DG_PLAN_OP_SEND || op->kind == DG_PLAN_OP_RECV)
        so->op.u.xfer.spans = take(&at, op->u.xfer.spans,
                                   op->u.xfer.nspans * sizeof(dg_plan_span_t));
    else if (op->kind == DG_PLAN_OP_COPY)
        so->op.u.copy.spans = take(&at, op->u.copy.spans,
                                   op->u.copy.nspans * sizeof(dg_plan_span_t));
    r->ops[r->nops++] = so;
}

/* ---- buffers ---- */

static simbuf_t *find_buf(simrank_t *r, dg_plan_buf_t b)
{
    for (uint32_t i = 0; i < r->nbufs; i++)
        if (r->bufs[i].buf.chunk == b.chunk && r->bufs[i].buf.space == b.space)
            return &r->bufs[i];
    return NULL;
}

static int new_buf(simrank_t *r, dg_plan_buf_t b, const void *init, size_t bytes)
{
    if (find_buf(r, b))
        return -1;
    if (r->nbufs == r->capbufs) {
        uint32_t cap = r->capbufs ? r->capbufs * 2 : 16;
        simbuf_t *nv = dg_realloc(r->bufs, cap * sizeof(*nv));
        if (!nv)
            return -2;
        r->bufs = nv;
        r->capbufs = cap;
    }
    unsigned char *d = dg_malloc(bytes ? bytes : 1);
    if (!d)
        return -2;
    if (init)
        memcpy(d, init, bytes);
    else
        memset(d, POISON, bytes);
    r->bufs[r->nbufs++] = (simbuf_t){b, bytes, d};
    return 0;
}

dagger_status_t dg_plan_sim_add_buffer(dg_plan_sim_t *s, int32_t rank, dg_plan_buf_t buf,
                                       const void *init, size_t bytes)
{
    DG_CHECK_ARG(s && rank >= 0 && rank < s->nranks, "dg_plan_sim_add_buffer: bad rank");
    int rc = new_buf(&s->ranks[rank], buf, init, bytes);
    if (rc == -1)
        return dg_error(DAGGER_ERR_EXISTS, "dg_plan_sim_add_buffer: rank %d already has buffer "
                        "(%llu, %u)", rank, (unsigned long long)buf.chunk, buf.space);
    return rc ? dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan_sim_add_buffer: out of memory")
              : DAGGER_OK;
}

void *dg_plan_sim_buffer(dg_plan_sim_t *s, int32_t rank, dg_plan_buf_t buf, size_t *bytes)
{
    simbuf_t *b = find_buf(&s->ranks[rank], buf);
    if (bytes)
        *bytes = b ? b->bytes : 0;
    return b ? b->data : NULL;
}

/* ---- running ---- */

typedef struct run {
    dg_plan_sim_t *s;
    simop_t **all;           /* unrun ops of every rank */
    uint32_t n;
    uint32_t *ready;         /* indices into all */
    uint32_t nready, head;   /* FIFO: ready[head..nready) */
    uint64_t rng;
    const dg_plan_sim_opts_t *o;
    uint32_t *rbase, *rdone; /* per rank: first index in all, length of its finished prefix */
} run_t;

static const char *kind_name(dg_plan_op_kind_t k)
{
    static const char *names[] = {"?", "LAUNCH", "SEND", "RECV", "COPY", "ALLOC", "FREE",
                                  "REGION_END"};
    return (unsigned)k < 8 ? names[k] : "?";
}

static dagger_status_t op_fail(const simop_t *so, const char *what)
{
    return dg_error(DAGGER_ERR_PROTOCOL, "sim: rank %d op %llu (%s): %s", so->rank,
                    (unsigned long long)so->op.seq, kind_name(so->op.kind), what);
}

static int add_next(simop_t *from, uint32_t to)
{
    if (from->nnext == from->capnext) {
        uint32_t cap = from->capnext ? from->capnext * 2 : 4;
        uint32_t *nv = dg_realloc(from->next, cap * sizeof(*nv));
        if (!nv)
            return -1;
        from->next = nv;
        from->capnext = cap;
    }
    from->next[from->nnext++] = to;
    return 0;
}

static int cmp_tag(const void *a, const void *b)
{
    const simop_t *x = *(simop_t *const *)a, *y = *(simop_t *const *)b;
    if (x->op.u.xfer.tag != y->op.u.xfer.tag)
        return x->op.u.xfer.tag < y->op.u.xfer.tag ? -1 : 1;
    return (int)x->op.kind - (int)y->op.kind; /* SEND before RECV */
}

/* Pairs every SEND with its RECV and checks that they agree. */
static dagger_status_t match_transfers(run_t *R)
{
    simop_t **x = dg_malloc((R->n + 1) * sizeof(*x));
    if (!x)
        return dg_error(DAGGER_ERR_NO_MEMORY, "sim: out of memory");
    uint32_t m = 0;
    for (uint32_t i = 0; i < R->n; i++)
        if (R->all[i]->op.kind == DG_PLAN_OP_SEND || R->all[i]->op.kind == DG_PLAN_OP_RECV)
            x[m++] = R->all[i];
    qsort(x, m, sizeof(*x), cmp_tag);
    dagger_status_t st = DAGGER_OK;
    for (uint32_t i = 0; i < m && st == DAGGER_OK; i += 2) {
        simop_t *snd = x[i], *rcv = i + 1 < m ? x[i + 1] : NULL;
        if (snd->op.kind != DG_PLAN_OP_SEND || !rcv || rcv->op.kind != DG_PLAN_OP_RECV ||
            rcv->op.u.xfer.tag != snd->op.u.xfer.tag || (i + 2 < m &&
            x[i + 2]->op.u.xfer.tag == snd->op.u.xfer.tag)) {
            st = op_fail(snd, "tag has no single SEND/RECV pair");
            break;
        }
        const dg_plan_op_t *a = &snd->op, *b = &rcv->op;
        if (a->u.xfer.peer != rcv->rank || b->u.xfer.peer != snd->rank)
            st = op_fail(snd, "SEND and RECV name different peers");
        else if (a->u.xfer.bytes != b->u.xfer.bytes || a->u.xfer.nspans != b->u.xfer.nspans ||
                 a->u.xfer.elsize != b->u.xfer.elsize || a->u.xfer.buf.chunk != b->u.xfer.buf.chunk)
            st = op_fail(snd, "SEND and RECV disagree on chunk, bytes or span count");
        for (uint32_t k = 0; st == DAGGER_OK && k < a->u.xfer.nspans; k++)
            if (a->u.xfer.spans[k].end - a->u.xfer.spans[k].begin !=
                b->u.xfer.spans[k].end - b->u.xfer.spans[k].begin)
                st = op_fail(snd, "SEND and RECV span lengths differ");
        snd->match = rcv;
        rcv->match = snd;
    }
    free(x);
    return st;
}

/* Dependency counts: explicit deps, the matching SEND for a RECV, and the
 * REGION_END barrier (waits for the rank's earlier ops; later ops wait for it). */
static dagger_status_t build_graph(run_t *R)
{
    uint32_t base = 0;
    for (int32_t rk = 0; rk < R->s->nranks; rk++) {
        simrank_t *r = &R->s->ranks[rk];
        uint32_t cnt = (uint32_t)(r->nops - r->first_unrun);
        int64_t barrier = -1; /* global index of the last REGION_END seen */
        for (uint32_t i = 0; i < cnt; i++) {
            simop_t *so = R->all[base + i];
            if (so->op.seq != r->first_unrun + i + 1)
                return op_fail(so, "sequence numbers are not consecutive from 1");
            for (uint32_t d = 0; d < so->op.ndeps; d++) {
                uint64_t dep = so->op.deps[d];
                if (dep == 0 || dep >= so->op.seq || (d && dep <= so->op.deps[d - 1]))
                    return op_fail(so, "a dependency is not an earlier op (or deps unsorted)");
                if (dep <= r->first_unrun)
                    continue; /* ran in an earlier run */
                if (add_next(R->all[base + (dep - r->first_unrun - 1)], base + i))
                    return dg_error(DAGGER_ERR_NO_MEMORY, "sim: out of memory");
                so->pending++;
            }
            if (so->op.kind == DG_PLAN_OP_RECV)
                so->pending++;
            if (barrier >= 0) {
                add_next(R->all[barrier], base + i);
                so->pending++;
            }
            if (so->op.kind == DG_PLAN_OP_REGION_END) {
                uint32_t from = barrier >= 0 ? (uint32_t)barrier + 1 : base;
                for (uint32_t k = from; k < base + i; k++) {
                    add_next(R->all[k], base + i);
                    so->pending++;
                }
                barrier = base + i;
            }
        }
        base += cnt;
    }
    return match_transfers(R);
}

static int in_bounds(const simbuf_t *b, const dg_plan_span_t *sp, uint32_t n, uint32_t elsize)
{
    for (uint32_t i = 0; i < n; i++)
        if (sp[i].begin >= sp[i].end || sp[i].end * elsize > b->bytes)
            return 0;
    return 1;
}

static dagger_status_t run_xfer(run_t *R, simop_t *so, simrank_t *r)
{
    const dg_plan_op_t *op = &so->op;
    uint32_t es = op->u.xfer.elsize;
    simbuf_t *b = NULL;
    if (op->u.xfer.buf.chunk) {
        b = find_buf(r, op->u.xfer.buf);
        if (!b || !in_bounds(b, op->u.xfer.spans, op->u.xfer.nspans, es))
            return op_fail(so, "buffer missing or spans out of bounds");
    }
    if (op->kind == DG_PLAN_OP_SEND) {
        so->msg = dg_malloc(op->u.xfer.bytes + 1);
        if (!so->msg)
            return dg_error(DAGGER_ERR_NO_MEMORY, "sim: out of memory");
        uint64_t at = 0;
        for (uint32_t i = 0; b && i < op->u.xfer.nspans; i++) {
            uint64_t len = (op->u.xfer.spans[i].end - op->u.xfer.spans[i].begin) * es;
            memcpy(so->msg + at, b->data + op->u.xfer.spans[i].begin * es, len);
            at += len;
        }
        return DAGGER_OK;
    }
    uint64_t at = 0;
    for (uint32_t i = 0; b && i < op->u.xfer.nspans; i++) {
        uint64_t len = (op->u.xfer.spans[i].end - op->u.xfer.spans[i].begin) * es;
        memcpy(b->data + op->u.xfer.spans[i].begin * es, so->match->msg + at, len);
        at += len;
    }
    free(so->match->msg);
    so->match->msg = NULL;
    (void)R;
    return DAGGER_OK;
}

static dagger_status_t run_launch(run_t *R, simop_t *so, simrank_t *r)
{
    const dg_plan_op_t *op = &so->op;
    for (uint32_t i = 0; i < op->u.launch.nargs; i++) {
        const dg_plan_op_arg_t *a = &op->u.launch.args[i];
        if (a->kind == DG_PLAN_ARG_VALUE)
            continue;
        simbuf_t *b = find_buf(r, a->buf);
        if (!b || b->bytes < a->geom->extent * a->geom->elsize)
            return op_fail(so, "an argument's buffer is missing or too small");
    }
    if (op->u.launch.ret.chunk && !find_buf(r, op->u.launch.ret))
        return op_fail(so, "the return value's buffer is missing");
    if (R->o->launch && R->o->launch(R->o->ctx, R->s, r->rank, op))
        return dg_error(DAGGER_ERR_TASK_FAILED, "sim: rank %d task %llu failed", r->rank,
                        (unsigned long long)op->u.launch.task);
    return DAGGER_OK;
}

static dagger_status_t run_one(run_t *R, simop_t *so)
{
    simrank_t *r = &R->s->ranks[so->rank];
    const dg_plan_op_t *op = &so->op;
    switch (op->kind) {
    case DG_PLAN_OP_ALLOC: {
        int rc = new_buf(r, op->u.mem.buf, NULL, op->u.mem.bytes);
        return rc == -1 ? op_fail(so, "buffer allocated twice")
               : rc     ? dg_error(DAGGER_ERR_NO_MEMORY, "sim: out of memory") : DAGGER_OK;
    }
    case DG_PLAN_OP_FREE: {
        simbuf_t *b = find_buf(r, op->u.mem.buf);
        if (!b)
            return op_fail(so, "freeing a buffer that does not exist");
        free(b->data);
        *b = r->bufs[--r->nbufs];
        return DAGGER_OK;
    }
    case DG_PLAN_OP_COPY: {
        simbuf_t *src = find_buf(r, op->u.copy.src), *dst = find_buf(r, op->u.copy.dst);
        uint32_t es = op->u.copy.elsize;
        if (!src || !dst || src == dst || !in_bounds(src, op->u.copy.spans, op->u.copy.nspans, es) ||
            !in_bounds(dst, op->u.copy.spans, op->u.copy.nspans, es))
            return op_fail(so, "copy between missing buffers or out of bounds");
        for (uint32_t i = 0; i < op->u.copy.nspans; i++)
            memcpy(dst->data + op->u.copy.spans[i].begin * es,
                   src->data + op->u.copy.spans[i].begin * es,
                   (op->u.copy.spans[i].end - op->u.copy.spans[i].begin) * es);
        return DAGGER_OK;
    }
    case DG_PLAN_OP_SEND:
    case DG_PLAN_OP_RECV: return run_xfer(R, so, r);
    case DG_PLAN_OP_LAUNCH: return run_launch(R, so, r);
    case DG_PLAN_OP_REGION_END: return DAGGER_OK;
    }
    return op_fail(so, "unknown op kind");
}

static void make_ready(run_t *R, uint32_t i)
{
    R->ready[R->nready++] = i;
}

/* With a window, an op whose dependencies are met waits (parked) until every
 * op of its rank at least `window` before it has run, as in the executor's
 * ring; the index of an op within its rank's block is its seq order. */
static int in_window(const run_t *R, const simop_t *so)
{
    uint32_t i = so->gidx - R->rbase[so->rank];
    return !R->o->window || i < R->rdone[so->rank] + R->o->window;
}

static void dep_met(run_t *R, uint32_t i)
{
    if (in_window(R, R->all[i]))
        make_ready(R, i);
    else
        R->all[i]->parked = 1;
}

/* After an op ran: its rank's finished prefix may grow and let parked ops in. */
static void advance_window(run_t *R, const simop_t *so)
{
    int32_t rk = so->rank;
    uint32_t base = R->rbase[rk], end = R->rbase[rk + 1], before = R->rdone[rk];
    while (base + R->rdone[rk] < end && R->all[base + R->rdone[rk]]->done)
        R->rdone[rk]++;
    if (!R->o->window)
        return;
    for (uint64_t i = (uint64_t)before + R->o->window;
         i < (uint64_t)R->rdone[rk] + R->o->window && base + i < end; i++)
        if (R->all[base + i]->parked) {
            R->all[base + i]->parked = 0;
            make_ready(R, base + (uint32_t)i);
        }
}

static uint32_t pick(run_t *R)
{
    if (R->o->fifo)
        return R->ready[R->head++];
    R->rng ^= R->rng << 13;
    R->rng ^= R->rng >> 7;
    R->rng ^= R->rng << 17;
    uint32_t k = R->head + (uint32_t)(R->rng % (R->nready - R->head));
    uint32_t v = R->ready[k];
    R->ready[k] = R->ready[--R->nready];
    return v;
}

static dagger_status_t execute(run_t *R)
{
    for (uint32_t i = 0; i < R->n; i++)
        if (!R->all[i]->pending)
            dep_met(R, i);
    uint32_t done = 0;
    while (R->head < R->nready) {
        simop_t *so = R->all[pick(R)];
        dagger_status_t st = run_one(R, so);
        if (st != DAGGER_OK)
            return st;
        so->done = 1;
        done++;
        for (uint32_t k = 0; k < so->nnext; k++)
            if (--R->all[so->next[k]]->pending == 0)
                dep_met(R, so->next[k]);
        if (so->op.kind == DG_PLAN_OP_SEND && --so->match->pending == 0)
            dep_met(R, so->match->gidx);
        advance_window(R, so);
    }
    if (done < R->n)
        for (uint32_t i = 0; i < R->n; i++)
            if (!R->all[i]->done)
                return dg_error(DAGGER_ERR_HANG, "sim: %u of %u ops never became ready; first: "
                                "rank %d op %llu (%s), waiting on %u", R->n - done, R->n,
                                R->all[i]->rank, (unsigned long long)R->all[i]->op.seq,
                                kind_name(R->all[i]->op.kind), R->all[i]->pending);
    return DAGGER_OK;
}

dagger_status_t dg_plan_sim_run(dg_plan_sim_t *s, const dg_plan_sim_opts_t *o)
{
    DG_CHECK_ARG(s && o, "dg_plan_sim_run: NULL argument");
    run_t R = {.s = s, .o = o, .rng = o->seed * 2654435761u + 0x9e3779b97f4a7c15ull};
    uint64_t total = 0;
    for (int32_t rk = 0; rk < s->nranks; rk++) {
        if (s->ranks[rk].broken)
            return dg_error(DAGGER_ERR_NO_MEMORY, "sim: rank %d lost ops (out of memory)", rk);
        total += s->ranks[rk].nops - s->ranks[rk].first_unrun;
    }
    R.all = dg_malloc((total + 1) * sizeof(*R.all));
    R.ready = dg_malloc((total + 1) * sizeof(*R.ready));
    R.rbase = dg_malloc(((size_t)s->nranks + 1) * sizeof(*R.rbase));
    R.rdone = dg_calloc((size_t)s->nranks + 1, sizeof(*R.rdone));
    if (!R.all || !R.ready || !R.rbase || !R.rdone) {
        free(R.all);
        free(R.ready);
        free(R.rbase);
        free(R.rdone);
        return dg_error(DAGGER_ERR_NO_MEMORY, "sim: out of memory");
    }
    for (int32_t rk = 0; rk < s->nranks; rk++) {
        simrank_t *r = &s->ranks[rk];
        R.rbase[rk] = R.n;
        for (uint64_t k = r->first_unrun; k < r->nops; k++) {
            r->ops[k]->gidx = R.n;
            R.all[R.n++] = r->ops[k];
        }
    }
    R.rbase[s->nranks] = R.n;
    dagger_status_t st = build_graph(&R);
    if (st == DAGGER_OK)
        st = execute(&R);
    for (uint32_t i = 0; i < R.n; i++) {
        free(R.all[i]->next);
        R.all[i]->next = NULL;
        R.all[i]->nnext = R.all[i]->capnext = 0;
    }
    for (int32_t rk = 0; rk < s->nranks; rk++)
        s->ranks[rk].first_unrun = s->ranks[rk].nops;
    free(R.all);
    free(R.ready);
    free(R.rbase);
    free(R.rdone);
    return st;
}
