/* Byte-level encoding of everything the transport puts on the wire: fixed
 * little-endian integers written through a bounds-checked cursor, and the
 * frame header that starts every active-message header.
 *
 * Ranks may be built by different compilers; structs are never sent as-is,
 * every field is written and read explicitly. */
#ifndef DG_WIRE_H
#define DG_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A cursor over a byte buffer. Writing or reading past the end sets `bad`
 * and turns every later call into a no-op that returns zeros, so a caller
 * encodes or decodes a whole record and checks `bad` once at the end. */
typedef struct dg_wire_cursor {
    unsigned char *p;   /* next byte (const for readers; never written through) */
    size_t left;        /* bytes left after p */
    int bad;            /* 1 once an access did not fit */
} dg_wire_cursor_t;

static inline dg_wire_cursor_t dg_wire_cursor(const void *buf, size_t len)
{
    dg_wire_cursor_t c = {(unsigned char *)(uintptr_t)buf, len, 0};
    return c;
}

/* Reserves n bytes at the cursor: returns where they start, or NULL after
 * marking the cursor bad when they do not fit. */
static inline unsigned char *dg_wire_take(dg_wire_cursor_t *c, size_t n)
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

/* On a little-endian host the low n bytes of v are already in wire order:
 * one unaligned load or store (n is a constant once inlined) instead of a
 * loop over the bytes, which compilers kept as a loop (a rewrap header's
 * eleven fields took 430 instructions to encode and 600 to decode). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define DG_WIRE_HOST_LE 1
#else
#define DG_WIRE_HOST_LE 0
#endif

static inline void dg_wire_put_le(dg_wire_cursor_t *c, uint64_t v, size_t n)
{
    unsigned char *at = dg_wire_take(c, n);
    if (!at)
        return;
    if (DG_WIRE_HOST_LE) {
        memcpy(at, &v, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        at[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t dg_wire_get_le(dg_wire_cursor_t *c, size_t n)
{
    const unsigned char *at = dg_wire_take(c, n);
    uint64_t v = 0;
    if (!at)
        return 0;
    if (DG_WIRE_HOST_LE) {
        memcpy(&v, at, n);
        return v;
    }
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)at[i] << (8 * i);
    return v;
}

static inline void dg_wire_put_u8(dg_wire_cursor_t *c, uint8_t v) { dg_wire_put_le(c, v, 1); }
static inline void dg_wire_put_u16(dg_wire_cursor_t *c, uint16_t v) { dg_wire_put_le(c, v, 2); }
static inline void dg_wire_put_u32(dg_wire_cursor_t *c, uint32_t v) { dg_wire_put_le(c, v, 4); }
static inline void dg_wire_put_u64(dg_wire_cursor_t *c, uint64_t v) { dg_wire_put_le(c, v, 8); }
static inline uint8_t dg_wire_get_u8(dg_wire_cursor_t *c) { return (uint8_t)dg_wire_get_le(c, 1); }
static inline uint16_t dg_wire_get_u16(dg_wire_cursor_t *c) { return (uint16_t)dg_wire_get_le(c, 2); }
static inline uint32_t dg_wire_get_u32(dg_wire_cursor_t *c) { return (uint32_t)dg_wire_get_le(c, 4); }
static inline uint64_t dg_wire_get_u64(dg_wire_cursor_t *c) { return dg_wire_get_le(c, 8); }

void dg_wire_put_bytes(dg_wire_cursor_t *c, const void *src, size_t len);
/* Returns a pointer to the next len bytes inside the buffer, or NULL (and
 * sets bad) when fewer are left. */
const void *dg_wire_get_bytes(dg_wire_cursor_t *c, size_t len);

/* The frame header: the first DG_WIRE_FRAME_LEN bytes of every active
 * message header, followed by the channel's own header bytes.
 *   u16 magic   DG_WIRE_MAGIC: rejects traffic from something that is not us
 *   u8  version DG_WIRE_VERSION: rejects ranks speaking another revision
 *   u8  flags   reserved, 0
 *   u32 src     sending rank */
#define DG_WIRE_MAGIC 0xda66u
#define DG_WIRE_VERSION 2u /* 2: a rewrap header's span hash mixes words (dg_hash_mix64) */
#define DG_WIRE_FRAME_LEN 8u

typedef struct dg_wire_frame {
    uint32_t src;
    uint8_t flags;
} dg_wire_frame_t;

/* Writes the frame header into buf (DG_WIRE_FRAME_LEN bytes). */
void dg_wire_frame_encode(void *buf, const dg_wire_frame_t *f);

/* Parses a frame header at the start of an active-message header of len
 * bytes. Returns 0 and fills f, or -1 when the bytes are too short, carry
 * another magic or another version; why is then written to reason. */
int dg_wire_frame_decode(const void *buf, size_t len, dg_wire_frame_t *f, const char **reason);

#endif
