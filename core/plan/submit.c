/* Task submission: validate everything first (an error changes nothing),
 * then plan: logical dependencies, placement, moves of stale data, explicit
 * dependency signals, the launch, and the currency changes of its writes. */
#include <stdio.h>
#include <string.h>

#include "core/base/hash.h"
#include "core/plan/uhash.h"
#include "core/plan/planner_internal.h"
#include "core/plan/replay.h"
#include "core/base/status_internal.h"

#define WHY 320

static int grow_acc(dg_plan_t *p, uint32_t n)
{
    if (n <= p->capacc)
        return 0;
    uint32_t cap = p->capacc ? p->capacc : 8;
    while (cap < n)
        cap *= 2;
    dg_plan_acc_t *a = dg_plan_mem_realloc(&p->mem, p->acc, p->capacc * sizeof(*a),
                                           cap * sizeof(*a));
    dg_plan_op_arg_t *o = dg_plan_mem_realloc(&p->mem, p->oargs, p->capoargs * sizeof(*o),
                                              cap * sizeof(*o));
    if (a)
        p->acc = a;
    if (o)
        p->oargs = o;
    if (!a || !o)
        return -1;
    for (uint32_t i = p->capacc; i < cap; i++)
        dg_plan_spans_init(&p->acc[i].spans);
    p->capacc = p->capoargs = cap;
    return 0;
}

static dg_plan_acc_t *new_acc(dg_plan_t *p, dg_plan_chunk_t *c, uint32_t arg, int rd, int wr)
{
    dg_plan_acc_t *a = &p->acc[p->nacc++];
    a->c = c;
    a->arg = arg;
    a->read = (uint32_t)rd;
    a->write = (uint32_t)wr;
    a->spans.n = 0;
    return a;
}

/* Checks one argument and records its access. Returns a status with why[]. */
static dagger_status_t check_arg(dg_plan_t *p, const dg_plan_codelet_t *cl, uint32_t i,
                                 const dg_plan_arg_t *a, char *why)
{
    dagger_dtype_t want = i < cl->ndtypes ? cl->dtypes[i] : (dagger_dtype_t)0;
    switch (a->kind) {
    case DG_PLAN_ARG_VIEW: {
        if (a->mode != DAGGER_MODE_IN && a->mode != DAGGER_MODE_OUT &&
            a->mode != DAGGER_MODE_INOUT) {
            snprintf(why, WHY, "access mode %d (use DAGGER_MODE_IN, _OUT or _INOUT)", a->mode);
            return DAGGER_ERR_INVALID_ARG;
        }
        dg_plan_chunk_t *c = dg_plan_chunk_get(p, a->view.chunk);
        if (!c) {
            snprintf(why, WHY, "chunk %llu is unknown or was freed",
                     (unsigned long long)a->view.chunk);
            return DAGGER_ERR_NOT_FOUND;
        }
        dagger_status_t st = dg_plan_view_check(&c->g, &a->view, why, WHY);
        if (st != DAGGER_OK)
            return st;
        if (want && want != c->g.dtype) {
            snprintf(why, WHY, "chunk %llu has dtype %d but the codelet declares dtype %d for "
                     "this argument", (unsigned long long)c->id, (int)c->g.dtype, (int)want);
            return DAGGER_ERR_DTYPE;
        }
        dg_plan_acc_t *ac = new_acc(p, c, i, a->mode != DAGGER_MODE_OUT,
                                    a->mode != DAGGER_MODE_IN);
        dg_plan_view_spans(&p->mem, &c->g, &a->view, &ac->spans);
        return DAGGER_OK;
    }
    case DG_PLAN_ARG_VALUE:
        if ((a->len && !a->value) || a->len > DG_PLAN_MAX_VALUE) {
            snprintf(why, WHY, "a by-value argument of %zu bytes %s", a->len,
                     a->len > DG_PLAN_MAX_VALUE
                         ? "is larger than 1 MiB (DAGGER_MAX_VALUE); pass a chunk instead"
                         : "has a NULL pointer");
            return DAGGER_ERR_INVALID_ARG;
        }
        return DAGGER_OK;
    case DG_PLAN_ARG_FUTURE: {
        dg_plan_chunk_t *c = dg_plan_chunk_get(p, a->future);
        if (!c || !c->is_future) {
            snprintf(why, WHY, "%llu is not the id of a live future (it is %s)",
                     (unsigned long long)a->future, c ? "a data chunk" : "unknown or freed");
            return DAGGER_ERR_NOT_FOUND;
        }
        if (want && want != DAGGER_U8) {
            snprintf(why, WHY, "a future carries bytes (DAGGER_U8) but the codelet declares "
                     "dtype %d for this argument", (int)want);
            return DAGGER_ERR_DTYPE;
        }
        dagger_access_t m = a->mode ? a->mode : DAGGER_MODE_IN;
        if (m != DAGGER_MODE_IN && m != DAGGER_MODE_OUT && m != DAGGER_MODE_INOUT) {
            snprintf(why, WHY, "future access mode %d (use DAGGER_MODE_IN, _OUT or _INOUT)", m);
            return DAGGER_ERR_INVALID_ARG;
        }
        /* Written in place like any chunk: it moves to where the task runs. */
        dg_plan_acc_t *ac = new_acc(p, c, i, m != DAGGER_MODE_OUT, m != DAGGER_MODE_IN);
        dg_plan_spans_copy(&p->mem, &ac->spans, &c->all);
        return DAGGER_OK;
    }
    }
    snprintf(why, WHY, "argument kind %d (use DG_PLAN_ARG_VIEW, _VALUE or _FUTURE)", a->kind);
    return DAGGER_ERR_INVALID_ARG;
}

/* Explicit dependencies point back into this region (or are satisfied). */
static dagger_status_t check_deps(dg_plan_t *p, uint64_t tid, const dg_plan_task_desc_t *t,
                                  char *why)
{
    for (uint32_t i = 0; i < t->ndeps; i++) {
        uint64_t d = t->deps[i];
        if (d >= tid) {
            snprintf(why, WHY, "it depends on task %llu, which %s; dependencies can only name "
                     "earlier tasks, so this would be a cycle", (unsigned long long)d,
                     d == tid ? "is the task itself" : "is not submitted yet");
            return DAGGER_ERR_CYCLE;
        }
        if (d == 0) {
            snprintf(why, WHY, "dependency %u is task id 0, which no task has", i);
            return DAGGER_ERR_INVALID_ARG;
        }
        if (d >= p->region_first_task && p->ring[d & (p->ring_cap - 1)].task != d) {
            snprintf(why, WHY, "it depends on task %llu, more than %u tasks back in this "
                     "region; raise the planner's dep_window", (unsigned long long)d, p->ring_cap);
            return DAGGER_ERR_INVALID_ARG;
        }
    }
    return DAGGER_OK;
}

static dagger_status_t validate(dg_plan_t *p, uint64_t tid, const dg_plan_codelet_t *cl,
                                const dg_plan_task_desc_t *t, char *why, uint32_t *bad_arg)
{
    *bad_arg = UINT32_MAX;
    if (cl->ndtypes && t->nargs != cl->ndtypes) {
        snprintf(why, WHY, "%u arguments given, the codelet declares %u", t->nargs, cl->ndtypes);
        return DAGGER_ERR_INVALID_ARG;
    }
    if (t->nargs && !t->args) {
        snprintf(why, WHY, "%u arguments but the argument array is NULL", t->nargs);
        return DAGGER_ERR_INVALID_ARG;
    }
    if (t->ndeps && !t->deps) {
        snprintf(why, WHY, "%u dependencies but the array is NULL", t->ndeps);
        return DAGGER_ERR_INVALID_ARG;
    }
    if (t->ret_size > DG_PLAN_MAX_RET) {
        snprintf(why, WHY, "a return value of %u bytes; at most %u", t->ret_size, DG_PLAN_MAX_RET);
        return DAGGER_ERR_INVALID_ARG;
    }
    dagger_status_t st = t->scope ? dg_plan_scope_check(p, t->scope, why, WHY) : DAGGER_OK;
    if (st != DAGGER_OK)
        return st;
    if (grow_acc(p, t->nargs + 1)) {
        snprintf(why, WHY, "out of memory");
        return DAGGER_ERR_NO_MEMORY;
    }
    p->nacc = 0;
    for (uint32_t i = 0; i < t->nargs; i++) {
        st = check_arg(p, cl, i, &t->args[i], why);
        if (st != DAGGER_OK) {
            *bad_arg = i;
            return st;
        }
    }
    return check_deps(p, tid, t, why);
}

/* The hash of a task's shape: what a replayed task must have as recorded
 * (replay.c's same_task checks it field by field), so a recording keeps it
 * and replay does not hash it again. Per argument one word of its small
 * fields (kind, mode, and a view's ndims and modifier, 16 bits each); a
 * view's chunk, offsets and extents; a value's length. */
uint64_t dg_plan_task_shape(const dg_plan_codelet_t *cl, const dg_plan_task_desc_t *t)
{
    uint64_t h = dg_plan_hmix(0x5ba9e, ((uint64_t)t->codelet << 32) | t->nargs);
    h = dg_plan_hmix(h, cl->hash);
    for (uint32_t i = 0; i < t->nargs; i++) {
        const dg_plan_arg_t *a = &t->args[i];
        uint64_t small = ((uint64_t)a->kind & 0xffff) | ((uint64_t)a->mode & 0xffff) << 16;
        if (a->kind == DG_PLAN_ARG_VIEW) {
            small |= ((uint64_t)a->view.ndims & 0xffff) << 32 |
                     ((uint64_t)a->view.mod & 0xffff) << 48;
            h = dg_plan_hmix(dg_plan_hmix(h, small), a->view.chunk);
            for (uint32_t k = 0; k < a->view.ndims && k < DAGGER_MAX_DIMS; k++)
                h = dg_plan_hmix(dg_plan_hmix(h, a->view.off[k]), a->view.ext[k]);
        } else if (a->kind == DG_PLAN_ARG_VALUE) {
            h = dg_plan_hmix(dg_plan_hmix(h, small), a->len);
        } else {
            h = dg_plan_hmix(h, small);
        }
    }
    dg_plan_scope_hash(&h, t->scope);
    h = dg_plan_hmix(h, (uint64_t)(uint32_t)t->priority);
    return dg_plan_hmix(h, 0x7e75u ^ ((uint64_t)t->ret_size << 16));
}

/* The uniformity hash moves by the task's id, its shape, and what a
 * replayed task may change: its values' bytes, its futures' ids and its
 * explicit dependencies. */
void dg_plan_hash_task_shaped(dg_plan_t *p, uint64_t tid, uint64_t shape,
                              const dg_plan_task_desc_t *t)
{
    uint64_t h = dg_plan_hmix(p->shash, 0x7a5c), v = p->vhash;
    h = dg_plan_hmix(dg_plan_hmix(h, tid), shape);
    for (uint32_t i = 0; i < t->nargs; i++) {
        const dg_plan_arg_t *a = &t->args[i];
        if (a->kind == DG_PLAN_ARG_VALUE)
            v = dg_plan_hbytes(v, a->value, a->len);
        else if (a->kind == DG_PLAN_ARG_FUTURE)
            h = dg_plan_hmix(h, a->future);
    }
    if (t->ndeps)
        h = dg_plan_hbytes(h, t->deps, t->ndeps * sizeof(uint64_t));
    p->shash = h;
    p->vhash = v;
}

void dg_plan_hash_task(dg_plan_t *p, uint64_t tid, const dg_plan_codelet_t *cl,
                       const dg_plan_task_desc_t *t)
{
    dg_plan_hash_task_shaped(p, tid, dg_plan_task_shape(cl, t), t);
}

/* The size of the task's return value: its own, else its codelet's. */
uint32_t dg_plan_ret_size(const dg_plan_codelet_t *cl, const dg_plan_task_desc_t *t)
{
    return t->ret_size ? t->ret_size : cl->ret_size;
}

void dg_plan_future_geom(uint32_t ret_size, dg_plan_geom_t *g)
{
    *g = (dg_plan_geom_t){.dtype = DAGGER_U8, .ndims = 1, .dims = {ret_size}};
    if (!ret_size) { /* checked as any geometry (a future has at least one byte) */
        char why[WHY];
        dg_plan_geom_check(g, why, sizeof(why));
        return;
    }
    /* What dg_plan_geom_check makes of it, written out (test_view.c compares
     * the two): every value-returning task makes a future, replayed ones too,
     * and the check took 124 instructions of such a task's 3.3k (now 31). */
    g->elsize = 1;
    g->strides[0] = 1;
    for (uint32_t k = 1; k < DAGGER_MAX_DIMS; k++) {
        g->dims[k] = 1;
        g->strides[k] = ret_size;
    }
    g->extent = ret_size;
}

/* The launch on this rank: its buffers, dependencies and argument list. */
static uint64_t emit_launch(dg_plan_t *p, uint64_t tid, const dg_plan_codelet_t *cl,
                            const dg_plan_task_desc_t *t, dg_plan_loc_t loc, uint32_t proc,
                            uint64_t future)
{
    for (uint32_t i = 0; i < p->nacc; i++)
        dg_plan_buf_get(p, p->acc[i].c, p->acc[i].loc.space);
    p->deps.n = 0;
    for (uint32_t i = 0; i < p->xdeps.n; i++)
        dg_plan_u64vec_push(&p->mem, &p->deps, p->xdeps.v[i]);
    for (uint32_t i = 0; i < p->nacc; i++) {
        dg_plan_acc_t *a = &p->acc[i];
        dg_plan_bufst_t *b = dg_plan_buf_find(a->c, a->loc.space);
        if (b)
            dg_plan_hist_deps(&p->hc, &b->hist, &a->spans, (int)a->write, &p->deps);
    }
    uint32_t k = 0; /* p->acc follows argument order, VALUE arguments have none */
    for (uint32_t i = 0; i < t->nargs; i++) {
        const dg_plan_arg_t *a = &t->args[i];
        dg_plan_op_arg_t *o = &p->oargs[i];
        memset(o, 0, sizeof(*o));
        o->kind = a->kind;
        if (a->kind == DG_PLAN_ARG_VALUE) {
            o->value = a->value;
            o->len = a->len;
            continue;
        }
        const dg_plan_acc_t *ac = &p->acc[k++];
        o->mode = a->mode ? a->mode : DAGGER_MODE_IN;
        o->buf = (dg_plan_buf_t){ac->c->id, ac->loc.space};
        o->geom = &ac->c->g;
        if (a->kind == DG_PLAN_ARG_VIEW)
            o->view = a->view;
        else
            o->len = ac->c->g.dims[0];
    }
    dg_plan_op_t op = {.kind = DG_PLAN_OP_LAUNCH};
    op.u.launch.task = tid;
    op.u.launch.codelet = cl->id;
    op.u.launch.proc = proc;
    op.u.launch.space = loc.space;
    op.u.launch.priority = t->priority;
    op.u.launch.nargs = t->nargs;
    op.u.launch.args = p->oargs;
    op.u.launch.ret = (dg_plan_buf_t){future, 0};
    op.u.launch.ret_size = dg_plan_ret_size(cl, t);
    uint64_t seq = dg_plan_emit(p, &op, &p->deps);
    for (uint32_t i = 0; i < p->nacc; i++) {
        dg_plan_acc_t *a = &p->acc[i];
        dg_plan_bufst_t *b = dg_plan_buf_find(a->c, a->loc.space);
        if (b)
            dg_plan_buf_access(p, b, &a->spans, (int)a->write, seq);
    }
    return seq;
}

/* Explicit dependencies: a launch dependency on this rank, or a zero-byte
 * signal from the rank that ran the earlier task. Fills p->xdeps. */
static void explicit_deps(dg_plan_t *p, const dg_plan_task_desc_t *t, int32_t rank)
{
    p->xdeps.n = 0;
    int me = rank == p->prm.my_rank;
    for (uint32_t i = 0; i < t->ndeps; i++) {
        uint64_t d = t->deps[i];
        uint32_t j = 0;
        while (j < i && t->deps[j] != d)
            j++;
        if (j < i || d < p->region_first_task)
            continue; /* a repeat, or a task of a finished region */
        dg_plan_u64vec_push(&p->mem, &p->ldeps, d);
        const dg_plan_taskrec_t *rec = &p->ring[d & (p->ring_cap - 1)];
        if (rec->rank == rank) {
            if (me)
                dg_plan_u64vec_push(&p->mem, &p->xdeps, rec->launch_seq);
            continue;
        }
        uint64_t s = dg_plan_signal(p, rec->rank, rank, rec->launch_seq);
        if (me)
            dg_plan_u64vec_push(&p->mem, &p->xdeps, s);
    }
}

/* After a failure (dg_plan_taint): what a task writes from tainted data is
 * tainted; a write of a whole chunk from clean data (Out, nothing tainted
 * read) cleans it; other writes leave it as it was. */
static void spread_taint(dg_plan_t *p)
{
    uint32_t from = 0;
    for (uint32_t i = 0; i < p->nacc && !from; i++)
        if (p->acc[i].read)
            from = p->acc[i].c->taint;
    for (uint32_t i = 0; i < p->nacc; i++) {
        dg_plan_acc_t *a = &p->acc[i];
        if (!a->write)
            continue;
        if (from)
            a->c->taint = from;
        else if (a->c->taint && !a->read &&
                 dg_plan_spans_count(&a->spans) == dg_plan_spans_count(&a->c->all))
            a->c->taint = 0;
    }
}

static dagger_status_t plan_task(dg_plan_t *p, uint64_t tid, const dg_plan_codelet_t *cl,
                                 const dg_plan_task_desc_t *t, dg_plan_loc_t loc, uint32_t proc,
                                 dg_plan_submitted_t *out)
{
    p->next_task = tid;
    if (!p->silent) /* catching up (replay.c): hashed already, by-value bytes not kept */
        dg_plan_hash_task(p, tid, cl, t);
    for (uint32_t i = 0; i < p->nacc; i++)
        p->acc[i].loc = p->acc[i].c->is_future ? (dg_plan_loc_t){loc.rank, 0} : loc;
    uint64_t future = 0;
    if (dg_plan_ret_size(cl, t)) {
        dg_plan_geom_t g;
        dg_plan_future_geom(dg_plan_ret_size(cl, t), &g);
        dg_plan_chunk_t *f = dg_plan_chunk_new(p, loc.rank, 0, &g, 1);
        if (!f)
            return DAGGER_ERR_NO_MEMORY;
        future = f->id;
        dg_plan_acc_t *a = new_acc(p, f, UINT32_MAX, 0, 1);
        dg_plan_spans_copy(&p->mem, &a->spans, &f->all);
        a->loc = (dg_plan_loc_t){loc.rank, 0};
    }
    /* Logical dependencies (an output): all queries before any insertion, so
     * the accesses of one task never depend on each other. */
    p->ldeps.n = 0;
    for (uint32_t i = 0; i < p->nacc; i++)
        dg_plan_chunk_touch(p, p->acc[i].c);
    if (p->prm.on_task && !p->prm.no_task_deps) { /* only an output: kept when read */
        for (uint32_t i = 0; i < p->nacc; i++) {
            dg_plan_acc_t *a = &p->acc[i];
            dg_plan_hist_deps(&p->hc, &a->c->logical, &a->spans, (int)a->write, &p->ldeps);
        }
        for (uint32_t i = 0; i < p->nacc; i++)
            dg_plan_hist_add(&p->hc, &p->acc[i].c->logical, &p->acc[i].spans,
                             (int)p->acc[i].write, tid);
    }
    for (uint32_t i = 0; i < p->nacc; i++)
        if (p->acc[i].read)
            dg_plan_make_current(p, p->acc[i].c, p->acc[i].loc, &p->acc[i].spans);
    explicit_deps(p, t, loc.rank);
    dg_plan_u64vec_sort_unique(&p->ldeps);
    uint64_t seq = 0;
    if (loc.rank == p->prm.my_rank)
        seq = emit_launch(p, tid, cl, t, loc, proc, future);
    if (p->tainted)
        spread_taint(p);
    for (uint32_t i = 0; i < p->nacc; i++)
        if (p->acc[i].write) {
            dg_plan_note_write(p, p->acc[i].c, p->acc[i].loc, &p->acc[i].spans);
            p->acc[i].c->version++;
            p->acc[i].c->writer = tid;
        }
    p->ring[tid & (p->ring_cap - 1)] = (dg_plan_taskrec_t){tid, seq, loc.rank};
    p->st.tasks++;
    dg_plan_task_info_t info = {.task = tid, .codelet = cl->id, .rank = loc.rank, .proc = proc,
                                .space = loc.space, .ndeps = p->ldeps.n, .deps = p->ldeps.v,
                                .hash = dg_plan_hash(p), .future = future};
    if (p->rp)
        dg_plan_rp_task_end(p, &info, seq);
    if (p->prm.on_task && !p->silent)
        p->prm.on_task(p->prm.task_ctx, &info);
    if (out)
        *out = (dg_plan_submitted_t){tid, future, loc.rank, proc, loc.space,
                                     future ? dg_plan_ret_size(cl, t) : 0};
    return DAGGER_OK;
}

dagger_status_t dg_plan_plan_task(dg_plan_t *p, const dg_plan_task_desc_t *t,
                                  dg_plan_submitted_t *out)
{
    uint64_t tid = p->next_task + 1;
    const dg_plan_codelet_t *cl = dg_plan_idmap_get(&p->codelets, t->codelet);
    if (!cl)
        return dg_error(DAGGER_ERR_NOT_FOUND, "dg_plan_submit: task %llu names codelet id 0x%08x, "
                        "which is not registered; register it on every rank before submitting",
                        (unsigned long long)tid, t->codelet);
    char why[WHY];
    uint32_t bad;
    dg_plan_loc_t loc;
    uint32_t proc;
    dagger_status_t st = validate(p, tid, cl, t, why, &bad);
    if (st == DAGGER_OK)
        st = dg_plan_place(p, tid, cl, t->scope, &loc, &proc, why, sizeof(why));
    if (st != DAGGER_OK) {
        if (bad != UINT32_MAX)
            return dg_error(st, "dg_plan_submit: task %llu (codelet '%s') argument %u: %s",
                            (unsigned long long)tid, cl->name, bad, why);
        return dg_error(st, "dg_plan_submit: task %llu (codelet '%s'): %s",
                        (unsigned long long)tid, cl->name, why);
    }
    if (p->rp)
        dg_plan_rp_task_begin(p, cl, t);
    st = plan_task(p, tid, cl, t, loc, proc, out);
    if (st == DAGGER_OK && !p->mem.failed)
        return DAGGER_OK;
    p->mem.failed = 1;
    return dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan_submit: out of memory while planning task %llu",
                    (unsigned long long)tid);
}

dagger_status_t dg_plan_submit(dg_plan_t *p, const dg_plan_task_desc_t *t,
                               dg_plan_submitted_t *out)
{
    DG_CHECK_ARG(p && t, "dg_plan_submit: NULL argument");
    if (p->mem.failed)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan_submit: the planner ran out of memory "
                        "earlier and its state is lost; destroy it");
    if (!p->in_region)
        return dg_error(DAGGER_ERR_STATE, "dg_plan_submit: task %llu submitted outside a "
                        "region; call dg_plan_region_begin first",
                        (unsigned long long)p->next_task + 1);
    if (p->rp) {
        const dg_plan_codelet_t *cl = dg_plan_idmap_get(&p->codelets, t->codelet);
        int r = cl ? dg_plan_rp_submit(p, cl, t, out) : dg_plan_rp_settle(p, 0);
        if (r > 0)
            return DAGGER_OK;
        if (r < 0)
            return DAGGER_ERR_INTERNAL; /* catching up failed; the error says how */
    }
    return dg_plan_plan_task(p, t, out);
}
