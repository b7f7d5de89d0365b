/* Which devices of two ranks move data through IPC handles (devices.h:
 * dg_dev_ipc_map_t), and the start-up probe that decides it for different
 * devices of one node.
 *
 * The same device (equal IPC domains) needs no probe: both ranks' processes
 * map the same memory. Different devices of one node (equal IPC nodes) can
 * only where the receiver's device can open and read the sender's handle:
 * peer access between the two GPUs, which the topology, the driver and what
 * each process sees (CUDA_VISIBLE_DEVICES) decide, and which no table
 * entry tells. So every rank tries. Three steps, run at init only when the
 * published table holds such a pair (the same decision on every rank):
 *   1. each rank writes 16 known bytes into a small exportable block of
 *      each of its devices that has a peer of another domain on its node,
 *      and publishes the blocks' handles (an allgather);
 *   2. each rank, for each of its devices and each such block of another
 *      rank, opens the handle on its device and reads the 16 bytes back as
 *      a transfer would (a device-to-device copy of 8, a pack kernel over
 *      the other 8, then to host memory), and compares;
 *   3. each rank publishes the pairs that passed (an allgather), then frees
 *      its blocks: every rank has finished reading them by then.
 * A pair that failed goes host-staged, and the reason is logged (info). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/clock.h"
#include "core/base/alloc.h"
#include "core/base/hash.h"
#include "core/base/log.h"
#include "core/base/status_internal.h"
#include "devices/devices.h"
#include "transport/coll.h"
#include "transport/wire.h"

#define PROBE_BYTES 16
#define PROBE_WAIT_NS 10000000000ull /* a probe copy not done in 10 s failed */
#define PROBE_SAY_MAX 4              /* failed pairs logged one by one; then a count */
#define HANDLE_MAX 128               /* device.h: ipc_handle_bytes is at most this */

static uint64_t key(int send_rank, int send_dev, int recv_rank, int recv_dev)
{
    return (uint64_t)recv_rank << 36 | (uint64_t)recv_dev << 32 | (uint64_t)send_rank << 4 |
           (uint64_t)send_dev;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int dg_dev_ipc_map_can(const dg_dev_ipc_map_t *m, int send_rank, int send_dev, int recv_rank,
                       int recv_dev)
{
    if (!m || !m->domains || send_rank < 0 || recv_rank < 0 || send_rank >= m->nranks ||
        recv_rank >= m->nranks || send_dev < 0 || recv_dev < 0 || send_dev >= DG_DEV_MAX ||
        recv_dev >= DG_DEV_MAX)
        return 0;
    size_t s = (size_t)send_rank * DG_DEV_MAX + (size_t)send_dev;
    size_t r = (size_t)recv_rank * DG_DEV_MAX + (size_t)recv_dev;
    if (!m->domains[s] || !m->domains[r])
        return 0;
    if (m->domains[s] == m->domains[r])
        return 1;
    if (m->nodes[s] != m->nodes[r] || !m->nopened)
        return 0;
    uint64_t k = key(send_rank, send_dev, recv_rank, recv_dev);
    return bsearch(&k, m->opened, m->nopened, sizeof(k), cmp_u64) != NULL;
}

/* ------------------------------------------------------------ which pairs */

typedef struct slot {
    uint64_t node, dom;
    int rank;
} slot_t;

static int cmp_slot(const void *a, const void *b)
{
    const slot_t *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if (x->dom != y->dom)
        return x->dom < y->dom ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int dg_dev_ipc_probe_needed(const dg_dev_ipc_map_t *m)
{
    size_t n = 0, cap = (size_t)m->nranks * DG_DEV_MAX;
    slot_t *s = dg_malloc((cap ? cap : 1) * sizeof(*s));
    if (!s)
        return -1;
    for (size_t i = 0; i < cap; i++)
        if (m->nodes[i])
            s[n++] = (slot_t){m->nodes[i], m->domains[i], (int)(i / DG_DEV_MAX)};
    qsort(s, n, sizeof(*s), cmp_slot);
    /* A node whose devices span two domains and two ranks has a pair of
     * different ranks and domains: take a rank A and one of its domains x;
     * either another rank has a domain other than x, or all others have
     * only x and A itself has another. */
    int needed = 0;
    for (size_t a = 0, b; a < n && !needed; a = b) {
        int doms = 1, ranks = 1;
        for (b = a + 1; b < n && s[b].node == s[a].node; b++) {
            doms += s[b].dom != s[b - 1].dom;
            ranks += s[b].rank != s[a].rank && ranks == 1;
        }
        needed = doms > 1 && ranks > 1;
    }
    free(s);
    return needed;
}

/* Whether (rank, dev) and (peer, pdev) are different devices of one node. */
static int across(const dg_dev_ipc_map_t *m, int rank, int dev, int peer, int pdev)
{
    size_t a = (size_t)rank * DG_DEV_MAX + (size_t)dev, b = (size_t)peer * DG_DEV_MAX + (size_t)pdev;
    return rank != peer && m->nodes[a] && m->nodes[a] == m->nodes[b] &&
           m->domains[a] != m->domains[b];
}

static int has_peer(const dg_dev_ipc_map_t *m, int rank, int dev)
{
    for (int r = 0; r < m->nranks; r++)
        for (int j = 0; j < DG_DEV_MAX; j++)
            if (across(m, rank, dev, r, j))
                return 1;
    return 0;
}

/* The 16 bytes that rank's device dev writes into its probe block. */
static void pattern(int rank, int dev, unsigned char out[PROBE_BYTES])
{
    uint32_t who[2] = {(uint32_t)rank, (uint32_t)dev};
    uint64_t a = dg_hash_bytes(DG_HASH_SEED, who, sizeof(who));
    uint64_t b = dg_hash_bytes(a, who, sizeof(who));
    memcpy(out, &a, 8);
    memcpy(out + 8, &b, 8);
}

/* ------------------------------------------------------------ device work */

/* Waits (at init, on this thread) for the work queued on s so far, then
 * frees s. */
static dagger_status_t finish(const dg_dev_backend_t *be, int idx, dg_dev_stream_t *s)
{
    dg_dev_event_t *e = NULL;
    dagger_status_t st = be->event_create(idx, &e);
    if (st == DAGGER_OK)
        st = be->event_record(e, s);
    uint64_t t0 = dg_now_ns();
    int q = 0;
    while (st == DAGGER_OK && (q = be->event_query(e)) == 0) {
        if (dg_now_ns() - t0 > PROBE_WAIT_NS) {
            st = dg_error(DAGGER_ERR_TIMEOUT, "the probe's copies did not finish in 10 s");
            break;
        }
        sched_yield();
    }
    if (st == DAGGER_OK && q != 1)
        st = DAGGER_ERR_SYSTEM; /* event_query recorded why */
    if (e)
        be->event_destroy(e);
    be->stream_destroy(s);
    return st;
}

static dagger_status_t probe_alloc(const dg_dev_backend_t *be, int idx, void **p)
{
    return be->ipc_alloc ? be->ipc_alloc(idx, PROBE_BYTES, p) : be->mem_alloc(idx, PROBE_BYTES, p);
}

static void probe_free(const dg_dev_backend_t *be, int idx, void *p)
{
    if (be->ipc_alloc)
        be->ipc_free(idx, p);
    else
        be->mem_free(idx, p);
}

/* Step 1 for one device: its block, holding its pattern, and the handle. */
static dagger_status_t offer(const dg_dev_found_t *f, int rank, int dev, void **blk,
                             unsigned char *handle)
{
    const dg_dev_backend_t *be = f->be;
    void *h = NULL;
    dg_dev_stream_t *s = NULL;
    *blk = NULL;
    dagger_status_t st = be->set_current(f->index);
    if (st == DAGGER_OK)
        st = probe_alloc(be, f->index, blk);
    if (st == DAGGER_OK)
        st = be->host_alloc(PROBE_BYTES, &h);
    if (st == DAGGER_OK) {
        pattern(rank, dev, h);
        st = be->stream_create(f->index, &s);
    }
    if (st == DAGGER_OK) {
        st = be->copy(s, *blk, h, PROBE_BYTES, DG_DEV_H2D);
        dagger_status_t fs = finish(be, f->index, s);
        st = st == DAGGER_OK ? fs : st;
    }
    if (st == DAGGER_OK)
        st = be->ipc_export(f->index, *blk, handle);
    if (h)
        be->host_free(h);
    if (st != DAGGER_OK && *blk) {
        probe_free(be, f->index, *blk);
        *blk = NULL;
    }
    return st;
}

/* Step 2 for one pair: device f (this rank's dev) reads rank peer's block of
 * its device pdev through its handle. */
static dagger_status_t try_open(const dg_dev_found_t *f, const unsigned char *handle, int peer,
                                int pdev)
{
    const dg_dev_backend_t *be = f->be;
    void *p = NULL, *q = NULL, *h = NULL;
    dg_dev_stream_t *s = NULL;
    dagger_status_t st = be->set_current(f->index);
    if (st == DAGGER_OK)
        st = be->ipc_open(f->index, handle, &p);
    if (st == DAGGER_OK)
        st = be->mem_alloc(f->index, PROBE_BYTES, &q);
    if (st == DAGGER_OK)
        st = be->host_alloc(PROBE_BYTES, &h);
    if (st == DAGGER_OK) {
        memset(h, 0, PROBE_BYTES);
        st = be->stream_create(f->index, &s);
    }
    if (st == DAGGER_OK) {
        const dg_dev_span_t half = {PROBE_BYTES / 2, PROBE_BYTES / 2};
        st = be->copy(s, q, p, PROBE_BYTES / 2, DG_DEV_D2D);
        if (st == DAGGER_OK)
            st = be->pack(s, (char *)q + PROBE_BYTES / 2, p, &half, 1, 0);
        if (st == DAGGER_OK)
            st = be->copy(s, h, q, PROBE_BYTES, DG_DEV_D2H);
        dagger_status_t fs = finish(be, f->index, s);
        st = st == DAGGER_OK ? fs : st;
    }
    if (st == DAGGER_OK) {
        unsigned char want[PROBE_BYTES];
        pattern(peer, pdev, want);
        if (memcmp(h, want, PROBE_BYTES))
            st = dg_error(DAGGER_ERR_SYSTEM, "the bytes read through the handle are not the "
                          "ones its owner wrote");
    }
    if (h)
        be->host_free(h);
    if (q)
        be->mem_free(f->index, q);
    if (p)
        be->ipc_close(f->index, p);
    return st;
}

/* ------------------------------------------------------------ the probe */

/* Offers: u32 count, then per block u32 device, u32 handle length, the handle. */
static size_t write_offers(const dg_dev_table_t *devs, const dg_dev_ipc_map_t *m, int rank,
                           void **blks, unsigned char *buf, size_t cap)
{
    dg_wire_cursor_t c = dg_wire_cursor(buf, cap);
    uint32_t count = 0;
    dg_wire_put_u32(&c, 0);
    for (int i = 0; i < devs->n; i++) {
        const dg_dev_found_t *f = &devs->dev[i];
        unsigned char handle[HANDLE_MAX];
        if (!has_peer(m, rank, i) || f->be->ipc_handle_bytes > HANDLE_MAX)
            continue;
        dagger_status_t st = offer(f, rank, i, &blks[i], handle);
        if (st != DAGGER_OK) {
            dg_log(DG_LOG_INFO, "IPC probe: rank %d's %s %d offers no block (%s): transfers "
                   "from it to other devices of this node go through host memory", rank,
                   f->be->label, f->index, dagger_error_detail());
            continue;
        }
        dg_wire_put_u32(&c, (uint32_t)i);
        dg_wire_put_u32(&c, (uint32_t)f->be->ipc_handle_bytes);
        dg_wire_put_bytes(&c, handle, f->be->ipc_handle_bytes);
        count++;
    }
    dg_wire_cursor_t head = dg_wire_cursor(buf, 4);
    dg_wire_put_u32(&head, count);
    return cap - c.left;
}

/* Step 2 over every rank's offers: the pairs that passed, as u32 count, then
 * per pair u32 sender rank, u32 sender device | receiver device << 8. A
 * malformed offer makes the count BAD_OFFER (every rank then fails init). */
#define BAD_OFFER UINT32_MAX
static void read_offers(const dg_dev_table_t *devs, dg_dev_ipc_map_t *m, int rank,
                        const unsigned char *all, const size_t *lens, unsigned char *out,
                        size_t cap, size_t *outlen)
{
    dg_wire_cursor_t o = dg_wire_cursor(out, cap);
    uint32_t passed = 0, said = 0;
    dg_wire_put_u32(&o, 0);
    const unsigned char *p = all;
    for (int r = 0; r < m->nranks; p += lens[r], r++) {
        dg_wire_cursor_t c = dg_wire_cursor(p, lens[r]);
        uint32_t count = dg_wire_get_u32(&c);
        for (uint32_t k = 0; k < count && !c.bad; k++) {
            uint32_t j = dg_wire_get_u32(&c), len = dg_wire_get_u32(&c);
            const unsigned char *h = len <= HANDLE_MAX ? dg_wire_get_bytes(&c, len) : NULL;
            if (j >= DG_DEV_MAX || !h) {
                c.bad = 1;
                break;
            }
            for (int i = 0; i < devs->n; i++) {
                const dg_dev_found_t *f = &devs->dev[i];
                if (!across(m, rank, i, r, (int)j) || len != f->be->ipc_handle_bytes)
                    continue;
                m->probed++;
                dagger_status_t st = try_open(f, h, r, (int)j);
                if (st == DAGGER_OK) {
                    dg_wire_put_u32(&o, (uint32_t)r);
                    dg_wire_put_u32(&o, j | (uint32_t)i << 8);
                    passed++;
                } else if (++said <= PROBE_SAY_MAX) {
                    dg_log(DG_LOG_INFO, "IPC probe: rank %d's %s %d cannot read rank %d's %s %u "
                           "through its IPC handle (%s): transfers between them go through host "
                           "memory", rank, f->be->label, f->index, r, f->be->label, j,
                           dagger_error_detail());
                }
            }
        }
        if (c.bad) {
            dg_log(DG_LOG_ERROR, "IPC probe: rank %d sent rank %d a malformed offer", r, rank);
            passed = BAD_OFFER;
            o = dg_wire_cursor(out + 4, cap - 4);
            break;
        }
    }
    m->failed = passed == BAD_OFFER ? 0 : m->probed - passed;
    if (said > PROBE_SAY_MAX)
        dg_log(DG_LOG_INFO, "IPC probe: rank %d: %u more pairs failed", rank,
               said - PROBE_SAY_MAX);
    *outlen = cap - o.left;
    dg_wire_cursor_t head = dg_wire_cursor(out, 4);
    dg_wire_put_u32(&head, passed);
}

/* Step 3: the pairs that concern this rank, sorted. */
static dagger_status_t read_results(dg_dev_ipc_map_t *m, int rank, const unsigned char *all,
                                    const size_t *lens)
{
    size_t n = 0, total = 0;
    for (int r = 0; r < m->nranks; r++)
        total += lens[r] / 8;
    m->opened = dg_malloc((total ? total : 1) * sizeof(uint64_t));
    if (!m->opened)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: out of memory");
    const unsigned char *p = all;
    for (int r = 0; r < m->nranks; p += lens[r], r++) {
        dg_wire_cursor_t c = dg_wire_cursor(p, lens[r]);
        uint32_t count = dg_wire_get_u32(&c);
        if (count == BAD_OFFER)
            return dg_error(DAGGER_ERR_PROTOCOL, "dagger_init: rank %d received a malformed IPC "
                            "probe offer (its log says from which rank)", r);
        for (uint32_t k = 0; k < count && !c.bad; k++) {
            uint32_t s = dg_wire_get_u32(&c), devs = dg_wire_get_u32(&c);
            uint32_t sd = devs & 0xff, rd = devs >> 8;
            if (c.bad || s >= (uint32_t)m->nranks || sd >= DG_DEV_MAX || rd >= DG_DEV_MAX ||
                n >= total) {
                c.bad = 1;
                break;
            }
            if (r == rank || (int)s == rank)
                m->opened[n++] = key((int)s, (int)sd, r, (int)rd);
        }
        if (c.bad)
            return dg_error(DAGGER_ERR_PROTOCOL, "dagger_init: rank %d sent a malformed IPC "
                            "probe result", r);
    }
    qsort(m->opened, n, sizeof(uint64_t), cmp_u64);
    m->nopened = n;
    return DAGGER_OK;
}

dagger_status_t dg_dev_ipc_probe(struct dg_tx *tx, const dg_dev_table_t *devs, int rank,
                                 dg_dev_ipc_map_t *m)
{
    if (!tx || m->nranks < 2)
        return DAGGER_OK;
    int needed = dg_dev_ipc_probe_needed(m);
    if (needed < 0)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: out of memory");
    if (!needed)
        return DAGGER_OK;
    void *blks[DG_DEV_MAX] = {0};
    size_t cap = 4 + (size_t)DG_DEV_MAX * (8 + HANDLE_MAX);
    unsigned char *mine = dg_malloc(cap);
    size_t *lens = dg_calloc((size_t)m->nranks, sizeof(size_t));
    void *all = NULL;
    dagger_status_t st = mine && lens ? DAGGER_OK
                                      : dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: out of memory");
    if (st == DAGGER_OK)
        st = dg_coll_allgather(tx, mine, write_offers(devs, m, rank, blks, mine, cap), &all, lens);
    /* The results: at most one per pair of this rank's devices and offers. */
    size_t rcap = 4, rlen = 0;
    for (int r = 0; st == DAGGER_OK && r < m->nranks; r++)
        rcap += lens[r] / 8 * 8 * (size_t)devs->n;
    unsigned char *res = st == DAGGER_OK ? dg_malloc(rcap) : NULL;
    if (st == DAGGER_OK && !res)
        st = dg_error(DAGGER_ERR_NO_MEMORY, "dagger_init: out of memory");
    if (st == DAGGER_OK)
        read_offers(devs, m, rank, all, lens, res, rcap, &rlen);
    free(all);
    all = NULL;
    if (st == DAGGER_OK)
        st = dg_coll_allgather(tx, res, rlen, &all, lens);
    if (st == DAGGER_OK)
        st = read_results(m, rank, all, lens);
    for (int i = 0; i < devs->n; i++)
        if (blks[i]) {
            devs->dev[i].be->set_current(devs->dev[i].index);
            probe_free(devs->dev[i].be, devs->dev[i].index, blks[i]);
        }
    if (st == DAGGER_OK && m->probed)
        dg_log(DG_LOG_INFO, "IPC probe: rank %d's devices read %u of the %u blocks of other "
               "devices of this node through their handles", rank, m->probed - m->failed,
               m->probed);
    free(all);
    free(res);
    free(lens);
    free(mine);
    return st;
}

void dg_dev_ipc_map_free(dg_dev_ipc_map_t *m)
{
    free(m->domains);
    free(m->nodes);
    free(m->opened);
    memset(m, 0, sizeof(*m));
}
