/* One PMIx Get of a peer's key that waits a bounded time for the server's
 * answer (bootstrap_pmix.h, dg_boot_get_within).
 *
 * Why not PMIx_Get: it waits for the server's answer without a limit of its
 * own. PMIX_TIMEOUT asks the server to answer within that time, and a
 * server that lost the request never answers at all. Open MPI 4.1's server
 * did so in CI (2026-12-06, mr_array_ewise_np4): rank 1 sat in PMIx_Get of
 * the start-up exchange while the others, which had its record, waited for
 * its hello, until the test's limit (docs/transport.md, "Known flakes").
 * So the Get is PMIx_Get_nb, waited for here. A request not answered in
 * time is abandoned and the caller asks again, until the exchange's own
 * deadline: no call of the exchange waits without a limit.
 *
 * What asking again can and cannot do: OpenPMIx 4.2's client sends at most
 * one request per rank to its server. A Get of a rank while one for that
 * rank is pending joins the pending one's list (get_data in
 * pmix_client_get.c, v4.2.2), and the server's one answer completes them
 * all. So after a late answer (a slow server)
 * the next Get is a new request, but a request the server never answers
 * holds every later Get of that rank: asking again does not reach the
 * server, which is why it rescued none of the hangs seen. An answer that
 * comes later frees the request; one that never comes leaves it allocated
 * (a few hundred bytes, once per Get asked meanwhile). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/alloc.h"
#include "core/base/cond.h"
#include "transport/bootstrap_pmix.h"

/* One request, shared by the waiting thread and PMIx's progress thread. PMIx
 * keeps pointers to the key and the info array until it answers, so they
 * live here. */
typedef struct get_req {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int refs;      /* the waiter and PMIx's answer: the last to let go frees it */
    int answered;  /* the answer is in rc and val */
    int dropped;   /* test injection: the answer is thrown away */
    pmix_status_t rc;
    pmix_value_t *val; /* our copy of the byte object */
    pmix_proc_t peer;
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_info_t info[2];
    size_t ninfo;
} get_req_t;

/* Test injection (bootstrap.h): the nth Get from now (every one: -1) loses
 * its answer, and the wait for that answer lasts lost_wait_s instead of the
 * caller's. */
static _Atomic int lost_countdown;
static _Atomic double lost_wait_s;
static _Atomic unsigned long abandoned_gets;

void dg_boot_inject_lost_get(int nth, double wait_s)
{
    atomic_store(&lost_wait_s, nth != 0 ? wait_s : 0);
    atomic_store(&lost_countdown, nth > 0 ? nth : nth < 0 ? -1 : 0);
}

unsigned long dg_boot_abandoned_gets(void)
{
    return atomic_load(&abandoned_gets);
}

static void req_free(get_req_t *g)
{
    if (g->val)
        PMIX_VALUE_RELEASE(g->val);
    for (size_t i = 0; i < g->ninfo; i++)
        PMIX_INFO_DESTRUCT(&g->info[i]);
    pthread_cond_destroy(&g->cond);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

/* Our own copy of a byte object: PMIx frees kv when the callback returns. */
static pmix_status_t copy_bytes(const pmix_value_t *kv, pmix_value_t **out)
{
    *out = NULL;
    if (!kv || kv->type != PMIX_BYTE_OBJECT)
        return PMIX_ERR_TYPE_MISMATCH;
    pmix_value_t *v;
    PMIX_VALUE_CREATE(v, 1);
    char *bytes = kv->data.bo.size ? dg_malloc(kv->data.bo.size) : NULL;
    if (!v || (kv->data.bo.size && !bytes)) {
        free(v);
        free(bytes);
        return PMIX_ERR_NOMEM;
    }
    if (kv->data.bo.size)
        memcpy(bytes, kv->data.bo.bytes, kv->data.bo.size);
    v->type = PMIX_BYTE_OBJECT;
    v->data.bo.bytes = bytes;
    v->data.bo.size = kv->data.bo.size;
    *out = v;
    return PMIX_SUCCESS;
}

/* Lets go of g; frees it when the other side has let go too. */
static void req_release(get_req_t *g)
{
    pthread_mutex_lock(&g->lock);
    int last = --g->refs == 0;
    pthread_mutex_unlock(&g->lock);
    if (last)
        req_free(g);
}

/* PMIx's progress thread. */
static void on_answer(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    get_req_t *g = cbdata;
    pmix_value_t *copy = NULL;
    if (status == PMIX_SUCCESS)
        status = copy_bytes(kv, &copy);
    pthread_mutex_lock(&g->lock);
    if (g->dropped) {
        if (copy)
            PMIX_VALUE_RELEASE(copy);
    } else {
        g->rc = status;
        g->val = copy;
        g->answered = 1;
        pthread_cond_signal(&g->cond);
    }
    pthread_mutex_unlock(&g->lock);
    req_release(g);
}

static void deadline_in(struct timespec *ts, double s)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    long long ns = (long long)ts->tv_nsec + (long long)(s * 1e9);
    ts->tv_sec += (time_t)(ns / 1000000000ll);
    ts->tv_nsec = (long)(ns % 1000000000ll);
}

pmix_status_t dg_boot_get_within(const pmix_proc_t *peer, const char *key, int refresh,
                                 double wait_s, pmix_value_t **out)
{
    *out = NULL;
    get_req_t *g = dg_calloc(1, sizeof(*g));
    if (!g)
        return PMIX_ERR_NOMEM;
    dg_cond_init_monotonic(&g->cond);
    pthread_mutex_init(&g->lock, NULL);
    g->peer = *peer;
    strncpy(g->key, key, PMIX_MAX_KEYLEN);
    /* The server is asked to answer within a second, with the value or
     * PMIX_ERR_TIMEOUT (the request's PMIX_TIMEOUT). */
    int timeout = 1;
    bool yes = true;
    PMIX_INFO_LOAD(&g->info[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&g->info[1], PMIX_GET_REFRESH_CACHE, &yes, PMIX_BOOL);
    g->ninfo = 2;
    int armed = atomic_load(&lost_countdown);
    int lost = armed < 0 || (armed > 0 && atomic_fetch_sub(&lost_countdown, 1) == 1);
    if (lost) {
        g->dropped = 1;
        wait_s = atomic_load(&lost_wait_s);
    }
    g->refs = 2;
    pmix_status_t rc = PMIx_Get_nb(&g->peer, g->key, g->info, refresh ? 2 : 1, on_answer, g);
    if (rc != PMIX_SUCCESS) { /* PMIx will not call on_answer */
        req_free(g);
        return rc;
    }
    struct timespec until;
    deadline_in(&until, wait_s);
    pthread_mutex_lock(&g->lock);
    int err = 0;
    while (!g->answered && err != ETIMEDOUT)
        err = pthread_cond_timedwait(&g->cond, &g->lock, &until);
    if (g->answered) {
        rc = g->rc;
        *out = g->val;
        g->val = NULL;
    } else {
        rc = PMIX_ERR_TIMEOUT; /* the caller asks again */
        atomic_fetch_add(&abandoned_gets, 1);
    }
    pthread_mutex_unlock(&g->lock);
    req_release(g);
    return rc;
}
