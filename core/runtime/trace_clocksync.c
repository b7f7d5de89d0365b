/* Clock offsets by ping-pong over the collectives.
 *
 * A round: rank 0 reads its clock (a) and broadcasts; every rank r reads its
 * clock when the broadcast arrives (x_r); an allgather brings the x_r to
 * rank 0, which reads its clock when it returns (b). Causality puts x_r,
 * read on rank 0's clock, between a and b, so the offset of rank r lies in
 * [x_r - b, x_r - a]. The intersection of the intervals of several rounds
 * is the estimate (its middle) and its error bound (half its width); the
 * fastest round bounds it best. No assumption of symmetric latency. */
#include "core/runtime/trace_clocksync.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/status_internal.h"
#include "core/trace/trace.h"
#include "transport/coll.h"

#define DG_CLOCK_ROUNDS 8

/* One round on every rank; rank 0 narrows lo/hi (r's clock minus rank 0's). */
static dagger_status_t round_trip(struct dg_tx *tx, int rank, int nranks, int64_t *lo, int64_t *hi)
{
    uint64_t a = dg_trace_now(), stamp = a;
    dagger_status_t st = dg_coll_bcast(tx, &stamp, sizeof(stamp), 0);
    uint64_t x = dg_trace_now();
    void *all = NULL;
    size_t *lens = dg_calloc((size_t)nranks, sizeof(size_t));
    if (!lens)
        return dg_error(DAGGER_ERR_NO_MEMORY, "DAGGER_TRACE: out of memory");
    if (st == DAGGER_OK)
        st = dg_coll_allgather(tx, &x, sizeof(x), &all, lens);
    uint64_t b = dg_trace_now();
    if (st == DAGGER_OK && rank == 0) {
        const uint64_t *xs = all;
        for (int r = 1; r < nranks; r++) {
            int64_t l = (int64_t)(xs[r] - b), h = (int64_t)(xs[r] - a);
            lo[r] = l > lo[r] ? l : lo[r];
            hi[r] = h < hi[r] ? h : hi[r];
        }
    }
    free(all);
    free(lens);
    return st;
}

dagger_status_t dg_trace_clock_sync(struct dg_tx *tx, int rank, int nranks, int64_t *offset,
                                    uint64_t *uncert)
{
    *offset = 0;
    *uncert = 0;
    if (!tx || nranks < 2)
        return DAGGER_OK;
    /* lo[0..n) then hi[0..n): rank 0's result, broadcast to every rank. */
    int64_t *b = dg_malloc(2 * (size_t)nranks * sizeof(int64_t));
    if (!b)
        return dg_error(DAGGER_ERR_NO_MEMORY, "DAGGER_TRACE: out of memory");
    int64_t *lo = b, *hi = b + nranks;
    for (int r = 0; r < nranks; r++) {
        lo[r] = r ? INT64_MIN : 0;
        hi[r] = r ? INT64_MAX : 0;
    }
    dagger_status_t st = DAGGER_OK;
    for (int i = 0; i < DG_CLOCK_ROUNDS && st == DAGGER_OK; i++)
        st = round_trip(tx, rank, nranks, lo, hi);
    if (st == DAGGER_OK)
        st = dg_coll_bcast(tx, b, 2 * (size_t)nranks * sizeof(int64_t), 0);
    if (st == DAGGER_OK) {
        /* lo <= hi always holds (the true offset is in every interval). */
        int64_t mid = lo[rank] + (hi[rank] - lo[rank]) / 2;
        *offset = -mid;
        *uncert = (uint64_t)(hi[rank] - lo[rank]) / 2;
    }
    free(b);
    return st;
}
