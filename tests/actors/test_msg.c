/* The message layout the transport relies on, and its wire round trip. */
#include <criterion/criterion.h>
#include <string.h>

#include "actors/msg.h"

Test(msg, layout_is_header_then_aligned_payload)
{
    cr_assert_eq(sizeof(dg_msg_hdr_t), 40);
    cr_assert_eq(offsetof(dg_msg_hdr_t, from), 0);
    cr_assert_eq(offsetof(dg_msg_hdr_t, to), 8);
    cr_assert_eq(offsetof(dg_msg_hdr_t, type), 16);
    cr_assert_eq(offsetof(dg_msg_hdr_t, flags), 20);
    cr_assert_eq(offsetof(dg_msg_hdr_t, corr), 24);
    cr_assert_eq(offsetof(dg_msg_hdr_t, size), 32);
    dg_msg_t *m = dg_msg_alloc(24);
    cr_assert_not_null(m);
    cr_assert_eq((uintptr_t)m->payload % 16, 0);
    cr_assert_eq((char *)m->payload - (char *)dg_msg_wire(m), 40, "payload right after the header");
    cr_assert_eq(dg_msg_wire_size(m), 64);
    dg_msg_free(m);
}

Test(msg, wire_round_trip_keeps_every_field)
{
    dagger_actor_addr_t from = {3, 77}, to = {1, 9};
    const char text[] = "payload bytes";
    dg_msg_t *m = dg_msg_make(from, to, 0xabcdef01u, DG_MSG_REQUEST, 1234567890123ull, text,
                              sizeof(text));
    cr_assert_not_null(m);
    unsigned char wire[128];
    size_t len = dg_msg_wire_size(m);
    memcpy(wire, dg_msg_wire(m), len); /* what the transport ships */
    dg_msg_t *back;
    cr_assert_eq(dg_msg_from_wire(wire, len, &back), DAGGER_OK);
    cr_assert(dagger_actor_addr_eq(back->hdr.from, from));
    cr_assert(dagger_actor_addr_eq(back->hdr.to, to));
    cr_assert_eq(back->hdr.type, 0xabcdef01u);
    cr_assert_eq(back->hdr.flags, DG_MSG_REQUEST);
    cr_assert_eq(back->hdr.corr, 1234567890123ull);
    cr_assert_eq(back->hdr.size, sizeof(text));
    cr_assert_str_eq((const char *)back->payload, text);
    dg_msg_free(back);
    dg_msg_free(m);
}

Test(msg, malformed_wire_bytes_are_protocol_errors)
{
    dg_msg_t *m = dg_msg_make((dagger_actor_addr_t){0, 1}, (dagger_actor_addr_t){0, 2}, 5, 0, 0,
                              "abcd", 4);
    dg_msg_t *back = (dg_msg_t *)1;
    cr_assert_eq(dg_msg_from_wire(dg_msg_wire(m), 20, &back), DAGGER_ERR_PROTOCOL);
    cr_assert_null(back);
    cr_assert_eq(dg_msg_from_wire(dg_msg_wire(m), dg_msg_wire_size(m) - 1, &back), DAGGER_ERR_PROTOCOL);
    cr_assert(strstr(dagger_error_detail(), "announces 4 payload bytes"), "%s", dagger_error_detail());
    cr_assert_eq(dg_msg_from_wire(NULL, 64, &back), DAGGER_ERR_PROTOCOL);
    dg_msg_free(m);
}

/* The transport's rendezvous path receives the header into a block it
 * sized from the announced length: the header's own size must agree. */
Test(msg, wire_check_rejects_a_header_that_disagrees_with_the_bytes)
{
    dg_msg_hdr_t h = {.size = 8};
    cr_assert_eq(dg_msg_wire_check(&h, sizeof(h) + 8), DAGGER_OK);
    cr_assert_eq(dg_msg_wire_check(&h, sizeof(h) + 7), DAGGER_ERR_PROTOCOL);
    cr_assert_eq(dg_msg_wire_check(&h, sizeof(h) + 4096), DAGGER_ERR_PROTOCOL);
    cr_assert(strstr(dagger_error_detail(), "announces 8 payload bytes"), "%s", dagger_error_detail());
    cr_assert_eq(dg_msg_wire_check(&h, 10), DAGGER_ERR_PROTOCOL);
    cr_assert_eq(dg_msg_wire_check(NULL, 64), DAGGER_ERR_PROTOCOL);
}
