/* The COLL channel (DG_TX_CH_COLL): its state, its handler and the inbox of
 * arrived collective messages. The handler (dg_coll_on_msg, run by the
 * progress engine on the owner thread, progress.h) stores each one, pulling
 * rendezvous payloads into a buffer of its own; the thread running the
 * collective takes them by (sequence, phase, sender), so messages of a
 * collective a peer already started simply wait here. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/alloc.h"
#include "core/base/common.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "transport/coll_internal.h"

void dg_coll_msg_free(dg_coll_msg_t *m)
{
    if (m) {
        free(m->data);
        free(m);
    }
}

static void payload_arrived(void *arg, dagger_status_t st)
{
    dg_coll_msg_t *m = arg;
    dg_coll_t *c = m->coll;
    pthread_mutex_lock(&c->lock);
    m->status = st;
    m->ready = 1;
    pthread_mutex_unlock(&c->lock);
    dg_tx_notify(c->tx);
}

int dg_coll_on_msg(void *ctx, const dg_tx_msg_t *msg)
{
    dg_coll_t *c = ctx;
    dg_coll_msg_t *m = dg_calloc(1, sizeof(*m));
    unsigned char *data = m ? dg_malloc(msg->len ? msg->len : 1) : NULL;
    if (!data || dg_coll_hdr_decode(msg->hdr, msg->hdr_len, &m->hdr)) {
        dg_log(DG_LOG_ERROR, "dropped a collective message from rank %d: %s", msg->src,
               data ? "malformed header" : "out of memory");
        free(m);
        free(data);
        dg_tx_drop(c->tx, msg->rndv);
        return 0;
    }
    if (m->hdr.phase >= DG_COLL_NOTE) { /* not a part: never taken */
        if (m->hdr.phase == DG_COLL_NOTE)
            dg_coll_foresee_note(c, msg->src, msg->data, msg->data ? msg->len : 0);
        else
            dg_coll_probe_on_msg(c, msg->src, &m->hdr);
        free(m);
        free(data);
        dg_tx_drop(c->tx, msg->rndv);
        return 0;
    }
    m->coll = c;
    m->src = msg->src;
    m->data = data;
    m->len = msg->len;
    m->ready = msg->rndv == NULL;
    if (msg->data && msg->len)
        memcpy(data, msg->data, msg->len);
    /* Checked from a copy: once m is in the inbox, a ready m can be taken
     * and freed by the waiting caller before this line runs. */
    dg_coll_msg_t seen = {.hdr = m->hdr, .src = m->src};
    pthread_mutex_lock(&c->lock);
    m->next = c->inbox;
    c->inbox = m;
    pthread_mutex_unlock(&c->lock);
    dg_coll_foresee_msg(c, &seen);
    if (msg->rndv && dg_tx_recv_into(c->tx, msg->rndv, data, msg->len, payload_arrived, m))
        payload_arrived(m, DAGGER_ERR_NO_MEMORY);
    dg_tx_notify(c->tx);
    return 0;
}

typedef struct dg_coll_want {
    dg_coll_t *c;
    uint64_t seq;
    int phase, src;
    dg_coll_msg_t *found;
} dg_coll_want_t;

/* Unlinks the wanted message once it is complete. */
static int take_if_ready(void *arg)
{
    dg_coll_want_t *w = arg;
    if (w->found)
        return 1;
    pthread_mutex_lock(&w->c->lock);
    for (dg_coll_msg_t **pp = &w->c->inbox; *pp; pp = &(*pp)->next) {
        dg_coll_msg_t *m = *pp;
        if (m->hdr.seq == w->seq && m->hdr.phase == w->phase && m->src == w->src && m->ready) {
            *pp = m->next;
            m->next = NULL;
            w->found = m;
            break;
        }
    }
    pthread_mutex_unlock(&w->c->lock);
    return w->found != NULL;
}

dagger_status_t dg_coll_take(dg_coll_t *c, uint64_t seq, int phase, int src, dg_coll_msg_t **out)
{
    dg_coll_want_t w = {c, seq, phase, src, NULL};
    *out = NULL;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    atomic_store(&c->wait_seq, seq);
    atomic_store(&c->wait_src, src);
    atomic_store(&c->wait_since_ms, (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + 1);
    dagger_status_t st = dg_tx_wait_from(c->tx, take_if_ready, &w, 0, src);
    atomic_store(&c->wait_since_ms, 0);
    if (st != DAGGER_OK)
        return st;
    if (w.found->status != DAGGER_OK) {
        dagger_status_t bad = w.found->status;
        dg_coll_msg_free(w.found);
        return dg_error(bad, "collective #%llu: the payload from rank %d did not arrive",
                        (unsigned long long)seq, src);
    }
    *out = w.found;
    return DAGGER_OK;
}

dagger_status_t dg_coll_create(dg_tx_t *tx)
{
    dg_coll_t *c = dg_calloc(1, sizeof(*c));
    if (!c)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_tx_create: out of memory");
    c->tx = tx;
    c->flat_max = DG_COLL_FLAT_MAX;
    if (tx->size > 1 && dg_coll_planned_init(c) != DAGGER_OK) {
        free(c);
        return dg_error(DAGGER_ERR_NO_MEMORY, "dg_tx_create: out of memory");
    }
    pthread_mutex_init(&c->lock, NULL);
    tx->coll = c;
    return dg_tx_set_handler(tx, DG_TX_CH_COLL, dg_coll_on_msg, c);
}

void dg_coll_destroy(dg_tx_t *tx)
{
    dg_coll_t *c = tx->coll;
    if (!c)
        return;
    while (c->inbox) {
        dg_coll_msg_t *m = c->inbox;
        c->inbox = m->next;
        dg_coll_msg_free(m);
    }
    pthread_mutex_destroy(&c->lock);
    free((void *)c->planned.ring);
    free(c);
    tx->coll = NULL;
}

int dg_coll_waiting(const dg_tx_t *tx, unsigned long long *seq, int *src, double *since)
{
    dg_coll_t *c = tx ? tx->coll : NULL;
    long long ms = c ? atomic_load(&c->wait_since_ms) : 0;
    if (!ms)
        return 0;
    *seq = (unsigned long long)atomic_load(&c->wait_seq);
    *src = atomic_load(&c->wait_src);
    *since = (double)ms * 1e-3;
    return 1;
}

void dg_coll_set_flat_max(dg_tx_t *tx, int n)
{
    if (tx && tx->coll)
        tx->coll->flat_max = n;
}
