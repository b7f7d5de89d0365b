/* Collective message bytes (see coll_wire.h), in wire.h's fixed
 * little-endian fields. */
#include "transport/coll_wire.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/status_internal.h"
#include "transport/wire.h"

void dg_coll_hdr_encode(const dg_coll_hdr_t *h, void *buf)
{
    dg_wire_cursor_t c = dg_wire_cursor(buf, DG_COLL_HDR_LEN);
    dg_wire_put_u64(&c, h->seq);
    dg_wire_put_u8(&c, h->phase);
    dg_wire_put_u16(&c, h->fail);
    dg_wire_put_u8(&c, h->sig.kind);
    dg_wire_put_u8(&c, h->sig.op);
    dg_wire_put_u8(&c, h->sig.type);
    dg_wire_put_u32(&c, (uint32_t)h->sig.root);
    dg_wire_put_u64(&c, h->sig.size);
    dg_wire_put_u64(&c, h->sig.regions);
    dg_wire_put_u64(&c, h->sig.plan);
}

int dg_coll_hdr_decode(const void *buf, size_t len, dg_coll_hdr_t *h)
{
    dg_wire_cursor_t c = dg_wire_cursor(buf, len);
    h->seq = dg_wire_get_u64(&c);
    h->phase = dg_wire_get_u8(&c);
    h->fail = dg_wire_get_u16(&c);
    h->sig.kind = dg_wire_get_u8(&c);
    h->sig.op = dg_wire_get_u8(&c);
    h->sig.type = dg_wire_get_u8(&c);
    h->sig.root = (int32_t)dg_wire_get_u32(&c);
    h->sig.size = dg_wire_get_u64(&c);
    h->sig.regions = dg_wire_get_u64(&c);
    h->sig.plan = dg_wire_get_u64(&c);
    return c.bad || c.left || h->phase > DG_COLL_ANSWER ? -1 : 0;
}

dagger_status_t dg_coll_unpack_gathered(const void *bytes, size_t len, int nranks, void **all,
                                        size_t *lens)
{
    dg_wire_cursor_t c = dg_wire_cursor(bytes, len);
    size_t total = 0;
    for (int r = 0; r < nranks; r++) {
        lens[r] = (size_t)dg_wire_get_u64(&c);
        dg_wire_get_bytes(&c, lens[r]);
        total += lens[r];
    }
    if (c.bad || c.left)
        return dg_error(DAGGER_ERR_PROTOCOL, "dagger_allgather: malformed result (%zu bytes)",
                        len);
    unsigned char *dst = dg_malloc(total ? total : 1);
    if (!dst)
        return dg_error(DAGGER_ERR_NO_MEMORY, "dagger_allgather: out of memory for %zu bytes", total);
    c = dg_wire_cursor(bytes, len);
    size_t at = 0;
    for (int r = 0; r < nranks; r++) {
        size_t n = (size_t)dg_wire_get_u64(&c);
        memcpy(dst + at, dg_wire_get_bytes(&c, n), n);
        at += n;
    }
    *all = dst;
    return DAGGER_OK;
}
