/* Public region calls: begin, submit, end, and the processor table. */
#include <dagger/coll.h>
#include <dagger/region.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/runtime/scope.h"
#include "core/runtime/planner.h"
#include "core/runtime/tasks.h"
#include "core/base/common.h"
#include "core/base/handles.h"
#include "core/base/hash.h"
#include "core/base/spmd_caller.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"
#include "core/runtime/region_query.h"
#include "core/runtime/trace_session.h"
#include "transport/coll.h"

_Static_assert(DAGGER_MAX_VALUE == DG_PLAN_MAX_VALUE, "the planner's value limit is the API's");

/* ------------------------------------------------------------ begin */

dagger_status_t dagger_region_begin(dagger_runtime_t *rt, const dagger_scope_t *scope,
                                    dagger_region_t **out)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_region_begin");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t in_task = dg_spmd_allowed("dagger_region_begin");
    if (in_task != DAGGER_OK)
        return in_task;
    DG_CHECK_ARG(out, "dagger_region_begin: NULL region output");
    *out = NULL;
    if (t->region)
        return dg_error(DAGGER_ERR_STATE, "dagger_region_begin: region %llu is still open; regions "
                        "do not nest (end it first)", (unsigned long long)t->region->id);
    dg_scope_buf_t sb;
    dagger_status_t st = dg_scope_convert(scope, &sb, "dagger_region_begin");
    if (st != DAGGER_OK)
        return st;
    dg_check_point_t cp = {.kind = DG_CHECK_REGION_BEGIN};
    cp.hash = dg_scope_hash(dg_plan_hash(t->plan), &sb.s);
    st = dg_tasks_check(t, &cp);
    if (st != DAGGER_OK)
        return st;
    dagger_region_t *r = dg_calloc(1, sizeof(*r));
    if (!r)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_region_begin: out of memory");
    st = dg_planner_region_begin(t, scope ? &sb.s : NULL);
    if (st != DAGGER_OK) {
        free(r);
        char why[512]; /* dg_error writes the detail buffer: copy it first */
        snprintf(why, sizeof(why), "%s", dagger_error_detail());
        return dg_error(st, "dagger_region_begin: %s", why);
    }
    if (dg_handle_add_kind(r, DG_HANDLE_REGION)) {
        free(r);
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_region_begin: too many live handles");
    }
    r->tasks = t;
    r->limits_ranks = scope && (scope->nranks > 0 || scope->nprocs > 0 || scope->has_proc ||
                                scope->nparts > 0);
    r->id = ++t->regions; /* the same on every rank */
    dg_carry_region_begin(t);
    dg_tx_note_region(t->tx, r->id);
    if (DG_TRACE_ON())
        dg_trace_phase(DG_TRP_REGION_BEGIN, r->id, 0, DAGGER_OK);
    dg_plan_get_stats(t->plan, &t->stats_base);
    memset(&t->stats, 0, sizeof(t->stats));
    dg_exec_region_reset(t->exec);
    dg_exec_wake_workers(t->exec);
    t->region = r;
    *out = r;
    return DAGGER_OK;
}

/* ------------------------------------------------------------ submit */

static dg_tasks_t *region_tasks(dagger_region_t *r, const char *fn)
{
    if (!dg_handle_live_kind(r, DG_HANDLE_REGION) || !r->tasks || r->tasks->region != r) {
        dg_error(DAGGER_ERR_BAD_HANDLE, "%s: not an open region (NULL, or already ended)", fn);
        return NULL;
    }
    return r->tasks;
}

static dagger_status_t convert_args(dg_tasks_t *t, int nargs, const dagger_arg_t *args,
                                    dg_plan_arg_t *out)
{
    for (int i = 0; i < nargs; i++) {
        const dagger_arg_t *a = &args[i];
        dg_plan_arg_t *p = &out[i];
        /* The fields one by one, not a memset of the ~110 bytes: the planner
         * reads a view's offsets and extents only below its ndims. */
        p->mode = 0; /* values have none */
        p->value = NULL;
        p->len = 0;
        p->future = 0;
        p->view.chunk = 0;
        p->view.ndims = 0;
        p->view.mod = DAGGER_FULL;
        switch (a->kind) {
        case DAGGER_ARG_CHUNK: {
            if (a->mode != DAGGER_MODE_IN && a->mode != DAGGER_MODE_OUT &&
                a->mode != DAGGER_MODE_INOUT)
                return dg_error(DAGGER_ERR_INVALID_ARG, "dagger_submit: argument %d has access "
                                "mode %d (use DAGGER_IN_CHUNK, DAGGER_OUT_CHUNK or "
                                "DAGGER_INOUT_CHUNK)", i, (int)a->mode);
            const dg_plan_geom_t *g = dg_plan_data_chunk_geom(t->plan, a->view.chunk.id);
            if (!g)
                return dg_error(DAGGER_ERR_BAD_HANDLE, "dagger_submit: argument %d is chunk %llu, "
                                "which does not exist (never created, already freed, or a "
                                "future: pass futures with DAGGER_FUTURE)", i,
                                (unsigned long long)a->view.chunk.id);
            p->kind = DG_PLAN_ARG_VIEW; /* the whole chunk, as dagger_view gives it */
            p->mode = a->mode;
            p->view.chunk = a->view.chunk.id;
            p->view.ndims = g->ndims;
            for (uint32_t k = 0; k < g->ndims; k++) {
                p->view.off[k] = 0;
                p->view.ext[k] = g->dims[k];
            }
            break;
        }
        case DAGGER_ARG_VIEW:
            if (a->mode != DAGGER_MODE_IN && a->mode != DAGGER_MODE_OUT &&
                a->mode != DAGGER_MODE_INOUT)
                return dg_error(DAGGER_ERR_INVALID_ARG, "dagger_submit: argument %d has access "
                                "mode %d (use DAGGER_IN, DAGGER_OUT or DAGGER_INOUT)", i, (int)a->mode);
            if (a->view.ndims < 1 || a->view.ndims > DAGGER_MAX_DIMS)
                return dg_error(DAGGER_ERR_BAD_VIEW, "dagger_submit: argument %d is not a valid "
                                "view of chunk %llu (a bad chunk handle, or a sub-view that did "
                                "not fit its parent)", i, (unsigned long long)a->view.chunk.id);
            p->kind = DG_PLAN_ARG_VIEW;
            p->mode = a->mode;
            p->view.chunk = a->view.chunk.id;
            p->view.ndims = (uint32_t)a->view.ndims;
            p->view.mod = a->view.mod;
            for (int k = 0; k < a->view.ndims; k++) {
                p->view.off[k] = a->view.off[k];
                p->view.ext[k] = a->view.ext[k];
            }
            break;
        case DAGGER_ARG_VALUE:
            if (a->len && !a->bytes)
                return dg_error(DAGGER_ERR_INVALID_ARG, "dagger_submit: argument %d is a value of "
                                "%zu bytes at NULL", i, a->len);
            if (a->len > DAGGER_MAX_VALUE)
                return dg_error(DAGGER_ERR_INVALID_ARG, "dagger_submit: argument %d is a value of "
                                "%zu bytes, more than DAGGER_MAX_VALUE (%d): pass it as a chunk",
                                i, a->len, DAGGER_MAX_VALUE);
            p->kind = DG_PLAN_ARG_VALUE;
            p->value = a->bytes;
            p->len = a->len;
            break;
        case DAGGER_ARG_FUTURE: {
            int owner;
            size_t size;
            if (!dg_tasks_future_find(t, a->future.id, &owner, &size))
                return dg_error(DAGGER_ERR_BAD_HANDLE, "dagger_submit: argument %d is future %llu, "
                                "which no task returned", i, (unsigned long long)a->future.id);
            if (a->mode && a->mode != DAGGER_MODE_IN && a->mode != DAGGER_MODE_OUT &&
                a->mode != DAGGER_MODE_INOUT)
                return dg_error(DAGGER_ERR_INVALID_ARG, "dagger_submit: argument %d (future %llu) "
                                "has access mode %d (use DAGGER_FUTURE, _FUTURE_OUT or "
                                "_FUTURE_INOUT)", i, (unsigned long long)a->future.id, (int)a->mode);
            p->kind = DG_PLAN_ARG_FUTURE;
            p->mode = a->mode;
            p->future = a->future.id;
            break;
        }
        default:
            return dg_error(DAGGER_ERR_INVALID_ARG, "dagger_submit: argument %d has kind %d (build "
                            "arguments with DAGGER_IN/OUT/INOUT/VALUE/FUTURE or "
                            "DAGGER_IN/OUT/INOUT_CHUNK)", i, (int)a->kind);
        }
    }
    return DAGGER_OK;
}

static uint64_t hash_submission(uint64_t h, const dg_plan_task_desc_t *d)
{
    h = dg_hash_u64(h, ((uint64_t)d->codelet << 32) | d->nargs);
    for (uint32_t i = 0; i < d->nargs; i++) {
        const dg_plan_arg_t *a = &d->args[i];
        h = dg_hash_u64(h, ((uint64_t)a->kind << 8) | (uint64_t)a->mode);
        if (a->kind == DG_PLAN_ARG_VIEW) {
            /* Field by field: convert_args leaves the dimensions past ndims unset. */
            h = dg_hash_u64(dg_hash_u64(h, a->view.chunk),
                            ((uint64_t)a->view.ndims << 32) | (uint32_t)a->view.mod);
            for (uint32_t k = 0; k < a->view.ndims && k < DAGGER_MAX_DIMS; k++)
                h = dg_hash_u64(dg_hash_u64(h, a->view.off[k]), a->view.ext[k]);
        } else if (a->kind == DG_PLAN_ARG_VALUE)
            h = dg_hash_bytes(dg_hash_u64(h, a->len), a->value, a->len);
        else
            h = dg_hash_u64(h, a->future);
    }
    if (d->scope)
        h = dg_scope_hash(h, d->scope);
    h = dg_hash_u64(h, ((uint64_t)d->ret_size << 32) | (uint32_t)d->priority);
    return dg_hash_bytes(h, d->deps, d->ndeps * sizeof(uint64_t));
}

dagger_status_t dagger_submit(dagger_region_t *r, dagger_codelet_t cl, int nargs,
                              const dagger_arg_t *args, const dagger_task_opts_t *opts,
                              uint64_t *seq_out, dagger_future_t *future_out)
{
    dg_tasks_t *t = region_tasks(r, "dagger_submit");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t st = dg_spmd_allowed("dagger_submit");
    if (st != DAGGER_OK)
        return st;
    if (r->diverged)
        return dg_error(DAGGER_ERR_DIVERGENCE, "%s", r->diverged_msg);
    DG_CHECK_ARG(nargs >= 0 && nargs <= DAGGER_MAX_ARGS && (args || !nargs),
                 "dagger_submit: %d arguments (0 to %d, with a non-NULL array)", nargs,
                 DAGGER_MAX_ARGS);
    DG_CHECK_ARG(!opts || opts->nafter >= 0, "dagger_submit: negative dependency count");
    DG_CHECK_ARG(!opts || opts->return_size <= DAGGER_MAX_RETURN, "dagger_submit: a return_size "
                 "of %zu bytes; at most %d", opts ? opts->return_size : 0, DAGGER_MAX_RETURN);
    dg_plan_arg_t pargs[DAGGER_MAX_ARGS];
    st = convert_args(t, nargs, args, pargs);
    if (st != DAGGER_OK)
        return st;
    dg_scope_buf_t sb;
    st = dg_scope_convert(opts ? opts->scope : NULL, &sb, "dagger_submit");
    if (st != DAGGER_OK)
        return st;
    dg_plan_task_desc_t d = {
        .codelet = cl.id, .args = pargs, .nargs = (uint32_t)nargs,
        .scope = opts && opts->scope ? &sb.s : NULL,
        .priority = opts ? opts->priority : 0,
        .deps = opts ? opts->after : NULL, .ndeps = opts ? (uint32_t)opts->nafter : 0,
        .ret_size = opts ? (uint32_t)opts->return_size : 0,
    };
    DG_CHECK_ARG(!d.ndeps || d.deps, "dagger_submit: %u dependencies at NULL", d.ndeps);
    if (t->uniformity) {
        dg_plan_stats_t ps;
        dg_plan_get_stats(t->plan, &ps);
        dg_check_point_t cp = {.kind = DG_CHECK_TASK, .codelet = cl.id, .task = ps.tasks + 1};
        cp.hash = hash_submission(dg_hash_u64(dg_plan_hash(t->plan),
                                              dg_plan_codelet_hash(t->plan, cl.id)), &d);
        st = dg_tasks_check(t, &cp);
        if (st == DAGGER_ERR_DIVERGENCE) {
            r->diverged = 1;
            snprintf(r->diverged_msg, sizeof(r->diverged_msg), "%s", dagger_error_detail());
        }
        if (st != DAGGER_OK)
            return st;
    }
    dg_plan_submitted_t sub;
    if (DG_TRACE_ON())
        dg_trace_plan_begin();
    st = dg_planner_submit(t, &d, &sub);
    if (st != DAGGER_OK)
        return st;
    if (sub.future) {
        st = dg_tasks_future_add(t, sub.future, sub.rank, sub.bytes);
        if (st != DAGGER_OK)
            return st;
    }
    t->stats.tasks++;
    t->stats.tasks_local += sub.rank == t->rank;
    if (seq_out)
        *seq_out = sub.task;
    if (future_out)
        future_out->id = sub.future;
    /* A rank that could not prepare its share (t->exec->emit_status: a
     * buffer it could not allocate) does not fail the call, which the other
     * ranks made with success: the region's end reports it on every rank.
     * Until 2026-12-06 this rank alone returned DAGGER_ERR_NO_MEMORY here. */
    return DAGGER_OK;
}

dagger_status_t dagger_spawn(dagger_region_t *r, dagger_codelet_t cl, ...)
{
    dagger_arg_t args[DAGGER_MAX_ARGS];
    int n = 0;
    va_list ap;
    va_start(ap, cl);
    for (;;) {
        dagger_arg_t a = va_arg(ap, dagger_arg_t);
        if (a.kind == 0)
            break;
        if (n == DAGGER_MAX_ARGS) {
            va_end(ap);
            return dg_error(DAGGER_ERR_INVALID_ARG, "dagger_spawn: more than %d arguments, or a "
                            "missing DAGGER_END", DAGGER_MAX_ARGS);
        }
        args[n++] = a;
    }
    va_end(ap);
    return dagger_submit(r, cl, n, args, NULL, NULL, NULL);
}

/* ------------------------------------------------------------ end */

/* Every rank learns the first failure (lowest task id) and its message, and
 * remembers which tasks' data it spoiled (fetch reports it); the same
 * agreement carries the values of the region's few small futures (ncarry
 * words: carry.c). */
static dagger_status_t agree_on_status(dg_tasks_t *t, size_t ncarry)
{
    uint64_t first, carry[DG_CARRY_WORDS];
    dagger_status_t status;
    char msg[512];
    dg_carry_fill(t, carry, ncarry);
    dagger_status_t st = dg_tasks_agree_failure(t, &first, &status, msg, sizeof(msg), carry, ncarry);
    dg_carry_agreed(t, carry, st == DAGGER_OK && first == UINT64_MAX);
    dg_exec_t *ex = t->exec;
    /* No agreement: a rank was lost. This rank's own failure of the same
     * kind says more (which transfer from which rank could not arrive). */
    if (st == DAGGER_ERR_PEER_LOST && atomic_load(&ex->failed) &&
        ex->fail_status == DAGGER_ERR_PEER_LOST)
        return dg_error(st, "%s", ex->fail_msg);
    if (st != DAGGER_OK || first == UINT64_MAX)
        return st;
    if (dg_tasks_note_failure(t, first, status, msg) != DAGGER_OK)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_region_end: out of memory");
    return dg_error(status, "%s", msg);
}

dagger_status_t dagger_region_end(dagger_region_t *r)
{
    dg_tasks_t *t = region_tasks(r, "dagger_region_end");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t in_task = dg_spmd_allowed("dagger_region_end");
    if (in_task != DAGGER_OK)
        return in_task;
    if (t->uniformity && !r->diverged) {
        dg_plan_stats_t ps;
        dg_plan_get_stats(t->plan, &ps);
        dg_check_point_t cp = {.kind = DG_CHECK_REGION_END, .task = ps.tasks + 1};
        cp.hash = dg_plan_hash(t->plan);
        if (dg_tasks_check(t, &cp) == DAGGER_ERR_DIVERGENCE) {
            r->diverged = 1;
            snprintf(r->diverged_msg, sizeof(r->diverged_msg), "%s", dagger_error_detail());
        }
    }
    /* Every rank planned the same tasks up to here, so the copy-back is the
     * same plan everywhere, even after a divergence was found. */
    uint64_t tr = DG_TRACE_T0();
    dagger_status_t st = dg_planner_region_end(t);
    tr = DG_TRACE_ON() ? dg_trace_phase(DG_TRP_REGION_PLAN_END, r->id, tr, st) : 0;
    /* What agree_on_status will call: a peer that calls something else
     * meanwhile (it left this region, or planned other work) ends the wait
     * for transfers it will never send (transport/coll_foresee.c). */
    size_t ncarry = dg_carry_plan(t);
    dg_coll_expect(t->tx, 1 + ncarry, DAGGER_U64, DAGGER_OP_MIN, dg_plan_shape_hash(t->plan));
    dg_exec_wait_all(t->exec);
    dg_coll_expect_none(t->tx);
    tr = DG_TRACE_ON() ? dg_trace_phase(DG_TRP_REGION_WAIT, r->id, tr, DAGGER_OK) : 0;
    dg_plan_stats_t ps;
    dg_plan_get_stats(t->plan, &ps);
    t->stats.transfers = ps.planned_transfers - t->stats_base.planned_transfers;
    t->stats.copies = ps.planned_copies - t->stats_base.planned_copies;
    t->stats.tasks_replayed = (ps.replayed_tasks - ps.replay_replanned) -
                              (t->stats_base.replayed_tasks - t->stats_base.replay_replanned);
    t->stats.slots = t->exec->n_slots;
    t->stats.bytes_sent = t->exec->bytes_sent;
    t->stats.bytes_received = t->exec->bytes_received;
    dagger_status_t agreed = agree_on_status(t, ncarry);
    if (DG_TRACE_ON())
        dg_trace_phase(DG_TRP_REGION_AGREE, r->id, tr, agreed);
    t->region = NULL;
    dg_handle_remove(r);
    int diverged = r->diverged;
    char msg[900] = "";
    if (diverged) /* (an snprintf of nothing cost every region end 500 instructions) */
        snprintf(msg, sizeof(msg), "%s", r->diverged_msg);
    free(r);
    if (diverged)
        return dg_error(DAGGER_ERR_DIVERGENCE, "%s", msg);
    if (st != DAGGER_OK)
        return st;
    return agreed;
}

dagger_status_t dagger_region_stats(dagger_runtime_t *rt, dagger_region_stats_t *out)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_region_stats");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    DG_CHECK_ARG(out, "dagger_region_stats: NULL output");
    *out = t->stats;
    return DAGGER_OK;
}

dagger_status_t dagger_region_current(dagger_runtime_t *rt, dagger_region_t **out)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_region_current");
    if (!t)
        return DAGGER_ERR_BAD_HANDLE;
    DG_CHECK_ARG(out, "dagger_region_current: NULL output");
    *out = t->region;
    return DAGGER_OK;
}

dagger_status_t dagger_region_runtime(const dagger_region_t *r, dagger_runtime_t **out)
{
    if (!dg_handle_live_kind(r, DG_HANDLE_REGION) || !r->tasks || r->tasks->region != r)
        return dg_error(DAGGER_ERR_BAD_HANDLE, "dagger_region_runtime: not an open region (NULL, "
                        "ended, or another kind of handle)");
    DG_CHECK_ARG(out, "dagger_region_runtime: NULL output");
    *out = r->tasks->rt;
    return DAGGER_OK;
}

int dg_region_limits_ranks(const dagger_region_t *r)
{
    return r && r->limits_ranks;
}

int dagger_procs(dagger_runtime_t *rt, dagger_proc_info_t *procs, int cap)
{
    dg_tasks_t *t = dg_tasks_get(rt, "dagger_procs");
    if (!t)
        return -1;
    uint32_t n = dg_plan_nprocs(t->plan);
    for (uint32_t i = 0; procs && i < n && (int)i < cap; i++) {
        int32_t rank;
        dg_plan_kind_t kind;
        uint32_t index;
        dg_plan_proc_info(t->plan, i, &rank, &kind, &index);
        procs[i] = (dagger_proc_info_t){(int)i, rank, (dagger_proc_kind_t)DG_PLAN_KIND_BIT(kind),
                                        (int)index};
    }
    return (int)n;
}
