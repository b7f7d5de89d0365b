/* Little-endian field encoding and the frame header (see wire.h). */
#include "transport/wire.h"

#include <string.h>

/* Reserves n bytes at the cursor: returns where they start, or NULL after
 * marking the cursor bad when they do not fit. */
static unsigned char *take(dg_wire_cursor_t *c, size_t n)
{
    if (c->bad || c->left < n) {
        c->bad = 1;
        return NULL;
    }
    unsigned char *at = c->p;
    c->p += n;
    c->left -= n;
    return at;
}

static void put_le(dg_wire_cursor_t *c, uint64_t v, size_t n)
{
    unsigned char *at = take(c, n);
    if (!at)
        return;
    for (size_t i = 0; i < n; i++)
        at[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(dg_wire_cursor_t *c, size_t n)
{
    const unsigned char *at = take(c, n);
    uint64_t v = 0;
    if (!at)
        return 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)at[i] << (8 * i);
    return v;
}

void dg_wire_put_u8(dg_wire_cursor_t *c, uint8_t v) { put_le(c, v, 1); }
void dg_wire_put_u16(dg_wire_cursor_t *c, uint16_t v) { put_le(c, v, 2); }
void dg_wire_put_u32(dg_wire_cursor_t *c, uint32_t v) { put_le(c, v, 4); }
void dg_wire_put_u64(dg_wire_cursor_t *c, uint64_t v) { put_le(c, v, 8); }

uint8_t dg_wire_get_u8(dg_wire_cursor_t *c) { return (uint8_t)get_le(c, 1); }
uint16_t dg_wire_get_u16(dg_wire_cursor_t *c) { return (uint16_t)get_le(c, 2); }
uint32_t dg_wire_get_u32(dg_wire_cursor_t *c) { return (uint32_t)get_le(c, 4); }
uint64_t dg_wire_get_u64(dg_wire_cursor_t *c) { return get_le(c, 8); }

void dg_wire_put_bytes(dg_wire_cursor_t *c, const void *src, size_t len)
{
    unsigned char *at = take(c, len);
    if (at && len)
        memcpy(at, src, len);
}

const void *dg_wire_get_bytes(dg_wire_cursor_t *c, size_t len)
{
    return take(c, len);
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
