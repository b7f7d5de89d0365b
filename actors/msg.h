/* dg_msg_t: one actor message, header followed by its payload in one block.
 *
 * Memory layout (offsets in bytes, host byte order; ranks of one job run on
 * the same kind of machine):
 *
 *    0  link     8 B  mailbox link (dg_mpsc_node_t); local only, never shipped
 *    8  hdr     40 B  the wire header, dg_msg_hdr_t:
 *          +0  from.rank  int32   sender actor's rank
 *          +4  from.id    uint32  sender actor's id (DG_ACT_ID_NONE: not an actor,
 *                                 DG_ACT_ID_FUTURE: a thread waiting on a future)
 *          +8  to.rank    int32   destination rank
 *         +12  to.id      uint32  destination actor id (or DG_ACT_ID_FUTURE)
 *         +16  type       uint32  message type id (dg_name_id of its name);
 *                                 0 only for error replies (DG_MSG_ERROR)
 *         +20  flags      uint32  DG_MSG_REQUEST / DG_MSG_REPLY / DG_MSG_ERROR
 *         +24  corr       uint64  correlation id: a request's id, echoed by
 *                                 its reply; 0 for plain messages
 *         +32  size       uint32  payload bytes that follow the header
 *         +36  reserved   uint32  0
 *   48  payload  size B   16-byte aligned
 *
 * Messages come from dg_msg_alloc and go back with dg_msg_free only (a
 * per-thread pool, msgpool.h; never malloc/free them directly).
 *
 * The transport ships the dg_msg_wire_size() bytes starting at dg_msg_wire()
 * (header + payload, contiguous) and rebuilds the message on the other rank
 * with dg_msg_from_wire(), or with dg_msg_alloc() and a copy straight into
 * dg_msg_wire() of the new message. */
#ifndef DG_ACT_MSG_H
#define DG_ACT_MSG_H

#include <dagger/actor.h>
#include <stddef.h>
#include <stdint.h>

#include "actors/mpsc.h"

/* Reserved actor ids. Real actor ids never take these values. */
#define DG_ACT_ID_NONE   0u          /* "no actor": a message sent by a plain thread */
#define DG_ACT_ID_FUTURE 0xffffffffu /* the futures endpoint of a rank (request/reply) */

enum {
    DG_MSG_REQUEST = 1u << 0, /* the sender expects a reply carrying corr */
    DG_MSG_REPLY = 1u << 1,   /* answers the request whose id is corr */
    DG_MSG_ERROR = 1u << 2    /* a failed request: payload is dg_msg_error_t + text */
};

/* Largest payload of one message (the header's size field is 32 bits). */
#define DG_MSG_MAX_PAYLOAD ((size_t)UINT32_MAX)

typedef struct dg_msg_hdr {
    dagger_actor_addr_t from;
    dagger_actor_addr_t to;
    uint32_t type;
    uint32_t flags;
    uint64_t corr;
    uint32_t size;
    uint32_t reserved;
} dg_msg_hdr_t;

typedef struct dg_msg {
    dg_mpsc_node_t link;
    dg_msg_hdr_t hdr;
    _Alignas(16) unsigned char payload[];
} dg_msg_t;

/* Payload of an error reply: the status, then a NUL-terminated detail text. */
typedef struct dg_msg_error {
    int32_t status;
    char detail[];
} dg_msg_error_t;

_Static_assert(sizeof(dg_msg_hdr_t) == 40, "the wire header is 40 bytes");
_Static_assert(offsetof(dg_msg_t, hdr) == 8, "header follows the link");
_Static_assert(offsetof(dg_msg_t, payload) == 48, "payload follows the header");

/* A message with room for size payload bytes; the header is zeroed except
 * hdr.size. NULL when out of memory or size > DG_MSG_MAX_PAYLOAD. */
dg_msg_t *dg_msg_alloc(size_t size);
void dg_msg_free(dg_msg_t *msg);

/* The shipped bytes of a message: header then payload, contiguous. */
static inline void *dg_msg_wire(dg_msg_t *msg)
{
    return &msg->hdr;
}
static inline size_t dg_msg_wire_size(const dg_msg_t *msg)
{
    return sizeof(dg_msg_hdr_t) + msg->hdr.size;
}

/* Rebuilds a message from bytes received from another rank. A buffer shorter
 * than a header, or whose header size disagrees with len, is
 * DAGGER_ERR_PROTOCOL; DAGGER_ERR_NO_MEMORY when allocation fails. */
dagger_status_t dg_msg_from_wire(const void *bytes, size_t len, dg_msg_t **out);

/* Whether a header received from another rank can head len shipped bytes:
 * DAGGER_OK, or DAGGER_ERR_PROTOCOL when len is shorter than a header or
 * its size field disagrees with len. Every message built from received
 * bytes passes here (dg_msg_from_wire, the transport's rendezvous path),
 * so a payload is never read past what arrived. */
dagger_status_t dg_msg_wire_check(const dg_msg_hdr_t *hdr, size_t len);

/* Builds a message: header fields and a copy of the payload. */
dg_msg_t *dg_msg_make(dagger_actor_addr_t from, dagger_actor_addr_t to, uint32_t type,
                      uint32_t flags, uint64_t corr, const void *payload, size_t size);

#endif
