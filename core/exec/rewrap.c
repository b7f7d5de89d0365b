/* move_rewrap header encoding (fixed little-endian fields, transport/wire.h). */
#include "core/exec/rewrap.h"

#include <stdio.h>

#include "core/base/hash.h"
#include "transport/wire.h"

void dg_rewrap_describe(dg_rewrap_hdr_t *h, uint64_t tag, uint64_t chunk, uint64_t version,
                        uint32_t elsize, const dg_plan_span_t *spans, uint32_t nspans)
{
    uint64_t hash = DG_HASH_SEED, count = 0;
    for (uint32_t i = 0; i < nspans; i++) {
        hash = dg_hash_mix64(dg_hash_mix64(hash, spans[i].begin), spans[i].end);
        count += spans[i].end - spans[i].begin;
    }
    *h = (dg_rewrap_hdr_t){
        .tag = tag, .chunk = chunk, .version = version, .elsize = elsize, .nspans = nspans,
        .bytes = count * elsize, .span_hash = hash,
        .first = nspans ? spans[0].begin : 0, .last = nspans ? spans[nspans - 1].end : 0,
    };
}

void dg_rewrap_encode(const dg_rewrap_hdr_t *h, void *buf)
{
    dg_wire_cursor_t c = dg_wire_cursor(buf, DG_REWRAP_HDR_LEN);
    dg_wire_put_u64(&c, h->tag);
    dg_wire_put_u64(&c, h->chunk);
    dg_wire_put_u64(&c, h->version);
    dg_wire_put_u32(&c, h->elsize);
    dg_wire_put_u32(&c, h->nspans);
    dg_wire_put_u64(&c, h->bytes);
    dg_wire_put_u64(&c, h->span_hash);
    dg_wire_put_u64(&c, h->first);
    dg_wire_put_u64(&c, h->last);
    dg_wire_put_u32(&c, h->pieces);
    dg_wire_put_u32(&c, h->piece);
}

int dg_rewrap_decode(const void *buf, size_t len, dg_rewrap_hdr_t *h)
{
    dg_wire_cursor_t c = dg_wire_cursor(buf, len);
    h->tag = dg_wire_get_u64(&c);
    h->chunk = dg_wire_get_u64(&c);
    h->version = dg_wire_get_u64(&c);
    h->elsize = dg_wire_get_u32(&c);
    h->nspans = dg_wire_get_u32(&c);
    h->bytes = dg_wire_get_u64(&c);
    h->span_hash = dg_wire_get_u64(&c);
    h->first = dg_wire_get_u64(&c);
    h->last = dg_wire_get_u64(&c);
    h->pieces = dg_wire_get_u32(&c);
    h->piece = dg_wire_get_u32(&c);
    if (c.bad || !h->pieces != !h->piece)
        return -1;
    if (h->pieces && h->bytes / h->piece + (h->bytes % h->piece != 0) != h->pieces)
        return -1; /* pieces = ceil(bytes / piece) */
    return 0;
}

int dg_rewrap_match(const dg_rewrap_hdr_t *a, const dg_rewrap_hdr_t *b, char *why, size_t whylen)
{
    if (a->tag == b->tag && a->chunk == b->chunk && a->version == b->version &&
        a->elsize == b->elsize && a->nspans == b->nspans && a->bytes == b->bytes &&
        a->span_hash == b->span_hash)
        return 1;
    snprintf(why, whylen,
             "transfer tag %llx: this rank expects chunk %llu v%llu, %u spans [%llu, %llu) of "
             "%u-byte elements, %llu bytes; the sender sent chunk %llu v%llu, %u spans "
             "[%llu, %llu) of %u-byte elements, %llu bytes%s",
             (unsigned long long)a->tag, (unsigned long long)a->chunk,
             (unsigned long long)a->version, a->nspans, (unsigned long long)a->first,
             (unsigned long long)a->last, a->elsize, (unsigned long long)a->bytes,
             (unsigned long long)b->chunk, (unsigned long long)b->version, b->nspans,
             (unsigned long long)b->first, (unsigned long long)b->last, b->elsize,
             (unsigned long long)b->bytes,
             a->span_hash != b->span_hash ? " (the span lists differ)" : "");
    return 0;
}

void dg_rewrap_piece_encode(const dg_rewrap_piece_t *p, void *buf)
{
    dg_wire_cursor_t c = dg_wire_cursor(buf, DG_REWRAP_PIECE_LEN);
    dg_wire_put_u64(&c, p->tag);
    dg_wire_put_u32(&c, p->index);
    dg_wire_put_u32(&c, p->count);
    dg_wire_put_u64(&c, p->offset);
    dg_wire_put_u64(&c, p->bytes);
}

int dg_rewrap_piece_decode(const void *buf, size_t len, dg_rewrap_piece_t *p)
{
    dg_wire_cursor_t c = dg_wire_cursor(buf, len);
    p->tag = dg_wire_get_u64(&c);
    p->index = dg_wire_get_u32(&c);
    p->count = dg_wire_get_u32(&c);
    p->offset = dg_wire_get_u64(&c);
    p->bytes = dg_wire_get_u64(&c);
    const uint64_t lim = 1ull << 63;
    if (c.bad || !p->count || p->index >= p->count || !p->bytes || p->offset >= lim ||
        p->bytes > lim - p->offset)
        return -1;
    return 0;
}

int dg_rewrap_piece_fits(const dg_rewrap_hdr_t *h, const dg_rewrap_piece_t *p, char *why,
                         size_t whylen)
{
    uint64_t off = (uint64_t)p->index * h->piece;
    uint64_t want = off < h->bytes ? (h->bytes - off < h->piece ? h->bytes - off : h->piece) : 0;
    if (p->tag == h->tag && p->count == h->pieces && p->index < h->pieces && p->offset == off &&
        p->bytes == want)
        return 1;
    snprintf(why, whylen,
             "transfer tag %llx (chunk %llu v%llu, %u spans [%llu, %llu), %llu bytes in %u "
             "pieces): piece %u of %u for tag %llx, bytes [%llu, %llu), is not one of them",
             (unsigned long long)h->tag, (unsigned long long)h->chunk,
             (unsigned long long)h->version, h->nspans, (unsigned long long)h->first,
             (unsigned long long)h->last, (unsigned long long)h->bytes, h->pieces, p->index,
             p->count, (unsigned long long)p->tag, (unsigned long long)p->offset,
             (unsigned long long)(p->offset + p->bytes));
    return 0;
}
