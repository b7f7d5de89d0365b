/* The collect and scatter codelets: copy tiles between slots and a box of a
 * host buffer bound on this rank, one line (dimension 0) at a time; and pack
 * a rank's tiles into one bundle for the ranks that collect them. */
#include <string.h>

#include "core/array/array_internal.h"
#include "core/array/params.h"

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
