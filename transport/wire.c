/* Little-endian field encoding and the frame header (see wire.h). */
#include "transport/wire.h"

#include <string.h>

void dg_wire_put_bytes(dg_wire_cursor_t *c, const void *src, size_t len)
{
    unsigned char *at = dg_wire_take(c, len);
    if (at && len)
        memcpy(at, src, len);
}

const void *dg_wire_get_bytes(dg_wire_cursor_t *c, size_t len)
{
    return dg_wire_take(c, len);
}

void dg_wire_frame_encode(void *buf, const dg_wire_frame_t *f)
{
    dg_wire_cursor_t c = dg_wire_cursor(buf, DG_WIRE_FRAME_LEN);
    dg_wire_put_u16(&c, DG_WIRE_MAGIC);
    dg_wire_put_u8(&c, DG_WIRE_VERSION);
    dg_wire_put_u8(&c, f->flags);
    dg_wire_put_u32(&c, f->src);
}

int dg_wire_frame_decode(const void *buf, size_t len, dg_wire_frame_t *f, const char **reason)
{
    dg_wire_cursor_t c = dg_wire_cursor(buf, len);
    uint16_t magic = dg_wire_get_u16(&c);
    uint8_t version = dg_wire_get_u8(&c);
    f->flags = dg_wire_get_u8(&c);
    f->src = dg_wire_get_u32(&c);
    const char *why = NULL;
    if (c.bad)
        why = "header shorter than the frame";
    else if (magic != DG_WIRE_MAGIC)
        why = "not a Dagger-C frame (wrong magic)";
    else if (version != DG_WIRE_VERSION)
        why = "frame from another wire-format version";
    if (reason)
        *reason = why;
    return why ? -1 : 0;
}
