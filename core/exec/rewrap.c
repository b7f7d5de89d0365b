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
        hash = dg_hash_u64(dg_hash_u64(hash, spans[i].begin), spans[i].end);
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
    return c.bad ? -1 : 0;
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
