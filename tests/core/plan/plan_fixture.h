/* Shared helpers for the planner tests: a "world" of P planners (one per
 * simulated rank) fed the same calls, whose op streams go to the reference
 * executor (tests/support/plan_sim.h); test codelets that do order-sensitive
 * arithmetic on exactly the elements of their views; and a sequential
 * reference that runs the same codelets on one copy of every chunk. */
#ifndef DG_PLAN_FIXTURE_H
#define DG_PLAN_FIXTURE_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/plan.h"
#include "support/plan_sim.h"

/* 1 under AddressSanitizer (GCC's and clang's ways of saying so): the
 * property tests run fewer programs there, where a program runs about 20
 * times slower; that pass is for memory errors, the release pass for the
 * semantics. */
#if defined(__SANITIZE_ADDRESS__)
#define DG_PLAN_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DG_PLAN_TEST_ASAN 1
#endif
#endif
#ifndef DG_PLAN_TEST_ASAN
#define DG_PLAN_TEST_ASAN 0
#endif

#define W_MAXP 8
#define W_MAXTASKS 4096

typedef struct w_task {
    int32_t rank;
    uint32_t proc, space;
    uint32_t ndeps;
    uint64_t deps[64];
    uint64_t hash;
} w_task_t;

typedef struct world {
    int P;
    dg_plan_rank_desc_t desc[W_MAXP];
    dg_plan_kind_t devs[W_MAXP][4];
    dg_plan_t *pl[W_MAXP];
    dg_plan_sim_t *sim;
    w_task_t tasks[W_MAXTASKS + 1]; /* from rank 0's planner, by task id */
} world_t;

static inline void w_on_task(void *ctx, const dg_plan_task_info_t *info)
{
    world_t *w = ctx;
    if (info->task > W_MAXTASKS)
        return;
    w_task_t *t = &w->tasks[info->task];
    t->rank = info->rank;
    t->proc = info->proc;
    t->space = info->space;
    t->hash = info->hash;
    t->ndeps = info->ndeps < 64 ? info->ndeps : 64;
    if (t->ndeps)
        memcpy(t->deps, info->deps, t->ndeps * sizeof(uint64_t));
}

/* P ranks with `cpus` threads each; ndevs[r] devices of kind kinds[r] (may be NULL);
 * retire_window: the planners' (run the sim with the same window); replay_tasks:
 * the planners' region replay (0: off). */
static inline world_t *w_create_rp(int P, uint32_t cpus, const uint32_t *ndevs,
                                   const dg_plan_kind_t *kinds, uint64_t cache_bytes,
                                   uint64_t retire_window, uint32_t replay_tasks)
{
    world_t *w = calloc(1, sizeof(*w));
    cr_assert(w);
    w->P = P;
    cr_assert_eq(dg_plan_sim_create(P, &w->sim), DAGGER_OK);
    for (int r = 0; r < P; r++) {
        w->desc[r].ncpus = cpus;
        w->desc[r].ndevs = ndevs ? ndevs[r] : 0;
        for (uint32_t d = 0; d < w->desc[r].ndevs; d++)
            w->devs[r][d] = kinds ? kinds[r] : DG_PLAN_CUDA;
        w->desc[r].devs = w->devs[r];
    }
    for (int r = 0; r < P; r++) {
        dg_plan_params_t prm = {.nranks = P, .my_rank = r, .ranks = w->desc,
                                .emit = dg_plan_sim_emit,
                                .emit_ctx = dg_plan_sim_rank_ctx(w->sim, r),
                                .on_task = r == 0 ? w_on_task : NULL, .task_ctx = w,
                                .slot_cache_bytes = cache_bytes,
                                .retire_window = retire_window,
                                .replay_tasks = replay_tasks};
        cr_assert_eq(dg_plan_create(&prm, &w->pl[r]), DAGGER_OK, "%s", dagger_error_detail());
    }
    return w;
}

static inline world_t *w_create_ex(int P, uint32_t cpus, const uint32_t *ndevs,
                                   const dg_plan_kind_t *kinds, uint64_t cache_bytes,
                                   uint64_t retire_window)
{
    return w_create_rp(P, cpus, ndevs, kinds, cache_bytes, retire_window, 0);
}

static inline world_t *w_create(int P)
{
    return w_create_ex(P, 2, NULL, NULL, 0, 0);
}

static inline void w_destroy(world_t *w)
{
    for (int r = 0; r < w->P; r++)
        dg_plan_destroy(w->pl[r]);
    dg_plan_sim_destroy(w->sim);
    free(w);
}

static inline uint32_t w_codelet(world_t *w, const char *name, uint32_t kinds, uint32_t ret)
{
    dg_plan_codelet_desc_t d = {.name = name, .kinds = kinds, .ret_size = ret};
    uint32_t id = 0, id0 = 0;
    for (int r = 0; r < w->P; r++) {
        cr_assert_eq(dg_plan_codelet_register(w->pl[r], &d, &id), DAGGER_OK, "%s",
                     dagger_error_detail());
        if (r == 0)
            id0 = id;
        cr_assert_eq(id, id0);
    }
    return id;
}

/* A chunk on every planner; the home buffer (filled with `fill`) goes to the sim. */
static inline uint64_t w_chunk_geom(world_t *w, int32_t owner, uint32_t space,
                                    const dg_plan_geom_t *g, const void *init)
{
    uint64_t id = 0, id0 = 0;
    dg_plan_chunk_desc_t d = {.owner = owner, .home_space = space, .geom = *g};
    for (int r = 0; r < w->P; r++) {
        cr_assert_eq(dg_plan_chunk_create(w->pl[r], &d, &id), DAGGER_OK, "%s",
                     dagger_error_detail());
        if (r == 0)
            id0 = id;
        cr_assert_eq(id, id0, "ranks disagree on chunk ids");
    }
    const dg_plan_geom_t *gg = dg_plan_chunk_geom(w->pl[0], id);
    size_t bytes = gg->extent * gg->elsize;
    unsigned char *buf = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        buf[i] = init ? ((const unsigned char *)init)[i] : (unsigned char)(i * 7 + id);
    cr_assert_eq(dg_plan_sim_add_buffer(w->sim, owner, (dg_plan_buf_t){id, space}, buf, bytes),
                 DAGGER_OK);
    free(buf);
    return id;
}

static inline uint64_t w_chunk2(world_t *w, int32_t owner, uint64_t m, uint64_t n)
{
    dg_plan_geom_t g = {.dtype = DAGGER_F64, .ndims = 2, .dims = {m, n}};
    return w_chunk_geom(w, owner, 0, &g, NULL);
}

static inline uint64_t w_chunk1(world_t *w, int32_t owner, uint64_t n)
{
    dg_plan_geom_t g = {.dtype = DAGGER_F64, .ndims = 1, .dims = {n}};
    return w_chunk_geom(w, owner, 0, &g, NULL);
}

static inline void w_region_begin(world_t *w, const dg_plan_scope_t *s)
{
    for (int r = 0; r < w->P; r++)
        cr_assert_eq(dg_plan_region_begin(w->pl[r], s), DAGGER_OK, "%s", dagger_error_detail());
}

static inline void w_region_end(world_t *w)
{
    for (int r = 0; r < w->P; r++)
        cr_assert_eq(dg_plan_region_end(w->pl[r]), DAGGER_OK, "%s", dagger_error_detail());
}

static inline void w_free(world_t *w, uint64_t id)
{
    for (int r = 0; r < w->P; r++)
        cr_assert_eq(dg_plan_chunk_free(w->pl[r], id), DAGGER_OK, "%s", dagger_error_detail());
}

/* Submits on every rank; all must agree on the status and the result. */
static inline dagger_status_t w_submit(world_t *w, const dg_plan_task_desc_t *t,
                                       dg_plan_submitted_t *out)
{
    dg_plan_submitted_t s0 = {0}, s = {0};
    dagger_status_t st0 = DAGGER_OK;
    for (int r = 0; r < w->P; r++) {
        dagger_status_t st = dg_plan_submit(w->pl[r], t, &s);
        if (r == 0) {
            st0 = st;
            s0 = s;
        }
        cr_assert_eq(st, st0, "rank %d status %d vs rank 0 status %d", r, st, st0);
        if (st == DAGGER_OK)
            cr_assert(s.task == s0.task && s.future == s0.future && s.rank == s0.rank &&
                      s.proc == s0.proc && s.space == s0.space, "ranks disagree on the plan");
    }
    for (int r = 1; r < w->P; r++)
        cr_assert_eq(dg_plan_hash(w->pl[r]), dg_plan_hash(w->pl[0]), "uniformity hash differs");
    if (out)
        *out = s0;
    return st0;
}

static inline dg_plan_arg_t w_view(world_t *w, uint64_t chunk, dagger_access_t mode)
{
    dg_plan_arg_t a = {.kind = DG_PLAN_ARG_VIEW, .mode = mode};
    dg_plan_view_full(dg_plan_chunk_geom(w->pl[0], chunk), chunk, &a.view);
    return a;
}

/* Submits codelet cl with the given args and optional scope; asserts success. */
static inline dg_plan_submitted_t w_task(world_t *w, uint32_t cl, const dg_plan_arg_t *args,
                                         uint32_t nargs, const dg_plan_scope_t *scope)
{
    dg_plan_task_desc_t t = {.codelet = cl, .args = args, .nargs = nargs, .scope = scope};
    dg_plan_submitted_t s;
    cr_assert_eq(w_submit(w, &t, &s), DAGGER_OK, "%s", dagger_error_detail());
    return s;
}

/* Number of ops of a kind on a rank (all ranks when rank < 0). */
static inline uint64_t w_count(world_t *w, int rank, dg_plan_op_kind_t kind)
{
    uint64_t n = 0;
    for (int r = 0; r < w->P; r++) {
        if (rank >= 0 && r != rank)
            continue;
        for (uint64_t i = 0; i < dg_plan_sim_nops(w->sim, r); i++)
            n += dg_plan_sim_op(w->sim, r, i)->kind == kind;
    }
    return n;
}

/* ---- random programs (tests/planner/test_fuzz.c, tests/core/exec/test_exec_diff.c) ---- */

/* Runs program `run` for the seed in environment variable one_var when it is
 * set (returns 0: one program, no coverage to judge), else for seeds 1..N,
 * N from n_var or `dflt` (returns N). */
static inline uint64_t w_run_seeds(const char *one_var, const char *n_var, uint64_t dflt,
                                   void (*run)(uint64_t seed))
{
    const char *one = getenv(one_var);
    if (one) {
        run(strtoull(one, NULL, 0));
        return 0;
    }
    const char *env = getenv(n_var);
    uint64_t n = env ? strtoull(env, NULL, 0) : dflt;
    for (uint64_t s = 1; s <= n; s++)
        run(s);
    return n;
}

/* xorshift64: the programs' only source of randomness (a seed names one). */
static inline uint64_t w_rnd(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static inline uint64_t w_below(uint64_t *state, uint64_t n)
{
    return n ? w_rnd(state) % n : 0;
}

/* A random valid view of chunk id (layout g): a third whole, the rest a
 * random box; on two or more dimensions, half with a random modifier. */
static inline void w_rnd_view(uint64_t *rng, const dg_plan_geom_t *g, uint64_t id,
                              dg_plan_view_t *v)
{
    char why[256];
    do {
        memset(v, 0, sizeof(*v));
        v->chunk = id;
        v->ndims = g->ndims;
        int whole = w_below(rng, 3) == 0;
        for (uint32_t k = 0; k < g->ndims; k++) {
            v->off[k] = whole ? 0 : w_below(rng, g->dims[k]);
            v->ext[k] = whole ? g->dims[k] : 1 + w_below(rng, g->dims[k] - v->off[k]);
        }
        v->mod = g->ndims >= 2 && w_below(rng, 2) ? (dagger_modifier_t)w_below(rng, 6)
                                                  : DAGGER_FULL;
    } while (dg_plan_view_check(g, v, why, sizeof(why)) != DAGGER_OK);
}

/* ---- test codelets: order-sensitive integer arithmetic on exact elements ---- */

static inline uint64_t cl_rd(const unsigned char *p, uint32_t es)
{
    uint64_t x = 0;
    memcpy(&x, p, es);
    return x;
}

static inline void cl_wr(unsigned char *p, uint32_t es, uint64_t x)
{
    memcpy(p, &x, es);
}

typedef struct cl_arg {
    dg_plan_arg_kind_t kind;
    dagger_access_t mode;
    unsigned char *base;
    const dg_plan_geom_t *g;
    dg_plan_view_t v;
    const void *value;
    size_t len;
} cl_arg_t;

/* Calls fn(ctx, element pointer, index) for the view's elements in order. */
static inline void cl_each(const cl_arg_t *a, void (*fn)(void *, unsigned char *, uint64_t),
                           void *ctx)
{
    const dg_plan_geom_t *g = a->g;
    uint64_t ext[4] = {1, 1, 1, 1}, off[4] = {0, 0, 0, 0}, idx = 0;
    for (uint32_t k = 0; k < g->ndims; k++) {
        ext[k] = a->v.ext[k];
        off[k] = a->v.off[k];
    }
    for (uint64_t k3 = 0; k3 < ext[3]; k3++)
        for (uint64_t k2 = 0; k2 < ext[2]; k2++)
            for (uint64_t j = 0; j < ext[1]; j++) {
                uint64_t lo, hi;
                dg_plan_mod_rows(a->v.mod, ext[0], j, &lo, &hi);
                for (uint64_t i = lo; i < hi; i++) {
                    uint64_t o = (off[0] + i) * g->strides[0] + (off[1] + j) * g->strides[1] +
                                 (off[2] + k2) * g->strides[2] + (off[3] + k3) * g->strides[3];
                    fn(ctx, a->base + o * g->elsize, idx++);
                }
            }
}

typedef struct cl_state {
    uint64_t a, b, s;
    uint32_t es;
} cl_state_t;

static inline void cl_sum(void *ctx, unsigned char *e, uint64_t idx)
{
    cl_state_t *st = ctx;
    st->s = st->s * 31 + cl_rd(e, st->es) * (idx + 1);
}

static inline void cl_out(void *ctx, unsigned char *e, uint64_t idx)
{
    cl_state_t *st = ctx;
    cl_wr(e, st->es, st->b + st->s + idx * st->a);
}

static inline void cl_inout(void *ctx, unsigned char *e, uint64_t idx)
{
    cl_state_t *st = ctx;
    cl_wr(e, st->es, st->a * cl_rd(e, st->es) + st->b + st->s + idx);
}

/* The body of test codelet number k: reads first, then writes in argument order. */
static inline void cl_run(uint32_t k, const cl_arg_t *args, uint32_t n, unsigned char *ret,
                          uint32_t ret_size)
{
    cl_state_t st = {.a = 2 * k + 3, .b = 7 * k + 1, .s = k};
    for (uint32_t i = 0; i < n; i++) {
        const cl_arg_t *a = &args[i];
        if (a->kind == DG_PLAN_ARG_VIEW && a->mode != DAGGER_MODE_OUT) {
            st.es = a->g->elsize;
            cl_each(a, cl_sum, &st);
        } else if (a->kind == DG_PLAN_ARG_VALUE) {
            for (size_t b = 0; b < a->len; b++)
                st.s = st.s * 131 + ((const unsigned char *)a->value)[b];
        } else if (a->kind == DG_PLAN_ARG_FUTURE && a->mode != DAGGER_MODE_OUT) {
            for (size_t b = 0; b < a->len; b++) /* every byte: a stale one must show */
                st.s = st.s * 1009 + a->base[b];
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        const cl_arg_t *a = &args[i];
        if (a->kind == DG_PLAN_ARG_FUTURE && (a->mode == DAGGER_MODE_OUT ||
                                               a->mode == DAGGER_MODE_INOUT)) {
            for (size_t b = 0; b < a->len; b++) /* a future written in place */
                a->base[b] = (unsigned char)((a->mode == DAGGER_MODE_INOUT ? st.a * a->base[b] : 0) +
                                             st.b + st.s + b);
            continue;
        }
        if (a->kind != DG_PLAN_ARG_VIEW || a->mode == DAGGER_MODE_IN)
            continue;
        st.es = a->g->elsize;
        cl_each(a, a->mode == DAGGER_MODE_OUT ? cl_out : cl_inout, &st);
    }
    if (ret && ret_size) {
        uint64_t v = st.s ^ (st.a << 40);
        for (uint32_t b = 0; b < ret_size; b++)
            ret[b] = (unsigned char)(v >> (8 * (b % 8)));
    }
}

/* Maps codelet ids to test codelet numbers and return sizes. */
typedef struct cl_table {
    uint32_t ids[32];
    uint32_t ret[32];
    uint32_t n;
} cl_table_t;

static inline int cl_index(const cl_table_t *t, uint32_t id)
{
    for (uint32_t i = 0; i < t->n; i++)
        if (t->ids[i] == id)
            return (int)i;
    return -1;
}

/* dg_plan_sim launch callback: ctx is a cl_table_t. */
static inline int cl_sim_launch(void *ctx, dg_plan_sim_t *sim, int32_t rank,
                                const dg_plan_op_t *op)
{
    const cl_table_t *t = ctx;
    int k = cl_index(t, op->u.launch.codelet);
    if (k < 0 || op->u.launch.nargs > 16)
        return -1;
    cl_arg_t args[16];
    for (uint32_t i = 0; i < op->u.launch.nargs; i++) {
        const dg_plan_op_arg_t *a = &op->u.launch.args[i];
        args[i] = (cl_arg_t){.kind = a->kind, .mode = a->mode, .g = a->geom, .v = a->view,
                             .value = a->value, .len = a->len};
        if (a->kind != DG_PLAN_ARG_VALUE)
            args[i].base = dg_plan_sim_buffer(sim, rank, a->buf, NULL);
    }
    unsigned char *ret = op->u.launch.ret.chunk
                             ? dg_plan_sim_buffer(sim, rank, op->u.launch.ret, NULL)
                             : NULL;
    cl_run((uint32_t)k, args, op->u.launch.nargs, ret, op->u.launch.ret_size);
    return 0;
}

#endif
