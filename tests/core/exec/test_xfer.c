/* Early and late matching of receives (core/exec/xfer.c): a move_rewrap
 * arrival and its RECV op meet by tag whichever comes first. The RECV ops
 * are emitted into the executor of a live one-rank runtime (they reach
 * xfer.c through the host memory-space actor, as in a run), the arrivals are
 * handed to dg_xfer_arrived as the dagger.mem.rewrap handler does, with
 * eager bytes (the rendezvous path needs a second rank: the multi-rank tests
 * run it). A transfer layer over a singleton transport stands in for the
 * one a one-rank runtime does not make; the "peer" is rank 0 itself.
 *  - late: the RECV waits, the data completes it;
 *  - early: the data waits (a copy: the transport's bytes are lent only
 *    during its callback), the RECV completes at once;
 *  - many tags, early and late interleaved;
 *  - a header, sender or length that disagrees with the plan fails the
 *    region with DAGGER_ERR_PROTOCOL naming both sides, and writes nothing;
 *  - once the layer is closed (dg_xfer_close, as dagger_finalize does before
 *    the memory-space actors stop), data sent over the transport is
 *    dropped at its arrival instead of handed to the memory-space actor;
 *    before, the same send lands. */
#include <criterion/criterion.h>
#include <dagger.h>
#include <stdlib.h>
#include <string.h>

#include "core/runtime/tasks.h"
#include "core/exec/xfer.h"
#include "core/runtime/runtime.h"
#include "transport/bootstrap.h"
#include "transport/tx.h"

#define ELEMS 64
#define CHUNK 1

static dagger_runtime_t *rt;
static dg_exec_t *ex;
static dg_boot_t boot;
static dg_tx_t *tx;
static dg_xfer_t *xf;
static double *home;
static uint64_t next_seq = 1;

static void start(void)
{
    dagger_params_t p = {.num_threads = 2, .no_bind = 1};
    cr_assert_eq(dagger_init(NULL, NULL, &p, &rt), DAGGER_OK, "%s", dagger_error_detail());
    ex = rt->tasks->exec;
    cr_assert_null(ex->xfer, "one rank has no transfers of its own");
    cr_assert_eq(dg_boot_init(&boot), DAGGER_OK, "%s", dagger_error_detail());
    dg_tx_params_t tp = {.boot = &boot};
    cr_assert_eq(dg_tx_create(&tp, &tx), DAGGER_OK, "%s", dagger_error_detail());
    cr_assert_eq(dg_xfer_create(ex, tx, &xf), DAGGER_OK);
    __atomic_store_n(&ex->xfer, xf, __ATOMIC_RELEASE); /* worker 0 polls it from now on */
    cr_assert_eq(dg_exec_alloc(ex, CHUNK, 0, ELEMS * sizeof(double), 1), DAGGER_OK);
    home = dg_bufs_find(&ex->bufs, CHUNK, 0)->ptr;
}

static void stop(void)
{
    /* The executor destroys its transfer layer after the workers stopped;
     * the transport goes after it. */
    cr_assert_eq(dagger_finalize(rt), DAGGER_OK);
    cr_assert_eq(dg_tx_destroy(tx), DAGGER_OK);
    dg_boot_finalize(&boot);
}

static const dg_plan_span_t spans[2] = {{4, 10}, {20, 30}}; /* 16 elements */

#define NBYTES (16 * sizeof(double))

/* A RECV (or SEND) op of the chunk's spans from (to) rank 0, this rank: a
 * SEND goes out on the transport's data channel and comes back to on_data. */
static void post_xfer(dg_plan_op_kind_t kind, uint64_t tag)
{
    dg_plan_op_t op = {.seq = next_seq++, .kind = kind};
    op.u.xfer.tag = tag;
    op.u.xfer.peer = 0;
    op.u.xfer.buf = (dg_plan_buf_t){CHUNK, 0};
    op.u.xfer.version = 3;
    op.u.xfer.elsize = sizeof(double);
    op.u.xfer.nspans = 2;
    op.u.xfer.spans = spans;
    op.u.xfer.bytes = NBYTES;
    dg_exec_emit(ex, &op);
}

static void post_recv(uint64_t tag)
{
    post_xfer(DG_PLAN_OP_RECV, tag);
}

static void post_send(uint64_t tag)
{
    post_xfer(DG_PLAN_OP_SEND, tag);
}

/* The payload of tag: 16 doubles, packed in span order. */
static void payload(uint64_t tag, double *out)
{
    for (int i = 0; i < 16; i++)
        out[i] = (double)(tag * 100 + (uint64_t)i);
}

static void arrive(uint64_t tag, uint64_t version, int src, size_t len, int owned)
{
    double *bytes = malloc(NBYTES);
    payload(tag, bytes);
    dg_xfer_arrival_t a = {.src = src, .owned = owned, .eager = bytes, .len = len};
    dg_rewrap_describe(&a.hdr, tag, CHUNK, version, sizeof(double), spans, 2);
    dg_xfer_arrived(xf, &a);
    if (!owned) {
        memset(bytes, 0xff, NBYTES); /* the transport takes its bytes back */
        free(bytes);
    }
}

static uint64_t unfinished(void)
{
    return atomic_load(&ex->emitted) - atomic_load(&ex->retired);
}

/* The chunk holds tag's payload on the spans and zeros elsewhere. */
static void check_landed(uint64_t tag)
{
    cr_assert_eq(dg_exec_wait_all(ex), DAGGER_OK);
    cr_assert_not(atomic_load(&ex->failed), "%s", ex->fail_msg);
    double want[16];
    payload(tag, want);
    int k = 0;
    for (int e = 0; e < ELEMS; e++) {
        int in = (e >= 4 && e < 10) || (e >= 20 && e < 30);
        cr_assert_eq(home[e], in ? want[k] : 0.0, "element %d after tag %llu", e,
                     (unsigned long long)tag);
        k += in;
    }
    memset(home, 0, ELEMS * sizeof(double));
}

Test(xfer, late_data_completes_a_waiting_receive, .init = start, .fini = stop)
{
    post_recv(7);
    cr_assert_eq(unfinished(), 1, "the RECV waits for its data");
    arrive(7, 3, 0, NBYTES, 0);
    check_landed(7);
}

Test(xfer, early_data_waits_for_its_receive, .init = start, .fini = stop)
{
    arrive(8, 3, 0, NBYTES, 0); /* not owned: xfer keeps a copy */
    arrive(9, 3, 0, NBYTES, 1); /* owned (kept by the actor's queue): xfer takes it */
    cr_assert_eq(unfinished(), 0);
    post_recv(8);
    check_landed(8);
    post_recv(9);
    check_landed(9);
}

Test(xfer, many_tags_early_and_late, .init = start, .fini = stop)
{
    for (uint64_t t = 1; t <= 40; t++) /* the odd ones first, the even ones later */
        if (t % 2)
            arrive(1000 + t, 3, 0, NBYTES, 0);
    for (uint64_t t = 40; t >= 1; t--) {
        post_recv(1000 + t);
        if (t % 2 == 0) {
            cr_assert_eq(unfinished(), 1, "tag %llu waits", (unsigned long long)(1000 + t));
            arrive(1000 + t, 3, 0, NBYTES, 0);
        }
        check_landed(1000 + t);
    }
}

/* The receive fails the region with the plan's and the sender's view of
 * the transfer; nothing is written. */
static void check_refused(const char *expect)
{
    cr_assert_eq(dg_exec_wait_all(ex), DAGGER_OK);
    cr_assert(atomic_load(&ex->failed), "a bad transfer must fail the region");
    cr_assert_eq(ex->fail_status, DAGGER_ERR_PROTOCOL);
    cr_assert(strstr(ex->fail_msg, expect), "%s", ex->fail_msg);
    for (int e = 0; e < ELEMS; e++)
        cr_assert_eq(home[e], 0.0, "element %d written by a refused transfer", e);
    dg_exec_region_reset(ex);
}

Test(xfer, disagreeing_transfers_are_refused, .init = start, .fini = stop)
{
    arrive(20, 4, 0, NBYTES, 0); /* early, wrong version */
    post_recv(20);
    check_refused("this rank expects chunk 1 v3");
    post_recv(21); /* late, from a rank the plan does not name */
    arrive(21, 3, 1, NBYTES, 0);
    check_refused("arrived from rank 1, the plan says rank 0");
    post_recv(22); /* the header agrees, the byte count does not */
    arrive(22, 3, 0, NBYTES - 8, 0);
    check_refused("120 bytes arrived");
}

/* ---- transfers in pieces (a device's pipelined host-staged sends) into
 * host memory: the header announces the pieces, each piece carries its
 * share of the packed bytes, and any order of header, pieces and RECV
 * lands them all (here 16 doubles in pieces of 48 bytes: 48 + 48 + 32). */

#define PIECE 48

static void arrive_head(uint64_t tag, uint32_t pieces, uint32_t piece)
{
    dg_xfer_arrival_t a = {.src = 0};
    dg_rewrap_describe(&a.hdr, tag, CHUNK, 3, sizeof(double), spans, 2);
    a.hdr.pieces = pieces;
    a.hdr.piece = piece;
    dg_xfer_arrived(xf, &a);
}

/* Piece index of tag (count pieces) from rank src, with its bytes at off. */
static void arrive_piece_at(uint64_t tag, uint32_t index, uint32_t count, uint64_t off,
                            uint64_t len, int src)
{
    double all[16];
    payload(tag, all);
    unsigned char *bytes = malloc(len);
    memcpy(bytes, (unsigned char *)all + (off < NBYTES ? off : 0),
           off + len <= NBYTES ? len : 8);
    dg_xfer_arrival_t a = {.src = src, .is_piece = 1, .eager = bytes, .len = len,
                           .piece = {tag, index, count, off, len}};
    dg_xfer_piece_arrived(xf, &a);
    memset(bytes, 0xff, len); /* the transport takes its bytes back */
    free(bytes);
}

static void arrive_piece(uint64_t tag, uint32_t index)
{
    uint64_t off = (uint64_t)index * PIECE;
    arrive_piece_at(tag, index, 3, off, NBYTES - off < PIECE ? NBYTES - off : PIECE, 0);
}

Test(xfer, pieces_land_in_any_order, .init = start, .fini = stop)
{
    /* the RECV, the header, the pieces in order */
    post_recv(30);
    arrive_head(30, 3, PIECE);
    arrive_piece(30, 0);
    arrive_piece(30, 1);
    cr_assert_eq(unfinished(), 1, "two of three pieces: the RECV waits");
    arrive_piece(30, 2);
    check_landed(30);
    /* pieces before the header and before the RECV */
    arrive_piece(31, 2);
    arrive_head(31, 3, PIECE);
    arrive_piece(31, 0);
    post_recv(31);
    cr_assert_eq(unfinished(), 1, "the RECV waits for its last piece");
    arrive_piece(31, 1);
    check_landed(31);
    /* every piece first, the header last */
    arrive_piece(32, 1);
    arrive_piece(32, 0);
    post_recv(32);
    arrive_piece(32, 2);
    cr_assert_eq(unfinished(), 1, "the RECV waits for its header");
    arrive_head(32, 3, PIECE);
    check_landed(32);
}

Test(xfer, pieces_that_are_not_the_announced_ones_are_refused, .init = start, .fini = stop)
{
    post_recv(40); /* a piece at the wrong offset */
    arrive_head(40, 3, PIECE);
    arrive_piece(40, 0);
    arrive_piece(40, 1);
    arrive_piece_at(40, 2, 3, 88, 40, 0);
    check_refused("piece 2 of 3 for tag 28, bytes [88, 128), is not one of them");
    post_recv(41); /* a piece from a rank the plan does not name */
    arrive_head(41, 3, PIECE);
    arrive_piece(41, 0);
    arrive_piece_at(41, 1, 3, PIECE, PIECE, 1);
    arrive_piece(41, 2);
    check_refused("piece 1 arrived from rank 1, the plan says rank 0");
    post_recv(42); /* a piece twice, another never */
    arrive_head(42, 3, PIECE);
    arrive_piece(42, 0);
    arrive_piece(42, 0);
    arrive_piece(42, 2);
    check_refused("piece 0 of 3 arrived twice");
    post_recv(43); /* a piece count other than the header's */
    arrive_head(43, 3, PIECE);
    arrive_piece(43, 0);
    arrive_piece(43, 1);
    arrive_piece_at(43, 2, 4, 96, 32, 0);
    check_refused("transfer tag 2b (chunk 1 v3, 2 spans [4, 30), 128 bytes in 3 pieces)");
    post_recv(44); /* a header announcing pieces that carries bytes itself */
    dg_xfer_arrival_t a = {.src = 0, .eager = home, .len = 8};
    dg_rewrap_describe(&a.hdr, 44, CHUNK, 3, sizeof(double), spans, 2);
    a.hdr.pieces = 3;
    a.hdr.piece = PIECE;
    dg_xfer_arrived(xf, &a);
    check_refused("a header announcing 3 pieces carried 8 bytes itself");
}

/* The chunk's spans set to tag's payload (what post_send sends). */
static void fill_spans(uint64_t tag)
{
    double want[16];
    payload(tag, want);
    int k = 0;
    for (int e = 0; e < ELEMS; e++)
        if ((e >= 4 && e < 10) || (e >= 20 && e < 30))
            home[e] = want[k++];
}

/* Drives the transport (this thread owns it) until the SEND has completed
 * and the data channel is quiet. */
static void progress_until_sent(void)
{
    for (int i = 0; i < 200000 && (unfinished() || dg_tx_progress(tx) > 0); i++)
        dg_tx_progress(tx);
    cr_assert_eq(unfinished(), 0, "the SEND completed");
    for (int i = 0; i < 1000; i++)
        dg_tx_progress(tx);
}

Test(xfer, data_after_close_is_dropped, .init = start, .fini = stop)
{
    fill_spans(50); /* open: the data waits for its RECV, which then gets it */
    post_send(50);
    progress_until_sent();
    memset(home, 0, ELEMS * sizeof(double));
    post_recv(50);
    check_landed(50);
    dg_xfer_close(xf); /* closed: the same send arrives and is dropped */
    fill_spans(51);
    post_send(51);
    progress_until_sent();
    memset(home, 0, ELEMS * sizeof(double));
    post_recv(51);
    for (int i = 0; i < 1000; i++)
        dg_tx_progress(tx);
    cr_assert_eq(unfinished(), 1, "the RECV still waits: the data was dropped at its arrival");
    arrive(51, 3, 0, NBYTES, 0); /* the memory-space actor's own path still meets it */
    check_landed(51);
}
