/* Allocation and wire conversion of actor messages (layout in msg.h). */
#include "actors/msg.h"

#include "actors/msgpool.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/status_internal.h"

/* A message block whose link and header the caller fills in whole. */
static dg_msg_t *alloc_unset(size_t size)
{
    if (size > DG_MSG_MAX_PAYLOAD)
        return NULL;
    return dg_msgpool_get(sizeof(dg_msg_t) + size);
}

dg_msg_t *dg_msg_alloc(size_t size)
{
    dg_msg_t *msg = alloc_unset(size);
    if (!msg)
        return NULL;
    memset(msg, 0, sizeof(*msg));
    msg->hdr.size = (uint32_t)size;
    return msg;
}

void dg_msg_free(dg_msg_t *msg)
{
    dg_msgpool_put(msg);
}

dg_msg_t *dg_msg_make(dagger_actor_addr_t from, dagger_actor_addr_t to, uint32_t type,
                      uint32_t flags, uint64_t corr, const void *payload, size_t size)
{
    dg_msg_t *msg = alloc_unset(size);
    if (!msg)
        return NULL;
    atomic_init(&msg->link.next, NULL);
    msg->hdr = (dg_msg_hdr_t){.from = from, .to = to, .type = type, .flags = flags, .corr = corr,
                              .size = (uint32_t)size};
    if (size)
        memcpy(msg->payload, payload, size);
    return msg;
}

dagger_status_t dg_msg_from_wire(const void *bytes, size_t len, dg_msg_t **out)
{
    *out = NULL;
    dg_msg_hdr_t hdr;
    if (!bytes || len < sizeof(hdr))
        return dg_msg_wire_check(NULL, len);
    memcpy(&hdr, bytes, sizeof(hdr));
    dagger_status_t st = dg_msg_wire_check(&hdr, len);
    if (st != DAGGER_OK)
        return st;
    dg_msg_t *msg = alloc_unset(hdr.size);
    if (!msg)
        return dg_error(DAGGER_ERR_NO_MEMORY, "no memory for a %u-byte actor message", hdr.size);
    atomic_init(&msg->link.next, NULL);
    memcpy(dg_msg_wire(msg), bytes, len); /* the whole header, then the payload */
    *out = msg;
    return DAGGER_OK;
}

dagger_status_t dg_msg_wire_check(const dg_msg_hdr_t *hdr, size_t len)
{
    if (!hdr || len < sizeof(*hdr))
        return dg_error(DAGGER_ERR_PROTOCOL,
                        "actor message of %zu bytes is shorter than its %zu-byte header", len,
                        sizeof(*hdr));
    if ((size_t)hdr->size != len - sizeof(*hdr))
        return dg_error(DAGGER_ERR_PROTOCOL,
                        "actor message header announces %u payload bytes but %zu arrived",
                        hdr->size, len - sizeof(*hdr));
    return DAGGER_OK;
}
