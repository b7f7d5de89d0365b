/* The task runtime of one rank: the planner, the executor, the open region
 * and the bookkeeping the public chunk/codelet/region calls share. Hangs off
 * the runtime object (rt->tasks). */
#ifndef DG_API_TASKS_H
#define DG_API_TASKS_H

#include <dagger/region.h>

#include "core/exec/exec.h"
#include "core/plan/plan.h"
#include "devices/devices.h"

struct dg_act_system;
struct dg_tx;
struct dg_fail_log;

/* Small futures carried by a region's end agreement (carry.c): at most
 * this many, in this many 8-byte words in all. */
#define DG_CARRY_MAX 4
#define DG_CARRY_WORDS 8

typedef struct dg_carry {
    uint64_t first, last;       /* the first and last future id the open region made */
    uint64_t alive;             /* how many of those are not freed */
    size_t n;                   /* the futures the region's end carries */
    uint64_t id[DG_CARRY_MAX];  /* 0: freed since */
    size_t size[DG_CARRY_MAX];
    int owner[DG_CARRY_MAX];
    size_t word0[DG_CARRY_MAX]; /* each one's first word in the agreement */
    unsigned char value[DG_CARRY_MAX][DG_CARRY_WORDS * 8];
    int valid;                  /* the values are the agreed ones (no failure) */
} dg_carry_t;

typedef struct dg_tasks {
    dagger_runtime_t *rt;
    int rank, nranks;
    struct dg_tx *tx;                 /* NULL when alone */
    struct dg_tx_planned *planned;    /* what this rank planned, for probes; NULL alone */
    dg_plan_t *plan;
    struct dg_planner *planner;       /* the planner actor (planner.h) */
    dg_exec_t *exec;
    dg_plan_rank_desc_t *rank_descs;  /* processor table input */
    dg_plan_kind_t *dev_kinds;        /* their devices' kinds, DG_DEV_MAX per rank */
    dg_dev_ipc_map_t ipc;             /* which of their devices go through IPC handles (the
                                         published domains and nodes, and the probe's pairs) */
    dg_dev_table_t devs;              /* this rank's devices (discovery) */
    dagger_region_t *region;          /* the open region, or NULL */
    uint64_t regions;                 /* regions begun */
    uint64_t default_owner;           /* next owner of a chunk created with owner -1 */
    int uniformity;                   /* compare planning inputs across ranks */
    uint64_t checks;                  /* uniformity checks done (for messages) */
    /* task -> rank, for futures and statistics (this region) */
    dagger_region_stats_t stats;
    dg_plan_stats_t stats_base;       /* planner counters at region begin */
    /* futures: id -> (owner rank, size), open addressing */
    struct dg_future_rec *futures;
    size_t nfuture_slots, nfutures, nfuture_tombs;
    struct dg_fail_log *fails;        /* failed regions (outcome.c) */
    dg_carry_t carry;                 /* small futures of the last region's end (carry.c) */
} dg_tasks_t;

struct dagger_region {
    dg_tasks_t *tasks;
    uint64_t id;
    uint64_t first_task;              /* planner task id of the region's first task */
    int diverged;                     /* a uniformity check failed: nothing more is planned */
    int limits_ranks;                 /* its scope lists ranks or processors, or is a union */
    char diverged_msg[900];
};

/* Collective: exchanges processor inventories, creates planner and executor. */
dagger_status_t dg_tasks_create(dagger_runtime_t *rt, struct dg_act_system *actors,
                                struct dg_tx *tx, dg_tasks_t **out);
/* Ends an open region, waits for every op (the workers must run) and
 * closes the executor to data from other ranks (dg_exec_close_arrivals). */
void dg_tasks_drain(dg_tasks_t *t);
/* Before the actor kernel goes: nothing of the task runtime wakes its
 * workers from other threads any more (the devices' streams). */
void dg_tasks_quiet(dg_tasks_t *t);
/* Frees everything (after the workers stopped). */
void dg_tasks_destroy(dg_tasks_t *t);

/* The task runtime of a live runtime handle, or NULL (with an error detail). */
dg_tasks_t *dg_tasks_get(dagger_runtime_t *rt, const char *fn);

/* Futures: where a future's value lives. An added id is a new future's
 * (the planner's chunk counter gives each id once). */
dagger_status_t dg_tasks_future_add(dg_tasks_t *t, uint64_t id, int owner, size_t size);
int dg_tasks_future_find(const dg_tasks_t *t, uint64_t id, int *owner, size_t *size);
void dg_tasks_future_remove(dg_tasks_t *t, uint64_t id);

/* Uniformity: a point of the program every rank should reach identically.
 * dg_tasks_check compares it across ranks (when checking is on) and gives
 * every rank the same DAGGER_ERR_DIVERGENCE describing who does what. */
enum {
    DG_CHECK_TASK = 1, DG_CHECK_REGION_BEGIN = 2, DG_CHECK_REGION_END = 3, DG_CHECK_USER = 4,
    DG_CHECK_CHUNK = 5
};
typedef struct dg_check_point {
    uint64_t hash;     /* planner hash (with the submission) or the user value's hash */
    uint64_t task;     /* the task id it concerns, or the user check's number */
    uint32_t kind;
    uint32_t codelet;
} dg_check_point_t;
dagger_status_t dg_tasks_check(dg_tasks_t *t, const dg_check_point_t *mine);

/* Failures (outcome.c). agree_failure is collective: every rank gets the
 * lowest failed task id of the open region (UINT64_MAX: none) with its status
 * and message; the same allreduce takes the MIN of the ncarry words at
 * carry (dg_carry_fill), which may be NULL with 0. note_failure records the
 * failure of an ended region (whose tasks from `first` on are suspect) and
 * has the planner mark their data. data_status (collective inside a region)
 * returns the error of the failed task behind chunk or future `id`, or
 * DAGGER_OK. */
dagger_status_t dg_tasks_agree_failure(dg_tasks_t *t, uint64_t *task, dagger_status_t *status,
                                       char *msg, size_t len, uint64_t *carry, size_t ncarry);
dagger_status_t dg_tasks_note_failure(dg_tasks_t *t, uint64_t first, dagger_status_t status,
                                      const char *msg);
dagger_status_t dg_tasks_data_status(dg_tasks_t *t, uint64_t id, const char *fn, const char *what);
void dg_tasks_fail_log_free(dg_tasks_t *t);

/* The home storage of chunk or future id on this rank, or NULL (fetch.c). */
const unsigned char *dg_tasks_home_bytes(dg_tasks_t *t, uint64_t id);

/* Carrying small futures in a region's end agreement (carry.c): begin
 * forgets the last region's; made and freed follow the futures a region
 * makes and frees; plan (at the region's end, before its agreement) picks
 * those to carry and returns their words (0: none); fill writes this rank's
 * part of them (all ones but the futures it owns); agreed keeps the values
 * the agreement gave (ok: it found no failure); fetch copies a kept value
 * (1) outside a region. */
void dg_carry_region_begin(dg_tasks_t *t);
void dg_carry_made(dg_tasks_t *t, uint64_t id);
void dg_carry_freed(dg_tasks_t *t, uint64_t id);
size_t dg_carry_plan(dg_tasks_t *t);
void dg_carry_fill(dg_tasks_t *t, uint64_t *words, size_t nwords);
void dg_carry_agreed(dg_tasks_t *t, const uint64_t *words, int ok);
int dg_carry_fetch(dg_tasks_t *t, uint64_t id, void *buf, size_t size);

/* A public view as the planner's (chunk.c); ndims 0 stays 0 (invalid). */
dg_plan_view_t dg_view_to_plan(dagger_view_t v);

/* Collectives that also work alone (tx NULL). */
dagger_status_t dg_tasks_bcast(dg_tasks_t *t, void *buf, size_t len, int root);
dagger_status_t dg_tasks_allreduce_u64(dg_tasks_t *t, uint64_t *v, size_t n, int op);

#endif
