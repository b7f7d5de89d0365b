/* collect (gather to one rank or to all) and scatter (from rank 0's host
 * buffer). Both are regions of tasks. collect's tasks on the receiving rank
 * read tiles (In) and copy them into the bound host buffer, so the planner
 * moves exactly the tiles' bytes; small tiles travel packed in bundles
 * (collect_bundle.h), or, where the ranks read each other's memory, the
 * tiles are read straight from their owners' blocks (collect_pull.h).
 * scatter's tasks run on rank 0 and write the blocks (Out), which the
 * region's end copies home to their owners; or, likewise, they write the
 * other ranks' blocks straight from the buffer (push). */
#include <string.h>

#include "core/array/collect_bundle.h"
#include "core/array/collect_pull.h"
#include "core/array/params.h"
#include "core/array/tiles.h"
#include "core/base/status_internal.h"

static dagger_status_t check_box(const dagger_array_t *a, const size_t off[], const size_t ext[],
                                 const char *fn)
{
    DG_CHECK_ARG(off && ext, "%s: NULL box offset or extent", fn);
    for (int k = 0; k < a->ndims; k++)
        if (ext[k] == 0 || off[k] > a->dims[k] || ext[k] > a->dims[k] - off[k])
            return dg_error(DAGGER_ERR_BAD_VIEW, "%s: the box [%zu, %zu) of dimension %d lies "
                            "outside the array's %zu elements (or is empty)", fn, off[k],
                            off[k] + ext[k], k, a->dims[k]);
    return DAGGER_OK;
}

/* What one collect submits from. */
typedef struct collect {
    dagger_runtime_t *rt;
    dagger_codelet_t put, bundle, unbundle;
    const dg_arr_tiles_t *t;
    const dg_arr_bundles_t *bs;     /* NULL: every tile is put directly */
    dg_arr_pull_job_t *pull;        /* NULL: no tile is pulled (collect_pull.h) */
    dg_arr_puts_t head;             /* key, box */
    const size_t *off;              /* the box in the array */
} collect_t;

/* The puts' value: the header, then one entry per tile. */
typedef struct puts_value {
    dg_arr_puts_t h;
    dg_arr_put_tile_t e[DG_ARR_PUT_TILES];
} puts_value_t;

static void add_entry(const collect_t *c, puts_value_t *v, const dg_arr_tile_t *tile)
{
    dg_arr_put_tile_t *e = &v->e[v->h.ntiles++];
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        e->off[k] = tile->off[k] - (k < c->t->ops[0]->ndims ? c->off[k] : 0);
        e->ext[k] = tile->ext[k];
    }
}

static size_t value_len(const puts_value_t *v)
{
    return sizeof(v->h) + v->h.ntiles * sizeof(v->e[0]);
}

/* The tasks on each bundle's owner that pack its tiles. */
static dagger_status_t submit_bundles(dagger_region_t *r, const collect_t *c)
{
    for (size_t i = 0; c->bs && i < c->bs->count; i++) {
        const dg_arr_bundle_t *b = &c->bs->b[i];
        dagger_arg_t args[DAGGER_MAX_ARGS];
        for (uint32_t j = 0; j < b->ntiles; j++) {
            dg_arr_tile_t tile;
            dg_arr_tile_get(c->t, b->tile[j], &tile);
            args[j] = DAGGER_IN(dg_arr_tile_view(c->t, 0, &tile));
        }
        args[b->ntiles] = DAGGER_OUT(dagger_view(c->rt, b->chunk));
        dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(b->owner)};
        dagger_status_t st = dagger_submit(r, c->bundle, (int)b->ntiles + 1, args, &o, NULL, NULL);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}

static size_t tile_bytes(const collect_t *c, const dg_arr_tile_t *tile)
{
    size_t n = c->t->ops[0]->elsize;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        n *= tile->ext[k];
    return n;
}

/* Rank q's tasks: one per bundle another rank packed for it, or the tasks
 * that pull other ranks' tiles, then its other tiles put directly, up to
 * DG_ARR_PUT_TILES and DG_ARR_PUT_BYTES a task. */
static dagger_status_t submit_receiver(dagger_region_t *r, const collect_t *c, int q)
{
    dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(q)};
    puts_value_t v;
    dagger_status_t st = DAGGER_OK;
    for (size_t i = 0; c->bs && i < c->bs->count && st == DAGGER_OK; i++) {
        const dg_arr_bundle_t *b = &c->bs->b[i];
        if (b->owner == q)
            continue;
        v.h = c->head;
        for (uint32_t j = 0; j < b->ntiles; j++) {
            dg_arr_tile_t tile;
            dg_arr_tile_get(c->t, b->tile[j], &tile);
            add_entry(c, &v, &tile);
        }
        dagger_arg_t args[2] = {DAGGER_IN(dagger_view(c->rt, b->chunk)),
                                DAGGER_VALUE(&v, value_len(&v))};
        st = dagger_submit(r, c->unbundle, 2, args, &o, NULL, NULL);
    }
    if (c->pull && st == DAGGER_OK)
        st = dg_arr_pull_submit(r, c->pull, q);
    dagger_arg_t args[DAGGER_MAX_ARGS];
    v.h = c->head;
    size_t bytes = 0;
    for (size_t n = 0; n < c->t->count && st == DAGGER_OK; n++) {
        if (c->bs && c->bs->via[n] >= 0 && c->bs->via[n] != q)
            continue; /* it comes in its owner's bundle */
        dg_arr_tile_t tile;
        dg_arr_tile_get(c->t, n, &tile);
        if (c->pull && dg_arr_tile_owner(c->t, 0, &tile) != q)
            continue; /* pulled */
        size_t tb = tile_bytes(c, &tile);
        if (v.h.ntiles && (v.h.ntiles == DG_ARR_PUT_TILES || bytes + tb > DG_ARR_PUT_BYTES)) {
            args[v.h.ntiles] = DAGGER_VALUE(&v, value_len(&v));
            st = dagger_submit(r, c->put, (int)v.h.ntiles + 1, args, &o, NULL, NULL);
            v.h = c->head;
            bytes = 0;
        }
        args[v.h.ntiles] = DAGGER_IN(dg_arr_tile_view(c->t, 0, &tile));
        add_entry(c, &v, &tile);
        bytes += tb;
    }
    if (st == DAGGER_OK && v.h.ntiles) {
        args[v.h.ntiles] = DAGGER_VALUE(&v, value_len(&v));
        st = dagger_submit(r, c->put, (int)v.h.ntiles + 1, args, &o, NULL, NULL);
    }
    return st;
}

static dagger_status_t submit_collect(dagger_region_t *r, const collect_t *c, int root, int nranks)
{
    dagger_status_t st = submit_bundles(r, c);
    for (int q = root < 0 ? 0 : root; q < (root < 0 ? nranks : root + 1) && st == DAGGER_OK; q++)
        st = submit_receiver(r, c, q);
    return st;
}

static dagger_status_t codelets(collect_t *c)
{
    dagger_status_t st = dg_arr_codelet(c->rt, DG_ARR_CL_PUT, &c->put);
    if (st == DAGGER_OK)
        st = dg_arr_codelet(c->rt, DG_ARR_CL_BUNDLE, &c->bundle);
    if (st == DAGGER_OK)
        st = dg_arr_codelet(c->rt, DG_ARR_CL_UNBUNDLE, &c->unbundle);
    return st;
}

dagger_status_t dagger_array_collect_box(dagger_array_t *arr, const size_t off[], const size_t ext[],
                                         int root, void *out)
{
    static const char fn[] = "dagger_array_collect";
    dagger_array_t *a = dg_arr_get(arr, fn);
    if (!a)
        return DAGGER_ERR_BAD_HANDLE;
    int nranks = dagger_nranks(a->rt);
    DG_CHECK_ARG(root == DAGGER_ALL_RANKS || (root >= 0 && root < nranks),
                 "%s: root rank %d; use 0 to %d or DAGGER_ALL_RANKS", fn, root, nranks - 1);
    dagger_status_t st = check_box(a, off, ext, fn);
    collect_t c = {.rt = a->rt, .off = off};
    if (st == DAGGER_OK)
        st = codelets(&c);
    if (st != DAGGER_OK)
        return st;
    const dagger_array_t *ops[1] = {a};
    dg_arr_tiles_t t;
    st = dg_arr_tiles_init(&t, 1, ops, NULL, off, ext);
    if (st != DAGGER_OK)
        return st;
    c.t = &t;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        c.head.box[k] = k < a->ndims ? ext[k] : 1;
    /* Pulling, and bundle chunks, only outside a region (collect_pull.h);
     * inside one, the region's own begin below says what is wrong. */
    dagger_region_t *open = NULL;
    const dg_arr_peers_t *peers = NULL;
    if (dagger_region_current(a->rt, &open) == DAGGER_OK && !open) {
        st = dg_arr_pull_table(a, &t, &peers);
        if (st == DAGGER_OK && peers)
            dg_arr_bundles_free(a); /* bundles kept by collects before */
        else if (st == DAGGER_OK)
            st = dg_arr_bundles_get(a, &t, off, ext, root, &c.bs);
    }
    /* A NULL buffer where one is written is found by the task there, which
     * fails the region on every rank alike (a local check would leave the
     * other ranks waiting in the collective). */
    uint64_t key = 0, peers_key = 0;
    if (st == DAGGER_OK)
        st = dg_arr_bind(a, out, &key);
    c.head.key = key;
    dg_arr_pull_job_t pull = {.t = &t, .table = peers, .key = key, .off = off};
    if (st == DAGGER_OK && peers) {
        memcpy(pull.box, c.head.box, sizeof(pull.box));
        st = dg_arr_codelet(a->rt, DG_ARR_CL_PULL, &pull.cl);
        if (st == DAGGER_OK)
            st = dg_arr_bind(a, (void *)(uintptr_t)peers, &peers_key);
        pull.peers_key = peers_key;
        if (st == DAGGER_OK)
            st = dg_arr_pull_order(&pull, nranks);
        c.pull = &pull;
    }
    dg_arr_sub_t sub;
    if (st == DAGGER_OK)
        st = dg_arr_open(a->rt, NULL, &sub, fn);
    if (st == DAGGER_OK)
        st = dg_arr_close(&sub, submit_collect(sub.r, &c, root, nranks));
    dg_arr_bundles_after(a);
    dg_arr_pull_job_free(&pull);
    dg_arr_unbind(peers_key);
    dg_arr_unbind(key);
    dg_arr_tiles_cleanup(&t);
    return st;
}

dagger_status_t dagger_array_collect_to(dagger_array_t *a, int root, void *out)
{
    static const size_t zero[DAGGER_MAX_DIMS];
    const dagger_array_t *x = dg_arr_get(a, "dagger_array_collect");
    if (!x)
        return DAGGER_ERR_BAD_HANDLE;
    return dagger_array_collect_box(a, zero, x->dims, root, out);
}

dagger_status_t dagger_array_collect(dagger_array_t *a, void *out)
{
    return dagger_array_collect_to(a, DAGGER_ALL_RANKS, out);
}

/* ------------------------------------------------------------ scatter */

static void patch_offset(void *value, const dg_arr_tile_t *tile)
{
    dg_arr_xfer_t x;
    memcpy(&x, value, sizeof(x));
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        x.off[k] = tile->off[k];
    memcpy(value, &x, sizeof(x));
}

/* Rank 0's tasks: one per block it writes from its host buffer (all, or
 * with push its own only), then the tasks that push the others'. */
static dagger_status_t scatter_tasks(dagger_region_t *r, dagger_array_t *a, uint64_t key,
                                     const dg_arr_pull_job_t *push)
{
    dagger_codelet_t cl;
    dagger_status_t st = dg_arr_codelet(a->rt, DG_ARR_CL_TAKE, &cl);
    dg_arr_xfer_t x = {.key = key};
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        x.box[k] = a->dims[k];
    dagger_task_opts_t o = {.scope = &DAGGER_SCOPE_RANK(0)};
    for (size_t b = 0; b < a->nblocks && st == DAGGER_OK; b++) {
        if (push && a->owners[b] != 0)
            continue; /* pushed */
        dg_arr_tile_t tile;
        size_t idx[DAGGER_MAX_DIMS];
        dg_arr_block_box(a, b, idx, tile.off, tile.ext);
        patch_offset(&x, &tile);
        dagger_arg_t args[2] = {DAGGER_OUT(dagger_view(a->rt, a->chunks[b])),
                                DAGGER_VALUE(&x, sizeof(x))};
        st = dagger_submit(r, cl, 2, args, &o, NULL, NULL);
    }
    if (push && st == DAGGER_OK)
        st = dg_arr_pull_submit(r, push, 0);
    return st;
}

dagger_status_t dagger_array_scatter(dagger_array_t *arr, const void *host)
{
    static const char fn[] = "dagger_array_scatter";
    dagger_array_t *a = dg_arr_get(arr, fn);
    if (!a)
        return DAGGER_ERR_BAD_HANDLE;
    dagger_status_t st = dg_arr_no_view(a, fn);
    if (st != DAGGER_OK)
        return st;
    /* Pushing (collect_pull.h): the other ranks' blocks written straight
     * from rank 0's buffer, outside a region only (the region's own begin
     * says what is wrong inside one). */
    const dagger_array_t *ops[1] = {a};
    dg_arr_tiles_t t;
    if ((st = dg_arr_tiles_init(&t, 1, ops, NULL, NULL, NULL)) != DAGGER_OK)
        return st;
    dagger_region_t *open = NULL;
    const dg_arr_peers_t *peers = NULL;
    if (dagger_region_current(a->rt, &open) == DAGGER_OK && !open)
        st = dg_arr_pull_table(a, &t, &peers);
    uint64_t key = 0, peers_key = 0;
    /* Only rank 0 runs the tasks; the binding elsewhere is never read. */
    if (st == DAGGER_OK)
        st = dg_arr_bind(a, (void *)(uintptr_t)host, &key);
    static const size_t zero[DAGGER_MAX_DIMS];
    dg_arr_pull_job_t push = {.t = &t, .table = peers, .key = key, .off = zero};
    if (st == DAGGER_OK && peers) {
        for (int k = 0; k < DAGGER_MAX_DIMS; k++)
            push.box[k] = a->dims[k];
        st = dg_arr_codelet(a->rt, DG_ARR_CL_PUSH, &push.cl);
        if (st == DAGGER_OK)
            st = dg_arr_bind(a, (void *)(uintptr_t)peers, &peers_key);
        push.peers_key = peers_key;
        if (st == DAGGER_OK)
            st = dg_arr_pull_order(&push, dagger_nranks(a->rt));
    }
    dg_arr_sub_t sub;
    if (st == DAGGER_OK)
        st = dg_arr_open(a->rt, NULL, &sub, fn);
    if (st == DAGGER_OK)
        st = dg_arr_close(&sub, scatter_tasks(sub.r, a, key, peers ? &push : NULL));
    dg_arr_pull_job_free(&push);
    dg_arr_unbind(peers_key);
    dg_arr_unbind(key);
    dg_arr_tiles_cleanup(&t);
    return st;
}

dagger_status_t dagger_array_from_host(dagger_runtime_t *rt, const dagger_array_desc_t *desc,
                                       const void *host, dagger_array_t **out)
{
    dagger_status_t st = dg_arr_create(rt, desc, out, "dagger_array_from_host");
    if (st != DAGGER_OK)
        return st;
    st = dagger_array_scatter(*out, host);
    if (st != DAGGER_OK) {
        dagger_array_destroy(*out);
        *out = NULL;
    }
    return st;
}
