/* Starting and stopping a recording for the task runtime: the directory,
 * this rank's file and header, clock offsets, job.meta, and the planner's
 * per-task callback. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/base/alloc.h"
#include "core/runtime/tasks.h"
#include "core/base/hash.h"
#include "core/base/log.h"
#include "core/runtime/runtime.h"
#include "core/base/status_internal.h"
#include "core/runtime/trace_clocksync.h"
#include "core/trace/recorder.h"
#include "core/runtime/trace_session.h"
#include "core/trace/trace.h"
#include "actors/system.h"
#include "transport/coll.h"

/* When the recording began (the start-up phase runs from here to enabling). */
static uint64_t start_t0;

/* What rank 0 learns about every rank for job.meta. */
typedef struct dg_trace_rank_info {
    int64_t offset;
    uint64_t uncert;
    uint32_t nworkers, nspaces, pid, pad;
    uint32_t cpus, online; /* CPUs this process may run on, and its host's online ones; 0: unknown */
    char host[DG_TRF_HOST_LEN];
} dg_trace_rank_info_t;

/* mkdir -p: every missing component of dir. */
static int make_dirs(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = c;
        if (!c)
            break;
    }
    struct stat sb;
    if (stat(path, &sb) != 0)
        return -1;
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

static uint64_t unix_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void fill_info(const dg_tasks_t *t, dg_trace_rank_info_t *me)
{
    memset(me, 0, sizeof(*me));
    /* The workers, then the submitting thread, which runs ready tasks while
     * it waits (core/exec/exec.c): its processor index is the last one. */
    me->nworkers = t->rank_descs[t->rank].ncpus + 1;
    me->nspaces = 1 + t->rank_descs[t->rank].ndevs;
    me->pid = (uint32_t)getpid();
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        me->cpus = (uint32_t)CPU_COUNT(&set);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    me->online = online > 0 ? (uint32_t)online : 0;
    if (gethostname(me->host, sizeof(me->host) - 1) != 0)
        snprintf(me->host, sizeof(me->host), "unknown");
}

/* Every rank's info, in rank order (malloc'ed). */
static dagger_status_t gather_infos(dg_tasks_t *t, const dg_trace_rank_info_t *me,
                                    dg_trace_rank_info_t **out)
{
    if (!t->tx) {
        *out = dg_malloc(sizeof(*me));
        if (!*out)
            return dg_error(DAGGER_ERR_NO_MEMORY, "DAGGER_TRACE: out of memory");
        **out = *me;
        return DAGGER_OK;
    }
    size_t *lens = dg_calloc((size_t)t->nranks, sizeof(size_t));
    if (!lens)
        return dg_error(DAGGER_ERR_NO_MEMORY, "DAGGER_TRACE: out of memory");
    void *all = NULL;
    dagger_status_t st = dg_coll_allgather(t->tx, me, sizeof(*me), &all, lens);
    for (int r = 0; st == DAGGER_OK && r < t->nranks; r++)
        if (lens[r] != sizeof(*me))
            st = dg_error(DAGGER_ERR_PROTOCOL, "DAGGER_TRACE: rank %d sent %zu bytes of trace "
                          "metadata, expected %zu", r, lens[r], sizeof(*me));
    free(lens);
    if (st != DAGGER_OK) {
        free(all);
        return st;
    }
    *out = all;
    return DAGGER_OK;
}

static dagger_status_t write_meta(const char *dir, int nranks, uint64_t job_id, int deps,
                                  const dg_trace_rank_info_t *infos)
{
    char tmp[4200], path[4200];
    snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, DG_TRF_META_NAME);
    snprintf(path, sizeof(path), "%s/%s", dir, DG_TRF_META_NAME);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return dg_error(DAGGER_ERR_CONFIG, "DAGGER_TRACE: cannot create %s: %s", tmp,
                        strerror(errno));
    fprintf(f, "dagger-trace-job %d\njob_id %016llx\nnranks %d\ndeps %d\n", DG_TRF_META_VERSION,
            (unsigned long long)job_id, nranks, deps);
    for (int r = 0; r < nranks; r++) {
        const dg_trace_rank_info_t *i = &infos[r];
        fprintf(f, "rank %d workers %u spaces %u offset_ns %lld uncert_ns %llu pid %u host %s "
                "cpus %u online %u\n", r, i->nworkers, i->nspaces, (long long)i->offset,
                (unsigned long long)i->uncert, i->pid, i->host[0] ? i->host : "unknown", i->cpus,
                i->online);
    }
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0)
        return dg_error(DAGGER_ERR_CONFIG, "DAGGER_TRACE: cannot write %s: %s", path,
                        strerror(errno));
    return DAGGER_OK;
}

/* Opens this rank's file; every rank learns whether all could. */
static dagger_status_t open_everywhere(dg_tasks_t *t, const char *dir, const dg_trf_header_t *h)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/rank-%d.dgt", dir, t->rank);
    dagger_status_t mine = DAGGER_OK;
    if (make_dirs(dir) != 0)
        mine = dg_error(DAGGER_ERR_CONFIG, "DAGGER_TRACE=%s: cannot create the directory: %s; "
                        "point DAGGER_TRACE at a writable directory", dir, strerror(errno));
    else
        mine = dg_rec_open(path, h, t, (int)h->nworkers);
    char why[600];
    snprintf(why, sizeof(why), "%s", mine != DAGGER_OK ? dagger_error_detail() : "");
    uint64_t failed = mine != DAGGER_OK;
    dagger_status_t st = dg_tasks_allreduce_u64(t, &failed, 1, DAGGER_OP_MAX);
    if (st == DAGGER_OK && !failed)
        return DAGGER_OK;
    if (mine == DAGGER_OK)
        dg_rec_close();
    if (st != DAGGER_OK)
        return st;
    if (mine != DAGGER_OK)
        return dg_error(mine, "%s", why);
    return dg_error(DAGGER_ERR_CONFIG, "DAGGER_TRACE=%s: another rank could not create its trace "
                    "file (its error names the reason)", dir);
}

static int wanted(const dagger_runtime_t *rt)
{
    return rt->cfg.trace_dir && rt->cfg.trace_dir[0];
}

dg_trace_task_fn dg_trace_task_hook(const dagger_runtime_t *rt)
{
#ifdef DG_TRACE_ENABLED
    return wanted(rt) ? dg_trace_on_task : NULL;
#else
    (void)rt;
    return NULL;
#endif
}

static void fill_header(const dg_tasks_t *t, const dg_trace_rank_info_t *me, uint64_t job_id,
                        uint64_t t0, dg_trf_header_t *h)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->magic, DG_TRF_MAGIC, sizeof(DG_TRF_MAGIC));
    h->version = DG_TRF_VERSION;
    h->header_bytes = sizeof(*h);
    h->byte_order = DG_TRF_BYTE_ORDER;
    h->rank = t->rank;
    h->nranks = t->nranks;
    h->nworkers = me->nworkers;
    h->nspaces = me->nspaces;
    h->pid = me->pid;
    h->job_id = job_id;
    h->clock_offset_ns = me->offset;
    h->clock_uncert_ns = me->uncert;
    h->start_ns = t0;
    h->unix_start_ns = unix_now_ns();
    memcpy(h->host, me->host, sizeof(h->host));
}

/* Rank 0 writes job.meta from every rank's info; every rank hears how it went. */
static dagger_status_t publish_meta(dg_tasks_t *t, const char *dir, const dg_trace_rank_info_t *me,
                                    uint64_t job_id)
{
    dg_trace_rank_info_t *infos = NULL;
    dagger_status_t st = gather_infos(t, me, &infos);
    if (st == DAGGER_OK && t->rank == 0)
        st = write_meta(dir, t->nranks, job_id, t->rt->cfg.trace_deps, infos);
    free(infos);
    uint64_t failed = st != DAGGER_OK;
    dagger_status_t agreed = dg_tasks_allreduce_u64(t, &failed, 1, DAGGER_OP_MAX);
    if (st == DAGGER_OK && agreed != DAGGER_OK)
        return agreed;
    if (st == DAGGER_OK && failed)
        return dg_error(DAGGER_ERR_CONFIG, "DAGGER_TRACE=%s: rank 0 could not write %s", dir,
                        DG_TRF_META_NAME);
    return st;
}

static void name_type(void *arg, uint32_t id, const char *name)
{
    (void)arg;
    dg_trace_named(DG_TRE_TYPE_NAME, id, name);
}

static void name_actor(void *arg, uint32_t id, const char *name)
{
    (void)arg;
    dg_trace_named(DG_TRE_ACTOR_NAME, id, name);
}

/* Names every type and live actor of sys (when recording starts). */
static void name_all(struct dg_act_system *sys)
{
    dg_act_system_each_type(sys, name_type, NULL);
    dg_act_system_each_actor(sys, name_actor, NULL);
}

dagger_status_t dg_trace_start(dg_tasks_t *t)
{
    const char *dir = t->rt->cfg.trace_dir;
    if (!wanted(t->rt))
        return DAGGER_OK;
#ifndef DG_TRACE_ENABLED
    if (t->rank == 0)
        dg_log(DG_LOG_WARN, "DAGGER_TRACE=%s ignored: this library was built with "
               "-DDAGGER_TRACE=OFF", dir);
    return DAGGER_OK;
#endif
    dg_trace_rank_info_t me;
    fill_info(t, &me);
    /* The job id ties the files of one run together; rank 0 draws it. */
    uint64_t job_id = dg_hash_u64(dg_hash_u64(DG_HASH_SEED, unix_now_ns()), me.pid);
    dagger_status_t st = dg_tasks_bcast(t, &job_id, sizeof(job_id), 0);
    uint64_t t0 = dg_trace_now();
    if (st == DAGGER_OK)
        st = dg_trace_clock_sync(t->tx, t->rank, t->nranks, &me.offset, &me.uncert);
    if (st != DAGGER_OK)
        return st;
    dg_trf_header_t h;
    fill_header(t, &me, job_id, t0, &h);
    st = open_everywhere(t, dir, &h);
    if (st != DAGGER_OK)
        return st;
    st = publish_meta(t, dir, &me, job_id);
    if (st != DAGGER_OK) {
        dg_rec_close();
        return st;
    }
    start_t0 = t0;
    dg_log(DG_LOG_INFO, "tracing to %s/rank-%d.dgt (clock offset %lld ns +- %llu ns)", dir,
           t->rank, (long long)me.offset, (unsigned long long)me.uncert);
    return DAGGER_OK;
}

void dg_trace_enable(dg_tasks_t *t)
{
    if (!dg_rec_busy(t))
        return;
    dg_rec_enable();
    name_all(t->rt->actors); /* what was registered and spawned before */
    dg_trace_phase(DG_TRP_CLOCK_SYNC, 0, start_t0, DAGGER_OK);
}

void dg_trace_stop(dg_tasks_t *t)
{
    if (dg_rec_busy(t))
        dg_rec_close();
}

/* ------------------------------------------------------------ planning */

void dg_trace_plan_begin(void)
{
    dg_trace_thread_t *th = dg_rec_thread();
    if (th)
        th->plan_t0 = dg_trace_now();
}

void dg_trace_on_task(void *ctx, const dg_plan_task_info_t *info)
{
    if (!DG_TRACE_ON())
        return;
    const dg_tasks_t *t = ctx;
    uint64_t t1 = dg_trace_now();
    dg_trace_thread_t *th = dg_rec_thread();
    /* An event holds at most 64 KiB: a task with more dependencies keeps
     * the first ones (docs/trace.md). */
    uint32_t ndeps = info->ndeps;
    size_t room = (UINT16_MAX & ~(size_t)7) - sizeof(dg_trf_plan_t);
    if (ndeps > room / sizeof(uint64_t))
        ndeps = (uint32_t)(room / sizeof(uint64_t));
    dg_trf_plan_t *e = dg_rec_event(DG_TRE_PLAN, ndeps, sizeof(*e) + ndeps * sizeof(uint64_t));
    if (!e)
        return;
    e->t0 = th && th->plan_t0 ? th->plan_t0 : t1;
    e->t1 = t1;
    e->task = info->task;
    e->region = t->regions;
    e->codelet = info->codelet;
    e->rank = info->rank;
    e->proc = info->proc;
    e->space = info->space;
    if (ndeps)
        memcpy(e + 1, info->deps, ndeps * sizeof(uint64_t));
    if (th)
        th->plan_t0 = 0;
}
