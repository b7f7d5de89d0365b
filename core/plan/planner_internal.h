/* The planner's state, shared by the files of core/plan/. */
#ifndef DG_PLAN_INTERNAL_H
#define DG_PLAN_INTERNAL_H

#include "core/plan/hist.h"
#include "core/plan/idmap.h"
#include "core/plan/plan.h"

typedef struct dg_plan_loc {
    int32_t rank;
    uint32_t space;
} dg_plan_loc_t;

/* The elements of a chunk that are current at one location. */
typedef struct dg_plan_cur {
    dg_plan_loc_t loc;
    dg_plan_spans_t cur;
} dg_plan_cur_t;

/* A buffer of this rank: the chunk's home storage or a slot, and the ops on it. */
typedef struct dg_plan_bufst {
    uint32_t space;
    uint32_t home;
    dg_plan_hist_t hist;
} dg_plan_bufst_t;

typedef struct dg_plan_chunk {
    uint64_t id;
    int32_t owner;
    uint32_t home_space;
    uint32_t is_future;
    uint32_t touched;              /* on the region's touched list */
    uint64_t version;
    dg_plan_geom_t g;
    dg_plan_spans_t all;           /* every element of the chunk */
    dg_plan_hist_t logical;        /* task-level accesses in this region */
    dg_plan_cur_t *cur;            /* currency, kept on every rank */
    uint32_t ncur, capcur;
    dg_plan_bufst_t *bufs;         /* this rank's buffers of the chunk */
    uint32_t nbufs, capbufs;
    struct dg_plan_chunk *tprev, *tnext;
    /* cold: read by fetch and after failures only */
    uint64_t writer;               /* the last task that wrote it (0: none yet) */
    uint32_t taint;                /* a failure's tag: its contents may be garbage (0: none) */
    uint32_t rp_index;             /* its index in the recording stamped rp_stamp (replay.c) */
    uint64_t rp_stamp;
} dg_plan_chunk_t;

typedef struct dg_plan_codelet {
    uint32_t id;
    uint32_t kinds;
    uint32_t ret_size;
    uint32_t ndtypes;
    dagger_dtype_t *dtypes;
    double cost;
    char *name;
    size_t name_len;
    uint64_t hash;                 /* of name and description: hashed with each task using it */
} dg_plan_codelet_t;

/* One access of the task being planned. */
typedef struct dg_plan_acc {
    dg_plan_chunk_t *c;
    dg_plan_spans_t spans;
    dg_plan_loc_t loc;
    uint32_t read, write;
    uint32_t arg;                  /* argument index, or UINT32_MAX for the produced future */
} dg_plan_acc_t;

typedef struct dg_plan_prank {
    uint32_t n[DG_PLAN_NKINDS];    /* processors per kind (n[DG_PLAN_CPU]: threads) */
    uint32_t first_proc;
} dg_plan_prank_t;

/* A rank's processors are numbered by kind (CPU threads, then each device
 * kind in dg_plan_kind_t order); its devices are memory spaces 1.. in the
 * same order. */
static inline uint32_t dg_plan_kind_first(const dg_plan_prank_t *r, dg_plan_kind_t k)
{
    uint32_t f = 0;
    for (int j = 0; j < (int)k; j++)
        f += r->n[j];
    return f;
}

static inline uint32_t dg_plan_rank_nprocs(const dg_plan_prank_t *r)
{
    return dg_plan_kind_first(r, (dg_plan_kind_t)DG_PLAN_NKINDS);
}

static inline dg_plan_kind_t dg_plan_kind_of(const dg_plan_prank_t *r, uint32_t local)
{
    int k = 0;
    while (k < DG_PLAN_NKINDS - 1 && local >= r->n[k]) {
        local -= r->n[k];
        k++;
    }
    return (dg_plan_kind_t)k;
}

/* Explicit dependencies reach back through this ring of recent tasks. */
typedef struct dg_plan_taskrec {
    uint64_t task;
    uint64_t launch_seq;           /* on this rank, 0 if it runs elsewhere */
    int32_t rank;
} dg_plan_taskrec_t;

/* Kept slot allocations of one local memory space: sizes and counts. */
typedef struct dg_plan_cache {
    uint64_t bytes;
    uint64_t *sizes;
    uint32_t *counts;
    uint32_t n, cap;
} dg_plan_cache_t;

/* Owned copy of a scope (region scope): the scope and its parts, with every
 * list in one block of words. */
typedef struct dg_plan_scope_copy {
    dg_plan_scope_t s;
    dg_plan_scope_t *parts;
    uint32_t *words;
    size_t nwords;
} dg_plan_scope_copy_t;

typedef struct dg_plan_replay dg_plan_replay_t;

struct dg_plan {
    dg_plan_params_t prm;
    dg_plan_prank_t *ranks;
    /* The lowest rank with a processor of some kind in mask k (-1: none),
     * for scopes without lists: the table never changes, and every task
     * without a scope asks (placement's cost per submission). */
    int32_t lowest_any[DG_PLAN_KINDS_ALL + 1];
    uint32_t nprocs;
    dg_plan_mem_t mem;
    dg_plan_hctx_t hc;
    dg_plan_idmap_t chunks, codelets;
    uint64_t next_chunk, next_task, next_seq;
    /* Deleted futures kept with their span and currency storage for the next
     * future (chunks.c): a value-returning task makes one, on every rank. */
    dg_plan_chunk_t *spare_futures;
    uint32_t nspare_futures;
    /* The uniformity hash (dg_plan_hash) in two parts: shash over every
     * planning input but by-value bytes, vhash over those (a program's own
     * structs may carry padding that differs between ranks; only checking
     * mode compares them). */
    uint64_t shash, vhash;

    int in_region;
    uint64_t region;               /* id of the current / last region */
    uint64_t region_first_task;
    uint64_t xfer_index;           /* transfers planned in this region */
    uint64_t region_nops;          /* ops this rank emitted in this region */
    dg_plan_scope_copy_t rscope;
    dg_plan_chunk_t *touched_head, *touched_tail;

    dg_plan_taskrec_t *ring;
    uint32_t ring_cap;

    dg_plan_cache_t *cache;        /* per local memory space */
    uint32_t nspaces;

    /* scratch, reused by every submission */
    dg_plan_acc_t *acc;
    uint32_t nacc, capacc;
    dg_plan_u64vec_t deps, ldeps, xdeps;
    dg_plan_spans_t s_stale, s_piece, s_tmp, s_all;
    dg_plan_op_arg_t *oargs;
    uint32_t capoargs;

    dg_plan_stats_t st;
    int tainted;                   /* some chunk was ever tainted: follow reads of them */
    dg_plan_replay_t *rp;          /* recorded regions (replay.c); NULL: replay off */
    int silent;                    /* replay.c catching up: plan again, emit nothing */
};

/* submit.c: the uniformity hash of one task; validation, placement and
 * planning of one task (no replay). */
void dg_plan_hash_task(dg_plan_t *p, uint64_t tid, const dg_plan_codelet_t *cl,
                       const dg_plan_task_desc_t *t);
/* The same in two parts: the task's shape, which a replayed task has as
 * recorded, and the hash's step given that shape. */
uint64_t dg_plan_task_shape(const dg_plan_codelet_t *cl, const dg_plan_task_desc_t *t);
void dg_plan_hash_task_shaped(dg_plan_t *p, uint64_t tid, uint64_t shape,
                              const dg_plan_task_desc_t *t);
dagger_status_t dg_plan_plan_task(dg_plan_t *p, const dg_plan_task_desc_t *t,
                                  dg_plan_submitted_t *out);

/* emit.c */
uint64_t dg_plan_emit(dg_plan_t *p, dg_plan_op_t *op, dg_plan_u64vec_t *deps);

/* procs.c */
dagger_status_t dg_plan_procs_init(dg_plan_t *p);
/* DAGGER_ERR_INVALID_ARG for a malformed scope, DAGGER_ERR_SCOPE for one that
 * names a rank or processor that does not exist; why[] says which. */
dagger_status_t dg_plan_scope_check(const dg_plan_t *p, const dg_plan_scope_t *s, char *why,
                                    size_t len);
void dg_plan_scope_hash(uint64_t *h, const dg_plan_scope_t *s);
dagger_status_t dg_plan_scope_copy(dg_plan_t *p, dg_plan_scope_copy_t *dst,
                                   const dg_plan_scope_t *src);
void dg_plan_scope_copy_release(dg_plan_t *p, dg_plan_scope_copy_t *c);

/* scope_match.c: the processors a task scope and a region scope admit
 * together, with the kinds allowed (want: the scopes'; kinds: also the
 * codelet's implementations). */
typedef struct dg_plan_scopes {
    const dg_plan_scope_t *s[2];   /* task, region; NULL = no restriction by lists */
    uint32_t kinds;
} dg_plan_scopes_t;
uint32_t dg_plan_scope_kinds(const dg_plan_scope_t *s);
void dg_plan_scopes_init(dg_plan_scopes_t *sc, const dg_plan_scope_t *task,
                         const dg_plan_scope_t *region, uint32_t impl, uint32_t *want);
int dg_plan_scopes_proc_ok(const dg_plan_t *p, const dg_plan_scopes_t *sc, int32_t r,
                           uint32_t local);
int dg_plan_scopes_rank_ok(const dg_plan_t *p, const dg_plan_scopes_t *sc, int32_t r);
/* The lowest rank with an admitted processor, or -1. */
int32_t dg_plan_scopes_lowest_rank(const dg_plan_t *p, const dg_plan_scopes_t *sc);
/* When the scopes admit only named CPU threads of rank r: those (sorted,
 * without repeats, at most cap), else 0 (any thread of the rank). */
uint32_t dg_plan_scopes_cpus(const dg_plan_t *p, const dg_plan_scopes_t *sc, int32_t r,
                             uint32_t *out, uint32_t cap);

/* place.c: fills loc and proc, or returns DAGGER_ERR_SCOPE with why[]. */
dagger_status_t dg_plan_place(dg_plan_t *p, uint64_t task, const dg_plan_codelet_t *cl,
                              const dg_plan_scope_t *scope, dg_plan_loc_t *loc, uint32_t *proc,
                              char *why, size_t len);

/* place.c: a region scope is checked and must admit some processor. */
dagger_status_t dg_plan_scope_region(const dg_plan_t *p, const dg_plan_scope_t *scope, char *why,
                                     size_t len);

/* submit.c: the bytes a task returns (its own return_size, else its
 * codelet's; 0: none), and the layout of the future that holds them. */
uint32_t dg_plan_ret_size(const dg_plan_codelet_t *cl, const dg_plan_task_desc_t *t);
void dg_plan_future_geom(uint32_t ret_size, dg_plan_geom_t *g);

/* planner.c: frees a live chunk now (the body of dg_plan_chunk_free), and
 * the part of it that goes into the uniformity hash. */
void dg_plan_free_now(dg_plan_t *p, dg_plan_chunk_t *c);
void dg_plan_hash_free(dg_plan_t *p, uint64_t id);

/* chunks.c */
dg_plan_chunk_t *dg_plan_chunk_get(const dg_plan_t *p, uint64_t id);
/* Chunk id once more after a catch-up (replay.c), which makes the region's
 * futures anew: NULL, the state lost and an error naming fn, when it is gone. */
dg_plan_chunk_t *dg_plan_chunk_again(dg_plan_t *p, uint64_t id, const char *fn);
dg_plan_chunk_t *dg_plan_chunk_new(dg_plan_t *p, int32_t owner, uint32_t home_space,
                                   const dg_plan_geom_t *g, int is_future);
/* The same with the id given (one the counter handed out already, whose
 * chunk was not made then: a replayed region's future, replay.c); the
 * counter stays. */
dg_plan_chunk_t *dg_plan_chunk_make(dg_plan_t *p, uint64_t id, int32_t owner,
                                    uint32_t home_space, const dg_plan_geom_t *g, int is_future);
void dg_plan_chunk_touch(dg_plan_t *p, dg_plan_chunk_t *c);
void dg_plan_chunk_untouch(dg_plan_t *p, dg_plan_chunk_t *c);
void dg_plan_chunk_delete(dg_plan_t *p, dg_plan_chunk_t *c);
dg_plan_cur_t *dg_plan_cur_find(dg_plan_chunk_t *c, dg_plan_loc_t loc);
dg_plan_cur_t *dg_plan_cur_get(dg_plan_t *p, dg_plan_chunk_t *c, dg_plan_loc_t loc);
int dg_plan_loc_is_home(const dg_plan_chunk_t *c, dg_plan_loc_t loc);

/* moves.c */
dg_plan_bufst_t *dg_plan_buf_find(dg_plan_chunk_t *c, uint32_t space);
dg_plan_bufst_t *dg_plan_buf_get(dg_plan_t *p, dg_plan_chunk_t *c, uint32_t space);
/* A buffer that exists already, without history (a replayed region's end:
 * its ALLOC was replayed); emits nothing. */
dg_plan_bufst_t *dg_plan_buf_restore(dg_plan_t *p, dg_plan_chunk_t *c, uint32_t space);
void dg_plan_buf_access(dg_plan_t *p, dg_plan_bufst_t *b, const dg_plan_spans_t *s, int write,
                        uint64_t seq);
void dg_plan_make_current(dg_plan_t *p, dg_plan_chunk_t *c, dg_plan_loc_t loc,
                          const dg_plan_spans_t *want);
void dg_plan_note_write(dg_plan_t *p, dg_plan_chunk_t *c, dg_plan_loc_t loc,
                        const dg_plan_spans_t *s);
void dg_plan_copy_home(dg_plan_t *p, dg_plan_chunk_t *c);
void dg_plan_release_bufs(dg_plan_t *p, dg_plan_chunk_t *c, int chunk_gone);
uint64_t dg_plan_signal(dg_plan_t *p, int32_t from, int32_t to, uint64_t after_seq);

#endif
