/* The move_rewrap header (core/exec/rewrap.h): what a transfer carries in
 * front of its bytes, and the error a receiver gives when it does not match
 * the transfer it planned: every truncation refused, every corrupted byte of
 * a compared field caught, garbage never a crash. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "core/exec/rewrap.h"

static const dg_plan_span_t spans[3] = {{0, 4}, {8, 12}, {16, 20}};

static dg_rewrap_hdr_t planned(void)
{
    dg_rewrap_hdr_t h;
    dg_rewrap_describe(&h, (7ull << 32) | 3, 42, 5, 8, spans, 3);
    return h;
}

Test(rewrap, describe_counts_bytes_and_bounds)
{
    dg_rewrap_hdr_t h = planned();
    cr_assert_eq(h.tag, (7ull << 32) | 3);
    cr_assert_eq(h.chunk, 42);
    cr_assert_eq(h.version, 5);
    cr_assert_eq(h.nspans, 3);
    cr_assert_eq(h.bytes, 12 * 8, "12 elements of 8 bytes");
    cr_assert_eq(h.first, 0);
    cr_assert_eq(h.last, 20);
}

Test(rewrap, encode_decode_round_trip)
{
    dg_rewrap_hdr_t h = planned(), back;
    unsigned char buf[DG_REWRAP_HDR_LEN];
    memset(buf, 0xee, sizeof(buf));
    dg_rewrap_encode(&h, buf);
    cr_assert_eq(dg_rewrap_decode(buf, sizeof(buf), &back), 0);
    cr_assert(memcmp(&h, &back, sizeof(h)) == 0, "every field survives the wire");
    /* little-endian, fixed positions: the tag's low word first */
    cr_assert_eq(buf[0], 3);
    cr_assert_eq(buf[4], 7);
    char why[400];
    cr_assert_eq(dg_rewrap_match(&h, &back, why, sizeof(why)), 1);
}

Test(rewrap, a_short_header_is_refused)
{
    dg_rewrap_hdr_t h = planned(), back;
    unsigned char buf[DG_REWRAP_HDR_LEN];
    dg_rewrap_encode(&h, buf);
    for (size_t len = 0; len < DG_REWRAP_HDR_LEN; len++)
        cr_assert_eq(dg_rewrap_decode(buf, len, &back), -1, "%zu bytes", len);
    cr_assert_eq(dg_rewrap_decode(NULL, 0, &back), -1, "nothing at all is refused too");
    /* a longer message (the transport's header) decodes its first 64 bytes */
    unsigned char longer[DG_REWRAP_HDR_LEN + 8] = {0};
    dg_rewrap_encode(&h, longer);
    cr_assert_eq(dg_rewrap_decode(longer, sizeof(longer), &back), 0);
    cr_assert_eq(back.span_hash, h.span_hash);
}

Test(rewrap, a_mismatch_names_the_tag_and_both_views)
{
    dg_rewrap_hdr_t mine = planned(), theirs;
    static const dg_plan_span_t other[2] = {{0, 4}, {8, 16}};
    dg_rewrap_describe(&theirs, mine.tag, 42, 6, 8, other, 2);
    char why[400];
    cr_assert_eq(dg_rewrap_match(&mine, &theirs, why, sizeof(why)), 0);
    cr_assert(strstr(why, "transfer tag 700000003"), "%s", why);
    cr_assert(strstr(why, "this rank expects chunk 42 v5, 3 spans [0, 20) of 8-byte elements, "
                          "96 bytes"), "%s", why);
    cr_assert(strstr(why, "the sender sent chunk 42 v6, 2 spans [0, 16) of 8-byte elements, "
                          "96 bytes"), "%s", why);
    cr_assert(strstr(why, "span lists differ"), "%s", why);
    /* Same bytes and bounds, spans moved: still a mismatch (the hash sees it). */
    static const dg_plan_span_t moved[3] = {{0, 4}, {9, 13}, {16, 20}};
    dg_rewrap_describe(&theirs, mine.tag, 42, 5, 8, moved, 3);
    cr_assert_eq(dg_rewrap_match(&mine, &theirs, why, sizeof(why)), 0);
    cr_assert(strstr(why, "span lists differ"), "%s", why);
}

/* A flipped bit in any compared field makes the receiver refuse the data,
 * and the message says what each side has. first and last only serve the
 * message (span_hash covers them). */
Test(rewrap, a_corrupted_header_does_not_match)
{
    dg_rewrap_hdr_t h = planned();
    unsigned char good[DG_REWRAP_HDR_LEN];
    dg_rewrap_encode(&h, good);
    for (size_t byte = 0; byte < 48; byte++)
        for (int bit = 0; bit < 8; bit += 3) {
            unsigned char bad[DG_REWRAP_HDR_LEN];
            memcpy(bad, good, sizeof(bad));
            bad[byte] ^= (unsigned char)(1u << bit);
            dg_rewrap_hdr_t theirs;
            cr_assert_eq(dg_rewrap_decode(bad, sizeof(bad), &theirs), 0);
            char why[400] = "";
            cr_assert_eq(dg_rewrap_match(&h, &theirs, why, sizeof(why)), 0,
                         "byte %zu bit %d flipped and the header still matched", byte, bit);
            cr_assert(strstr(why, "this rank expects chunk 42 v5"), "%s", why);
        }
    char tiny[4];
    dg_rewrap_hdr_t other = h;
    other.version++;
    cr_assert_eq(dg_rewrap_match(&h, &other, tiny, sizeof(tiny)), 0);
    cr_assert_eq(strlen(tiny), 3, "the message is cut to the caller's buffer");
}

Test(rewrap, garbage_never_crashes)
{
    uint64_t x = 88172645463325252ull;
    dg_rewrap_hdr_t h = planned();
    for (int i = 0; i < 20000; i++) {
        unsigned char buf[DG_REWRAP_HDR_LEN];
        for (size_t b = 0; b < sizeof(buf); b++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf[b] = (unsigned char)x;
        }
        dg_rewrap_hdr_t theirs;
        if (dg_rewrap_decode(buf, (size_t)(x % (DG_REWRAP_HDR_LEN + 1)), &theirs))
            continue;
        char why[400];
        cr_assert_eq(dg_rewrap_match(&h, &theirs, why, sizeof(why)), 0);
        cr_assert_lt(strlen(why), sizeof(why));
    }
}

/* ---- transfers in pieces: the header announces them (pieces, piece),
 * each piece carries its own small header. */

static dg_rewrap_hdr_t in_pieces(void) /* 96 bytes in pieces of 40: 40 + 40 + 16 */
{
    dg_rewrap_hdr_t h = planned();
    h.pieces = 3;
    h.piece = 40;
    return h;
}

Test(rewrap, a_header_in_pieces_round_trips_and_must_cover_its_bytes)
{
    dg_rewrap_hdr_t h = in_pieces(), back;
    unsigned char buf[DG_REWRAP_HDR_LEN];
    dg_rewrap_encode(&h, buf);
    cr_assert_eq(dg_rewrap_decode(buf, sizeof(buf), &back), 0);
    cr_assert_eq(back.pieces, 3);
    cr_assert_eq(back.piece, 40);
    char why[400];
    dg_rewrap_hdr_t whole = planned();
    cr_assert_eq(dg_rewrap_match(&whole, &back, why, sizeof(why)), 1,
                 "pieces are how the bytes travel, not what they are");
    const struct {
        uint32_t pieces, piece;
    } bad[] = {{2, 40}, {4, 40}, {3, 0}, {0, 40}, {1, 95}, {UINT32_MAX, 1}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        h.pieces = bad[i].pieces;
        h.piece = bad[i].piece;
        dg_rewrap_encode(&h, buf);
        cr_assert_eq(dg_rewrap_decode(buf, sizeof(buf), &back), -1,
                     "%u pieces of %u bytes cannot carry 96", bad[i].pieces, bad[i].piece);
    }
    h.pieces = 1;
    h.piece = 96;
    dg_rewrap_encode(&h, buf);
    cr_assert_eq(dg_rewrap_decode(buf, sizeof(buf), &back), 0, "one piece of all of it");
}

Test(rewrap, a_piece_round_trips_and_every_truncation_is_refused)
{
    dg_rewrap_piece_t p = {(7ull << 32) | 3, 2, 3, 80, 16}, back;
    unsigned char buf[DG_REWRAP_PIECE_LEN];
    dg_rewrap_piece_encode(&p, buf);
    cr_assert_eq(dg_rewrap_piece_decode(buf, sizeof(buf), &back), 0);
    cr_assert_eq(memcmp(&p, &back, sizeof(p)), 0);
    for (size_t len = 0; len < sizeof(buf); len++)
        cr_assert_eq(dg_rewrap_piece_decode(buf, len, &back), -1, "%zu bytes", len);
    const dg_rewrap_piece_t bad[] = {
        {1, 3, 3, 0, 8},              /* index not below count */
        {1, 0, 0, 0, 8},              /* no pieces */
        {1, 0, 2, 0, 0},              /* empty */
        {1, 0, 2, 1ull << 63, 8},     /* offset past 2^63 */
        {1, 0, 2, 8, UINT64_MAX - 4}, /* offset + bytes past 2^63 */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        dg_rewrap_piece_encode(&bad[i], buf);
        cr_assert_eq(dg_rewrap_piece_decode(buf, sizeof(buf), &back), -1, "case %zu", i);
    }
}

/* Every piece of the announced layout fits; any other offset, length,
 * count or tag does not, and the message names the tag and the view. */
Test(rewrap, only_the_announced_pieces_fit)
{
    dg_rewrap_hdr_t h = in_pieces();
    char why[400];
    for (uint32_t i = 0; i < 3; i++) {
        dg_rewrap_piece_t p = {h.tag, i, 3, i * 40ull, i < 2 ? 40 : 16};
        cr_assert_eq(dg_rewrap_piece_fits(&h, &p, why, sizeof(why)), 1, "piece %u", i);
    }
    const dg_rewrap_piece_t bad[] = {
        {(7ull << 32) | 3, 2, 3, 80, 8},  /* short */
        {(7ull << 32) | 3, 2, 3, 72, 24}, /* moved */
        {(7ull << 32) | 3, 1, 3, 80, 16}, /* another index */
        {(7ull << 32) | 3, 2, 4, 80, 16}, /* another count */
        {(7ull << 32) | 4, 2, 3, 80, 16}, /* another transfer */
        {(7ull << 32) | 3, 3, 3, 120, 8}, /* past the last */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why[0] = '\0';
        cr_assert_eq(dg_rewrap_piece_fits(&h, &bad[i], why, sizeof(why)), 0, "case %zu", i);
        cr_assert(strstr(why, "transfer tag 700000003 (chunk 42 v5, 3 spans [0, 20), 96 bytes "
                              "in 3 pieces)"), "%s", why);
    }
}

/* A flipped bit anywhere in a piece's header is refused by the decoder or
 * makes it another piece than the one announced. */
Test(rewrap, a_corrupted_piece_does_not_fit)
{
    dg_rewrap_hdr_t h = in_pieces();
    dg_rewrap_piece_t p = {h.tag, 1, 3, 40, 40};
    unsigned char good[DG_REWRAP_PIECE_LEN];
    dg_rewrap_piece_encode(&p, good);
    for (size_t byte = 0; byte < sizeof(good); byte++)
        for (int bit = 0; bit < 8; bit++) {
            unsigned char bad[DG_REWRAP_PIECE_LEN];
            memcpy(bad, good, sizeof(bad));
            bad[byte] ^= (unsigned char)(1u << bit);
            dg_rewrap_piece_t theirs;
            char why[400];
            if (dg_rewrap_piece_decode(bad, sizeof(bad), &theirs) == 0)
                cr_assert_eq(dg_rewrap_piece_fits(&h, &theirs, why, sizeof(why)), 0,
                             "byte %zu bit %d flipped and the piece still fit", byte, bit);
        }
}
