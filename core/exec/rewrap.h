/* The move_rewrap header: what a transfer of a view carries in front of its
 * children (the bytes of the view's spans, packed in span order).
 *
 *   u64 tag          (region << 32) | transfer index: names the RECV it is for
 *   u64 chunk        chunk id
 *   u64 version      chunk version the bytes belong to
 *   u32 elsize       bytes per element (the dtype's size)
 *   u32 nspans       children: contiguous element ranges of the chunk's storage
 *   u64 bytes        total payload bytes
 *   u64 span_hash    hash of every span's (begin, end)
 *   u64 first, last  first element and one past the last (for messages)
 *   u32 pieces       0: the children follow in this message; n > 0: they
 *                    follow in n piece messages (dagger.mem.piece, below)
 *   u32 piece        bytes per piece (the last may be shorter); 0 when whole
 *
 * Both ranks planned the same transfer, so the receiver rebuilds the object
 * from its own RECV op (buffer, spans): the header only lets it verify that
 * sender and receiver agree, and say how they differ when they do not. */
#ifndef DG_EXEC_REWRAP_H
#define DG_EXEC_REWRAP_H

#include <stddef.h>
#include <stdint.h>

#include "core/plan/spans.h"

#define DG_REWRAP_HDR_LEN 72

typedef struct dg_rewrap_hdr {
    uint64_t tag, chunk, version;
    uint32_t elsize, nspans;
    uint64_t bytes, span_hash, first, last;
    uint32_t pieces, piece;
} dg_rewrap_hdr_t;

/* A piece of a transfer sent in pieces (a pipelined host-staged transfer of
 * device memory, docs/devices.md): the children's packed bytes
 * [offset, offset + bytes) of the transfer `tag`, whose header (sent once,
 * with pieces = count) the receiver verifies as usual.
 *
 *   u64 tag, u32 index, u32 count, u64 offset, u64 bytes
 */
#define DG_REWRAP_PIECE_LEN 32

typedef struct dg_rewrap_piece {
    uint64_t tag;
    uint32_t index, count;
    uint64_t offset, bytes;
} dg_rewrap_piece_t;

/* The header of a transfer of these spans. */
void dg_rewrap_describe(dg_rewrap_hdr_t *h, uint64_t tag, uint64_t chunk, uint64_t version,
                        uint32_t elsize, const dg_plan_span_t *spans, uint32_t nspans);
void dg_rewrap_encode(const dg_rewrap_hdr_t *h, void *buf);
/* 0, or -1 when len is too short or pieces and piece do not cover bytes
 * (pieces = ceil(bytes / piece); both 0 for a whole transfer). */
int dg_rewrap_decode(const void *buf, size_t len, dg_rewrap_hdr_t *h);
/* 1 when the two describe the same transfer; otherwise writes how they
 * differ to why. */
int dg_rewrap_match(const dg_rewrap_hdr_t *mine, const dg_rewrap_hdr_t *theirs, char *why,
                    size_t whylen);

void dg_rewrap_piece_encode(const dg_rewrap_piece_t *p, void *buf);
/* 0, or -1 when len is too short or the piece cannot be one (no pieces,
 * index not below count, empty, or offset + bytes past 2^63). */
int dg_rewrap_piece_decode(const void *buf, size_t len, dg_rewrap_piece_t *p);
/* 1 when p is piece p->index of transfer h (same tag and piece count, and
 * exactly that piece's bytes: [index * piece, min(+ piece, bytes)));
 * otherwise writes why, naming the tag and the view. */
int dg_rewrap_piece_fits(const dg_rewrap_hdr_t *h, const dg_rewrap_piece_t *p, char *why,
                         size_t whylen);

#endif
