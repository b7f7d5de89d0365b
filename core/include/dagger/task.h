/* Processors, codelets, tasks and futures.
 *
 * A codelet is a named computation with one implementation per processor kind
 * (CPU now; CUDA and HIP slots). It is identified across ranks by its name,
 * never by a function pointer. A task is one call of a codelet on arguments
 * (views with an access mode, by-value bytes, futures of earlier tasks),
 * submitted inside a region (dagger/region.h). A future is the value a task
 * returns: fetched and freed here. */
#ifndef DAGGER_TASK_H
#define DAGGER_TASK_H

#include <dagger/export.h>
#include <dagger/chunk.h>
#include <dagger/runtime.h>
#include <dagger/status.h>
#include <dagger/types.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dagger_task dagger_task_t; /* the running task, inside an implementation */

/* An implementation returns DAGGER_OK, or fails with dagger_task_fail(). */
typedef int (*dagger_impl_fn)(dagger_task_t *t);

/* Processor kinds (dagger_proc_kind_t, DAGGER_PROC_*): dagger/types.h. */

/* The global processor table (identical on every rank, sorted by rank, kind,
 * index). */
typedef struct dagger_proc_info {
    int id;
    int rank;
    dagger_proc_kind_t kind;
    int index;               /* thread or device index within the rank */
} dagger_proc_info_t;

/* Number of processors in the job; with procs non-NULL, writes up to cap
 * entries (none for cap <= 0). */
DAGGER_API
int dagger_procs(dagger_runtime_t *rt, dagger_proc_info_t *procs, int cap);

#define DAGGER_MAX_ARGS 16
/* Largest value a task may return, in bytes (declared at registration or per
 * submission, so every rank plans the same size). Results are data: a future
 * can be read, overwritten or updated in place by later tasks on any rank. */
#define DAGGER_MAX_RETURN (1 << 30)
/* Largest by-value argument (DAGGER_VALUE), in bytes: values are copied at
 * submission and travel inside the plan's messages; pass more as a chunk. */
#define DAGGER_MAX_VALUE (1 << 20)

typedef struct dagger_codelet_desc {
    const char *name;          /* unique; the id is a hash of it */
    dagger_impl_fn cpu;        /* CPU implementation (required unless a GPU one is given) */
    dagger_impl_fn cuda;       /* runs on the host thread that drives the device, with the
                                  device's stream current; NULL if none */
    dagger_impl_fn hip;
    size_t return_size;        /* bytes of the value the task returns (0: none; a
                                  submission may declare its own, dagger_task_opts_t) */
    int nargs;                 /* > 0: check the argument count and... */
    const dagger_dtype_t *arg_dtypes; /* ...when not NULL, the dtype of each view argument
                                         (0 for "any", for value arguments) */
    double cost;               /* optional relative cost hint; 0 = unknown */
} dagger_codelet_desc_t;

typedef struct dagger_codelet {
    uint32_t id;
} dagger_codelet_t;

/* Registers a codelet (collective: every rank registers the same codelets).
 * Registering the same name again with the same description returns the same
 * codelet. Errors: DAGGER_ERR_INVALID_ARG (no name, no implementation,
 * return_size > DAGGER_MAX_RETURN, a name of 64 characters or more, nargs
 * below 0 or above DAGGER_MAX_ARGS, an unknown dtype in arg_dtypes, desc or
 * out NULL), DAGGER_ERR_BAD_HANDLE (rt), DAGGER_ERR_EXISTS (same name,
 * different description), DAGGER_ERR_TYPE_CONFLICT (two names with the same
 * hash). */
DAGGER_API
dagger_status_t dagger_codelet_register(dagger_runtime_t *rt, const dagger_codelet_desc_t *desc,
                                        dagger_codelet_t *out);

/* A future: the value a task returns. A value, identical on every rank. */
typedef struct dagger_future {
    uint64_t id;
} dagger_future_t;

/* Collective: the value of a future, the same bytes on every rank. *len gets
 * its length. Outside a region, or inside one (it then waits for this rank's
 * planned work). Errors: DAGGER_ERR_BAD_HANDLE (rt, or a future no task
 * returned, or one already freed), DAGGER_ERR_INVALID_ARG (buf NULL for a
 * value of size > 0), DAGGER_ERR_OVERFLOW (cap too small).
 * After a failure: when a failure spoiled the value (the failed task or a
 * later task of its region wrote it: those are skipped on the failing rank,
 * or may have read what it left; or, in a later region, a task computed it
 * from spoiled data; until a task overwrites it whole from clean data), fetch
 * returns that failure's status (DAGGER_ERR_TASK_FAILED, or the status the
 * runtime gave the task, e.g. DAGGER_ERR_OVERFLOW) on every rank, with its
 * codelet, rank and message in the detail, and leaves buf untouched; it never
 * returns DAGGER_OK with stale bytes. Values written before the failure fetch
 * normally. Inside a region the check is collective too: every rank agrees
 * on the failures so far. */
DAGGER_API
dagger_status_t dagger_fetch(dagger_runtime_t *rt, dagger_future_t f, void *buf, size_t cap,
                             size_t *len);

/* Collective: releases a future's value on every rank (its memory, and the
 * runtime's record of it). Allowed inside a region after the last task that
 * reads it was submitted. Later use of f is DAGGER_ERR_BAD_HANDLE. A
 * long-running program releases the futures it no longer needs, or memory
 * grows with every task that returns a value. Errors: DAGGER_ERR_BAD_HANDLE
 * (rt, or a future no task returned, or one already freed). */
DAGGER_API
dagger_status_t dagger_future_free(dagger_runtime_t *rt, dagger_future_t f);

/* One argument of a task. Build them with the DAGGER_IN/OUT/INOUT/VALUE/FUTURE
 * macros and the _CHUNK ones (in C and in C++). */
typedef enum dagger_arg_kind {
    DAGGER_ARG_VIEW = 1,
    DAGGER_ARG_VALUE = 2,
    DAGGER_ARG_FUTURE = 3,
    DAGGER_ARG_CHUNK = 4 /* the whole of view.chunk; the rest of view unused */
} dagger_arg_kind_t;

typedef struct dagger_arg {
    dagger_arg_kind_t kind;
    dagger_access_t mode;      /* for views; for futures 0 (= IN), IN, OUT or INOUT */
    dagger_view_t view;
    const void *bytes;         /* for values: copied at submission */
    size_t len;
    dagger_future_t future;
} dagger_arg_t;

/* (C++: the end of this header.) */
#ifndef __cplusplus
#define DAGGER_IN(v)    ((dagger_arg_t){.kind = DAGGER_ARG_VIEW, .mode = DAGGER_MODE_IN, .view = (v)})
#define DAGGER_OUT(v)   ((dagger_arg_t){.kind = DAGGER_ARG_VIEW, .mode = DAGGER_MODE_OUT, .view = (v)})
#define DAGGER_INOUT(v) ((dagger_arg_t){.kind = DAGGER_ARG_VIEW, .mode = DAGGER_MODE_INOUT, .view = (v)})
#define DAGGER_VALUE(ptr, n) ((dagger_arg_t){.kind = DAGGER_ARG_VALUE, .bytes = (ptr), .len = (n)})
#define DAGGER_FUTURE(f) ((dagger_arg_t){.kind = DAGGER_ARG_FUTURE, .future = (f)})
/* The whole of chunk c: DAGGER_IN(dagger_view(rt, c)) and so on, without
 * building the view (dagger_submit looks the chunk up; a chunk that does not
 * exist is DAGGER_ERR_BAD_HANDLE there, naming the argument). */
#define DAGGER_IN_CHUNK(c) \
    ((dagger_arg_t){.kind = DAGGER_ARG_CHUNK, .mode = DAGGER_MODE_IN, .view = {.chunk = (c)}})
#define DAGGER_OUT_CHUNK(c) \
    ((dagger_arg_t){.kind = DAGGER_ARG_CHUNK, .mode = DAGGER_MODE_OUT, .view = {.chunk = (c)}})
#define DAGGER_INOUT_CHUNK(c) \
    ((dagger_arg_t){.kind = DAGGER_ARG_CHUNK, .mode = DAGGER_MODE_INOUT, .view = {.chunk = (c)}})
/* A future as data: read (same as DAGGER_FUTURE), overwritten, or updated in
 * place by a task on any rank; its bytes move where the task runs, and fetch
 * and later readers see the update. */
#define DAGGER_FUTURE_IN(f) DAGGER_FUTURE(f)
#define DAGGER_FUTURE_OUT(f) \
    ((dagger_arg_t){.kind = DAGGER_ARG_FUTURE, .mode = DAGGER_MODE_OUT, .future = (f)})
#define DAGGER_FUTURE_INOUT(f) \
    ((dagger_arg_t){.kind = DAGGER_ARG_FUTURE, .mode = DAGGER_MODE_INOUT, .future = (f)})
#endif

/* ---- Inside a running task ---- */

/* What an implementation sees of a view argument: the data pointer is the view's
 * origin in this memory space; element (i0, i1, ...) of the view is at
 * data + (i0*strides[0] + i1*strides[1] + ...) * elem_size. Only the elements the
 * modifier selects belong to the task. */
typedef struct dagger_slot {
    void *data;
    dagger_dtype_t dtype;
    int ndims;
    dagger_modifier_t mod;
    size_t dims[DAGGER_MAX_DIMS];    /* the view's extents */
    size_t strides[DAGGER_MAX_DIMS]; /* in elements */
    size_t count;                    /* product of dims (the box, ignoring the modifier) */
    size_t bytes;                    /* for values and futures: their length */
} dagger_slot_t;

/* Argument i of the running task, and their count. For a value or a future,
 * data points to its bytes and bytes is the length. Bad input (a NULL t, an
 * index out of range) gives the sentinels of dagger.h. */
DAGGER_API
dagger_slot_t dagger_task_arg(dagger_task_t *t, int i);
DAGGER_API
int dagger_task_nargs(dagger_task_t *t);
/* Only the data pointer of argument i (dagger_task_arg(t, i).data): for
 * codelets that know their arguments' shapes, without building the slot.
 * NULL for a NULL t or an index out of range. */
DAGGER_API
void *dagger_task_data(dagger_task_t *t, int i);

/* Writes the first len bytes of the task's return value (the buffer starts
 * zeroed; bytes no call writes keep what they held, so a second, shorter
 * call leaves the end of the first one, as writes through dagger_task_result
 * do). len larger than the declared size fails the task: the region ends
 * with DAGGER_ERR_OVERFLOW on every rank, naming the task, its codelet and
 * both sizes, and fetching the value returns that error. Also returns it.
 * Errors: DAGGER_ERR_INVALID_ARG (t NULL, value NULL with len > 0),
 * DAGGER_ERR_STATE (the codelet declares no return value),
 * DAGGER_ERR_OVERFLOW (len > return_size, as above). */
DAGGER_API
dagger_status_t dagger_task_return(dagger_task_t *t, const void *value, size_t len);

/* The task's return value buffer, zeroed before the task starts, to fill in
 * place (e.g. a matrix); *size gets its declared size. NULL (size 0) when the
 * task returns nothing. */
DAGGER_API
void *dagger_task_result(dagger_task_t *t, size_t *size);

/* Marks the task failed with a message; returns DAGGER_ERR_TASK_FAILED so an
 * implementation can end with `return dagger_task_fail(t, "...", ...);`. The
 * region then ends with that error on every rank. */
DAGGER_API
int dagger_task_fail(dagger_task_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The task's sequence number (the one dagger_submit gave) and its rank. */
DAGGER_API
uint64_t dagger_task_seq(dagger_task_t *t);
DAGGER_API
int dagger_task_rank(dagger_task_t *t);
/* The global id (as dagger_procs() lists it) of the processor running the
 * task: its device for a device task; for a CPU task the exact processor its
 * scope named, or the worker that took it. -1 when the thread that submitted
 * work runs it while waiting (it helps with tasks that any CPU thread of the
 * rank may run, never with exact ones). */
DAGGER_API
int dagger_task_proc(dagger_task_t *t);

/* For device implementations: the device stream (cudaStream_t / hipStream_t,
 * or the test device kind's stream object); NULL for a CPU task or a NULL t. */
DAGGER_API
void *dagger_task_stream(dagger_task_t *t);

/* For device implementations: a check that runs once the work the task
 * queued on its stream is done. A device implementation only queues work
 * and returns; what that work finds (a factorisation's info, in device
 * memory) is known later. Queue a copy of it into host memory, then register
 * a check: the processor actor runs it when the task's work has passed, before
 * the task counts as finished, so a failure it reports is the task's failure,
 * on every rank like any other (dagger_task_fail's message form). Nothing
 * waits for the device. ok = 0: the device work itself failed (already
 * reported); the check then only releases what it holds. Return nonzero,
 * with a message in detail (at most cap bytes), when the task failed. */
typedef int (*dagger_task_check_fn)(void *arg, int ok, char *detail, size_t cap);

/* Registers fn(arg) as t's check (at most one per task: a second call
 * replaces the first; fn = NULL removes it). A CPU task's work is done when
 * its implementation returns, so a CPU task's check runs right after it.
 * DAGGER_ERR_INVALID_ARG for a NULL t. */
DAGGER_API
dagger_status_t dagger_task_after(dagger_task_t *t, dagger_task_check_fn fn, void *arg);

#ifdef __cplusplus
}

/* C++ has neither compound literals nor (before C++20, and never out of
 * order) designated initialisers: there the argument macros call these. */
namespace dagger_cxx {
inline dagger_arg_t arg(dagger_arg_kind_t kind, dagger_access_t mode, const dagger_view_t &view,
                        const void *bytes, size_t len, dagger_future_t future)
{
    dagger_arg_t a = {};
    a.kind = kind, a.mode = mode, a.view = view;
    a.bytes = bytes, a.len = len, a.future = future;
    return a;
}

inline dagger_arg_t view_arg(dagger_access_t mode, const dagger_view_t &v)
{
    return arg(DAGGER_ARG_VIEW, mode, v, nullptr, 0, dagger_future_t());
}

inline dagger_arg_t chunk_arg(dagger_access_t mode, dagger_chunk_t c)
{
    dagger_view_t v = {};
    v.chunk = c;
    return arg(DAGGER_ARG_CHUNK, mode, v, nullptr, 0, dagger_future_t());
}

inline dagger_arg_t value_arg(const void *bytes, size_t len)
{
    return arg(DAGGER_ARG_VALUE, dagger_access_t(), dagger_view_t(), bytes, len, dagger_future_t());
}

inline dagger_arg_t future_arg(dagger_access_t mode, dagger_future_t f)
{
    return arg(DAGGER_ARG_FUTURE, mode, dagger_view_t(), nullptr, 0, f);
}
} // namespace dagger_cxx

#define DAGGER_IN(v) dagger_cxx::view_arg(DAGGER_MODE_IN, (v))
#define DAGGER_OUT(v) dagger_cxx::view_arg(DAGGER_MODE_OUT, (v))
#define DAGGER_INOUT(v) dagger_cxx::view_arg(DAGGER_MODE_INOUT, (v))
#define DAGGER_IN_CHUNK(c) dagger_cxx::chunk_arg(DAGGER_MODE_IN, (c))
#define DAGGER_OUT_CHUNK(c) dagger_cxx::chunk_arg(DAGGER_MODE_OUT, (c))
#define DAGGER_INOUT_CHUNK(c) dagger_cxx::chunk_arg(DAGGER_MODE_INOUT, (c))
#define DAGGER_VALUE(ptr, n) dagger_cxx::value_arg((ptr), (n))
#define DAGGER_FUTURE(f) dagger_cxx::future_arg((dagger_access_t)0, (f))
#define DAGGER_FUTURE_IN(f) DAGGER_FUTURE(f)
#define DAGGER_FUTURE_OUT(f) dagger_cxx::future_arg(DAGGER_MODE_OUT, (f))
#define DAGGER_FUTURE_INOUT(f) dagger_cxx::future_arg(DAGGER_MODE_INOUT, (f))
#endif
#endif
