/* The collect and scatter codelets: copy tiles between slots and a box of a
 * host buffer bound on this rank, one line (dimension 0) at a time; pack
 * a rank's tiles into one bundle for the ranks that collect them; and read
 * another rank's tiles straight from its memory (collect_pull.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "core/array/array_internal.h"
#include "core/array/collect_pull.h"
#include "core/array/params.h"
#include "core/base/alloc.h"

/* A tile's memory: its first element and its element strides. */
typedef struct tile_mem {
    char *data;
    size_t strides[DAGGER_MAX_DIMS];
} tile_mem_t;

/* Copies the tile of extents ext between mem and the host box (box dims,
 * the tile at off in it). */
static void copy_tile(const tile_mem_t *m, char *host, const uint64_t off[DAGGER_MAX_DIMS],
                      const uint64_t box[DAGGER_MAX_DIMS], const size_t ext[DAGGER_MAX_DIMS],
                      size_t es, int to_host)
{
    for (size_t i3 = 0; i3 < ext[3]; i3++)
        for (size_t i2 = 0; i2 < ext[2]; i2++)
            for (size_t i1 = 0; i1 < ext[1]; i1++) {
                size_t h = off[0] + box[0] * ((off[1] + i1) +
                                              box[1] * ((off[2] + i2) + box[2] * (off[3] + i3)));
                char *p = m->data + (i1 * m->strides[1] + i2 * m->strides[2] + i3 * m->strides[3]) * es;
                if (to_host)
                    memcpy(host + h * es, p, ext[0] * es);
                else
                    memcpy(p, host + h * es, ext[0] * es);
            }
}

static void slot_extents(const dagger_slot_t *s, size_t ext[DAGGER_MAX_DIMS])
{
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        ext[k] = k < s->ndims ? s->dims[k] : 1;
}

/* Copies a whole slot between its memory and the host box. */
static void copy_slot(const dagger_slot_t *s, char *host, const uint64_t off[DAGGER_MAX_DIMS],
                      const uint64_t box[DAGGER_MAX_DIMS], int to_host)
{
    tile_mem_t m = {.data = s->data};
    memcpy(m.strides, s->strides, sizeof(m.strides));
    size_t ext[DAGGER_MAX_DIMS];
    slot_extents(s, ext);
    copy_tile(&m, host, off, box, ext, dagger_dtype_size(s->dtype), to_host);
}

static char *bound_buffer(dagger_task_t *t, uint64_t key, int to_host)
{
    char *host = dg_arr_bound(key);
    if (!host)
        dagger_task_fail(t, "rank %d gave a NULL host buffer to %s", dagger_task_rank(t),
                         to_host ? "dagger_array_collect" : "dagger_array_scatter");
    return host;
}

int dg_arr_take_impl(dagger_task_t *t)
{
    dagger_slot_t s = dagger_task_arg(t, 0);
    dg_arr_xfer_t x;
    if (dg_arr_param(t, 1, &x, sizeof(x)))
        return dagger_task_fail(t, "malformed scatter parameters");
    char *host = bound_buffer(t, x.key, 0);
    if (!host)
        return -1;
    copy_slot(&s, host, x.off, x.box, 0);
    return DAGGER_OK;
}

/* The value argument of PUT and UNBUNDLE (its header, and where its
 * entries start), when argument i is one with ntiles entries. */
static const unsigned char *puts_value(dagger_task_t *t, int i, dg_arr_puts_t *h)
{
    dagger_slot_t v = dagger_task_arg(t, i);
    if (!v.data || v.ndims || v.bytes < sizeof(*h))
        return NULL;
    memcpy(h, v.data, sizeof(*h));
    if (h->ntiles < 1 || h->ntiles > DG_ARR_PUT_TILES ||
        v.bytes != sizeof(*h) + h->ntiles * sizeof(dg_arr_put_tile_t))
        return NULL;
    return (const unsigned char *)v.data + sizeof(*h);
}

static void entry(const unsigned char *entries, uint64_t i, dg_arr_put_tile_t *e)
{
    memcpy(e, entries + i * sizeof(*e), sizeof(*e));
}

/* PUT: arguments 0 .. ntiles-1 are the tiles, then the value. */
int dg_arr_put_impl(dagger_task_t *t)
{
    int nargs = dagger_task_nargs(t);
    dg_arr_puts_t h;
    const unsigned char *entries = nargs >= 2 ? puts_value(t, nargs - 1, &h) : NULL;
    if (!entries || h.ntiles != (uint64_t)(nargs - 1))
        return dagger_task_fail(t, "malformed collect parameters");
    char *host = bound_buffer(t, h.key, 1);
    if (!host)
        return -1;
    for (int i = 0; i + 1 < nargs; i++) {
        dagger_slot_t s = dagger_task_arg(t, i);
        dg_arr_put_tile_t e;
        entry(entries, (uint64_t)i, &e);
        copy_slot(&s, host, e.off, h.box, 1);
    }
    return DAGGER_OK;
}

/* Dense column-major strides of ext. */
static void dense_strides(const size_t ext[DAGGER_MAX_DIMS], size_t strides[DAGGER_MAX_DIMS])
{
    strides[0] = 1;
    for (int k = 1; k < DAGGER_MAX_DIMS; k++)
        strides[k] = strides[k - 1] * ext[k - 1];
}

static size_t elems_of(const size_t ext[DAGGER_MAX_DIMS])
{
    size_t n = 1;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        n *= ext[k];
    return n;
}

/* BUNDLE: arguments 0 .. n-2 are tiles (In), n-1 the bundle (Out); each
 * tile lands dense, right after the one before (a box of its own extents). */
int dg_arr_bundle_impl(dagger_task_t *t)
{
    int nargs = dagger_task_nargs(t);
    if (nargs < 2)
        return dagger_task_fail(t, "malformed collect bundle");
    dagger_slot_t b = dagger_task_arg(t, nargs - 1);
    size_t es = dagger_dtype_size(b.dtype), at = 0;
    static const uint64_t origin[DAGGER_MAX_DIMS];
    for (int i = 0; i + 1 < nargs; i++) {
        dagger_slot_t s = dagger_task_arg(t, i);
        size_t ext[DAGGER_MAX_DIMS];
        uint64_t box[DAGGER_MAX_DIMS];
        slot_extents(&s, ext);
        for (int k = 0; k < DAGGER_MAX_DIMS; k++)
            box[k] = ext[k];
        size_t n = elems_of(ext);
        if (s.dtype != b.dtype || at + n > b.bytes / es)
            return dagger_task_fail(t, "collect bundle: tile %d does not fit", i);
        copy_slot(&s, (char *)b.data + at * es, origin, box, 1);
        at += n;
    }
    return DAGGER_OK;
}

/* UNBUNDLE: argument 0 the bundle (In), 1 the value naming its tiles. */
int dg_arr_unbundle_impl(dagger_task_t *t)
{
    dg_arr_puts_t h;
    const unsigned char *entries = dagger_task_nargs(t) == 2 ? puts_value(t, 1, &h) : NULL;
    if (!entries)
        return dagger_task_fail(t, "malformed collect parameters");
    char *host = bound_buffer(t, h.key, 1);
    if (!host)
        return -1;
    dagger_slot_t b = dagger_task_arg(t, 0);
    size_t es = dagger_dtype_size(b.dtype), at = 0;
    for (uint64_t i = 0; i < h.ntiles; i++) {
        dg_arr_put_tile_t e;
        entry(entries, i, &e);
        size_t ext[DAGGER_MAX_DIMS];
        for (int k = 0; k < DAGGER_MAX_DIMS; k++)
            ext[k] = (size_t)e.ext[k];
        size_t n = elems_of(ext);
        if (at + n > b.bytes / es)
            return dagger_task_fail(t, "collect bundle: tile %llu lies past its end",
                                    (unsigned long long)i);
        tile_mem_t m = {.data = (char *)b.data + at * es};
        dense_strides(ext, m.strides);
        copy_tile(&m, host, e.off, h.box, ext, es, 1);
        at += n;
    }
    return DAGGER_OK;
}

/* PULL and PUSH: the spans to read (pull: collect) or write (push:
 * scatter), as two lists that the kernel walks side by side (the bytes of
 * one list land in order in the other). Each list joins a span to its last
 * one where it continues it: a tile of a dense block is one remote span,
 * however many lines it has in the host box, and the kernel pins the
 * owner's pages once per remote span. */
#define IOV_BATCH 512

typedef struct pull_batch {
    struct iovec l[IOV_BATCH], r[IOV_BATCH];
    int nl, nr;
    size_t bytes;
    pid_t pid;
    int push;            /* 1: write the remote spans (process_vm_writev) */
} pull_batch_t;

static int pull_flush(pull_batch_t *b)
{
    if (!b->bytes)
        return 0;
    ssize_t got = b->push ? process_vm_writev(b->pid, b->l, (unsigned long)b->nl, b->r,
                                              (unsigned long)b->nr, 0)
                          : process_vm_readv(b->pid, b->l, (unsigned long)b->nl, b->r,
                                             (unsigned long)b->nr, 0);
    int ok = got == (ssize_t)b->bytes;
    b->nl = b->nr = 0;
    b->bytes = 0;
    return ok ? 0 : got < 0 ? errno : -1;
}

static void iov_add(struct iovec *v, int *n, char *p, size_t len)
{
    if (*n && (char *)v[*n - 1].iov_base + v[*n - 1].iov_len == p)
        v[*n - 1].iov_len += len;
    else
        v[(*n)++] = (struct iovec){p, len};
}

/* Adds one span (len bytes between local and remote). */
static int pull_span(pull_batch_t *b, char *local, const char *remote, size_t len)
{
    if (b->nl == IOV_BATCH || b->nr == IOV_BATCH) {
        int rc = pull_flush(b);
        if (rc)
            return rc;
    }
    iov_add(b->l, &b->nl, local, len);
    iov_add(b->r, &b->nr, (char *)(uintptr_t)remote, len);
    b->bytes += len;
    return 0;
}

/* The lines (dimension 0) of one tile, as (offset in the host box, offset
 * in its owner's block), in elements. */
typedef void (*pull_line_fn)(void *ctx, uint64_t hi, uint64_t bi, size_t len);

static void tile_lines(const dg_arr_pulls_t *h, const dg_arr_pull_tile_t *e, pull_line_fn fn,
                       void *ctx)
{
    size_t len = (size_t)e->ext[0] * (size_t)h->elsize;
    for (uint64_t i3 = 0; i3 < e->ext[3]; i3++)
        for (uint64_t i2 = 0; i2 < e->ext[2]; i2++)
            for (uint64_t i1 = 0; i1 < e->ext[1]; i1++) {
                uint64_t hi = e->off[0] + h->box[0] * ((e->off[1] + i1) +
                              h->box[1] * ((e->off[2] + i2) + h->box[2] * (e->off[3] + i3)));
                uint64_t bi = e->boff[0] + e->bdim[0] * ((e->boff[1] + i1) +
                              e->bdim[1] * ((e->boff[2] + i2) + e->bdim[2] * (e->boff[3] + i3)));
                fn(ctx, hi, bi, len);
            }
}

typedef struct pull_ctx {
    pull_batch_t *b;
    char *host;          /* the host buffer */
    char *stage;         /* NULL, or where the lines land first, one after another */
    size_t at;           /* bytes staged so far */
    const char *base;    /* the block on its owner */
    size_t es;
    int rc;
} pull_ctx_t;

/* A line's span between the host buffer (or the stage) and the block. */
static void span_line(void *ctx, uint64_t hi, uint64_t bi, size_t len)
{
    pull_ctx_t *c = ctx;
    if (c->rc)
        return;
    char *to = c->stage ? c->stage + c->at : c->host + hi * c->es;
    c->rc = pull_span(c->b, to, c->base + bi * c->es, len);
    c->at += len;
}

static _Thread_local char *tl_stage;
static _Thread_local size_t tl_stage_cap;
static pthread_key_t stage_key;
static pthread_once_t stage_once = PTHREAD_ONCE_INIT;

static void stage_init(void)
{
    if (pthread_key_create(&stage_key, free))
        stage_key = (pthread_key_t)-1;
}

/* This thread's staging buffer of at least n bytes, or NULL. */
static char *stage_get(size_t n)
{
    if (tl_stage_cap >= n)
        return tl_stage;
    pthread_once(&stage_once, stage_init);
    char *p = stage_key == (pthread_key_t)-1 ? NULL : dg_malloc(n);
    if (!p || pthread_setspecific(stage_key, p)) {
        free(p);
        return NULL;
    }
    free(tl_stage);
    tl_stage = p;
    tl_stage_cap = n;
    return p;
}

/* 1 when tile e is one run of its block's dense storage: whole lines of
 * the block stacked (whole planes, ...), or a single line. */
static int tile_dense(const dg_arr_pull_tile_t *e)
{
    int k = 0;
    while (k < DAGGER_MAX_DIMS - 1 && e->ext[k] == e->bdim[k])
        k++;
    for (int j = k + 1; j < DAGGER_MAX_DIMS; j++)
        if (e->ext[j] != 1)
            return 0;
    return 1;
}

/* Every tile's lines (fn) in the order of the entries. Staged spans
 * (span_line into the stage, where a tile's lines lie one after another)
 * of a dense tile go as one span: a 64 x 64 tile's 64 calls were more
 * instructions than its copy. */
static void all_lines(const dg_arr_pulls_t *h, const unsigned char *entries, const dg_arr_peers_t *p,
                      pull_ctx_t *c, pull_line_fn fn)
{
    c->at = 0;
    for (uint64_t i = 0; i < h->ntiles && !c->rc; i++) {
        dg_arr_pull_tile_t e;
        memcpy(&e, entries + i * sizeof(e), sizeof(e));
        c->base = (const char *)(uintptr_t)p->addr[e.block];
        if (fn == span_line && c->stage && tile_dense(&e)) {
            uint64_t bi = e.boff[0] + e.bdim[0] * (e.boff[1] + e.bdim[1] *
                                                   (e.boff[2] + e.bdim[2] * e.boff[3]));
            size_t n = (size_t)(e.ext[0] * e.ext[1] * e.ext[2] * e.ext[3]);
            span_line(c, 0, bi, n * c->es);
            continue;
        }
        tile_lines(h, &e, fn, c);
    }
}

/* Staged: every tile's lines between the stage (one after another, in the
 * order of the entries) and their places in the host buffer (after a pull;
 * before a push), without a call and the index arithmetic per line. */
static void place_all(const dg_arr_pulls_t *h, const unsigned char *entries, pull_ctx_t *c)
{
    char *stage = c->stage;
    size_t es = c->es, step = (size_t)h->box[0] * es;
    for (uint64_t i = 0; i < h->ntiles; i++) {
        dg_arr_pull_tile_t e;
        memcpy(&e, entries + i * sizeof(e), sizeof(e));
        size_t len = (size_t)e.ext[0] * es;
        for (uint64_t i3 = 0; i3 < e.ext[3]; i3++)
            for (uint64_t i2 = 0; i2 < e.ext[2]; i2++) {
                char *row = c->host + es * (e.off[0] + h->box[0] * (e.off[1] + h->box[1] *
                                            ((e.off[2] + i2) + h->box[2] * (e.off[3] + i3))));
                for (uint64_t i1 = 0; i1 < e.ext[1]; i1++, row += step, stage += len) {
                    if (c->b->push)
                        memcpy(stage, row, len);
                    else
                        memcpy(row, stage, len);
                }
            }
    }
}

/* PULL (push 0) and PUSH (1): argument 0 the probe (only ordering: see
 * collect_pull.h), 1 the value naming the owner's tiles. */
static int pull_or_push(dagger_task_t *t, int push)
{
    const char *api = push ? "dagger_array_scatter" : "dagger_array_collect";
    dagger_slot_t v = dagger_task_arg(t, 1);
    dg_arr_pulls_t h;
    if (dagger_task_nargs(t) != 2 || !v.data || v.ndims || v.bytes < sizeof(h))
        return dagger_task_fail(t, "malformed %s parameters", api);
    memcpy(&h, v.data, sizeof(h));
    const dg_arr_peers_t *p = dg_arr_bound(h.peers);
    if (h.ntiles < 1 || h.ntiles > DG_ARR_PULL_TILES ||
        v.bytes != sizeof(h) + h.ntiles * sizeof(dg_arr_pull_tile_t) || !p ||
        h.owner >= (uint64_t)p->nranks)
        return dagger_task_fail(t, "malformed %s parameters", api);
    char *host = bound_buffer(t, h.key, !push);
    if (!host)
        return -1;
    const unsigned char *entries = (const unsigned char *)v.data + sizeof(h);
    size_t bytes = 0;
    int shortl = 0;
    for (uint64_t i = 0; i < h.ntiles; i++) {
        dg_arr_pull_tile_t e;
        memcpy(&e, entries + i * sizeof(e), sizeof(e));
        if (e.block >= p->nblocks || !p->addr[e.block])
            return dagger_task_fail(t, "malformed %s parameters", api);
        size_t n = (size_t)h.elsize;
        for (int k = 0; k < DAGGER_MAX_DIMS; k++)
            n *= (size_t)e.ext[k];
        bytes += n;
        shortl |= e.ext[0] * h.elsize < DG_ARR_PULL_STAGE_BELOW;
    }
    pull_batch_t batch;
    batch.nl = batch.nr = 0;
    batch.bytes = 0;
    batch.pid = (pid_t)p->pid[h.owner];
    batch.push = push;
    pull_ctx_t c = {.b = &batch, .host = host, .es = (size_t)h.elsize,
                    .stage = shortl ? stage_get(bytes) : NULL};
    if (c.stage && push)
        place_all(&h, entries, &c);
    all_lines(&h, entries, p, &c, span_line);
    if (!c.rc)
        c.rc = pull_flush(&batch);
    if (c.rc)
        return dagger_task_fail(t, "%s: %s rank %llu's blocks in its memory failed (%s); set "
                                "DAGGER_COLLECT_PULL=0 to send them instead", api,
                                push ? "writing" : "reading", (unsigned long long)h.owner,
                                c.rc > 0 ? strerror(c.rc) : "a short copy");
    if (c.stage && !push)
        place_all(&h, entries, &c);
    return DAGGER_OK;
}

int dg_arr_pull_impl(dagger_task_t *t)
{
    return pull_or_push(t, 0);
}

int dg_arr_push_impl(dagger_task_t *t)
{
    return pull_or_push(t, 1);
}
