/* The task runtime: start-up (processor table, planner, executor), futures
 * bookkeeping, uniformity comparison and the collectives it needs. */
#include "core/runtime/tasks.h"

#include <stdlib.h>
#include <string.h>

#include "actors/system.h"
#include "core/base/alloc.h"
#include "core/runtime/planner.h"
#include "core/base/common.h"
#include "core/base/log.h"
#include "core/runtime/runtime.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"
#include "core/runtime/trace_session.h"
#include "devices/devices.h"
#include "transport/bootstrap.h"
#include "transport/coll.h"
#include "transport/wire.h"

typedef struct dg_future_rec {
    uint64_t id; /* 0: empty */
    int owner;
    size_t size;
} dg_future_rec_t;

/* ------------------------------------------------------------ start-up */

/* Fills rank r's description from its inventory record: u32 CPU workers,
 * u32 devices, then per device a u32 kind (dg_dev_kind_t values, which equal
 * the planner's kinds), its u64 IPC domain and its u64 IPC node
 * (devices/discover.h). */
static dagger_status_t read_inventory(dg_tasks_t *t, int r, const void *rec, size_t len)
{
    dg_wire_cursor_t rc = dg_wire_cursor(rec, len);
    dg_plan_rank_desc_t *d = &t->rank_descs[r];
    dg_plan_kind_t *kinds = t->dev_kinds + (size_t)r * DG_DEV_MAX;
    d->ncpus = dg_wire_get_u32(&rc);
    d->ndevs = dg_wire_get_u32(&rc);
    d->devs = kinds;
    for (uint32_t i = 0; !rc.bad && i < d->ndevs && i < DG_DEV_MAX; i++) {
        uint32_t k = dg_wire_get_u32(&rc);
        kinds[i] = (dg_plan_kind_t)k;
        t->ipc.domains[(size_t)r * DG_DEV_MAX + i] = dg_wire_get_u64(&rc);
        t->ipc.nodes[(size_t)r * DG_DEV_MAX + i] = dg_wire_get_u64(&rc);
        if (k != DG_DEV_CUDA && k != DG_DEV_HIP && k != DG_DEV_TEST)
            rc.bad = 1;
    }
    if (rc.bad || !d->ncpus || d->ndevs > DG_DEV_MAX)
        return dg_error(DAGGER_ERR_PROTOCOL, "dagger_init: rank %d sent a malformed processor "
                        "inventory", r);
    return DAGGER_OK;
}

/* Every rank's inventory, in the processor table (planner input). */
static dagger_status_t exchange_inventories(dg_tasks_t *t, uint32_t ncpus)
{
    t->rank_descs = dg_calloc((size_t)t->nranks, sizeof(*t->rank_descs));
    t->dev_kinds = dg_calloc((size_t)t->nranks * DG_DEV_MAX, sizeof(*t->dev_kinds));
    t->ipc.nranks = t->nranks;
    t->ipc.domains = dg_calloc((size_t)t->nranks * DG_DEV_MAX, sizeof(uint64_t));
    t->ipc.nodes = dg_calloc((size_t)t->nranks * DG_DEV_MAX, sizeof(uint64_t));
    if (!t->rank_descs || !t->dev_kinds || !t->ipc.domains || !t->ipc.nodes)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: out of memory");
    unsigned char mine[8 + 20 * DG_DEV_MAX];
    dg_wire_cursor_t c = dg_wire_cursor(mine, sizeof(mine));
    dg_wire_put_u32(&c, ncpus);
    dg_wire_put_u32(&c, (uint32_t)t->devs.n);
    for (int i = 0; i < t->devs.n; i++) {
        dg_wire_put_u32(&c, (uint32_t)t->devs.dev[i].be->kind);
        dg_wire_put_u64(&c, dg_dev_ipc_domain(&t->devs.dev[i], t->rt->boot->hostname,
                                              (int)t->rt->cfg.gpu_ipc));
        dg_wire_put_u64(&c, dg_dev_ipc_node(&t->devs.dev[i], t->rt->boot->hostname,
                                            (int)t->rt->cfg.gpu_ipc));
    }
    size_t mylen = 8 + 20 * (size_t)t->devs.n;
    if (!t->tx)
        return read_inventory(t, 0, mine, mylen);
    void *all = NULL;
    size_t *lens = dg_calloc((size_t)t->nranks, sizeof(size_t));
    if (!lens)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: out of memory");
    dagger_status_t st = dg_coll_allgather(t->tx, mine, mylen, &all, lens);
    if (st == DAGGER_OK) {
        const unsigned char *p = all;
        for (int r = 0; r < t->nranks && st == DAGGER_OK; r++) {
            st = read_inventory(t, r, p, lens[r]);
            p += lens[r];
        }
    }
    free(all);
    free(lens);
    return st;
}

dagger_status_t dg_tasks_create(dagger_runtime_t *rt, struct dg_act_system *actors,
                                struct dg_tx *tx, dg_tasks_t **out)
{
    dg_tasks_t *t = dg_calloc(1, sizeof(*t));
    if (!t)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: out of memory");
    t->rt = rt;
    t->rank = rt->rank;
    t->nranks = rt->nranks;
    t->tx = rt->nranks > 1 ? tx : NULL;
    t->planned = dg_tx_planned(t->tx);
    t->uniformity = rt->cfg.check_uniformity;
    t->nfuture_slots = 64;
    t->futures = dg_calloc(t->nfuture_slots, sizeof(*t->futures));
    dagger_status_t st = t->futures ? DAGGER_OK
                                    : dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: out of memory");
    if (st == DAGGER_OK)
        st = dg_dev_discover(rt->cfg.test_devices, &t->devs);
    if (st == DAGGER_OK)
        dg_log(DG_LOG_INFO, "devices: %s", t->devs.summary);
    if (st == DAGGER_OK)
        st = exchange_inventories(t, (uint32_t)dg_act_system_num_workers(actors));
    if (st == DAGGER_OK) /* which devices of two ranks read each other's IPC handles */
        st = dg_dev_ipc_probe(t->tx, &t->devs, t->rank, &t->ipc);
    if (st == DAGGER_OK)
        st = dg_trace_start(t);
    if (st == DAGGER_OK) {
        dg_exec_params_t ep = {
            .rank = t->rank, .nranks = t->nranks, .actors = actors, .tx = t->tx,
            .window = (uint32_t)rt->cfg.task_window, .pool_limit = rt->cfg.slot_cache,
            .huge_pages = (int)rt->cfg.huge_pages, .hang_timeout = rt->cfg.hang_timeout,
            /* dagger_params_t.no_exit: a hang is said, the rank not ended */
            .hang_exit = (rt->boot->effects & DG_BOOT_NO_EXIT) ? 0 : rt->cfg.hang_exit,
            .no_signals = (rt->boot->effects & DG_BOOT_NO_SIGNALS) != 0,
        };
        st = dg_exec_create(&ep, &t->exec);
    }
    /* The actors that run the executor's ops: the host's and the devices'. */
    if (st == DAGGER_OK)
        st = dg_devices_start(t->exec, &t->devs, &(dg_devices_params_t){
                                  .gpu_direct = (int)rt->cfg.gpu_direct,
                                  .streams = rt->cfg.gpu_streams,
                                  .wake = rt->cfg.gpu_wake,
                                  .priority = (int)rt->cfg.gpu_priority,
                                  .chain = (int)rt->cfg.gpu_chain,
                                  .peer = (int)rt->cfg.gpu_peer,
                                  .piece = (size_t)rt->cfg.gpu_pipeline_piece,
                                  .pin_min = (size_t)rt->cfg.gpu_pin_host,
                                  .ipc = &t->ipc});
    if (st == DAGGER_OK && (rt->cfg.plan_replay < 0 || rt->cfg.plan_replay > (1 << 24)))
        st = dg_error(DAGGER_ERR_CONFIG, "DAGGER_PLAN_REPLAY=%lld: use 0 (plan every region) or "
                      "a region size in tasks from 1 to %d", rt->cfg.plan_replay, 1 << 24);
    if (st == DAGGER_OK) {
        dg_plan_params_t pp = {
            .nranks = t->nranks, .my_rank = t->rank, .ranks = t->rank_descs,
            .emit = dg_exec_emit, .emit_ctx = t->exec, .slot_cache_bytes = rt->cfg.slot_cache,
            .on_task = dg_trace_task_hook(rt), .task_ctx = t, .no_task_deps = !rt->cfg.trace_deps,
            .retire_window = t->exec->mask + 1, /* the executor's ring of ops */
            .replay_tasks = (uint32_t)rt->cfg.plan_replay,
        };
        st = dg_plan_create(&pp, &t->plan);
        if (st == DAGGER_OK)
            t->exec->plan = t->plan;
    }
    if (st == DAGGER_OK)
        st = dg_planner_start(t);
    if (st != DAGGER_OK) {
        dg_tasks_destroy(t);
        return st;
    }
    dg_exec_start(t->exec);
    dg_trace_enable(t);
    *out = t;
    return DAGGER_OK;
}

void dg_tasks_drain(dg_tasks_t *t)
{
    if (!t)
        return;
    if (t->region)
        dagger_region_end(t->region);
    if (t->exec) {
        dg_exec_wait_all(t->exec);
        /* Data still coming (from a rank that diverged, or has not seen a
         * loss yet) is dropped from here on: the memory-space actors it
         * would go to are stopped and freed next (dagger_finalize). */
        dg_exec_close_arrivals(t->exec);
    }
    dg_planner_unbind(t); /* before the actors stop: a bound actor cannot be joined */
}

void dg_tasks_quiet(dg_tasks_t *t)
{
    if (t)
        dg_exec_quiet(t->exec);
}

void dg_tasks_destroy(dg_tasks_t *t)
{
    if (!t)
        return;
    /* The hang detector stops before the trace closes: a dump it is writing
     * would otherwise lose its end and write into freed trace buffers. */
    if (t->exec)
        dg_watchdog_stop(&t->exec->watchdog);
    dg_trace_stop(t);
    dg_exec_destroy(t->exec);
    dg_plan_destroy(t->plan);
    free(t->planner);
    free(t->rank_descs);
    free(t->dev_kinds);
    dg_dev_ipc_map_free(&t->ipc);
    free(t->futures);
    dg_tasks_fail_log_free(t);
    free(t);
}

dg_tasks_t *dg_tasks_get(dagger_runtime_t *rt, const char *fn)
{
    if (!dg_runtime_ok(rt)) {
        dg_error(DAGGER_ERR_BAD_HANDLE, "%s: not a live runtime handle (NULL or finalized)", fn);
        return NULL;
    }
    return rt->tasks;
}

/* ------------------------------------------------------------ futures */

#define DG_FUTURE_TOMB UINT64_MAX

/* The record of id, or (insert) the first free slot on its probe path. */
static dg_future_rec_t *future_slot(dg_future_rec_t *tab, size_t cap, uint64_t id, int insert)
{
    dg_future_rec_t *tomb = NULL;
    for (size_t i = id & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (tab[i].id == id)
            return &tab[i];
        if (tab[i].id == DG_FUTURE_TOMB && !tomb)
            tomb = &tab[i];
        if (tab[i].id == 0)
            return insert && tomb ? tomb : &tab[i];
    }
}

/* The first free slot (empty or a tomb) on the probe path of an id that is
 * not in the table: a new future's, whose id the planner's counter gave
 * once (looking on for it past the tombs, as future_slot does, walked the
 * run of tombs that sequential ids leave: about 100 instructions a task of
 * a value tree). */
static dg_future_rec_t *new_slot(dg_future_rec_t *tab, size_t cap, uint64_t id)
{
    size_t i = id & (cap - 1);
    while (tab[i].id && tab[i].id != DG_FUTURE_TOMB)
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

dagger_status_t dg_tasks_future_add(dg_tasks_t *t, uint64_t id, int owner, size_t size)
{
    if ((t->nfutures + t->nfuture_tombs + 1) * 2 > t->nfuture_slots) {
        /* Rehash; grow only when live futures need it (freed ones leave tombs). */
        size_t ncap = (t->nfutures + 1) * 4 > t->nfuture_slots ? t->nfuture_slots * 2
                                                               : t->nfuture_slots;
        dg_future_rec_t *n = dg_calloc(ncap, sizeof(*n));
        if (!n)
            return dg_error(DAGGER_ERR_NO_MEMORY, "futures: out of memory");
        for (size_t i = 0; i < t->nfuture_slots; i++)
            if (t->futures[i].id && t->futures[i].id != DG_FUTURE_TOMB)
                *future_slot(n, ncap, t->futures[i].id, 1) = t->futures[i];
        free(t->futures);
        t->futures = n;
        t->nfuture_slots = ncap;
        t->nfuture_tombs = 0;
    }
    dg_future_rec_t *r = new_slot(t->futures, t->nfuture_slots, id);
    t->nfuture_tombs -= r->id == DG_FUTURE_TOMB;
    t->nfutures++;
    *r = (dg_future_rec_t){id, owner, size};
    if (t->region)
        dg_carry_made(t, id);
    return DAGGER_OK;
}

int dg_tasks_future_find(const dg_tasks_t *t, uint64_t id, int *owner, size_t *size)
{
    if (!id || id == DG_FUTURE_TOMB)
        return 0;
    const dg_future_rec_t *r = future_slot(t->futures, t->nfuture_slots, id, 0);
    if (r->id != id)
        return 0;
    *owner = r->owner;
    *size = r->size;
    return 1;
}

void dg_tasks_future_remove(dg_tasks_t *t, uint64_t id)
{
    dg_future_rec_t *r = future_slot(t->futures, t->nfuture_slots, id, 0);
    if (r->id != id)
        return;
    r->id = DG_FUTURE_TOMB;
    t->nfutures--;
    t->nfuture_tombs++;
    dg_carry_freed(t, id);
}

/* ------------------------------------------------------------ collectives */

dagger_status_t dg_tasks_bcast(dg_tasks_t *t, void *buf, size_t len, int root)
{
    return t->tx ? dg_coll_bcast(t->tx, buf, len, root) : DAGGER_OK;
}

dagger_status_t dg_tasks_allreduce_u64(dg_tasks_t *t, uint64_t *v, size_t n, int op)
{
    return t->tx ? dg_coll_allreduce(t->tx, v, n, DAGGER_U64, (dagger_op_t)op)
                 : DAGGER_OK;
}

/* ------------------------------------------------------------ uniformity */

static int describe_point(const dg_tasks_t *t, const dg_check_point_t *c, char *buf, size_t len)
{
    switch (c->kind) {
    case DG_CHECK_TASK: {
        const dg_exec_codelet_t *cl = dg_exec_codelet(t->exec, c->codelet);
        return snprintf(buf, len, "submit task %llu (codelet %s)", (unsigned long long)c->task,
                        cl ? cl->name : "unregistered");
    }
    case DG_CHECK_REGION_END:
        return snprintf(buf, len, "end the region after task %llu", (unsigned long long)c->task - 1);
    case DG_CHECK_REGION_BEGIN:
        return snprintf(buf, len, "begin a region");
    case DG_CHECK_CHUNK:
        return snprintf(buf, len, "create or free a chunk");
    default:
        return snprintf(buf, len, "check a user value (dagger_check_uniform #%llu)",
                        (unsigned long long)c->task);
    }
}

dagger_status_t dg_tasks_check(dg_tasks_t *t, const dg_check_point_t *mine)
{
    if (!t->uniformity || !t->tx)
        return DAGGER_OK;
    t->checks++;
    uint64_t tr0 = DG_TRACE_T0();
    void *all = NULL;
    size_t *lens = dg_calloc((size_t)t->nranks, sizeof(size_t));
    if (!lens)
        return dg_error(DAGGER_ERR_NO_MEMORY, "uniformity check: out of memory");
    dagger_status_t st = dg_coll_allgather(t->tx, mine, sizeof(*mine), &all, lens);
    if (st != DAGGER_OK) {
        free(lens);
        return st;
    }
    const dg_check_point_t *pts = all;
    int bad = 0;
    for (int r = 0; r < t->nranks; r++)
        bad |= lens[r] != sizeof(*mine) || memcmp(&pts[r], &pts[0], sizeof(*mine)) != 0;
    char msg[900];
    size_t n = 0;
    if (bad) {
        /* The same text on every rank: built from the gathered points only. */
        n += (size_t)snprintf(msg, sizeof(msg), "ranks disagree on what to plan next:");
        for (int r = 0; r < t->nranks && n + 80 < sizeof(msg); r++) {
            int first = 1;
            for (int q = 0; q < r; q++)
                first &= memcmp(&pts[q], &pts[r], sizeof(*mine)) != 0;
            if (!first)
                continue;
            n += (size_t)snprintf(msg + n, sizeof(msg) - n, " ranks");
            for (int q = r; q < t->nranks; q++)
                if (!memcmp(&pts[q], &pts[r], sizeof(*mine)))
                    n += (size_t)snprintf(msg + n, sizeof(msg) - n, " %d", q);
            n += (size_t)snprintf(msg + n, sizeof(msg) - n, " ");
            n += (size_t)describe_point(t, &pts[r], msg + n, sizeof(msg) - n);
            n += (size_t)snprintf(msg + n, sizeof(msg) - n, ";");
        }
        snprintf(msg + n, sizeof(msg) - n, " (a value, branch or random seed that differs "
                 "between ranks reaches the submissions)");
    }
    free(all);
    free(lens);
    if (DG_TRACE_ON())
        dg_trace_check(mine->kind, mine->task, mine->codelet, mine->hash, tr0, bad);
    return bad ? dg_error(DAGGER_ERR_DIVERGENCE, "%s", msg) : DAGGER_OK;
}
