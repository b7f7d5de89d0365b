/* Region replay (core/plan/replay.h) against planning every region: two
 * worlds get the same random program of repeated region bodies (views with
 * modifiers, every mode, by-value arguments whose bytes change between
 * repeats, tasks that return values, futures of the body read in every
 * mode and freed inside the region or after it, futures kept into the next
 * region and read there, task and region scopes, test devices, slot
 * caches, retire windows), one planning every region and one replaying
 * what it can. The bodies repeat exactly, or change one task, stop early,
 * grow by a task, create a chunk, sync one home (of a chunk or a future),
 * ask for a writer, read another future, free a future early or free
 * another one half-way (each forces the replaying planner to catch up), or
 * get a malformed submission between two tasks (the same error from both;
 * the region is caught up), or stop at the body's own cut-off point (the
 * shorter last region of a loop: another recording takes over). Both
 * worlds must emit identical op
 * streams on every rank, return the same placements, statuses, hashes and
 * task information, and their reference executors must end with identical
 * home buffers. The replaying world must have replayed and caught up in
 * the run (the test checks its own coverage).
 *
 * DG_PLAN_REPLAY_PROGRAMS=N runs N programs (default 400; 150 under
 * AddressSanitizer, which runs a program 20 times slower: its pass is there
 * for memory errors, the release pass for the semantics, and 150 programs
 * still reach every coverage check below); DG_PLAN_REPLAY_SEED=S one. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "tests/core/plan/plan_fixture.h"

#define REPLAY_DEFAULT (DG_PLAN_TEST_ASAN ? 150 : 400)

#define NCHUNK 24
#define NBODY 3
#define MAXT 14

typedef struct btask {
    uint32_t cl;
    uint32_t nargs;
    dg_plan_arg_t args[4];
    size_t lens[4];
    int32_t fsrc[4];  /* FUTURE: the body's task whose future it reads */
    uint32_t tret;    /* the submission's own return_size */
    int scoped;
    int32_t srank;
} btask_t;

typedef struct body {
    btask_t t[MAXT];
    int32_t free_of[MAXT]; /* after task i, free the future of this task (-1: none) */
    uint32_t n;
    uint32_t cut;          /* some regions of the body stop after this many tasks */
} body_t;

#define NCL 6 /* codelets: a-d return nothing, e and f return 8 and 24 bytes */
#define NKEPT 8

typedef struct pair {
    uint64_t rng, seed;
    world_t *w[2]; /* [0] plans every region, [1] replays */
    cl_table_t cl;
    uint64_t chunks[NCHUNK];
    uint32_t nchunks;
    body_t body[NBODY];
    uint64_t window;
    uint64_t kept[NKEPT]; /* futures kept past their region, read in the next one */
    uint32_t nkept;
} pair_t;

static uint64_t g_seed;
static int g_running;
static uint64_t g_replayed, g_replanned, g_switched;
static uint64_t g_fut_replayed, g_fut_freed; /* replayed regions that made futures, freed some */

static uint64_t below(pair_t *p, uint64_t n)
{
    return w_below(&p->rng, n);
}

static void both_chunk(pair_t *p)
{
    dg_plan_geom_t g;
    char why[256];
    do {
        memset(&g, 0, sizeof(g));
        g.dtype = below(p, 2) ? DAGGER_F64 : DAGGER_I32;
        g.ndims = 1 + (uint32_t)below(p, 2);
        for (uint32_t k = 0; k < g.ndims; k++)
            g.dims[k] = 1 + below(p, g.ndims == 1 ? 20 : 7);
    } while (dg_plan_geom_check(&g, why, sizeof(why)) != DAGGER_OK);
    int32_t owner = (int32_t)below(p, (uint64_t)p->w[0]->P);
    uint32_t space = p->w[0]->desc[owner].ndevs && below(p, 4) == 0 ? 1 : 0;
    size_t bytes = g.dims[0] * (g.ndims > 1 ? g.dims[1] : 1) * (g.dtype == DAGGER_F64 ? 8 : 4);
    unsigned char *init = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        init[i] = (unsigned char)w_rnd(&p->rng);
    uint64_t id0 = w_chunk_geom(p->w[0], owner, space, &g, init);
    uint64_t id1 = w_chunk_geom(p->w[1], owner, space, &g, init);
    cr_assert_eq(id0, id1);
    free(init);
    if (p->nchunks < NCHUNK)
        p->chunks[p->nchunks++] = id0;
}

/* A random task at position `pos` of a body (futures of tasks before it). */
static void rnd_task(pair_t *p, btask_t *t, uint32_t pos)
{
    memset(t, 0, sizeof(*t));
    t->cl = (uint32_t)below(p, p->cl.n);
    t->tret = p->cl.ret[t->cl] == 0 && below(p, 8) == 0 ? 4 : 0;
    t->nargs = 1 + (uint32_t)below(p, 4);
    for (uint32_t i = 0; i < t->nargs; i++) {
        dg_plan_arg_t *a = &t->args[i];
        t->fsrc[i] = -1;
        if (pos && below(p, 4) == 0) {
            static const dagger_access_t fmodes[] = {0, DAGGER_MODE_IN, DAGGER_MODE_OUT,
                                                     DAGGER_MODE_INOUT};
            a->kind = DG_PLAN_ARG_FUTURE;
            a->mode = fmodes[below(p, 4)];
            t->fsrc[i] = (int32_t)below(p, pos);
            continue;
        }
        if (below(p, 5) == 0) {
            a->kind = DG_PLAN_ARG_VALUE;
            t->lens[i] = 1 + below(p, 16);
            continue;
        }
        uint64_t id = p->chunks[below(p, p->nchunks)];
        a->kind = DG_PLAN_ARG_VIEW;
        static const dagger_access_t modes[] = {DAGGER_MODE_IN, DAGGER_MODE_OUT,
                                                DAGGER_MODE_INOUT};
        a->mode = modes[below(p, 3)];
        w_rnd_view(&p->rng, dg_plan_chunk_geom(p->w[0]->pl[0], id), id, &a->view);
    }
    t->scoped = below(p, 3) == 0;
    t->srank = (int32_t)below(p, (uint64_t)p->w[0]->P);
}

static int geom_eq(const dg_plan_geom_t *a, const dg_plan_geom_t *b)
{
    if (!a || !b)
        return a == b;
    return a->dtype == b->dtype && a->ndims == b->ndims &&
           !memcmp(a->dims, b->dims, sizeof(a->dims)) &&
           !memcmp(a->strides, b->strides, sizeof(a->strides)) && a->extent == b->extent;
}

/* Submits task t on both worlds; by-value bytes are fresh every time. A
 * future argument reads fut[fsrc]; one that does not exist (never made, or
 * freed) is a by-value argument instead. Returns the task's future (0: none). */
static uint64_t both_submit(pair_t *p, const btask_t *bt, const uint64_t *fut)
{
    unsigned char vals[4][16];
    dg_plan_arg_t args[4];
    for (uint32_t i = 0; i < bt->nargs; i++) {
        args[i] = bt->args[i];
        if (args[i].kind == DG_PLAN_ARG_FUTURE) {
            uint64_t id = fut && bt->fsrc[i] >= 0 ? fut[bt->fsrc[i]] : 0;
            if (id) {
                args[i].future = id;
                continue;
            }
            args[i] = (dg_plan_arg_t){.kind = DG_PLAN_ARG_VALUE};
        }
        if (args[i].kind == DG_PLAN_ARG_VALUE) {
            size_t len = bt->lens[i] ? bt->lens[i] : 8;
            for (size_t b = 0; b < len; b++)
                vals[i][b] = (unsigned char)w_rnd(&p->rng);
            args[i].value = vals[i];
            args[i].len = len;
        }
    }
    dg_plan_scope_t s = {.ranks = &bt->srank, .nranks = 1};
    dg_plan_task_desc_t t = {.codelet = p->cl.ids[bt->cl], .args = args, .nargs = bt->nargs,
                             .scope = bt->scoped ? &s : NULL, .ret_size = bt->tret};
    dg_plan_submitted_t s0, s1;
    dagger_status_t st0 = w_submit(p->w[0], &t, &s0);
    dagger_status_t st1 = w_submit(p->w[1], &t, &s1);
    cr_assert_eq(st0, st1, "seed %llu: statuses differ", (unsigned long long)g_seed);
    if (st0 == DAGGER_OK)
        cr_assert(s0.task == s1.task && s0.future == s1.future && s0.rank == s1.rank &&
                  s0.proc == s1.proc && s0.space == s1.space && s0.bytes == s1.bytes,
                  "seed %llu: task %llu placed differently",
                  (unsigned long long)g_seed, (unsigned long long)s0.task);
    if (st0 == DAGGER_OK && s0.future) /* a replayed future answers as a planned one */
        for (int r = 0; r < p->w[0]->P; r++) {
            const dg_plan_geom_t *g0 = dg_plan_chunk_geom(p->w[0]->pl[r], s0.future);
            const dg_plan_geom_t *g1 = dg_plan_chunk_geom(p->w[1]->pl[r], s0.future);
            int32_t o0 = -1, o1 = -2;
            uint32_t t0 = 1, t1 = 2;
            cr_assert(g0 && g1 && geom_eq(g0, g1) && g0->extent == s0.bytes &&
                      dg_plan_chunk_owner(p->w[0]->pl[r], s0.future, &o0) == DAGGER_OK &&
                      dg_plan_chunk_owner(p->w[1]->pl[r], s0.future, &o1) == DAGGER_OK &&
                      o0 == o1 && o0 == s0.rank &&
                      dg_plan_chunk_taint(p->w[0]->pl[r], s0.future, &t0) == DAGGER_OK &&
                      dg_plan_chunk_taint(p->w[1]->pl[r], s0.future, &t1) == DAGGER_OK &&
                      t0 == t1, "seed %llu: future %llu of task %llu differs", (unsigned long long)g_seed,
                      (unsigned long long)s0.future, (unsigned long long)s0.task);
        }
    cr_assert_eq(dg_plan_hash(p->w[0]->pl[0]), dg_plan_hash(p->w[1]->pl[0]),
                 "seed %llu: uniformity hashes differ", (unsigned long long)g_seed);
    return st0 == DAGGER_OK ? s0.future : 0;
}

/* Frees future id on both worlds. */
static void both_free(pair_t *p, uint64_t id)
{
    for (int k = 0; k < 2; k++)
        w_free(p->w[k], id);
    cr_assert_eq(dg_plan_hash(p->w[0]->pl[0]), dg_plan_hash(p->w[1]->pl[0]),
                 "seed %llu: uniformity hashes differ after a free", (unsigned long long)g_seed);
}

static int view_eq(const dg_plan_view_t *a, const dg_plan_view_t *b)
{
    return a->chunk == b->chunk && a->ndims == b->ndims && a->mod == b->mod &&
           !memcmp(a->off, b->off, a->ndims * 8) && !memcmp(a->ext, b->ext, a->ndims * 8);
}

/* Field by field: a struct's padding holds whatever the stack had. */
static int buf_eq(dg_plan_buf_t a, dg_plan_buf_t b)
{
    return a.chunk == b.chunk && a.space == b.space;
}

static int spans_eq(const dg_plan_span_t *a, const dg_plan_span_t *b, uint32_t n)
{
    return !n || !memcmp(a, b, n * sizeof(*a));
}

/* Every field of two ops, pointed-to data by value. */
static int op_eq(const dg_plan_op_t *a, const dg_plan_op_t *b)
{
    if (a->seq != b->seq || a->kind != b->kind || a->ndeps != b->ndeps ||
        (a->ndeps && memcmp(a->deps, b->deps, a->ndeps * 8)))
        return 0;
    switch (a->kind) {
    case DG_PLAN_OP_LAUNCH: {
#define x (&a->u.launch)
#define y (&b->u.launch)
        if (x->task != y->task || x->codelet != y->codelet || x->proc != y->proc ||
            x->space != y->space || x->priority != y->priority || x->nargs != y->nargs ||
            x->ret.chunk != y->ret.chunk || x->ret_size != y->ret_size)
            return 0;
        for (uint32_t i = 0; i < x->nargs; i++) {
            const dg_plan_op_arg_t *u = &x->args[i], *v = &y->args[i];
            if (u->kind != v->kind || u->mode != v->mode || u->len != v->len ||
                u->buf.chunk != v->buf.chunk || u->buf.space != v->buf.space ||
                !geom_eq(u->geom, v->geom))
                return 0;
            if (u->kind == DG_PLAN_ARG_VIEW && !view_eq(&u->view, &v->view))
                return 0;
            if (u->kind == DG_PLAN_ARG_VALUE && u->len && memcmp(u->value, v->value, u->len))
                return 0;
        }
        return 1;
#undef x
#undef y
    }
    case DG_PLAN_OP_SEND:
    case DG_PLAN_OP_RECV: {
        const dg_plan_op_t *x0 = a, *y0 = b;
#define x (&x0->u.xfer)
#define y (&y0->u.xfer)
        return x->tag == y->tag && x->peer == y->peer && x->buf.chunk == y->buf.chunk &&
               x->buf.space == y->buf.space && x->version == y->version &&
               x->elsize == y->elsize && x->nspans == y->nspans && x->bytes == y->bytes &&
               spans_eq(x->spans, y->spans, x->nspans);
#undef x
#undef y
    }
    case DG_PLAN_OP_COPY: {
        const dg_plan_op_t *x0 = a, *y0 = b;
#define x (&x0->u.copy)
#define y (&y0->u.copy)
        return buf_eq(x->src, y->src) && buf_eq(x->dst, y->dst) && x->elsize == y->elsize &&
               x->nspans == y->nspans && x->bytes == y->bytes &&
               spans_eq(x->spans, y->spans, x->nspans);
#undef x
#undef y
    }
    case DG_PLAN_OP_ALLOC:
    case DG_PLAN_OP_FREE:
        return buf_eq(a->u.mem.buf, b->u.mem.buf) && a->u.mem.bytes == b->u.mem.bytes && a->u.mem.home == b->u.mem.home &&
               a->u.mem.cached == b->u.mem.cached;
    case DG_PLAN_OP_REGION_END:
        return a->u.region.region == b->u.region.region && a->u.region.nops == b->u.region.nops;
    }
    return 0;
}

/* A malformed submission on both worlds: same error, no state change, and a
 * replaying planner must not trip over it (it compares before validating). */
static void both_bad(pair_t *p, const btask_t *like)
{
    dg_plan_arg_t args[4];
    memcpy(args, like->args, sizeof(args));
    uint32_t codelet = p->cl.ids[like->cl];
    dg_plan_scope_t s = {0};
    const dg_plan_scope_t *scope = NULL;
    switch (below(p, 4)) {
    case 0: s.nranks = 1; scope = &s; break;                       /* ranks NULL */
    case 1: args[0] = (dg_plan_arg_t){.kind = DG_PLAN_ARG_VALUE, .len = 4}; break; /* no bytes */
    case 2: args[0].kind = DG_PLAN_ARG_VIEW; args[0].view.ndims = 99; break;
    default: codelet = 0xdead; break;
    }
    dg_plan_task_desc_t t = {.codelet = codelet, .args = args, .nargs = like->nargs,
                             .scope = scope};
    for (int k = 0; k < 2; k++)
        cr_assert_neq(w_submit(p->w[k], &t, NULL), DAGGER_OK, "seed %llu: a bad task passed",
                      (unsigned long long)g_seed);
}

static void both_region(pair_t *p, const body_t *b)
{
    dg_plan_stats_t st0;
    dg_plan_get_stats(p->w[1]->pl[0], &st0);
    for (int k = 0; k < 2; k++)
        w_region_begin(p->w[k], NULL);
    uint64_t fut[MAXT + 1] = {0};
    uint32_t made = 0, freed = 0, tasks = 0;
    uint32_t n = b->n;
    uint64_t what = below(p, 26);
    uint32_t at = (uint32_t)below(p, n);
    if (what == 0 && n > 1) /* stops early */
        n = at + 1;
    if (what == 11 || what == 12) /* stops early, always at the same task: a loop's last region */
        n = b->cut;
    if (p->nkept) { /* a future of the last region read first: planned, never replayed */
        btask_t t;
        rnd_task(p, &t, 1);
        t.args[0] = (dg_plan_arg_t){.kind = DG_PLAN_ARG_FUTURE,
                                    .mode = below(p, 2) ? DAGGER_MODE_IN : DAGGER_MODE_INOUT};
        t.fsrc[0] = 0;
        uint64_t kept = p->kept[below(p, p->nkept)];
        both_submit(p, &t, &kept);
    }
    for (uint32_t i = 0; i < n; i++) {
        btask_t t = b->t[i];
        if (i == at && what == 1) /* one task differs */
            rnd_task(p, &t, i);
        if (i == at && what == 2 && p->nchunks < NCHUNK)
            both_chunk(p);
        if (i == at && what == 3) { /* fetch brings a chunk home mid-region */
            uint64_t id = p->chunks[below(p, p->nchunks)];
            for (int k = 0; k < 2; k++)
                for (int r = 0; r < p->w[k]->P; r++)
                    cr_assert_eq(dg_plan_chunk_sync_home(p->w[k]->pl[r], id), DAGGER_OK);
        }
        if (i == at && what == 6)
            both_bad(p, &b->t[i]);
        if (i == at && what == 4) { /* a failure check asks for a writer */
            uint64_t id = p->chunks[below(p, p->nchunks)], w0 = 0, w1 = 0;
            for (int r = 0; r < p->w[0]->P; r++) {
                cr_assert_eq(dg_plan_chunk_writer(p->w[0]->pl[r], id, &w0), DAGGER_OK);
                cr_assert_eq(dg_plan_chunk_writer(p->w[1]->pl[r], id, &w1), DAGGER_OK);
                cr_assert_eq(w0, w1, "seed %llu: writers differ", (unsigned long long)g_seed);
            }
        }
        if (i == at && what == 10 && i && fut[i - 1]) /* a fetch brings a future home */
            for (int k = 0; k < 2; k++)
                for (int r = 0; r < p->w[k]->P; r++)
                    cr_assert_eq(dg_plan_chunk_sync_home(p->w[k]->pl[r], fut[i - 1]), DAGGER_OK);
        if (i == at && what == 7 && i && fut[i - 1]) { /* a future freed early */
            both_free(p, fut[i - 1]);
            fut[i - 1] = 0;
        }
        if (i == at && what == 8) /* a future argument reads another future */
            for (uint32_t a = 0; a < t.nargs; a++)
                if (t.args[a].kind == DG_PLAN_ARG_FUTURE && i > 1) {
                    t.fsrc[a] = (t.fsrc[a] + 1) % (int32_t)i;
                    break;
                }
        fut[i] = both_submit(p, &t, fut);
        made += fut[i] != 0;
        tasks++;
        int32_t f = b->free_of[i];
        if (i == at && what == 9 && f >= 0) /* the free of another future */
            for (uint32_t j = 0; j <= i; j++)
                if (fut[j] && (int32_t)j != f) {
                    f = (int32_t)j;
                    break;
                }
        if (f >= 0 && fut[f]) {
            both_free(p, fut[f]);
            fut[f] = 0;
            freed++;
        }
    }
    if (what == 5) { /* one more */
        btask_t t;
        rnd_task(p, &t, n);
        fut[n] = both_submit(p, &t, fut);
    }
    for (int k = 0; k < 2; k++)
        w_region_end(p->w[k]);
    dg_plan_stats_t st1;
    dg_plan_get_stats(p->w[1]->pl[0], &st1);
    if (made && st1.replayed_tasks - st0.replayed_tasks == tasks) {
        g_fut_replayed++;
        g_fut_freed += freed != 0;
    }
    for (uint32_t i = 0; i <= MAXT; i++) /* the writers of the futures left */
        for (int r = 0; fut[i] && r < p->w[0]->P; r++) {
            uint64_t w0 = 0, w1 = 0;
            cr_assert_eq(dg_plan_chunk_writer(p->w[0]->pl[r], fut[i], &w0), DAGGER_OK);
            cr_assert_eq(dg_plan_chunk_writer(p->w[1]->pl[r], fut[i], &w1), DAGGER_OK);
            cr_assert_eq(w0, w1, "seed %llu: future %llu's writers differ",
                         (unsigned long long)g_seed, (unsigned long long)fut[i]);
        }
    /* The last region's kept futures go; of this one's, some are kept. */
    for (uint32_t i = 0; i < p->nkept; i++)
        both_free(p, p->kept[i]);
    p->nkept = 0;
    for (uint32_t i = 0; i <= MAXT; i++)
        if (fut[i]) {
            if (p->nkept < NKEPT && below(p, 8) == 0)
                p->kept[p->nkept++] = fut[i];
            else
                both_free(p, fut[i]);
        }
}

static void run_pair(uint64_t seed)
{
    pair_t *p = calloc(1, sizeof(*p));
    p->seed = g_seed = seed;
    p->rng = seed * 0x9e3779b97f4a7c15ull + 7;
    int P = 1 + (int)below(p, 4);
    uint32_t cpus = 1 + (uint32_t)below(p, 2);
    uint32_t ndevs[W_MAXP] = {0};
    dg_plan_kind_t kinds[W_MAXP];
    for (int r = 0; r < P; r++) {
        ndevs[r] = below(p, 3) == 0;
        kinds[r] = DG_PLAN_TESTDEV;
    }
    uint64_t cache = below(p, 3) ? 1 << 20 : 0;
    p->window = below(p, 3) == 0 ? 4 + below(p, 12) : 0;
    p->w[0] = w_create_rp(P, cpus, ndevs, kinds, cache, p->window, 0);
    p->w[1] = w_create_rp(P, cpus, ndevs, kinds, cache, p->window, 1000);
    static const uint32_t kinds_of[NCL] = {1, 1 | 8, 1, 1 | 8, 1, 1 | 8};
    static const uint32_t ret_of[NCL] = {0, 0, 0, 0, 8, 24};
    static const char *names[NCL] = {"a", "b", "c", "d", "e", "f"};
    for (uint32_t i = 0; i < NCL; i++) {
        p->cl.ids[i] = w_codelet(p->w[0], names[i], kinds_of[i], ret_of[i]);
        p->cl.ret[i] = ret_of[i];
        cr_assert_eq(w_codelet(p->w[1], names[i], kinds_of[i], ret_of[i]), p->cl.ids[i]);
    }
    p->cl.n = NCL;
    for (int i = 0, n = 2 + (int)below(p, 8); i < n; i++)
        both_chunk(p);
    for (int b = 0; b < NBODY; b++) {
        p->body[b].n = 1 + (uint32_t)below(p, MAXT);
        p->body[b].cut = 1 + (uint32_t)below(p, p->body[b].n);
        for (uint32_t i = 0; i < p->body[b].n; i++) {
            rnd_task(p, &p->body[b].t[i], i);
            p->body[b].free_of[i] = below(p, 3) == 0 ? (int32_t)below(p, i + 1) : -1;
        }
    }
    for (int reg = 0, nreg = 4 + (int)below(p, 12); reg < nreg; reg++)
        both_region(p, &p->body[below(p, NBODY)]);

    for (int r = 0; r < P; r++) {
        uint64_t n = dg_plan_sim_nops(p->w[0]->sim, r);
        cr_assert_eq(dg_plan_sim_nops(p->w[1]->sim, r), n, "seed %llu: rank %d emitted %llu "
                     "ops without replay, %llu with", (unsigned long long)seed, r,
                     (unsigned long long)n, (unsigned long long)dg_plan_sim_nops(p->w[1]->sim, r));
        for (uint64_t i = 0; i < n; i++)
            cr_assert(op_eq(dg_plan_sim_op(p->w[0]->sim, r, i), dg_plan_sim_op(p->w[1]->sim, r, i)),
                      "seed %llu: rank %d op %llu differs with replay", (unsigned long long)seed,
                      r, (unsigned long long)i);
        dg_plan_stats_t a, b;
        dg_plan_get_stats(p->w[0]->pl[r], &a);
        dg_plan_get_stats(p->w[1]->pl[r], &b);
        cr_assert(a.tasks == b.tasks && a.ops == b.ops && a.transfers == b.transfers &&
                  a.copies == b.copies && a.bytes_moved == b.bytes_moved &&
                  a.planned_transfers == b.planned_transfers &&
                  a.planned_copies == b.planned_copies && a.live_chunks == b.live_chunks,
                  "seed %llu: rank %d counters differ", (unsigned long long)seed, r);
        g_replayed += r == 0 ? b.replayed_tasks : 0;
        g_replanned += r == 0 ? b.replay_replanned : 0;
        g_switched += r == 0 ? b.replay_switches : 0;
    }
    for (uint64_t t = 1; t <= W_MAXTASKS; t++) {
        const w_task_t *x = &p->w[0]->tasks[t], *y = &p->w[1]->tasks[t];
        cr_assert(x->rank == y->rank && x->proc == y->proc && x->space == y->space &&
                  x->hash == y->hash && x->ndeps == y->ndeps &&
                  !memcmp(x->deps, y->deps, x->ndeps * 8),
                  "seed %llu: task %llu's information differs", (unsigned long long)seed,
                  (unsigned long long)t);
    }
    for (int k = 0; k < 2; k++) {
        dg_plan_sim_opts_t o = {.seed = seed, .launch = cl_sim_launch, .ctx = &p->cl,
                                .window = p->window};
        cr_assert_eq(dg_plan_sim_run(p->w[k]->sim, &o), DAGGER_OK, "seed %llu: %s",
                     (unsigned long long)seed, dagger_error_detail());
    }
    for (uint32_t i = 0; i < p->nchunks; i++) {
        uint64_t id = p->chunks[i];
        int32_t owner;
        cr_assert_eq(dg_plan_chunk_owner(p->w[0]->pl[0], id, &owner), DAGGER_OK);
        for (uint32_t sp = 0; sp < 2; sp++) {
            size_t n0 = 0, n1 = 0;
            const void *a = dg_plan_sim_buffer(p->w[0]->sim, owner, (dg_plan_buf_t){id, sp}, &n0);
            const void *b = dg_plan_sim_buffer(p->w[1]->sim, owner, (dg_plan_buf_t){id, sp}, &n1);
            cr_assert(!a == !b && n0 == n1 && (!a || !memcmp(a, b, n0)),
                      "seed %llu: chunk %llu ends differently with replay",
                      (unsigned long long)seed, (unsigned long long)id);
        }
    }
    w_destroy(p->w[0]);
    w_destroy(p->w[1]);
    free(p);
}

static void report(void)
{
    if (g_running)
        fprintf(stderr, "replay: failing seed %llu\n", (unsigned long long)g_seed);
}

Test(replay, replaying_regions_emits_what_planning_them_emits, .fini = report, .timeout = 3600)
{
    g_running = 1;
    uint64_t n = w_run_seeds("DG_PLAN_REPLAY_SEED", "DG_PLAN_REPLAY_PROGRAMS", REPLAY_DEFAULT,
                             run_pair);
    g_running = 0;
    if (!n)
        return; /* one seed: nothing to say about coverage */
    cr_expect_gt(g_replayed, 0, "no task was ever replayed");
    cr_expect_gt(g_replanned, 0, "no replayed region ever had to catch up");
    cr_expect_gt(g_switched, 0, "no other recording ever took over from the one chosen first");
    cr_expect_gt(g_fut_replayed, 0, "no region that made futures was replayed whole");
    cr_expect_gt(g_fut_freed, 0, "no region that freed a future was replayed whole");
    fprintf(stderr, "replay: %llu tasks replayed, %llu planned again after a difference, "
            "%llu switches to another recording; "
            "%llu whole regions replayed with futures, %llu of them freeing some\n",
            (unsigned long long)g_replayed, (unsigned long long)g_replanned,
            (unsigned long long)g_switched,
            (unsigned long long)g_fut_replayed, (unsigned long long)g_fut_freed);
}

/* A region replays only from the state it was recorded in: the same region
 * scope, this rank's slot cache as it was, the chunks' buffers on this rank
 * as they were. Both chunks live on rank 1 and the task runs on rank 0: after
 * the first region rank 0 keeps two slots (its cache differs from the first
 * recording's start) and rank 1 has home buffers it did not have (created to
 * send from). Per region, tasks replayed so far (both ranks alike): 1 is
 * recorded; 2 starts from another state and is recorded; 3 replays 2; 4 has
 * another region scope and is recorded; 5 replays 4; 6 (the first scope
 * again) replays 2. */
Test(replay, a_region_replays_only_from_the_state_it_was_recorded_in)
{
    world_t *w = w_create_rp(2, 1, NULL, NULL, 1 << 20, 0, 1000);
    uint32_t cl = w_codelet(w, "k", 1, 0);
    uint64_t a = w_chunk1(w, 1, 64), b = w_chunk1(w, 1, 64);
    dg_plan_arg_t args[2] = {w_view(w, a, DAGGER_MODE_IN), w_view(w, b, DAGGER_MODE_INOUT)};
    int32_t r0 = 0, both[2] = {0, 1};
    dg_plan_scope_t on0 = {.ranks = &r0, .nranks = 1}, rs = {.ranks = both, .nranks = 2};
    const dg_plan_scope_t *scope[] = {NULL, NULL, NULL, &rs, &rs, NULL};
    static const uint64_t want[2][6] = {{0, 0, 1, 1, 2, 3}, {0, 0, 1, 1, 2, 3}};
    for (int i = 0; i < 6; i++) {
        w_region_begin(w, scope[i]);
        dg_plan_submitted_t s = w_task(w, cl, args, 2, &on0);
        cr_assert_eq(s.rank, 0);
        w_region_end(w);
        for (int r = 0; r < 2; r++) {
            dg_plan_stats_t st;
            dg_plan_get_stats(w->pl[r], &st);
            cr_assert_eq(st.replayed_tasks, want[r][i], "rank %d after region %d: %llu replayed",
                         r, i + 1, (unsigned long long)st.replayed_tasks);
        }
    }
    dg_plan_sim_opts_t o = {.fifo = 1};
    cr_assert_eq(dg_plan_sim_run(w->sim, &o), DAGGER_OK, "%s", dagger_error_detail());
    w_destroy(w);
}

/* A program whose regions do not repeat records only now and then (every
 * 8th, 16th, ... at most 64th region after 4 misses in a row), and a phase
 * of repeating regions after it is still found: 100 regions that differ,
 * then 80 alike, of which every one from the 66th on at the latest replays
 * (one recorded within 64 regions, the next replays it, and so on). */
Test(replay, recording_thins_out_without_repeats_and_comes_back)
{
    world_t *w = w_create_rp(1, 1, NULL, NULL, 0, 0, 1000);
    uint32_t cl = w_codelet(w, "k", 1, 0);
    uint64_t a = w_chunk1(w, 0, 256);
    uint64_t before = 0;
    int first = -1;
    for (int i = 0; i < 180; i++) {
        dg_plan_arg_t arg = w_view(w, a, DAGGER_MODE_INOUT);
        arg.view.off[0] = i < 100 ? (uint64_t)i : 0; /* the first 100 differ */
        arg.view.ext[0] = 8;
        w_region_begin(w, NULL);
        w_task(w, cl, &arg, 1, NULL);
        w_region_end(w);
        dg_plan_stats_t st;
        dg_plan_get_stats(w->pl[0], &st);
        int replayed = st.replayed_tasks > before;
        before = st.replayed_tasks;
        if (i < 100)
            cr_assert(!replayed, "region %d replayed, though no two of the first 100 are alike", i);
        else if (first < 0 && replayed)
            first = i;
        else if (first >= 0)
            cr_assert(replayed, "region %d (alike since region 100) was planned again", i);
    }
    /* Thinned: region 100 is not recorded (the 101st would replay it); the
     * 128th miss is. */
    cr_assert(first > 101 && first <= 100 + 65, "the first replay came at region %d", first);
    w_destroy(w);
}

/* A loop of regions of 6 timesteps whose last region has 4 (Task Bench's
 * shape: 22 steps in regions of 6), four times over, on 2 ranks: width 4,
 * each point reading its neighbours' last outputs (double-buffered). The
 * last, shorter region matches the first 16 tasks of the long regions'
 * recording and then ends; a long region that picks the short region's
 * recording first runs past it. In both cases the recording of the other
 * length takes over, so from the third run on every region replays whole;
 * a world that plans every region emits the same ops. */
Test(replay, a_loops_shorter_last_region_replays_too)
{
    world_t *w[2];
    uint64_t buf[2][2][4];
    uint32_t cl = 0;
    for (int k = 0; k < 2; k++) {
        w[k] = w_create_rp(2, 1, NULL, NULL, 1 << 20, 0, k ? 1000 : 0);
        cl = w_codelet(w[k], "point", 1, 0);
        for (int b = 0; b < 2; b++)
            for (int i = 0; i < 4; i++)
                buf[k][b][i] = w_chunk1(w[k], i / 2, 16);
    }
    int step = 0;
    uint64_t replanned = 0; /* after the first run */
    for (int run = 0; run < 4; run++) {
        for (int s0 = 0; s0 < 22; s0 += 6) {
            int n = s0 + 6 <= 22 ? 6 : 22 - s0;
            dg_plan_stats_t st0, st1;
            dg_plan_get_stats(w[1]->pl[0], &st0);
            for (int k = 0; k < 2; k++) {
                w_region_begin(w[k], NULL);
                for (int s = step; s < step + n; s++)
                    for (int i = 0; i < 4; i++) {
                        dg_plan_arg_t a[4];
                        uint32_t na = 0;
                        a[na++] = w_view(w[k], buf[k][(s + 1) & 1][i], DAGGER_MODE_OUT);
                        for (int j = i - 1; j <= i + 1; j++)
                            if (j >= 0 && j < 4)
                                a[na++] = w_view(w[k], buf[k][s & 1][j], DAGGER_MODE_IN);
                        w_task(w[k], cl, a, na, NULL);
                    }
                w_region_end(w[k]);
            }
            step += n;
            dg_plan_get_stats(w[1]->pl[0], &st1);
            if (run >= 2)
                cr_assert_eq(st1.replayed_tasks - st0.replayed_tasks, (uint64_t)n * 4,
                             "run %d, region at step %d (%d steps): %llu of %d tasks replayed",
                             run, s0, n,
                             (unsigned long long)(st1.replayed_tasks - st0.replayed_tasks), n * 4);
        }
        if (run == 0) {
            dg_plan_stats_t st;
            dg_plan_get_stats(w[1]->pl[1], &st);
            replanned = st.replay_replanned;
        }
    }
    /* Only the first short region, with no recording of its length yet,
     * planned the tasks it had replayed again. */
    dg_plan_stats_t st;
    dg_plan_get_stats(w[1]->pl[1], &st);
    cr_assert_gt(st.replay_switches, 0, "no recording took over");
    cr_assert_eq(st.replay_replanned, replanned, "replayed tasks were planned again after the "
                 "first run: %llu, against %llu", (unsigned long long)st.replay_replanned,
                 (unsigned long long)replanned);
    for (int r = 0; r < 2; r++) {
        uint64_t n = dg_plan_sim_nops(w[0]->sim, r);
        cr_assert_eq(dg_plan_sim_nops(w[1]->sim, r), n, "rank %d: %llu ops planned, %llu replayed",
                     r, (unsigned long long)n, (unsigned long long)dg_plan_sim_nops(w[1]->sim, r));
        for (uint64_t i = 0; i < n; i++)
            cr_assert(op_eq(dg_plan_sim_op(w[0]->sim, r, i), dg_plan_sim_op(w[1]->sim, r, i)),
                      "rank %d op %llu differs with replay", r, (unsigned long long)i);
    }
    for (int k = 0; k < 2; k++) {
        dg_plan_sim_opts_t o = {.fifo = 1};
        cr_assert_eq(dg_plan_sim_run(w[k]->sim, &o), DAGGER_OK, "%s", dagger_error_detail());
        w_destroy(w[k]);
    }
}
