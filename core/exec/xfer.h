/* Transfers between ranks: SEND and RECV ops on the transport's data channel,
 * in the move_rewrap form: a header (rewrap.h) plus the bytes of the view's
 * spans (its children), packed when there are several. Receives are matched
 * by tag; data that arrives before its RECV is ready waits (eager bytes in a
 * copy, rendezvous bytes at the sender) and rendezvous data is received
 * straight into the destination when the view is one span. */
#ifndef DG_EXEC_XFER_H
#define DG_EXEC_XFER_H

#include <dagger/status.h>

#include "core/exec/exec.h"
#include "core/exec/rewrap.h"
#include "transport/tx.h"

typedef struct dg_xfer dg_xfer_t;

/* Registers the data channel handler (every rank, before any transfer). */
dagger_status_t dg_xfer_create(dg_exec_t *ex, struct dg_tx *tx, dg_xfer_t **out);
void dg_xfer_destroy(dg_xfer_t *xf);
/* From now on data that arrives is dropped (its sender completes) instead
 * of going to a memory-space actor; returns once no arrival is being
 * handed over. Any thread: dagger_finalize closes it before the actors
 * stop, as a rank that diverged or has not seen a loss may still send. */
void dg_xfer_close(dg_xfer_t *xf);
/* The submitting thread has waited long for ops that wait for receives:
 * asks each rank those receives wait for what it sent (dg_tx_probe; a rank
 * that finished the region answers, and a receive whose sender finished
 * without it fails the region with DAGGER_ERR_DIVERGENCE on every rank:
 * transport/coll_probe.c). Any thread. */
void dg_xfer_probe_stuck(dg_xfer_t *xf);

/* Where a transfer from another rank's memory-space actor landed, as the
 * dagger.mem.rewrap handler sees it: the header, and the children as eager
 * bytes (lent by the transport during its callback, or owned: a copy made
 * because the message had to wait) or a rendezvous descriptor. */
typedef struct dg_xfer_arrival {
    dg_rewrap_hdr_t hdr;       /* a dagger.mem.rewrap message... */
    dg_rewrap_piece_t piece;   /* ...or a dagger.mem.piece (is_piece) */
    int32_t is_piece;
    int32_t src;
    int32_t owned;             /* 1: eager is a malloc'ed copy this message owns */
    const void *eager;
    size_t len;
    void *rndv;
    int *settled;              /* the transport callback's flag: set when rndv was received
                                  or dropped during the callback; NULL once the message waits */
} dg_xfer_arrival_t;

/* A piece of a transfer sent in pieces, as the receiving side holds it:
 * its bytes eager (a malloc'ed copy it owns) or as a rendezvous
 * descriptor; failed: it cannot land (a mismatch, a second copy of a
 * piece, a lost peer: recorded by xfer.c), but counts as one of the
 * transfer's pieces. */
typedef struct dg_xfer_piece {
    struct dg_xfer_piece *next;
    dg_rewrap_piece_t p;
    int32_t src;
    int32_t failed;
    void *eager;
    void *rndv;
} dg_xfer_piece_t;

/* The memory-space actor's handlers (one turn at a time). A ready SEND /
 * RECV op: finished when its bytes have left / arrived. */
void dg_xfer_send(dg_xfer_t *xf, dg_xop_t *op);
void dg_xfer_recv(dg_xfer_t *xf, dg_xop_t *op);
/* A dagger.mem.rewrap message from another rank: meets its RECV by tag. */
void dg_xfer_arrived(dg_xfer_t *xf, const dg_xfer_arrival_t *a);

/* A dagger.mem.piece message from another rank: goes where its transfer's
 * bytes go once its RECV and header have met (a RECV into device memory
 * sent in pieces: to the device's memory-space actor, through the
 * executor's piece hook, which lands it with dg_xfer_pull). */
void dg_xfer_piece_arrived(dg_xfer_t *xf, const dg_xfer_arrival_t *a);

/* A pipelined host-staged SEND (devices/dev_pipe.c): the move_rewrap header
 * alone, announcing `pieces` piece messages of `piece` bytes (the last may
 * be shorter), then each piece: the packed
 * bytes [offset, offset + bytes) from buf, which must stay valid until
 * done runs (on the transport's owner thread). */
void dg_xfer_send_head(dg_xfer_t *xf, dg_xop_t *op, uint32_t pieces, uint32_t piece);
void dg_xfer_send_piece(dg_xfer_t *xf, const dg_xop_t *op, const dg_rewrap_piece_t *p,
                        const void *buf, dg_tx_done_fn done, void *arg);
/* Pulls a piece's rendezvous bytes into buf (len bytes) on the transport's
 * owner thread (queued for it from any thread); done runs there. */
void dg_xfer_pull(dg_xfer_t *xf, void *rndv, void *buf, size_t len, dg_tx_done_fn done,
                  void *arg);
/* Gives a piece's rendezvous bytes back unread (any thread). */
void dg_xfer_drop(dg_xfer_t *xf, void *rndv);

/* The transport owner's share (worker 0): receives that wait for it. */
int dg_xfer_poll(dg_xfer_t *xf);

/* Prints receives that still wait (hang detector). */
void dg_xfer_dump(dg_xfer_t *xf);

#endif
