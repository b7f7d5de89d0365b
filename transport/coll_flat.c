/* The one-round collective for small rank counts (coll_internal.h,
 * DG_COLL_FLAT_MAX): every rank sends its own part (or its own argument
 * error) to every other rank, then folds all the parts itself.
 *
 * A collective's time on few ranks is its depth in wake-ups: four ranks on
 * two cores spent about 30 us a message, four messages deep in the tree
 * (up to rank 0 and back down). Here every rank waits for one message from
 * each peer, all in flight at once.
 *
 * Every rank must return what the tree would, and the same everywhere: the
 * parts are folded by replaying the tree (each node folds its own part,
 * then its children's subtrees in increasing distance, stopping at the
 * first failure), with the tree's own absorb step, so a floating-point
 * reduction keeps the tree's association and a failure or a signature
 * mismatch gets the tree's text. Each rank folds the same parts in the same
 * order: the results agree bit for bit. */
#include <string.h>

#include "core/base/status_internal.h"
#include "transport/coll_internal.h"

/* What one rank sent: its argument error, or its part; and its call. */
typedef struct flat_part {
    dg_coll_hdr_t hdr;
    const unsigned char *data;
    size_t len;
} flat_part_t;

/* Node's subtree folded as the tree sends it up: into acc, or its failure
 * into fail and text. -1 when out of memory here (nothing is decided). */
static int fold(dg_coll_call_t *call, const flat_part_t *parts, int size, int node,
                dg_coll_buf_t *acc, int *fail, dg_coll_buf_t *text)
{
    const flat_part_t *own = &parts[node];
    dg_coll_buf_t *first = own->hdr.fail ? text : acc;
    if (dg_coll_buf_append(first, own->data, own->len) != DAGGER_OK)
        return -1;
    *fail = own->hdr.fail;
    for (int mask = 1; mask < size && !(node & mask); mask <<= 1) {
        int child = node + mask;
        if (child >= size || *fail)
            continue;
        dg_coll_buf_t cacc = {0}, ctext = {0};
        int cfail = 0;
        int rc = fold(call, parts, size, child, &cacc, &cfail, &ctext);
        if (rc == 0) {
            dg_coll_hdr_t h = parts[child].hdr;
            h.fail = (uint16_t)cfail;
            const dg_coll_buf_t *m = cfail ? &ctext : &cacc;
            dg_coll_absorb(call, node, &own->hdr.sig, child, &h, m->p, m->len, acc, fail, text);
        }
        dg_coll_buf_free(&cacc);
        dg_coll_buf_free(&ctext);
        if (rc)
            return rc;
    }
    return 0;
}

dagger_status_t dg_coll_run_flat(dg_coll_call_t *call, dg_coll_buf_t *acc, dg_coll_buf_t *result)
{
    dg_tx_t *tx = call->tx;
    int r = tx->rank, size = tx->size, fail = 0;
    dg_coll_buf_t text = {0};
    memset(result, 0, sizeof(*result));
    /* With a peer already lost, no part goes out, as in the tree (whose
     * waits return at once): ranks still in an earlier collective would
     * take this one's part for theirs and report a divergence. */
    if (atomic_load(&tx->lost_rank) >= 0) {
        dg_coll_buf_free(acc);
        return dg_tx_health(tx);
    }
    if (call->local != DAGGER_OK)
        dg_coll_fail_with(call->local, &text, &fail, "rank %d: %s", r, dagger_error_detail());
    const dg_coll_buf_t *mine = fail ? &text : acc;
    /* Peers in the order after this rank, so that the ranks do not all
     * send to rank 0 first. */
    for (int k = 1; k < size; k++)
        dg_coll_send_part(call, (r + k) % size, DG_COLL_FLAT, fail, mine);
    flat_part_t parts[DG_COLL_FLAT_MAX];
    dg_coll_msg_t *msgs[DG_COLL_FLAT_MAX] = {0};
    dagger_status_t st = DAGGER_OK;
    for (int q = 0; q < size && st == DAGGER_OK; q++) {
        if (q == r) {
            parts[q] = (flat_part_t){.hdr = {.seq = call->seq, .phase = DG_COLL_FLAT,
                                             .fail = (uint16_t)fail, .sig = call->sig},
                                     .data = mine->p, .len = mine->len};
            continue;
        }
        st = dg_coll_take(tx->coll, call->seq, DG_COLL_FLAT, q, &msgs[q]);
        if (st == DAGGER_OK)
            parts[q] = (flat_part_t){.hdr = msgs[q]->hdr, .data = msgs[q]->data,
                                     .len = msgs[q]->len};
    }
    dg_coll_buf_t out = {0}, otext = {0};
    int verdict = 0;
    if (st == DAGGER_OK && fold(call, parts, size, 0, &out, &verdict, &otext))
        st = dg_error(DAGGER_ERR_NO_MEMORY, "collective #%llu: out of memory folding the parts",
                      (unsigned long long)call->seq);
    /* The parts handed to the sends (acc, text) stay until they complete. */
    st = dg_coll_finish_sends(call, st);
    for (int q = 0; q < size; q++)
        dg_coll_msg_free(msgs[q]);
    dg_coll_buf_free(&text);
    dg_coll_buf_free(acc);
    return dg_coll_outcome(st, verdict, &otext, &out, result);
}
