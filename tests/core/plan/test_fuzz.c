/* Randomized differential test: random programs (chunks 1-D..4-D, padded
 * layouts, views with every modifier, every mode, by-value arguments,
 * futures read, overwritten and updated in place as arguments, per-task
 * return sizes, syncs home inside regions, explicit dependencies, scopes and
 * union scopes (placements and scope errors checked against a brute-force
 * reference), GPUs, frees inside regions, bad submissions, P = 1..8) are
 * planned by P planners, their op streams run by the reference executor in
 * random legal interleavings, and every chunk and
 * future must end byte-identical to plain sequential execution on one copy.
 * The P planners' uniformity hashes must agree after every call.
 *
 * DG_PLAN_FUZZ_PROGRAMS=N runs N programs (long mode); DG_PLAN_FUZZ_SEED=S
 * runs one program. A failing seed is printed; add it to `regressions`. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "tests/core/plan/plan_fixture.h"

#define FUZZ_DEFAULT (DG_PLAN_TEST_ASAN ? 500 : 4000)

/* Seeds that once failed; they run first, every time. */
static const uint64_t regressions[] = {0};

#define MAXC 512

typedef struct ref_chunk {
    int live, is_future;
    int32_t owner;
    uint32_t space;
    dg_plan_geom_t g;
    unsigned char *data;
    size_t bytes;
} ref_chunk_t;

typedef struct prog {
    uint64_t rng;
    world_t *w;
    cl_table_t cl;
    uint32_t kinds[8];
    ref_chunk_t c[MAXC];
    uint64_t region_first;      /* first task id of the region */
    uint64_t ntasks;            /* tasks planned so far (ids 1..ntasks) */
    dg_plan_scope_t rscope;
    int32_t rranks[8];
    dg_plan_scope_t rparts[3];  /* a union region scope */
    int32_t rpranks[12];
    uint32_t rpprocs[12];
    int rscoped;
    uint64_t window;            /* retire window of planners and sim; 0: none */
} prog_t;

static uint64_t g_seed;
static int g_running;

/* What the programs exercised, so the test proves its own coverage. */
enum { COV_SEND, COV_RECV, COV_COPY, COV_SIGNAL, COV_GPU_LAUNCH, COV_EXACT_CPU, COV_ALLOC,
       COV_ALLOC_CACHED, COV_FREE_CACHED, COV_FREE_HOME, COV_MULTISPAN, COV_N };
static uint64_t g_cov[COV_N];

static void tally(world_t *w)
{
    for (int r = 0; r < w->P; r++)
        for (uint64_t i = 0; i < dg_plan_sim_nops(w->sim, r); i++) {
            const dg_plan_op_t *op = dg_plan_sim_op(w->sim, r, i);
            switch (op->kind) {
            case DG_PLAN_OP_SEND:
                g_cov[op->u.xfer.bytes ? COV_SEND : COV_SIGNAL]++;
                g_cov[COV_MULTISPAN] += op->u.xfer.nspans > 1;
                break;
            case DG_PLAN_OP_RECV: g_cov[COV_RECV]++; break;
            case DG_PLAN_OP_COPY: g_cov[COV_COPY]++; break;
            case DG_PLAN_OP_LAUNCH:
                g_cov[COV_GPU_LAUNCH] += op->u.launch.space != 0;
                g_cov[COV_EXACT_CPU] += op->u.launch.space == 0 &&
                                        op->u.launch.proc != DG_PLAN_ANY_CPU;
                break;
            case DG_PLAN_OP_ALLOC: g_cov[op->u.mem.cached ? COV_ALLOC_CACHED : COV_ALLOC]++; break;
            case DG_PLAN_OP_FREE:
                g_cov[COV_FREE_CACHED] += op->u.mem.cached;
                g_cov[COV_FREE_HOME] += op->u.mem.home;
                break;
            default: break;
            }
        }
}

static uint64_t rnd(prog_t *p)
{
    return w_rnd(&p->rng);
}

static uint64_t below(prog_t *p, uint64_t n)
{
    return w_below(&p->rng, n);
}

static void new_chunk(prog_t *p)
{
    dg_plan_geom_t g;
    char why[256];
    static const dagger_dtype_t dts[] = {DAGGER_U8, DAGGER_I32, DAGGER_F64, DAGGER_F32};
    do {
        memset(&g, 0, sizeof(g));
        g.dtype = dts[below(p, 4)];
        g.ndims = 1 + (uint32_t)below(p, 4);
        for (uint32_t k = 0; k < g.ndims; k++)
            g.dims[k] = 1 + below(p, g.ndims == 1 ? 24 : g.ndims == 2 ? 8 : 3);
        if (below(p, 4) == 0) {
            uint64_t need = 1 + below(p, 2);
            for (uint32_t k = 0; k < g.ndims; k++) {
                g.strides[k] = need;
                need = need * g.dims[k] + below(p, 3);
            }
        }
    } while (dg_plan_geom_check(&g, why, sizeof(why)) != DAGGER_OK);
    int32_t owner = (int32_t)below(p, (uint64_t)p->w->P);
    uint32_t space = 0;
    if (p->w->desc[owner].ndevs && below(p, 4) == 0)
        space = 1 + (uint32_t)below(p, p->w->desc[owner].ndevs);
    size_t bytes = g.extent * g.elsize;
    unsigned char *init = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        init[i] = (unsigned char)rnd(p);
    uint64_t id = w_chunk_geom(p->w, owner, space, &g, init);
    cr_assert_lt(id, MAXC);
    p->c[id] = (ref_chunk_t){1, 0, owner, space, *dg_plan_chunk_geom(p->w->pl[0], id), init, bytes};
}

static uint64_t pick_live(prog_t *p, int future)
{
    uint64_t ids[MAXC], n = 0;
    for (uint64_t i = 1; i < MAXC; i++)
        if (p->c[i].live && p->c[i].is_future == future)
            ids[n++] = i;
    return n ? ids[below(p, n)] : 0;
}

static void free_chunk(prog_t *p, uint64_t id)
{
    w_free(p->w, id);
    p->c[id].live = 0;
    free(p->c[id].data);
    p->c[id].data = NULL;
}

static void rnd_view(prog_t *p, uint64_t id, dg_plan_view_t *v)
{
    w_rnd_view(&p->rng, &p->c[id].g, id, v);
}

/* One conjunction: ranks, kinds, exact processors or ranks with kinds.
 * ranks and procs hold at least 4 entries. */
static void rnd_conj(prog_t *p, dg_plan_scope_t *s, int32_t *ranks, uint32_t *procs)
{
    memset(s, 0, sizeof(*s));
    switch (below(p, 4)) {
    case 0:
        s->nranks = 1 + (uint32_t)below(p, 3);
        for (uint32_t i = 0; i < s->nranks; i++)
            ranks[i] = (int32_t)below(p, (uint64_t)p->w->P);
        s->ranks = ranks;
        break;
    case 1: s->kinds = (uint32_t)(1 + below(p, 7)); break;
    case 2:
        s->nprocs = 1 + (uint32_t)below(p, 2);
        for (uint32_t i = 0; i < s->nprocs; i++)
            procs[i] = (uint32_t)below(p, dg_plan_nprocs(p->w->pl[0]));
        s->procs = procs;
        break;
    default:
        s->kinds = below(p, 2) ? DG_PLAN_KIND_BIT(DG_PLAN_CPU) | DG_PLAN_KIND_BIT(DG_PLAN_CUDA)
                               : DG_PLAN_KIND_BIT(1 + (int)below(p, 2));
        s->nranks = 1;
        ranks[0] = (int32_t)below(p, (uint64_t)p->w->P);
        s->ranks = ranks;
        break;
    }
}

/* A conjunction, or a union of 1..3 of them (parts with room for 4 entries
 * each in ranks and procs), sometimes with a filter of its own. */
static void rnd_scope(prog_t *p, dg_plan_scope_t *s, dg_plan_scope_t *parts, int32_t *ranks,
                      uint32_t *procs)
{
    if (below(p, 3)) {
        rnd_conj(p, s, ranks, procs);
        return;
    }
    memset(s, 0, sizeof(*s));
    s->nparts = 1 + (uint32_t)below(p, 3);
    for (uint32_t i = 0; i < s->nparts; i++)
        rnd_conj(p, &parts[i], ranks + 4 * i, procs + 4 * i);
    s->parts = parts;
    if (below(p, 4) == 0)
        s->kinds = (uint32_t)(1 + below(p, 7));
}

/* The reference meaning of a scope (docs/planner.md section 3), by brute force. */
static int ref_lists(const dg_plan_scope_t *s, int32_t r, uint32_t q)
{
    int ok = !s->nranks, hit = !s->nprocs;
    for (uint32_t i = 0; i < s->nranks; i++)
        ok |= s->ranks[i] == r;
    for (uint32_t i = 0; i < s->nprocs; i++)
        hit |= s->procs[i] == q;
    return ok && hit;
}

static int ref_in(const dg_plan_scope_t *s, int32_t r, uint32_t q, dg_plan_kind_t k)
{
    if (!s)
        return 1;
    if (!ref_lists(s, r, q))
        return 0;
    int any = !s->nparts;
    for (uint32_t i = 0; i < s->nparts; i++) {
        const dg_plan_scope_t *u = &s->parts[i];
        uint32_t kinds = u->kinds ? u->kinds : (u->nprocs ? 7u : DG_PLAN_KIND_BIT(DG_PLAN_CPU));
        any |= (kinds & DG_PLAN_KIND_BIT(k)) && ref_lists(u, r, q);
    }
    return any;
}

static uint32_t ref_kinds(const dg_plan_scope_t *s)
{
    return !s ? 0 : s->kinds ? s->kinds : (s->nprocs || s->nparts ? 7u : 0);
}

/* Processor q is a candidate of both scopes (kinds, lists, union parts). */
static int ref_admits(const dg_plan_scope_t *const sc[2], uint32_t want, int32_t r, uint32_t q,
                      dg_plan_kind_t k)
{
    return (want & DG_PLAN_KIND_BIT(k)) && ref_in(sc[0], r, q, k) && ref_in(sc[1], r, q, k);
}

/* Runs the task on the reference copies (after every rank planned it). */
static void ref_run(prog_t *p, const dg_plan_task_desc_t *t, const dg_plan_submitted_t *s)
{
    int k = cl_index(&p->cl, t->codelet);
    cl_arg_t args[8];
    for (uint32_t i = 0; i < t->nargs; i++) {
        const dg_plan_arg_t *a = &t->args[i];
        args[i] = (cl_arg_t){.kind = a->kind, .mode = a->mode, .v = a->view, .value = a->value,
                             .len = a->len};
        uint64_t id = a->kind == DG_PLAN_ARG_VIEW ? a->view.chunk : a->future;
        if (a->kind != DG_PLAN_ARG_VALUE) {
            args[i].base = p->c[id].data;
            args[i].g = &p->c[id].g;
        }
        if (a->kind == DG_PLAN_ARG_FUTURE)
            args[i].len = p->c[id].bytes;
    }
    unsigned char *ret = NULL;
    uint32_t size = t->ret_size ? t->ret_size : p->cl.ret[k];
    cr_assert_eq(!!s->future, !!size, "a future exactly when the task returns a value");
    if (s->future) {
        cr_assert_lt(s->future, MAXC);
        ref_chunk_t *f = &p->c[s->future];
        *f = (ref_chunk_t){1, 1, s->rank, 0, *dg_plan_chunk_geom(p->w->pl[0], s->future), NULL,
                           size};
        cr_assert_eq(f->g.dims[0], size);
        f->data = calloc(1, f->bytes);
        ret = f->data;
    }
    cl_run((uint32_t)k, args, t->nargs, ret, size);
}

/* Some processor of any kind is in region scope s. */
static int ref_some(prog_t *p, const dg_plan_scope_t *s)
{
    const dg_plan_scope_t *const sc[2] = {s, NULL};
    uint32_t want = ref_kinds(s) ? ref_kinds(s) : 7u;
    for (uint32_t q = 0; q < dg_plan_nprocs(p->w->pl[0]); q++) {
        int32_t r;
        dg_plan_kind_t k;
        dg_plan_proc_info(p->w->pl[0], q, &r, &k, NULL);
        if (ref_admits(sc, want, r, q, k))
            return 1;
    }
    return 0;
}

/* The kinds a task may use: both scopes' and the codelet's. */
static uint32_t ref_want(prog_t *p, const dg_plan_task_desc_t *t,
                         const dg_plan_scope_t *const sc[2])
{
    uint32_t a = ref_kinds(sc[0]), b = ref_kinds(sc[1]);
    return (a && b ? a & b : (a | b ? a | b : DG_PLAN_KIND_BIT(DG_PLAN_CPU))) &
           p->kinds[cl_index(&p->cl, t->codelet)];
}

/* DAGGER_ERR_SCOPE only when no processor at all is a candidate. */
static void check_none(prog_t *p, const dg_plan_task_desc_t *t)
{
    const dg_plan_scope_t *const sc[2] = {t->scope, p->rscoped ? &p->rscope : NULL};
    uint32_t want = ref_want(p, t, sc);
    for (uint32_t q = 0; q < dg_plan_nprocs(p->w->pl[0]); q++) {
        int32_t r;
        dg_plan_kind_t k;
        dg_plan_proc_info(p->w->pl[0], q, &r, &k, NULL);
        cr_assert(!ref_admits(sc, want, r, q, k), "seed %llu: DAGGER_ERR_SCOPE, but processor %u "
                  "is a candidate", (unsigned long long)g_seed, q);
    }
}

/* The placement respects the scopes and the codelet's implementations: the
 * processor (or, for "any CPU thread", every CPU thread of the rank) is a
 * candidate by the brute-force meaning of both scopes. */
static void check_place(prog_t *p, const dg_plan_task_desc_t *t, const dg_plan_submitted_t *s)
{
    const dg_plan_scope_t *const sc[2] = {t->scope, p->rscoped ? &p->rscope : NULL};
    dg_plan_kind_t kind = DG_PLAN_CPU;
    if (s->proc != DG_PLAN_ANY_CPU) {
        int32_t r;
        cr_assert_eq(dg_plan_proc_info(p->w->pl[0], s->proc, &r, &kind, NULL), DAGGER_OK);
        cr_assert_eq(r, s->rank);
    }
    cr_assert_eq(s->space != 0, kind != DG_PLAN_CPU, "GPU tasks run in device spaces");
    cr_assert(p->kinds[cl_index(&p->cl, t->codelet)] & DG_PLAN_KIND_BIT(kind));
    uint32_t a = ref_kinds(sc[0]), b = ref_kinds(sc[1]), want = ref_want(p, t, sc);
    if (s->proc != DG_PLAN_ANY_CPU) {
        cr_assert(ref_admits(sc, want, s->rank, s->proc, kind),
                  "seed %llu: processor %u of rank %d is outside the scopes",
                  (unsigned long long)g_seed, s->proc, s->rank);
    } else {
        for (uint32_t i = 0; i < p->w->desc[s->rank].ncpus; i++) {
            uint32_t q;
            cr_assert_eq(dg_plan_proc_id(p->w->pl[0], s->rank, DG_PLAN_CPU, i, &q), DAGGER_OK);
            cr_assert(ref_admits(sc, want, s->rank, q, DG_PLAN_CPU),
                      "seed %llu: any CPU thread of rank %d, but thread %u is outside the scopes",
                      (unsigned long long)g_seed, s->rank, i);
        }
    }
    if (!a && !b)
        cr_assert_eq(kind, DG_PLAN_CPU, "GPUs only when a scope opts in");
}

/* One bad submission: every rank must refuse it the same way, changing nothing. */
static void bad_task(prog_t *p, uint32_t cl)
{
    dg_plan_arg_t a = {.kind = DG_PLAN_ARG_VIEW, .mode = DAGGER_MODE_IN};
    dg_plan_task_desc_t t = {.codelet = cl, .args = &a, .nargs = 1};
    uint64_t dep;
    dagger_status_t want;
    uint64_t id = pick_live(p, 0);
    switch (below(p, 4)) {
    case 0: /* out of bounds */
        rnd_view(p, id, &a.view);
        a.view.ext[0] = p->c[id].g.dims[0] + 1;
        a.view.off[0] = 0;
        want = DAGGER_ERR_BAD_VIEW;
        break;
    case 1: /* a freed or unknown chunk */
        rnd_view(p, id, &a.view);
        a.view.chunk = MAXC + 5;
        want = DAGGER_ERR_NOT_FOUND;
        break;
    case 2: /* a dependency on itself / a later task */
        rnd_view(p, id, &a.view);
        dep = p->ntasks + 1 + below(p, 2);
        t.deps = &dep;
        t.ndeps = 1;
        want = DAGGER_ERR_CYCLE;
        break;
    default: /* an unregistered codelet */
        rnd_view(p, id, &a.view);
        t.codelet = 0x5eed;
        want = DAGGER_ERR_NOT_FOUND;
        break;
    }
    cr_assert_eq(w_submit(p->w, &t, NULL), want, "seed %llu: %s", (unsigned long long)g_seed,
                 dagger_error_detail());
}

static void sync_home(prog_t *p, uint64_t id)
{
    for (int r = 0; r < p->w->P; r++)
        cr_assert_eq(dg_plan_chunk_sync_home(p->w->pl[r], id), DAGGER_OK, "%s",
                     dagger_error_detail());
    for (int r = 1; r < p->w->P; r++)
        cr_assert_eq(dg_plan_hash(p->w->pl[r]), dg_plan_hash(p->w->pl[0]));
}

static void one_task(prog_t *p)
{
    uint32_t k = (uint32_t)below(p, p->cl.n);
    dg_plan_arg_t args[8];
    unsigned char vals[8][8];
    uint32_t n = (uint32_t)below(p, 5);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t r = below(p, 20), f = pick_live(p, 1);
        if (r < 2) {
            args[i] = (dg_plan_arg_t){.kind = DG_PLAN_ARG_VALUE, .value = vals[i],
                                      .len = 1 + below(p, 8)};
            for (int b = 0; b < 8; b++)
                vals[i][b] = (unsigned char)rnd(p);
        } else if (r < 5 && f) { /* read (mode 0 or IN), or written in place */
            static const dagger_access_t fmodes[] = {0, DAGGER_MODE_IN, DAGGER_MODE_OUT,
                                                     DAGGER_MODE_INOUT};
            args[i] = (dg_plan_arg_t){.kind = DG_PLAN_ARG_FUTURE, .future = f,
                                      .mode = fmodes[below(p, 4)]};
        } else {
            static const dagger_access_t modes[] = {DAGGER_MODE_IN, DAGGER_MODE_OUT,
                                                    DAGGER_MODE_INOUT};
            args[i] = (dg_plan_arg_t){.kind = DG_PLAN_ARG_VIEW, .mode = modes[below(p, 3)]};
            rnd_view(p, pick_live(p, 0), &args[i].view);
        }
    }
    dg_plan_scope_t scope, parts[3];
    int32_t ranks[12];
    uint32_t procs[12];
    int scoped = below(p, 3) == 0;
    if (scoped)
        rnd_scope(p, &scope, parts, ranks, procs);
    uint64_t deps[3];
    uint32_t nd = 0;
    if (p->ntasks >= p->region_first && below(p, 4) == 0) {
        nd = 1 + (uint32_t)below(p, 3);
        for (uint32_t i = 0; i < nd; i++) /* sometimes a task of an earlier region */
            deps[i] = 1 + below(p, p->ntasks);
    }
    dg_plan_task_desc_t t = {.codelet = p->cl.ids[k], .args = args, .nargs = n,
                             .scope = scoped ? &scope : NULL,
                             .priority = (int32_t)below(p, 5), .deps = deps, .ndeps = nd,
                             .ret_size = below(p, 6) == 0 ? 1 + (uint32_t)below(p, 300) : 0};
    dg_plan_submitted_t s;
    dagger_status_t st = w_submit(p->w, &t, &s);
    int must = !scoped && !p->rscoped && (p->kinds[k] & DG_PLAN_KIND_BIT(DG_PLAN_CPU));
    if (st == DAGGER_ERR_SCOPE && !must) {
        check_none(p, &t);
        return;
    }
    cr_assert_eq(st, DAGGER_OK, "seed %llu: %s", (unsigned long long)g_seed,
                 dagger_error_detail());
    p->ntasks = s.task;
    check_place(p, &t, &s);
    ref_run(p, &t, &s);
}

static void setup_world(prog_t *p)
{
    int P = 1 + (int)below(p, 8);
    uint32_t ndevs[W_MAXP] = {0};
    dg_plan_kind_t kinds[W_MAXP];
    int gpus = below(p, 3) == 0;
    for (int r = 0; r < P; r++) {
        ndevs[r] = gpus ? (uint32_t)below(p, 3) : 0;
        kinds[r] = below(p, 2) ? DG_PLAN_CUDA : DG_PLAN_HIP;
    }
    p->w = w_create_ex(P, 1 + (uint32_t)below(p, 2), ndevs, kinds, below(p, 2) ? 1 << 20 : 0,
                       p->window);
    static const uint32_t kinds_of[] = {1, 1 | 2, 1 | 4, 2, 1, 7, 1, 1 | 2};
    static const uint32_t rets[] = {0, 0, 0, 0, 8, 8, 4, 0};
    static const char *names[] = {"axpy", "gemm", "trsm", "gpu_only", "dot", "any", "norm",
                                  "scale"};
    for (uint32_t i = 0; i < 8; i++) {
        p->cl.ids[i] = w_codelet(p->w, names[i], kinds_of[i], rets[i]);
        p->cl.ret[i] = rets[i];
        p->kinds[i] = kinds_of[i];
    }
    p->cl.n = 8;
}

static void run_program(uint64_t seed)
{
    prog_t *p = calloc(1, sizeof(*p));
    p->rng = seed * 0x9e3779b97f4a7c15ull + 1;
    g_seed = seed;
    /* A third of the programs run with a small retire window (and longer
     * regions, so that histories grow past their first sweep). */
    p->window = seed % 3 == 1 ? 1 + (seed / 3) % 16 : 0;
    setup_world(p);
    for (int i = 0, n = 1 + (int)below(p, 6); i < n; i++)
        new_chunk(p);
    for (int reg = 0, nreg = 1 + (int)below(p, 3); reg < nreg; reg++) {
        int32_t rr[2] = {0, 0};
        p->rscoped = below(p, 5) == 0;
        memset(&p->rscope, 0, sizeof(p->rscope));
        if (p->rscoped) {
            uint64_t how = below(p, 3);
            if (how == 0) {
                p->rscope.nranks = 1 + (uint32_t)below(p, 2);
                for (uint32_t i = 0; i < p->rscope.nranks; i++)
                    p->rranks[i] = rr[i] = (int32_t)below(p, (uint64_t)p->w->P);
                p->rscope.ranks = p->rranks;
            } else if (how == 1) { /* a union; one that admits nothing is refused */
                do
                    rnd_scope(p, &p->rscope, p->rparts, p->rpranks, p->rpprocs);
                while (!ref_some(p, &p->rscope));
            } else {
                p->rscope.kinds = DG_PLAN_KIND_BIT(DG_PLAN_CPU) | DG_PLAN_KIND_BIT(DG_PLAN_CUDA);
            }
        }
        w_region_begin(p->w, p->rscoped ? &p->rscope : NULL);
        p->region_first = p->ntasks + 1;
        for (int i = 0, n = 1 + (int)below(p, p->window ? 120 : 25); i < n; i++) {
            uint64_t r = below(p, 40);
            if (r == 0)
                new_chunk(p);
            else if (r == 1 && pick_live(p, 0)) {
                uint64_t id = pick_live(p, 0);
                free_chunk(p, id);
                if (!pick_live(p, 0))
                    new_chunk(p);
            } else if (r == 2 && pick_live(p, 1))
                free_chunk(p, pick_live(p, 1));
            else if (r == 3)
                bad_task(p, p->cl.ids[below(p, p->cl.n)]);
            else if (r == 4) /* what fetch does inside a region: bring one home */
                sync_home(p, below(p, 2) && pick_live(p, 1) ? pick_live(p, 1) : pick_live(p, 0));
            else
                one_task(p);
        }
        w_region_end(p->w);
    }
    dg_plan_sim_opts_t o = {.seed = seed, .fifo = (int)(seed % 5 == 0), .launch = cl_sim_launch,
                            .ctx = &p->cl, .window = p->window};
    cr_assert_eq(dg_plan_sim_run(p->w->sim, &o), DAGGER_OK, "seed %llu: %s",
                 (unsigned long long)seed, dagger_error_detail());
    for (uint64_t id = 1; id < MAXC; id++) {
        ref_chunk_t *c = &p->c[id];
        if (!c->live)
            continue;
        size_t bytes;
        const unsigned char *got =
            dg_plan_sim_buffer(p->w->sim, c->owner, (dg_plan_buf_t){id, c->space}, &bytes);
        cr_assert(got, "seed %llu: chunk %llu has no home buffer", (unsigned long long)seed,
                  (unsigned long long)id);
        cr_assert_eq(bytes, c->bytes);
        cr_assert(!memcmp(got, c->data, bytes), "seed %llu: %s %llu differs from sequential",
                  (unsigned long long)seed, c->is_future ? "future" : "chunk",
                  (unsigned long long)id);
    }
    tally(p->w);
    for (uint64_t id = 1; id < MAXC; id++)
        free(p->c[id].data);
    w_destroy(p->w);
    free(p);
}

static void report(void)
{
    if (g_running)
        fprintf(stderr, "planner fuzz: failing seed %llu (add it to `regressions`)\n",
                (unsigned long long)g_seed);
}

Test(fuzz, random_programs_equal_sequential_execution, .fini = report, .timeout = 86400)
{
    g_running = 1;
    for (size_t i = 0; i < sizeof(regressions) / sizeof(regressions[0]); i++)
        if (regressions[i])
            run_program(regressions[i]);
    uint64_t n = w_run_seeds("DG_PLAN_FUZZ_SEED", "DG_PLAN_FUZZ_PROGRAMS", FUZZ_DEFAULT,
                             run_program);
    g_running = 0;
    static const char *names[COV_N] = {"send", "recv", "copy", "signal", "gpu launch",
                                       "exact cpu", "alloc", "cached alloc", "cached free",
                                       "home free", "multi-span send"};
    for (int i = 0; i < COV_N && n >= 200; i++)
        cr_expect_gt(g_cov[i], 0, "the programs never produced a %s op", names[i]);
}
