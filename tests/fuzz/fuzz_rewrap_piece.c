/* The header of a piece of a transfer sent in pieces (core/exec/rewrap.c
 * dg_rewrap_piece_decode, read by xfer.c's data channel handler; then
 * dg_rewrap_piece_fits against the announced transfer). */
#include <string.h>

#include "core/exec/rewrap.h"
#include "fuzz.h"

/* 96 bytes announced in 3 pieces of 40. */
static void announced(dg_rewrap_hdr_t *h)
{
    static const dg_plan_span_t spans[] = {{0, 4}, {8, 12}, {16, 20}};
    dg_rewrap_describe(h, (7ull << 32) | 2, 11, 3, 8, spans, 3);
    h->pieces = 3;
    h->piece = 40;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_rewrap_piece_t p;
    if (dg_rewrap_piece_decode(data, size, &p))
        return 0;
    DG_FUZZ_CHECK(size >= DG_REWRAP_PIECE_LEN);
    DG_FUZZ_CHECK(p.count > 0 && p.index < p.count && p.bytes > 0);
    DG_FUZZ_CHECK(p.offset < (1ull << 63) && p.bytes <= (1ull << 63) - p.offset);
    unsigned char back[DG_REWRAP_PIECE_LEN];
    dg_rewrap_piece_encode(&p, back);
    DG_FUZZ_CHECK(!memcmp(back, data, sizeof(back)));
    dg_rewrap_hdr_t h;
    announced(&h);
    char why[512];
    why[0] = '\0';
    if (dg_rewrap_piece_fits(&h, &p, why, sizeof(why)))
        DG_FUZZ_CHECK(p.offset + p.bytes <= h.bytes && p.offset == (uint64_t)p.index * h.piece);
    else
        DG_FUZZ_CHECK(strlen(why) > 0 && strlen(why) < sizeof(why));
    return 0;
}

void dg_fuzz_seeds(dg_fuzz_emit_fn emit)
{
    dg_rewrap_hdr_t h;
    announced(&h);
    unsigned char buf[DG_REWRAP_PIECE_LEN];
    dg_rewrap_piece_t p = {h.tag, 0, 3, 0, 40};
    dg_rewrap_piece_encode(&p, buf);
    emit("first_piece", buf, sizeof(buf));
    p = (dg_rewrap_piece_t){h.tag, 2, 3, 80, 16};
    dg_rewrap_piece_encode(&p, buf);
    emit("last_piece_short", buf, sizeof(buf));
    p = (dg_rewrap_piece_t){h.tag, 1, 3, 44, 40};
    dg_rewrap_piece_encode(&p, buf);
    emit("moved_piece", buf, sizeof(buf));
}
