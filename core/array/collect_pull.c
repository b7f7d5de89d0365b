/* collect by pulling and scatter by pushing (collect_pull.h): the peer
 * table, and the tasks. */
#include <dagger/coll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/array/collect_pull.h"
#include "core/base/alloc.h"
#include "core/base/config.h"
#include "core/base/status_internal.h"

/* A word other ranks read to learn that they can read this process's
 * memory: a random value, published with its address. */
static _Atomic uint64_t probe_word;

static uint64_t probe_value(void)
{
    uint64_t v = probe_word;
    if (v)
        return v;
    if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
        v = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&v;
    v |= 1;
    uint64_t zero = 0;
    if (!__atomic_compare_exchange_n((uint64_t *)&probe_word, &zero, v, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST))
        v = probe_word; /* another thread set it first */
    return v;
}

void dg_arr_peers_free(dagger_array_t *a)
{
    if (!a->peers)
        return;
    free(a->peers->pid);
    free(a->peers->addr);
    free(a->peers);
    a->peers = NULL;
}

/* Where block b's storage lies on this rank (its owner), or 0 when it is
 * not host memory laid out densely. */
static uint64_t block_home(const dagger_array_t *a, size_t b)
{
    void *data = NULL;
    size_t strides[DAGGER_MAX_DIMS], idx[DAGGER_MAX_DIMS], off[DAGGER_MAX_DIMS],
        ext[DAGGER_MAX_DIMS];
    if (dagger_chunk_data(a->rt, a->chunks[b], &data, strides) != DAGGER_OK || !data)
        return 0;
    dg_arr_block_box(a, b, idx, off, ext);
    size_t s = 1;
    for (int k = 0; k < a->ndims; k++) {
        if (strides[k] != s)
            return 0;
        s *= ext[k];
    }
    return (uint64_t)(uintptr_t)data;
}

/* Reads 8 bytes at addr of process pid. */
static int read_word(uint64_t pid, uint64_t addr, uint64_t *v)
{
    struct iovec l = {v, sizeof(*v)}, r = {(void *)(uintptr_t)addr, sizeof(*v)};
    return process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(*v) ? 0 : -1;
}

/* Fills p from every rank's record (pid, probe value, probe address, then
 * the storage of each block it owns, in block order); returns 1 when this
 * rank read every other rank's probe. */
static int parse(const dagger_array_t *a, dg_arr_peers_t *p, const unsigned char *all,
                 const size_t *lens, int me)
{
    int ok = 1;
    size_t at = 0;
    for (int r = 0; r < p->nranks; r++) {
        size_t owned = 0;
        for (size_t b = 0; b < a->nblocks; b++)
            owned += a->owners[b] == r;
        if (lens[r] != (3 + owned) * sizeof(uint64_t)) {
            ok = 0; /* every rank sees the same records: all of them say no */
            at += lens[r];
            continue;
        }
        uint64_t rec[3];
        memcpy(rec, all + at, sizeof(rec));
        p->pid[r] = rec[0];
        size_t k = 3;
        for (size_t b = 0; b < a->nblocks; b++)
            if (a->owners[b] == r)
                memcpy(&p->addr[b], all + at + k++ * sizeof(uint64_t), sizeof(uint64_t));
        uint64_t v = 0;
        if (r != me && (read_word(rec[0], rec[2], &v) || v != rec[1]))
            ok = 0;
        at += lens[r];
    }
    return ok;
}

/* Makes a's peer table (every rank at once). A rank out of memory still
 * takes part in both collectives (with no record): every rank then says no. */
static dagger_status_t make_table(dagger_array_t *a)
{
    dagger_runtime_t *rt = a->rt;
    int n = dagger_nranks(rt), me = dagger_rank(rt);
    size_t owned = 0;
    for (size_t b = 0; b < a->nblocks; b++)
        owned += a->owners[b] == me;
    size_t *lens = dg_malloc((size_t)n * sizeof(size_t));
    if (!lens)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_array_collect: out of memory");
    dg_arr_peers_t *p = dg_calloc(1, sizeof(*p));
    uint64_t *mine = dg_malloc((3 + owned) * sizeof(uint64_t));
    if (p) {
        p->nranks = n;
        p->nblocks = a->nblocks;
        p->pid = dg_calloc((size_t)n, sizeof(uint64_t));
        p->addr = dg_calloc(a->nblocks, sizeof(uint64_t));
    }
    int ok = p && p->pid && p->addr && mine;
    if (mine) {
        mine[0] = (uint64_t)getpid();
        mine[1] = probe_value();
        mine[2] = (uint64_t)(uintptr_t)&probe_word;
        size_t k = 3;
        for (size_t b = 0; b < a->nblocks; b++)
            if (a->owners[b] == me)
                mine[k++] = block_home(a, b);
    }
    void *all = NULL;
    dagger_status_t st = dagger_allgather(rt, mine ? (const void *)mine : (const void *)lens,
                                          mine ? (3 + owned) * sizeof(uint64_t) : 0, &all, lens);
    dg_config_t cfg;
    if (dg_config_load(&cfg, NULL) != DAGGER_OK)
        dg_config_defaults(&cfg);
    if (st == DAGGER_OK && ok)
        ok = cfg.collect_pull && parse(a, p, all, lens, me);
    free(all);
    free(mine);
    free(lens);
    uint64_t flag = st == DAGGER_OK && ok;
    if (st == DAGGER_OK)
        st = dagger_allreduce(rt, &flag, 1, DAGGER_U64, DAGGER_OP_MIN);
    if (st != DAGGER_OK || !p || !p->pid || !p->addr) {
        if (p) {
            free(p->pid);
            free(p->addr);
            free(p);
        }
        return st != DAGGER_OK
                   ? st
                   : dg_error(DAGGER_ERR_NO_MEMORY, "dagger_array_collect: out of memory");
    }
    p->ok = flag == 1;
    a->peers = p;
    return DAGGER_OK;
}

dagger_status_t dg_arr_pull_table(dagger_array_t *a, const dg_arr_tiles_t *t,
                                  const dg_arr_peers_t **table)
{
    *table = NULL;
    dagger_array_t *root = a->parent ? a->parent : a;
    if (dagger_nranks(root->rt) < 2)
        return DAGGER_OK;
    if (!root->peers) {
        size_t bytes = a->elsize; /* the box's */
        for (int k = 0; k < DAGGER_MAX_DIMS; k++)
            bytes *= t->cuts[k][t->nseg[k]] - t->cuts[k][0];
        if (++root->pull_collects < 2 && bytes < DG_ARR_PULL_FIRST_BYTES)
            return DAGGER_OK;
        dagger_status_t st = make_table(root);
        if (st != DAGGER_OK)
            return st;
    }
    const dg_arr_peers_t *p = root->peers;
    if (!p->ok)
        return DAGGER_OK;
    for (size_t n = 0; n < t->count; n++) {
        dg_arr_tile_t tile;
        size_t off[DAGGER_MAX_DIMS];
        dg_arr_tile_get(t, n, &tile);
        if (!p->addr[dg_arr_tile_block(t, 0, &tile, off)])
            return DAGGER_OK;
    }
    *table = p;
    return DAGGER_OK;
}

/* ------------------------------------------------------------ tasks */

dagger_status_t dg_arr_pull_order(dg_arr_pull_job_t *j, int nranks)
{
    const dg_arr_tiles_t *t = j->t;
    size_t count = t->count ? t->count : 1;
    j->by_owner = dg_malloc(count * sizeof(size_t));
    j->first = dg_calloc((size_t)nranks + 1, sizeof(size_t));
    int *own = dg_malloc(count * sizeof(int));
    size_t *at = dg_calloc((size_t)nranks, sizeof(size_t));
    dagger_status_t st = DAGGER_OK;
    if (!j->by_owner || !j->first || !own || !at) {
        dg_arr_pull_job_free(j);
        st = dg_error(DAGGER_ERR_NO_MEMORY, "dagger_array_collect: out of memory");
    } else {
        for (size_t n = 0; n < t->count; n++) {
            dg_arr_tile_t tile;
            dg_arr_tile_get(t, n, &tile);
            own[n] = dg_arr_tile_owner(t, 0, &tile);
            j->first[own[n] + 1]++;
        }
        for (int r = 0; r < nranks; r++)
            j->first[r + 1] += j->first[r];
        for (size_t n = 0; n < t->count; n++)
            j->by_owner[j->first[own[n]] + at[own[n]]++] = n;
    }
    free(at);
    free(own);
    return st;
}

void dg_arr_pull_job_free(dg_arr_pull_job_t *j)
{
    free(j->by_owner);
    free(j->first);
    j->by_owner = NULL;
    j->first = NULL;
}

static size_t tile_bytes(const dg_arr_tiles_t *t, const dg_arr_tile_t *tile)
{
    size_t n = t->ops[0]->elsize;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++)
        n *= tile->ext[k];
    return n;
}

typedef struct pull_value {
    dg_arr_pulls_t h;
    dg_arr_pull_tile_t e[DG_ARR_PULL_TILES];
} pull_value_t;

/* The entry of tile n (its place in the host box and in its block). */
static void entry(const dg_arr_pull_job_t *j, size_t n, dg_arr_pull_tile_t *e, size_t *block)
{
    const dagger_array_t *root = dg_arr_root(j->t->ops[0]);
    dg_arr_tile_t tile;
    dg_arr_tile_get(j->t, n, &tile);
    size_t boff[DAGGER_MAX_DIMS], idx[DAGGER_MAX_DIMS], goff[DAGGER_MAX_DIMS],
        bext[DAGGER_MAX_DIMS];
    *block = dg_arr_tile_block(j->t, 0, &tile, boff);
    dg_arr_block_box(root, *block, idx, goff, bext);
    memset(e, 0, sizeof(*e));
    int nd = j->t->ops[0]->ndims;
    e->block = *block;
    for (int k = 0; k < DAGGER_MAX_DIMS; k++) {
        e->off[k] = tile.off[k] - (k < nd ? j->off[k] : 0);
        e->ext[k] = tile.ext[k];
        e->boff[k] = boff[k];
        e->bdim[k] = bext[k];
    }
}

/* One owner's m tiles (list) in tasks of at most DG_ARR_PULL_TILES tiles
 * and about DG_ARR_PULL_BYTES, shared out evenly. */
static dagger_status_t submit_owner(dagger_region_t *r, const dg_arr_pull_job_t *j, int q, int o,
                                    const size_t *list, size_t m)
{
    size_t bytes = 0;
    for (size_t i = 0; i < m; i++) {
        dg_arr_tile_t tile;
        dg_arr_tile_get(j->t, list[i], &tile);
        bytes += tile_bytes(j->t, &tile);
    }
    size_t groups = (m + DG_ARR_PULL_TILES - 1) / DG_ARR_PULL_TILES;
    size_t by_bytes = (bytes + DG_ARR_PULL_BYTES - 1) / DG_ARR_PULL_BYTES;
    if (by_bytes > groups)
        groups = by_bytes < m ? by_bytes : m;
    /* The probe: the first element of the owner's first block here, the
     * same for all of this owner's tasks (one transfer). */
    static const size_t zero[DAGGER_MAX_DIMS], one[DAGGER_MAX_DIMS] = {1, 1, 1, 1};
    pull_value_t v;
    size_t block;
    entry(j, list[0], &v.e[0], &block);
    dagger_view_t probe = dg_arr_sub_view(dg_arr_root(j->t->ops[0]), block, zero, one);
    dagger_task_opts_t opts = {.scope = &DAGGER_SCOPE_RANK(q)};
    size_t at = 0;
    for (size_t g = 0; g < groups; g++) {
        size_t take = m / groups + (g < m % groups);
        v.h = (dg_arr_pulls_t){.key = j->key, .peers = j->peers_key, .owner = (uint64_t)o,
                               .elsize = j->t->ops[0]->elsize, .ntiles = take};
        memcpy(v.h.box, j->box, sizeof(v.h.box));
        for (size_t i = 0; i < take; i++)
            entry(j, list[at + i], &v.e[i], &block);
        at += take;
        dagger_arg_t args[2] = {DAGGER_IN(probe),
                                DAGGER_VALUE(&v, sizeof(v.h) + take * sizeof(v.e[0]))};
        dagger_status_t st = dagger_submit(r, j->cl, 2, args, &opts, NULL, NULL);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}

dagger_status_t dg_arr_pull_submit(dagger_region_t *r, const dg_arr_pull_job_t *j, int q)
{
    for (int o = 0; o < j->table->nranks; o++) {
        size_t m = j->first[o + 1] - j->first[o];
        if (o == q || !m)
            continue;
        dagger_status_t st = submit_owner(r, j, q, o, j->by_owner + j->first[o], m);
        if (st != DAGGER_OK)
            return st;
    }
    return DAGGER_OK;
}
