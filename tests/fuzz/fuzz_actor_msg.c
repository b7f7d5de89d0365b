/* Actor message envelopes from another rank (actors/msg.c: the 40-byte
 * header and its payload, rebuilt by transport/chan_actor.c), and the
 * error-reply payload a future reads from one (actors/future.c). */
#include <string.h>

#include "actors/msg.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dg_msg_t *msg = NULL;
    dagger_status_t st = dg_msg_from_wire(data, size, &msg);
    DG_FUZZ_CHECK((st == DAGGER_OK) == (msg != NULL));
    if (!msg)
        return 0;
    DG_FUZZ_CHECK(dg_msg_wire_check(&msg->hdr, size) == DAGGER_OK);
    DG_FUZZ_CHECK(dg_msg_wire_size(msg) == size && !memcmp(dg_msg_wire(msg), data, size));
    /* What a handler or a future reads: every payload byte. */
    unsigned sum = 0;
    for (uint32_t i = 0; i < msg->hdr.size; i++)
        sum += msg->payload[i];
    (void)sum;
    dg_msg_free(msg);
    return 0;
}

void dg_fuzz_seeds(dg_fuzz_emit_fn emit)
{
    dagger_actor_addr_t from = {1, 7}, to = {0, 3};
    const char text[] = "ping";
    dg_msg_t *m = dg_msg_make(from, to, 0x1234abcdu, DG_MSG_REQUEST, 42, text, sizeof(text));
    emit("request_with_payload", dg_msg_wire(m), dg_msg_wire_size(m));
    dg_msg_free(m);
    m = dg_msg_make(from, to, 0x99u, 0, 0, NULL, 0);
    emit("plain_empty", dg_msg_wire(m), dg_msg_wire_size(m));
    dg_msg_free(m);
    unsigned char err[sizeof(dg_msg_error_t) + 8];
    dg_msg_error_t *e = (dg_msg_error_t *)err;
    e->status = DAGGER_ERR_ACTOR_STOPPED;
    memcpy(e->detail, "stopped", 8);
    m = dg_msg_make(to, (dagger_actor_addr_t){1, DG_ACT_ID_FUTURE}, 0, DG_MSG_REPLY | DG_MSG_ERROR,
                    42, err, sizeof(err));
    emit("error_reply", dg_msg_wire(m), dg_msg_wire_size(m));
    dg_msg_free(m);
}
