/* Region replay (replay.h): recordings, matching, relocated emission and
 * catching up. Recordings live outside the planner's allocator (dg_realloc):
 * running out of memory drops a recording, never the planner. */
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/status_internal.h"
#include "core/plan/replay.h"

#define NREC 4 /* recordings kept (regions that alternate, e.g. A->B then B->A sweeps) */
#define REC_MAX_BYTES (16u << 20) /* one recording's memory; a larger region is not recorded */
#define SPARSE_AFTER 4            /* regions in a row not replayed before recording thins out */
#define SPARSE_MAX 64             /* then every 8th, 16th, ... at most 64th region is recorded */

typedef struct rp_chunk {
    uint64_t id;
    uint64_t version0;             /* at the region's start */
    uint64_t dversion;             /* writes in the region */
    uint64_t writer;               /* last writer, relative to the region's first task - 1; 0: none */
    uint32_t buf0, nbuf0;          /* this rank's buffers at the start (bufs[]: space | home << 31) */
    uint32_t buf1, nbuf1;          /* and after the end */
} rp_chunk_t;

typedef struct rp_task {
    uint32_t codelet, nargs;
    int32_t priority;
    uint64_t shape;                /* dg_plan_task_shape */
    uint32_t arg0;                 /* args[] and argci[] */
    uint32_t scope0, nscope;       /* words[]; nscope 0: no scope */
    uint32_t op0, nops;            /* ops[] */
    uint32_t ldep0, nldeps;        /* u64[]: logical dependencies, relative */
    int32_t rank;
    uint32_t proc, space;
    uint64_t launch;               /* launch seq relative to the region's seq base; 0: elsewhere */
    uint32_t ret;                  /* bytes it returns (it makes a future); 0: none */
    uint32_t tret;                 /* the submission's own return_size */
    uint32_t freed;                /* 1: not a task but the free of a future made in the region */
    uint64_t free_rel;             /* that future, relative to the region's chunk counter */
    dg_plan_stats_t dst;           /* what planning it added to the counters */
} rp_task_t;

/* A future made in the region and alive at its end: its state then. */
typedef struct rp_future {
    uint64_t rel;                  /* id relative to the region's chunk counter */
    uint64_t version;
    uint64_t writer;               /* relative to the region's first task - 1; 0: none */
    uint32_t buf1, nbuf1;          /* this rank's buffers (bufs[]) */
} rp_future_t;

/* A future a replayed task made that has no chunk (yet): most of a replayed
 * region's futures are made and freed inside it without the planner ever
 * reading their chunk, so replaying makes one only when asked (vf_chunk).
 * Indexed by the id relative to the region's chunk counter, minus one. */
typedef struct rp_vfut {
    dg_plan_geom_t g;              /* its layout (dg_plan_future_geom) */
    int32_t rank;                  /* where it lives */
    uint32_t live;                 /* 0: no such future (freed, given its chunk, or none) */
} rp_vfut_t;

typedef struct rp_op {
    dg_plan_op_t op;               /* pointers cleared */
    uint32_t dep0;                 /* u64[] */
    uint32_t aux0;                 /* LAUNCH: oargs[]; SEND, RECV, COPY: spans[] */
    uint32_t ci;                   /* SEND, RECV: chunks[] index of the buffer, or UINT32_MAX */
} rp_op_t;

#define VEC(T, name) T *name; uint32_t n_##name, cap_##name

typedef struct rp_rec {
    int valid;
    uint64_t stamp;                /* unique per recording (chunk marks) */
    uint64_t used;                 /* LRU */
    uint64_t task0, seq0, region;  /* next_task, next_seq, region at the start */
    uint64_t chunk0;               /* next_chunk at the start */
    uint64_t xfer_end;
    uint32_t end_op0;              /* ops of the region's end: [end_op0, n_ops) */
    dg_plan_stats_t end_dst;
    VEC(uint32_t, rscope);         /* the region scope, encoded */
    VEC(uint64_t, cache0);         /* this rank's slot cache at the start, encoded */
    VEC(uint64_t, cache1);         /* and after the end */
    VEC(rp_task_t, tasks);
    VEC(rp_op_t, ops);
    VEC(dg_plan_arg_t, args);
    VEC(uint32_t, argci);
    VEC(dg_plan_op_arg_t, oargs);
    VEC(uint64_t, u64);
    VEC(dg_plan_span_t, spans);
    VEC(uint32_t, words);
    VEC(rp_chunk_t, chunks);
    VEC(uint32_t, bufs);
    VEC(rp_future_t, futs);
} rp_rec_t;

enum { RP_IDLE, RP_RECORDING, RP_CANDIDATE };

struct dg_plan_replay {
    rp_rec_t rec[NREC];
    uint64_t clock, stamps;
    int mode;
    rp_rec_t *cur;                 /* RECORDING: the one being written */
    rp_rec_t *cand[NREC];          /* CANDIDATE: matching start state */
    uint32_t ncand;
    rp_rec_t *chosen;              /* CANDIDATE: the one the first task matched */
    uint32_t matched;              /* CANDIDATE: tasks replayed */
    uint64_t task0, seq0, chunk0;  /* this region's bases */
    rp_task_t *open;               /* RECORDING: the task being planned */
    dg_plan_stats_t st0;           /* its counters before */
    /* CANDIDATE: per chunk of the chosen recording, met yet, and how */
    dg_plan_chunk_t **cp;
    uint64_t *dv;
    uint64_t *seen;
    uint32_t cap_cp, cap_dv, cap_seen;
    uint64_t epoch;
    uint64_t replayed, replanned;  /* dg_plan_rp_counts */
    uint64_t switches;             /* recordings that took over from the chosen one */
    uint64_t misses;               /* regions in a row not replayed whole */
    /* CANDIDATE: the futures replayed tasks made without a chunk */
    rp_vfut_t *vf;
    uint32_t n_vf, cap_vf;         /* entries this region (ids chunk0 + 1 ..), room */
    uint32_t nvirtual;             /* of them live */
};

/* ---- vectors ---- */

static int grow(void **v, uint32_t *cap, uint64_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    if (need > UINT32_MAX / 2)
        return -1;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *nv = dg_realloc(*v, (size_t)c * size);
    if (!nv)
        return -1;
    *v = nv;
    *cap = c;
    return 0;
}

/* Reserves k more entries of vector `name` in r; 0 or -1. */
#define RESERVE(r, name, k) \
    grow((void **)&(r)->name, &(r)->cap_##name, (uint64_t)(r)->n_##name + (k), sizeof(*(r)->name))

/* ---- encodings ---- */

static int enc_scope1(const dg_plan_scope_t *s, uint32_t **w, uint32_t *n, uint32_t *cap)
{
    if ((s->nranks && !s->ranks) || (s->nprocs && !s->procs) || s->nparts > DG_PLAN_MAX_PARTS ||
        (s->nparts && !s->parts))
        return -1; /* malformed: no match, and normal planning says what is wrong */
    uint64_t need = (uint64_t)*n + 4 + s->nranks + s->nprocs;
    if (grow((void **)w, cap, need, sizeof(**w)))
        return -1;
    uint32_t *o = *w + *n;
    *o++ = s->nranks;
    for (uint32_t i = 0; i < s->nranks; i++)
        *o++ = (uint32_t)s->ranks[i];
    *o++ = s->kinds;
    *o++ = s->nprocs;
    for (uint32_t i = 0; i < s->nprocs; i++)
        *o++ = s->procs[i];
    *o++ = s->nparts;
    *n = (uint32_t)need;
    return 0;
}

/* Appends scope s (NULL: nothing) to the words w[n..]. */
static int enc_scope(const dg_plan_scope_t *s, uint32_t **w, uint32_t *n, uint32_t *cap)
{
    if (!s)
        return 0;
    if (enc_scope1(s, w, n, cap))
        return -1;
    for (uint32_t i = 0; i < s->nparts; i++)
        if (enc_scope1(&s->parts[i], w, n, cap))
            return -1;
    return 0;
}

/* Whether conjunction s is encoded at w[*at..n) (advancing *at); 0 for a
 * malformed one. */
static int conj_is(const dg_plan_scope_t *s, const uint32_t *w, uint32_t n, uint32_t *at)
{
    if ((s->nranks && !s->ranks) || (s->nprocs && !s->procs) || (s->nparts && !s->parts) ||
        *at + 4ull + s->nranks + s->nprocs > n || w[*at] != s->nranks)
        return 0;
    const uint32_t *o = w + *at + 1;
    for (uint32_t i = 0; i < s->nranks; i++)
        if (*o++ != (uint32_t)s->ranks[i])
            return 0;
    if (*o++ != s->kinds || *o++ != s->nprocs)
        return 0;
    for (uint32_t i = 0; i < s->nprocs; i++)
        if (*o++ != s->procs[i])
            return 0;
    if (*o++ != s->nparts)
        return 0;
    *at = (uint32_t)(o - w);
    return 1;
}

/* Whether scope s (NULL: none) is the one encoded in w[0..n) (enc_scope). */
static int scope_is(const dg_plan_scope_t *s, const uint32_t *w, uint32_t n)
{
    if (!s)
        return n == 0;
    uint32_t at = 0;
    if (!conj_is(s, w, n, &at))
        return 0;
    for (uint32_t i = 0; i < s->nparts; i++)
        if (!conj_is(&s->parts[i], w, n, &at))
            return 0;
    return at == n;
}

/* Decodes one conjunction at w; returns the words read. */
static uint32_t dec_scope1(const uint32_t *w, dg_plan_scope_t *s)
{
    const uint32_t *i = w;
    memset(s, 0, sizeof(*s));
    s->nranks = *i++;
    s->ranks = (const int32_t *)i;
    i += s->nranks;
    s->kinds = *i++;
    s->nprocs = *i++;
    s->procs = i;
    i += s->nprocs;
    s->nparts = *i++;
    return (uint32_t)(i - w);
}

static void dec_scope(const uint32_t *w, dg_plan_scope_t *s, dg_plan_scope_t *parts)
{
    w += dec_scope1(w, s);
    for (uint32_t i = 0; i < s->nparts; i++)
        w += dec_scope1(w, &parts[i]);
    s->parts = s->nparts ? parts : NULL;
}

/* This rank's slot cache: per space, bytes, n, then n (size, count) pairs. */
static int enc_cache(const dg_plan_t *p, uint64_t **w, uint32_t *n, uint32_t *cap)
{
    *n = 0;
    for (uint32_t s = 0; s < p->nspaces; s++) {
        const dg_plan_cache_t *k = &p->cache[s];
        if (grow((void **)w, cap, (uint64_t)*n + 2 + 2ull * k->n, sizeof(**w)))
            return -1;
        uint64_t *o = *w + *n;
        *o++ = k->bytes;
        *o++ = k->n;
        for (uint32_t i = 0; i < k->n; i++) {
            *o++ = k->sizes[i];
            *o++ = k->counts[i];
        }
        *n += 2 + 2 * k->n;
    }
    return 0;
}

static int cache_is(const dg_plan_t *p, const uint64_t *w, uint32_t n)
{
    uint32_t at = 0;
    for (uint32_t s = 0; s < p->nspaces; s++) {
        const dg_plan_cache_t *k = &p->cache[s];
        if (at + 2 > n || w[at] != k->bytes || w[at + 1] != k->n)
            return 0;
        at += 2;
        for (uint32_t i = 0; i < k->n; i++, at += 2)
            if (w[at] != k->sizes[i] || w[at + 1] != k->counts[i])
                return 0;
    }
    return at == n;
}

/* Sets this rank's slot cache to an encoding (the end of a recording). */
static int cache_set(dg_plan_t *p, const uint64_t *w)
{
    for (uint32_t s = 0; s < p->nspaces; s++) {
        dg_plan_cache_t *k = &p->cache[s];
        uint32_t n = (uint32_t)w[1];
        if (n > k->cap) {
            uint64_t *sz = dg_plan_mem_realloc(&p->mem, k->sizes, k->cap * 8ull, n * 8ull);
            if (!sz)
                return -1;
            k->sizes = sz;
            uint32_t *ct = dg_plan_mem_realloc(&p->mem, k->counts, k->cap * 4ull, n * 4ull);
            if (!ct)
                return -1;
            k->counts = ct;
            k->cap = n;
        }
        k->bytes = w[0];
        k->n = n;
        w += 2;
        for (uint32_t i = 0; i < n; i++, w += 2) {
            k->sizes[i] = w[0];
            k->counts[i] = (uint32_t)w[1];
        }
    }
    return 0;
}

/* ---- the state a chunk must start a replayable region in ---- */

/* Current at home only, untainted, not in use, every buffer of this rank
 * without history. */
static int settled(const dg_plan_chunk_t *c)
{
    if (c->taint || c->touched || c->ncur != 1 ||
        !dg_plan_loc_is_home(c, c->cur[0].loc) ||
        dg_plan_spans_count(&c->cur[0].cur) != dg_plan_spans_count(&c->all))
        return 0;
    for (uint32_t i = 0; i < c->nbufs; i++)
        if (c->bufs[i].hist.n || c->bufs[i].hist.sweep_at != DG_PLAN_HIST_SWEEP_MIN)
            return 0;
    return 1;
}

/* A data chunk a region may start from (futures are made in regions). */
static int chunk_settled(const dg_plan_chunk_t *c)
{
    return !c->is_future && settled(c);
}

static uint32_t buf_word(const dg_plan_bufst_t *b)
{
    return b->space | (b->home ? 1u << 31 : 0);
}

static int push_bufs(rp_rec_t *r, const dg_plan_chunk_t *c, uint32_t *at, uint32_t *n)
{
    if (RESERVE(r, bufs, c->nbufs))
        return -1;
    *at = r->n_bufs;
    *n = c->nbufs;
    for (uint32_t i = 0; i < c->nbufs; i++)
        r->bufs[r->n_bufs++] = buf_word(&c->bufs[i]);
    return 0;
}

static int bufs_are(const rp_rec_t *r, const dg_plan_chunk_t *c, uint32_t at, uint32_t n)
{
    if (c->nbufs != n)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (buf_word(&c->bufs[i]) != r->bufs[at + i])
            return 0;
    return 1;
}

/* The memory a recording holds. */
static size_t rec_bytes(const rp_rec_t *r)
{
    return (size_t)r->cap_rscope * sizeof(*r->rscope) + (size_t)r->cap_cache0 * 8 +
           (size_t)r->cap_cache1 * 8 + (size_t)r->cap_tasks * sizeof(*r->tasks) +
           (size_t)r->cap_ops * sizeof(*r->ops) + (size_t)r->cap_args * sizeof(*r->args) +
           (size_t)r->cap_argci * 4 + (size_t)r->cap_oargs * sizeof(*r->oargs) +
           (size_t)r->cap_u64 * 8 + (size_t)r->cap_spans * sizeof(*r->spans) +
           (size_t)r->cap_words * 4 + (size_t)r->cap_chunks * sizeof(*r->chunks) +
           (size_t)r->cap_bufs * 4 + (size_t)r->cap_futs * sizeof(*r->futs);
}

/* ---- lifecycle ---- */

dagger_status_t dg_plan_rp_create(dg_plan_t *p)
{
    if (!p->prm.replay_tasks)
        return DAGGER_OK;
    p->rp = dg_calloc(1, sizeof(*p->rp));
    if (!p->rp)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_plan_create: out of memory");
    return DAGGER_OK;
}

static void rec_free(rp_rec_t *r)
{
    free(r->rscope);
    free(r->cache0);
    free(r->cache1);
    free(r->tasks);
    free(r->ops);
    free(r->args);
    free(r->argci);
    free(r->oargs);
    free(r->u64);
    free(r->spans);
    free(r->words);
    free(r->chunks);
    free(r->bufs);
    free(r->futs);
}

void dg_plan_rp_destroy(dg_plan_t *p)
{
    dg_plan_replay_t *rp = p->rp;
    if (!rp)
        return;
    for (int i = 0; i < NREC; i++)
        rec_free(&rp->rec[i]);
    free(rp->cp);
    free(rp->dv);
    free(rp->seen);
    free(rp->vf);
    free(rp);
    p->rp = NULL;
}

/* ---- futures without a chunk ---- */

/* The live chunkless future id, or NULL. */
static rp_vfut_t *vf_find(const dg_plan_replay_t *rp, uint64_t id)
{
    if (!rp || !rp->nvirtual || id <= rp->chunk0 || id - rp->chunk0 > rp->n_vf)
        return NULL;
    rp_vfut_t *v = &rp->vf[id - rp->chunk0 - 1];
    return v->live ? v : NULL;
}

const dg_plan_geom_t *dg_plan_rp_vgeom(const dg_plan_t *p, uint64_t id, int32_t *owner)
{
    const rp_vfut_t *v = vf_find(p->rp, id);
    if (v && owner)
        *owner = v->rank;
    return v ? &v->g : NULL;
}

/* Future id (the counter's next) made chunkless; -1 when there is no room
 * for it (the caller makes its chunk). */
static int vf_add(dg_plan_replay_t *rp, uint64_t id, int32_t rank, uint32_t ret)
{
    uint64_t rel = id - rp->chunk0;
    if (rel > UINT32_MAX || grow((void **)&rp->vf, &rp->cap_vf, rel, sizeof(*rp->vf)))
        return -1;
    for (uint64_t i = rp->n_vf; i + 1 < rel; i++) /* ids between: chunks of their own */
        rp->vf[i].live = 0;
    rp_vfut_t *v = &rp->vf[rel - 1];
    dg_plan_future_geom(ret, &v->g);
    v->rank = rank;
    v->live = 1;
    rp->n_vf = (uint32_t)rel;
    rp->nvirtual++;
    return 0;
}

/* Gives chunkless future id its chunk, as replay_task would have made it
 * (the region changes its futures' state only at its end, so it is still
 * in that state). NULL when id is none, or out of memory (the state lost). */
static dg_plan_chunk_t *vf_chunk(dg_plan_t *p, uint64_t id)
{
    dg_plan_replay_t *rp = p->rp;
    rp_vfut_t *v = vf_find(rp, id);
    if (!v)
        return NULL;
    dg_plan_chunk_t *c = dg_plan_chunk_make(p, id, v->rank, 0, &v->g, 1);
    if (!c || p->mem.failed) {
        p->mem.failed = 1;
        dg_error(DAGGER_ERR_NO_MEMORY, "planner: out of memory while replaying region %llu",
                 (unsigned long long)p->region);
        return NULL;
    }
    v->live = 0;
    rp->nvirtual--;
    p->st.live_chunks--; /* the recorded counters count it */
    return c;
}

/* Forgets every chunkless future (catching up makes them anew). */
static void vf_forget(dg_plan_replay_t *rp)
{
    rp->n_vf = 0;
    rp->nvirtual = 0;
}

/* ---- recording ---- */

static void rec_drop(dg_plan_replay_t *rp)
{
    if (rp->mode == RP_RECORDING) {
        rp->cur->valid = 0;
        if (rec_bytes(rp->cur) > REC_MAX_BYTES) { /* give the memory back */
            rec_free(rp->cur);
            memset(rp->cur, 0, sizeof(*rp->cur));
        }
        rp->cur = NULL;
        rp->open = NULL;
        rp->mode = RP_IDLE;
    }
}

/* Starts recording this region into the least recently used recording
 * other than `keep`. */
static void rec_start(dg_plan_t *p, const rp_rec_t *keep)
{
    dg_plan_replay_t *rp = p->rp;
    rp_rec_t *r = NULL; /* an empty one, else the least recently used */
    for (int i = 0; i < NREC; i++) {
        rp_rec_t *x = &rp->rec[i];
        if (x == keep)
            continue;
        if (!r || (r->valid && (!x->valid || x->used < r->used)))
            r = x;
    }
    r->valid = 0;
    r->stamp = ++rp->stamps;
    r->used = ++rp->clock;
    r->task0 = rp->task0;
    r->seq0 = rp->seq0;
    r->region = p->region;
    r->chunk0 = rp->chunk0;
    r->n_tasks = r->n_ops = r->n_args = r->n_argci = r->n_oargs = r->n_u64 = 0;
    r->n_spans = r->n_words = r->n_chunks = r->n_bufs = r->n_rscope = r->n_futs = 0;
    memset(&r->end_dst, 0, sizeof(r->end_dst));
    if (enc_scope(&p->rscope.s, &r->rscope, &r->n_rscope, &r->cap_rscope) ||
        enc_cache(p, &r->cache0, &r->n_cache0, &r->cap_cache0))
        return;
    rp->cur = r;
    rp->open = NULL;
    rp->mode = RP_RECORDING;
}

/* The index of chunk c in the recording, adding it at its first use (when
 * it must be settled); UINT32_MAX when the recording cannot go on. */
static uint32_t rec_chunk(rp_rec_t *r, dg_plan_chunk_t *c)
{
    if (c->rp_stamp == r->stamp)
        return c->rp_index;
    if (!chunk_settled(c) || RESERVE(r, chunks, 1))
        return UINT32_MAX;
    rp_chunk_t *k = &r->chunks[r->n_chunks];
    memset(k, 0, sizeof(*k));
    k->id = c->id;
    k->version0 = c->version;
    if (push_bufs(r, c, &k->buf0, &k->nbuf0))
        return UINT32_MAX;
    c->rp_stamp = r->stamp;
    c->rp_index = r->n_chunks;
    return r->n_chunks++;
}

static void stats_sub(dg_plan_stats_t *d, const dg_plan_stats_t *a, const dg_plan_stats_t *b)
{
    d->tasks = a->tasks - b->tasks;
    d->ops = a->ops - b->ops;
    d->transfers = a->transfers - b->transfers;
    d->copies = a->copies - b->copies;
    d->bytes_moved = a->bytes_moved - b->bytes_moved;
    d->planned_transfers = a->planned_transfers - b->planned_transfers;
    d->planned_copies = a->planned_copies - b->planned_copies;
    d->live_chunks = a->live_chunks - b->live_chunks;
}

static void stats_add(dg_plan_stats_t *a, const dg_plan_stats_t *d)
{
    a->tasks += d->tasks;
    a->ops += d->ops;
    a->transfers += d->transfers;
    a->copies += d->copies;
    a->bytes_moved += d->bytes_moved;
    a->planned_transfers += d->planned_transfers;
    a->planned_copies += d->planned_copies;
    a->live_chunks += d->live_chunks;
}

void dg_plan_rp_task_begin(dg_plan_t *p, const dg_plan_codelet_t *cl,
                           const dg_plan_task_desc_t *t)
{
    dg_plan_replay_t *rp = p->rp;
    if (rp->mode != RP_RECORDING)
        return;
    rp_rec_t *r = rp->cur;
    int ok = r->n_tasks < p->prm.replay_tasks && rec_bytes(r) <= REC_MAX_BYTES;
    for (uint32_t i = 0; ok && i < t->ndeps; i++)
        ok = t->deps[i] < p->region_first_task; /* earlier regions' tasks: no-ops */
    for (uint32_t i = 0; ok && i < t->nargs; i++) /* futures: only those made in the region */
        ok = t->args[i].kind != DG_PLAN_ARG_FUTURE || t->args[i].future > rp->chunk0;
    ok = ok && !RESERVE(r, tasks, 1) && !RESERVE(r, args, t->nargs) &&
         !RESERVE(r, argci, t->nargs);
    if (!ok) {
        rec_drop(rp);
        return;
    }
    rp_task_t *k = &r->tasks[r->n_tasks];
    memset(k, 0, sizeof(*k));
    k->codelet = t->codelet;
    k->nargs = t->nargs;
    k->priority = t->priority;
    k->shape = dg_plan_task_shape(cl, t);
    k->ret = dg_plan_ret_size(cl, t);
    k->tret = t->ret_size;
    k->arg0 = r->n_args;
    k->scope0 = r->n_words;
    if (enc_scope(t->scope, &r->words, &r->n_words, &r->cap_words)) {
        rec_drop(rp);
        return;
    }
    k->nscope = r->n_words - k->scope0;
    for (uint32_t i = 0; i < t->nargs; i++) {
        dg_plan_arg_t a = t->args[i];
        uint32_t ci = UINT32_MAX;
        if (a.kind == DG_PLAN_ARG_VIEW) {
            ci = rec_chunk(r, dg_plan_chunk_get(p, a.view.chunk));
            if (ci == UINT32_MAX) {
                rec_drop(rp);
                return;
            }
        }
        a.value = NULL;
        r->args[r->n_args++] = a;
        r->argci[r->n_argci++] = ci;
    }
    k->op0 = r->n_ops;
    rp->open = k;
    rp->st0 = p->st;
    r->n_tasks++;
}

/* Closes the task or free being recorded: its ops and what it added to the
 * counters. NULL when none is. */
static rp_task_t *close_open(dg_plan_t *p)
{
    dg_plan_replay_t *rp = p->rp;
    if (rp->mode != RP_RECORDING || !rp->open)
        return NULL;
    rp_task_t *k = rp->open;
    rp->open = NULL;
    k->nops = rp->cur->n_ops - k->op0;
    stats_sub(&k->dst, &p->st, &rp->st0);
    return k;
}

void dg_plan_rp_task_end(dg_plan_t *p, const dg_plan_task_info_t *info, uint64_t launch_seq)
{
    dg_plan_replay_t *rp = p->rp;
    rp_task_t *k = close_open(p);
    if (!k)
        return;
    rp_rec_t *r = rp->cur;
    k->rank = info->rank;
    k->proc = info->proc;
    k->space = info->space;
    k->launch = launch_seq ? launch_seq - r->seq0 : 0;
    if (RESERVE(r, u64, info->ndeps)) {
        rec_drop(rp);
        return;
    }
    k->ldep0 = r->n_u64;
    k->nldeps = info->ndeps;
    for (uint32_t i = 0; i < info->ndeps; i++)
        r->u64[r->n_u64++] = info->deps[i] - r->task0;
}

void dg_plan_rp_op(dg_plan_t *p, const dg_plan_op_t *op)
{
    dg_plan_replay_t *rp = p->rp;
    if (rp->mode != RP_RECORDING)
        return;
    rp_rec_t *r = rp->cur;
    if (RESERVE(r, ops, 1) || RESERVE(r, u64, op->ndeps)) {
        rec_drop(rp);
        return;
    }
    rp_op_t *o = &r->ops[r->n_ops];
    o->op = *op;
    o->op.deps = NULL;
    o->ci = UINT32_MAX;
    o->dep0 = r->n_u64;
    for (uint32_t i = 0; i < op->ndeps; i++) {
        if (op->deps[i] <= r->seq0) { /* an op before the region: not relocatable */
            rec_drop(rp);
            return;
        }
        r->u64[r->n_u64++] = op->deps[i];
    }
    const dg_plan_span_t *sp = NULL;
    uint32_t nsp = 0;
    switch (op->kind) {
    case DG_PLAN_OP_LAUNCH:
        if (RESERVE(r, oargs, op->u.launch.nargs)) {
            rec_drop(rp);
            return;
        }
        o->aux0 = r->n_oargs;
        for (uint32_t i = 0; i < op->u.launch.nargs; i++) {
            dg_plan_op_arg_t a = op->u.launch.args[i];
            a.value = NULL;
            a.geom = NULL;
            r->oargs[r->n_oargs++] = a;
        }
        o->op.u.launch.args = NULL;
        break;
    case DG_PLAN_OP_SEND:
    case DG_PLAN_OP_RECV:
        sp = op->u.xfer.spans;
        nsp = op->u.xfer.nspans;
        o->op.u.xfer.spans = NULL;
        if (op->u.xfer.buf.chunk && op->u.xfer.buf.chunk <= r->chunk0) { /* futures: absolute */
            dg_plan_chunk_t *c = dg_plan_chunk_get(p, op->u.xfer.buf.chunk);
            o->ci = c && c->rp_stamp == r->stamp ? c->rp_index : UINT32_MAX;
            if (o->ci == UINT32_MAX) {
                rec_drop(rp);
                return;
            }
        }
        break;
    case DG_PLAN_OP_COPY:
        sp = op->u.copy.spans;
        nsp = op->u.copy.nspans;
        o->op.u.copy.spans = NULL;
        break;
    default: break;
    }
    if (nsp) {
        if (RESERVE(r, spans, nsp)) {
            rec_drop(rp);
            return;
        }
        o->aux0 = r->n_spans;
        memcpy(r->spans + r->n_spans, sp, nsp * sizeof(*sp));
        r->n_spans += nsp;
    }
    r->n_ops++;
}

/* ---- region begin: a candidate or a new recording ---- */

/* After SPARSE_AFTER regions in a row that were not replayed whole (a
 * program whose regions do not repeat), only every 8th, 16th, ... at most
 * SPARSE_MAX-th region is recorded: recording costs copies. */
static int worth_recording(const dg_plan_replay_t *rp)
{
    if (rp->misses < SPARSE_AFTER)
        return 1;
    uint64_t every = 8;
    while (every < SPARSE_MAX && every * 2 <= rp->misses)
        every *= 2;
    return rp->misses % every == 0;
}

void dg_plan_rp_region_begin(dg_plan_t *p)
{
    dg_plan_replay_t *rp = p->rp;
    rp->mode = RP_IDLE;
    rp->cur = NULL;
    rp->chosen = NULL;
    rp->ncand = 0;
    rp->matched = 0;
    rp->task0 = p->next_task;
    rp->seq0 = p->next_seq;
    rp->chunk0 = p->next_chunk;
    vf_forget(rp);
    if (p->tainted)
        return;
    for (int i = 0; i < NREC; i++) {
        rp_rec_t *r = &rp->rec[i];
        if (r->valid && scope_is(&p->rscope.s, r->rscope, r->n_rscope) &&
            cache_is(p, r->cache0, r->n_cache0))
            rp->cand[rp->ncand++] = r;
    }
    if (rp->ncand)
        rp->mode = RP_CANDIDATE;
    else if (worth_recording(rp))
        rec_start(p, NULL);
}

/* ---- candidates: matching and replaying one task ---- */

static int same_view(const dg_plan_view_t *a, const dg_plan_view_t *b)
{
    if (a->chunk != b->chunk || a->ndims != b->ndims || a->mod != b->mod ||
        a->ndims > DAGGER_MAX_DIMS)
        return 0;
    for (uint32_t k = 0; k < a->ndims; k++)
        if (a->off[k] != b->off[k] || a->ext[k] != b->ext[k])
            return 0;
    return 1;
}

/* A chunk id of recording r in this region: a future made in r's region
 * moves by the difference of the regions' chunk counters. */
static uint64_t moved_chunk(const dg_plan_replay_t *rp, const rp_rec_t *r, uint64_t id)
{
    return id > r->chunk0 ? id - r->chunk0 + rp->chunk0 : id;
}

static int same_task(dg_plan_t *p, const rp_rec_t *r, const rp_task_t *k,
                     const dg_plan_task_desc_t *t)
{
    if (k->freed || t->codelet != k->codelet || t->nargs != k->nargs ||
        t->priority != k->priority || t->ret_size != k->tret || (t->nargs && !t->args) ||
        (t->ndeps && !t->deps))
        return 0;
    for (uint32_t i = 0; i < t->ndeps; i++)
        if (!t->deps[i] || t->deps[i] >= p->region_first_task)
            return 0;
    for (uint32_t i = 0; i < t->nargs; i++) {
        const dg_plan_arg_t *a = &t->args[i], *ra = &r->args[k->arg0 + i];
        if (a->kind != ra->kind || a->mode != ra->mode)
            return 0;
        if (a->kind == DG_PLAN_ARG_FUTURE) {
            if (a->future != moved_chunk(p->rp, r, ra->future))
                return 0;
            continue;
        }
        if (a->kind == DG_PLAN_ARG_VIEW ? !same_view(&a->view, &ra->view)
                                        : a->kind != DG_PLAN_ARG_VALUE || a->len != ra->len ||
                                              (a->len && !a->value))
            return 0;
    }
    /* No words at all while no task had a scope: no pointer arithmetic on NULL. */
    return scope_is(t->scope, k->nscope ? r->words + k->scope0 : NULL, k->nscope);
}

/* The chunks a matched task uses start as recorded (checked at their first
 * use: a replayed region changes its chunks' state only at its end). */
static int chunks_as_recorded(dg_plan_t *p, const rp_rec_t *r, const rp_task_t *k)
{
    dg_plan_replay_t *rp = p->rp;
    for (uint32_t i = 0; i < k->nargs; i++) {
        uint32_t ci = r->argci[k->arg0 + i];
        if (ci == UINT32_MAX || rp->seen[ci] == rp->epoch)
            continue;
        const rp_chunk_t *rc = &r->chunks[ci];
        dg_plan_chunk_t *c = dg_plan_chunk_get(p, rc->id);
        if (!c || !chunk_settled(c) || !bufs_are(r, c, rc->buf0, rc->nbuf0))
            return 0;
        rp->cp[ci] = c;
        rp->dv[ci] = c->version - rc->version0;
        rp->seen[ci] = rp->epoch;
    }
    return 1;
}

/* Emits recorded ops [a, b) moved to this region; t: the task's submission
 * (its by-value arguments), NULL for the region's end. */
static void emit_recorded(dg_plan_t *p, const rp_rec_t *r, uint32_t a, uint32_t b,
                          const dg_plan_task_desc_t *t, const rp_task_t *k)
{
    dg_plan_replay_t *rp = p->rp;
    uint64_t dseq = rp->seq0 - r->seq0, dtask = rp->task0 - r->task0;
    for (uint32_t i = a; i < b; i++) {
        const rp_op_t *o = &r->ops[i];
        dg_plan_op_t op = o->op;
        op.seq += dseq;
        p->deps.n = 0;
        for (uint32_t j = 0; j < op.ndeps; j++)
            dg_plan_u64vec_push(&p->mem, &p->deps, r->u64[o->dep0 + j] + dseq);
        op.deps = op.ndeps ? p->deps.v : NULL;
        switch (op.kind) {
        case DG_PLAN_OP_LAUNCH:
            op.u.launch.task += dtask;
            op.u.launch.ret.chunk = moved_chunk(rp, r, op.u.launch.ret.chunk);
            for (uint32_t j = 0; j < op.u.launch.nargs; j++) {
                dg_plan_op_arg_t *x = &p->oargs[j];
                *x = r->oargs[o->aux0 + j];
                if (x->kind == DG_PLAN_ARG_VALUE) {
                    x->value = t->args[j].value;
                } else if (x->kind == DG_PLAN_ARG_FUTURE) {
                    x->buf.chunk = moved_chunk(rp, r, x->buf.chunk);
                    /* made by replay_task, live while read; mostly chunkless */
                    x->geom = dg_plan_rp_vgeom(p, x->buf.chunk, NULL);
                    if (!x->geom) {
                        const dg_plan_chunk_t *f = dg_plan_chunk_get(p, x->buf.chunk);
                        x->geom = f ? &f->g : NULL;
                    }
                } else {
                    x->geom = &rp->cp[r->argci[k->arg0 + j]]->g;
                }
            }
            op.u.launch.args = p->oargs;
            break;
        case DG_PLAN_OP_ALLOC:
        case DG_PLAN_OP_FREE:
            op.u.mem.buf.chunk = moved_chunk(rp, r, op.u.mem.buf.chunk);
            break;
        case DG_PLAN_OP_SEND:
        case DG_PLAN_OP_RECV:
            op.u.xfer.buf.chunk = moved_chunk(rp, r, op.u.xfer.buf.chunk);
            op.u.xfer.tag = (p->region << 32) | (op.u.xfer.tag & 0xffffffffu);
            if (o->ci != UINT32_MAX)
                op.u.xfer.version += rp->dv[o->ci];
            op.u.xfer.spans = op.u.xfer.nspans ? r->spans + o->aux0 : NULL;
            break;
        case DG_PLAN_OP_COPY:
            op.u.copy.src.chunk = moved_chunk(rp, r, op.u.copy.src.chunk);
            op.u.copy.dst.chunk = moved_chunk(rp, r, op.u.copy.dst.chunk);
            op.u.copy.spans = op.u.copy.nspans ? r->spans + o->aux0 : NULL;
            break;
        case DG_PLAN_OP_REGION_END: op.u.region.region = p->region; break;
        default: break;
        }
        p->next_seq = op.seq;
        p->region_nops++;
        p->prm.emit(p->prm.emit_ctx, &op);
    }
}

static int ensure_chunk_room(dg_plan_replay_t *rp, uint32_t n)
{
    uint32_t had = rp->cap_seen;
    if (grow((void **)&rp->cp, &rp->cap_cp, n, sizeof(*rp->cp)) ||
        grow((void **)&rp->dv, &rp->cap_dv, n, sizeof(*rp->dv)) ||
        grow((void **)&rp->seen, &rp->cap_seen, n, sizeof(*rp->seen)))
        return -1;
    if (rp->cap_seen > had) /* fresh entries: met in no epoch */
        memset(rp->seen + had, 0, (rp->cap_seen - had) * sizeof(*rp->seen));
    return 0;
}

/* 0, or -1 out of memory (the planner state is lost). */
static int replay_task(dg_plan_t *p, const dg_plan_codelet_t *cl, const dg_plan_task_desc_t *t,
                       dg_plan_submitted_t *out)
{
    dg_plan_replay_t *rp = p->rp;
    const rp_rec_t *r = rp->chosen;
    const rp_task_t *k = &r->tasks[rp->matched];
    uint64_t tid = p->next_task + 1;
    p->next_task = tid;
    dg_plan_hash_task_shaped(p, tid, k->shape, t); /* same_task: the shape is as recorded */
    uint64_t future = 0;
    if (k->ret) { /* its future, chunkless (vf_chunk); the counters below count it */
        future = p->next_chunk + 1;
        if (vf_add(rp, future, k->rank, k->ret)) { /* no room: a chunk now */
            dg_plan_geom_t g;
            dg_plan_future_geom(k->ret, &g);
            dg_plan_chunk_t *f = dg_plan_chunk_new(p, k->rank, 0, &g, 1);
            if (!f || p->mem.failed) {
                p->mem.failed = 1;
                dg_error(DAGGER_ERR_NO_MEMORY, "planner: out of memory while replaying task %llu",
                         (unsigned long long)tid);
                return -1;
            }
            p->st.live_chunks--;
        } else {
            p->next_chunk = future;
        }
    }
    emit_recorded(p, r, k->op0, k->op0 + k->nops, t, k);
    stats_add(&p->st, &k->dst);
    uint64_t launch = k->launch ? k->launch + rp->seq0 : 0;
    p->ring[tid & (p->ring_cap - 1)] = (dg_plan_taskrec_t){tid, launch, k->rank};
    if (p->prm.on_task) {
        p->ldeps.n = 0;
        for (uint32_t i = 0; i < k->nldeps; i++)
            dg_plan_u64vec_push(&p->mem, &p->ldeps, r->u64[k->ldep0 + i] + rp->task0);
        dg_plan_task_info_t info = {.task = tid, .codelet = cl->id, .rank = k->rank,
                                    .proc = k->proc, .space = k->space, .ndeps = p->ldeps.n,
                                    .deps = p->ldeps.v, .hash = dg_plan_hash(p), .future = future};
        p->prm.on_task(p->prm.task_ctx, &info);
    }
    if (out)
        *out = (dg_plan_submitted_t){tid, future, k->rank, k->proc, k->space, k->ret};
    rp->matched++;
    rp->replayed++;
    return 0;
}

/* ---- frees of the region's futures ---- */

/* Recording: the free of chunk id, an event among the tasks, its ops
 * recorded as a task's are; the free of a chunk made before the region
 * stops the recording. */
static void rec_free_begin(dg_plan_t *p, uint64_t id)
{
    dg_plan_replay_t *rp = p->rp;
    if (rp->mode != RP_RECORDING)
        return;
    rp_rec_t *r = rp->cur;
    if (id <= rp->chunk0 || r->n_tasks >= p->prm.replay_tasks || RESERVE(r, tasks, 1)) {
        rec_drop(rp);
        return;
    }
    rp_task_t *k = &r->tasks[r->n_tasks++];
    memset(k, 0, sizeof(*k));
    k->freed = 1;
    k->free_rel = id - rp->chunk0;
    k->op0 = r->n_ops;
    rp->open = k;
    rp->st0 = p->st;
}

void dg_plan_rp_free_end(dg_plan_t *p)
{
    close_open(p);
}

/* Replays the recorded free at rp->matched of future id. */
static void replay_free(dg_plan_t *p, uint64_t id)
{
    dg_plan_replay_t *rp = p->rp;
    const rp_rec_t *r = rp->chosen;
    const rp_task_t *k = &r->tasks[rp->matched];
    rp_vfut_t *v = vf_find(rp, id);
    dg_plan_hash_free(p, id);
    emit_recorded(p, r, k->op0, k->op0 + k->nops, NULL, NULL);
    stats_add(&p->st, &k->dst);
    if (v) { /* never given a chunk: nothing to delete */
        v->live = 0;
        rp->nvirtual--;
    } else {
        dg_plan_chunk_delete(p, dg_plan_chunk_get(p, id));
        p->st.live_chunks++; /* the recorded counters count it */
    }
    rp->matched++;
}

/* ---- catching up ---- */

/* Plans the `matched` replayed tasks (and frees) again from the region's
 * start without emitting, recording them into another recording, so that
 * normal planning can go on. The futures replaying made are freed first
 * (those still chunkless forgotten) and made again. */
static int catch_up(dg_plan_t *p)
{
    dg_plan_replay_t *rp = p->rp;
    const rp_rec_t *old = rp->chosen;
    uint32_t n = rp->matched;
    rp->mode = RP_IDLE;
    rp->chosen = NULL;
    vf_forget(rp); /* the chunkless futures: planned again below, with chunks */
    if (worth_recording(rp))
        rec_start(p, old);
    if (!n)
        return 0;
    uint64_t hash = p->shash, vhash = p->vhash, next_task = p->next_task, next_seq = p->next_seq;
    uint64_t nops = p->region_nops, next_chunk = p->next_chunk;
    dg_plan_stats_t st = p->st;
    for (uint64_t id = rp->chunk0 + 1; id <= p->next_chunk; id++) {
        dg_plan_chunk_t *c = dg_plan_chunk_get(p, id);
        if (c)
            dg_plan_chunk_delete(p, c);
    }
    p->next_chunk = rp->chunk0;
    p->next_task = rp->task0;
    p->next_seq = rp->seq0;
    p->region_nops = 0;
    p->xfer_index = 0;
    p->silent = 1;
    static const unsigned char some_value; /* by-value bytes: never read while silent */
    uint32_t most = 1;
    for (uint32_t i = 0; i < n; i++)
        most = old->tasks[i].nargs > most ? old->tasks[i].nargs : most;
    dg_plan_arg_t *args = dg_malloc(most * sizeof(*args));
    dagger_status_t res = args ? DAGGER_OK : DAGGER_ERR_NO_MEMORY;
    for (uint32_t i = 0; i < n && res == DAGGER_OK; i++) {
        const rp_task_t *k = &old->tasks[i];
        if (k->freed) {
            dg_plan_chunk_t *c = dg_plan_chunk_get(p, rp->chunk0 + k->free_rel);
            if (!c) {
                res = DAGGER_ERR_INTERNAL;
                break;
            }
            rec_free_begin(p, c->id);
            dg_plan_free_now(p, c);
            dg_plan_rp_free_end(p);
            continue;
        }
        rp->replanned++;
        for (uint32_t j = 0; j < k->nargs; j++) {
            args[j] = old->args[k->arg0 + j];
            if (args[j].kind == DG_PLAN_ARG_VALUE && args[j].len)
                args[j].value = &some_value;
            if (args[j].kind == DG_PLAN_ARG_FUTURE)
                args[j].future = moved_chunk(rp, old, args[j].future);
        }
        dg_plan_scope_t scope, parts[DG_PLAN_MAX_PARTS];
        if (k->nscope)
            dec_scope(old->words + k->scope0, &scope, parts);
        dg_plan_task_desc_t t = {.codelet = k->codelet, .args = args, .nargs = k->nargs,
                                 .scope = k->nscope ? &scope : NULL, .priority = k->priority,
                                 .ret_size = k->tret};
        res = dg_plan_plan_task(p, &t, NULL);
    }
    free(args);
    p->silent = 0;
    p->shash = hash;
    p->vhash = vhash;
    p->st = st;
    if (res != DAGGER_OK || p->next_task != next_task || p->next_seq != next_seq ||
        p->region_nops != nops || p->next_chunk != next_chunk) {
        p->mem.failed = 1;
        dg_error(DAGGER_ERR_INTERNAL, "planner: re-planning %u replayed tasks and frees of "
                 "region %llu did not reproduce their plan; the planner state is lost", n,
                 (unsigned long long)p->region);
        return -1;
    }
    return 0;
}

/* ---- switching to another recording ---- */

/* The ops recorded for the first m tasks and frees of r. */
static uint32_t prefix_ops(const rp_rec_t *r, uint32_t m)
{
    return m ? r->tasks[m - 1].op0 + r->tasks[m - 1].nops : 0;
}

/* A chunk id of r, made comparable with another recording's: a future made
 * in the region by its place in the region's counter (tagged apart). */
static uint64_t rel_chunk(const rp_rec_t *r, uint64_t id)
{
    return id > r->chunk0 ? (id - r->chunk0) | (1ull << 63) : id;
}

static int same_rec_task(const rp_rec_t *a, const rp_task_t *x, const rp_rec_t *b,
                         const rp_task_t *y)
{
    if (x->freed != y->freed || x->free_rel != y->free_rel || x->codelet != y->codelet ||
        x->nargs != y->nargs || x->priority != y->priority || x->shape != y->shape ||
        x->tret != y->tret || x->ret != y->ret || x->rank != y->rank || x->proc != y->proc ||
        x->space != y->space || x->launch != y->launch || x->nops != y->nops ||
        x->nldeps != y->nldeps || x->nscope != y->nscope)
        return 0;
    for (uint32_t i = 0; i < x->nargs; i++) {
        const dg_plan_arg_t *u = &a->args[x->arg0 + i], *v = &b->args[y->arg0 + i];
        if (u->kind != v->kind || u->mode != v->mode)
            return 0;
        if (u->kind == DG_PLAN_ARG_FUTURE ? rel_chunk(a, u->future) != rel_chunk(b, v->future)
            : u->kind == DG_PLAN_ARG_VIEW ? !same_view(&u->view, &v->view)
                                          : u->len != v->len)
            return 0;
    }
    return (!x->nscope ||
            !memcmp(a->words + x->scope0, b->words + y->scope0, x->nscope * sizeof(*a->words))) &&
           (!x->nldeps ||
            !memcmp(a->u64 + x->ldep0, b->u64 + y->ldep0, x->nldeps * sizeof(*a->u64)));
}

/* Recordings a and b hold the same first m tasks and frees, and the same
 * ops for them (kinds, places and dependencies, relative to each start). */
static int same_prefix(const rp_rec_t *a, const rp_rec_t *b, uint32_t m)
{
    uint32_t n = prefix_ops(a, m);
    if (a->n_tasks < m || b->n_tasks < m || prefix_ops(b, m) != n)
        return 0;
    for (uint32_t i = 0; i < m; i++)
        if (!same_rec_task(a, &a->tasks[i], b, &b->tasks[i]))
            return 0;
    for (uint32_t i = 0; i < n; i++) {
        const rp_op_t *x = &a->ops[i], *y = &b->ops[i];
        if (x->op.kind != y->op.kind || x->op.seq - a->seq0 != y->op.seq - b->seq0 ||
            x->op.ndeps != y->op.ndeps)
            return 0;
        for (uint32_t j = 0; j < x->op.ndeps; j++)
            if (a->u64[x->dep0 + j] - a->seq0 != b->u64[y->dep0 + j] - b->seq0)
                return 0;
    }
    return 1;
}

/* The chosen recording stopped matching at rp->matched: there t was
 * submitted (t), future free_id freed (free_id), or the region ended
 * (neither). Another candidate that recorded the same tasks up to there and
 * goes on as this region does takes over: the same loop's last, shorter
 * region, or a region longer than the one chosen first. Planning is online,
 * so both recordings planned their common first tasks alike from the same
 * start (the candidates' region scope and slot cache matched at the
 * region's begin; the chunks the taker-over uses are checked here, still in
 * their start state: replay changes them at the region's end). 1 when one
 * took over, 0 (and the chosen one's checked chunks forgotten) when none. */
static int switch_recording(dg_plan_t *p, const dg_plan_task_desc_t *t, uint64_t free_id)
{
    dg_plan_replay_t *rp = p->rp;
    const rp_rec_t *old = rp->chosen;
    uint32_t m = rp->matched;
    int at_end = !t && !free_id;
    for (uint32_t c = 0; c < rp->ncand; c++) {
        rp_rec_t *r = rp->cand[c];
        if (at_end ? r->n_tasks != m || r->end_op0 != prefix_ops(r, m) : r->n_tasks <= m)
            continue;
        if (t && !same_task(p, r, &r->tasks[m], t))
            continue;
        if (free_id && (!r->tasks[m].freed || free_id <= rp->chunk0 ||
                        free_id - rp->chunk0 != r->tasks[m].free_rel))
            continue;
        if (!same_prefix(old, r, m) || ensure_chunk_room(rp, r->n_chunks))
            continue;
        rp->epoch++;
        int ok = 1;
        for (uint32_t i = 0; ok && i < m + !at_end; i++)
            ok = chunks_as_recorded(p, r, &r->tasks[i]);
        if (!ok)
            continue;
        rp->cand[c] = rp->cand[--rp->ncand];
        rp->chosen = r;
        r->used = ++rp->clock;
        rp->switches++;
        return 1;
    }
    return 0;
}

int dg_plan_rp_submit(dg_plan_t *p, const dg_plan_codelet_t *cl, const dg_plan_task_desc_t *t,
                      dg_plan_submitted_t *out)
{
    dg_plan_replay_t *rp = p->rp;
    if (rp->mode != RP_CANDIDATE)
        return 0;
    if (!rp->chosen) { /* the first task picks the recording, the latest used first */
        while (rp->ncand && !rp->chosen) {
            uint32_t best = 0;
            for (uint32_t i = 1; i < rp->ncand; i++)
                best = rp->cand[i]->used > rp->cand[best]->used ? i : best;
            rp_rec_t *r = rp->cand[best];
            rp->cand[best] = rp->cand[--rp->ncand];
            rp->epoch++;
            if (r->n_tasks && same_task(p, r, &r->tasks[0], t) &&
                !ensure_chunk_room(rp, r->n_chunks) && chunks_as_recorded(p, r, &r->tasks[0]))
                rp->chosen = r;
        }
        if (!rp->chosen)
            return catch_up(p);
        rp->chosen->used = ++rp->clock;
    } else if ((rp->matched >= rp->chosen->n_tasks ||
                !same_task(p, rp->chosen, &rp->chosen->tasks[rp->matched], t) ||
                !chunks_as_recorded(p, rp->chosen, &rp->chosen->tasks[rp->matched])) &&
               !switch_recording(p, t, 0)) {
        return catch_up(p);
    }
    return replay_task(p, cl, t, out) ? -1 : 1;
}

int dg_plan_rp_free(dg_plan_t *p, uint64_t id)
{
    dg_plan_replay_t *rp = p->rp;
    if (!p->in_region)
        return 0;
    if (rp->mode == RP_CANDIDATE) {
        const rp_rec_t *r = rp->chosen;
        const rp_task_t *k = r && rp->matched < r->n_tasks ? &r->tasks[rp->matched] : NULL;
        if ((k && k->freed && id > rp->chunk0 && id - rp->chunk0 == k->free_rel) ||
            (r && switch_recording(p, NULL, id))) {
            replay_free(p, id);
            return 1;
        }
        if (catch_up(p))
            return -1;
    }
    rec_free_begin(p, id);
    return 0;
}

int dg_plan_rp_settle(dg_plan_t *p, int changes)
{
    dg_plan_replay_t *rp = p->rp;
    if (!rp || !p->in_region)
        return 0;
    int res = rp->mode == RP_CANDIDATE ? catch_up(p) : 0;
    if (changes)
        rec_drop(rp);
    return res;
}

/* ---- region end ---- */

int dg_plan_rp_region_end(dg_plan_t *p)
{
    dg_plan_replay_t *rp = p->rp;
    if (rp->mode == RP_CANDIDATE && rp->chosen && rp->matched != rp->chosen->n_tasks)
        switch_recording(p, NULL, 0); /* it stopped early: one of that length? */
    const rp_rec_t *r = rp->mode == RP_CANDIDATE ? rp->chosen : NULL;
    if (!r || rp->matched != r->n_tasks) { /* planned normally, or it stopped early */
        rp->misses++;
        if (rp->mode == RP_CANDIDATE && catch_up(p))
            return -1;
        if (rp->mode == RP_RECORDING) {
            rp->cur->end_op0 = rp->cur->n_ops;
            rp->st0 = p->st;
        }
        return 0;
    }
    /* The whole region matched: its end, then the state it leaves. */
    emit_recorded(p, r, r->end_op0, r->n_ops, NULL, NULL);
    stats_add(&p->st, &r->end_dst);
    for (uint32_t i = 0; i < r->n_chunks; i++) {
        const rp_chunk_t *rc = &r->chunks[i];
        dg_plan_chunk_t *c = rp->cp[i];
        c->version += rc->dversion;
        if (rc->writer)
            c->writer = rc->writer + rp->task0;
        for (uint32_t j = 0; j < rc->nbuf1; j++)
            if (!dg_plan_buf_get(p, c, r->bufs[rc->buf1 + j] & ~(1u << 31)))
                return -1;
    }
    for (uint32_t i = 0; i < r->n_futs; i++) { /* the region's futures still alive */
        const rp_future_t *fu = &r->futs[i];
        dg_plan_chunk_t *c = dg_plan_chunk_get(p, rp->chunk0 + fu->rel);
        if (!c && !(c = vf_chunk(p, rp->chunk0 + fu->rel)) && p->mem.failed)
            return -1; /* out of memory making it (said) */
        if (!c) {
            p->mem.failed = 1;
            dg_error(DAGGER_ERR_INTERNAL, "planner: replayed region %llu lost future %llu",
                     (unsigned long long)p->region, (unsigned long long)(rp->chunk0 + fu->rel));
            return -1;
        }
        c->version = fu->version;
        c->writer = fu->writer ? fu->writer + rp->task0 : 0;
        for (uint32_t j = 0; j < fu->nbuf1; j++)
            if (!dg_plan_buf_restore(p, c, r->bufs[fu->buf1 + j] & ~(1u << 31)))
                return -1;
    }
    if (rp->nvirtual) { /* a live future the recording did not keep: cannot be */
        p->mem.failed = 1;
        dg_error(DAGGER_ERR_INTERNAL, "planner: replayed region %llu left %u futures without "
                 "their state", (unsigned long long)p->region, rp->nvirtual);
        return -1;
    }
    if (cache_set(p, r->cache1))
        return -1;
    p->xfer_index = r->xfer_end;
    rp->mode = RP_IDLE;
    rp->chosen = NULL;
    rp->misses = 0;
    return 1;
}

void dg_plan_rp_region_ended(dg_plan_t *p)
{
    dg_plan_replay_t *rp = p->rp;
    if (rp->mode != RP_RECORDING)
        return;
    rp_rec_t *r = rp->cur;
    rp->mode = RP_IDLE;
    rp->cur = NULL;
    stats_sub(&r->end_dst, &p->st, &rp->st0);
    r->xfer_end = p->xfer_index;
    for (uint32_t i = 0; i < r->n_chunks; i++) {
        rp_chunk_t *rc = &r->chunks[i];
        dg_plan_chunk_t *c = dg_plan_chunk_get(p, rc->id);
        if (!c || !chunk_settled(c) || push_bufs(r, c, &rc->buf1, &rc->nbuf1))
            return; /* not left as it started: keep planning such regions */
        rc->dversion = c->version - rc->version0;
        rc->writer = c->writer > r->task0 ? c->writer - r->task0 : 0;
    }
    for (uint64_t id = r->chunk0 + 1; id <= p->next_chunk; id++) {
        dg_plan_chunk_t *c = dg_plan_chunk_get(p, id);
        if (!c)
            continue; /* freed in the region */
        if (!settled(c) || RESERVE(r, futs, 1))
            return;
        rp_future_t *fu = &r->futs[r->n_futs];
        fu->rel = id - r->chunk0;
        fu->version = c->version;
        fu->writer = c->writer > r->task0 ? c->writer - r->task0 : 0;
        if (push_bufs(r, c, &fu->buf1, &fu->nbuf1))
            return;
        r->n_futs++;
    }
    if (!r->n_tasks || enc_cache(p, &r->cache1, &r->n_cache1, &r->cap_cache1))
        return;
    r->valid = 1;
}

void dg_plan_rp_counts(const dg_plan_t *p, uint64_t *replayed, uint64_t *replanned,
                       uint64_t *switches)
{
    *replayed = p->rp->replayed;
    *replanned = p->rp->replanned;
    *switches = p->rp->switches;
}
