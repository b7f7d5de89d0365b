/* Regions: where tasks are submitted.
 *
 * Every rank opens the same regions and submits the same tasks in the same
 * order. Each rank plans the same global schedule, runs its share and moves
 * data by itself. dagger_region_end waits for the region's work and returns the
 * same status on every rank. The result equals running the tasks one after the
 * other in submission order. */
#ifndef DAGGER_REGION_H
#define DAGGER_REGION_H

#include <dagger/export.h>
#include <dagger/chunk.h>
#include <dagger/runtime.h>
#include <dagger/status.h>
#include <dagger/task.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dagger_region dagger_region_t;

/* Where tasks may run. Zero-initialised = anywhere on CPUs. Fields combine
 * (all must hold): kinds restricts processor kinds (GPU kinds only when set
 * here), ranks/nranks a set of ranks, procs/nprocs a set of exact processors
 * (global ids from dagger_procs(); has_proc/proc adds one more), and parts a
 * union: the task may run only on a processor that at least one part admits.
 * Each part is a scope of its own (ranks, kinds, procs; no parts inside
 * parts) and means what it would mean alone: kinds 0 in a part is CPU only,
 * unless the part names exact processors. So "rank 0's CPUs or rank 1's GPU"
 * is a union of {ranks {0}} and {ranks {1}, kinds CUDA}. A union opts into
 * the kinds its parts name. At most 64 parts, and 1024 ranks and processors
 * listed in all. A region's scope and a task's scope both apply (a processor
 * must satisfy both), and placement is owner-computes among what remains.
 * A scope nothing satisfies (or naming a rank or processor that does not
 * exist) is DAGGER_ERR_SCOPE on every rank. */
typedef struct dagger_scope {
    uint32_t kinds;          /* mask of dagger_proc_kind_t; 0 = CPU */
    const int *ranks;        /* NULL = all ranks */
    int nranks;
    int has_proc;            /* 1: run exactly on processor `proc` (as procs = {proc}) */
    int proc;
    const int *procs;        /* exact processors: any of these; NULL = no restriction */
    int nprocs;
    const struct dagger_scope *parts; /* a union of scopes; NULL = none */
    int nparts;
} dagger_scope_t;

#ifndef __cplusplus
/* A scope of one rank, for immediate use: &DAGGER_SCOPE_RANK(1) (in C++ too:
 * the end of this header). */
#define DAGGER_SCOPE_RANK(r) ((dagger_scope_t){.ranks = (const int[]){(r)}, .nranks = 1})
/* Exactly one processor (a global id from dagger_procs()). */
#define DAGGER_SCOPE_PROC(id) ((dagger_scope_t){.procs = (const int[]){(id)}, .nprocs = 1})
/* A union of scopes: &DAGGER_SCOPE_UNION(DAGGER_SCOPE_RANK(0), DAGGER_SCOPE_PROC(q)). */
#define DAGGER_SCOPE_UNION(...)                                                          \
    ((dagger_scope_t){.parts = (const dagger_scope_t[]){__VA_ARGS__},                    \
                      .nparts = (int)(sizeof((const dagger_scope_t[]){__VA_ARGS__}) /   \
                                      sizeof(dagger_scope_t))})
#endif

/* Opens a region. scope may be NULL (anywhere on CPUs). One region at a time
 * per runtime. Errors: DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_INVALID_ARG
 * (out NULL; a scope with a negative or > 64 rank count, or ranks NULL with
 * nranks > 0, or has_proc with a negative proc), DAGGER_ERR_STATE (a region
 * is already open: regions do not nest), DAGGER_ERR_SCOPE (the scope names
 * no processor: a rank or processor that does not exist). On error *out is
 * NULL. */
DAGGER_API
dagger_status_t dagger_region_begin(dagger_runtime_t *rt, const dagger_scope_t *scope,
                                    dagger_region_t **out);

/* Options of one submission. Zero-initialised = defaults. */
typedef struct dagger_task_opts {
    const dagger_scope_t *scope;  /* intersected with the region's scope */
    int priority;                 /* higher runs first among ready tasks; on a GPU, above
                                     0 also runs on the device's urgent streams, which it
                                     schedules first (DAGGER_GPU_PRIORITY) */
    const uint64_t *after;        /* explicit dependencies: task sequence numbers of
                                     earlier tasks of this region */
    int nafter;
    size_t return_size;           /* bytes this task returns; 0 = its codelet's
                                     return_size (at most DAGGER_MAX_RETURN) */
} dagger_task_opts_t;

/* Submits a task. seq_out (may be NULL) receives the task's sequence number
 * in the region; future_out (may be NULL) its future when the codelet
 * returns a value. The call plans the task and returns without waiting for
 * data. Errors (the task is not submitted and takes no sequence number; the
 * region stays usable): DAGGER_ERR_BAD_HANDLE (r not an open region, a
 * future argument that no task returned or that was freed),
 * DAGGER_ERR_NOT_FOUND (cl is not registered), DAGGER_ERR_INVALID_ARG (nargs
 * out of range or not the codelet's count, args NULL, an unknown argument
 * kind or access mode, a value of len > 0 at NULL or of len >
 * DAGGER_MAX_VALUE, after NULL with nafter > 0, a negative nafter, a
 * malformed scope), DAGGER_ERR_BAD_VIEW (a view of a chunk that does not
 * exist, or outside its chunk), DAGGER_ERR_DTYPE (a view of another dtype
 * than the codelet declares), DAGGER_ERR_SCOPE (no processor satisfies the
 * task's scope), DAGGER_ERR_CYCLE (after names a task not submitted before
 * this one), DAGGER_ERR_DIVERGENCE (uniformity checking found ranks
 * disagreeing). These are the same on every rank. A rank that cannot prepare
 * its share of the task (a buffer it cannot allocate) does not fail the
 * call: dagger_region_end returns that error on every rank. */
DAGGER_API
dagger_status_t dagger_submit(dagger_region_t *r, dagger_codelet_t cl, int nargs,
                              const dagger_arg_t *args, const dagger_task_opts_t *opts,
                              uint64_t *seq_out, dagger_future_t *future_out);

/* Variadic form: dagger_spawn(r, cl, DAGGER_INOUT(v), DAGGER_VALUE(&x, 8), DAGGER_END).
 * Errors: those of dagger_submit; DAGGER_ERR_INVALID_ARG (more than
 * DAGGER_MAX_ARGS arguments before DAGGER_END). */
#ifndef __cplusplus
#define DAGGER_END ((dagger_arg_t){.kind = (dagger_arg_kind_t)0})
#else
#define DAGGER_END (dagger_arg_t())
#endif
DAGGER_API
dagger_status_t dagger_spawn(dagger_region_t *r, dagger_codelet_t cl, ...);

/* Ends the region: plans the copy-back of data written away from its home,
 * waits until this rank's share is done, and agrees with the other ranks on
 * the status: DAGGER_OK, or the first failed task by sequence number (the
 * detail names its codelet, rank and message). The same on every rank. The
 * region handle is freed; the runtime stays usable after an error.
 * Errors: DAGGER_ERR_BAD_HANDLE (r NULL, already ended, or not a region),
 * DAGGER_ERR_TASK_FAILED, DAGGER_ERR_DIVERGENCE, DAGGER_ERR_PEER_LOST,
 * DAGGER_ERR_PROTOCOL, DAGGER_ERR_NO_MEMORY. */
DAGGER_API
dagger_status_t dagger_region_end(dagger_region_t *r);

/* For libraries that submit into their caller's region or open one of their
 * own (the arrays of dagger/array.h do): the region open on rt, or NULL in
 * *out when none is. Errors: DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_INVALID_ARG
 * (out NULL). */
DAGGER_API
dagger_status_t dagger_region_current(dagger_runtime_t *rt, dagger_region_t **out);

/* The runtime an open region belongs to, so a library can refuse a region of
 * another runtime. Errors: DAGGER_ERR_BAD_HANDLE (r NULL, already ended, or
 * not a region), DAGGER_ERR_INVALID_ARG (out NULL). */
DAGGER_API
dagger_status_t dagger_region_runtime(const dagger_region_t *r, dagger_runtime_t **out);

/* Counters of this rank's share of the current or last region, from the plan. */
typedef struct dagger_region_stats {
    uint64_t tasks;          /* tasks planned (all ranks) */
    uint64_t tasks_local;    /* tasks this rank runs */
    uint64_t transfers;      /* transfers planned between ranks (all ranks) */
    uint64_t copies;         /* copies between memory spaces of one rank (all ranks) */
    uint64_t slots;          /* temporary buffers this rank allocated for remote data */
    uint64_t bytes_sent;     /* bytes this rank sends */
    uint64_t bytes_received; /* (neither counts what a collect's or scatter's tasks copy
                                straight from or to another rank's memory: docs/arrays.md,
                                pulling) */
    uint64_t tasks_replayed; /* tasks whose plan this rank replayed from an earlier region
                                with the same planning inputs (DAGGER_PLAN_REPLAY) */
} dagger_region_stats_t;
/* Errors: DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_INVALID_ARG (out NULL). */
DAGGER_API
dagger_status_t dagger_region_stats(dagger_runtime_t *rt, dagger_region_stats_t *out);

/* Uniformity checking: with on = 1, every submission, chunk creation and
 * free, region begin and end compares the planning inputs across ranks; a
 * divergence returns DAGGER_ERR_DIVERGENCE on every rank naming the first
 * divergent task and the ranks that disagree, instead of a hang or a wrong
 * result. Also DAGGER_CHECK_UNIFORMITY=1. The order in which ranks register
 * codelets is not an input (names identify them); their descriptions are,
 * checked with each task that uses one.
 * Collective: every rank passes the same value. Ranks that pass different
 * values get DAGGER_ERR_DIVERGENCE naming who passed what, and checking stays
 * as it was on every rank. Turning checking on when the ranks already planned
 * different things while it was off switches it on and returns
 * DAGGER_ERR_DIVERGENCE saying so (every later check would fail).
 * Errors: DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_DIVERGENCE (as above). */
DAGGER_API
dagger_status_t dagger_check_uniformity(dagger_runtime_t *rt, int on);

/* Collective: checks that bytes are identical on every rank (only while
 * uniformity checking is on; otherwise returns DAGGER_OK at once).
 * DAGGER_ERR_DIVERGENCE names the ranks that disagree. Errors also:
 * DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_INVALID_ARG (bytes NULL with
 * len > 0, whether checking is on or not). */
DAGGER_API
dagger_status_t dagger_check_uniform(dagger_runtime_t *rt, const void *bytes, size_t len);

#ifdef __cplusplus
}

/* C++: DAGGER_SCOPE_RANK/PROC/UNION make an object that holds the scope and
 * the storage its lists point into; & of it is the const dagger_scope_t *.
 * A C compound literal lives until the end of its block, a C++ temporary
 * only until the end of its full expression: pass &DAGGER_SCOPE_RANK(1)
 * straight to the call, or keep the object (auto s = DAGGER_SCOPE_RANK(1);
 * ... &s). A union's parts point into its arguments' lists, so a union kept
 * beyond its full expression needs parts that live as long (named scopes). */
namespace dagger_cxx {
struct scope1 {
    int id;
    dagger_scope_t s;
    scope1(int one, bool proc) : id(one), s() { point(proc); }
    scope1(const scope1 &o) : id(o.id), s(o.s) { point(o.s.procs != nullptr); }
    scope1 &operator=(const scope1 &) = delete;
    const dagger_scope_t *operator&() const { return &s; }
    operator const dagger_scope_t &() const { return s; }

  private:
    void point(bool proc)
    {
        if (proc) {
            s.procs = &id;
            s.nprocs = 1;
        } else {
            s.ranks = &id;
            s.nranks = 1;
        }
    }
};

template <size_t N> struct scope_union {
    dagger_scope_t parts[N];
    dagger_scope_t s;
    template <typename... P> explicit scope_union(const P &...p) : parts{p...}, s()
    {
        point();
    }
    scope_union(const scope_union &o) : s()
    {
        for (size_t i = 0; i < N; i++)
            parts[i] = o.parts[i];
        point();
    }
    scope_union &operator=(const scope_union &) = delete;
    const dagger_scope_t *operator&() const { return &s; }
    operator const dagger_scope_t &() const { return s; }

  private:
    void point()
    {
        s.parts = parts;
        s.nparts = (int)N;
    }
};

template <typename... P> inline scope_union<sizeof...(P)> union_of(const P &...p)
{
    return scope_union<sizeof...(P)>(p...);
}
} // namespace dagger_cxx

#define DAGGER_SCOPE_RANK(r) dagger_cxx::scope1((r), false)
#define DAGGER_SCOPE_PROC(id) dagger_cxx::scope1((id), true)
#define DAGGER_SCOPE_UNION(...) dagger_cxx::union_of(__VA_ARGS__)
#endif
#endif
