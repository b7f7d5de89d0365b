/* The move_rewrap header (core/exec/rewrap.h): what a transfer carries in
 * front of its bytes, and the error a receiver gives when it does not match
 * the transfer it planned. */
#include <criterion/criterion.h>
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
    for (size_t len = 0; len < DG_REWRAP_HDR_LEN; len += 7)
        cr_assert_eq(dg_rewrap_decode(buf, len, &back), -1, "%zu bytes", len);
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
