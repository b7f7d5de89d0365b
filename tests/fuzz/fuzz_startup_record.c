/* A rank's start-up record as another rank reads it from PMIx: the
 * published value (transport/bootstrap_value.c), then the record inside it
 * (transport/tx_record.c), whose host name tx_startup.c compares and whose
 * inventory it prints. */
#include <string.h>

#include "fuzz.h"
#include "transport/bootstrap_value.h"
#include "transport/tx_startup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const void *bytes;
    size_t len;
    if (dg_boot_value_decode(data, size, &bytes, &len) <= 0)
        return 0;
    DG_FUZZ_CHECK(len == size - 1);
    dg_tx_record_t rec;
    if (dg_tx_record_decode(bytes, len, &rec))
        return 0;
    DG_FUZZ_CHECK(dg_tx_record_size(&rec) == len);
    unsigned char *back = malloc(len);
    dg_tx_record_encode(&rec, back);
    DG_FUZZ_CHECK(!memcmp(back, bytes, len));
    free(back);
    char text[128];
    snprintf(text, sizeof(text), "%s %.*s", rec.hostname, (int)rec.inventory_len,
             (const char *)rec.inventory);
    return 0;
}

static void emit_record(dg_fuzz_emit_fn emit, const char *name, const dg_tx_record_t *rec)
{
    size_t len = dg_tx_record_size(rec);
    unsigned char *buf = malloc(len + 1);
    buf[0] = DG_BOOT_VALUE_LIVE;
    dg_tx_record_encode(rec, buf + 1);
    emit(name, buf, len + 1);
    free(buf);
}

void dg_fuzz_seeds(dg_fuzz_emit_fn emit)
{
    static const unsigned char address[] = {0x10, 0x20, 0x30, 0x40, 0x50, 0x60};
    dg_tx_record_t rec = {.build_id = 0x1122334455667788ull, .proc = {4711, 123456},
                          .hostname = "node3", .address = address,
                          .address_len = sizeof(address), .inventory = "cpu:2",
                          .inventory_len = 5};
    emit_record(emit, "record", &rec);
    /* A rank that could not open UCX: no address, its error as inventory. */
    rec.address_len = 0;
    rec.inventory = "ucp_init failed";
    rec.inventory_len = 15;
    emit_record(emit, "record_without_ucx", &rec);
    emit("tombstone", "", 0);
}
