/* Bootstrap: singleton or PMIx client (see bootstrap.h). Only standard PMIx
 * keys are read, so prterun, srun --mpi=pmix and Open MPI's mpirun all work
 * without launcher-specific variables. */
#include "transport/bootstrap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/alloc.h"
#include "core/base/common.h"
#include "core/base/status_internal.h"
#include "transport/bootstrap_gds.h"
#include "transport/bootstrap_guard.h"
#include "transport/bootstrap_pmix.h"

static int launched_by_pmix(void)
{
    return getenv("PMIX_NAMESPACE") || getenv("PMIX_RANK");
}

static void init_singleton(dg_boot_t *boot)
{
    boot->rank = 0;
    boot->size = 1;
    boot->local_rank = 0;
    boot->local_size = 1;
    boot->singleton = 1;
    if (gethostname(boot->hostname, sizeof(boot->hostname) - 1))
        snprintf(boot->hostname, sizeof(boot->hostname), "localhost");
}

/* Reads an integer-valued key of proc; -1 when the launcher does not
 * provide it (callers fall back to something sensible or fail). */
static long get_number(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *val = NULL;
    if (PMIx_Get(proc, key, NULL, 0, &val) != PMIX_SUCCESS || !val)
        return -1;
    long v = -1;
    switch (val->type) {
    case PMIX_UINT32: v = (long)val->data.uint32; break;
    case PMIX_UINT16: v = (long)val->data.uint16; break;
    case PMIX_INT32: v = (long)val->data.int32; break;
    case PMIX_INT: v = (long)val->data.integer; break;
    case PMIX_UINT: v = (long)val->data.uint; break;
    case PMIX_PROC_RANK: v = (long)val->data.rank; break;
    case PMIX_UINT64: v = (long)val->data.uint64; break;
    case PMIX_SIZE: v = (long)val->data.size; break;
    default: break;
    }
    PMIX_VALUE_RELEASE(val);
    return v;
}

/* Local rank and size from PMIX_LOCAL_PEERS ("0,1,5": the job's ranks on
 * this node, in order). Needed because Open MPI 4.1's server answers
 * PMIX_LOCAL_RANK only to the first process of a rank that connects, and
 * test runners start a fresh process per test. */
static void local_from_peers(const pmix_proc_t *job, int rank, long *lrank, long *lsize)
{
    pmix_value_t *val = NULL;
    if (PMIx_Get(job, PMIX_LOCAL_PEERS, NULL, 0, &val) != PMIX_SUCCESS || !val ||
        val->type != PMIX_STRING || !val->data.string) {
        if (val)
            PMIX_VALUE_RELEASE(val);
        return;
    }
    long n = 0, mine = -1;
    for (const char *p = val->data.string; *p;) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p)
            break;
        if (r == rank)
            mine = n;
        n++;
        p = *end == ',' ? end + 1 : end;
    }
    PMIX_VALUE_RELEASE(val);
    if (mine >= 0) {
        *lrank = mine;
        *lsize = n;
    }
}

static void get_hostname(const pmix_proc_t *me, char *out, size_t cap)
{
    pmix_value_t *val = NULL;
    if (PMIx_Get(me, PMIX_HOSTNAME, NULL, 0, &val) == PMIX_SUCCESS && val &&
        val->type == PMIX_STRING && val->data.string) {
        snprintf(out, cap, "%s", val->data.string);
    } else if (gethostname(out, cap - 1)) {
        snprintf(out, cap, "localhost");
    }
    if (val)
        PMIX_VALUE_RELEASE(val);
}

dagger_status_t dg_boot_pmix_failure(const char *what, pmix_status_t rc)
{
    const char *ns = getenv("PMIX_NAMESPACE");
    const char *rk = getenv("PMIX_RANK");
    return dg_error(DAGGER_ERR_BOOTSTRAP,
                    "%s failed: %s (%d); PMIx library %s; PMIX_NAMESPACE=%s PMIX_RANK=%s. This "
                    "process was started by a launcher but cannot use its PMIx server: start it "
                    "with the launcher that set these variables (prterun, srun --mpi=pmix, "
                    "mpirun), or unset PMIX_NAMESPACE and PMIX_RANK to run as a single rank",
                    what, PMIx_Error_string(rc), (int)rc, PMIx_Get_version(), ns ? ns : "(unset)",
                    rk ? rk : "(unset)");
}

/* The start-up guard names local ranks that never showed up. */
static void tell_guard(dg_boot_t *boot, const pmix_proc_t *job)
{
    pmix_value_t *val = NULL;
    if (PMIx_Get(job, PMIX_LOCAL_PEERS, NULL, 0, &val) == PMIX_SUCCESS && val &&
        val->type == PMIX_STRING)
        dg_boot_guard_job(boot, boot->size, val->data.string);
    if (val)
        PMIX_VALUE_RELEASE(val);
}

static dagger_status_t read_identity(dg_boot_t *boot)
{
    struct dg_boot_pmix *px = boot->pmix;
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, px->me.nspace, PMIX_RANK_WILDCARD);
    boot->rank = (int)px->me.rank;
    long size = get_number(&job, PMIX_JOB_SIZE);
    if (size < 1 || boot->rank >= size)
        return dg_error(DAGGER_ERR_BOOTSTRAP,
                        "the launcher gave rank %d but job size %ld (PMIX_JOB_SIZE); PMIx %s",
                        boot->rank, size, PMIx_Get_version());
    boot->size = (int)size;
    long lrank = get_number(&px->me, PMIX_LOCAL_RANK);
    long lsize = get_number(&job, PMIX_LOCAL_SIZE);
    if (lrank < 0 || lsize < 1)
        local_from_peers(&job, boot->rank, &lrank, &lsize);
    /* A launcher that publishes no node-local placement at all: treat every
     * rank as alone on its node (only affects resource sharing hints). */
    boot->local_rank = lrank >= 0 ? (int)lrank : 0;
    boot->local_size = lsize >= 1 ? (int)lsize : 1;
    get_hostname(&px->me, boot->hostname, sizeof(boot->hostname));
    tell_guard(boot, &job);
    return DAGGER_OK;
}

dagger_status_t dg_boot_init(dg_boot_t *boot)
{
    return dg_boot_init_within(boot, DG_BOOT_TIMEOUT_S, 0);
}

dagger_status_t dg_boot_init_within(dg_boot_t *boot, double limit_s, unsigned effects)
{
    DG_CHECK_ARG(boot, "dg_boot_init: boot is NULL");
    memset(boot, 0, sizeof(*boot));
    boot->effects = effects;
    if (!launched_by_pmix()) {
        init_singleton(boot);
        return DAGGER_OK;
    }
    boot->pmix = dg_calloc(1, sizeof(*boot->pmix));
    if (!boot->pmix)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_boot_init: out of memory");
    dg_boot_gds_select(); /* before the guard's thread starts */
    dg_boot_guard_start(boot, limit_s);
    dg_boot_guard_step(boot, DG_BOOT_STEP_PMIX_INIT);
    char why[1024];
    if (dg_pmix_load(why, sizeof(why)) != 0) {
        dg_boot_guard_stop(boot);
        free(boot->pmix);
        boot->pmix = NULL;
        return dg_error(DAGGER_ERR_BOOTSTRAP, "a launcher started this process (PMIX_NAMESPACE "
                        "or PMIX_RANK is set), but %s", why);
    }
    pmix_status_t rc = PMIx_Init(&boot->pmix->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        dagger_status_t st = dg_boot_pmix_failure("PMIx_Init", rc);
        dg_boot_guard_stop(boot);
        free(boot->pmix);
        boot->pmix = NULL;
        return st;
    }
    /* Before the first request that waits for an answer (bootstrap_nodelay.c). */
    dg_boot_nodelay();
    dg_boot_guard_step(boot, DG_BOOT_STEP_IDENTITY);
    dagger_status_t st = read_identity(boot);
    dg_boot_guard_step(boot, DG_BOOT_STEP_IDLE);
    if (st != DAGGER_OK)
        dg_boot_finalize(boot);
    return st;
}

void dg_boot_end_start_up(dg_boot_t *boot)
{
    dg_boot_guard_stop(boot);
}

void dg_boot_finalize(dg_boot_t *boot)
{
    if (!boot)
        return;
    if (boot->pmix) {
        dg_boot_unwatch(boot, NULL);
        dg_boot_retract(boot);
        PMIx_Finalize(NULL, 0);
        free(boot->pmix);
    }
    dg_boot_guard_stop(boot); /* last: a rank killed meanwhile is still named */
    memset(boot, 0, sizeof(*boot));
}

/* LeakSanitizer suppressions, in sanitizer builds only. OpenPMIx 4.2 leaves
 * allocations of PMIx_Init and of its progress thread behind after
 * PMIx_Finalize (strings of its environment, the ds21 lock, values cached by
 * its event loop); none is reachable from our calls and none grows with use.
 * LeakSanitizer looks this function up by name at start-up. It lives in this
 * file, which every program that uses PMIx links (from libdagger.a, too). */
#if defined(__SANITIZE_ADDRESS__)
#define DG_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DG_LSAN 1
#endif
#endif

#ifdef DG_LSAN
/* Default visibility: the library builds with -fvisibility=hidden, and the
 * sanitizer runtime finds this function through the dynamic symbol table
 * (hidden, it was not found and every PMIx program failed LeakSanitizer). */
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void);

__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void)
{
    return "leak:libpmix.so\n";
}
#endif
