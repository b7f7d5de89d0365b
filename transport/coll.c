/* The tree every collective of more than DG_COLL_FLAT_MAX ranks runs (see
 * coll.h; fewer ranks: coll_flat.c): up to rank 0 combining parts and
 * comparing call signatures, then rank 0's verdict and result down to
 * everyone.
 *
 * Binomial tree over ranks: the parent of r clears r's lowest set bit; the
 * children of r are r + 2^k for 2^k below that bit. The subtree of child
 * r + 2^k holds ranks [r + 2^k, r + 2^(k+1)), so folding children in
 * increasing k keeps rank order: lower ranks always on the left. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base/alloc.h"
#include "core/base/common.h"
#include "core/base/status_internal.h"
#include "transport/coll_internal.h"
#include "transport/tx_inject.h"

dagger_status_t dg_coll_buf_append(dg_coll_buf_t *b, const void *src, size_t len)
{
    if (b->len + len > b->cap) {
        size_t cap = DG_MAX(b->cap * 2, b->len + len);
        unsigned char *p = dg_realloc(b->p, cap ? cap : 1);
        if (!p)
            return dg_error(DAGGER_ERR_NO_MEMORY, "collective: out of memory for %zu bytes", cap);
        b->p = p;
        b->cap = cap;
    }
    if (len)
        memcpy(b->p + b->len, src, len);
    b->len += len;
    return DAGGER_OK;
}

void dg_coll_buf_free(dg_coll_buf_t *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

void dg_coll_call_init(dg_coll_call_t *call, dg_tx_t *tx, const dg_coll_sig_t *sig)
{
    memset(call, 0, sizeof(*call));
    call->tx = tx;
    call->sig = *sig;
    call->sig.regions = atomic_load(&tx->regions);
    call->seq = atomic_fetch_add(&tx->coll->seq, 1);
}

void dg_coll_describe(const dg_coll_sig_t *s, const dg_coll_sig_t *other, char *buf, size_t cap)
{
    unsigned long long n = (unsigned long long)s->size, nr = (unsigned long long)s->regions;
    const char *rs = nr == 1 ? "" : "s";
    if (s->plan && s->kind == DG_COLL_ALLREDUCE) {
        /* Only a region's end (or a fetch's failure check in one) carries a plan. */
        if (other && other->plan && other->plan != s->plan)
            snprintf(buf, cap, "the end of region %llu (or a fetch in it) having planned work "
                     "that hashes to %016llx", nr, (unsigned long long)s->plan);
        else
            snprintf(buf, cap, "the end of region %llu (or a fetch in it)", nr);
        return;
    }
    int show = s->kind == DG_COLL_BARRIER && s->op == DG_COLL_OP_FINAL;
    if (other && other->regions != s->regions)
        show = 1;
    char after[48] = "";
    if (show)
        snprintf(after, sizeof(after), " after %llu region%s", nr, rs);
    switch (s->kind) {
    case DG_COLL_BARRIER:
        snprintf(buf, cap, "%s()%s", s->op == DG_COLL_OP_FINAL ? "dagger_finalize" : "dagger_barrier",
                 after);
        return;
    case DG_COLL_BCAST:
        snprintf(buf, cap, "dagger_bcast(%llu bytes, root %d)%s", n, (int)s->root, after);
        return;
    case DG_COLL_ALLGATHER: snprintf(buf, cap, "dagger_allgather()%s", after); return;
    case DG_COLL_ALLREDUCE:
        snprintf(buf, cap, "dagger_allreduce(%llu x %s, %s)%s", n, dg_coll_type_name(s->type),
                 dg_coll_op_name(s->op), after);
        return;
    case DG_COLL_ALLREDUCE_BYTES:
        snprintf(buf, cap, "dagger_allreduce_bytes(%llu bytes)%s", n, after);
        return;
    default: snprintf(buf, cap, "an unknown collective (kind %d)", s->kind); return;
    }
}

int dg_coll_same_sig(const dg_coll_sig_t *a, const dg_coll_sig_t *b)
{
    return a->kind == b->kind && a->op == b->op && a->type == b->type && a->root == b->root &&
           a->size == b->size && a->regions == b->regions && a->plan == b->plan;
}

/* Sets the failure every rank will report, with its text, once. */
void dg_coll_fail_with(dagger_status_t st, dg_coll_buf_t *text, int *fail, const char *fmt, ...)
{
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    *fail = -(int)st;
    text->len = 0;
    dg_coll_buf_append(text, line, strlen(line));
}

/* Folds the part src sent node (its subtree, folded) into acc, or records
 * why the call failed. The tree runs it for its own node; the flat
 * algorithm (coll_flat.c) for every node of the tree it replays. */
void dg_coll_absorb(dg_coll_call_t *call, int node, const dg_coll_sig_t *node_sig, int src,
                    const dg_coll_hdr_t *h, const void *data, size_t len, dg_coll_buf_t *acc,
                    int *fail, dg_coll_buf_t *text)
{
    if (h->fail) {
        dg_coll_fail_with((dagger_status_t)(-(int)h->fail), text, fail, "%.*s",
                          (int)DG_MIN(len, 700), (const char *)data);
    } else if (!dg_coll_same_sig(&h->sig, node_sig)) {
        char mine[160], theirs[160];
        dg_coll_describe(node_sig, &h->sig, mine, sizeof(mine));
        dg_coll_describe(&h->sig, node_sig, theirs, sizeof(theirs));
        int plans = h->sig.plan && node_sig->plan && h->sig.plan != node_sig->plan;
        dg_coll_fail_with(DAGGER_ERR_DIVERGENCE, text, fail,
                          "collective #%llu: rank %d called %s but rank %d called %s (%s)",
                          (unsigned long long)call->seq, node, mine, src, theirs,
                          plans ? "the ranks submitted different work; DAGGER_CHECK_UNIFORMITY=1 "
                                  "names the first submission that differs"
                                : "every rank must call the same collectives in the same order "
                                  "with the same arguments");
    } else if (call->merge) {
        dagger_status_t st = call->merge(call, acc, data, len);
        if (st != DAGGER_OK)
            dg_coll_fail_with(st, text, fail, "collective #%llu at rank %d: %s",
                              (unsigned long long)call->seq, node, dagger_error_detail());
    }
}

dagger_status_t dg_coll_outcome(dagger_status_t st, int verdict, dg_coll_buf_t *text,
                                dg_coll_buf_t *res, dg_coll_buf_t *result)
{
    if (st == DAGGER_OK && verdict)
        st = dg_error((dagger_status_t)(-verdict), "%.*s", (int)text->len, (const char *)text->p);
    if (st == DAGGER_OK) {
        *result = *res;
        memset(res, 0, sizeof(*res));
    }
    dg_coll_buf_free(res);
    if (text != res)
        dg_coll_buf_free(text);
    return st;
}

static void absorb(dg_coll_call_t *call, const dg_coll_msg_t *m, dg_coll_buf_t *acc, int *fail,
                   dg_coll_buf_t *text)
{
    dg_coll_absorb(call, call->tx->rank, &call->sig, m->src, &m->hdr, m->data, m->len, acc, fail,
                   text);
}

static void send_done(void *arg, dagger_status_t st)
{
    dg_coll_call_t *call = arg;
    /* call lives on the waiting thread's stack, which may leave as soon as
     * the count reaches 0: nothing of it is read after the decrement
     * (ThreadSanitizer saw call->tx read after the caller had returned). */
    dg_tx_t *tx = call->tx;
    if (st != DAGGER_OK)
        atomic_store(&call->send_failed, (int)st);
    if (atomic_fetch_sub(&call->sends_left, 1) == 1)
        dg_tx_notify(tx);
}

void dg_coll_send_part(dg_coll_call_t *call, int dest, int phase, int fail, const dg_coll_buf_t *b)
{
    if (DG_UNLIKELY(dg_tx_late_part(dest, &call->late_ms))) {
        call->late_buf = b;
        call->late_dest = dest;
        call->late_phase = phase;
        call->late_fail = fail;
        return;
    }
    unsigned char hdr[DG_COLL_HDR_LEN];
    dg_coll_hdr_t h = {.seq = call->seq, .phase = (uint8_t)phase, .fail = (uint16_t)fail,
                       .sig = call->sig};
    dg_coll_hdr_encode(&h, hdr);
    atomic_fetch_add(&call->sends_left, 1);
    if (dg_tx_send(call->tx, dest, DG_TX_CH_COLL, hdr, sizeof(hdr), b->p, b->len, 0, send_done,
                   call) != DAGGER_OK)
        send_done(call, DAGGER_ERR_TRANSPORT);
}

static int sends_complete(void *arg)
{
    return atomic_load(&((dg_coll_call_t *)arg)->sends_left) == 0;
}

/* The buffers handed to sends must outlive them, and so must call (their
 * completions write to it): after a peer was lost dg_tx_wait returns at
 * once, so wait on for our own sends, which the owner finishes soon (sends
 * to the lost rank fail). Returning earlier let a late completion write
 * into a dead stack frame (found with a failed send: mr_fault_send). */
static void drain_sends(dg_coll_call_t *call)
{
    while (!sends_complete(call)) {
        if (dg_tx_is_owner(call->tx))
            dg_tx_progress(call->tx);
        else
            nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 200 * 1000}, NULL);
    }
}

static void sleep_ms(int ms)
{
    nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000l}, NULL);
}

/* The injected late part (tx_inject.h): held until a peer is found lost
 * here, then late_ms more. */
static void send_late(dg_coll_call_t *call)
{
    for (int held = 0; held < DG_TX_LATE_PART_MAX_MS && dg_tx_lost_rank(call->tx) < 0; held += 10)
        sleep_ms(10);
    sleep_ms(call->late_ms);
    const dg_coll_buf_t *b = call->late_buf;
    call->late_buf = NULL;
    dg_coll_send_part(call, call->late_dest, call->late_phase, call->late_fail, b);
}

dagger_status_t dg_coll_finish_sends(dg_coll_call_t *call, dagger_status_t st)
{
    if (DG_UNLIKELY(call->late_buf != NULL))
        send_late(call);
    dagger_status_t w = dg_tx_wait(call->tx, sends_complete, call, 0);
    drain_sends(call);
    if (st == DAGGER_OK && w != DAGGER_OK)
        st = w;
    if (st == DAGGER_OK && atomic_load(&call->send_failed))
        st = dg_tx_health(call->tx) != DAGGER_OK
                 ? DAGGER_ERR_PEER_LOST
                 : dg_error(DAGGER_ERR_TRANSPORT, "collective #%llu: a send failed",
                            (unsigned long long)call->seq);
    return st;
}

/* Up phase: children in rank order, then the parent. Returns the mask of
 * r's lowest set bit (the bound on its children), or an error. */
static dagger_status_t gather_up(dg_coll_call_t *call, dg_coll_buf_t *acc, int *fail,
                                 dg_coll_buf_t *text, int *top)
{
    dg_tx_t *tx = call->tx;
    int r = tx->rank, mask = 1;
    for (; mask < tx->size; mask <<= 1) {
        if (r & mask)
            break;
        if (r + mask >= tx->size)
            continue;
        dg_coll_msg_t *m;
        dagger_status_t st = dg_coll_take(tx->coll, call->seq, DG_COLL_UP, r + mask, &m);
        if (st != DAGGER_OK)
            return st;
        if (!*fail)
            absorb(call, m, acc, fail, text);
        dg_coll_msg_free(m);
    }
    *top = mask;
    return DAGGER_OK;
}

static dagger_status_t run_tree(dg_coll_call_t *call, dg_coll_buf_t *acc, dg_coll_buf_t *result)
{
    dg_tx_t *tx = call->tx;
    int r = tx->rank, fail = 0, top = 1;
    dg_coll_buf_t text = {0}, down = {0};
    memset(result, 0, sizeof(*result));
    if (call->local != DAGGER_OK)
        dg_coll_fail_with(call->local, &text, &fail, "rank %d: %s", r, dagger_error_detail());
    dagger_status_t st = gather_up(call, acc, &fail, &text, &top);
    int verdict = fail;
    if (st == DAGGER_OK && r != 0) {
        dg_coll_send_part(call, r - top, DG_COLL_UP, fail, fail ? &text : acc);
        dg_coll_msg_t *m;
        st = dg_coll_take(tx->coll, call->seq, DG_COLL_DOWN, r - top, &m);
        if (st == DAGGER_OK) {
            verdict = m->hdr.fail;
            down = (dg_coll_buf_t){m->data, m->len, m->len};
            m->data = NULL;
            dg_coll_msg_free(m);
        }
    } else if (st == DAGGER_OK) {
        down = fail ? text : *acc;
        memset(fail ? &text : acc, 0, sizeof(down));
    }
    /* Down phase: the largest subtree first, it has the longest way to go. */
    for (int mask = top >> 1; st == DAGGER_OK && mask >= 1; mask >>= 1)
        if (r + mask < tx->size)
            dg_coll_send_part(call, r + mask, DG_COLL_DOWN, verdict, &down);
    st = dg_coll_finish_sends(call, st);
    dg_coll_buf_free(&text);
    dg_coll_buf_free(acc);
    return dg_coll_outcome(st, verdict, &down, &down, result);
}

dagger_status_t dg_coll_run(dg_coll_call_t *call, dg_coll_buf_t *acc, dg_coll_buf_t *result)
{
    /* The choice depends on the rank count alone, the same on every rank. */
    return call->tx->size <= call->tx->coll->flat_max ? dg_coll_run_flat(call, acc, result)
                                                      : run_tree(call, acc, result);
}
