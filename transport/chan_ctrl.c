/* The CTRL channel (DG_TX_CH_CTRL), the transport's own, and the one thing
 * it carries: the connection handshake at start-up (its handler: on_hello).
 * Every rank sends one hello to every rank (itself included) and waits for
 * one from each. A hello carries the sender's record as its payload: a rank
 * whose PMIx Get of that record went unanswered takes it from there
 * (tx_startup.c, hello_record). Afterwards every endpoint is wired up in
 * both directions, so
 *  - an unreachable peer is reported by dg_tx_create, not by a later hang;
 *  - closing the endpoints at the end needs no help from the peer (UCX
 *    finishes a half-wired endpoint's wire-up before closing it, which a
 *    peer that already left would never answer).
 * It costs n messages per rank at start-up.
 *
 * A record can name a process that is about to go: the previous process of
 * that rank (test runners start one per test) was still exiting when its
 * record was read, and the launcher had not yet replaced it with the new
 * one's. A hello carries the sender's process identity; a hello from
 * another process than the record named, or a silent peer whose recorded
 * process is gone, makes this rank read that peer's record again, connect to
 * the new address and say hello once more. A peer whose process is gone and
 * that publishes nothing new within DG_TX_GONE_GRACE_S is reported lost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/alloc.h"
#include "core/base/status_internal.h"
#include "transport/tx_internal.h"
#include "transport/tx_startup.h"

/* Generous: slow launchers start ranks seconds apart. */
#define DG_TX_HANDSHAKE_TIMEOUT_S 120
#define DG_TX_GONE_GRACE_S 10.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int same_proc(const dg_proc_id_t *a, const dg_proc_id_t *b)
{
    return a->pid == b->pid && a->starttime == b->starttime;
}

/* A hello from process from of rank src, once this rank has every record. */
static void note_hello(dg_tx_t *tx, int src, const dg_proc_id_t *from)
{
    dg_tx_peer_t *p = &tx->peers[src];
    if (atomic_load(&p->said_hello))
        return;
    if (!same_proc(from, &p->proc)) { /* our record of it is stale */
        p->stale = 1;
        p->hello_proc = *from;
        return;
    }
    atomic_store(&p->said_hello, 1);
    tx->hellos++;
}

/* A hello before this rank has every record (its PMIx Get of one went
 * unanswered, and it makes progress while it waits: tx_startup.c): kept,
 * with the sender's record, until the handshake looks at it. */
static void keep_early(dg_tx_t *tx, const dg_tx_msg_t *msg, const dg_proc_id_t *from)
{
    struct dg_tx_early_hello *h = tx->early ? &tx->early[msg->src] : NULL;
    if (!h || h->seen)
        return;
    h->seen = 1;
    h->proc = *from;
    if (msg->data && msg->len && (h->record = dg_malloc(msg->len))) {
        memcpy(h->record, msg->data, msg->len);
        h->record_len = msg->len;
    }
}

static int on_hello(void *ctx, const dg_tx_msg_t *msg)
{
    dg_tx_t *tx = ctx;
    dg_proc_id_t from;
    if (msg->src < 0 || msg->src >= tx->size || dg_tx_hello_decode(msg->hdr, msg->hdr_len, &from))
        return 0;
    if (tx->records_ready)
        note_hello(tx, msg->src, &from);
    else
        keep_early(tx, msg, &from);
    return 0;
}

/* The hello carries this rank's record, eagerly whatever DAGGER_EAGER_LIMIT
 * says (on_hello keeps only an eager payload, and the rank that needs the
 * record cannot pull it; records are a few hundred bytes). With the record
 * left out of hellos above a small limit, a rank whose PMIx Gets went
 * unanswered waited for records that never came (transport_mr_boot with
 * DAGGER_EAGER_LIMIT=64, 2026-12-07). */
static dagger_status_t say_hello(dg_tx_t *tx, int r, const unsigned char *me)
{
    return dg_tx_send(tx, r, DG_TX_CH_CTRL, me, DG_TX_HELLO_LEN, tx->my_record,
                      tx->my_record ? tx->my_record_len : 0, DG_TX_EAGER, NULL, NULL);
}

/* Rank r's record again; on a fresh one, a new endpoint and a new hello. */
static dagger_status_t reconnect(dg_tx_t *tx, int r, const unsigned char *me)
{
    dg_tx_peer_t *p = &tx->peers[r];
    dg_tx_record_t rec;
    void *buf;
    if (dg_tx_reread_record(tx, r, 0.2, &rec, &buf) != DAGGER_OK)
        return DAGGER_OK; /* nothing new yet */
    if (same_proc(&rec.proc, &p->proc)) {
        free(buf);
        return DAGGER_OK;
    }
    dagger_status_t st = dg_tx_connect_peer(tx, r, rec.address);
    if (st != DAGGER_OK) {
        free(buf);
        return st;
    }
    free(p->record);
    p->record = buf;
    p->proc = rec.proc;
    p->hostname = rec.hostname;
    p->inventory = rec.inventory;
    p->inventory_len = rec.inventory_len;
    p->gone_since = 0;
    if (p->stale && same_proc(&p->hello_proc, &p->proc)) {
        atomic_store(&p->said_hello, 1); /* its hello came before its record */
        tx->hellos++;
    }
    p->stale = 0;
    return say_hello(tx, r, me);
}

/* Looks at the peers not heard from: a stale record is read again; a peer
 * whose process is gone and publishes no new one in time is lost. */
static dagger_status_t check_silent(dg_tx_t *tx, const unsigned char *me)
{
    double now = now_s();
    for (int r = 0; r < tx->size; r++) {
        dg_tx_peer_t *p = &tx->peers[r];
        if (atomic_load(&p->said_hello))
            continue;
        if (p->stale && same_proc(&p->hello_proc, &p->proc)) { /* came before we read its record */
            p->stale = 0;
            atomic_store(&p->said_hello, 1);
            tx->hellos++;
            continue;
        }
        int gone = p->local && dg_proc_probe(&p->proc, NULL) != DG_PROC_ALIVE;
        if (!p->stale && !gone)
            continue;
        if (gone && !p->gone_since)
            p->gone_since = now;
        dagger_status_t st = reconnect(tx, r, me);
        if (st != DAGGER_OK)
            return st;
        if (p->gone_since && now - p->gone_since > DG_TX_GONE_GRACE_S) {
            char why[128];
            snprintf(why, sizeof(why), "its process (pid %d) ended during start-up and no "
                     "new one published a record within %.0f s", (int)p->proc.pid,
                     DG_TX_GONE_GRACE_S);
            dg_tx_mark_lost(tx, r, why);
            return dg_tx_health(tx);
        }
    }
    return DAGGER_OK;
}

static int all_hellos(void *arg)
{
    dg_tx_t *tx = arg;
    return tx->hellos >= tx->size && atomic_load(&tx->live_ops) == 0;
}

dagger_status_t dg_tx_listen_hello(dg_tx_t *tx)
{
    return dg_tx_set_handler(tx, DG_TX_CH_CTRL, on_hello, tx);
}

/* "rank 2 (pid 4711 on node3, running)" for each rank not heard from: the
 * process its start-up record names, and whether it still runs there. */
static void list_silent(const dg_tx_t *tx, char *buf, size_t len)
{
    size_t at = 0;
    int shown = 0;
    buf[0] = '\0';
    for (int r = 0; r < tx->size && at + 1 < len; r++) {
        const dg_tx_peer_t *p = &tx->peers[r];
        if (atomic_load(&p->said_hello))
            continue;
        if (shown++ == 8) {
            snprintf(buf + at, len - at, ", ...");
            break;
        }
        const char *state = "on another host";
        if (p->local || r == tx->rank)
            state = dg_proc_probe(&p->proc, NULL) == DG_PROC_ALIVE ? "running" : "not running";
        int n = snprintf(buf + at, len - at, "%srank %d (pid %d on %s, %s)", shown > 1 ? ", " : "",
                         r, (int)p->proc.pid, p->hostname ? p->hostname : "?", state);
        at += n > 0 ? (size_t)n : 0;
    }
}

dagger_status_t dg_tx_handshake(dg_tx_t *tx)
{
    unsigned char me[DG_TX_HELLO_LEN] = {0};
    dg_tx_hello_encode(&tx->peers[tx->rank].proc, me);
    atomic_store(&tx->handshaking, 1);
    dagger_status_t st = DAGGER_OK;
    /* A singleton hears itself without a message: its endpoint to itself
     * waits for its first real one (dg_tx_connect_self). */
    if (tx->size == 1) {
        atomic_store(&tx->peers[0].said_hello, 1);
        tx->hellos++;
    }
    for (int r = 0; tx->early && r < tx->size; r++)
        if (tx->early[r].seen)
            note_hello(tx, r, &tx->early[r].proc);
    for (int i = 0; i < tx->size && tx->size > 1 && st == DAGGER_OK; i++)
        st = say_hello(tx, (tx->rank + i) % tx->size, me); /* spread the first messages */
    double deadline = now_s() + DG_TX_HANDSHAKE_TIMEOUT_S;
    while (st == DAGGER_OK) {
        st = dg_tx_wait(tx, all_hellos, tx, 0.25);
        if (st != DAGGER_ERR_TIMEOUT)
            break;
        st = now_s() < deadline ? check_silent(tx, me) : DAGGER_ERR_TIMEOUT;
    }
    atomic_store(&tx->handshaking, 0);
    if (st == DAGGER_ERR_TIMEOUT) {
        char silent[512];
        list_silent(tx, silent, sizeof(silent));
        return dg_error(DAGGER_ERR_TRANSPORT, "dg_tx_create: heard from %d of %d ranks within %d s; "
                        "silent: %s. Those ranks cannot reach this one (check UCX_TLS and "
                        "UCX_NET_DEVICES) or never got past start-up", tx->hellos, tx->size,
                        DG_TX_HANDSHAKE_TIMEOUT_S, silent);
    }
    return st;
}
