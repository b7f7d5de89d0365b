/* Wire encoding: fixed little-endian fields whatever the host, bounds
 * checks that reject short or foreign bytes, and the records built on it
 * (frame header, start-up record, collective header). */
#include <criterion/criterion.h>
#include <string.h>

#include "transport/bootstrap_value.h"
#include "transport/coll_internal.h"
#include "transport/tx_startup.h"
#include "transport/wire.h"

Test(wire, fields_are_little_endian)
{
    unsigned char buf[15] = {0};
    dg_wire_cursor_t c = dg_wire_cursor(buf, sizeof(buf));
    dg_wire_put_u8(&c, 0x01);
    dg_wire_put_u16(&c, 0x0302);
    dg_wire_put_u32(&c, 0x07060504u);
    dg_wire_put_u64(&c, 0x0f0e0d0c0b0a0908ull);
    cr_assert(!c.bad);
    cr_assert_eq(c.left, 0);
    for (int i = 0; i < 15; i++)
        cr_assert_eq(buf[i], i + 1, "byte %d", i);
    c = dg_wire_cursor(buf, sizeof(buf));
    cr_assert_eq(dg_wire_get_u8(&c), 0x01);
    cr_assert_eq(dg_wire_get_u16(&c), 0x0302);
    cr_assert_eq(dg_wire_get_u32(&c), 0x07060504u);
    cr_assert_eq(dg_wire_get_u64(&c), 0x0f0e0d0c0b0a0908ull);
}

Test(wire, overruns_mark_the_cursor_and_read_zeros)
{
    unsigned char buf[6] = {1, 2, 3, 4, 5, 6};
    dg_wire_cursor_t c = dg_wire_cursor(buf, sizeof(buf));
    cr_assert_eq(dg_wire_get_u32(&c), 0x04030201u);
    cr_assert_eq(dg_wire_get_u32(&c), 0, "a read past the end returns 0");
    cr_assert(c.bad);
    cr_assert_eq(dg_wire_get_u8(&c), 0, "a bad cursor stays bad");
    cr_assert_null(dg_wire_get_bytes(&c, 1));
    c = dg_wire_cursor(buf, 3);
    dg_wire_put_u32(&c, 0xffffffffu);
    cr_assert(c.bad);
    cr_assert_eq(buf[0], 1, "a write that does not fit writes nothing");
}

Test(wire, frame_round_trip_and_rejects)
{
    unsigned char buf[DG_WIRE_FRAME_LEN + 4];
    dg_wire_frame_encode(buf, &(dg_wire_frame_t){.src = 70000, .flags = 0});
    cr_assert_eq(buf[0], DG_WIRE_MAGIC & 0xff);
    cr_assert_eq(buf[1], DG_WIRE_MAGIC >> 8);
    cr_assert_eq(buf[2], DG_WIRE_VERSION);
    dg_wire_frame_t f;
    const char *why = "unset";
    cr_assert_eq(dg_wire_frame_decode(buf, sizeof(buf), &f, &why), 0);
    cr_assert_eq(f.src, 70000);
    cr_assert_null(why);
    cr_assert_eq(dg_wire_frame_decode(buf, DG_WIRE_FRAME_LEN - 1, &f, &why), -1);
    cr_assert(strstr(why, "shorter"), "%s", why);
    buf[2] = DG_WIRE_VERSION + 1;
    cr_assert_eq(dg_wire_frame_decode(buf, sizeof(buf), &f, &why), -1);
    cr_assert(strstr(why, "version"), "%s", why);
    buf[2] = DG_WIRE_VERSION;
    buf[0] ^= 0xff;
    cr_assert_eq(dg_wire_frame_decode(buf, sizeof(buf), &f, &why), -1);
    cr_assert(strstr(why, "magic"), "%s", why);
}

static dg_tx_record_t sample_record(void)
{
    static const unsigned char addr[] = {9, 8, 7, 6, 5};
    static const char inv[] = "inventory bytes";
    dg_tx_record_t r = {
        .build_id = 0x1122334455667788ull,
        .proc = {.pid = 4242, .starttime = 987654321ull},
        .hostname = "node-17",
        .address = addr,
        .address_len = sizeof(addr),
        .inventory = inv,
        .inventory_len = sizeof(inv),
    };
    return r;
}

Test(wire, startup_record_round_trip)
{
    dg_tx_record_t in = sample_record(), out;
    size_t len = dg_tx_record_size(&in);
    unsigned char *buf = malloc(len);
    dg_tx_record_encode(&in, buf);
    cr_assert_eq(dg_tx_record_decode(buf, len, &out), 0);
    cr_assert_eq(out.build_id, in.build_id);
    cr_assert_eq(out.proc.pid, 4242);
    cr_assert_eq(out.proc.starttime, 987654321ull);
    cr_assert_str_eq(out.hostname, "node-17");
    cr_assert_eq(out.address_len, in.address_len);
    cr_assert(!memcmp(out.address, in.address, in.address_len));
    cr_assert_eq(out.inventory_len, in.inventory_len);
    cr_assert(!memcmp(out.inventory, in.inventory, in.inventory_len));
    free(buf);
}

Test(wire, startup_record_rejects_damage)
{
    dg_tx_record_t in = sample_record(), out;
    size_t len = dg_tx_record_size(&in);
    unsigned char *buf = malloc(len + 1);
    dg_tx_record_encode(&in, buf);
    for (size_t cut = 0; cut < len; cut++)
        cr_assert_eq(dg_tx_record_decode(buf, cut, &out), -1, "accepted %zu of %zu bytes", cut, len);
    buf[len] = 0;
    cr_assert_eq(dg_tx_record_decode(buf, len + 1, &out), -1, "trailing bytes accepted");
    buf[0] ^= 1;
    cr_assert_eq(dg_tx_record_decode(buf, len, &out), -1, "wrong magic accepted");
    buf[0] ^= 1;
    /* The host name's terminating NUL is the last byte of its blob. */
    size_t nul = 4 + 8 + 4 + 8 + 4 + strlen(in.hostname);
    buf[nul] = 'x';
    cr_assert_eq(dg_tx_record_decode(buf, len, &out), -1, "unterminated host name accepted");
    /* Found by fuzzing: a NUL inside the name made strcmp see another one. */
    buf[nul] = '\0';
    buf[nul - 2] = '\0';
    cr_assert_eq(dg_tx_record_decode(buf, len, &out), -1, "host name with a NUL inside accepted");
    free(buf);
}

Test(wire, hello_round_trip_and_wrong_lengths)
{
    unsigned char buf[DG_TX_HELLO_LEN + 1] = {0};
    dg_tx_hello_encode(&(dg_proc_id_t){.pid = 77, .starttime = 1ull << 40}, buf);
    dg_proc_id_t out;
    cr_assert_eq(dg_tx_hello_decode(buf, DG_TX_HELLO_LEN, &out), 0);
    cr_assert_eq(out.pid, 77);
    cr_assert_eq(out.starttime, 1ull << 40);
    cr_assert_eq(dg_tx_hello_decode(buf, DG_TX_HELLO_LEN - 1, &out), -1);
    cr_assert_eq(dg_tx_hello_decode(buf, DG_TX_HELLO_LEN + 1, &out), -1);
}

Test(wire, boot_value_live_tombstone_foreign)
{
    const void *p;
    size_t n;
    const unsigned char live[] = {DG_BOOT_VALUE_LIVE, 'a', 'b'}, foreign[] = {7, 'a'};
    cr_assert_eq(dg_boot_value_decode(live, sizeof(live), &p, &n), 1);
    cr_assert_eq(n, 2);
    cr_assert_eq(p, live + 1);
    cr_assert_eq(dg_boot_value_decode(live, 0, &p, &n), 0, "an empty value is a tombstone");
    cr_assert_eq(dg_boot_value_decode(foreign, sizeof(foreign), &p, &n), -1);
}

Test(wire, allgather_result_rejects_bad_lengths)
{
    unsigned char buf[8 + 3 + 8] = {0};
    dg_wire_cursor_t c = dg_wire_cursor(buf, sizeof(buf));
    dg_wire_put_u64(&c, 3);
    dg_wire_put_bytes(&c, "abc", 3);
    dg_wire_put_u64(&c, 0);
    void *all = NULL;
    size_t lens[3]; /* the largest nranks asked below */
    cr_assert_eq(dg_coll_unpack_gathered(buf, sizeof(buf), 2, &all, lens), DAGGER_OK);
    cr_assert_eq(lens[0], 3);
    cr_assert_eq(lens[1], 0);
    cr_assert(!memcmp(all, "abc", 3));
    free(all);
    all = NULL;
    cr_assert_eq(dg_coll_unpack_gathered(buf, sizeof(buf), 1, &all, lens), DAGGER_ERR_PROTOCOL,
                 "bytes after the last part accepted");
    cr_assert_eq(dg_coll_unpack_gathered(buf, sizeof(buf), 3, &all, lens), DAGGER_ERR_PROTOCOL,
                 "a missing part accepted");
    buf[0] = 200; /* longer than what is left */
    cr_assert_eq(dg_coll_unpack_gathered(buf, sizeof(buf), 2, &all, lens), DAGGER_ERR_PROTOCOL);
    cr_assert_null(all);
}

Test(wire, collective_header_round_trip)
{
    dg_coll_hdr_t in = {.seq = 1ull << 40, .phase = DG_COLL_DOWN, .fail = 305,
                        .sig = {.kind = DG_COLL_BCAST, .op = 3, .type = 2, .root = 5, .size = 12345}};
    unsigned char buf[DG_COLL_HDR_LEN];
    dg_coll_hdr_encode(&in, buf);
    dg_coll_hdr_t out;
    cr_assert_eq(dg_coll_hdr_decode(buf, sizeof(buf), &out), 0);
    cr_assert_eq(out.seq, in.seq);
    cr_assert_eq(out.phase, in.phase);
    cr_assert_eq(out.fail, in.fail);
    cr_assert_eq(out.sig.kind, in.sig.kind);
    cr_assert_eq(out.sig.root, 5);
    cr_assert_eq(out.sig.size, 12345);
    cr_assert_eq(dg_coll_hdr_decode(buf, sizeof(buf) - 1, &out), -1);
    buf[8] = 7; /* no such phase */
    cr_assert_eq(dg_coll_hdr_decode(buf, sizeof(buf), &out), -1);
}
