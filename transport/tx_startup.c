/* The start-up exchange (see tx_startup.h) with its checks (build ids,
 * ranks that could not open UCX, stale records); the record's bytes are in
 * tx_record.c. */
#include "transport/tx_startup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "transport/tx_internal.h"

/* Lists the ranks whose build id differs from rank 0's. */
static dagger_status_t check_builds(dg_tx_t *tx, const dg_tx_record_t *recs)
{
    char list[256] = "";
    int bad = 0, first = 0;
    for (int r = 1; r < tx->size; r++) {
        if (recs[r].build_id == recs[0].build_id)
            continue;
        if (!bad)
            first = r;
        size_t used = strlen(list);
        if (bad++ < 16)
            snprintf(list + used, sizeof(list) - used, "%s%d", bad > 1 ? ", " : "", r);
    }
    if (!bad)
        return DAGGER_OK;
    return dg_error(DAGGER_ERR_BUILD_MISMATCH,
                    "rank%s %s%s run%s a different build of libdagger than rank 0 (build id "
                    "%016llx, rank 0 has %016llx): launch the same build on every rank",
                    bad > 1 ? "s" : "", list, bad > 16 ? ", ..." : "", bad > 1 ? "" : "s",
                    (unsigned long long)recs[first].build_id,
                    (unsigned long long)recs[0].build_id);
}

/* A rank that could not open UCX still takes part in the exchange (so
 * nobody waits for it forever) with an empty address and its error text.
 * That rank itself returns its own status (opened: DAGGER_ERR_NO_MEMORY
 * stays that), the others DAGGER_ERR_TRANSPORT. */
static dagger_status_t check_opened(dg_tx_t *tx, const dg_tx_record_t *recs,
                                    dagger_status_t opened)
{
    for (int r = 0; r < tx->size; r++)
        if (!recs[r].address_len)
            return dg_error(r == tx->rank && opened != DAGGER_OK ? opened : DAGGER_ERR_TRANSPORT,
                            "rank %d could not start UCX: %.*s", r,
                            (int)recs[r].inventory_len, (const char *)recs[r].inventory);
    return DAGGER_OK;
}

/* A record naming a process of this host that is not running was left by
 * an earlier process of that rank (test runners start one per test): read
 * it again. Records of other hosts cannot be checked this way. */
static int record_fresh(void *ctx, int rank, const void *data, size_t len)
{
    const dg_boot_t *boot = ctx;
    dg_tx_record_t rec;
    if (rank == boot->rank || dg_tx_record_decode(data, len, &rec) ||
        strcmp(rec.hostname, boot->hostname))
        return 1; /* a malformed record is reported by decode_all */
    return dg_proc_probe(&rec.proc, NULL) == DG_PROC_ALIVE;
}

dagger_status_t dg_tx_reread_record(dg_tx_t *tx, int r, double wait_s, dg_tx_record_t *rec,
                                    void **buf)
{
    size_t len;
    dagger_status_t st = dg_boot_reread(tx->boot, r, record_fresh, tx->boot, wait_s, buf, &len);
    if (st != DAGGER_OK)
        return st;
    if (dg_tx_record_decode(*buf, len, rec) || !rec->address_len) {
        free(*buf);
        *buf = NULL;
        return dg_error(DAGGER_ERR_BOOTSTRAP, "rank %d's new start-up record is malformed or "
                        "names no UCX address", r);
    }
    return DAGGER_OK;
}

static dagger_status_t decode_all(dg_tx_t *tx, const size_t *offsets, dg_tx_record_t *recs,
                                  dagger_status_t opened)
{
    const unsigned char *all = tx->exchange;
    for (int r = 0; r < tx->size; r++)
        if (dg_tx_record_decode(all + offsets[r], offsets[r + 1] - offsets[r], &recs[r]))
            return dg_error(DAGGER_ERR_BOOTSTRAP, "the start-up record of rank %d is malformed "
                            "(a different Dagger-C version?)", r);
    dagger_status_t st = check_opened(tx, recs, opened);
    if (st == DAGGER_OK)
        st = check_builds(tx, recs);
    if (st != DAGGER_OK)
        return st;
    const dg_tx_record_t *mine = &recs[tx->rank];
    for (int r = 0; r < tx->size; r++) {
        dg_tx_peer_t *p = &tx->peers[r];
        p->tx = tx;
        p->rank = r;
        p->hostname = recs[r].hostname;
        p->inventory = recs[r].inventory;
        p->inventory_len = recs[r].inventory_len;
        p->proc = recs[r].proc;
        p->local = r != tx->rank && !strcmp(recs[r].hostname, mine->hostname);
    }
    return DAGGER_OK;
}

/* The bootstrap's second source of records (dg_boot_set_alternate), asked
 * on this thread, the owner, while PMIx leaves a Get of rank r unanswered:
 * the record r's hello carried. A peer that read this rank's record wires up
 * to it and says hello when its own exchange is done, so a rank whose Gets
 * the launcher's server never answers still gets the records of every
 * peer that got its own (docs/transport.md, "Known flakes"). */
static int hello_record(void *ctx, int r, const void **data, size_t *len)
{
    dg_tx_t *tx = ctx;
    for (int i = 0; i < 64 && dg_tx_progress(tx); i++)
        ;
    struct dg_tx_early_hello *h = &tx->early[r];
    if (!h->record)
        return 0;
    if (!h->used++)
        dg_log(DG_LOG_WARN, "the launcher's PMIx server did not answer this rank's request for "
               "rank %d's start-up record; took the record from rank %d's hello instead", r, r);
    *data = h->record;
    *len = h->record_len;
    return 1;
}

/* Everyone's record through the bootstrap; fills peers and recs. */
dagger_status_t dg_tx_exchange(dg_tx_t *tx, const dg_tx_params_t *prm, dagger_status_t opened,
                               dg_tx_record_t *recs)
{
    ucp_address_t *addr = NULL;
    size_t addr_len = 0;
    if (opened == DAGGER_OK && ucp_worker_get_address(tx->worker, &addr, &addr_len) != UCS_OK)
        opened = dg_error(DAGGER_ERR_TRANSPORT, "ucp_worker_get_address failed");
    const char *why = opened == DAGGER_OK ? NULL : dagger_error_detail();
    dg_tx_record_t rec = {
        .build_id = prm->build_id ? prm->build_id : dg_tx_build_id(),
        .hostname = prm->boot->hostname,
        .address = why ? NULL : addr,
        .address_len = why ? 0 : addr_len,
        .inventory = why ? why : prm->inventory,
        .inventory_len = why ? strlen(why) : prm->inventory_len,
    };
    dg_proc_self(&rec.proc);
    size_t len = dg_tx_record_size(&rec);
    void *mine = dg_malloc(len);
    size_t *offsets = dg_calloc((size_t)tx->size + 1, sizeof(*offsets));
    tx->early = dg_calloc((size_t)tx->size, sizeof(*tx->early));
    dagger_status_t st = DAGGER_OK;
    if (!mine || !offsets || !tx->early) {
        st = dg_error(DAGGER_ERR_NO_MEMORY, "dg_tx_create: out of memory");
    } else {
        dg_tx_record_encode(&rec, mine);
        dg_boot_set_alternate(prm->boot, opened == DAGGER_OK ? hello_record : NULL, tx);
        st = dg_boot_allgather(prm->boot, mine, len, record_fresh, prm->boot, &tx->exchange,
                               offsets);
        dg_boot_set_alternate(prm->boot, NULL, NULL);
    }
    if (addr)
        ucp_worker_release_address(tx->worker, addr);
    if (st == DAGGER_OK)
        st = decode_all(tx, offsets, recs, opened);
    tx->records_ready = st == DAGGER_OK;
    tx->my_record = mine; /* its hellos carry it */
    tx->my_record_len = mine ? len : 0;
    free(offsets);
    return st;
}
