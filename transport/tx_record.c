/* The bytes of the start-up records (see tx_startup.h), little-endian:
 * the exchange record
 *   u32 magic, u64 build id, u32 pid, u64 start time,
 *   u32 n + n bytes host name (with its NUL),
 *   u32 n + n bytes UCX address, u32 n + n bytes inventory;
 * and the connection hello: u32 pid, u64 start time. Pure encoding, so the
 * fuzz harness (tests/fuzz) links it alone. */
#include "transport/tx_startup.h"

#include <string.h>

#include "transport/wire.h"

size_t dg_tx_record_size(const dg_tx_record_t *rec)
{
    return 4 + 8 + 4 + 8 + 4 + strlen(rec->hostname) + 1 + 4 + rec->address_len + 4 +
           rec->inventory_len;
}

static void put_blob(dg_wire_cursor_t *c, const void *p, size_t len)
{
    dg_wire_put_u32(c, (uint32_t)len);
    dg_wire_put_bytes(c, p, len);
}

static const void *get_blob(dg_wire_cursor_t *c, size_t *len)
{
    *len = dg_wire_get_u32(c);
    return dg_wire_get_bytes(c, *len);
}

void dg_tx_record_encode(const dg_tx_record_t *rec, void *buf)
{
    dg_wire_cursor_t c = dg_wire_cursor(buf, dg_tx_record_size(rec));
    dg_wire_put_u32(&c, DG_TX_RECORD_MAGIC);
    dg_wire_put_u64(&c, rec->build_id);
    dg_wire_put_u32(&c, (uint32_t)rec->proc.pid);
    dg_wire_put_u64(&c, rec->proc.starttime);
    put_blob(&c, rec->hostname, strlen(rec->hostname) + 1);
    put_blob(&c, rec->address, rec->address_len);
    put_blob(&c, rec->inventory, rec->inventory_len);
}

int dg_tx_record_decode(const void *buf, size_t len, dg_tx_record_t *rec)
{
    dg_wire_cursor_t c = dg_wire_cursor(buf, len);
    if (dg_wire_get_u32(&c) != DG_TX_RECORD_MAGIC)
        return -1;
    rec->build_id = dg_wire_get_u64(&c);
    rec->proc.pid = (int32_t)dg_wire_get_u32(&c);
    rec->proc.starttime = dg_wire_get_u64(&c);
    size_t host_len;
    rec->hostname = get_blob(&c, &host_len);
    rec->address = get_blob(&c, &rec->address_len);
    rec->inventory = get_blob(&c, &rec->inventory_len);
    /* The name is exactly its n bytes: one NUL, at the end. */
    if (c.bad || c.left || !host_len || memchr(rec->hostname, '\0', host_len) !=
                                            rec->hostname + host_len - 1)
        return -1;
    return 0;
}

void dg_tx_hello_encode(const dg_proc_id_t *me, void *buf)
{
    dg_wire_cursor_t c = dg_wire_cursor(buf, DG_TX_HELLO_LEN);
    dg_wire_put_u32(&c, (uint32_t)me->pid);
    dg_wire_put_u64(&c, me->starttime);
}

int dg_tx_hello_decode(const void *buf, size_t len, dg_proc_id_t *from)
{
    if (len != DG_TX_HELLO_LEN)
        return -1;
    dg_wire_cursor_t c = dg_wire_cursor(buf, len);
    from->pid = (int32_t)dg_wire_get_u32(&c);
    from->starttime = dg_wire_get_u64(&c);
    return c.bad ? -1 : 0;
}
