/* The channel header of every collective message (transport/coll_wire.c,
 * read by chan_coll.c's handler). */
#include <string.h>

#include "fuzz.h"
#include "transport/coll_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_coll_hdr_t h;
    if (dg_coll_hdr_decode(data, size, &h))
        return 0;
    DG_FUZZ_CHECK(size == DG_COLL_HDR_LEN && h.phase <= DG_COLL_ANSWER);
    unsigned char back[DG_COLL_HDR_LEN];
    dg_coll_hdr_encode(&h, back);
    DG_FUZZ_CHECK(!memcmp(back, data, sizeof(back)));
    return 0;
}

void dg_fuzz_seeds(dg_fuzz_emit_fn emit)
{
    unsigned char buf[DG_COLL_HDR_LEN];
    dg_coll_hdr_t up = {.seq = 5, .phase = DG_COLL_UP,
                        .sig = {.kind = DG_COLL_ALLREDUCE, .op = 1, .type = 2, .size = 16,
                                .regions = 7, .plan = 0x9e3779b97f4a7c15ull}};
    dg_coll_hdr_encode(&up, buf);
    emit("allreduce_up", buf, sizeof(buf));
    dg_coll_hdr_t down = {.seq = 9, .phase = DG_COLL_DOWN, .fail = 22,
                          .sig = {.kind = DG_COLL_BCAST, .root = 1, .size = 100}};
    dg_coll_hdr_encode(&down, buf);
    emit("bcast_down_failed", buf, sizeof(buf));
    dg_coll_hdr_t flat = {.seq = 12, .phase = DG_COLL_FLAT,
                          .sig = {.kind = DG_COLL_ALLGATHER}};
    dg_coll_hdr_encode(&flat, buf);
    emit("allgather_flat", buf, sizeof(buf));
    dg_coll_hdr_t final = {.seq = 3, .phase = DG_COLL_UP,
                           .sig = {.kind = DG_COLL_BARRIER, .op = DG_COLL_OP_FINAL, .regions = 2}};
    dg_coll_hdr_encode(&final, buf);
    emit("finalize_up", buf, sizeof(buf));
    dg_coll_hdr_t probe = {.seq = 4, .phase = DG_COLL_PROBE};
    dg_coll_hdr_encode(&probe, buf);
    emit("probe", buf, sizeof(buf));
    dg_coll_hdr_t answer = {.seq = 4, .phase = DG_COLL_ANSWER, .sig = {.size = 17}};
    dg_coll_hdr_encode(&answer, buf);
    emit("answer", buf, sizeof(buf));
}
