/* The move_rewrap header in front of every transfer of a view
 * (core/exec/rewrap.c, read by xfer.c's data channel handler, which then
 * compares it with the receive it planned). */
#include <string.h>

#include "core/exec/rewrap.h"
#include "fuzz.h"

static void planned(dg_rewrap_hdr_t *h)
{
    static const dg_plan_span_t spans[] = {{0, 4}, {16, 20}, {32, 40}};
    dg_rewrap_describe(h, (7ull << 32) | 2, 11, 3, 8, spans, 3);
}

/* Whether a whole header's piece fields agree, read from the raw bytes
 * (little-endian; bytes at 32, the piece count at 64 and size at 68): a
 * count goes with a size, and the count is ceil(bytes / size). */
static int pieces_agree(const uint8_t *d)
{
    uint64_t bytes;
    uint32_t pieces, piece;
    memcpy(&bytes, d + 32, sizeof(bytes));
    memcpy(&pieces, d + 64, sizeof(pieces));
    memcpy(&piece, d + 68, sizeof(piece));
    if (!pieces != !piece)
        return 0;
    return !pieces || bytes / piece + (bytes % piece != 0) == pieces;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_rewrap_hdr_t h;
    if (dg_rewrap_decode(data, size, &h)) {
        /* Refused only when short or when its piece fields disagree. */
        DG_FUZZ_CHECK(size < DG_REWRAP_HDR_LEN || !pieces_agree(data));
        return 0;
    }
    DG_FUZZ_CHECK(size >= DG_REWRAP_HDR_LEN && pieces_agree(data));
    unsigned char back[DG_REWRAP_HDR_LEN];
    dg_rewrap_encode(&h, back);
    DG_FUZZ_CHECK(!memcmp(back, data, sizeof(back)));
    dg_rewrap_hdr_t mine;
    planned(&mine);
    char why[512];
    why[0] = '\0';
    if (!dg_rewrap_match(&mine, &h, why, sizeof(why)))
        DG_FUZZ_CHECK(strlen(why) > 0 && strlen(why) < sizeof(why));
    return 0;
}

void dg_fuzz_seeds(dg_fuzz_emit_fn emit)
{
    unsigned char buf[DG_REWRAP_HDR_LEN];
    dg_rewrap_hdr_t h;
    planned(&h);
    dg_rewrap_encode(&h, buf);
    emit("planned_three_spans", buf, sizeof(buf));
    dg_rewrap_describe(&h, 1, 1, 0, 4, NULL, 0);
    dg_rewrap_encode(&h, buf);
    emit("no_spans", buf, sizeof(buf));
}
