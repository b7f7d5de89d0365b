/* The bytes of collective messages: the channel header every message
 * carries, and the layout of an allgather's result. Pure encoding, no
 * transport state, so the fuzz harness (tests/fuzz) links it alone. */
#ifndef DG_COLL_WIRE_H
#define DG_COLL_WIRE_H

#include <dagger/status.h>
#include <stddef.h>
#include <stdint.h>

typedef enum dg_coll_kind {
    DG_COLL_BARRIER = 1,
    DG_COLL_BCAST = 2,
    DG_COLL_ALLGATHER = 3,
    DG_COLL_ALLREDUCE = 4,
    DG_COLL_ALLREDUCE_BYTES = 5
} dg_coll_kind_t;

enum { DG_COLL_UP = 0, DG_COLL_DOWN = 1, DG_COLL_FLAT = 2 };
/* Not a collective's part: a rank found the programs diverged (the payload
 * says how) and tells every other rank (coll_foresee.c). */
#define DG_COLL_NOTE 3
/* Not a collective's part either: a rank whose wait for a peer's data does
 * not end asks the peer what it sent, and the peer answers (coll_probe.c).
 * seq: the asker's region count; an answer's sig.size: the count; a
 * probe's sig.size: the last task the asker planned (0: none) and sig.plan:
 * the low 24 bits of its plan's shape hash after that task. */
#define DG_COLL_PROBE 4
#define DG_COLL_ANSWER 5

/* A barrier's op: dagger_finalize's. */
#define DG_COLL_OP_FINAL 1

/* What a rank called: ranks must agree on all of it. */
typedef struct dg_coll_sig {
    uint8_t kind, op, type;
    int32_t root;
    uint64_t size;  /* bytes (bcast, allreduce_bytes) or elements (allreduce) */
    uint64_t regions; /* regions the rank had begun (dg_tx_note_region; coll_foresee.c) */
    uint64_t plan;  /* 0, or a hash of everything the rank planned (a region's end) */
} dg_coll_sig_t;

/* The channel header of every collective message. fail is 0, or the
 * (negated) status every rank will return; the payload is then its text. */
typedef struct dg_coll_hdr {
    uint64_t seq;
    uint8_t phase;
    uint16_t fail;
    dg_coll_sig_t sig;
} dg_coll_hdr_t;

#define DG_COLL_HDR_LEN 42
void dg_coll_hdr_encode(const dg_coll_hdr_t *h, void *buf);
int dg_coll_hdr_decode(const void *buf, size_t len, dg_coll_hdr_t *h);

/* Splits an allgather result (nranks times u64 length, then that many
 * bytes) into one malloc'ed buffer *all of the parts in rank order and
 * their lengths. DAGGER_ERR_PROTOCOL when the bytes are not exactly such a
 * sequence (a part longer than what is left, bytes after the last part). */
dagger_status_t dg_coll_unpack_gathered(const void *bytes, size_t len, int nranks, void **all,
                                        size_t *lens);

#endif
