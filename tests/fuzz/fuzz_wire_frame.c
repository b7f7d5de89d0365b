/* The frame header at the start of every active-message header
 * (transport/wire.c, read by tx_recv.c for each arriving message). */
#include <string.h>

#include "fuzz.h"
#include "transport/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_wire_frame_t f;
    const char *why = "unset";
    int rc = dg_wire_frame_decode(data, size, &f, &why);
    DG_FUZZ_CHECK(rc == 0 ? why == NULL : why != NULL && strlen(why) > 0);
    if (rc == 0) { /* a decoded frame encodes back to the same bytes */
        unsigned char back[DG_WIRE_FRAME_LEN];
        dg_wire_frame_encode(back, &f);
        DG_FUZZ_CHECK(size >= DG_WIRE_FRAME_LEN && !memcmp(back, data, DG_WIRE_FRAME_LEN));
    }
    return 0;
}

void dg_fuzz_seeds(dg_fuzz_emit_fn emit)
{
    unsigned char buf[DG_WIRE_FRAME_LEN + 16] = {0};
    dg_wire_frame_encode(buf, &(dg_wire_frame_t){.src = 3});
    emit("frame_rank3", buf, DG_WIRE_FRAME_LEN);
    dg_wire_frame_encode(buf, &(dg_wire_frame_t){.src = 0, .flags = 0});
    emit("frame_rank0_with_channel_header", buf, sizeof(buf));
}
