/* dg_boot_allgather over PMIx without fences: every rank Puts and Commits
 * its bytes under a key of this exchange, then Gets every rank's key, which
 * the PMIx server answers once that rank has committed (or after a timeout).
 *
 * Why no PMIx_Fence: Open MPI 4.1's server (OpenPMIx 4.2) prunes a client
 * that finalized from collectives still in progress, even when the next
 * process of the same rank is about to join them (openpmix issues 3931,
 * 4113: fixed in later releases). When one process per test connects as the
 * same rank (test runners do that), fences then complete without a rank
 * (PMIX_ERR_PARTIAL_SUCCESS) or leave it behind forever. Gets of a key are
 * point-to-point and unaffected; a value left by an earlier process of a
 * rank under a reused key is caught by the caller's check and read again
 * (under PMIx's hash store a stale value of a rank of this host stays in
 * the client's cache: keys must not be reused there, docs/transport.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/alloc.h"
#include "core/base/status_internal.h"
#include "transport/bootstrap_guard.h"
#include "transport/bootstrap_pmix.h"
#include "transport/bootstrap_value.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Values carry a leading byte; an empty value is a tombstone
 * (bootstrap_value.h). */
static dagger_status_t publish(const char *key, const void *mine, size_t len, int live)
{
    unsigned char *bytes = live ? dg_malloc(len + 1) : NULL;
    if (live && !bytes)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_boot_allgather: out of memory");
    if (live) {
        bytes[0] = DG_BOOT_VALUE_LIVE;
        if (len)
            memcpy(bytes + 1, mine, len);
    }
    pmix_value_t val;
    PMIX_VALUE_CONSTRUCT(&val);
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)bytes;
    val.data.bo.size = live ? len + 1 : 0;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &val);
    free(bytes);
    if (rc != PMIX_SUCCESS)
        return dg_boot_pmix_failure("PMIx_Put", rc);
    rc = PMIx_Commit();
    return rc == PMIX_SUCCESS ? DAGGER_OK : dg_boot_pmix_failure("PMIx_Commit", rc);
}

static void exchange_key(const dg_boot_t *boot, unsigned n, char *key, size_t cap)
{
    snprintf(key, cap, "dagger.xchg.%s%s%u", boot->tag, boot->tag[0] ? "." : "", n);
}

void dg_boot_retract(dg_boot_t *boot)
{
    if (!boot || !boot->pmix)
        return;
    char key[PMIX_MAX_KEYLEN + 1];
    for (unsigned n = 0; n < boot->exchanges; n++) {
        exchange_key(boot, n, key, sizeof(key));
        publish(key, NULL, 0, 0);
    }
}

/* One Get of peer's key: PMIX_SUCCESS with *out, or the error (see
 * not_yet). refresh asks the server past this client's cache; only for a
 * value already read and found stale, never for a miss: OpenPMIx 4.2's
 * server answers a refresh for a rank of its own host at once and with no
 * data (it expects such data in the shared-memory store), so under PMIx's
 * hash store (bootstrap_gds.h) a refreshing reader would never see a record
 * published after its first Get. A plain Get of a key the client does not
 * hold goes to the server, which waits for it up to a second (and may also
 * sit on a request for a rank whose process was replaced and never answer
 * it: dg_boot_get_within waits DG_BOOT_GET_WAIT_S at most, and fetch asks
 * again until its deadline; PMIx's client folds a second Get of a rank into
 * the one pending, so that only helps after a late answer: bootstrap_get.c). */
static pmix_status_t get_once(const pmix_proc_t *peer, const char *key, int refresh,
                              pmix_value_t **out)
{
    return dg_boot_get_within(peer, key, refresh, DG_BOOT_GET_WAIT_S, out);
}

/* The answers that mean "not there yet" for a rank whose earlier process
 * finalized: the server answers them at once instead of waiting. */
static int not_yet(pmix_status_t rc)
{
    return rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_PROC_ENTRY_NOT_FOUND ||
           rc == PMIX_ERR_TIMEOUT;
}

/* A live value holding len bytes of data, as a Get would return it (release
 * it with PMIX_VALUE_RELEASE); NULL when out of memory. */
static pmix_value_t *live_value(const void *data, size_t len)
{
    pmix_value_t *v;
    PMIX_VALUE_CREATE(v, 1);
    char *bytes = dg_malloc(len + 1);
    if (!v || !bytes) {
        free(v);
        free(bytes);
        return NULL;
    }
    bytes[0] = DG_BOOT_VALUE_LIVE;
    if (len)
        memcpy(bytes + 1, data, len);
    v->type = PMIX_BYTE_OBJECT;
    v->data.bo.bytes = bytes;
    v->data.bo.size = len + 1;
    return v;
}

/* Rank r's value from the second source (dg_boot_set_alternate), when it
 * has one that check accepts. */
static int from_alternate(const dg_boot_t *boot, int r, dg_boot_check_fn check, void *ctx,
                          pmix_value_t **out)
{
    const void *data = NULL;
    size_t len = 0;
    if (!boot->alt.fn || !boot->alt.fn(boot->alt.ctx, r, &data, &len) ||
        (check && !check(ctx, r, data, len)))
        return 0;
    *out = live_value(data, len);
    return *out != NULL;
}

void dg_boot_set_alternate(dg_boot_t *boot,
                           int (*fn)(void *ctx, int rank, const void **data, size_t *len),
                           void *ctx)
{
    if (boot)
        boot->alt = (struct dg_boot_alt){.fn = fn, .ctx = ctx};
}

/* Reads rank r's value of key, again while it is missing or check calls it
 * stale, until the deadline. Once a Get went unanswered (PMIx then holds
 * every later Get of r: bootstrap_get.c), the second source is asked too. */
static dagger_status_t fetch(dg_boot_t *boot, int r, const char *key, dg_boot_check_fn check,
                             void *ctx, double deadline, pmix_value_t **out)
{
    pmix_proc_t peer;
    PMIX_LOAD_PROCID(&peer, boot->pmix->me.nspace, (pmix_rank_t)r);
    dg_boot_gone_t gone = {.rank = -1};
    double limit = deadline - now_s();
    unsigned long unanswered0 = dg_boot_abandoned_gets();
    for (int stale = 0;;) {
        pmix_status_t rc = get_once(&peer, key, stale, out);
        const void *bytes = NULL;
        size_t len = 0;
        int live = rc == PMIX_SUCCESS ? dg_boot_value_decode((*out)->data.bo.bytes,
                                                             (*out)->data.bo.size, &bytes, &len)
                                      : 0;
        if (rc == PMIX_SUCCESS && !live)
            rc = PMIX_ERR_NOT_FOUND; /* a tombstone: the rank's next process is not there yet */
        if (rc == PMIX_SUCCESS && live > 0 && (!check || check(ctx, r, bytes, len)))
            return DAGGER_OK;
        if (rc == PMIX_ERR_TYPE_MISMATCH || live < 0) {
            if (*out)
                PMIX_VALUE_RELEASE(*out);
            *out = NULL;
            return dg_error(DAGGER_ERR_BOOTSTRAP, "rank %d published start-up data of another type "
                            "or format (not this Dagger-C version?)", r);
        }
        if (rc != PMIX_SUCCESS && !not_yet(rc))
            return dg_boot_pmix_failure("PMIx_Get of a peer's start-up data", rc);
        stale = *out != NULL; /* a tombstone or a record check refused */
        if (*out)
            PMIX_VALUE_RELEASE(*out);
        *out = NULL;
        unsigned long unanswered = dg_boot_abandoned_gets() - unanswered0;
        if (unanswered && from_alternate(boot, r, check, ctx, out))
            return DAGGER_OK;
        if (now_s() > deadline && unanswered)
            return dg_error(DAGGER_ERR_BOOTSTRAP, "rank %d's start-up data could not be read "
                            "within %.0f s: the launcher's PMIx server never answered this "
                            "rank's request for it (%lu waits of %.0f s ran out; PMIx does not "
                            "ask its server again for a rank while a request for it is "
                            "pending). Open MPI 4.1's server does this now and then when "
                            "processes of one rank come and go, as test runners start them",
                            r, limit, unanswered, DG_BOOT_GET_WAIT_S);
        if (now_s() > deadline)
            return dg_error(DAGGER_ERR_BOOTSTRAP, "rank %d did not publish %sstart-up data within "
                            "%.0f s: did it start, and is it the same program?", r,
                            rc == PMIX_SUCCESS ? "fresh " : "its ", limit);
        if (dg_boot_gone_check(boot, r, &gone, now_s()))
            return dg_error(DAGGER_ERR_PEER_LOST, "rank %d (on this host) was lost: its process "
                            "ended before it published its start-up data; the job cannot "
                            "continue", r);
        nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000}, NULL);
    }
}

/* Concatenates the values into one buffer (see dg_boot_allgather). */
static dagger_status_t concat(int n, pmix_value_t **vals, void **all, size_t *offsets)
{
    size_t total = 0;
    for (int r = 0; r < n; r++)
        total += vals[r]->data.bo.size - 1; /* without the leading byte */
    unsigned char *buf = dg_malloc(total ? total : 1);
    if (!buf)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_boot_allgather: out of memory for %zu bytes", total);
    size_t at = 0;
    for (int r = 0; r < n; r++) {
        size_t len = vals[r]->data.bo.size - 1;
        offsets[r] = at;
        if (len)
            memcpy(buf + at, vals[r]->data.bo.bytes + 1, len);
        at += len;
    }
    offsets[n] = at;
    *all = buf;
    return DAGGER_OK;
}

static dagger_status_t exchange_pmix(dg_boot_t *boot, const void *mine, size_t len,
                                     dg_boot_check_fn check, void *ctx, void **all,
                                     size_t *offsets)
{
    char key[PMIX_MAX_KEYLEN + 1];
    exchange_key(boot, boot->exchanges++, key, sizeof(key));
    dg_boot_guard_step(boot, DG_BOOT_STEP_EXCHANGE);
    dagger_status_t st = publish(key, mine, len, 1);
    pmix_value_t **vals = dg_calloc((size_t)boot->size, sizeof(*vals));
    if (st == DAGGER_OK && !vals)
        st = dg_error(DAGGER_ERR_NO_MEMORY, "dg_boot_allgather: out of memory");
    double deadline = now_s() + DG_BOOT_TIMEOUT_S;
    /* This rank's own value needs no Get. */
    if (st == DAGGER_OK && !(vals[boot->rank] = live_value(mine, len)))
        st = dg_error(DAGGER_ERR_NO_MEMORY, "dg_boot_allgather: out of memory");
    for (int r = 0; r < boot->size && st == DAGGER_OK; r++)
        if (r != boot->rank)
            st = fetch(boot, r, key, check, ctx, deadline, &vals[r]);
    if (st == DAGGER_OK)
        st = concat(boot->size, vals, all, offsets);
    for (int r = 0; vals && r < boot->size; r++)
        if (vals[r])
            PMIX_VALUE_RELEASE(vals[r]);
    free(vals);
    dg_boot_guard_step(boot, DG_BOOT_STEP_IDLE);
    return st;
}

dagger_status_t dg_boot_reread(dg_boot_t *boot, int rank, dg_boot_check_fn check, void *ctx,
                               double wait_s, void **data, size_t *len)
{
    DG_CHECK_ARG(boot && data && len && rank >= 0 && rank < boot->size,
                 "dg_boot_reread: NULL argument or rank %d outside 0..%d", rank,
                 boot ? boot->size - 1 : -1);
    *data = NULL;
    *len = 0;
    if (boot->singleton || !boot->pmix || !boot->exchanges)
        return dg_error(DAGGER_ERR_STATE, "dg_boot_reread: no exchange to read again");
    char key[PMIX_MAX_KEYLEN + 1];
    exchange_key(boot, boot->exchanges - 1, key, sizeof(key));
    pmix_value_t *v = NULL;
    dagger_status_t st = fetch(boot, rank, key, check, ctx, now_s() + wait_s, &v);
    if (st != DAGGER_OK)
        return st;
    size_t n = v->data.bo.size - 1;
    *data = dg_malloc(n ? n : 1);
    if (*data) {
        memcpy(*data, v->data.bo.bytes + 1, n);
        *len = n;
    } else {
        st = dg_error(DAGGER_ERR_NO_MEMORY, "dg_boot_reread: out of memory");
    }
    PMIX_VALUE_RELEASE(v);
    return st;
}

dagger_status_t dg_boot_allgather(dg_boot_t *boot, const void *mine, size_t len,
                                  dg_boot_check_fn check, void *ctx, void **all, size_t *offsets)
{
    DG_CHECK_ARG(boot && all && offsets && (mine || !len),
                 "dg_boot_allgather: NULL boot, output or input with %zu bytes", len);
    *all = NULL;
    if (!boot->singleton)
        return exchange_pmix(boot, mine, len, check, ctx, all, offsets);
    *all = dg_malloc(len ? len : 1);
    if (!*all)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_boot_allgather: out of memory");
    if (len)
        memcpy(*all, mine, len);
    offsets[0] = 0;
    offsets[1] = len;
    return DAGGER_OK;
}
